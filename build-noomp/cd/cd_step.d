build-noomp/cd/cd_step.o: cd/cd_step.c cd/cd.h common/pcg32.h \
 common/world.h common/contacts.h common/cells.h common/particles.h \
 common/status.h common/vec3.h common/walls.h common/parallel.h
cd/cd.h:
common/pcg32.h:
common/world.h:
common/contacts.h:
common/cells.h:
common/particles.h:
common/status.h:
common/vec3.h:
common/walls.h:
common/parallel.h:

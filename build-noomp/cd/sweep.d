build-noomp/cd/sweep.o: cd/sweep.c cd/cd.h common/pcg32.h common/world.h \
 common/contacts.h common/cells.h common/particles.h common/status.h \
 common/vec3.h common/walls.h cd/shock_law.h common/vec3.h
cd/cd.h:
common/pcg32.h:
common/world.h:
common/contacts.h:
common/cells.h:
common/particles.h:
common/status.h:
common/vec3.h:
common/walls.h:
cd/shock_law.h:
common/vec3.h:

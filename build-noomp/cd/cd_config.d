build-noomp/cd/cd_config.o: cd/cd_config.c cd/cd_config.h cd/cd.h \
 common/pcg32.h common/world.h common/contacts.h common/cells.h \
 common/particles.h common/status.h common/vec3.h common/walls.h \
 common/config.h
cd/cd_config.h:
cd/cd.h:
common/pcg32.h:
common/world.h:
common/contacts.h:
common/cells.h:
common/particles.h:
common/status.h:
common/vec3.h:
common/walls.h:
common/config.h:

build-noomp/cd/cd_run.o: cd/cd_run.c cd/cd_run.h cd/cd.h common/pcg32.h \
 common/world.h common/contacts.h common/cells.h common/particles.h \
 common/status.h common/vec3.h common/walls.h common/config.h \
 common/scene.h common/config.h common/world.h common/build_info.h \
 cd/cd_config.h common/h5io.h common/parallel.h
cd/cd_run.h:
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
common/scene.h:
common/config.h:
common/world.h:
common/build_info.h:
cd/cd_config.h:
common/h5io.h:
common/parallel.h:

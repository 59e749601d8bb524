build-noomp/tests/check_config.o: tests/check_config.c tests/suites.h \
 cd/cd.h common/pcg32.h common/world.h common/contacts.h common/cells.h \
 common/particles.h common/status.h common/vec3.h common/walls.h \
 common/config.h common/scene.h common/config.h common/world.h \
 cd/cd_run.h cd/cd.h
tests/suites.h:
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
cd/cd_run.h:
cd/cd.h:

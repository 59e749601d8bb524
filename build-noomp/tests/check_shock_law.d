build-noomp/tests/check_shock_law.o: tests/check_shock_law.c \
 tests/suites.h cd/cd.h common/pcg32.h common/world.h common/contacts.h \
 common/cells.h common/particles.h common/status.h common/vec3.h \
 common/walls.h common/config.h common/scene.h common/config.h \
 common/world.h common/contacts.h cd/shock_law.h common/vec3.h
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
common/contacts.h:
cd/shock_law.h:
common/vec3.h:

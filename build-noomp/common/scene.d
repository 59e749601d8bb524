build-noomp/common/scene.o: common/scene.c common/scene.h common/config.h \
 common/status.h common/vec3.h common/world.h common/contacts.h \
 common/cells.h common/particles.h common/walls.h common/generate.h \
 common/pcg32.h
common/scene.h:
common/config.h:
common/status.h:
common/vec3.h:
common/world.h:
common/contacts.h:
common/cells.h:
common/particles.h:
common/walls.h:
common/generate.h:
common/pcg32.h:

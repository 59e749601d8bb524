build-noomp/common/world.o: common/world.c common/world.h \
 common/contacts.h common/cells.h common/particles.h common/status.h \
 common/vec3.h common/walls.h
common/world.h:
common/contacts.h:
common/cells.h:
common/particles.h:
common/status.h:
common/vec3.h:
common/walls.h:

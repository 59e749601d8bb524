build-noomp/common/contacts.o: common/contacts.c common/contacts.h \
 common/cells.h common/particles.h common/status.h common/vec3.h \
 common/walls.h
common/contacts.h:
common/cells.h:
common/particles.h:
common/status.h:
common/vec3.h:
common/walls.h:

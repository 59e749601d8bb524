build-noomp/common/cells.o: common/cells.c common/cells.h \
 common/particles.h common/status.h common/vec3.h
common/cells.h:
common/particles.h:
common/status.h:
common/vec3.h:

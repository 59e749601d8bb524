build-noomp/common/particles.o: common/particles.c common/particles.h \
 common/status.h common/vec3.h
common/particles.h:
common/status.h:
common/vec3.h:

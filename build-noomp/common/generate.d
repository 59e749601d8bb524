build-noomp/common/generate.o: common/generate.c common/generate.h \
 common/particles.h common/status.h common/vec3.h common/pcg32.h
common/generate.h:
common/particles.h:
common/status.h:
common/vec3.h:
common/pcg32.h:

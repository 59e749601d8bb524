build-noomp/common/fit.o: common/fit.c common/fit.h common/status.h \
 common/vec3.h
common/fit.h:
common/status.h:
common/vec3.h:

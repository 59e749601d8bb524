build-noomp/common/config.o: common/config.c common/config.h \
 common/status.h common/vec3.h
common/config.h:
common/status.h:
common/vec3.h:

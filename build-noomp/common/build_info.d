build-noomp/common/build_info.o: common/build_info.c common/build_info.h \
 build-noomp/build_stamp.h
common/build_info.h:
build-noomp/build_stamp.h:

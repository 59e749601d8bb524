build-noomp/common/status.o: common/status.c common/status.h
common/status.h:

build-noomp/common/pcg32.o: common/pcg32.c common/pcg32.h
common/pcg32.h:

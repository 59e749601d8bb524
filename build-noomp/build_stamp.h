#define CDLAB_GIT_COMMIT "924de98ed518"
#define CDLAB_CFLAGS "-std=c11 -O2 -g "

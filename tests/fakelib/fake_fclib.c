/* A stand-in for libfclib.so.0 without FCLIB's functions (Makefile: FAKE_FCLIB). The fclib
 * suite puts it first on LD_LIBRARY_PATH to see the cdlab program refuse an export it cannot
 * write; built once as it is and once needing a library that is then removed. */
int cdlab_fake_fclib(void);
int cdlab_fake_fclib(void)
{
    return 0;
}

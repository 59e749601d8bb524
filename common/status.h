/* Status codes and error messages for library code (common/, cd/).
 *
 * Library functions never print or exit: they return a status and, on failure, write a
 * human-readable message into a diag record that the caller (tools/) reports. */
#ifndef CDLAB_STATUS_H
#define CDLAB_STATUS_H

#include <stddef.h>

#define CDLAB_STATUS_LIST(X)                                                                       \
    X(CDLAB_OK, "ok")                                                                              \
    X(CDLAB_ERR_CONFIG, "invalid configuration")                                                   \
    X(CDLAB_ERR_IO, "input/output error")                                                          \
    X(CDLAB_ERR_NOMEM, "out of memory")                                                            \
    X(CDLAB_ERR_NUMERIC, "numerical failure (NaN or exploding overlap)")                           \
    X(CDLAB_ERR_ARG, "invalid argument")                                                           \
    X(CDLAB_ERR_INTERRUPTED, "interrupted by a signal")

typedef enum status {
#define CDLAB_X_ENUM(name, text) name,
    CDLAB_STATUS_LIST(CDLAB_X_ENUM)
#undef CDLAB_X_ENUM
} status;

const char *status_text(status s);

/* Where a message is recorded; a fixed buffer so that reporting an error cannot fail. It holds
 * a message that names three paths of the system's longest (4,095 characters): a message must
 * not lose its end, where the reason and the advice stand. Not zeroed where it is made at every
 * step. */
#define DIAG_MSG_MAX 16384
typedef struct diag {
    char msg[DIAG_MSG_MAX];
} diag;

/* printf-style; records the message in d (if d is not NULL) and returns s. A message longer
 * than the record keeps its start and its end, " [...] " between them. */
status diag_set(diag *d, status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Descriptors 0, 1 and 2 made safe at a program's start: any of them that is closed (a
 * program started with 2>&-) is opened on /dev/null, so that no file the program opens takes
 * its number (measured: the lock file took descriptor 2 and the progress lines were written
 * over the HDF5 superblock). 0, or -1 where /dev/null cannot be opened (the program must stop:
 * it has nowhere safe to write). */
int std_streams_safe(void);

/* The program's standard output written out: 0, or the error (errno) with which its last write
 * failed (a full disk under `cdlab-lab fig4 > fig4.csv`: the programs had ended with 0, the file
 * cut short). Flushes stdout; call at the end of main. */
int stdout_write_error(void);
/* The end of a program's main: its exit status rc, or where its standard output could not be
 * written out (stdout_write_error) the error said on stderr ("PROGRAM: cannot write the
 * standard output: ...") and 1 unless rc already failed. */
int stdout_checked_exit(const char *program, int rc);

/* An amount of memory or disk for a message, in decimal units with three significant digits:
 * "812 B", "40.1 MB", "1.66 GB", "100 kB" (kB = 10^3 bytes, MB = 10^6, ...). Writes into buf
 * (24 bytes hold any value) and returns it. */
const char *format_bytes(double bytes, char *buf, size_t n);

#endif

/* Input files that cannot hang or flood a run: a config, a particle file, a checkpoint or an
 * output to read must be a regular file (a FIFO blocked the program for ever, /dev/zero was
 * read until the machine ran out of memory), and a config one of bounded size. */
#ifndef CDLAB_INPUTFILE_H
#define CDLAB_INPUTFILE_H

#include "status.h"

#include <stdio.h>

/* The largest config file read: a config of 64 walls with all their keys and comments takes
 * tens of kB; particles go in files of their own. */
#define INPUT_CONFIG_MAX_BYTES (4LL << 20)

/* path opened for reading, without blocking on a FIFO, and checked: a regular file of at most
 * max_bytes (0: any size). Its stream, or NULL with the reason in err (CDLAB_ERR_IO), what
 * naming the file's role ("config file", "particle file"). */
FILE *input_file_open(const char *path, const char *what, long long max_bytes, diag *err);
/* The same check, the file closed again (for files a library opens by name: HDF5). */
status input_file_check(const char *path, const char *what, long long max_bytes, diag *err);

#endif

/* HDF5 output and input. This is the only file of cdlab that includes hdf5.h.
 *
 * Output: attributes on groups, per-step series (extendible, chunked, buffered in memory and
 * flushed every H5IO_SERIES_BUFFER rows and on h5out_flush/close), and whole arrays. The layout
 * cdlab writes is documented in docs/output.md. */
#ifndef CDLAB_H5IO_H
#define CDLAB_H5IO_H

#include "h5ledger.h"
#include "status.h"

#include <stdint.h>
#include <stdio.h>

typedef struct h5out h5out;

typedef enum h5type { H5IO_DOUBLE, H5IO_INT32, H5IO_INT64, H5IO_UINT8 } h5type;

status h5out_create(h5out **out, const char *path, diag *err);
/* The same, made through path (/proc/self/fd/N of a descriptor the caller holds on the file it
 * claimed, so that a file put under its name meanwhile is neither truncated nor written) and
 * called name in messages. */
status h5out_create_via(h5out **out, const char *path, const char *name, diag *err);
/* A writer with no file, for finding what the series of a writer's calls will take
 * (h5out_series_row_bytes) before the file is made: groups, attributes, series and arrays succeed
 * and write nothing (no HDF5 call: nothing allocated but the h5out); rows of a series, arrays
 * in rows and copies are refused. Closed by h5out_close. */
status h5out_create_counter(h5out **out, diag *err);
/* The bytes of one row of every series defined so far. */
double h5out_series_row_bytes(const h5out *h);
/* The rows a series of rows rows takes in the file: whole chunks of H5IO_SERIES_BUFFER rows
 * (a chunk is stored whole once it is begun). */
long h5out_series_stored_rows(long rows);
/* A file next to an output: OUT.h5 -> OUT<suffix> (a name without .h5 keeps it whole). 0 where
 * the name does not fit in n bytes (buf then holds it cut short). */
int h5_sibling_path(const char *h5_path, const char *suffix, char *buf, size_t n);

/* Opens an existing HDF5 file to add groups, attributes and arrays to it. */
status h5out_open(h5out **out, const char *path, diag *err);
/* Flushes buffered series rows and closes; safe on NULL. Then the file is read back and
 * every dataset and attribute written through h (h5ledger.h) checked against it: a close
 * that succeeded over a file that does not hold them is an error (CDLAB_ERR_IO, naming the
 * first that differs). After a failed write the file is read back too (what it holds). */
status h5out_close(h5out *h, diag *err);
/* The name by which the close reads the file back (a copy of it kept), instead of the path it
 * was created at: /proc/self/fd/N of a descriptor the caller holds on it, so that a file put
 * under its name meanwhile is not the one read. */
void h5out_read_back_as(h5out *h, const char *path);
/* h5out_close, keeping the ledger with each entry marked verified or not (h5ledger_group_ok,
 * h5ledger_rows_ok): *ledger is the caller's to free (h5ledger_free); NULL for a counter. */
status h5out_close_checked(h5out *h, h5ledger **ledger, diag *err);
status h5out_flush(h5out *h, diag *err);
/* A full disk must not cut a write short: HDF5 cannot take back what it half wrote, and a file
 * cut short in its metadata can lose what earlier flushes made readable. So before each output
 * room is reserved on the device past the file's end (fallocate, keeping its size): for the
 * output (expect bytes, the caller's count of the output's data, or twice the most the file
 * grew from one call to the next if more), a chunk per series and 512 KiB. When it cannot be had
 * the call fails (CDLAB_ERR_IO, the OS's reason and the amount) and the file is untouched; the
 * summary and the close then write into the room reserved before. Series flushes call it
 * themselves. Where the file system cannot reserve (h5out_reserving says 0) the call checks the
 * device's free space instead (which another program writing meanwhile can defeat).
 * After any failed write the file is written no more: every later call is refused and the
 * close discards HDF5's caches instead of writing them, so the file holds what its last
 * successful flush wrote. The close gives the room back. Safe on NULL. */
status h5out_make_room(h5out *h, long long expect, diag *err);
int h5out_reserving(const h5out *h);

status h5out_group(h5out *h, const char *path, diag *err);
/* Copies object path (a group with everything under it, attributes included) of src into dst
 * under the same path. */
status h5out_copy(h5out *dst, h5out *src, const char *path, diag *err);
status h5out_attr_string(h5out *h, const char *obj, const char *name, const char *value, diag *err);
/* The HDF5 library's version as the running program has it ("1.10.8"): the one that writes. */
void h5io_library_version(char *buf, size_t n);
status h5out_attr_double(h5out *h, const char *obj, const char *name, double value, diag *err);
status h5out_attr_int(h5out *h, const char *obj, const char *name, long long value, diag *err);
/* An unsigned 64-bit attribute (a seed of 2^63 or more was stored as a negative number). */
status h5out_attr_uint(h5out *h, const char *obj, const char *name, uint64_t value, diag *err);

/* A series has rows of shape tail[0] x tail[1] (rank_tail 0, 1 or 2); returns its index. */
status h5out_series(h5out *h, const char *path, h5type type, int rank_tail, const long *tail,
                    int *index, diag *err);
status h5out_series_append(h5out *h, int index, const void *row, diag *err);

/* The attribute of every whole array written (h5out_array, h5out_rows_*): the sum of its rows'
 * hashes (h5ledger.h) as a 64-bit integer; h5in_read checks it where it is present. */
#define H5IO_CHECKSUM_ATTR "checksum"

/* Writes a whole array of the given rank (1..3) and dimensions. */
status h5out_array(h5out *h, const char *path, h5type type, int rank, const long *dims,
                   const void *data, diag *err);

/* An array written in slabs of rows (along its first dimension), for arrays too big to build
 * whole in memory (a snapshot's contacts: 120 bytes each, 460 MB at 10^6 particles): created
 * with its full dimensions, its rows then written in any number of calls, then closed by _end
 * (also after a failure; as for h5out_array, an error the close meets is reported by the next
 * h5out_flush). */
typedef struct h5out_rows h5out_rows;
status h5out_rows_begin(h5out *h, const char *path, h5type type, int rank, const long *dims,
                        h5out_rows **rows, diag *err);
/* n rows from row first (the data holds n rows of the array's row shape). */
status h5out_rows_write(h5out_rows *r, long first, long n, const void *data, diag *err);
status h5out_rows_end(h5out_rows *r, diag *err);

/* Reading (for `cdlab info` and tests). */
status h5in_describe(const char *path, FILE *stream, diag *err);
/* Reads a 1D double dataset or a string attribute of "/"; *data is malloc'ed. */
status h5in_read_doubles(const char *path, const char *dset, double **data, long *n, diag *err);
status h5in_read_attr_string(const char *path, const char *obj, const char *name, char **value,
                             diag *err);

/* Reading many datasets of one file (restart checkpoints). */
typedef struct h5in h5in;
status h5in_open(h5in **h, const char *path, diag *err);
void h5in_close(h5in *h);
/* 1 when the object at path exists (its parent group must). */
int h5in_exists(h5in *h, const char *path);
/* 1 when the object obj (which must exist) has the attribute name. */
int h5in_has_attr(h5in *h, const char *obj, const char *name);
/* The number of elements of a dataset. */
status h5in_size(h5in *h, const char *dset, long long *n, diag *err);
/* Reads a whole dataset into data, which holds exactly count elements of the given type. */
status h5in_read(h5in *h, const char *dset, h5type type, void *data, long count, diag *err);
status h5in_attr_int(h5in *h, const char *obj, const char *name, long long *v, diag *err);
status h5in_attr_double(h5in *h, const char *obj, const char *name, double *v, diag *err);
/* *value is malloc'ed */
status h5in_attr_str(h5in *h, const char *obj, const char *name, char **value, diag *err);
/* 1 when every dataset under group whose checksum is stored (H5IO_CHECKSUM_ATTR) holds it;
 * 0 with the first that does not (its path under group) in bad. */
int h5in_group_verifies(h5in *h, const char *group, char *bad, size_t n);
/* The name (at most 255 characters) of the last child of group in step order, among those
 * before `before` (NULL: all). The children are step numbers, zero-padded to 8 digits and
 * longer past 99,999,999: a longer name is a later step ("100000000" after "99999999", which
 * sorted after it by name: a restart took the checkpoint of step 99,999,999 over a later one). */
status h5in_last_child(h5in *h, const char *group, const char *before, char *name, diag *err);

#endif

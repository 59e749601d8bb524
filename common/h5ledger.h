/* What a writer put into an HDF5 file, kept so that the closed file can be proven to hold it
 * (docs/output.md, "Verified files").
 *
 * Every dataset and attribute an h5out writes is entered here with a checksum of its bytes;
 * after the close, h5io reads the file back and checks each entry (h5ledger_check_*). A file
 * that a failed write left short (an EIO that the library reported late or not at all, a
 * sector that never reached the device) is told from the file the run meant to write.
 *
 * The checksum of a dataset is the sum, modulo 2^64, of one 64-bit hash per row (a row: one
 * element of its first dimension), each keyed by its row index: rows written in any order and
 * in any number of calls give the same sum, and a row that was lost or moved does not. The
 * hash is our own (multiply-rotate over 8-byte words, then a final mix); it guards against
 * lost and misplaced writes, not against an adversary. The same sum is stored beside each
 * whole array the writer makes (its `checksum` attribute), so that a reader of the file
 * (a restart) can check a dataset without the writer's ledger. */
#ifndef CDLAB_H5LEDGER_H
#define CDLAB_H5LEDGER_H

#include <stddef.h>
#include <stdint.h>

/* The hash of rows [first, first + n) of row_bytes each, as the sum described above. */
uint64_t h5ledger_hash_rows(const void *data, size_t row_bytes, long long first, long long n);

typedef enum h5ledger_kind { H5LEDGER_DATASET, H5LEDGER_ATTR } h5ledger_kind;

/* A run of rows of a series written by one flush: checked on its own, so that a series whose
 * end was lost still proves its start. */
typedef struct h5ledger_segment {
    long long first, n;
    uint64_t hash;
} h5ledger_segment;

typedef struct h5ledger_entry {
    h5ledger_kind kind;
    char *obj;        /* a dataset's path; an attribute's object */
    char *name;       /* an attribute's name (NULL for a dataset) */
    size_t row_bytes; /* a dataset's row; an attribute's value size */
    long long rows;   /* a dataset's rows (its first dimension) */
    uint64_t hash;    /* of all rows (datasets), of the value (attributes) */
    int type;         /* the h5type of a dataset, -1 for attributes */
    int series;       /* a series: checked by its segments */
    h5ledger_segment *seg;
    int nseg, capseg;
    /* after a check: 1 verified, 0 not; for a series the rows from its start that verified */
    int ok;
    long long rows_ok;
} h5ledger_entry;

typedef struct h5ledger h5ledger;

/* NULL when out of memory; a writer without a ledger cannot be proven and says so at close. */
h5ledger *h5ledger_new(void);
void h5ledger_free(h5ledger *l);

/* A dataset (or an attribute) at obj[@name]: the index of its entry, made on first use (its
 * rows' hash zero); -1 when out of memory. A dataset written again (an attribute rewritten)
 * keeps one entry, with its new value. series: checked by segments (h5ledger_segment). */
int h5ledger_dataset(h5ledger *l, const char *path, int type, size_t row_bytes, long long rows,
                     int series);
int h5ledger_attr(h5ledger *l, const char *obj, const char *name, const void *value, size_t size);
/* n rows from row first written into dataset entry k; a series also records them as a
 * segment. 0 when out of memory. */
int h5ledger_add_rows(h5ledger *l, int k, const void *data, long long first, long long n);

/* The entries of src under group (h5out_copy copied it) entered into dst as they are. 0 when
 * out of memory. */
int h5ledger_copy_group(h5ledger *dst, const h5ledger *src, const char *group);

int h5ledger_count(const h5ledger *l);
h5ledger_entry *h5ledger_at(h5ledger *l, int k);

/* After a check: how many entries did not verify, and the first of them ("/snapshots/x/radius"
 * or "/summary@status") into buf. */
int h5ledger_failures(const h5ledger *l, char *buf, size_t n);
/* Whether every entry under group (its datasets and their attributes, and the group's own
 * attributes) verified. */
int h5ledger_group_ok(const h5ledger *l, const char *group);
/* The latest child of group (its name a zero-padded step number: a longer name is a later
 * step) all of whose entries verified, as a step; -1 where none did. mark (or NULL): the
 * child must have that attribute too (a checkpoint's `complete`). */
long long h5ledger_last_whole_step(const h5ledger *l, const char *group, const char *mark);
/* The rows of a series (its path) that verified from its start; -1 where it has no entry. */
long long h5ledger_rows_ok(const h5ledger *l, const char *path);

#endif

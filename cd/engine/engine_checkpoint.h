/* The part of a checkpoint (format 3, docs/output.md) that both engines write alike: their
 * contact records as raw 64-bit words (/checkpoints/N/contacts, with the attributes contacts,
 * contact_record, contact_bytes and dem_rebuilds) and a random stream (rng). Each engine's
 * checkpoint operations call these; the run pipeline writes the world's part. */
#ifndef CDLAB_ENGINE_CHECKPOINT_H
#define CDLAB_ENGINE_CHECKPOINT_H

#include "h5io.h"
#include "pcg32.h"

typedef struct engine_records {
    const char *kind; /* contact_record: "contact", "dem_pair" */
    long bytes;       /* of one record, a multiple of 8 */
    long n;           /* records */
    long rebuilds;    /* dem_rebuilds (0 for an engine without a neighbour list) */
} engine_records;

status engine_checkpoint_write_records(h5out *h, const char *g, const engine_records *r,
                                       const void *records, const pcg32 *rng, diag *err);
/* The bytes engine_checkpoint_write_records stores: the records and the random stream. */
double engine_checkpoint_records_bytes(const engine_records *r);
/* Reads r->n and r->rebuilds of group g and checks them against r->kind and r->bytes and
 * the stored size, before anything is allocated for the records. */
status engine_checkpoint_count_records(h5in *h, const char *g, const char *file, engine_records *r,
                                       diag *err);
/* Reads the r->n records (into room for them) and the random stream (refused when it cannot
 * be PCG32's: an even increment). */
status engine_checkpoint_read_records(h5in *h, const char *g, const char *file,
                                      const engine_records *r, void *records, pcg32 *rng,
                                      diag *err);
/* The candidate gap a checkpoint's contact list was made with: the group's attribute attr, or,
 * in a checkpoint written before it had one, the file's contact.detect_gap (/parameters: the
 * gap of the run that wrote it), else dflt. A stored value that is no gap is refused. */
status engine_checkpoint_gap(h5in *h, const char *g, const char *attr, const char *file,
                             double dflt, double *gap, diag *err);
/* Whether every value of an array is finite. */
int engine_all_finite(const double *v, long n);
/* Every value finite and of magnitude at most bound (a restored state gets the loader's limit,
 * SCENE_MAX_MAGNITUDE: a checkpoint's position of 1e308 was accepted where a particle file's
 * was refused). */
int engine_all_bounded(const double *v, long n, double bound);

#endif

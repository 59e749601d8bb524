/* Particles between ranks, for distributed runs (docs/parallel.md): a particle's whole state as
 * a flat record, migration to the rank whose box holds it, and halo copies of the particles near
 * other ranks' boxes, refreshed on demand. One rank: migration keeps everything and there are no
 * halo copies. */
#ifndef CDLAB_EXCHANGE_H
#define CDLAB_EXCHANGE_H

#include "decomp.h"
#include "particles.h"
#include "world.h"
#include "xsum.h"

#include <stdint.h>

/* x v w (9), q (4), f_ext (3), r m inv_m inv_I (4), id, image (3), frozen: ids, image counts and
 * flags are stored exactly as doubles */
#define PARTICLE_RECORD 25

void particles_pack(const particles *P, int i, double *rec);
void particles_unpack(particles *P, int i, const double *rec);

/* Keeps the particles i with keep[i] (in their order), with their width doubles of *extra
 * (replaced by the kept ones' array; width 0: none). */
status exchange_keep(particles *P, const unsigned char *keep, double **extra, int width, diag *err);

/* Each particle goes to the rank whose box holds it: afterwards every rank holds exactly the
 * particles it owns (P holds no halo copies before or after), in increasing id order, so that the
 * storage order does not depend on the history of the run. With width > 0, *extra holds width
 * doubles per particle (an engine's per-particle state) that travel with it; it is replaced by
 * the array of the new particles. */
status exchange_migrate(particles *P, const decomp *D, double **extra, int width, diag *err);

/* Halo copies: for each rank, the owned particles within range of its box (decomp_near) are sent
 * to it and appended after the receiver's own particles, in rank order and the sender's order.
 * P->n becomes n_owned + n_ghost. */
typedef struct halo {
    int n_owned, n_ghost;
    int width;   /* extra doubles per particle */
    int *send;   /* owned particles to send, grouped by destination rank */
    int *scount; /* per rank: how many of them */
    int *rcount; /* per rank: how many copies came from it (they lie in rank order) */
    int nsend;
} halo;
status exchange_halo(particles *P, const decomp *D, double range, double **extra, int width,
                     halo *H, diag *err);
/* Sends the same particles' current records (and extras, width as built) again and overwrites
 * the copies. */
status exchange_halo_update(particles *P, double *extra, const halo *H, diag *err);
/* width doubles per particle (vals, owned then copies, as P is laid out after exchange_halo):
 * the owners' values sent along the same lists overwrite the copies'. What an engine needs of
 * its halo copies every step, without the whole records. */
status exchange_halo_values(const halo *H, double *vals, int width, diag *err);
/* The reverse of exchange_halo_values: the copies' width values (vals at n_owned ..) go back to
 * their owners and are added to the owners' values, in rank order (for the changes a rank made
 * to its copies). */
status exchange_halo_return(const halo *H, double *vals, int width, diag *err);
/* Collective: n records of width w to rank 0 (the others send nothing to anyone); on rank 0
 * *recv (malloc'ed) holds every rank's, in rank order, *nrecv of them. */
status exchange_to_rank0(const double *rec, int n, int w, double **recv, int *nrecv, diag *err);
/* What takes a gather's contact records on rank 0: first (rec NULL) their number, for the
 * room, then slices of them in key order (n records each), in order. */
typedef status (*records_consumer)(const double *rec, int n, void *user, diag *err);
/* The state one process holds, assembled on rank 0 for the output (collective; the others only
 * send), the one gather of both engines: Wg gets W's walls, time and settings, and its
 * particles in id order with width doubles of extra each into *gextra (each rank's first own
 * particles, a slice of ids at a time); consume (on rank 0, with user) gets every rank's n contact
 * records of width rw (rec: put in key order in place) in the pairs' key order, in slices of body
 * 0's ids (65,536 ids a slice: rank 0 holds one slice's records at a time, not the run's). A record
 * begins with its bodies (body 0's id or the wall code -1 - w, body 1's id); what follows is the
 * engine's. Wg's walls are W's. */
status exchange_gather_world(const world *W, int own, const double *extra, int width, double *rec,
                             int n, int rw, world *Wg, double **gextra, records_consumer consume,
                             void *user, diag *err);
/* Finding a particle by its id among a rank's particles (owned and copies): a table over the
 * run's ids (0 .. n - 1), kept between uses (each build invalidates the last one's entries by a
 * new stamp: no clearing, O(1) lookups). Measured: the distributed CD step installs its contacts
 * every step, and binary searches in a sorted map took 11% of it (97,336 spheres, 2 ranks). */
typedef struct id_map {
    int *local; /* local index of id, valid where stamp[id] == current */
    unsigned *stamp;
    unsigned current;
    int cap;
} id_map;
/* P's ids into m (grown to the largest id). */
status exchange_id_map(id_map *m, const particles *P, diag *err);
/* The local index of id, or -1 (not here). */
static inline int exchange_local_of(const id_map *m, long id)
{
    return id >= 0 && id < m->cap && m->stamp[id] == m->current ? m->local[id] : -1;
}
void exchange_id_map_free(id_map *m);
/* A pair's key and where its record is, for putting records in key order. */
typedef struct keyed_ref {
    uint64_t key;
    int rec;
} keyed_ref;
/* Sorts by key; equal keys end in their input order, which is rec's order where the caller
 * numbers rec by input position (every caller does), whichever way the sort goes. */
void keyed_sort(keyed_ref *kr, int n);
/* The halo range of a run: the detection gap plus the largest diameter over all ranks
 * (collective); refused (who: the engine, for the message) unless below half of every period. */
status exchange_halo_range(const particles *P, double gap, const char *who, double *range,
                           diag *err);
/* Exact sums over the ranks (collective): every rank's sums[0..n-1] added exactly into every
 * rank's (common/xsum.h), so the totals do not depend on the number of ranks. One rank: as
 * they are. */
status exchange_merge_sums(xsum *sums, int n, diag *err);
/* Frees the lists of a halo whose copies are kept or already gone. */
void exchange_halo_free(halo *H);
/* Drops the copies (P->n back to n_owned) and frees the lists. */
void exchange_halo_drop(particles *P, halo *H);

#endif

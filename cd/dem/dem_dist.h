/* The DEM engine across MPI ranks (docs/parallel.md): the operations of dem_dist (dem.h) on top
 * of the recursive bisection (common/decomp.c) and the particle exchange (common/exchange.c).
 * Each rank integrates the particles in its box and holds halo copies of those within the
 * detection range of it; its neighbour list holds every pair with one of its own particles,
 * so a pair across a boundary is computed by both ranks from the same data, and a particle's
 * force is gathered in global pair-key order: positions and velocities are the same bits as in
 * one process, for any number of ranks. Bonds travel with their pairs (a bond needs both of its
 * particles on every rank that holds it), deformable discs' stresses with their particles and
 * to their halo copies after every step; the energy ledger is made of exact sums. */
#ifndef CDLAB_DEM_DIST_H
#define CDLAB_DEM_DIST_H

#include "decomp.h"
#include "dem/dem.h"
#include "exchange.h"

typedef struct dem_mpi {
    dem_dist ops; /* first: S->dist points here */
    decomp D;
    halo H;
    int have_decomp, have_halo;
    double range;          /* halo range: the skin plus the largest diameter */
    parallel_params par;   /* when the boxes are cut afresh */
    long redistributions;  /* rebuilds that moved particles between ranks */
    long rebalances;       /* of them, those that cut the boxes afresh */
    long migrated;         /* particles this rank sent to another */
    int bonds, deformable; /* dem.bond, dem.deformable */
    /* bonds broken before the last redistribution, as records (ids: body 0, body 1, gap0,
     * u_t, intact = 0): only reported (rank 0 drops the copies two holders keep) */
    double *broken;
    int nbroken, broken_cap;
    id_map ids;      /* this rank's particles by id (rebuilt at every redistribution) */
    double *refresh; /* the halo refresh's values (REFRESH per particle), kept between steps */
    int refresh_cap;
} dem_mpi;

/* Every rank holds the whole world (as built from the config): keeps the particles of its
 * initial share (id mod ranks = rank; the first rebuild sends them to their owners) and sets up
 * M; S->dist = &M->ops. */
status dem_mpi_init(dem_mpi *M, world *W, dem_solver *S, const dem_params *p,
                    const parallel_params *par, diag *err);
/* After a one-process checkpoint was read by every rank (the whole state on each): each keeps
 * its own particles (with their forces, torques, paths and stresses), pairs and bonds, builds its
 * halo, and rank 0 alone carries the restored ledger's cumulative sums and count of broken
 * bonds (both add the ranks'). The continuation is the one-process continuation, bit for bit.
 * Collective. */
status dem_mpi_init_restored(dem_mpi *M, world *W, dem_solver *S, const dem_params *p,
                             const parallel_params *par, diag *err);
void dem_mpi_free(dem_mpi *M);
/* Collective: rank 0 receives every rank's own particles (with their forces, torques, paths
 * and stresses), the pairs each rank counts (with their forces) and the bonds, and assembles in
 * Wg (W's walls, time and settings, its own particles in id order) and Sg the state one process
 * would hold: the same particles, pair list, bonds and discs' shapes, the same forces, bit for
 * bit (the ledger, Sg->E, is the caller's). Other ranks only send. */
status dem_mpi_gather(const dem_mpi *M, const world *W, const dem_solver *S, const dem_params *p,
                      world *Wg, dem_solver *Sg, diag *err);

#endif

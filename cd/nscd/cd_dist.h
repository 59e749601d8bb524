/* Contact dynamics across MPI ranks (docs/parallel.md), on the recursive bisection
 * (common/decomp.c) and the particle exchange (common/exchange.c) that DEM uses.
 *
 * Every step each particle goes to the rank whose box holds it, with halo copies of the
 * particles within detection range of the box; the previous step's contact forces (the warm
 * start) go to the ranks that own one of the contact's particles. A rank keeps the contacts with
 * one of its own particles; it counts (in statistics, measures and output) those whose body 1 it
 * owns, so that every contact is counted once.
 *
 * Colored sweep: the colouring is that of one process (the greedy colouring of the whole
 * contact list in key order, made by the ranks in rounds of halo exchanges: cd_mpi_color), the
 * colours are taken in the order one process draws, each rank updates the contacts of the colour
 * that touch its own particles (a contact across a boundary by both of its ranks, from the same
 * data), and the halo copies' velocities are refreshed after each colour: positions, velocities
 * and forces are the one-process bits for any number of ranks. A piston's contacts are each
 * updated by one rank (the owner of the particle), at most one per colour: its velocity is
 * shared after each colour; its warm start and contact force are summed in key order over a
 * gather of its contacts, as one process sums them.
 *
 * Random, forward, backward and Jacobi sweeps, domain-wise (Shojaaee et al. 2012): each rank
 * updates the contacts it counts, in its own order (random: its own stream, drawn afresh every
 * step from the seed, the step and the rank), a contact across a boundary from the halo copy's
 * velocity of the previous exchange; after every sweep the changes a rank made to its halo
 * copies go to their owners and the copies are refreshed. The update order at the boundaries is
 * not that of one process: the answer differs, and with it the spurious elasticity
 * (experiments/parallel). */
#ifndef CDLAB_CD_DIST_H
#define CDLAB_CD_DIST_H

#include "nscd/cd.h"
#include "decomp.h"
#include "exchange.h"

typedef struct cd_mpi {
    cd_dist ops;     /* first: S->dist points here */
    contact_list *L; /* the solver's contact list (S->C) */
    decomp D;
    halo H;
    int have_decomp, have_halo;
    double range; /* halo range: the detection gap plus the largest diameter */
    parallel_params par;
    uint64_t seed;
    pcg32 rng;              /* domain-wise random sweep: this rank's stream of the step */
    long redistributions;   /* steps distributed */
    long rebalances;        /* of them, those that cut the boxes afresh */
    long migrated;          /* particles this rank sent to another */
    double counted, across; /* the last step's contacts and those with a halo body (all ranks) */
    unsigned char *count;   /* per contact of the list: this rank counts it */
    int *idx, *gsize;       /* domain-wise: the contacts swept (padded); colored: colour sizes */
    vec3 *R_next;           /* Jacobi buffer */
    double *vals;           /* halo exchange buffer: 6 per particle (v, w) */
    cd_solver *S;           /* while its records are gathered (S->bodies_on): the velocities */
    long gathered_step;     /* the step whose sweeps gathered them (-1: none yet) */
    double *piston_u;       /* the pistons' velocities at the step's start (walls' order) */
    long color_rounds;      /* colored: the rounds of the last step's colouring */
    int count_cap, idx_cap, gsize_cap, R_next_cap, vals_cap;
    id_map ids; /* this rank's particles by id (reused every step) */
} cd_mpi;

/* Every rank holds the whole world (built from the config, or read from a checkpoint with its
 * contact list): each keeps the particles in its box, the contacts with one of them and the halo
 * copies, and S->dist = &M->ops. Collective. */
status cd_mpi_init(cd_mpi *M, world *W, cd_solver *S, const cd_params *p,
                   const parallel_params *par, uint64_t seed, diag *err);
/* One step: the particles to their owners, then cd_step_solve (with the distributed sweeps).
 * Collective; every rank returns the same status. */
status cd_mpi_solve(cd_mpi *M, world *W, cd_solver *S, const cd_params *p, cd_stats *st, diag *err);
/* The step's end: positions, then the diagnostics summed over the ranks (the mean overlap to
 * round-off; cd_mpi_gather makes it as one process does) and the state checked on every rank. */
status cd_mpi_finish(cd_mpi *M, world *W, const cd_params *p, cd_stats *st, diag *err);
/* Collective: rank 0 assembles in Wg (W's walls, time and settings; the particles in id order)
 * and Lg (the counted contacts in key order, their geometry from the gathered positions) the
 * state one process holds, and in *st the diagnostics one process makes of it. Others only
 * send. */
status cd_mpi_gather(cd_mpi *M, const world *W, world *Wg, contact_list *Lg, cd_stats *st,
                     diag *err);
/* Colored sweep, after detection: the colours one process gives the list (S->color_of,
 * S->n_colors, grouped by cd_group_colors) and each colour's contacts on all ranks (M->gsize),
 * made without a gather of the contacts: Jones–Plassmann's rounds with the colouring's order
 * as priority (cd_color_order: key, or hashed), M->color_rounds of them (cd_dist_color.c).
 * total_contacts: the step's contacts on all ranks (a bound on the rounds). Collective. */
status cd_mpi_color(cd_mpi *M, world *W, cd_solver *S, int hashed, double total_contacts,
                    diag *err);
void cd_mpi_free(cd_mpi *M);

#endif

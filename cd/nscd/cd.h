/* Contact dynamics engine (Jean-Moreau, as described by Unger & Kertesz).
 *
 * One step (cd_step):
 *   detect candidates -> velocities without contact forces -> warm-start impulses ->
 *   Gauss-Seidel sweeps of the shock law until the convergence criterion holds ->
 *   implicit Euler update of positions and orientations with the new velocities (eqs. 1-2).
 *
 * Solver non-convergence is data (cd_stats.converged), not an error: the caller decides. */
#ifndef CDLAB_CD_H
#define CDLAB_CD_H

#include "engine/equiv.h" /* sweep_order */
#include "pcg32.h"
#include "world.h"
#include "xsum.h"

typedef enum criterion {
    CRIT_FIXED,  /* exactly N_I sweeps, eq. (37) */
    CRIT_LOCAL,  /* |dR_a| <= eps |R_a| + delta for every contact, eq. (35) */
    CRIT_GLOBAL, /* |d<|R|>| <= eps <|R|>, eq. (36) */
    /* the natural-map residual with rho = 1 (FCLIB's and Siconos's measure, cd_natural_map_now)
     * <= eps */
    CRIT_NATURAL_MAP,
} criterion;

struct cd_method;

typedef struct cd_params {
    const struct cd_method *method; /* the step's solver (cd_method.h): sweeps, apgd, newton */
    sweep_order sweep;
    criterion crit;
    int iterations;       /* N_I for fixed; the cap on sweeps for local and global */
    double epsilon;       /* relative tolerance of local, global and natural_map */
    double relaxation;    /* omega of the sweeps (1: Gauss-Seidel; else projected SOR) */
    double delta;         /* small force added to the local criterion's right-hand side */
    int warm_start;       /* start each step from the previous step's forces */
    double abort_overlap; /* stop when an overlap exceeds this fraction of the smaller radius
                             of the pair (0 disables the check) */
    double stress_volume; /* V of /series/stress (0: the particles' bounding box each row) */
    int desaxce;          /* apgd: De Saxce's outer fixed point (1) or the convex relaxation (0) */
    int presweeps;        /* newton: sweeps of the shock law before the first Newton step */
    int color_hashed;     /* colored: the colouring takes the contacts in hashed order (else key) */
} cd_params;

cd_params cd_params_default(void);

typedef struct cd_stats {
    int sweeps;           /* sweeps done in the last step */
    int converged;        /* criterion met (always 1 for fixed) */
    double residual;      /* local/fixed: max |dR|/(|R| + delta) of the last sweep;
                             global: |d<|R|>|/<|R|> of the last sweep */
    int n_contacts;       /* candidates */
    int n_active;         /* candidates carrying a non-zero force */
    int n_sliding;        /* active contacts at the Coulomb limit |R_t| = mu R_n (sliding) */
    double mean_overlap;  /* mean max(-gap, 0) over active contacts, after the step */
    double max_overlap;   /* max max(-gap, 0) over all candidates, after the step */
    double solve_seconds; /* wall time of the Gauss-Seidel sweeps in the step */
    /* contacts the previous step's detection missed, found at this step's (cd_step_solve): pairs
     * further apart than contact.detect_gap then that overlap now, and their largest overlap */
    int missed;
    double missed_overlap;
    /* apgd and newton: the answer's normal velocity u_N (plus g_pos/dt) at the contacts that
     * carry a normal force, mean and largest: zero in the shock law, mu |u_T| at the convex
     * relaxation's sliding contacts (0 for the sweeps, which keep the shock law exactly) */
    double dilation_mean, dilation_max;
} cd_stats;

/* A distributed run's part of the step (cd/nscd/cd_dist.c; NULL in one process): what the step
 * calls after detection (keep the contacts this rank computes, colour them), after the warm start
 * (the pistons' velocities, the halo copies' velocities from their owners) and in place of
 * sweep_run. */
typedef struct cd_dist cd_dist;
struct cd_solver;
struct sweep_result;
struct cd_dist {
    /* s: the detection's status (agreed first: a rank that failed must not leave the others
     * waiting in the step's exchanges) */
    status (*detected)(cd_dist *d, world *W, struct cd_solver *S, const struct cd_params *p,
                       status s, diag *err);
    status (*velocities)(cd_dist *d, world *W, diag *err);
    /* after the warm start: the pistons' velocities as one process makes them, then velocities */
    status (*warm_started)(cd_dist *d, world *W, diag *err);
    status (*sweep)(cd_dist *d, world *W, struct cd_solver *S, const struct cd_params *p,
                    int measure, struct sweep_result *r, diag *err);
    double contacts; /* the step's contacts on all ranks (set by detected): sweep when > 0 */
    int n_owned;     /* this rank's particles come first (set by detected) */
};

/* A body's state as the one-process sweeps read and write it: velocities and inverse masses in
 * one cache line per particle (the particles' own arrays are four lines apart), gathered before
 * the sweeps of a step and the velocities written back after them (cd_bodies_gather,
 * cd_bodies_scatter). Copies only: the same bits as sweeping on the particles' arrays. */
typedef struct cd_body {
    vec3 v, w;
    double inv_m, inv_I;
} __attribute__((aligned(64))) cd_body;

/* The most threads the random sweep's rounds take (cd_sweep.c). */
#define CD_DR_MAX_THREADS 64

typedef struct cd_solver {
    /* the step's contacts: candidates from the detection, their frames and forces R (carried
     * over to the next step's warm start); the engine's own, not the world's */
    contact_list C;
    cd_dist *dist; /* distributed run: its operations (NULL: one process) */
    cd_body *body; /* the bodies' records while bodies_on (n_body of them) */
    int body_cap, n_body, bodies_on;
    pcg32 rng;    /* random sweep stream */
    int *perm;    /* sweep order */
    vec3 *R_next; /* Jacobi buffer */
    int perm_cap, R_next_cap;
    /* colored sweep: contacts grouped by colour (color_start[c] .. color_start[c+1]-1 in
     * perm), the colour order, per-body colour masks, per-block change measures */
    int *color_start, *color_order, *color_of;
    uint64_t *mask;
    double *blk;
    uint32_t *draw; /* cd_shuffle_skip's outputs of the stream, made on threads */
    int color_start_cap, color_order_cap, color_of_cap, mask_cap, blk_cap, draw_cap;
    int n_colors, mask_words;
    long colored_at_step; /* the step whose contact list is coloured (-1: none) */
    /* the random sweep on threads (deterministic reservations, cd_sweep.c): per movable body
     * the earliest position in perm that reserved it (INT_MAX: none); per thread the window's
     * entries (positions in perm) and their bodies */
    int *resv, *dr_keep, *dr_bodies, *dr_ends; /* dr_ends: each contact's two movable bodies */
    int resv_cap, dr_keep_cap, dr_bodies_cap, dr_ends_cap;
    long dr_ends_at_step;                /* the step whose contact list dr_ends holds (-1: none) */
    const contact *dr_ends_of;           /* and the list's records then */
    int dr_threads;                      /* and the thread count then, which set dr_first */
    int dr_first[CD_DR_MAX_THREADS + 1]; /* the threads' stretches of the contact list */
    int dr_min_contacts; /* the fewest contacts swept on threads (0: cd_sweep.c's default) */
} cd_solver;

void cd_solver_init(cd_solver *S, uint64_t seed);
void cd_solver_free(cd_solver *S);

status cd_step(world *W, cd_solver *S, const cd_params *p, cd_stats *st, diag *err);
/* cd_step in two halves, so that the solved contact problem can be looked at (FCLIB export)
 * before the positions move: solve = detection, free velocities, warm start and sweeps (the
 * velocities are then the end-of-step ones, the contact frames those the solver used);
 * finish = position update, pistons, diagnostics. */
status cd_step_solve(world *W, cd_solver *S, const cd_params *p, cd_stats *st, diag *err);
status cd_step_finish(world *W, cd_solver *S, const cd_params *p, cd_stats *st, diag *err);
/* finish's first part: positions and orientations, pistons, time (no diagnostics, no checks);
 * returns the first particle that could not be wrapped into the periodic box (particles_wrap),
 * -1 if none */
int cd_step_move(world *W, const contact_list *L);

/* Internals shared by cd_step and the tests. */
vec3 cd_relative_velocity(const world *W, const contact *c);
void cd_apply_impulse(world *W, const contact *c, vec3 dP);
/* One contact update (Gauss-Seidel): returns the new force without storing it. The solver's
 * form is incremental and free of divisions; the reference form computes U (eq. 23) and calls
 * shock_law (eq. 34) as written in the paper. They agree up to rounding (tested). */
vec3 cd_contact_update(const world *W, const contact *c);
vec3 cd_contact_update_reference(const world *W, const contact *c);
/* One sweep in the given order; writes the per-sweep change measures. */
typedef struct sweep_result {
    double max_rel_change; /* max |dR|/(|R| + delta) */
    int local_ok;          /* every |dR| <= eps |R| + delta */
    /* the global criterion's sums of |R| before and after the sweep, exact (common/xsum.h): the
     * same bits for any thread count, sweep schedule or number of ranks (other criteria leave
     * them zero) */
    xsum abs_before, abs_after;
    double natural_map; /* the natural_map criterion's residual after the sweep (its solver's) */
} sweep_result;
/* A sweep's measures before its first update. */
void sweep_result_init(sweep_result *r);
/* One contact's force changed from R_old to R_new: its terms of the change measures (eq. 35's
 * test and max |dR|/(|R| + delta); with the global criterion, eq. 36's sums). */
void sweep_note_change(const cd_params *p, vec3 R_old, vec3 R_new, sweep_result *r);
/* measure = 0 skips the change measures (the fixed criterion needs them only in its last sweep).
 * Between cd_bodies_gather and cd_bodies_scatter it sweeps the solver's body records (the
 * particles' velocities are then stale); otherwise it gathers and scatters around itself. */
status cd_bodies_gather(world *W, cd_solver *S, diag *err);
/* The warm start's impulses (the carried-over forces R dt) on the bodies, in list order: on the
 * body records between cd_bodies_gather and cd_bodies_scatter, else on the particles' arrays. */
void cd_warm_start(world *W, cd_solver *S);
void cd_bodies_scatter(world *W, cd_solver *S);
status sweep_run(world *W, cd_solver *S, const cd_params *p, int measure, sweep_result *out,
                 diag *err);
/* Updates the contacts idx[0..n) of the list in that order (idx padded with CD_PERM_PAD valid
 * indices past n, for the prefetches); the change measures count contact k when count[k] (count
 * NULL: all). jacobi: every update from the velocities before the sweep. */
#define CD_PERM_PAD 48
void sweep_contacts(world *W, contact_list *L, const cd_params *p, const int *idx, int n,
                    int jacobi, vec3 *R_next, const unsigned char *count, int measure,
                    sweep_result *r);
/* sweep_contacts' Gauss-Seidel updates on the solver's body records (between cd_bodies_gather
 * and cd_bodies_scatter): the same bits, one line per body. */
void cd_sweep_records(world *W, struct cd_solver *S, const cd_params *p, const int *idx, int n,
                      const unsigned char *count, int measure, sweep_result *r);
/* Greedy colouring in list order of n contacts whose movable bodies are a[k], b[k] (indices
 * below nb, or -1: none): two contacts with a common movable body get different colours, each
 * the lowest free one. color[k] receives the colours; *ncolors their number. *mask (grown,
 * *mask_cap; *mask_words: the bit-mask width, widened as needed) is the caller's buffer. */
status cd_greedy_colors(int n, const int *a, const int *b, int nb, int *color, int *ncolors,
                        uint64_t **mask, int *mask_cap, int *mask_words, diag *err);
/* The colored sweep's colouring of the step's contact list (cd_greedy_colors, then
 * cd_group_colors); S->colored_at_step = W->step. In two parts: each contact's movable bodies
 * (ab[k], ab[n + k]: a particle that is not frozen, P->n + w for piston w, else -1; made on
 * threads into a new array, NULL when out of memory), then the colouring from them. */
status cd_color_contacts(world *W, struct cd_solver *S, int hashed, diag *err);
int *cd_contact_bodies(const world *W, const contact_list *L);
status cd_color_bodies(world *W, struct cd_solver *S, const int *ab, int hashed, diag *err);
/* The order in which the greedy colouring takes the contacts of L (in key order): key order
 * (hashed = 0: the identity), or (hashed = 1, solver.color_priority = hashed) the contacts
 * with walls first, in key order, then the pairs of particles in the order of a hash of their
 * keys (splitmix64's finaliser, a bijection: no ties), so that a chain of dependencies seldom
 * runs far. A new array (NULL when out of memory). */
int *cd_color_order(const contact_list *L, int n_walls, int hashed);
/* S->color_of[0..n) (colours below S->n_colors) grouped: S->perm holds the contacts of colour c
 * in list order at S->color_start[c] .. S->color_start[c + 1] - 1 (padded past n). */
status cd_group_colors(struct cd_solver *S, int n, diag *err);
/* Fisher-Yates shuffle of a[0..n-1] with the sweep's random stream. */
void cd_shuffle(pcg32 *rng, int *a, int n);
/* The draws of cd_shuffle(&S->rng, a, n), not applied: the stream moved on as they move it
 * (bit for bit), its outputs made on threads (pcg32_advance) and scanned in order for the
 * rare rejections (pcg32_bounded_down_scan). The colored sweep's shuffle within a colour,
 * whose order changes nothing. */
status cd_shuffle_skip(struct cd_solver *S, int n, diag *err);
/* Diagnostics of the contacts whose body 1 is below n_owned (one process: all of them) on the
 * current positions: counts, max overlap, the sum of the active contacts' overlaps in *sum. */
void cd_diagnostics(world *W, contact_list *L, int n_owned, cd_stats *st, double *sum);
/* Non-finite state or too large an overlap (p->abort_overlap): the error naming the particle. */
status cd_check_state(const world *W, const contact_list *L, const cd_params *p, diag *err);
/* The natural-map residual of the forces now, FCLIB's and Siconos's measure (rho = 1):
 *   sqrt(sum_a |r_a - P_K(r_a - (u_a + mu_a |u_aT| n_a))|^2) / sqrt(sum_a |r_a|^2)
 * with r_a = R_a dt and u_a = the relative velocity now plus g_pos/dt along n_a (u = W r + q of
 * cd_contact_problem.h, read from the bodies without W); the absolute value when every r_a is 0.
 * On the solver's body records while S->bodies_on. Exact sums: the same bits on any thread count.
 */
double cd_natural_map_now(const world *W, struct cd_solver *S);
/* Criterion decision after a sweep. */
int criteria_met(const cd_params *p, const sweep_result *r, int sweeps_done, double *residual);

#endif

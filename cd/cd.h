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

#include "equiv.h" /* sweep_order */
#include "pcg32.h"
#include "world.h"

typedef enum criterion {
    CRIT_FIXED,  /* exactly N_I sweeps, eq. (37) */
    CRIT_LOCAL,  /* |dR_a| <= eps |R_a| + delta for every contact, eq. (35) */
    CRIT_GLOBAL, /* |d<|R|>| <= eps <|R|>, eq. (36) */
} criterion;

typedef struct cd_params {
    sweep_order sweep;
    criterion crit;
    int iterations;       /* N_I for fixed; the cap on sweeps for local and global */
    double epsilon;       /* relative tolerance of local and global */
    double delta;         /* small force added to the local criterion's right-hand side */
    int warm_start;       /* start each step from the previous step's forces */
    double abort_overlap; /* stop when an overlap exceeds this fraction of the smaller radius
                             of the pair (0 disables the check) */
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
} cd_stats;

typedef struct cd_solver {
    pcg32 rng;    /* random sweep stream */
    int *perm;    /* sweep order */
    vec3 *R_next; /* Jacobi buffer */
    int perm_cap, R_next_cap;
    /* colored sweep: contacts grouped by colour (color_start[c] .. color_start[c+1]-1 in
     * perm), the colour order, per-body colour masks, per-block change measures */
    int *color_start, *color_order, *color_of;
    uint64_t *mask;
    double *blk;
    int color_start_cap, color_order_cap, color_of_cap, mask_cap, blk_cap;
    int n_colors, mask_words;
    long colored_at_step; /* the step whose contact list is coloured (-1: none) */
} cd_solver;

void cd_solver_init(cd_solver *S, uint64_t seed);
void cd_solver_free(cd_solver *S);

status cd_step(world *W, cd_solver *S, const cd_params *p, cd_stats *st, diag *err);
/* cd_step in two halves, so that the solved contact problem can be looked at (FCLIB export)
 * before the positions move: solve = detection, free velocities, warm start and sweeps (the
 * velocities are then the end-of-step ones, the contact frames those the solver used);
 * finish = position update, pistons, diagnostics. */
status cd_step_solve(world *W, cd_solver *S, const cd_params *p, cd_stats *st, diag *err);
status cd_step_finish(world *W, const cd_params *p, cd_stats *st, diag *err);

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
    double sum_abs_before, sum_abs_after;
} sweep_result;
/* measure = 0 skips the change measures (the fixed criterion needs them only in its last sweep). */
status sweep_run(world *W, cd_solver *S, const cd_params *p, int measure, sweep_result *out,
                 diag *err);
/* Criterion decision after a sweep. */
int criteria_met(const cd_params *p, const sweep_result *r, int sweeps_done, double *residual);

#endif

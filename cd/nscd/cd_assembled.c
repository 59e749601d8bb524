/* APGD and Newton as the step's solvers (cd_method.h): the step's contact problem is assembled
 * (contact_problem_build: W by probing, q the free velocities plus g_pos/dt, the warm start's
 * forces as the first iterate), solved by cd_matrix_apgd.c or cd_matrix_newton.c, and the
 * answer's forces put back on the contacts with the change of their impulses on the bodies, so
 * that the step goes on as after the sweeps. One process; every criterion: fixed (exactly
 * solver.iterations iterations, the method's answer after them), local and global (eqs. 35-36
 * on the change of the impulses over one iteration, at most solver.iterations of them) and
 * natural_map (rho = 1). */
#include "nscd/cd_contact_problem.h"
#include "nscd/cd_method.h"

#include <stdlib.h>

static status assembled_solve(world *W, cd_solver *S, const cd_params *p, cp_method method,
                              int budget, cd_solve_stats *st, diag *err)
{
    if (S->dist)
        return diag_set(err, CDLAB_ERR_ARG,
                        "solver.method = %s runs in one process only (refused at the start)",
                        p->method->name);
    if (S->bodies_on) /* the problem is built on the particles' arrays */
        cd_bodies_scatter(W, S);
    contact_list *L = &S->C;
    uint64_t hi = pcg32_next(&S->rng), lo = pcg32_next(&S->rng); /* Newton's presweeps */
    contact_problem cp;
    status s = contact_problem_build(W, L, &cp, err);
    if (s != CDLAB_OK)
        return s;
    cp_sweep_options o = {.method = method,
                          .order = p->sweep == SWEEP_FORWARD    ? CP_FORWARD
                                   : p->sweep == SWEEP_BACKWARD ? CP_BACKWARD
                                                                : CP_RANDOM,
                          .relaxation = p->relaxation,
                          /* fixed: never met, so exactly budget iterations */
                          .tolerance = p->crit == CRIT_NATURAL_MAP ? p->epsilon : -1.0,
                          .max_sweeps = budget,
                          .seed = hi << 32 | lo,
                          .desaxce = p->desaxce,
                          .presweeps = p->presweeps < budget ? p->presweeps : budget,
                          /* eqs. 35-36 on one iteration's change, delta a force: an impulse */
                          .change = p->crit == CRIT_LOCAL    ? CP_CHANGE_LOCAL
                                    : p->crit == CRIT_GLOBAL ? CP_CHANGE_GLOBAL
                                                             : CP_CHANGE_NONE,
                          .change_epsilon = p->epsilon,
                          .change_delta = p->delta * W->dt};
    cp_sweep_result res;
    s = contact_problem_solve(&cp, cp.r, &o, NULL, NULL, &res, err);
    if (s == CDLAB_OK) {
        /* the answer's forces, and the change of their impulses on the bodies, whose
         * velocities hold the warm start's */
        int d = cp.d;
        double inv_dt = 1.0 / W->dt;
        for (int a = 0; a < L->n; a++) {
            contact *c = &L->c[a];
            vec3 R = v3_zero();
            for (int x = 0; x < d; x++)
                R = v3_axpy(cp.r[a * d + x] * inv_dt, cp.frame[a * d + x], R);
            cd_apply_impulse(W, c, v3_scale(v3_sub(R, c->R), W->dt));
            c->R = R;
        }
        st->iterations = res.sweeps;
        st->converged = p->crit == CRIT_FIXED || res.converged;
        /* the criterion's measure: the change (local, global) or the natural map */
        st->residual = o.change != CP_CHANGE_NONE ? res.change : res.residual;
        st->dilation_mean = res.dilation_mean;
        st->dilation_max = res.dilation_max;
    }
    contact_problem_free(&cp);
    return s;
}

static status apgd_solve(world *W, cd_solver *S, const cd_params *p, int budget, cd_solve_stats *st,
                         diag *err)
{
    return assembled_solve(W, S, p, CP_APGD, budget, st, err);
}

static status newton_solve(world *W, cd_solver *S, const cd_params *p, int budget,
                           cd_solve_stats *st, diag *err)
{
    return assembled_solve(W, S, p, CP_NEWTON, budget, st, err);
}

const cd_method cd_method_apgd = {
    .name = "apgd",
    .title = "APGD (Nesterov's accelerated projected gradient) on the cone complementarity "
             "problem",
    .solve = apgd_solve,
};

const cd_method cd_method_newton = {
    .name = "newton",
    .title = "semismooth Newton on Alart and Curnier's function (UMFPACK)",
    .solve = newton_solve,
};

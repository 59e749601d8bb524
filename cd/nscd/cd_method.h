/* The CD step's solvers behind one interface (as Chrono keeps its solvers behind one Solve and
 * Siconos one options record per solver). A solver is handed the step's contact problem as the
 * step has set it up (cd_step_solve): the contact list S->C with its frames and the warm-started
 * forces R, the bodies' velocities with the free motion and the warm start's impulses in them
 * (on the solver's body records while S->bodies_on), and S->dist in a distributed run. It
 * iterates until p's criterion holds (local eq. 35, global eq. 36, or the fixed count) or its
 * budget of iterations is spent, and leaves the answer's forces R in the list and the bodies'
 * velocities that go with them; it says how far it got in its own statistics. A new solver is
 * one file beside cd_sweep.c with its cd_method and one line in cd_methods (cd_method.c). */
#ifndef CDLAB_CD_METHOD_H
#define CDLAB_CD_METHOD_H

#include "nscd/cd.h"

typedef struct cd_solve_stats {
    int iterations;  /* iterations done (for the sweeps: sweeps) */
    int converged;   /* the criterion held after the last of them */
    double residual; /* the criterion's measure after the last of them (cd_stats.residual) */
    /* the answer's u_N at the contacts that carry a normal force: mean and largest (cd_stats) */
    double dilation_mean, dilation_max;
} cd_solve_stats;

typedef struct cd_method {
    const char *name;  /* the name a config would give it */
    const char *title; /* for the banner and docs */
    /* At most budget iterations; a failure (out of memory, a distributed exchange) is an error,
     * not converging is a statistic. */
    status (*solve)(world *W, cd_solver *S, const cd_params *p, int budget, cd_solve_stats *st,
                    diag *err);
} cd_method;

/* The shock law's Gauss-Seidel sweeps in p->sweep's order (and the Jacobi update): cd_sweep.c. */
extern const cd_method cd_method_sweeps;
/* The assembled solvers (cd_assembled.c): APGD and the semismooth Newton method on the step's
 * contact problem (cd_contact_problem.h). */
extern const cd_method cd_method_apgd, cd_method_newton;
/* Every solver, NULL-terminated; cd_method_find: the one of that name, or NULL. */
extern const cd_method *const cd_methods[];
const cd_method *cd_method_find(const char *name);

#endif

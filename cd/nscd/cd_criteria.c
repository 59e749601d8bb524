/* Convergence criteria of the iterative solver, Unger & Kertesz sec. 2.5.1. */
#include "nscd/cd.h"

int criteria_met(const cd_params *p, const sweep_result *r, int sweeps_done, double *residual)
{
    switch (p->crit) {
    case CRIT_FIXED: /* eq. (37): exactly N_I sweeps */
        *residual = r->max_rel_change;
        return sweeps_done >= p->iterations;
    case CRIT_LOCAL: /* eq. (35) with the small force delta on the right-hand side */
        *residual = r->max_rel_change;
        return r->local_ok;
    case CRIT_GLOBAL: { /* eq. (36): change of the mean |R| relative to the mean |R| */
        double before = xsum_round(&r->abs_before), after = xsum_round(&r->abs_after);
        double change = fabs(after - before);
        *residual = after > 0.0 ? change / after : (change > 0.0 ? INFINITY : 0.0);
        return change <= p->epsilon * after;
    }
    case CRIT_NATURAL_MAP: /* FCLIB's measure, the solver's (cd_natural_map_now for the sweeps) */
        *residual = r->natural_map;
        return r->natural_map <= p->epsilon;
    }
    return 1;
}

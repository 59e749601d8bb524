#include "nscd/cd_config.h"

const char *const cd_criterion_names[] = {"fixed", "local", "global", "natural_map", NULL};

status cd_config_read(config *c, cd_params *p, diag *err)
{
    *p = cd_params_default();
    int sweep, crit;
    long iters;
    status s;
    if ((s = config_enum(c, "solver", "sweep", 0, (int)p->sweep, sweep_order_names, &sweep, err)) ||
        (s = config_enum(c, "solver", "criterion", 0, (int)p->crit, cd_criterion_names, &crit,
                         err)) ||
        (s = config_int(c, "solver", "iterations", 0, p->iterations, 1, 100000000L, &iters, err)) ||
        (s = config_double(c, "solver", "epsilon", 0, p->epsilon, 0.0, 1, 1.0, &p->epsilon, err)) ||
        (s = config_double(c, "solver", "delta", 0, p->delta, 0.0, 0, INFINITY, &p->delta, err)) ||
        (s = config_double(c, "solver", "relaxation", 0, p->relaxation, 0.0,
                           CONFIG_MIN_OPEN | CONFIG_MAX_OPEN, 2.0, &p->relaxation, err)) ||
        (s = config_bool(c, "solver", "warm_start", 0, p->warm_start, &p->warm_start, err)) ||
        (s = config_double(c, "solver", "abort_overlap", 0, p->abort_overlap, 0.0, 0, INFINITY,
                           &p->abort_overlap, err)) ||
        (s = config_double(c, "solver", "stress_volume", 0, p->stress_volume, 0.0, 0, INFINITY,
                           &p->stress_volume, err)))
        return s;
    if (sweep == SWEEP_JACOBI && p->relaxation > 1.0)
        return config_error(c, "solver", "relaxation", err,
                            "is %g with the jacobi sweep: relaxed Jacobi diverges above 1 (on a "
                            "chain its checkerboard mode grows by |1 - 2 omega| every sweep; "
                            "the 1D wave test overlapped by 0.32 of a radius in its first step "
                            "at 1.25): use at most 1, or another order",
                            p->relaxation);
    p->sweep = (sweep_order)sweep;
    p->crit = (criterion)crit;
    p->iterations = (int)iters;
    return CDLAB_OK;
}

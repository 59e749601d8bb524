#include "cd_config.h"

const char *const cd_sweep_names[] = {"random", "forward", "backward", "jacobi", "colored", NULL};
const char *const cd_criterion_names[] = {"fixed", "local", "global", NULL};

status cd_config_read(config *c, cd_params *p, diag *err)
{
    *p = cd_params_default();
    int sweep, crit;
    long iters;
    status s;
    if ((s = config_enum(c, "solver", "sweep", 0, (int)p->sweep, cd_sweep_names, &sweep, err)) ||
        (s = config_enum(c, "solver", "criterion", 0, (int)p->crit, cd_criterion_names, &crit,
                         err)) ||
        (s = config_int(c, "solver", "iterations", 0, p->iterations, 1, 100000000L, &iters, err)) ||
        (s = config_double(c, "solver", "epsilon", 0, p->epsilon, 0.0, 1, 1.0, &p->epsilon, err)) ||
        (s = config_double(c, "solver", "delta", 0, p->delta, 0.0, 0, INFINITY, &p->delta, err)) ||
        (s = config_bool(c, "solver", "warm_start", 0, p->warm_start, &p->warm_start, err)) ||
        (s = config_double(c, "solver", "abort_overlap", 0, p->abort_overlap, 0.0, 0, INFINITY,
                           &p->abort_overlap, err)))
        return s;
    p->sweep = (sweep_order)sweep;
    p->crit = (criterion)crit;
    p->iterations = (int)iters;
    return CDLAB_OK;
}

double cd_sweep_q(sweep_order s)
{
    if (s == SWEEP_JACOBI)
        return 0.5; /* eq. (45) */
    if (s == SWEEP_RANDOM)
        return (4.0 * sqrt(exp(1.0)) - 5.0) / 2.0; /* eq. (46), ~0.797 */
    if (s == SWEEP_COLORED)
        return CD_Q_COLORED_MEASURED;
    if (s == SWEEP_FORWARD || s == SWEEP_BACKWARD)
        return CD_Q_ORDERED_MEASURED;
    return NAN;
}

cd_elasticity cd_elasticity_of(sweep_order s, int N_I, double dt, double d, double m)
{
    cd_elasticity e;
    e.q = cd_sweep_q(s);
    e.D = e.q * N_I * d * d / dt;        /* eq. (54) */
    e.c = sqrt(e.q * N_I) * d / dt;      /* eq. (57) */
    e.l_diff = sqrt(4.0 * e.D * dt);     /* eq. (63) */
    e.kappa = e.q * m * N_I / (dt * dt); /* eq. (67) */
    e.gamma = e.q * m * N_I / dt;        /* eq. (68) */
    return e;
}

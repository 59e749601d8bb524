#include "nscd/cd_config.h"

#include "nscd/cd_method.h"

const char *const cd_criterion_names[] = {"fixed", "local", "global", "natural_map", NULL};

/* The solvers' names (cd_methods), NULL-terminated, for config_enum. */
static const char *const *method_names(void)
{
    static const char *names[16];
    for (int k = 0; k < 15 && cd_methods[k]; k++)
        names[k] = cd_methods[k]->name;
    return names;
}

/* What solver.method = apgd or newton cannot be combined with, said with the reason. */
static status assembled_refusals(config *c, const cd_params *p, int sweep, diag *err)
{
    int apgd = p->method == &cd_method_apgd;
    if (apgd && p->relaxation != 1.0)
        return config_error(c, "solver", "relaxation", err,
                            "is %g with solver.method = apgd: omega relaxes the sweeps, and APGD "
                            "finds its own step (leave solver.relaxation unset)",
                            p->relaxation);
    if (apgd && sweep != SWEEP_RANDOM)
        return config_error(c, "solver", "sweep", err,
                            "is %s with solver.method = apgd, which does no sweeps (leave "
                            "solver.sweep unset, or random)",
                            sweep_order_names[sweep]);
    if (!apgd && sweep != SWEEP_RANDOM && sweep != SWEEP_FORWARD && sweep != SWEEP_BACKWARD)
        return config_error(c, "solver", "sweep", err,
                            "is %s with solver.method = newton: its sweeps (solver.presweeps, and "
                            "one in place of a Newton step that does not help) are random, "
                            "forward or backward",
                            sweep_order_names[sweep]);
    return CDLAB_OK;
}

/* solver.color_priority: the order the colored sweep's greedy colouring takes the contacts in
 * (cd_color_order). */
static const char *const color_priority_names[] = {"key", "hashed", NULL};

status cd_config_read(config *c, cd_params *p, diag *err)
{
    *p = cd_params_default();
    int sweep, crit, method;
    long iters, presweeps;
    status s;
    if ((s = config_enum(c, "solver", "method", 0, 0, method_names(), &method, err)) ||
        (s = config_bool(c, "solver", "desaxce", 0, p->desaxce, &p->desaxce, err)) ||
        (s = config_int(c, "solver", "presweeps", 0, p->presweeps, 0, 100000000L, &presweeps,
                        err)) ||
        (s = config_enum(c, "solver", "sweep", 0, (int)p->sweep, sweep_order_names, &sweep, err)) ||
        (s = config_enum(c, "solver", "color_priority", 0, p->color_hashed, color_priority_names,
                         &p->color_hashed, err)) ||
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
    if (sweep != SWEEP_COLORED && config_has(c, "solver", "color_priority"))
        return config_error(c, "solver", "color_priority", err,
                            "is given with solver.sweep = %s: it orders the colored sweep's "
                            "colouring (solver.sweep = colored)",
                            sweep_order_names[sweep]);
    if (sweep == SWEEP_JACOBI && p->relaxation > 1.0)
        return config_error(c, "solver", "relaxation", err,
                            "is %g with the jacobi sweep: relaxed Jacobi diverges above 1 (on a "
                            "chain its checkerboard mode grows by |1 - 2 omega| every sweep; "
                            "the 1D wave test overlapped by 0.32 of a radius in its first step "
                            "at 1.25): use at most 1, or another order",
                            p->relaxation);
    p->method = cd_methods[method];
    p->presweeps = (int)presweeps;
    if (p->method != &cd_method_apgd && config_has(c, "solver", "desaxce"))
        return config_error(c, "solver", "desaxce", err,
                            "is given with solver.method = %s: it chooses APGD's way back to "
                            "Coulomb's law (solver.method = apgd)",
                            p->method->name);
    if (p->method != &cd_method_newton && config_has(c, "solver", "presweeps"))
        return config_error(c, "solver", "presweeps", err,
                            "is given with solver.method = %s: it counts the sweeps before "
                            "Newton's first step (solver.method = newton)",
                            p->method->name);
    if (p->method != &cd_method_sweeps && (s = assembled_refusals(c, p, sweep, err)) != CDLAB_OK)
        return s;
    p->sweep = (sweep_order)sweep;
    p->crit = (criterion)crit;
    p->iterations = (int)iters;
    return CDLAB_OK;
}

/* The CD <-> DEM equivalence: Unger & Kertesz eqs. (45)-(46), (54), (57), (63), (67)-(68). */
#include "engine/equiv.h"

#include <math.h>
#include <stddef.h>

const char *const sweep_order_names[] = {"random", "forward", "backward",
                                         "jacobi", "colored", NULL};

double equiv_q(sweep_order s)
{
    if (s == SWEEP_JACOBI)
        return 0.5; /* eq. (45) */
    if (s == SWEEP_RANDOM)
        return (4.0 * sqrt(exp(1.0)) - 5.0) / 2.0; /* eq. (46), ~0.797 */
    if (s == SWEEP_COLORED)
        return EQUIV_Q_COLORED_MEASURED;
    if (s == SWEEP_FORWARD || s == SWEEP_BACKWARD)
        return EQUIV_Q_ORDERED_MEASURED;
    return NAN;
}

/* The derived q(omega) of the order on the chain (equiv.h). */
static double q_shape(sweep_order s, double omega)
{
    switch (s) {
    case SWEEP_JACOBI:
        return omega <= 1.0 ? omega / 2.0 : NAN;
    case SWEEP_RANDOM:
        return 2.0 * exp(omega / 2.0) - 2.0 - omega / 2.0;
    case SWEEP_FORWARD:
    case SWEEP_BACKWARD:
        return omega / (2.0 - omega);
    case SWEEP_COLORED:
        return omega * (omega + 2.0) / 4.0;
    }
    return NAN;
}

double equiv_q_relaxed(sweep_order s, double omega)
{
    if (omega == 1.0)
        return equiv_q(s);
    if (!(omega > 0.0 && omega < 2.0))
        return NAN;
    return equiv_q(s) * q_shape(s, omega) / q_shape(s, 1.0);
}

equiv_figures equiv_of(sweep_order s, int N_I, double dt, double d, double m)
{
    return equiv_of_relaxed(s, 1.0, N_I, dt, d, m);
}

double equiv_q_of(sweep_order s, int color_hashed, double omega)
{
    if (s == SWEEP_COLORED && color_hashed)
        return omega == 1.0 ? EQUIV_Q_COLORED_HASHED_MEASURED : NAN;
    return equiv_q_relaxed(s, omega);
}

equiv_figures equiv_of_relaxed(sweep_order s, double omega, int N_I, double dt, double d, double m)
{
    return equiv_of_q(equiv_q_relaxed(s, omega), N_I, dt, d, m);
}

equiv_figures equiv_of_q(double q, int N_I, double dt, double d, double m)
{
    equiv_figures e;
    e.q = q;
    e.D = e.q * N_I * d * d / dt;        /* eq. (54) */
    e.c = sqrt(e.q * N_I) * d / dt;      /* eq. (57) */
    e.l_diff = sqrt(4.0 * e.D * dt);     /* eq. (63) */
    e.kappa = e.q * m * N_I / (dt * dt); /* eq. (67) */
    e.gamma = e.q * m * N_I / dt;        /* eq. (68) */
    return e;
}

double equiv_tangential_ratio(int dimension)
{
    double beta = dimension == 3 ? 0.4 : 0.5; /* particles.c: I = beta m r^2 */
    return beta / (1.0 + beta);
}

double equiv_critical_dt(double k, double c, double m)
{
    double omega = 2.0 * sqrt(k / m);
    double xi = c * omega / (2.0 * k); /* damping ratio of the highest mode */
    return 2.0 / omega * (sqrt(1.0 + xi * xi) - xi);
}

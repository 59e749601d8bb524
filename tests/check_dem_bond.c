/* Bonded contacts (Rojek et al. eqs. 1-11): the force law, the strengths, and the critical
 * damping of eq. (11) against the closed-form motion of two bonded masses. */
#include "suites.h"

#include "dem/dem_bond.h"

#include <math.h>

/* Springs and dashpots in parallel, tension allowed: rounding only (1e-14 relative). */
START_TEST(analytic_bond_force_law)
{
    dem_bond_law L = {.k_n = 1e3, .k_t = 4e2};
    dem_bond_in in = {.h = 0.01, .u_t = v3(2e-3, -1e-3, 0), .m_0 = 2.0, .m_1 = 3.0};
    dem_bond_out out;
    dem_bond_force(&L, &in, &out);
    ck_assert_double_eq_tol(out.f_n, 10.0, 1e-13); /* stretched: tension k_n h */
    ck_assert_double_eq_tol(out.f_t.x, 0.8, 1e-14);
    ck_assert_double_eq_tol(out.f_t.y, -0.4, 1e-14);
    in.h = -0.02; /* compressed: the same spring */
    dem_bond_force(&L, &in, &out);
    ck_assert_double_eq_tol(out.f_n, -20.0, 1e-13);
    /* dashpots: c = xi 2 sqrt(mu k), mu = 6/5 */
    L.xi_n = 0.5;
    L.xi_t = 0.25;
    in.v_n = 0.3;
    in.v_t = v3(0, 0.2, 0);
    dem_bond_force(&L, &in, &out);
    double c_n = 0.5 * 2.0 * sqrt(1.2 * 1e3), c_t = 0.25 * 2.0 * sqrt(1.2 * 4e2);
    ck_assert_double_eq_tol(out.f_n, -20.0 + c_n * 0.3, 1e-13);
    ck_assert_double_eq_tol(out.f_t.y, -0.4 + c_t * 0.2, 1e-13);
    /* eq. (11) with a wall (infinite mass): 2 sqrt(m k) */
    ck_assert_double_eq_tol(dem_bond_critical_damping(1e3, INFINITY, 3.0), 2.0 * sqrt(3e3), 1e-12);
    ck_assert_double_eq_tol(dem_bond_critical_damping(1e3, 2.0, 3.0), 2.0 * sqrt(1.2e3), 1e-12);
}
END_TEST

/* A bond breaks when its elastic tension or shear passes its strength, not by compression and
 * not by its dashpots. */
START_TEST(unit_bond_breaking)
{
    dem_bond_law L = {.k_n = 1e3, .k_t = 1e3, .xi_n = 1.0, .strength_n = 5.0, .strength_t = 2.0};
    dem_bond_in in = {.m_0 = 1.0, .m_1 = 1.0};
    dem_bond_out out;
    in.h = 4.999e-3;
    dem_bond_force(&L, &in, &out);
    ck_assert_int_eq(out.broken, 0);
    in.h = 5.001e-3;
    dem_bond_force(&L, &in, &out);
    ck_assert_int_eq(out.broken, 1);
    in.h = -1.0; /* any compression */
    dem_bond_force(&L, &in, &out);
    ck_assert_int_eq(out.broken, 0);
    in.h = 1e-3;
    in.v_n = 1e3; /* a fast separation: the dashpot's force is far above 5, the spring's not */
    dem_bond_force(&L, &in, &out);
    ck_assert(out.f_n > 5.0);
    ck_assert_int_eq(out.broken, 0);
    in.v_n = 0.0;
    in.u_t = v3(1.5e-3, 1.5e-3, 0); /* |k_t u_t| = 2.12 > 2 */
    dem_bond_force(&L, &in, &out);
    ck_assert_int_eq(out.broken, 1);
    L.strength_n = L.strength_t = 0.0; /* unbreakable */
    in.h = 1e6;
    dem_bond_force(&L, &in, &out);
    ck_assert_int_eq(out.broken, 0);
}
END_TEST

/* Two free masses (2 and 3) joined by a bond k = 1e3 with xi_n = 1, stretched by x0 and let go:
 * the stretch follows the critically damped x0 (1 + w t) e^(-w t), w = sqrt(k/mu), without
 * crossing zero; with xi_n = 0.5 it crosses (so the check can tell). Symplectic Euler at
 * dt = 1e-4/w: its error ~ w dt x0; tolerance 1e-3 x0. */
static double bonded_pair(double xi, double t_end, double *x_min)
{
    dem_bond_law L = {.k_n = 1e3, .xi_n = xi};
    double m0 = 2.0, m1 = 3.0, x0 = 1e-3, w = sqrt(1e3 / (m0 * m1 / (m0 + m1)));
    double p0 = 0.0, p1 = x0, v0 = 0.0, v1 = 0.0, dt = 1e-4 / w;
    long n = (long)llround(t_end / dt);
    *x_min = x0;
    for (long k = 0; k < n; k++) {
        dem_bond_in in = {.h = p1 - p0, .v_n = v1 - v0, .m_0 = m0, .m_1 = m1};
        dem_bond_out out;
        dem_bond_force(&L, &in, &out);
        v1 -= dt * out.f_n / m1; /* tension pulls body 1 back toward body 0 */
        v0 += dt * out.f_n / m0;
        p1 += dt * v1;
        p0 += dt * v0;
        *x_min = fmin(*x_min, p1 - p0);
    }
    return p1 - p0;
}

START_TEST(analytic_critical_damping_two_bodies)
{
    double mu = 1.2, w = sqrt(1e3 / mu), x0 = 1e-3, x_min;
    for (int k = 1; k <= 3; k++) {
        double t = 2.0 * k / w;
        double x = bonded_pair(1.0, t, &x_min);
        ck_assert_double_eq_tol(x, x0 * (1.0 + w * t) * exp(-w * t), 1e-3 * x0);
        ck_assert_double_ge(x_min, 0.0);
    }
    bonded_pair(0.5, 6.0 / w, &x_min);
    ck_assert_msg(x_min < -1e-3 * x0, "under-damped pair did not overshoot (%g)", x_min);
}
END_TEST

Suite *dem_bond_suite(void)
{
    Suite *s = suite_create("dem_bond");
    TCase *tc = tcase_create("dem_bond");
    tcase_add_test(tc, analytic_bond_force_law);
    tcase_add_test(tc, unit_bond_breaking);
    tcase_add_test(tc, analytic_critical_damping_two_bodies);
    suite_add_tcase(s, tc);
    return s;
}

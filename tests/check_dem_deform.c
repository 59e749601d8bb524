/* Deformable discs (Rojek et al.): the particle stress (eq. 12) of a disc under opposed forces
 * against the closed form, the plane-strain strain (eq. 13) against the stiffness it inverts,
 * the ellipse of a strain, and its reach against a brute-force search of its boundary. */
#include "suites.h"

#include "dem/dem_deform.h"

#include <math.h>

/* A disc of radius r and thickness t pressed by two opposed forces P along the direction d at
 * angle theta: s = +-r d, F = -+P d, so sigma = -(2 P r / V) d (x) d with V = pi r^2 t (the mean
 * stress of the Brazilian disc, -2P/(pi r t) along d, 0 across it). Rounding only: 1e-14. */
START_TEST(analytic_stress_opposed_forces)
{
    double r = 0.5, t = 2.0, P = 3.0, V = CDLAB_PI * r * r * t;
    for (int k = 0; k < 6; k++) {
        double th = 0.3 + k * 0.5;
        vec3 d = v3(cos(th), sin(th), 0.0);
        vec3 s[2] = {v3_scale(d, r), v3_scale(d, -r)};
        vec3 F[2] = {v3_scale(d, -P), v3_scale(d, P)};
        double sig[3];
        dem_deform_stress(2, s, F, V, sig);
        double m = -2.0 * P / (CDLAB_PI * r * t);
        ck_assert_double_eq_tol(sig[0], m * d.x * d.x, 1e-14 * fabs(m));
        ck_assert_double_eq_tol(sig[1], m * d.y * d.y, 1e-14 * fabs(m));
        ck_assert_double_eq_tol(sig[2], m * d.x * d.y, 1e-14 * fabs(m));
        /* its principal values: m along d, 0 across (trace and determinant) */
        ck_assert_double_eq_tol(sig[0] + sig[1], m, 1e-14 * fabs(m));
        ck_assert_double_eq_tol(sig[0] * sig[1] - sig[2] * sig[2], 0.0, 1e-14 * m * m);
    }
    /* a tangential pair (a couple) enters only through the symmetric part: xy = T r / V */
    vec3 s[2] = {v3(r, 0, 0), v3(-r, 0, 0)}, F[2] = {v3(0, 1.5, 0), v3(0, -1.5, 0)};
    double sig[3];
    dem_deform_stress(2, s, F, V, sig);
    ck_assert_double_eq_tol(sig[2], 1.5 * r / V, 1e-15);
    ck_assert(sig[0] == 0.0 && sig[1] == 0.0);
}
END_TEST

/* eps = D : sigma inverted by the plane-strain stiffness
 *   s_xx = E/((1+nu)(1-2nu)) ((1-nu) e_xx + nu e_yy), s_xy = E/(1+nu) e_xy;
 * uniaxial compression along y expands x by nu (1+nu) S/E (the Poisson effect DDEM brings). */
START_TEST(analytic_plane_strain)
{
    const double E = 2e10, nus[3] = {-0.3, 0.0, 0.35};
    for (int k = 0; k < 3; k++) {
        double nu = nus[k], sig[3] = {-3e6, 1.2e6, 0.7e6}, eps[3];
        dem_deform_strain(E, nu, sig, eps);
        double c = E / ((1.0 + nu) * (1.0 - 2.0 * nu));
        ck_assert_double_eq_tol(c * ((1 - nu) * eps[0] + nu * eps[1]), sig[0], 1e-14 * 3e6);
        ck_assert_double_eq_tol(c * ((1 - nu) * eps[1] + nu * eps[0]), sig[1], 1e-14 * 3e6);
        ck_assert_double_eq_tol(E / (1.0 + nu) * eps[2], sig[2], 1e-14 * 3e6);
        double uni[3] = {0.0, -1e6, 0.0}, e2[3];
        dem_deform_strain(E, nu, uni, e2);
        ck_assert_double_eq_tol(e2[0], nu * (1.0 + nu) * 1e6 / E, 1e-14 * 1e6 / E);
        ck_assert_double_eq_tol(e2[1], -(1.0 - nu * nu) * 1e6 / E, 1e-14 * 1e6 / E);
    }
}
END_TEST

/* The principal strains (0.01, -0.02) rotated by phi: axes r (1.01), r (0.98), e1 at phi
 * (up to its sign). Rounding: 1e-14. */
START_TEST(analytic_ellipse_axes)
{
    double r = 0.7;
    for (int k = 0; k < 5; k++) {
        double phi = -1.2 + 0.6 * k, c = cos(phi), s = sin(phi), e1 = 0.01, e2 = -0.02;
        double eps[3] = {e1 * c * c + e2 * s * s, e1 * s * s + e2 * c * c, (e1 - e2) * c * s};
        dem_ellipse el = dem_deform_ellipse(r, eps);
        ck_assert_double_eq_tol(el.a, r * 1.01, 1e-14);
        ck_assert_double_eq_tol(el.b, r * 0.98, 1e-14);
        ck_assert_double_eq_tol(fabs(el.e1.x * c + el.e1.y * s), 1.0, 1e-14);
    }
    double zero[3] = {0, 0, 0};
    dem_ellipse circle = dem_deform_ellipse(r, zero);
    ck_assert(circle.a == r && circle.b == r);
}
END_TEST

/* The reach along u against a brute-force search: 200,000 points on the boundary
 * p(t) = a cos t e1 + b sin t e2, the two whose directions bracket u, the ray cut with their
 * chord (chord error ~ (2 pi / 2e5)^2 / 8 ~ 1e-10 of the size: tolerance 1e-8). Then the
 * small-strain limit: |rho - r (1 + u.eps.u)| <= 2 r eps_max^2 (the next term is
 * 3/2 r (q^2 - sum c_i^2 eps_i^2), bounded by 3/2 r eps_max^2). */
START_TEST(unit_reach_brute_force)
{
    const int N = 200000;
    double shapes[3][3] = {{1.0, 0.6, 0.4}, {0.8, 0.79, -1.0}, {2.0, 1.0, 2.5}};
    for (int k = 0; k < 3; k++) {
        dem_ellipse el = {shapes[k][0], shapes[k][1], v3(cos(shapes[k][2]), sin(shapes[k][2]), 0)};
        vec3 e2 = v3(-el.e1.y, el.e1.x, 0);
        for (int m = 0; m < 7; m++) {
            double ang = -3.0 + 0.9 * m;
            vec3 u = v3(cos(ang), sin(ang), 0);
            double best = INFINITY;
            vec3 prev = v3_add(v3_scale(el.e1, el.a), v3_scale(e2, 0.0));
            for (int q = 1; q <= N && !isfinite(best); q++) {
                double t = 2.0 * CDLAB_PI * q / N;
                vec3 p = v3_add(v3_scale(el.e1, el.a * cos(t)), v3_scale(e2, el.b * sin(t)));
                /* u between prev and p (both on its side): the ray meets the chord */
                double cp = prev.x * u.y - prev.y * u.x, cq = p.x * u.y - p.y * u.x;
                if (cp >= 0.0 && cq <= 0.0 && v3_dot(prev, u) > 0.0) {
                    vec3 d = v3_sub(p, prev);
                    double den = u.x * d.y - u.y * d.x;
                    best = (prev.x * d.y - prev.y * d.x) / den;
                }
                prev = p;
            }
            ck_assert_msg(isfinite(best), "no boundary point found along %g", ang);
            ck_assert_double_eq_tol(dem_deform_reach(&el, u), best, 1e-8 * el.a);
        }
    }
    double r = 0.5, eps[3] = {4e-4, -1e-3, 6e-4}, emax = 1.3e-3; /* |principal| < 1.3e-3 */
    dem_ellipse el = dem_deform_ellipse(r, eps);
    for (int m = 0; m < 8; m++) {
        vec3 u = v3(cos(0.8 * m), sin(0.8 * m), 0);
        double uepsu = eps[0] * u.x * u.x + eps[1] * u.y * u.y + 2.0 * eps[2] * u.x * u.y;
        ck_assert_double_le(fabs(dem_deform_reach(&el, u) - r * (1.0 + uepsu)),
                            2.0 * r * emax * emax);
    }
}
END_TEST

Suite *dem_deform_suite(void)
{
    Suite *s = suite_create("dem_deform");
    TCase *tc = tcase_create("dem_deform");
    tcase_add_test(tc, analytic_stress_opposed_forces);
    tcase_add_test(tc, analytic_plane_strain);
    tcase_add_test(tc, analytic_ellipse_axes);
    tcase_add_test(tc, unit_reach_brute_force);
    suite_add_tcase(s, tc);
    return s;
}

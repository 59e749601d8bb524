#include "suites.h"

#include "contacts.h"
#include "nscd/cd_shock_law.h"

#include <string.h>

/* Hand-computed values are exact in binary floating point or checked to 1e-14 relative. */
#define TOL 1e-14

START_TEST(unit_branch_open)
{
    /* approaching at U_n = -0.1 with gap 0.2 and dt = 1: U_n dt + g = 0.1 > 0 -> no force */
    shock_branch b;
    vec3 R = shock_law(v3(0.3, 0, -0.1), v3(0, 0, 1), 0.2, 1.0, 0.5, 0.4, 1.0, &b);
    ck_assert_int_eq(b, SHOCK_OPEN);
    ck_assert(R.x == 0.0 && R.y == 0.0 && R.z == 0.0);
}
END_TEST

START_TEST(unit_branch_stick)
{
    /* n = z, U = (0.1, -0.2, -0.5), gap 0.02, dt 0.1, m_n = 2, m_t = 0.8, mu = 10:
     * U_n dt + g = -0.03 <= 0 -> contact; R_n = -(m_n/dt)(g/dt + U_n) = -20 (0.2 - 0.5) = 6;
     * R_t = -(m_t/dt) U_t = -8 (0.1, -0.2) = (-0.8, 1.6); |R_t| = 1.789 < 60 -> stick */
    shock_branch b;
    vec3 R = shock_law(v3(0.1, -0.2, -0.5), v3(0, 0, 1), 0.02, 2.0, 0.8, 10.0, 0.1, &b);
    ck_assert_int_eq(b, SHOCK_STICK);
    ck_assert_double_eq_tol(R.z, 6.0, TOL * 6);
    ck_assert_double_eq_tol(R.x, -0.8, TOL);
    ck_assert_double_eq_tol(R.y, 1.6, TOL);
}
END_TEST

START_TEST(unit_branch_slide)
{
    /* same as stick with mu = 0.1: limit mu R_n = 0.6 < |R_t| = sqrt(3.2) -> R_t scaled to 0.6 */
    shock_branch b;
    vec3 R = shock_law(v3(0.1, -0.2, -0.5), v3(0, 0, 1), 0.02, 2.0, 0.8, 0.1, 0.1, &b);
    ck_assert_int_eq(b, SHOCK_SLIDE);
    ck_assert_double_eq_tol(R.z, 6.0, TOL * 6);
    double s = 0.6 / sqrt(3.2);
    ck_assert_double_eq_tol(R.x, -0.8 * s, TOL);
    ck_assert_double_eq_tol(R.y, 1.6 * s, TOL);
    ck_assert_double_eq_tol(sqrt(R.x * R.x + R.y * R.y), 0.6, TOL);
}
END_TEST

START_TEST(unit_g_pos_overlap_not_corrected)
{
    /* An existing overlap (gap < 0) is not pushed apart: with U_n = 0, g_pos = 0 gives
     * R_n = -(m_n/dt)(0 + 0) = 0 (eq. 33); only a further approach is stopped. */
    shock_branch b;
    vec3 R = shock_law(v3(0, 0, 0), v3(1, 0, 0), -0.01, 1.0, 1.0, 0.0, 1.0, &b);
    ck_assert_int_eq(b, SHOCK_STICK);
    ck_assert_double_eq_tol(R.x, 0.0, TOL);
    R = shock_law(v3(-0.2, 0, 0), v3(1, 0, 0), -0.01, 1.0, 1.0, 0.0, 0.5, &b);
    ck_assert_double_eq_tol(R.x, 0.4, TOL); /* -(1/0.5)(0 - 0.2) */
}
END_TEST

/* Effective masses, eqs. (17)-(18), for each contact kind. */
START_TEST(unit_effective_masses)
{
    particles P;
    diag err;
    ck_assert_int_eq(particles_init(&P, 2, 3, &err), CDLAB_OK);
    particles_set_body(&P, 0, 0.5, 2.0);  /* sphere: I = 2/5 m r^2 = 0.2 */
    particles_set_body(&P, 1, 0.25, 1.0); /* I = 0.025 */
    P.x[0] = v3(0, 0, 0);
    P.x[1] = v3(0.7, 0, 0);
    wall walls[2];
    memset(walls, 0, sizeof walls);
    walls[0].kind = WALL_PLANE;
    walls[0].n = v3(1, 0, 0);
    walls[1].kind = WALL_PISTON;
    walls[1].n = v3(1, 0, 0);
    walls[1].mass = 4.0;
    walls[1].inv_mass = 0.25;
    contact c = {.i = 0, .j = 1};
    contact_geometry(&c, &P, walls);
    /* overlap 0.05: the contact point is mid-overlap, lever arms 0.475 and 0.225;
     * m_n = (1/2 + 1)^-1 = 2/3; m_t = (3/2 + 0.475^2/0.2 + 0.225^2/0.025)^-1 */
    ck_assert_double_eq_tol(c.m_n, 2.0 / 3.0, TOL);
    ck_assert_double_eq_tol(c.m_t, 1.0 / (1.5 + 0.475 * 0.475 / 0.2 + 0.225 * 0.225 / 0.025), TOL);
    ck_assert_double_eq_tol(c.gap, -0.05, TOL);
    ck_assert_double_eq_tol(contact_l0(&c).x - contact_l1(&c).x, 0.7, TOL); /* l0 - l1 = x1 - x0 */
    /* plane: m_n = m = 1, m_t = (1 + 2.5)^-1 */
    contact w = {.i = -1, .j = 1};
    contact_geometry(&w, &P, walls);
    ck_assert_double_eq_tol(w.m_n, 1.0, TOL);
    ck_assert_double_eq_tol(w.m_t, 1.0 / 3.5, TOL);
    ck_assert_double_eq_tol(w.gap, 0.45, TOL);
    /* piston of mass 4 along its normal: m_n = (1 + 1/4)^-1 = 0.8; m_t as for a wall */
    contact p = {.i = -2, .j = 1};
    contact_geometry(&p, &P, walls);
    ck_assert_double_eq_tol(p.m_n, 0.8, TOL);
    ck_assert_double_eq_tol(p.m_t, 1.0 / 3.5, TOL);
    particles_free(&P);
    /* disks (dimension 2): I = 1/2 m r^2 -> r^2/I = 2/m; equal disks m = 1: m_t = (2 + 2 + 2)^-1 */
    ck_assert_int_eq(particles_init(&P, 2, 2, &err), CDLAB_OK);
    particles_set_body(&P, 0, 0.5, 1.0);
    particles_set_body(&P, 1, 0.5, 1.0);
    P.x[1] = v3(0, 1, 0);
    contact d = {.i = 0, .j = 1};
    contact_geometry(&d, &P, walls);
    ck_assert_double_eq_tol(d.m_n, 0.5, TOL);
    ck_assert_double_eq_tol(d.m_t, 1.0 / 6.0, TOL);
    particles_free(&P);
}
END_TEST

/* Cylinder contacts: inside surface, outside surface. */
START_TEST(unit_cylinder_geometry)
{
    particles P;
    diag err;
    ck_assert_int_eq(particles_init(&P, 1, 3, &err), CDLAB_OK);
    particles_set_body(&P, 0, 0.5, 1.0);
    P.x[0] = v3(3.0, 4.0, 7.0); /* distance 5 from the z axis */
    wall cyl;
    memset(&cyl, 0, sizeof cyl);
    cyl.kind = WALL_CYLINDER;
    cyl.n = v3(0, 0, 1);
    cyl.radius = 6.0;
    cyl.inside = 1;
    contact c = {.i = -1, .j = 0};
    contact_geometry(&c, &P, &cyl);
    ck_assert_double_eq_tol(c.gap, 0.5, TOL);  /* 6 - 5 - 0.5 */
    ck_assert_double_eq_tol(c.n.x, -0.6, TOL); /* inward normal */
    ck_assert_double_eq_tol(c.n.y, -0.8, TOL);
    cyl.inside = 0;
    cyl.radius = 4.0;
    contact_geometry(&c, &P, &cyl);
    ck_assert_double_eq_tol(c.gap, 0.5, TOL); /* 5 - 4 - 0.5 */
    ck_assert_double_eq_tol(c.n.x, 0.6, TOL);
    particles_free(&P);
}
END_TEST

Suite *shock_law_suite(void)
{
    Suite *s = suite_create("shock_law");
    TCase *tc = tcase_create("unit");
    tcase_add_test(tc, unit_branch_open);
    tcase_add_test(tc, unit_branch_stick);
    tcase_add_test(tc, unit_branch_slide);
    tcase_add_test(tc, unit_g_pos_overlap_not_corrected);
    tcase_add_test(tc, unit_effective_masses);
    tcase_add_test(tc, unit_cylinder_geometry);
    suite_add_tcase(s, tc);
    return s;
}

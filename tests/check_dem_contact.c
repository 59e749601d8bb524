/* The contact law of Kuhn, Suzuki & Daouadji (Fig. 1) against sub-stepped references. */
#include "suites.h"

#include "dem/dem_contact.h"
#include "dem/dem_lab.h"

#include <math.h>
#include <string.h>

static double angle_deg(vec3 f, vec3 m_dxi, vec3 m_perp)
{
    return atan2(v3_dot(f, m_perp), v3_dot(f, m_dxi)) * 180.0 / CDLAB_PI;
}

/* Kuhn Fig. 4: movement orthogonal to the initial tangential force at the friction limit, with
 * constant normal force (theta^t = -90 deg). The refined law's final angle matches 1e5 sub-steps
 * within 0.05 deg for |dxi| k_t/(mu f_n) from 0.01 to 10; the conventional law errs by more than
 * 5 deg somewhere in that range. */
START_TEST(unit_kuhn_fig4_final_angle)
{
    double worst_conv = 0.0;
    for (int k = 0; k <= 30; k++) {
        double ratio = pow(10.0, -2.0 + 3.0 * k / 30.0); /* 0.01 .. 10 */
        lab_fig4 f = lab_kuhn_fig4(ratio, 1e-3, 1e-3, 100000);
        if (k == 0) /* a small movement turns the force by ratio radians: -90 + 0.573 deg */
            ck_assert_double_eq_tol(f.angle_ref, -90.0 + ratio * 180.0 / CDLAB_PI, 0.01);
        worst_conv = fmax(worst_conv, fabs(f.angle_conv - f.angle_ref));
        ck_assert_msg(fabs(f.angle_kuhn - f.angle_ref) < 0.05,
                      "ratio %g: refined %.4f deg, reference %.4f deg", ratio, f.angle_kuhn,
                      f.angle_ref);
    }
    ck_assert_msg(worst_conv > 5.0, "conventional law's worst error only %.3f deg", worst_conv);
}
END_TEST

/* The same with the normal force changing in the step by +50% (the contact first leaves the
 * friction limit) and by -30% (it slides throughout): the c_2 != 0 branch of eq. (18). */
START_TEST(unit_kuhn_rotation_with_normal_change)
{
    dem_law kuhn = lab_fig4_law(DEM_KUHN);
    const double z0 = 1e-3, fn = kuhn.k_n * z0, mu = kuhn.mu;
    const double z1s[2] = {1.5e-3, 0.7e-3};
    vec3 ft0 = v3(mu * fn, 0, 0), m_dxi = v3(0, 1, 0), m_perp = v3(-1, 0, 0);
    for (int z = 0; z < 2; z++)
        for (int k = 0; k <= 12; k++) {
            double ratio = pow(10.0, -1.0 + 2.0 * k / 12.0);
            vec3 dxi = v3_scale(m_dxi, ratio * mu * fn / kuhn.k_t);
            double diss;
            vec3 ref = lab_substepped(kuhn.k_n, kuhn.k_t, mu, z0, z1s[z], ft0, dxi, 100000, &diss);
            dem_contact_out o = lab_law_step(&kuhn, z0, z1s[z], ft0, dxi);
            double a = angle_deg(o.ft, m_dxi, m_perp), a_ref = angle_deg(ref, m_dxi, m_perp);
            /* 0.05 deg as in Fig. 4; magnitude to 1e-4 (the reference's sub-step error) */
            ck_assert_msg(fabs(a - a_ref) < 0.05, "z1 %g ratio %g: %.4f vs %.4f deg", z1s[z], ratio,
                          a, a_ref);
            ck_assert_msg(fabs(v3_norm(o.ft) / v3_norm(ref) - 1) < 1e-4,
                          "z1 %g ratio %g: |f| %g vs %g", z1s[z], ratio, v3_norm(o.ft),
                          v3_norm(ref));
        }
}
END_TEST

/* Onset of slip within a step: 50% mobilised, driven past the limit in one step (along the
 * force, with the normal force growing), has the final force and dissipated work of 1000 small
 * steps of the same law within 1e-6 relative. */
START_TEST(unit_onset_of_slip_within_step)
{
    dem_law kuhn = lab_fig4_law(DEM_KUHN);
    const double z0 = 1e-3, z1 = 1.2e-3, mu = kuhn.mu, fn0 = kuhn.k_n * z0;
    vec3 ft0 = v3(0.5 * mu * fn0, 0, 0);
    vec3 dxi = v3(2.0 * mu * fn0 / kuhn.k_t, 0, 0); /* trial force far past the limit */
    dem_contact_out big = lab_law_step(&kuhn, z0, z1, ft0, dxi);
    ck_assert_int_eq(big.sliding, 1);
    const int N = 1000;
    vec3 ft = ft0;
    double diss = 0.0, work = 0.0;
    for (int k = 0; k < N; k++) {
        double za = z0 + (z1 - z0) * k / N, zb = z0 + (z1 - z0) * (k + 1) / N;
        dem_contact_out o = lab_law_step(&kuhn, za, zb, ft, v3_scale(dxi, 1.0 / N));
        diss += o.dW_t_irrev;
        work += o.dW_t;
        ft = o.ft;
    }
    ck_assert_msg(fabs(big.ft.x / ft.x - 1) < 1e-6, "force %.12g vs %.12g", big.ft.x, ft.x);
    ck_assert_msg(fabs(big.dW_t_irrev / diss - 1) < 1e-6, "dissipated %.12g vs %.12g",
                  big.dW_t_irrev, diss);
    ck_assert_msg(fabs(big.dW_t / work - 1) < 1e-6, "work %.12g vs %.12g", big.dW_t, work);
    /* and the analytic values: the limit mu k_n z1 at the end; the slip starts when
     * f_t0 + a k_t dxi = mu k_n (z0 + a (z1 - z0)) */
    ck_assert_double_eq_tol(big.ft.x, mu * kuhn.k_n * z1, 1e-9 * mu * kuhn.k_n * z1);
    double a_s = (mu * fn0 - ft0.x) / (kuhn.k_t * dxi.x - mu * kuhn.k_n * (z1 - z0));
    double f_s = ft0.x + a_s * kuhn.k_t * dxi.x;
    double W = a_s * dxi.x * (ft0.x + f_s) / 2 + (1 - a_s) * dxi.x * (f_s + big.ft.x) / 2;
    ck_assert_double_eq_tol(big.dW_t, W, 1e-9 * W);
    /* the conventional law overestimates the elastic part: its dissipation differs */
    dem_law conv = lab_fig4_law(DEM_CONVENTIONAL);
    dem_contact_out c = lab_law_step(&conv, z0, z1, ft0, dxi);
    ck_assert_msg(fabs(c.dW_t_irrev / diss - 1) > 1e-3, "conventional agrees too well");
}
END_TEST

/* Fresh contact within a step: only the movement after touching counts (alpha_0, eqs. 7-8). */
START_TEST(unit_fresh_contact_alpha0)
{
    dem_law kuhn = lab_fig4_law(DEM_KUHN), conv = lab_fig4_law(DEM_CONVENTIONAL);
    dem_contact_in in;
    memset(&in, 0, sizeof in);
    in.zeta_old = -2e-4; /* gap 2e-4 at t */
    in.zeta_new = 2e-4;  /* approach 4e-4: touching after half the step, alpha_0 = 0.5 */
    in.n = v3(0, 0, 1);
    in.du_q = v3(1e-5, 0, -4e-4);
    dem_contact_out o;
    dem_contact_force(&kuhn, &in, &o);
    ck_assert_double_eq_tol(o.fn, kuhn.k_n * 2e-4, 1e-9);
    ck_assert_double_eq_tol(o.ft.x, kuhn.k_t * 0.5e-5, 1e-9); /* half the tangential movement */
    ck_assert_double_eq_tol(o.dW_t_irrev, 0.0, 1e-15);        /* elastic: nothing dissipated */
    dem_contact_force(&conv, &in, &o);
    ck_assert_double_eq_tol(o.ft.x, kuhn.k_t * 1e-5, 1e-9); /* the shortcut counts it all */
    /* a contact that opens: zero force, stored tangential energy released */
    in.zeta_old = 1e-4;
    in.zeta_new = -1e-5;
    in.ft_old = v3(3.0, 0, 0);
    dem_contact_force(&kuhn, &in, &o);
    ck_assert(o.fn == 0.0 && v3_norm(o.ft) == 0.0);
    ck_assert_double_eq_tol(o.dW_t_rev, -9.0 / (2 * kuhn.k_t), 1e-15);
}
END_TEST

/* Elastic loading and unloading back to the start dissipates nothing (to round-off) and the
 * work equals the stored energy change. */
START_TEST(unit_elastic_cycle_reversible)
{
    dem_law kuhn = lab_fig4_law(DEM_KUHN);
    const double z = 1e-3;
    vec3 ft = v3(10, -20, 0), d = v3(3e-6, 1e-6, 0);
    double diss = 0.0;
    for (int k = 0; k < 10; k++) {
        dem_contact_out o = lab_law_step(&kuhn, z, z, ft, k < 5 ? d : v3_scale(d, -1));
        diss += o.dW_t_irrev;
        ft = o.ft;
    }
    ck_assert_double_eq_tol(ft.x, 10.0, 1e-9);
    ck_assert_double_eq_tol(ft.y, -20.0, 1e-9);
    ck_assert_double_eq_tol(diss, 0.0, 1e-12);
}
END_TEST

/* Projection and twirl: a rigid spin about the normal turns the tangential force with it. */
START_TEST(unit_twirl_rotates_force)
{
    dem_law kuhn = lab_fig4_law(DEM_KUHN);
    dem_contact_in in;
    memset(&in, 0, sizeof in);
    in.zeta_old = in.zeta_new = 1e-3;
    in.n = v3(0, 0, 1);
    in.ft_old = v3(100, 0, 0);
    in.dth_p = in.dth_q = v3(0, 0, 1e-3); /* both spin about the normal: no relative movement */
    in.r_p = v3(0, 0, 0.5);
    in.r_q = v3(0, 0, -0.5);
    dem_contact_out o;
    dem_contact_force(&kuhn, &in, &o);
    /* eq. (23) to first order, f - phi (f x n) = (100, 0.1, 0); exactly a rotation by 1e-3 */
    ck_assert_double_eq_tol(o.ft.x, 100.0 * cos(1e-3), 1e-12);
    ck_assert_double_eq_tol(o.ft.y, 100.0 * sin(1e-3), 1e-12);
    ck_assert_double_eq_tol(v3_norm(o.ft), 100.0, 1e-12);
    kuhn.twirl = 0;
    dem_contact_force(&kuhn, &in, &o);
    ck_assert_double_eq_tol(o.ft.y, 0.0, 1e-12);
}
END_TEST

/* The closed-form rotation without trigonometry (dem_sliding_angle_end) against the angles
 * themselves, theta' = 2 atan(tan(theta/2) exp(-E)), over theta in (-pi, pi] (both signs of
 * zero) and E in [0, 60] and infinity: the cosine and sine agree within 1e-15, a few ulps of 1
 * (measured 4.4e-16, two ulps; the reference's own libm calls round too): the law's results
 * move in the last bits only. */
START_TEST(unit_sliding_rotation_without_trigonometry)
{
    double worst = 0.0;
    for (int a = -2000; a <= 2000; a++) {
        double theta = a == 2000 ? CDLAB_PI : CDLAB_PI * a / 2000.0;
        if (a == 0)
            theta = -0.0;
        for (int e = 0; e <= 61; e++) {
            double E = e == 61 ? INFINITY : 60.0 * (e / 60.0) * (e / 60.0) * (e / 60.0);
            double th_end = E == INFINITY ? 0.0 : 2.0 * atan(tan(0.5 * theta) * exp(-E));
            double c, sn;
            dem_sliding_angle_end(cos(theta), sin(theta), E, &c, &sn);
            worst = fmax(worst, fmax(fabs(c - cos(th_end)), fabs(sn - sin(th_end))));
        }
    }
    ck_assert_msg(worst < 1e-15, "largest difference %g", worst);
    /* theta = pi exactly (sine +0, cosine -1): unstable equilibrium of eq. (18), it stays; and
     * E = infinity aligns it */
    double c, sn;
    dem_sliding_angle_end(-1.0, 0.0, 3.0, &c, &sn);
    ck_assert(c == -1.0 && sn == 0.0);
    dem_sliding_angle_end(-1.0, 0.0, INFINITY, &c, &sn);
    ck_assert(c == 1.0 && sn == 0.0);
}
END_TEST

Suite *dem_contact_suite(void)
{
    Suite *s = suite_create("dem_contact");
    TCase *tc = tcase_create("unit");
    tcase_set_timeout(tc, TEST_TIMEOUT_SECONDS);
    tcase_add_test(tc, unit_kuhn_fig4_final_angle);
    tcase_add_test(tc, unit_kuhn_rotation_with_normal_change);
    tcase_add_test(tc, unit_onset_of_slip_within_step);
    tcase_add_test(tc, unit_fresh_contact_alpha0);
    tcase_add_test(tc, unit_elastic_cycle_reversible);
    tcase_add_test(tc, unit_twirl_rotates_force);
    tcase_add_test(tc, unit_sliding_rotation_without_trigonometry);
    suite_add_tcase(s, tc);
    return s;
}

/* Contact dynamics engine: analytic cases and the 1D wave test. */
#include "suites.h"

#include "nscd/cd_config.h"
#include "nscd/cd_method.h"
#include "fit.h"
#include "h5io.h"
#include "parallel.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A sphere dropped on a plane: after impact the normal velocity is zero within two steps, it
 * never bounces, and with the local criterion at eps = 1e-8 the overlap stays below 1e-10 d. */
START_TEST(analytic_drop_on_plane)
{
    const char *ini =
        "[system]\ndimension = 3\ndt = 1e-3\nsteps = 1\n"
        "gravity = 0 0 -9.81\n"
        "[solver]\ncriterion = local\nepsilon = 1e-8\ndelta = 1e-14\niterations = 1000\n"
        "[particles]\ncount = 1\nradius = 0.5\nmass = 1\norigin = 0 0 0.8123\n"
        "[plane.floor]\npoint = 0 0 0\nnormal = 0 0 1\n";
    sim sm;
    sim_open(&sm, ini, 1);
    const double d = 1.0;
    long impact = -1;
    double v_impact = 0.0, max_overlap = 0.0;
    for (long k = 0; k < 2000; k++) {
        double vz_before = sm.W.P.v[0].z;
        sim_steps(&sm, 1);
        double gap = sm.W.P.x[0].z - 0.5;
        max_overlap = fmax(max_overlap, -gap);
        if (impact < 0 && sm.S.C.n > 0 && v3_norm(sm.S.C.c[0].R) > 0.0) {
            impact = sm.W.step;
            v_impact = fabs(vz_before);
        }
        if (impact >= 0 && sm.W.step >= impact + 2) {
            /* at rest on the plane to round-off: |v_z| below 1e-9 of the impact speed, and
             * never moving up (no bounce) */
            ck_assert_msg(fabs(sm.W.P.v[0].z) <= 1e-9 * v_impact,
                          "step %ld: v_z = %g after impact at step %ld", sm.W.step, sm.W.P.v[0].z,
                          impact);
        }
        if (impact >= 0)
            ck_assert_msg(sm.W.P.v[0].z <= 1e-9 * v_impact, "bounce at step %ld", sm.W.step);
    }
    ck_assert_msg(impact > 0, "the sphere never reached the plane");
    ck_assert_double_gt(v_impact, 1.0); /* it fell ~0.31 under g: ~2.5 m/s */
    ck_assert_msg(max_overlap < 1e-10 * d, "max overlap %g", max_overlap);
    sim_close(&sm);
}
END_TEST

/* A particle resting on a plane, gravity tilted by theta: rolls without slip at
 * a = g sin(theta) / (1 + I/(m r^2)) when mu exceeds the critical value, slides at
 * a = g (sin - mu cos) below it. Implicit Euler with the exact one-contact solution gives
 * v_n = a n dt, so the check is to round-off (1e-9 relative). */
static void incline_case(int dim, double mu, double expect_a, int expect_roll)
{
    const double theta = 30.0 * CDLAB_PI / 180.0, g = 9.81, dt = 1e-3;
    char ini[1024];
    if (dim == 3)
        snprintf(ini, sizeof ini,
                 "[system]\ndimension = 3\ndt = %g\nsteps = 1\ngravity = %.17g 0 %.17g\n"
                 "[solver]\ncriterion = local\nepsilon = 1e-12\niterations = 100\n"
                 "[particles]\ncount = 1\nradius = 0.5\nmass = 2\norigin = 0 0 0.5\n"
                 "[contact]\nfriction = %g\n"
                 "[plane.slope]\npoint = 0 0 0\nnormal = 0 0 1\n",
                 dt, g * sin(theta), -g * cos(theta), mu);
    else
        snprintf(ini, sizeof ini,
                 "[system]\ndimension = 2\ndt = %g\nsteps = 1\ngravity = %.17g %.17g 0\n"
                 "[solver]\ncriterion = local\nepsilon = 1e-12\niterations = 100\n"
                 "[particles]\ncount = 1\nradius = 0.5\nmass = 2\norigin = 0 0.5 0\n"
                 "[contact]\nfriction = %g\n"
                 "[plane.slope]\npoint = 0 0 0\nnormal = 0 1 0\n",
                 dt, g * sin(theta), -g * cos(theta), mu);
    sim sm;
    sim_open(&sm, ini, 1);
    const long n = 1000;
    sim_steps(&sm, n);
    double v = sm.W.P.v[0].x, a = v / (n * dt);
    ck_assert_msg(fabs(a / expect_a - 1.0) < 1e-9, "dim %d mu %g: a = %.15g, expected %.15g", dim,
                  mu, a, expect_a);
    /* contact point velocity: v - w x r n; rolling means it is zero */
    double r = 0.5, w = dim == 3 ? sm.W.P.w[0].y : -sm.W.P.w[0].z;
    double slip = v - w * r;
    if (expect_roll)
        ck_assert_msg(fabs(slip) < 1e-9 * v, "dim %d: slip velocity %g while rolling", dim, slip);
    else
        ck_assert_msg(slip > 0.01 * v, "dim %d: no slip (%g) below the critical friction", dim,
                      slip);
    /* the series' sliding count: the one contact at the Coulomb limit exactly when sliding */
    ck_assert_int_eq(sm.st.n_active, 1);
    ck_assert_int_eq(sm.st.n_sliding, expect_roll ? 0 : 1);
    /* the particle stays on the plane (normal velocity zero to round-off) */
    double vn = dim == 3 ? sm.W.P.v[0].z : sm.W.P.v[0].y;
    ck_assert_msg(fabs(vn) < 1e-9 * v, "normal velocity %g", vn);
    sim_close(&sm);
}

START_TEST(analytic_incline_roll_and_slide)
{
    const double theta = 30.0 * CDLAB_PI / 180.0, g = 9.81, s = sin(theta), c = cos(theta);
    /* sphere: critical mu = (2/7) tan(theta) = 0.165; disk: (1/3) tan(theta) = 0.192 */
    incline_case(3, 0.3, 5.0 / 7.0 * g * s, 1);
    incline_case(2, 0.3, 2.0 / 3.0 * g * s, 1);
    incline_case(3, 0.1, g * (s - 0.1 * c), 0);
    incline_case(2, 0.1, g * (s - 0.1 * c), 0);
}
END_TEST

/* Frictionless head-on collision of two equal spheres: momentum conserved to round-off, the
 * relative normal velocity zero after the collision (perfectly inelastic shock). */
START_TEST(analytic_head_on_collision)
{
    const char *ini = "[system]\ndimension = 3\ndt = 0.01\nsteps = 1\n"
                      "[solver]\ncriterion = local\nepsilon = 1e-12\niterations = 100\n"
                      "[particles]\ncount = 2\nradius = 0.5\nmass = 1.5\nspacing = 0.1\n"
                      "origin = 0 0 0\ndirection = 1 0 0\n";
    sim sm;
    sim_open(&sm, ini, 1);
    world *W = &sm.W;
    W->P.v[0] = v3(1.0, 0, 0);
    W->P.v[1] = v3(-0.5, 0, 0);
    double p0 = W->P.m[0] * W->P.v[0].x + W->P.m[1] * W->P.v[1].x;
    sim_steps(&sm, 20); /* they meet after 0.1/1.5 = 0.067 s = 7 steps */
    double p1 = W->P.m[0] * W->P.v[0].x + W->P.m[1] * W->P.v[1].x;
    ck_assert_double_eq_tol(p1, p0, 1e-14 * fabs(p0) + 1e-15);
    ck_assert_double_eq_tol(W->P.v[1].x - W->P.v[0].x, 0.0, 1e-14);
    ck_assert_double_eq_tol(W->P.v[0].x, 0.25, 1e-14);
    ck_assert(W->P.v[0].y == 0.0 && W->P.v[0].z == 0.0);
    /* no overlap: they touch exactly (within round-off of the positions) */
    double gap = W->P.x[1].x - W->P.x[0].x - 1.0;
    ck_assert_double_eq_tol(gap, 0.0, 1e-12);
    sim_close(&sm);
}
END_TEST

/* Total angular momentum about the origin: orbital m x x v plus spin I w (I = 1/inv_I). */
static vec3 angular_momentum(const particles *P)
{
    vec3 L = v3_zero();
    for (int i = 0; i < P->n; i++) {
        L = v3_add(L, v3_scale(v3_cross(P->x[i], P->v[i]), P->m[i]));
        if (P->inv_I[i] > 0.0)
            L = v3_add(L, v3_scale(P->w[i], 1.0 / P->inv_I[i]));
    }
    return L;
}

/* A frictional glancing collision of two free spheres, no walls, no gravity: the contact acts
 * while its gap is still open (g_pos > 0 lets the shock law act a step early), so the lever
 * arms of an open contact decide whether the tangential impulse conserves angular momentum.
 * Implicit Euler conserves it exactly when l0 - l1 = x_j - x_i (contacts.h): the impulse
 * changes sum m x v + I w by (x_j - x_i) x dP + (l1 - l0) x dP = 0, and x + v dt keeps x x v.
 * Tolerance 1e-12 relative: round-off of ~100 impulse updates and 100 steps on |L| ~ 0.7. With
 * the lever arms at the surfaces it lost 0.59% at dt = 0.05 and 0.12% at dt = 0.01. */
START_TEST(invariant_angular_momentum_glancing_collision)
{
    const double dts[] = {0.05, 0.02, 0.01, 0.002};
    for (int k = 0; k < 4; k++) {
        char ini[1024];
        snprintf(ini, sizeof ini,
                 "[system]\ndimension = 3\ndt = %g\nsteps = 1\n"
                 "[solver]\ncriterion = local\nepsilon = 1e-12\ndelta = 1e-14\niterations = 1000\n"
                 "[particles]\ncount = 2\nradius = 0.5\ndensity = 1\nspacing = 3\n"
                 "origin = -2 0 0\ndirection = 1 0 0\n"
                 "[contact]\nfriction = 0.5\n",
                 dts[k]);
        sim sm;
        sim_open(&sm, ini, 1);
        particles *P = &sm.W.P;
        P->x[0] = v3(-2.0, 0.35, 0.0);
        P->x[1] = v3(2.0, -0.35, 0.0);
        P->v[0] = v3(1.0, 0.0, 0.0);
        P->v[1] = v3(-1.0, 0.0, 0.0);
        vec3 L0 = angular_momentum(P);
        long steps = (long)(4.0 / dts[k]); /* they meet at t ~ 1.5; then apart */
        double tangential = 0.0;
        for (long s = 0; s < steps; s++) {
            sim_steps(&sm, 1);
            for (int c = 0; c < sm.S.C.n; c++) {
                const contact *ct = &sm.S.C.c[c];
                tangential = fmax(tangential, v3_norm(v3_reject(ct->R, ct->n)));
            }
        }
        vec3 L1 = angular_momentum(P);
        double err = v3_norm(v3_sub(L1, L0)) / v3_norm(L0);
        ck_assert_msg(tangential > 0.0, "dt %g: no tangential force (the test needs friction)",
                      dts[k]);
        ck_assert_msg(v3_norm2(P->w[0]) > 0.0, "dt %g: the collision made no spin", dts[k]);
        ck_assert_msg(err < 1e-12, "dt %g: angular momentum changed by %.3e relative", dts[k], err);
        sim_close(&sm);
    }
}
END_TEST

/* A frictional 3D pile without walls or gravity: 40 spheres pushed towards their centre
 * collide, many contacts open and close with tangential impulses; the total angular momentum
 * about the origin is conserved to 1e-12 relative (round-off of a few thousand updates; the
 * initial spin-free velocity field is given an orbital part so that |L| is not small), at
 * three dt, for the random and the colored sweep. */
START_TEST(invariant_angular_momentum_pile)
{
    const double dts[] = {0.05, 0.02, 0.01};
    const char *sweeps[] = {"random", "colored"};
    for (int k = 0; k < 6; k++) {
        char ini[1024];
        snprintf(ini, sizeof ini,
                 "[system]\ndimension = 3\ndt = %g\nsteps = 1\nseed = 9\n"
                 "[solver]\nsweep = %s\ncriterion = local\nepsilon = 1e-12\ndelta = 1e-14\n"
                 "iterations = 5000\n"
                 "[particles]\nsource = random\ncount = 40\nradius_min = 0.5\nradius_max = 1.0\n"
                 "box_min = -6 -6 -6\nbox_max = 6 6 6\n"
                 "[contact]\nfriction = 0.4\n",
                 dts[k % 3], sweeps[k / 3]);
        sim sm;
        sim_open(&sm, ini, 9);
        particles *P = &sm.W.P;
        for (int i = 0; i < P->n; i++) {
            vec3 x = P->x[i];
            /* inwards plus a rotation about z and a little spin */
            P->v[i] = v3_add(v3_scale(x, -0.5), v3(-0.3 * x.y, 0.3 * x.x, 0.0));
            P->w[i] = v3(0.1 * (i % 3), 0.0, -0.2);
        }
        vec3 L0 = angular_momentum(P);
        long steps = (long)(6.0 / dts[k % 3]);
        long active = 0;
        for (long s = 0; s < steps; s++) {
            sim_steps(&sm, 1);
            active += sm.st.n_active;
        }
        vec3 L1 = angular_momentum(P);
        double err = v3_norm(v3_sub(L1, L0)) / v3_norm(L0);
        ck_assert_msg(active > 100, "dt %g: too few contacts (%ld) for the test", dts[k % 3],
                      active);
        ck_assert_msg(err < 1e-12, "%s, dt %g: angular momentum changed by %.3e relative",
                      sweeps[k / 3], dts[k % 3], err);
        sim_close(&sm);
    }
}
END_TEST

/* The 1D wave test of Unger & Kertesz sec. 3.3.1: fits omega and tau of the last disk after the
 * last step in which any contact had zero force, and compares with eqs. (58) and (60). */
typedef struct wave_result {
    double omega, tau, omega_th, tau_th;
} wave_result;

static wave_result wave_test_relaxed(const char *sweep, double omega, double q, long steps, int N_I,
                                     unsigned seed)
{
    char ini[1024];
    snprintf(ini, sizeof ini,
             "[system]\ndimension = 1\ndt = 1\nsteps = %ld\nseed = %u\n"
             "[solver]\nsweep = %s\ncriterion = fixed\niterations = %d\nrelaxation = %.17g\n"
             "[particles]\ncount = 50\nradius = 0.5\nmass = 1\norigin = 1.5 0 0\n"
             "[contact]\ndetect_gap = 0.5\n"
             "[plane.wall]\npoint = 0 0 0\nnormal = 1 0 0\n"
             "[load]\nparticles = -1\nforce = -0.05 0 0\n",
             steps, seed, sweep, N_I, omega);
    sim sm;
    sim_open(&sm, ini, seed);
    double *t = malloc((size_t)steps * sizeof *t), *x = malloc((size_t)steps * sizeof *x);
    long last_open = -1;
    int n = sm.W.P.n;
    for (long k = 0; k < steps; k++) {
        sim_steps(&sm, 1);
        t[k] = sm.W.t;
        x[k] = sm.W.P.x[n - 1].x;
        if (sm.st.n_active < n) /* n contacts: n-1 pairs and the wall */
            last_open = k;
    }
    const double d = 1.0, L = n * d, dt = 1.0;
    double D = q * N_I * d * d / dt, c = sqrt(q * N_I) * d / dt, kk = 2 * CDLAB_PI / (4 * L);
    wave_result r;
    r.omega_th = kk * sqrt(c * c - D * D * kk * kk / 4); /* eq. (58) */
    r.tau_th = 2 / (D * kk * kk);                        /* eq. (60) */
    /* Fit from tau/3 after the last opening (three damping times of the next mode, k' = 3k,
     * tau' = tau/9, so only the slowest mode is left), over six damping times. Starting at the
     * opening itself biases tau by +10% on average over seeds (measured on 30 seeds). */
    long k0 = last_open + 1 + lround(r.tau_th / 3), k1 = k0 + (long)(6 * r.tau_th);
    ck_assert_msg(last_open > 0 && k1 <= steps, "last open contact at step %ld", last_open);
    damped_sine fit;
    diag err;
    ck_assert_msg(fit_damped_sine(t + k0, x + k0, (int)(k1 - k0), &fit, &err) == CDLAB_OK, "%s",
                  err.msg);
    r.omega = fit.omega;
    r.tau = fit.tau;
    free(t);
    free(x);
    sim_close(&sm);
    return r;
}

static wave_result wave_test_full(const char *sweep, double q, long steps, int N_I, unsigned seed)
{
    return wave_test_relaxed(sweep, 1.0, q, steps, N_I, seed);
}

static wave_result wave_test(const char *sweep, double q, long steps)
{
    return wave_test_full(sweep, q, steps, 40, 7);
}

START_TEST(analytic_wave_test_random_sweep)
{
    wave_result r = wave_test("random", (4 * sqrt(exp(1.0)) - 5) / 2, 1500);
    /* tolerances of the issue: omega within 3%, tau within 20% (the continuum theory neglects
     * discreteness and the surviving higher modes) */
    ck_assert_msg(fabs(r.omega / r.omega_th - 1) < 0.03, "omega %g vs %g", r.omega, r.omega_th);
    ck_assert_msg(fabs(r.tau / r.tau_th - 1) < 0.20, "tau %g vs %g", r.tau, r.tau_th);
}
END_TEST

START_TEST(analytic_wave_test_jacobi_sweep)
{
    wave_result r = wave_test("jacobi", 0.5, 2000);
    ck_assert_msg(fabs(r.omega / r.omega_th - 1) < 0.03, "omega %g vs %g", r.omega, r.omega_th);
    ck_assert_msg(fabs(r.tau / r.tau_th - 1) < 0.20, "tau %g vs %g", r.tau, r.tau_th);
}
END_TEST

/* The relaxed sweeps' q(omega), derived on the chain (equiv_q_relaxed, docs/physics.md), against
 * the wave test at omega = 0.6 and 1.5 for the random, forward and colored orders and 0.6 for
 * jacobi: omega within 3 % and tau within 20 % of eqs. (58) and (60) with q(omega), as the
 * Gauss-Seidel tests; q(omega) differs from q(1) by 40-200 %, so the test tells them apart.
 * (Measured, one seed: random 0.318 / 1.483 against 0.318 / 1.484 from omega, forward 0.334 /
 * 2.99 against 1/3 and 3, colored 0.313 / 1.33 against 0.3125 / 1.3125 x 0.751/0.75.) */
START_TEST(analytic_wave_test_relaxed_sweeps)
{
    const char *sweeps[] = {"random", "forward", "colored", "jacobi"};
    const sweep_order order[] = {SWEEP_RANDOM, SWEEP_FORWARD, SWEEP_COLORED, SWEEP_JACOBI};
    const double omegas[] = {0.6, 1.5};
    for (int k = 0; k < 4; k++)
        for (int o = 0; o < (k == 3 ? 1 : 2); o++) {
            double q = equiv_q_relaxed(order[k], omegas[o]);
            ck_assert(fabs(q / equiv_q(order[k]) - 1) > 0.3);
            wave_result r = wave_test_relaxed(sweeps[k], omegas[o], q, 3000, 40, 7);
            ck_assert_msg(fabs(r.omega / r.omega_th - 1) < 0.03, "%s omega %g: %g vs %g", sweeps[k],
                          omegas[o], r.omega, r.omega_th);
            ck_assert_msg(fabs(r.tau / r.tau_th - 1) < 0.20, "%s omega %g: tau %g vs %g", sweeps[k],
                          omegas[o], r.tau, r.tau_th);
            fprintf(stderr,
                    "  wave test, %s relaxed by %.1f: omega %.4f (theory %.4f), tau %.1f "
                    "(%.1f)\n",
                    sweeps[k], omegas[o], r.omega, r.omega_th, r.tau, r.tau_th);
        }
}
END_TEST

/* q(omega) is q at omega = 1 exactly (the runs' figures unchanged), the derived shapes between
 * (jacobi omega/2, random 2 e^(omega/2) - 2 - omega/2, ordered omega/(2 - omega), colored
 * omega(omega + 2)/4 scaled to the measured 0.751), and none for jacobi above 1. */
START_TEST(unit_relaxed_q)
{
    for (int s = 0; s <= SWEEP_COLORED; s++)
        ck_assert(equiv_q_relaxed((sweep_order)s, 1.0) == equiv_q((sweep_order)s));
    ck_assert_double_eq_tol(equiv_q_relaxed(SWEEP_JACOBI, 0.6), 0.3, 1e-15);
    ck_assert(isnan(equiv_q_relaxed(SWEEP_JACOBI, 1.2)));
    ck_assert_double_eq_tol(equiv_q_relaxed(SWEEP_RANDOM, 1.5), 2 * exp(0.75) - 2.75, 1e-14);
    ck_assert_double_eq_tol(equiv_q_relaxed(SWEEP_FORWARD, 1.5), 3.0, 1e-14);
    ck_assert_double_eq_tol(equiv_q_relaxed(SWEEP_BACKWARD, 0.5), 1.0 / 3.0, 1e-15);
    ck_assert_double_eq_tol(equiv_q_relaxed(SWEEP_COLORED, 1.5), 0.751 * 1.3125 / 0.75, 1e-14);
    ck_assert(isnan(equiv_q_relaxed(SWEEP_RANDOM, 2.0)) && isnan(equiv_q_relaxed(SWEEP_RANDOM, 0)));
    /* a DEM twin takes it: kappa = q(omega) m N_I/dt^2 */
    equiv_figures f = equiv_of_relaxed(SWEEP_RANDOM, 1.5, 40, 1.0, 1.0, 1.0);
    ck_assert_double_eq_tol(f.kappa, 40 * (2 * exp(0.75) - 2.75), 1e-12);
}
END_TEST

/* Forward order is not random: its effective q differs from 0.797 by far more than the test
 * tolerance, so the wave test can tell sweep orders apart (guards against an ignored key). */
START_TEST(analytic_wave_test_forward_differs)
{
    wave_result r = wave_test("forward", (4 * sqrt(exp(1.0)) - 5) / 2, 1500);
    ck_assert_msg(fabs(r.omega / r.omega_th - 1) > 0.05, "forward sweep omega %g too close to %g",
                  r.omega, r.omega_th);
}
END_TEST

/* A column of 5 disks between a fixed wall and a piston pushed with force F (dimension 1):
 * at rest, the contacts carry F on the piston and on the wall (statics to 1e-9 relative). */
START_TEST(analytic_piston_statics)
{
    const char *ini =
        "[system]\ndimension = 1\ndt = 0.01\nsteps = 1\n"
        "[solver]\ncriterion = local\nepsilon = 1e-12\ndelta = 1e-15\niterations = 5000\n"
        "[particles]\ncount = 5\nradius = 0.5\nmass = 1\norigin = 0.5 0 0\n"
        "[plane.base]\npoint = 0 0 0\nnormal = 1 0 0\n"
        "[piston.top]\npoint = 5.2 0 0\nnormal = -1 0 0\nmass = 3\nforce = 2\n";
    sim sm;
    sim_open(&sm, ini, 1);
    sim_steps(&sm, 400);
    const wall *pist = &sm.W.walls[1];
    ck_assert_int_eq(pist->kind, WALL_PISTON);
    ck_assert_double_eq_tol(pist->contact_force, -2.0, 2e-9);
    ck_assert_double_eq_tol(pist->u, 0.0, 1e-9);
    ck_assert_double_eq_tol(pist->s, 0.2, 1e-9); /* it closed the initial gap of 0.2 */
    double wall_force = 0.0;
    for (int k = 0; k < sm.S.C.n; k++)
        if (sm.S.C.c[k].i == -1)
            wall_force += sm.S.C.c[k].R.x;
    ck_assert_double_eq_tol(wall_force, 2.0, 2e-9);
    sim_close(&sm);
}
END_TEST

/* /series/stress of that column at rest (run_simulation, rows every step): the 4 contacts
 * between the disks each carry F = 2 along a branch of length 1, so sigma_xx = -4 F / V: -1.6
 * with V the particles' extent 5, -4 with solver.stress_volume = 2 (to 1e-9 relative: the
 * local criterion's tolerance); the other components 0 (1D). /series/stress_walls: the wall's
 * and the piston's contacts, F each along a lever of r = 0.5, -F / V: -0.4 and -1; the two
 * together are the column's mean stress, -F L / V with L = 5 the length between the walls:
 * -2 = -F (the piston's force, in 1D a stress) and -5. Its DEM twin (k_n 1e4, damped to rest)
 * carries the same stresses to 1e-4, the walls' share to 5e-4 (its overlaps d = F/k_n shorten
 * the branches and levers by d = 2e-4 and the extent by 4d). */
START_TEST(analytic_stress_column)
{
    const char *ini =
        "[system]\ndimension = 1\n%s\n"
        "[solver]\ncriterion = local\nepsilon = 1e-12\ndelta = 1e-15\niterations = 5000\n"
        "stress_volume = %s\n"
        "[dem]\nk_n = 1e4\nk_t = 0\ndamping_normal = 0.5\n"
        "[particles]\ncount = 5\nradius = 0.5\nmass = 1\norigin = 0.5 0 0\n"
        "[plane.base]\npoint = 0 0 0\nnormal = 1 0 0\n"
        "[piston.top]\npoint = 5.2 0 0\nnormal = -1 0 0\nmass = 3\nforce = 2\n"
        "[output]\nevery = 0\n";
    const char *volume[] = {"0", "2", "0"};
    const char *mode[] = {"dt = 0.01\nsteps = 400", "dt = 0.01\nsteps = 400",
                          "mode = dem\ndt = 1e-3\nsteps = 20000"};
    const double expect[] = {-1.6, -4.0, -1.6}, tol[] = {1e-9, 1e-9, 1e-4};
    const double expect_walls[] = {-0.4, -1.0, -0.4}, tol_walls[] = {1e-9, 1e-9, 5e-4};
    for (int k = 0; k < 3; k++) {
        char text[1024], path[32];
        snprintf(text, sizeof text, ini, mode[k], volume[k]);
        run_ok(text, "stress.ini", path);
        diag err = {{0}};
        double *d, vol;
        long n;
        ck_assert_int_eq(h5in_read_doubles(path, "/series/stress", &d, &n, &err), CDLAB_OK);
        ck_assert_int_eq(n, (k == 2 ? 20001 : 401) * 9);
        h5in *h;
        ck_assert_int_eq(h5in_open(&h, path, &err), CDLAB_OK);
        ck_assert_int_eq(h5in_attr_double(h, "/series/stress", "volume", &vol, &err), CDLAB_OK);
        h5in_close(h);
        ck_assert_double_eq(vol, k == 1 ? 2.0 : 0.0);
        const double *last = d + n - 9;
        ck_assert_msg(fabs(last[0] - expect[k]) <= tol[k] * fabs(expect[k]), "%d: sigma_xx %.17g",
                      k, last[0]);
        for (int a = 1; a < 9; a++)
            ck_assert_double_eq(last[a], 0.0);
        double *w;
        long nw;
        ck_assert_int_eq(h5in_read_doubles(path, "/series/stress_walls", &w, &nw, &err), CDLAB_OK);
        ck_assert_int_eq(nw, n);
        const double *lw = w + n - 9;
        ck_assert_msg(fabs(lw[0] - expect_walls[k]) <= tol_walls[k] * fabs(expect_walls[k]),
                      "%d: walls' sigma_xx %.17g", k, lw[0]);
        double whole = expect[k] + expect_walls[k];
        ck_assert_msg(fabs(last[0] + lw[0] - whole) <= tol[k] * fabs(whole), "%d: mean %.17g", k,
                      last[0] + lw[0]);
        for (int a = 1; a < 9; a++)
            ck_assert_double_eq(lw[a], 0.0);
        free(w);
        free(d);
        remove_output(path);
    }
}
END_TEST

/* The packing of the two tests below: %s the mode's lines, %s the particles' file. */
static const char box_ini[] =
    "[system]\ndimension = 2\n%s\n"
    "[solver]\ncriterion = local\nepsilon = 1e-12\ndelta = 1e-15\niterations = 5000\n"
    "[dem]\nk_n = 1e4\nk_t = 1e4\ndamping_normal = 0.5\ndamping_tangential = 0.5\n"
    "[contact]\nfriction = 0.3\n"
    "[particles]\nsource = file\nfile = %s\nmass = 1\n"
    "[plane.left]\npoint = 0 0 0\nnormal = 1 0 0\nfriction = 0\n"
    "[plane.bottom]\npoint = 0 0 0\nnormal = 0 1 0\nfriction = 0\n"
    "[piston.right]\npoint = 3 0 0\nnormal = -1 0 0\nmass = 2\nforce = 1\nfriction = 0\n"
    "[piston.top]\npoint = 0 2 0\nnormal = 0 -1 0\nmass = 2\nforce = 3\nfriction = 0\n"
    "[output]\nevery = 0\nseries_every = 100\n";
static void box_particles(char *file)
{
    strcpy(file, "/tmp/cdlab_boxXXXXXX");
    temp_text_file(file, "0.5 0.5 0 0.5\n1.5 0.5 0 0.5\n2.5 0.5 0 0.5\n"
                         "0.5 1.5 0 0.5\n1.5 1.5 0 0.5\n2.5 1.5 0 0.5\n");
}

/* The mean stress of a 2D packing at rest is its boundary's: 3 x 2 disks of r = 0.5 in a square
 * lattice filling [0, 3] x [0, 2], walls on the left and below, pistons pushing from the right
 * (G = 1) and from above (F = 3); friction 0.3 between the disks, none on the walls. Whatever the
 * forces inside (a rigid lattice under two pistons: not unique), each disk at rest balances its
 * contacts, so stress + stress_walls = (1/V) sum over the wall contacts of f x_c (x_c on the
 * walls): sigma_xx = -G W / V = -G / H = -1/2 and sigma_yy = -F H / V = -F / W = -1 with V = W H
 * = 6 the particles' extent, sigma_xy = sigma_yx (the moments balance), the z row and column 0.
 * CD to 1e-9 (the local criterion's tolerance); the DEM twin (k_n 1e4, damped to rest) to 2e-4
 * (its overlaps F/k_n shift the contact points and the extent by up to 2e-4 relative), at
 * dt = 1e-3, 0.42 of the printed critical time step (at 0.84 it is not stable: next test). */
START_TEST(analytic_stress_box_mean)
{
    char file[64];
    box_particles(file);
    const char *mode[] = {"dt = 0.01\nsteps = 400", "mode = dem\ndt = 1e-3\nsteps = 20000"};
    const double tol[] = {1e-9, 2e-4};
    for (int k = 0; k < 2; k++) {
        char text[1024], path[32];
        snprintf(text, sizeof text, box_ini, mode[k], file);
        run_ok(text, "box.ini", path);
        diag err = {{0}};
        double *d, *w;
        long n, nw;
        ck_assert_int_eq(h5in_read_doubles(path, "/series/stress", &d, &n, &err), CDLAB_OK);
        ck_assert_int_eq(h5in_read_doubles(path, "/series/stress_walls", &w, &nw, &err), CDLAB_OK);
        ck_assert_int_eq(nw, n);
        double m[9];
        for (int a = 0; a < 9; a++)
            m[a] = d[n - 9 + a] + w[n - 9 + a];
        const double xx = -0.5, yy = -1.0;
        ck_assert_msg(fabs(m[0] - xx) <= tol[k], "%d: mean sigma_xx %.17g", k, m[0]);
        ck_assert_msg(fabs(m[4] - yy) <= tol[k], "%d: mean sigma_yy %.17g", k, m[4]);
        ck_assert_msg(fabs(m[1] - m[3]) <= tol[k], "%d: xy %.17g, yx %.17g", k, m[1], m[3]);
        static const int zero[] = {2, 5, 6, 7, 8}; /* xz, yz and the z row */
        for (int a = 0; a < 5; a++)
            ck_assert_msg(m[zero[a]] == 0.0, "%d: component %d %.17g", k, zero[a], m[zero[a]]);
        /* both parts carry load: the walls' is not the whole */
        ck_assert(d[n - 9] < 0.0 && d[n - 5] < 0.0 && w[n - 9] < 0.0 && w[n - 5] < 0.0);
        if (k == 0) { /* tools/cdlab's Run.mean_stress() is the sum */
            char cmd[1024], said[1024];
            snprintf(cmd, sizeof cmd,
                     "cd ../tools && /usr/bin/python3 -c '\n"
                     "from cdlab import Run\n"
                     "m = Run(\"%s\").mean_stress()[-1]\n"
                     "print(\"%%.17g %%.17g\" %% (m[0, 0], m[1, 1]))' 2>&1",
                     path);
            ck_assert_int_eq(run_capture(cmd, said, sizeof said), 0);
            double sxx, syy;
            ck_assert_msg(sscanf(said, "%lf %lf", &sxx, &syy) == 2, "%s", said);
            ck_assert(sxx == m[0] && syy == m[4]);
        }
        /* DEM: the ledger closes (a stable run: far below the warning's 0.5) */
        h5in *h;
        double rmax = -1.0;
        ck_assert_int_eq(h5in_open(&h, path, &err), CDLAB_OK);
        status a = h5in_attr_double(h, "/summary", "energy_residual_max", &rmax, &err);
        h5in_close(h);
        if (k == 0)
            ck_assert_msg(a != CDLAB_OK, "a CD run has no energy balance");
        else
            ck_assert_msg(a == CDLAB_OK && rmax >= 0.0 && rmax < 1e-2, "residual %g", rmax);
        free(d);
        free(w);
        remove_output(path);
    }
    remove(file);
}
END_TEST

/* That packing's DEM twin at dt = 2e-3, 0.84 of the printed critical time step (a pair's
 * estimate): the lattice's rotations, four frictional contacts and dashpots per disc, are not
 * stable there. It did not blow up: the discs stayed in place, spinning at ~3e-5, while the
 * contact forces alternated from step to step (the right piston's -1.2, -0.8 against its load 1:
 * velocity Verlet's two half kicks average the cycle away) and the ledger booked friction work
 * of 8 against 0.001 put in; the run said "done" and nothing else.
 * Now the ledger's relative residual passing 0.5 is warned of (with -q too) and
 * /summary@energy_residual_max keeps the largest. */
START_TEST(io_dem_unstable_balance_warned)
{
    char file[64], ini[64] = "/tmp/cdlab_boxiniXXXXXX", out[] = "/tmp/cdlab_boxoutXXXXXX";
    box_particles(file);
    char text[1024], cmd[512], said[8192];
    snprintf(text, sizeof text, box_ini, "mode = dem\ndt = 2e-3\nsteps = 4000", file);
    temp_text_file(ini, text);
    int fd = mkstemp(out);
    ck_assert_int_ge(fd, 0);
    close(fd);
    unlink(out);
    snprintf(cmd, sizeof cmd, "%s run %s -q -o %s 2>&1", cdlab_bin(), ini, out);
    ck_assert_int_eq(run_capture(cmd, said, sizeof said), 0);
    const char *w = strstr(said, "warning: at step ");
    ck_assert_msg(w && strstr(w, "the energy ledger's residual is ") &&
                      strstr(w, "a numerical instability"),
                  "%s", said);
    long at = strtol(w + strlen("warning: at step "), NULL, 10);
    ck_assert_msg(at > 0 && at % 100 == 0, "%s", said); /* a row's step */
    ck_assert_msg(strstr(w + 1, "warning: at step ") == NULL, "said once: %s", said);
    h5in *h;
    diag err = {{0}};
    double rmax, *r;
    long n;
    ck_assert_int_eq(h5in_open(&h, out, &err), CDLAB_OK);
    ck_assert_int_eq(h5in_attr_double(h, "/summary", "energy_residual_max", &rmax, &err), CDLAB_OK);
    h5in_close(h);
    ck_assert_int_eq(h5in_read_doubles(out, "/series/residual", &r, &n, &err), CDLAB_OK);
    double big = 0.0;
    for (long k = 0; k < n; k++)
        big = fmax(big, fabs(r[k]));
    ck_assert_msg(rmax > 10.0 && rmax == big, "%g against the series' %g", rmax, big);
    free(r);
    /* and tools/cdlab-py's summary says it */
    snprintf(cmd, sizeof cmd, "../tools/cdlab-py summary %s 2>&1", out);
    ck_assert_int_eq(run_capture(cmd, said, sizeof said), 0);
    ck_assert_msg(strstr(said, "  energy      the ledger's residual up to ") &&
                      strstr(said, "a numerical instability"),
                  "%s", said);
    remove_output(out);
    unlink(ini);
    remove(file);
}
END_TEST

/* A piston force step: after step_time the piston force changes and the new static force is
 * reached. */
START_TEST(analytic_piston_force_step)
{
    const char *ini =
        "[system]\ndimension = 1\ndt = 0.01\nsteps = 1\n"
        "[solver]\ncriterion = local\nepsilon = 1e-12\ndelta = 1e-15\niterations = 5000\n"
        "[particles]\ncount = 3\nradius = 0.5\nmass = 1\norigin = 0.5 0 0\n"
        "[plane.base]\npoint = 0 0 0\nnormal = 1 0 0\n"
        "[piston.top]\npoint = 3 0 0\nnormal = -1 0 0\nmass = 1\nforce = 1\n"
        "force_after = 4\nstep_time = 1.0\n";
    sim sm;
    sim_open(&sm, ini, 1);
    sim_steps(&sm, 95); /* t = 0.95 */
    ck_assert_double_eq_tol(sm.W.walls[1].contact_force, -1.0, 1e-9);
    sim_steps(&sm, 105);
    ck_assert_double_eq_tol(sm.W.walls[1].contact_force, -4.0, 1e-9);
    sim_close(&sm);
}
END_TEST

/* A force switched on at a time that is a step's end acts from the next step: with dt = 0.1 the
 * third step ends at 0.30000000000000004, which was taken as "after" step_time = 0.3 and
 * load.start = 0.3, so both acted a step early. The banner names the first step, and warns of
 * one after the run's end. */
START_TEST(unit_force_steps_on_step_ends)
{
    ck_assert(3 * 0.1 > 0.3); /* the rounding this is about */
    const struct {
        double t, dt;
        long first;
    } at[] = {{0.3, 0.1, 4},    {0.35, 0.1, 4}, {0.0, 0.1, 1},  {-1.0, 0.1, 1},
              {40, 0.02, 2001}, {0.7, 0.1, 8},  {1e-7, 1.0, 1}, {INFINITY, 0.1, LONG_MAX}};
    for (int k = 0; k < 8; k++)
        ck_assert_msg(first_step_after(at[k].t, at[k].dt) == at[k].first, "%g / %g: %ld", at[k].t,
                      at[k].dt, first_step_after(at[k].t, at[k].dt));
    const char *ini =
        "[system]\ndimension = 1\ndt = 0.1\nsteps = 6\n"
        "[solver]\ncriterion = local\nepsilon = 1e-12\ndelta = 1e-15\niterations = 5000\n"
        "[particles]\ncount = 3\nradius = 0.5\nmass = 1\norigin = 0.5 0 0\n"
        "[plane.base]\npoint = 0 0 0\nnormal = 1 0 0\n"
        "[piston.top]\npoint = 3 0 0\nnormal = -1 0 0\nmass = 1\nforce = 1\n"
        "force_after = 4\nstep_time = 0.3\n"
        "[load]\nparticles = 2\nforce = -2 0 0\nstart = 0.3\n[output]\nevery = 0\n";
    sim sm;
    sim_open(&sm, ini, 1);
    sim_steps(&sm, 3);
    ck_assert_double_eq_tol(sm.W.walls[1].contact_force, -1.0, 1e-9);
    ck_assert(world_load_factor(&sm.W, sm.W.t) == 0.0);
    sim_steps(&sm, 1);
    ck_assert_double_eq_tol(sm.W.walls[1].contact_force, -4.0, 1e-9);
    ck_assert(world_load_factor(&sm.W, sm.W.t) == 1.0);
    sim_close(&sm);
    char path[] = "/tmp/cdlab_stepsXXXXXX", cmd[256], out[4096];
    temp_text_file(path, ini);
    snprintf(cmd, sizeof cmd, "%s check %s 2>&1", cdlab_bin(), path);
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "piston.top: force 1, then 4 from step 4 (t = 0.4), the first step "
                              "ending after step_time = 0.3\n") &&
                      strstr(out, "load: from step 4 (t = 0.4), the first step ending after "
                                  "load.start = 0.3\n"),
                  "%s", out);
    /* after the run's last step: never applied, said with --quiet too */
    snprintf(cmd, sizeof cmd,
             "%s check %s -q --set piston.top.step_time=0.6 --set load.start=1e9 2>&1", cdlab_bin(),
             path);
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "warning: piston.top.step_time = 0.6 is at or after the end of the "
                              "run's last step (6, t = 0.6): its force_after is never applied") &&
                      strstr(out, "warning: load.start = 1e+09 is at or after the end"),
                  "%s", out);
    unlink(path);
}
END_TEST

/* A pair that closes by more than contact.detect_gap in one step meets unseen by the detection:
 * no force acts in that step, and the shock law's g_pos keeps the overlap reached. The next
 * detection finds it (the positions of the step's start are x - v dt): counted in the summary
 * and /summary@missed_contacts with the largest overlap (before 2026-11-28 nothing said so). A
 * particle pushed 0.6 in its first step toward a particle or a wall 0.5 away (gap 0.25):
 * missed, overlap 0.1; pushed 0.4: no overlap; starting 0.2 away (a candidate): the shock law
 * stops it, nothing missed. */
START_TEST(unit_missed_contacts_counted)
{
    const struct {
        const char *other; /* the second body: a particle, or a wall */
        double spacing, push;
        long missed;
        double overlap;
    } cases[] = {{"", 0.5, 0.6, 1, 0.1},
                 {"", 0.5, 0.4, 0, 0.0},
                 {"", 0.2, 0.6, 0, 0.0},
                 {"[plane.wall]\npoint = 1 0 0\nnormal = -1 0 0\n", 0.5, 0.6, 1, 0.1}};
    for (int k = 0; k < 4; k++) {
        int walled = cases[k].other[0] != '\0';
        char ini[1024];
        snprintf(ini, sizeof ini,
                 "[system]\ndimension = 1\ndt = 1\nsteps = 3\n"
                 "[solver]\ncriterion = local\nepsilon = 1e-12\ndelta = 1e-15\n"
                 "[particles]\ncount = %d\nradius = 0.5\nmass = 1\nspacing = %g\n"
                 "[contact]\ndetect_gap = 0.25\n"
                 "[load]\nparticles = 0\nforce = %g 0 0\n%s[output]\nevery = 0\n",
                 walled ? 1 : 2, cases[k].spacing, cases[k].push, cases[k].other);
        char path[32];
        diag err = {{0}};
        run_summary sum;
        ck_assert_msg(run_to_temp(ini, "missed.ini", path, &sum, &err) == CDLAB_OK, "%d: %s", k,
                      err.msg);
        ck_assert_msg(sum.missed_contacts == cases[k].missed, "case %d: %ld missed", k,
                      sum.missed_contacts);
        ck_assert_msg(fabs(sum.missed_overlap - cases[k].overlap) < 1e-12, "case %d: overlap %.17g",
                      k, sum.missed_overlap);
        h5in *h;
        long long m;
        double ov;
        ck_assert_int_eq(h5in_open(&h, path, &err), CDLAB_OK);
        ck_assert_int_eq(h5in_attr_int(h, "/summary", "missed_contacts", &m, &err), CDLAB_OK);
        ck_assert_int_eq(h5in_attr_double(h, "/summary", "missed_overlap", &ov, &err), CDLAB_OK);
        h5in_close(h);
        ck_assert(m == cases[k].missed && ov == sum.missed_overlap);
        remove_output(path);
    }
    /* a disc pushed round a periodic ring ends step 24 exactly touching the other (x = 3 +
     * 0.01 n (n + 1) = 9: an overlap of 1.8e-15 after closing 0.48 in the step): the shock law
     * would have let it close that far with no force, so nothing was missed (it was counted,
     * with a warning) */
    const char *ring = "[system]\ndimension = 1\ndt = 0.1\nsteps = 25\nperiodic = x\n"
                       "box_min = 0 0 0\nbox_max = 10 0 0\n"
                       "[particles]\ncount = 2\nradius = 0.5\nmass = 1\nspacing = 2\n"
                       "[load]\nparticles = 1\nforce = 2 0 0\n[output]\nevery = 0\n";
    char path[32];
    diag err = {{0}};
    run_summary sum;
    ck_assert_msg(run_to_temp(ring, "ring.ini", path, &sum, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_msg(sum.missed_contacts == 0, "%ld missed (overlap %g)", sum.missed_contacts,
                  sum.missed_overlap);
    remove_output(path);
}
END_TEST

/* solver.delta is a force in the config's units: tests/memcheck/cd.ini's pile scaled to
 * micrometres (lengths x 1e-5, density 1, dt x sqrt(1e-5)), where the default delta = 1e-12 is
 * far above epsilon times the particles' weight, "converged" every step after one sweep (the
 * metre-sized pile takes 92 on average): the run now warns, with --quiet too; with delta
 * 1e-30 the scaled pile takes its 90-odd sweeps, and the metre-sized one has no warning. */
START_TEST(errors_local_delta_not_small)
{
    const char *scaled =
        "[system]\ndimension = 3\ndt = 6.32e-5\nsteps = 60\nseed = 5\ngravity = 0 0 -10\n"
        "[solver]\ncriterion = local\nepsilon = 1e-6\niterations = 2000\n"
        "[particles]\nsource = random\ncount = 60\ndensity = 1\nradius_min = 4e-6\n"
        "radius_max = 6e-6\nbox_min = 0 0 0\nbox_max = 4e-5 4e-5 8e-5\n"
        "[contact]\nfriction = 0.4\n[plane.base]\npoint = 0 0 0\nnormal = 0 0 1\n"
        "[piston.top]\npoint = 0 0 8.5e-5\nnormal = 0 0 -1\nmass = 5e-15\nforce = 2e-14\n"
        "[output]\nevery = 0\n";
    char path[] = "/tmp/cdlab_deltaXXXXXX", out[64], cmd[512], text[4096];
    temp_text_file(path, scaled);
    double mean[2];
    for (int k = 0; k < 2; k++) {
        snprintf(out, sizeof out, "%s.%d.h5", path, k);
        snprintf(cmd, sizeof cmd, "%s run %s -o %s -q %s 2>&1", cdlab_bin(), path, out,
                 k ? "--set solver.delta=1e-30" : "");
        ck_assert_int_eq(run_capture(cmd, text, sizeof text), 0);
        ck_assert_msg((strstr(text, "warning: solver.delta = 1e-12 is not small against this "
                                    "system's forces") != NULL) == (k == 0),
                      "%d: %s", k, text);
        h5in *h;
        diag err;
        ck_assert_int_eq(h5in_open(&h, out, &err), CDLAB_OK);
        ck_assert_int_eq(h5in_attr_double(h, "/summary", "mean_sweeps", &mean[k], &err), CDLAB_OK);
        h5in_close(h);
        remove_output(out);
    }
    ck_assert_msg(mean[0] < 1.5 && mean[1] > 50.0,
                  "mean sweeps %g with the default delta, %g "
                  "with 1e-30",
                  mean[0], mean[1]);
    unlink(path);
    snprintf(cmd, sizeof cmd, "%s check memcheck/cd.ini 2>&1", cdlab_bin());
    ck_assert_int_eq(run_capture(cmd, text, sizeof text), 0);
    ck_assert_msg(!strstr(text, "solver.delta"), "%s", text);
}
END_TEST

/* Steps that end at solver.iterations without meeting the criterion are counted: the summary's
 * unconverged_steps (and /summary@unconverged_steps) is the number of 0 rows of
 * /series/converged after the start's; tests/memcheck/cd.ini's pile with 3 sweeps at most has
 * some, and none with the file's 2000 (no test ran such a step through a run before). The
 * first is warned of, with -q too (before 2026-11-29 only the end's line said it, not with -q). */
START_TEST(io_unconverged_steps_counted)
{
    const char *pile =
        "[system]\ndimension = 3\ndt = 0.02\nsteps = 60\nseed = 5\ngravity = 0 0 -10\n"
        "[solver]\ncriterion = local\nepsilon = 1e-8\niterations = %d\n"
        "[particles]\nsource = random\ncount = 60\nradius_min = 0.4\nradius_max = 0.6\n"
        "box_min = 0 0 0\nbox_max = 4 4 8\n[contact]\nfriction = 0.4\n"
        "[plane.base]\npoint = 0 0 0\nnormal = 0 0 1\n"
        "[piston.top]\npoint = 0 0 8.5\nnormal = 0 0 -1\nmass = 5\nforce = 20\n"
        "[output]\nevery = 0\n";
    const int iterations[2] = {3, 2000};
    for (int k = 0; k < 2; k++) {
        char ini[1024], path[32];
        snprintf(ini, sizeof ini, pile, iterations[k]);
        run_summary sum;
        diag err;
        ck_assert_msg(run_to_temp(ini, "pile.ini", path, &sum, &err) == CDLAB_OK, "%s", err.msg);
        double *conv;
        long rows, zeros = 0;
        long long stored;
        ck_assert_msg(h5in_read_doubles(path, "/series/converged", &conv, &rows, &err) == CDLAB_OK,
                      "%s", err.msg);
        ck_assert_int_eq(rows, 61);
        for (long r = 1; r < rows; r++)
            zeros += conv[r] == 0.0;
        free(conv);
        h5in *h;
        ck_assert_int_eq(h5in_open(&h, path, &err), CDLAB_OK);
        ck_assert_int_eq(h5in_attr_int(h, "/summary", "unconverged_steps", &stored, &err),
                         CDLAB_OK);
        h5in_close(h);
        ck_assert_msg(k == 0 ? zeros > 10 : zeros == 0, "%d sweeps: %ld unconverged rows",
                      iterations[k], zeros);
        ck_assert_int_eq(sum.unconverged_steps, zeros);
        ck_assert_int_eq(stored, zeros);
        remove_output(path);
        /* the program says the first one, with -q too, and nothing where there is none */
        char cfg[] = "/tmp/cdlab_ucXXXXXX", out[64], cmd[512], said[4096];
        temp_text_file(cfg, ini);
        snprintf(out, sizeof out, "%s.h5", cfg);
        snprintf(cmd, sizeof cmd, "%s run %s -o %s -q 2>&1", cdlab_bin(), cfg, out);
        ck_assert_int_eq(run_capture(cmd, said, sizeof said), 0);
        const char *w = strstr(said, "warning: step ");
        if (k == 0)
            ck_assert_msg(w &&
                              strstr(w, " did not converge: the solver's criterion was not met "
                                        "within its 3 sweeps (solver.iterations)") &&
                              !strstr(w + 1, "warning: step "),
                          "%s", said);
        else
            ck_assert_msg(said[0] == '\0', "%s", said);
        remove_output(out);
        unlink(cfg);
    }
}
END_TEST

/* A disc in a circular track (a cylinder's inside surface, R = 5, r = 0.5, g = 10), let go at
 * 0.1 rad from the bottom: frictionless it slides to and fro with the pendulum's period
 * 2 pi sqrt((R - r)/g), with friction 0.5 it rolls, its inertia adding half its mass:
 * 2 pi sqrt(3 (R - r)/(2 g)); both times (1 + theta^2/16) for the amplitude. CD (dt = 1e-3) and
 * DEM (k_n 1e6, dt = 1e-4) within 2e-4 of them (measured: CD 1.2e-5 sliding, 5e-5 rolling; DEM
 * 1.5e-6, 4.5e-5), the periods from the centre's crossings of the vertical through the axis, half
 * a period apart. */
START_TEST(analytic_rolling_pendulum)
{
    const double R = 5.0, r = 0.5, g = 10.0, th = 0.1;
    char file[64] = "/tmp/cdlab_trackXXXXXX", line[128];
    snprintf(line, sizeof line, "%.17g %.17g 0 1 0 0 0 0 0 0 0\n", (R - r) * sin(th),
             -(R - r) * cos(th));
    temp_text_file(file, line);
    const char *ini = "[system]\ndimension = 2\n%s\ngravity = 0 -10 0\n"
                      "[solver]\ncriterion = local\nepsilon = 1e-12\niterations = 5000\n"
                      "[dem]\nk_n = 1e6\nk_t = 4e5\n[contact]\nfriction = %g\n"
                      "[particles]\nsource = file\nformat = chute\nfile = %s\nmass = 1\n"
                      "[cylinder.track]\npoint = 0 0 0\naxis = 0 0 1\nradius = 5\n"
                      "surface = inside\n[output]\nevery = 0\nseries_every = %d\nprobes = 0\n";
    const char *mode[] = {"dt = 1e-3\nsteps = 8000", "mode = dem\ndt = 1e-4\nsteps = 80000"};
    for (int k = 0; k < 4; k++) {
        int dem = k / 2, rolls = k % 2;
        char text[1024], path[32];
        snprintf(text, sizeof text, ini, mode[dem], rolls ? 0.5 : 0.0, file, dem ? 10 : 1);
        run_ok(text, "track.ini", path);
        diag err = {{0}};
        double *t, *x;
        long nt, nx;
        ck_assert_int_eq(h5in_read_doubles(path, "/series/t", &t, &nt, &err), CDLAB_OK);
        ck_assert_int_eq(h5in_read_doubles(path, "/series/probe_position", &x, &nx, &err),
                         CDLAB_OK);
        ck_assert_int_eq(nx, 3 * nt);
        /* the crossings of x = 0 (half a period apart), interpolated between rows */
        double first = -1.0, last = -1.0;
        int crossings = 0;
        for (long n = 0; n + 1 < nt; n++) {
            double a = x[3 * n], b = x[3 * (n + 1)];
            if ((a > 0.0 && b <= 0.0) || (a < 0.0 && b >= 0.0)) {
                double tc = t[n] + (t[n + 1] - t[n]) * a / (a - b);
                if (first < 0.0)
                    first = tc;
                last = tc;
                crossings++;
            }
        }
        ck_assert_int_ge(crossings, 3);
        double period = 2.0 * (last - first) / (crossings - 1);
        double expect =
            2.0 * CDLAB_PI * sqrt((rolls ? 1.5 : 1.0) * (R - r) / g) * (1.0 + th * th / 16.0);
        ck_assert_msg(fabs(period / expect - 1.0) <= 2e-4, "%s %s: period %.9g, expected %.9g",
                      dem ? "DEM" : "CD", rolls ? "rolling" : "sliding", period, expect);
        free(t);
        free(x);
        remove_output(path);
    }
    remove(file);
}
END_TEST

/* A sphere in a horizontal cylinder (inside surface) under gravity comes to rest at the bottom,
 * touching: its centre at distance R - r below the axis; and a sphere resting on top of a
 * cylinder's outside surface stays at R + r above it. */
START_TEST(analytic_cylinder_rest)
{
    const char *ini =
        "[system]\ndimension = 3\ndt = 0.001\nsteps = 1\ngravity = 0 0 -10\n"
        "[solver]\ncriterion = local\nepsilon = 1e-10\ndelta = 1e-14\niterations = 500\n"
        "[particles]\ncount = 2\nradius = 0.5\nmass = 1\nspacing = 9\n"
        "origin = 0 0 -1\ndirection = 1 0 0\n"
        "[cylinder.drum]\npoint = 0 0 0\naxis = 1 0 0\nradius = 3\nsurface = inside\n"
        "[cylinder.post]\npoint = 10 0 0\naxis = 0 1 0\nradius = 0.5\nsurface = outside\n";
    sim sm;
    sim_open(&sm, ini, 1);
    sm.W.P.x[1] = v3(10.0, 0.0, 1.0); /* on top of the post: touching (0.5 + 0.5) */
    sim_steps(&sm, 2000);
    /* fell 1.5 to the bottom of the drum at z = -(3 - 0.5) */
    ck_assert_double_eq_tol(sm.W.P.x[0].z, -2.5, 1e-9);
    ck_assert_double_eq_tol(sm.W.P.v[0].z, 0.0, 1e-9);
    ck_assert_double_eq_tol(sm.W.P.x[1].z, 1.0, 1e-9);
    ck_assert_double_eq_tol(sm.W.P.x[1].x, 10.0, 1e-12);
    sim_close(&sm);
}
END_TEST

/* A frictional pile of 80 random particles on a base, loaded by a piston (dimension dim; sweep:
 * a "sweep = ...\n" line or ""), for the update tests. */
static void loaded_pile_ini(char *ini, size_t size, int dim, const char *sweep)
{
    snprintf(ini, size,
             "[system]\ndimension = %d\ndt = 0.02\nsteps = 60\nseed = 4\n"
             "gravity = 0 %s\n"
             "[solver]\n%siterations = 3\n"
             "[particles]\nsource = random\ncount = 80\nradius_min = 0.4\n"
             "radius_max = 0.6\nbox_min = 0 0 0\nbox_max = %s\n"
             "[contact]\nfriction = 0.3\ndetect_gap = 0.3\n"
             "[plane.base]\npoint = 0 0 0\nnormal = %s\n"
             "[piston.top]\npoint = %s\nnormal = %s\nmass = 10\nforce = 50\n",
             dim, dim == 2 ? "-1 0" : "0 -1", sweep, dim == 2 ? "10 14 0" : "5 5 10",
             dim == 2 ? "0 1 0" : "0 0 1", dim == 2 ? "0 15 0" : "0 0 11",
             dim == 2 ? "0 -1 0" : "0 0 -1");
}

/* The solver's division-free update against the shock law as written (U of eq. 23, then eq. 34)
 * on every contact of frictional piles caught mid-solve (N_I = 3: forces far from converged),
 * in 2D and 3D: equal within 1e-12 of the largest force, with all three branches exercised. */
START_TEST(unit_incremental_update_matches_shock_law)
{
    for (int dim = 2; dim <= 3; dim++) {
        char ini[1024];
        loaded_pile_ini(ini, sizeof ini, dim, "");
        sim s;
        sim_open(&s, ini, 9);
        sim_steps(&s, 40);
        int n_open = 0, n_stick = 0, n_slide = 0;
        for (int pass = 0; pass < 2; pass++) {
            double rmax = 0.0;
            for (int k = 0; k < s.S.C.n; k++)
                rmax = fmax(rmax, v3_norm(s.S.C.c[k].R));
            ck_assert(rmax > 0.0);
            for (int k = 0; k < s.S.C.n; k++) {
                const contact *c = &s.S.C.c[k];
                vec3 a = cd_contact_update(&s.W, c), b = cd_contact_update_reference(&s.W, c);
                ck_assert_msg(v3_norm(v3_sub(a, b)) <= 1e-12 * rmax,
                              "%dD contact %d: incremental (%g %g %g), shock law (%g %g %g)", dim,
                              k, a.x, a.y, a.z, b.x, b.y, b.z);
                double bn = v3_dot(b, c->n), bt = v3_norm(v3_axpy(-bn, c->n, b));
                if (v3_norm(b) == 0.0)
                    n_open++;
                else if (bt >= c->mu * bn * (1.0 - 1e-9))
                    n_slide++;
                else
                    n_stick++;
            }
            /* the second pass in the middle of a step: after the free motion and one sweep */
            diag err;
            ck_assert_int_eq(cd_step_solve(&s.W, &s.S, &s.p, &s.st, &err), CDLAB_OK);
        }
        ck_assert_msg(n_open > 0 && n_stick > 0 && n_slide > 0, "%dD branches: %d %d %d", dim,
                      n_open, n_stick, n_slide);
        sim_close(&s);
    }
}
END_TEST

/* The one-process sweeps work on the solver's body records (cd_body), the distributed sweeps
 * on the particles' arrays: the same updates in the same order give the same bits (velocities,
 * forces, the piston's velocity), through three forward sweeps of a loaded pile with walls and a
 * piston, 2D and 3D. */
START_TEST(unit_body_records_match_particle_arrays)
{
    for (int dim = 2; dim <= 3; dim++) {
        char ini[1024];
        snprintf(ini, sizeof ini,
                 "[system]\ndimension = %d\ndt = 0.02\nsteps = 60\nseed = 4\n"
                 "gravity = 0 %s\n"
                 "[solver]\nsweep = forward\niterations = 3\n"
                 "[particles]\nsource = random\ncount = 80\nradius_min = 0.4\n"
                 "radius_max = 0.6\nbox_min = 0 0 0\nbox_max = %s\n"
                 "[contact]\nfriction = 0.3\ndetect_gap = 0.3\n"
                 "[plane.base]\npoint = 0 0 0\nnormal = %s\n"
                 "[piston.top]\npoint = %s\nnormal = %s\nmass = 10\nforce = 50\n",
                 dim, dim == 2 ? "-1 0" : "0 -1", dim == 2 ? "10 14 0" : "5 5 10",
                 dim == 2 ? "0 1 0" : "0 0 1", dim == 2 ? "0 15 0" : "0 0 11",
                 dim == 2 ? "0 -1 0" : "0 0 -1");
        sim a, b;
        sim_open(&a, ini, 9);
        sim_open(&b, ini, 9);
        sim_steps(&a, 40);
        sim_steps(&b, 40);
        int n = a.S.C.n, np = a.W.P.n, piston = a.W.n_walls - 1;
        ck_assert_int_eq(n, b.S.C.n);
        ck_assert_int_eq(a.W.walls[piston].kind, WALL_PISTON);
        int *idx = malloc((size_t)(n + CD_PERM_PAD) * sizeof *idx);
        ck_assert_ptr_nonnull(idx);
        for (int k = 0; k < n + CD_PERM_PAD; k++)
            idx[k] = k < n ? k : 0;
        /* disturb the velocities so that every contact's force changes */
        for (int i = 0; i < np; i++) {
            a.W.P.v[i] = b.W.P.v[i] = v3_add(a.W.P.v[i], v3(0.01 * (i % 7), -0.02, 0.0));
            a.W.P.w[i] = b.W.P.w[i] = v3_add(a.W.P.w[i], v3(0.0, 0.0, 0.03 * (i % 5) - 0.06));
        }
        int touching = 0;
        for (int sweep = 0; sweep < 3; sweep++) {
            sweep_result ra, rb;
            diag err;
            sweep_result_init(&ra);
            sweep_contacts(&a.W, &a.S.C, &a.p, idx, n, 0, NULL, NULL, 1, &ra);
            ck_assert_int_eq(sweep_run(&b.W, &b.S, &b.p, 1, &rb, &err), CDLAB_OK);
            ck_assert(ra.max_rel_change == rb.max_rel_change);
        }
        for (int k = 0; k < n; k++)
            touching += v3_norm(a.S.C.c[k].R) > 0.0;
        ck_assert_msg(touching >= 10, "%dD: %d of %d contacts carry a force", dim, touching, n);
        ck_assert(memcmp(a.W.P.v, b.W.P.v, (size_t)np * sizeof(vec3)) == 0);
        ck_assert(memcmp(a.W.P.w, b.W.P.w, (size_t)np * sizeof(vec3)) == 0);
        for (int k = 0; k < n; k++)
            ck_assert(memcmp(&a.S.C.c[k].R, &b.S.C.c[k].R, sizeof(vec3)) == 0);
        ck_assert(a.W.walls[piston].u == b.W.walls[piston].u);
        ck_assert(b.S.bodies_on == 0);
        free(idx);
        sim_close(&a);
        sim_close(&b);
    }
}
END_TEST

/* Random sweep: each sweep is a permutation of all contacts (each exactly once), and a fresh
 * one every sweep. */
START_TEST(unit_random_sweep_is_fresh_permutation)
{
    const char *ini = "[system]\ndimension = 1\ndt = 1\nsteps = 1\n"
                      "[particles]\ncount = 30\nradius = 0.5\nmass = 1\norigin = 0.5 0 0\n"
                      "[plane.w]\npoint = 0 0 0\nnormal = 1 0 0\n";
    sim sm;
    sim_open(&sm, ini, 5);
    world *W = &sm.W;
    diag err;
    ck_assert_int_eq(contacts_detect(&sm.S.C, &W->P, W->walls, W->n_walls, &W->detect, &err),
                     CDLAB_OK);
    int n = sm.S.C.n;
    ck_assert_int_eq(n, 30);
    int prev[30], same_all = 1;
    for (int sweep = 0; sweep < 5; sweep++) {
        sweep_result r;
        ck_assert_int_eq(sweep_run(W, &sm.S, &sm.p, 1, &r, &err), CDLAB_OK);
        int seen[30] = {0};
        for (int k = 0; k < n; k++) {
            ck_assert(sm.S.perm[k] >= 0 && sm.S.perm[k] < n);
            seen[sm.S.perm[k]]++;
        }
        for (int k = 0; k < n; k++)
            ck_assert_int_eq(seen[k], 1);
        if (sweep > 0) {
            int same = 1;
            for (int k = 0; k < n; k++)
                same &= prev[k] == sm.S.perm[k];
            same_all &= same;
        }
        for (int k = 0; k < n; k++)
            prev[k] = sm.S.perm[k];
    }
    ck_assert_msg(!same_all, "the random order did not change between sweeps");
    sim_close(&sm);
}
END_TEST

/* Criteria: local with a tiny cap reports non-convergence (data, not an error); the global
 * criterion stops earlier than a tight local one on the same step. */
START_TEST(unit_criteria_cap_and_global)
{
    const char *base = "[system]\ndimension = 1\ndt = 1\nsteps = 1\n"
                       "[particles]\ncount = 40\nradius = 0.5\nmass = 1\norigin = 0.5 0 0\n"
                       "[plane.w]\npoint = 0 0 0\nnormal = 1 0 0\n"
                       "[load]\nparticles = -1\nforce = -1 0 0\n";
    world W;
    scene_info info;
    cd_params p;
    cd_stats st;
    diag err;
    build_from_string(base, &W, &info, &p);
    cd_solver S;
    cd_solver_init(&S, 5);
    p.crit = CRIT_LOCAL;
    p.epsilon = 1e-10;
    p.delta = 0.0;
    p.iterations = 3;
    ck_assert_int_eq(cd_step(&W, &S, &p, &st, &err), CDLAB_OK);
    ck_assert_int_eq(st.sweeps, 3);
    ck_assert_int_eq(st.converged, 0);
    ck_assert_double_gt(st.residual, 1e-10);
    world_free(&W);
    /* fresh chain: count sweeps to converge a force step from rest with both criteria */
    int sweeps[2];
    for (int k = 0; k < 2; k++) {
        contacts_free(&S.C); /* no forces carried over from the last chain */
        build_from_string(base, &W, &info, &p);
        p.crit = k == 0 ? CRIT_LOCAL : CRIT_GLOBAL;
        p.epsilon = 1e-3;
        p.delta = 1e-12;
        p.iterations = 100000;
        ck_assert_int_eq(cd_step(&W, &S, &p, &st, &err), CDLAB_OK);
        ck_assert_int_eq(st.converged, 1);
        sweeps[k] = st.sweeps;
        world_free(&W);
    }
    /* N_I > (L/d)^2 = 1600 for local convergence of a 40-chain (eq. 48) */
    ck_assert_msg(sweeps[0] > 400, "local needed only %d sweeps", sweeps[0]);
    ck_assert_msg(sweeps[1] < sweeps[0], "global %d sweeps, local %d", sweeps[1], sweeps[0]);
    cd_solver_free(&S);
}
END_TEST

/* Slow: the N_I = 40 wave test is not a lucky seed (ten seeds, random and jacobi), and
 * omega ~ sqrt(N_I) holds at N_I = 80. */
START_TEST(slow_wave_test_seeds_and_N_I)
{
    const double q_random = (4 * sqrt(exp(1.0)) - 5) / 2;
    for (unsigned seed = 100; seed < 110; seed++) {
        wave_result r = wave_test_full("random", q_random, 1500, 40, seed);
        ck_assert_msg(fabs(r.omega / r.omega_th - 1) < 0.03 && fabs(r.tau / r.tau_th - 1) < 0.20,
                      "seed %u: omega %g (theory %g), tau %g (theory %g)", seed, r.omega,
                      r.omega_th, r.tau, r.tau_th);
    }
    wave_result r = wave_test_full("random", q_random, 1500, 80, 1);
    ck_assert_msg(fabs(r.omega / r.omega_th - 1) < 0.03 && fabs(r.tau / r.tau_th - 1) < 0.20,
                  "N_I = 80: omega %g (theory %g), tau %g (theory %g)", r.omega, r.omega_th, r.tau,
                  r.tau_th);
}
END_TEST

/* Same config and seed: bitwise identical final state; another seed: a different one. */
static double final_x_sum(uint64_t seed)
{
    char ini[1024];
    snprintf(ini, sizeof ini,
             "[system]\ndimension = 2\ndt = 0.01\nsteps = 1\nseed = %llu\ngravity = 0 -1 0\n"
             "[solver]\nsweep = random\niterations = 10\n"
             "[particles]\nsource = random\ncount = 60\nradius_min = 0.5\nradius_max = 1.0\n"
             "box_min = 0 0 0\nbox_max = 20 20 0\n"
             "[contact]\nfriction = 0.3\n"
             "[plane.floor]\npoint = 0 0 0\nnormal = 0 1 0\n"
             "[plane.left]\npoint = 0 0 0\nnormal = 1 0 0\n"
             "[plane.right]\npoint = 20 0 0\nnormal = -1 0 0\n",
             (unsigned long long)seed);
    sim sm;
    sim_open(&sm, ini, seed);
    sim_steps(&sm, 300);
    double s = 0.0;
    for (int i = 0; i < sm.W.P.n; i++)
        s += sm.W.P.x[i].x * (i + 1) + sm.W.P.x[i].y;
    sim_close(&sm);
    return s;
}

START_TEST(determinism_same_seed)
{
    double a = final_x_sum(11), b = final_x_sum(11), c = final_x_sum(12);
    ck_assert_msg(a == b, "same seed, different results: %.17g %.17g", a, b);
    ck_assert_msg(a != c, "different seeds gave the same result");
}
END_TEST

/* A settling 2D pile under gravity with the local criterion: no particle leaves the box through
 * a wall, overlaps stay small and the kinetic energy decays. */
START_TEST(invariant_pile_in_box)
{
    const char *ini =
        "[system]\ndimension = 2\ndt = 0.01\nsteps = 1\nseed = 3\ngravity = 0 -10 0\n"
        "[solver]\ncriterion = local\nepsilon = 1e-4\ndelta = 1e-9\niterations = 2000\n"
        "[particles]\nsource = random\ncount = 80\nradius_min = 0.5\nradius_max = 1.0\n"
        "box_min = 0 0 0\nbox_max = 15 30 0\n"
        "[contact]\nfriction = 0.5\n"
        "[plane.floor]\npoint = 0 0 0\nnormal = 0 1 0\n"
        "[plane.left]\npoint = 0 0 0\nnormal = 1 0 0\n"
        "[plane.right]\npoint = 15 0 0\nnormal = -1 0 0\n";
    sim sm;
    sim_open(&sm, ini, 3);
    double max_ov = 0.0;
    for (int k = 0; k < 800; k++) {
        sim_steps(&sm, 1);
        max_ov = fmax(max_ov, sm.st.max_overlap);
    }
    for (int i = 0; i < sm.W.P.n; i++) {
        double r = sm.W.P.r[i];
        ck_assert_msg(sm.W.P.x[i].y > r - 1e-3 && sm.W.P.x[i].x > r - 1e-3 &&
                          sm.W.P.x[i].x < 15 - r + 1e-3,
                      "particle %d left the box", i);
    }
    /* 1% of the smallest radius: generous for eps = 1e-4; a missing contact gives ~r */
    ck_assert_msg(max_ov < 0.005, "max overlap %g", max_ov);
    /* after 8 time units the pile is at rest: kinetic energy per particle < 1e-6 of m g r */
    ck_assert_msg(world_kinetic_energy(&sm.W) / sm.W.P.n < 1e-6 * 10, "kinetic energy %g",
                  world_kinetic_energy(&sm.W));
    sim_close(&sm);
}
END_TEST

/* The colored sweep on the wave test: omega within 3% of eq. (58) with the measured q = 0.751
 * (measured on seeds 1-3, checked here on seed 7), tau within 20% of eq. (60). */
START_TEST(analytic_wave_test_colored_sweep)
{
    wave_result r = wave_test("colored", EQUIV_Q_COLORED_MEASURED, 1500);
    ck_assert_msg(fabs(r.omega / r.omega_th - 1) < 0.03, "omega %g vs %g", r.omega, r.omega_th);
    ck_assert_msg(fabs(r.tau / r.tau_th - 1) < 0.20, "tau %g vs %g", r.tau, r.tau_th);
}
END_TEST

/* The same with the colouring in hashed order (solver.color_priority = hashed): omega and tau
 * as eqs. (58) and (60) with its own measured q = 0.770 (seeds 1-3; seed 7 here). */
START_TEST(analytic_wave_test_colored_hashed)
{
    wave_result r =
        wave_test("colored\ncolor_priority = hashed", EQUIV_Q_COLORED_HASHED_MEASURED, 1500);
    ck_assert_msg(fabs(r.omega / r.omega_th - 1) < 0.03, "omega %g vs %g", r.omega, r.omega_th);
    ck_assert_msg(fabs(r.tau / r.tau_th - 1) < 0.20, "tau %g vs %g", r.tau, r.tau_th);
}
END_TEST

/* The chain of the wave test, its first disk at the wall, coloured in both orders
 * (cd_color_order): in key order red-black, two colours (the wall's contact, then the pairs
 * along the chain); in hashed order the wall's contact first and the pairs in another order,
 * three colours. */
START_TEST(unit_color_order_chain)
{
    const char *ini = "[system]\ndimension = 1\ndt = 1\nsteps = 1\nseed = 1\n"
                      "[solver]\nsweep = colored\ncriterion = fixed\niterations = 2\n"
                      "[particles]\ncount = 50\nradius = 0.5\nmass = 1\norigin = 0.5 0 0\n"
                      "[contact]\ndetect_gap = 0.5\n"
                      "[plane.wall]\npoint = 0 0 0\nnormal = 1 0 0\n";
    sim sm;
    sim_open(&sm, ini, 1);
    sim_steps(&sm, 1);
    const contact_list *L = &sm.S.C;
    ck_assert_int_eq(L->n, 50); /* 49 pairs and the wall */
    int *key = cd_color_order(L, sm.W.n_walls, 0), *hashed = cd_color_order(L, sm.W.n_walls, 1);
    ck_assert_ptr_nonnull(key);
    ck_assert_ptr_nonnull(hashed);
    int moved = 0;
    for (int k = 0; k < L->n; k++) {
        ck_assert_int_eq(key[k], k);
        moved += hashed[k] != k;
    }
    ck_assert_int_lt(L->c[hashed[0]].i, 0); /* the wall's contact first */
    ck_assert_int_gt(moved, 40);
    diag e;
    ck_assert_int_eq(cd_color_contacts(&sm.W, &sm.S, 0, &e), CDLAB_OK);
    ck_assert_int_eq(sm.S.n_colors, 2);
    ck_assert_int_eq(cd_color_contacts(&sm.W, &sm.S, 1, &e), CDLAB_OK);
    ck_assert_int_eq(sm.S.n_colors, 3);
    free(key);
    free(hashed);
    sim_close(&sm);
}
END_TEST

/* A 2D pile of 1500 disks in a box with a piston on top and friction: */
static const char *COLORED_PILE =
    "[system]\ndimension = 2\ndt = 0.01\nsteps = 1\ngravity = 0 -1 0\nseed = 5\n"
    "[solver]\nsweep = colored\ncriterion = fixed\niterations = 30\n"
    "[particles]\nsource = random\ncount = 1500\nradius_min = 0.4\nradius_max = 0.5\n"
    "box_min = 0 0 0\nbox_max = 40 60 0\n"
    "[contact]\nfriction = 0.3\n"
    "[plane.floor]\npoint = 0 0 0\nnormal = 0 1 0\n"
    "[plane.left]\npoint = 0 0 0\nnormal = 1 0 0\n"
    "[plane.right]\npoint = 40 0 0\nnormal = -1 0 0\n"
    "[piston.top]\npoint = 0 60 0\nnormal = 0 -1 0\nmass = 100\nforce = 50\nvelocity = 4\n";

/* The colour of each contact is the lowest that no earlier contact (in the colouring's order,
 * cd_color_order) at one of its movable bodies has: the greedy colouring in that order. */
static void check_greedy(const sim *sm, int hashed)
{
    const contact_list *L = &sm->S.C;
    int n = sm->W.P.n, nw = sm->W.n_walls;
    int *ord = cd_color_order(L, nw, hashed);
    ck_assert_ptr_nonnull(ord);
    /* per body the colours its contacts took so far (at most 256 here) */
    uint64_t(*used)[4] = calloc((size_t)(n + nw), sizeof *used);
    ck_assert_int_le(sm->S.n_colors, 256);
    for (int q = 0; q < L->n; q++) {
        const contact *c = &L->c[ord[q]];
        int b[2], nb = 0;
        if (!sm->W.P.frozen[c->j])
            b[nb++] = c->j;
        if (c->i >= 0 ? !sm->W.P.frozen[c->i]
                      : sm->W.walls[contact_wall_index(c)].kind == WALL_PISTON)
            b[nb++] = c->i >= 0 ? c->i : n + contact_wall_index(c);
        int want = 0;
        while (want < 256 && ((nb > 0 && (used[b[0]][want / 64] >> (want % 64) & 1)) ||
                              (nb > 1 && (used[b[1]][want / 64] >> (want % 64) & 1))))
            want++;
        ck_assert_msg(sm->S.color_of[ord[q]] == want, "contact %d: colour %d, the greedy one %d",
                      ord[q], sm->S.color_of[ord[q]], want);
        for (int t = 0; t < nb; t++)
            used[b[t]][want / 64] |= 1ull << (want % 64);
    }
    free(used);
    free(ord);
}

/* ... after 150 steps (settled into contact), in key order and in hashed order: the colouring
 * is proper (no two contacts of a colour share a particle or the piston; fixed walls do not
 * count), every contact is in exactly one colour, the piston's contacts all have different
 * colours, and it is the greedy colouring in its order (the two orders' colourings differ). */
START_TEST(unit_colored_sweep_proper_colouring)
{
    for (int hashed = 0; hashed <= 1; hashed++) {
        char ini[2048];
        snprintf(ini, sizeof ini, "%s[solver]\ncolor_priority = %s\n", COLORED_PILE,
                 hashed ? "hashed" : "key");
        sim sm;
        sim_open(&sm, ini, 5);
        sim_steps(&sm, 150);
        cd_solver *S = &sm.S;
        const contact_list *L = &sm.S.C;
        ck_assert_int_gt(L->n, 1000);
        ck_assert_int_eq(S->colored_at_step, sm.W.step - 1);
        int n = sm.W.P.n, nw = sm.W.n_walls;
        int *seen = calloc((size_t)L->n, sizeof *seen);
        int *owner = malloc((size_t)(n + nw) * sizeof *owner);
        int piston_contacts = 0;
        for (int c = 0; c < S->n_colors; c++) {
            for (int b = 0; b < n + nw; b++)
                owner[b] = -1;
            for (int q = S->color_start[c]; q < S->color_start[c + 1]; q++) {
                int k = S->perm[q];
                seen[k]++;
                const contact *ct = &L->c[k];
                ck_assert_msg(owner[ct->j] < 0, "colour %d: particle %d in two contacts", c, ct->j);
                owner[ct->j] = k;
                int b0 = ct->i >= 0 ? ct->i : n + contact_wall_index(ct);
                int movable = ct->i >= 0 || sm.W.walls[contact_wall_index(ct)].kind == WALL_PISTON;
                if (movable) {
                    ck_assert_msg(owner[b0] < 0, "colour %d: body %d in two contacts", c, b0);
                    owner[b0] = k;
                }
                piston_contacts +=
                    ct->i < 0 && sm.W.walls[contact_wall_index(ct)].kind == WALL_PISTON;
            }
        }
        for (int k = 0; k < L->n; k++)
            ck_assert_int_eq(seen[k], 1);
        ck_assert_int_gt(piston_contacts, 5);
        ck_assert_int_ge(S->n_colors, piston_contacts);
        check_greedy(&sm, hashed);
        /* the other order's colouring of the same list is another one */
        int *mine = malloc((size_t)L->n * sizeof *mine), differ = 0;
        memcpy(mine, S->color_of, (size_t)L->n * sizeof *mine);
        diag e;
        ck_assert_int_eq(cd_color_contacts(&sm.W, S, !hashed, &e), CDLAB_OK);
        for (int k = 0; k < L->n; k++)
            differ += S->color_of[k] != mine[k];
        ck_assert_int_gt(differ, L->n / 10);
        free(mine);
        free(seen);
        free(owner);
        sim_close(&sm);
    }
}
END_TEST

/* The two runs' particles (same_particles) and contact forces are the same, bit for bit. */
static void same_state(const sim *a, const sim *b)
{
    same_particles(&a->W, &b->W);
    ck_assert_int_eq(a->S.C.n, b->S.C.n);
    for (int k = 0; k < a->S.C.n; k++)
        ck_assert_int_eq(memcmp(&a->S.C.c[k].R, &b->S.C.c[k].R, sizeof(vec3)), 0);
}

/* The colored sweep does not depend on the thread count: 40 steps of the pile at 1 and 2
 * threads give bit-identical positions, velocities, forces and piston state. */
START_TEST(invariant_colored_threads_bit_identical)
{
#ifdef _OPENMP
    int saved = omp_get_max_threads();
    sim a, b;
    omp_set_num_threads(1);
    sim_open(&a, COLORED_PILE, 5);
    sim_steps(&a, 40);
    omp_set_num_threads(2);
    sim_open(&b, COLORED_PILE, 5);
    sim_steps(&b, 40);
    omp_set_num_threads(saved);
    same_state(&a, &b);
    ck_assert(a.W.walls[3].s == b.W.walls[3].s && a.W.walls[3].u == b.W.walls[3].u);
    ck_assert(a.st.residual == b.st.residual);
    sim_close(&a);
    sim_close(&b);
#endif
}
END_TEST

/* The Jacobi sweep's new forces are made on threads (above CDLAB_PARALLEL_MIN contacts): a chain
 * of 20,000 disks pushed at its end against a wall, 6 steps of 30 sweeps at 1, 2 and 3 threads,
 * bit for bit (particles and forces). */
START_TEST(invariant_jacobi_threads_bit_identical)
{
#ifdef _OPENMP
    static const char *CHAIN =
        "[system]\ndimension = 1\ndt = 1.0\nsteps = 6\nseed = 3\n"
        "[solver]\nsweep = jacobi\ncriterion = fixed\niterations = 30\n"
        "[particles]\nsource = chain\ncount = 20000\nradius = 0.5\nmass = 1.0\n"
        "spacing = 0.0\norigin = 1.5 0 0\n"
        "[contact]\nfriction = 0.0\ndetect_gap = 0.5\n"
        "[plane.wall]\npoint = 0 0 0\nnormal = 1 0 0\n"
        "[load]\nparticles = -1\nforce = -0.05 0 0\nstart = 0\n";
    int saved = omp_get_max_threads();
    sim ref;
    omp_set_num_threads(1);
    sim_open(&ref, CHAIN, 3);
    sim_steps(&ref, 6);
    ck_assert_int_gt(ref.S.C.n, CDLAB_PARALLEL_MIN);
    for (int t = 2; t <= 3; t++) {
        sim a;
        omp_set_num_threads(t);
        sim_open(&a, CHAIN, 3);
        sim_steps(&a, 6);
        same_state(&a, &ref);
        sim_close(&a);
    }
    /* the forces moved: the chain is loaded, not at rest */
    double sum = 0.0;
    for (int k = 0; k < ref.S.C.n; k++)
        sum += fabs(ref.S.C.c[k].R.x);
    ck_assert(sum > 0.0);
    omp_set_num_threads(saved);
    sim_close(&ref);
#endif
}
END_TEST

/* The random sweep on threads (deterministic reservations) is the one-thread sweep, bit for bit:
 * the pile with its piston (after 60 steps, settled into contact: the piston's contacts are
 * reserved atomically, as every contact across the threads' stretches), and a 2D lattice of
 * 30 x 30 touching disks whose bottom row is frozen (a frozen particle is no body to reserve),
 * 20 steps, at 2, 3 and 7 threads against 1. The rounds are made to run on these small lists
 * (cd_solver.dr_min_contacts = 1; runs take them from 32,768 contacts), and the test checks
 * that they ran. Particles, forces, the piston and the last sweep's residual. */
START_TEST(invariant_random_threads_bit_identical)
{
#ifdef _OPENMP
    char pile[2048], lattice[1024], file[] = "/tmp/cdlab_lattXXXXXX";
    snprintf(pile, sizeof pile, "%s", COLORED_PILE);
    char *sw = strstr(pile, "sweep = colored");
    ck_assert_ptr_nonnull(sw);
    memcpy(sw, "sweep = random ", 15);
    static char rows[30 * 30 * 96];
    size_t at = 0;
    for (int y = 0; y < 30; y++)
        for (int x = 0; x < 30; x++)
            at += (size_t)snprintf(rows + at, sizeof rows - at, "%d.5 %d.5 0 1 0 0 0 0 0 0 %d\n", x,
                                   y, y == 0);
    temp_text_file(file, rows);
    snprintf(lattice, sizeof lattice,
             "[system]\ndimension = 2\ndt = 0.01\nsteps = 1\ngravity = 0 -10 0\nseed = 9\n"
             "[solver]\nsweep = random\ncriterion = fixed\niterations = 20\n"
             "[particles]\nsource = file\nformat = chute\nfile = %s\nmass = 1\n"
             "[contact]\nfriction = 0.3\n"
             "[plane.left]\npoint = 0 0 0\nnormal = 1 0 0\n"
             "[plane.right]\npoint = 30 0 0\nnormal = -1 0 0\n",
             file);
    const char *cases[] = {pile, lattice};
    const long steps[] = {60, 20};
    int saved = omp_get_max_threads();
    for (int c = 0; c < 2; c++) {
        sim ref;
        omp_set_num_threads(1);
        sim_open(&ref, cases[c], 5);
        sim_steps(&ref, steps[c]);
        ck_assert_int_gt(ref.S.C.n, 1000);
        const int threads[] = {2, 3, 7};
        for (int k = 0; k < 3; k++) {
            sim a;
            omp_set_num_threads(threads[k]);
            sim_open(&a, cases[c], 5);
            a.S.dr_min_contacts = 1;
            sim_steps(&a, steps[c]);
            ck_assert_msg(a.S.dr_threads == threads[k], "case %d: the rounds ran on %d threads", c,
                          a.S.dr_threads);
            same_state(&a, &ref);
            for (int w = 0; w < ref.W.n_walls; w++)
                ck_assert(a.W.walls[w].s == ref.W.walls[w].s && a.W.walls[w].u == ref.W.walls[w].u);
            ck_assert(a.st.residual == ref.st.residual);
            sim_close(&a);
        }
        if (c == 1) /* the frozen row stayed put */
            ck_assert(ref.W.P.frozen[0] + ref.W.P.frozen[29] == 2 && ref.W.P.v[0].y == 0.0);
        sim_close(&ref);
    }
    omp_set_num_threads(saved);
    unlink(file);
#endif
}
END_TEST

/* Only the Jacobi sweep has a buffer of new forces (24 bytes per contact of address space,
 * which ulimit -v counts): after 20 steps of the pile, the colored and random sweeps have none,
 * the Jacobi sweep one for every contact. */
START_TEST(unit_jacobi_buffer_only_for_jacobi)
{
    const char *sweeps[] = {"colored", "random", "jacobi"};
    for (int k = 0; k < 3; k++) {
        char ini[2048];
        const char *at = strstr(COLORED_PILE, "sweep = colored");
        ck_assert_ptr_nonnull(at);
        snprintf(ini, sizeof ini, "%.*ssweep = %s%s", (int)(at - COLORED_PILE), COLORED_PILE,
                 sweeps[k], at + strlen("sweep = colored"));
        sim sm;
        sim_open(&sm, ini, 5);
        sim_steps(&sm, 20);
        ck_assert_int_gt(sm.S.C.n, 0);
        if (k < 2)
            ck_assert_msg(sm.S.R_next == NULL && sm.S.R_next_cap == 0, "%s: a Jacobi buffer",
                          sweeps[k]);
        else
            ck_assert_int_ge(sm.S.R_next_cap, sm.S.C.n);
        sim_close(&sm);
    }
}
END_TEST

/* A hexagonal lattice of 138 equal discs (d = 1, density 1) between a base, side walls and a
 * piston of mass 100 pushed by 5 from rest, friction 0.3 (the file path_out: "x y z r" rows);
 * the piston rings. */
static const char *HEX_INI =
    "[system]\ndimension = 2\ndt = 0.02\nsteps = 200\nseed = 7\n"
    "[solver]\nsweep = random\ncriterion = fixed\niterations = 20\n"
    "[particles]\nsource = file\nfile = %s\ndensity = 1\n"
    "[contact]\nfriction = 0.3\ndetect_gap = 0.25\n"
    "[plane.base]\npoint = 0 0 0\nnormal = 0 1 0\n[plane.left]\npoint = 0 0 0\nnormal = 1 0 0\n"
    "[plane.right]\npoint = 12 0 0\nnormal = -1 0 0\n"
    "[piston.top]\npoint = 0 %.17g 0\nnormal = 0 -1 0\nmass = 100\nforce = 5\n"
    "[output]\nevery = 0\n";

static double hex_lattice(char *path)
{
    strcpy(path, "/tmp/cdlab_hexXXXXXX");
    char text[16384];
    size_t len = 0;
    const double h = sqrt(3.0) / 2.0;
    for (int j = 0; j < 12; j++)
        for (int i = 0; i < 12 - (j % 2); i++)
            len += (size_t)snprintf(text + len, sizeof text - len, "%.17g %.17g 0 0.5\n",
                                    0.5 + i + 0.5 * (j % 2), 0.5 + j * h);
    temp_text_file(path, text);
    return 0.5 + 11 * h + 0.5;
}

/* The piston's damped sine, fitted over 0.1 <= t <= 3 (the ring after the push). */
static damped_sine piston_ring(const char *out)
{
    double *t, *x;
    long n, m;
    diag err;
    ck_assert_msg(h5in_read_doubles(out, "/series/t", &t, &n, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_msg(h5in_read_doubles(out, "/series/piston_position", &x, &m, &err) == CDLAB_OK, "%s",
                  err.msg);
    ck_assert_int_eq(n, m);
    long k0 = 0, k1 = 0;
    while (k0 < n && t[k0] < 0.1)
        k0++;
    for (k1 = k0; k1 < n && t[k1] <= 3.0;)
        k1++;
    damped_sine f;
    ck_assert(fit_damped_sine(t + k0, x + k0, (int)(k1 - k0), &f, &err) == CDLAB_OK);
    free(t);
    free(x);
    return f;
}

/* A config run as given (mode and dt overridden with --set when twin), into a temporary file. */
static void run_hex(const char *ini, int twin, char *out)
{
    config c;
    diag err;
    ck_assert_int_eq(config_load_string(&c, ini, "hex.ini", &err), CDLAB_OK);
    if (twin) {
        ck_assert_int_eq(config_set(&c, "system.mode=dem", &err), CDLAB_OK);
        ck_assert_int_eq(config_set(&c, "system.dt=2e-4", &err), CDLAB_OK);
    }
    strcpy(out, "/tmp/cdlab_hexoutXXXXXX");
    int fd = mkstemp(out);
    close(fd);
    unlink(out);
    run_summary sum;
    run_hooks hk = {0};
    ck_assert_msg(run_simulation(&c, out, &hk, &sum, &err) == CDLAB_OK, "%s", err.msg);
    config_free(&c);
}

/* The DEM twin of a frictional CD run (issue: every frictional CD config was refused, "k_t = 0"):
 * its tangential spring and dashpot are the normal ones times m_t/m_n (1/3 for discs: the
 * tangential block's share, docs/physics.md), it runs the CD run's physical time (system.steps
 * scaled by dt_CD/dt), and its piston rings as the CD run's: omega and tau within 5 %
 * (measured 0.1 % and 0.5 %; k_t = kappa without a tangential dashpot gave +6 % and -14 %). */
START_TEST(analytic_frictional_twin_rings_as_cd)
{
    char file[64], ini[4096], cd[64], dem[64];
    double top = hex_lattice(file);
    snprintf(ini, sizeof ini, HEX_INI, file, top);
    run_hex(ini, 0, cd);
    run_hex(ini, 1, dem);
    h5in *h;
    diag err;
    char *v = NULL;
    double kn, kt, gn, gt;
    long long steps;
    ck_assert_int_eq(h5in_open(&h, dem, &err), CDLAB_OK);
    const char *keys[] = {"dem.k_n", "dem.k_t", "dem.damping_normal", "dem.damping_tangential",
                          "system.steps"};
    double *vals[] = {&kn, &kt, &gn, &gt, NULL};
    for (int k = 0; k < 5; k++) {
        ck_assert_msg(h5in_attr_str(h, "/parameters", keys[k], &v, &err) == CDLAB_OK, "%s",
                      err.msg);
        if (vals[k])
            *vals[k] = strtod(v, NULL);
        else
            steps = atoll(v);
        free(v);
    }
    h5in_close(h);
    ck_assert_msg(fabs(kt / kn - 1.0 / 3.0) < 1e-12 && fabs(gt / gn - 1.0 / 3.0) < 1e-12,
                  "k_t/k_n %g, gamma_t/gamma_n %g", kt / kn, gt / gn);
    ck_assert_int_eq(steps, 200 * 100); /* 200 steps of 0.02 in steps of 2e-4 */
    damped_sine a = piston_ring(cd), b = piston_ring(dem);
    ck_assert_msg(fabs(b.omega / a.omega - 1) < 0.05 && fabs(b.tau / a.tau - 1) < 0.05,
                  "CD omega %g tau %g, DEM twin omega %g tau %g", a.omega, a.tau, b.omega, b.tau);
    remove_output(cd);
    remove_output(dem);
    unlink(file);
}
END_TEST

/* A twin needs a fixed N_I: a CD config with a local criterion as a DEM run says so and how to
 * give one (it said "missing required key dem.k_n"). */
START_TEST(errors_twin_needs_fixed_count)
{
    char file[64], ini[4096];
    double top = hex_lattice(file);
    snprintf(ini, sizeof ini, HEX_INI, file, top);
    config c;
    diag err;
    ck_assert_int_eq(config_load_string(&c, ini, "hex.ini", &err), CDLAB_OK);
    ck_assert_int_eq(config_set(&c, "solver.criterion=local", &err), CDLAB_OK);
    ck_assert_int_eq(config_set(&c, "system.mode=dem", &err), CDLAB_OK);
    ck_assert_int_eq(config_set(&c, "system.dt=2e-4", &err), CDLAB_OK);
    ck_assert_int_eq(run_validate(&c, NULL, &err), CDLAB_ERR_CONFIG);
    ck_assert_msg(strstr(err.msg, "solver.criterion: is local: the DEM twin") &&
                      strstr(err.msg, "--set solver.criterion=fixed --set solver.iterations=N_I"),
                  "%s", err.msg);
    config_free(&c);
    unlink(file);
}
END_TEST

/* The solver interface (cd_method.h): the registry finds the sweeps by name; the step hands its
 * solver the contact list it detected and the budget p->iterations, and its cd_stats are the
 * solver's statistics (a stand-in solver that records what it was given and changes nothing);
 * a step without contacts does not call the solver. */
static struct {
    int calls, budget, contacts;
} probe_seen;

static status probe_solve(world *W, cd_solver *S, const cd_params *p, int budget,
                          cd_solve_stats *st, diag *err)
{
    (void)W, (void)p, (void)err;
    probe_seen.calls++;
    probe_seen.budget = budget;
    probe_seen.contacts = S->C.n;
    *st = (cd_solve_stats){.iterations = budget - 1, .converged = 0, .residual = 0.25};
    return CDLAB_OK;
}

START_TEST(unit_solver_interface)
{
    ck_assert_ptr_eq(cd_method_find("sweeps"), &cd_method_sweeps);
    ck_assert_ptr_null(cd_method_find("nosuch"));
    for (int k = 0; cd_methods[k]; k++)
        ck_assert(cd_methods[k]->name && cd_methods[k]->title && cd_methods[k]->solve);
    const cd_method probe = {.name = "probe", .title = "probe", .solve = probe_solve};
    const char *ini = "[system]\ndimension = 1\ndt = 1\nsteps = 1\n"
                      "[solver]\niterations = 17\n"
                      "[particles]\ncount = 6\nradius = 0.5\nmass = 1\norigin = 0.5 0 0\n"
                      "[plane.w]\npoint = 0 0 0\nnormal = 1 0 0\n";
    sim sm;
    sim_open(&sm, ini, 3);
    ck_assert_ptr_eq(sm.p.method, &cd_method_sweeps);
    sm.p.method = &probe;
    memset(&probe_seen, 0, sizeof probe_seen);
    sim_steps(&sm, 1);
    ck_assert_int_eq(probe_seen.calls, 1);
    ck_assert_int_eq(probe_seen.budget, 17);
    ck_assert_int_eq(probe_seen.contacts, 6);
    ck_assert_int_eq(sm.st.sweeps, 16);
    ck_assert_int_eq(sm.st.converged, 0);
    ck_assert(sm.st.residual == 0.25);
    sim_close(&sm);
    /* a lone particle far from the wall: no contacts, no call, converged after 0 iterations */
    const char *lone = "[system]\ndimension = 1\ndt = 1\nsteps = 1\n"
                       "[particles]\ncount = 1\nradius = 0.5\nmass = 1\norigin = 5 0 0\n"
                       "[plane.w]\npoint = 0 0 0\nnormal = 1 0 0\n";
    sim_open(&sm, lone, 3);
    sm.p.method = &probe;
    memset(&probe_seen, 0, sizeof probe_seen);
    sim_steps(&sm, 1);
    ck_assert_int_eq(probe_seen.calls, 0);
    ck_assert_int_eq(sm.st.sweeps, 0);
    ck_assert_int_eq(sm.st.converged, 1);
    sim_close(&sm);
}
END_TEST

Suite *cd_suite(void)
{
    Suite *s = suite_create("cd");
    TCase *tc = tcase_create("analytic");
    tcase_set_timeout(tc, TEST_TIMEOUT_SECONDS);
    tcase_add_test(tc, analytic_drop_on_plane);
    tcase_add_test(tc, analytic_incline_roll_and_slide);
    tcase_add_test(tc, analytic_head_on_collision);
    tcase_add_test(tc, invariant_angular_momentum_glancing_collision);
    tcase_add_test(tc, invariant_angular_momentum_pile);
    tcase_add_test(tc, analytic_wave_test_random_sweep);
    tcase_add_test(tc, analytic_wave_test_jacobi_sweep);
    tcase_add_test(tc, analytic_wave_test_forward_differs);
    tcase_add_test(tc, analytic_wave_test_colored_sweep);
    tcase_add_test(tc, unit_colored_sweep_proper_colouring);
    tcase_add_test(tc, analytic_wave_test_colored_hashed);
    tcase_add_test(tc, unit_color_order_chain);
    tcase_add_test(tc, analytic_piston_statics);
    tcase_add_test(tc, analytic_stress_column);
    tcase_add_test(tc, analytic_stress_box_mean);
    tcase_add_test(tc, io_dem_unstable_balance_warned);
    tcase_add_test(tc, analytic_piston_force_step);
    tcase_add_test(tc, analytic_frictional_twin_rings_as_cd);
    tcase_add_test(tc, errors_twin_needs_fixed_count);
    tcase_add_test(tc, unit_relaxed_q);
    tcase_add_test(tc, analytic_wave_test_relaxed_sweeps);
    tcase_add_test(tc, unit_force_steps_on_step_ends);
    tcase_add_test(tc, unit_missed_contacts_counted);
    tcase_add_test(tc, errors_local_delta_not_small);
    tcase_add_test(tc, io_unconverged_steps_counted);
    tcase_add_test(tc, analytic_cylinder_rest);
    tcase_add_test(tc, analytic_rolling_pendulum);
    tcase_add_test(tc, unit_random_sweep_is_fresh_permutation);
    tcase_add_test(tc, unit_body_records_match_particle_arrays);
    tcase_add_test(tc, unit_incremental_update_matches_shock_law);
    tcase_add_test(tc, unit_criteria_cap_and_global);
    tcase_add_test(tc, unit_jacobi_buffer_only_for_jacobi);
    tcase_add_test(tc, unit_solver_interface);
    suite_add_tcase(s, tc);
    TCase *td = tcase_create("determinism");
    tcase_set_timeout(td, TEST_TIMEOUT_SECONDS);
    tcase_add_test(td, determinism_same_seed);
    tcase_add_test(td, invariant_colored_threads_bit_identical);
    tcase_add_test(td, invariant_jacobi_threads_bit_identical);
    tcase_add_test(td, invariant_random_threads_bit_identical);
    suite_add_tcase(s, td);
    TCase *ts = tcase_create("slow");
    tcase_set_tags(ts, "slow");
    tcase_set_timeout(ts, TEST_TIMEOUT_SECONDS);
    tcase_add_test(ts, slow_wave_test_seeds_and_N_I);
    suite_add_tcase(s, ts);
    TCase *ti = tcase_create("invariant");
    tcase_set_timeout(ti, TEST_TIMEOUT_SECONDS);
    tcase_add_test(ti, invariant_pile_in_box);
    suite_add_tcase(s, ti);
    return s;
}

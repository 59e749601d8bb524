/* The CD step's solvers beyond Gauss-Seidel: the over-relaxed sweeps (solver.relaxation) and
 * the natural-map criterion, against analytic cases. */
#include "suites.h"

#include "nscd/cd_config.h"
#include "nscd/cd_method.h"
#include "dem/dem_config.h"
#include "parallel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The relaxations tried: under-relaxed, Gauss-Seidel, over-relaxed, near the limit 2. */
static const double omegas[] = {0.5, 1.0, 1.5, 1.9};
#define N_OMEGAS (int)(sizeof omegas / sizeof omegas[0])

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The column of five disks (m = 1, g = 10) resting on a floor, frictionless, with the solver of
 * the [solver] lines given (label names it): 20 steps to the natural map's eps, each converged;
 * the contact below disk k (from the top) carries k m g to 1e-9 relative, the disks are at rest
 * (|v| below 1e-9 g dt), the answers have no dilation (u_N below 1e-9 g dt); relaxation: the
 * omega the lines give. The iterations. */
static long resting_stack(const char *solver_lines, double relaxation, double eps,
                          const char *label)
{
    char text[1024];
    snprintf(text, sizeof text,
             "[system]\ndimension = 2\ndt = 0.01\nsteps = 1\ngravity = 0 -10 0\n"
             "[solver]\ncriterion = natural_map\nepsilon = %g\niterations = 100000\n%s"
             "[particles]\ncount = 5\nradius = 0.5\nmass = 1\nspacing = 0\n"
             "origin = 0 0.5 0\ndirection = 0 1 0\n"
             "[plane.floor]\npoint = 0 0 0\nnormal = 0 1 0\n",
             eps, solver_lines);
    sim sm;
    sim_open(&sm, text, 1);
    ck_assert_double_eq(sm.p.relaxation, relaxation); /* the lines were read */
    long iters = 0;
    for (int step = 0; step < 20; step++) {
        sim_steps(&sm, 1);
        ck_assert_msg(sm.st.converged && sm.st.residual <= eps,
                      "%s: step %d: residual %g after %d iterations", label, step, sm.st.residual,
                      sm.st.sweeps);
        ck_assert_msg(fabs(sm.st.dilation_max) <= 1e-9 * 10.0 * 0.01, "%s: dilation %g", label,
                      sm.st.dilation_max);
        iters += sm.st.sweeps;
    }
    double f[8];
    int n = 0;
    for (int k = 0; k < sm.S.C.n; k++)
        if (v3_norm(sm.S.C.c[k].R) > 0.0) {
            ck_assert_int_lt(n, 8);
            f[n++] = v3_norm(sm.S.C.c[k].R);
        }
    ck_assert_int_eq(n, 5);
    qsort(f, (size_t)n, sizeof f[0], cmp_double);
    for (int k = 0; k < n; k++)
        ck_assert_msg(fabs(f[k] - 10.0 * (k + 1)) <= 1e-9 * 10.0 * (k + 1),
                      "%s: force %d is %.17g, expected %g", label, k, f[k], 10.0 * (k + 1));
    for (int i = 0; i < 5; i++)
        ck_assert_msg(v3_norm(sm.W.P.v[i]) <= 1e-9 * 10.0 * 0.01, "%s: disk %d moves", label, i);
    sim_close(&sm);
    return iters;
}

/* A sphere on a 30 degree incline (gravity tilted) with the solver of the [solver] lines, to the
 * natural map's eps: it rolls at a = (5/7) g sin(theta) with mu = 0.3 and slides at
 * a = g (sin - mu cos) with mu = 0.1 (critical mu: (2/7) tan(theta) = 0.165), to tol relative
 * after 200 steps, the contact counted sliding only then, no normal velocity (below tol v). */
static void incline(const char *solver_lines, double eps, double tol, const char *label)
{
    const double theta = 30.0 * CDLAB_PI / 180.0, g = 9.81, dt = 1e-3;
    const double mus[] = {0.3, 0.1};
    for (int m = 0; m < 2; m++) {
        char ini[1024];
        snprintf(ini, sizeof ini,
                 "[system]\ndimension = 3\ndt = %g\nsteps = 1\ngravity = %.17g 0 %.17g\n"
                 "[solver]\ncriterion = natural_map\nepsilon = %g\niterations = 100000\n%s"
                 "[particles]\ncount = 1\nradius = 0.5\nmass = 2\norigin = 0 0 0.5\n"
                 "[contact]\nfriction = %g\n"
                 "[plane.slope]\npoint = 0 0 0\nnormal = 0 0 1\n",
                 dt, g * sin(theta), -g * cos(theta), eps, solver_lines, mus[m]);
        sim sm;
        sim_open(&sm, ini, 1);
        const long n = 200;
        sim_steps(&sm, n);
        double a = sm.W.P.v[0].x / (n * dt);
        double expect = m == 0 ? 5.0 / 7.0 * g * sin(theta) : g * (sin(theta) - 0.1 * cos(theta));
        ck_assert_msg(fabs(a / expect - 1.0) < tol, "%s mu %g: a = %.15g, expected %.15g", label,
                      mus[m], a, expect);
        ck_assert_int_eq(sm.st.n_sliding, m == 1);
        ck_assert_msg(fabs(sm.W.P.v[0].z) < tol * sm.W.P.v[0].x, "%s: v_n = %g", label,
                      sm.W.P.v[0].z);
        sim_close(&sm);
    }
}

/* Frictionless head-on collision of two equal spheres (1 and -0.5 m/s) with the solver of the
 * [solver] lines, to the natural map's eps: momentum conserved to round-off and the relative
 * normal velocity zero afterwards to tol (the perfectly inelastic shock). */
static void head_on(const char *solver_lines, double eps, double tol, const char *label)
{
    char text[1024];
    snprintf(text, sizeof text,
             "[system]\ndimension = 3\ndt = 0.01\nsteps = 1\n"
             "[solver]\ncriterion = natural_map\nepsilon = %g\niterations = 10000\n%s"
             "[particles]\ncount = 2\nradius = 0.5\nmass = 1.5\nspacing = 0.1\n"
             "origin = 0 0 0\ndirection = 1 0 0\n",
             eps, solver_lines);
    sim sm;
    sim_open(&sm, text, 1);
    world *W = &sm.W;
    W->P.v[0] = v3(1.0, 0, 0);
    W->P.v[1] = v3(-0.5, 0, 0);
    double p0 = W->P.m[0] * W->P.v[0].x + W->P.m[1] * W->P.v[1].x;
    sim_steps(&sm, 20); /* they meet after 0.1/1.5 = 0.067 s = 7 steps */
    double p1 = W->P.m[0] * W->P.v[0].x + W->P.m[1] * W->P.v[1].x;
    ck_assert_double_eq_tol(p1, p0, 1e-14 * fabs(p0) + 1e-15);
    ck_assert_msg(fabs(W->P.v[1].x - W->P.v[0].x) <= tol, "%s: v_rel = %g", label,
                  W->P.v[1].x - W->P.v[0].x);
    ck_assert_double_eq_tol(W->P.v[0].x, 0.25, tol);
    sim_close(&sm);
}

/* The resting stack (resting_stack) with every relaxation, to the natural map's 1e-12. */
START_TEST(analytic_relaxed_resting_stack)
{
    for (int o = 0; o < N_OMEGAS; o++) {
        char lines[64], label[32];
        snprintf(lines, sizeof lines, "relaxation = %g\n", omegas[o]);
        snprintf(label, sizeof label, "omega %g", omegas[o]);
        long sweeps = resting_stack(lines, omegas[o], 1e-12, label);
        fprintf(stderr,
                "  resting stack, omega %.1f: %ld sweeps in 20 steps to natural map 1e-12\n",
                omegas[o], sweeps);
    }
}
END_TEST

/* The incline (incline) with every relaxation, to 1e-9 relative at the natural map's 1e-13
 * (the exact one-contact solution of implicit Euler). */
START_TEST(analytic_relaxed_incline)
{
    for (int o = 0; o < N_OMEGAS; o++) {
        char lines[64], label[32];
        snprintf(lines, sizeof lines, "relaxation = %g\n", omegas[o]);
        snprintf(label, sizeof label, "omega %g", omegas[o]);
        incline(lines, 1e-13, 1e-9, label);
    }
}
END_TEST

/* The head-on collision (head_on) for every relaxation and every sweep order (jacobi up to 1),
 * to 1e-13 at the natural map's 1e-14. */
START_TEST(analytic_relaxed_head_on_collision)
{
    for (int o = 0; o < N_OMEGAS; o++)
        for (int sw = 0; sweep_order_names[sw]; sw++) {
            if (sw == SWEEP_JACOBI && omegas[o] > 1.0) /* refused: it diverges */
                continue;
            char lines[96], label[64];
            snprintf(lines, sizeof lines, "relaxation = %g\nsweep = %s\n", omegas[o],
                     sweep_order_names[sw]);
            snprintf(label, sizeof label, "omega %g %s", omegas[o], sweep_order_names[sw]);
            head_on(lines, 1e-14, 1e-13, label);
        }
}
END_TEST

/* The natural-map criterion on a 3D pile under a piston: every step stops at the first sweep
 * whose residual is at most epsilon, and the residual it reports is the one read afresh from
 * the bodies (cd_natural_map_now). The relaxed sweeps reach it in fewer sweeps here (printed,
 * not asserted: a property of this packing, not of the method). */
START_TEST(unit_natural_map_criterion)
{
    const char *ini = "[system]\ndimension = 3\ndt = 0.02\nsteps = 1\nseed = 5\n"
                      "gravity = 0 0 -10\n"
                      "[solver]\ncriterion = natural_map\nepsilon = 1e-6\niterations = 5000\n"
                      "relaxation = %g\n"
                      "[particles]\nsource = random\ncount = 60\nradius_min = 0.4\n"
                      "radius_max = 0.6\nbox_min = 0 0 0\nbox_max = 4 4 8\n"
                      "[contact]\nfriction = 0.4\n"
                      "[plane.base]\npoint = 0 0 0\nnormal = 0 0 1\n"
                      "[piston.top]\npoint = 0 0 8.5\nnormal = 0 0 -1\nmass = 5\nforce = 20\n";
    const double om[] = {1.0, 1.5};
    for (int o = 0; o < 2; o++) {
        char text[2048];
        snprintf(text, sizeof text, ini, om[o]);
        sim sm;
        sim_open(&sm, text, 5);
        long sweeps = 0;
        for (int step = 0; step < 40; step++) {
            sim_steps(&sm, 1);
            ck_assert_msg(sm.st.converged, "omega %g: step %d unconverged", om[o], step);
            ck_assert_msg(sm.st.residual <= 1e-6, "omega %g: residual %g", om[o], sm.st.residual);
            sweeps += sm.st.sweeps;
        }
        fprintf(stderr,
                "  60-sphere pile, omega %.1f: %ld sweeps in 40 steps to natural map 1e-6\n", om[o],
                sweeps);
        sim_close(&sm);
    }
}
END_TEST

/* Values out of range are refused, never clamped: omega in (0, 2), and at most 1 for the jacobi
 * sweep (relaxed Jacobi diverges above). A DEM twin of relaxed sweeps takes q(omega). */
START_TEST(errors_relaxation_range_and_twin)
{
    const char *bad[] = {"0", "2", "-0.5", "2.5", "nan", "1.2"};
    for (int k = 0; k < 6; k++) {
        char text[512];
        snprintf(text, sizeof text,
                 "[system]\ndimension = 2\ndt = 0.01\nsteps = 1\n[solver]\nrelaxation = %s\n%s"
                 "[particles]\ncount = 1\nradius = 0.5\nmass = 1\n",
                 bad[k], k == 5 ? "sweep = jacobi\n" : "");
        config c;
        diag err;
        ck_assert_int_eq(config_load_string(&c, text, "bad.ini", &err), CDLAB_OK);
        ck_assert_msg(run_validate(&c, NULL, &err) != CDLAB_OK, "relaxation %s taken", bad[k]);
        ck_assert_msg(strstr(err.msg, "solver.relaxation"), "message: %s", err.msg);
        if (k == 5)
            ck_assert_msg(strstr(err.msg, "jacobi"), "message: %s", err.msg);
        config_free(&c);
    }
    const char *twin = "[system]\nmode = dem\ndimension = 1\ndt = 1e-5\nsteps = 1\n"
                       "[solver]\nrelaxation = 1.5\niterations = 20\n[dem]\ncd_dt = 0.01\n"
                       "[particles]\ncount = 3\nradius = 0.5\nmass = 1\nspacing = 0\n";
    config c;
    diag err;
    ck_assert_int_eq(config_load_string(&c, twin, "twin.ini", &err), CDLAB_OK);
    world W;
    scene_info info;
    dem_setup d;
    equiv_twin t = {.present = 1, .sweep = SWEEP_RANDOM, .iterations = 20, .relaxation = 1.5};
    ck_assert_int_eq(scene_build(&c, &W, &info, &err), CDLAB_OK);
    ck_assert_msg(dem_config_read(&c, &W, &info, &t, &d, &err) == CDLAB_OK, "%s", err.msg);
    /* kappa = q(1.5) m N_I/dt^2 with the CD run's dt = 0.01 */
    ck_assert_double_eq_tol(d.p.law.k_n, (2 * exp(0.75) - 2.75) * 20 / 1e-4, 1e-6);
    ck_assert(d.cd_relaxation == 1.5);
    world_free(&W);
    config_free(&c);
}
END_TEST

/* The assembled solvers (solver.method), each with its [solver] lines: APGD with De Saxce's
 * outer fixed point, and Newton from the warm start and after two sweeps. */
static const char *const assembled[] = {
    "method = apgd\n",
    "method = newton\n",
    "method = newton\npresweeps = 2\nsweep = forward\n",
};
#define N_ASSEMBLED (int)(sizeof assembled / sizeof assembled[0])

/* The resting stack (resting_stack) with every assembled solver, to the natural map's 1e-11. */
START_TEST(analytic_assembled_resting_stack)
{
    for (int m = 0; m < N_ASSEMBLED; m++) {
        long iters = resting_stack(assembled[m], 1.0, 1e-11, assembled[m]);
        fprintf(stderr, "  resting stack, %.*s: %ld iterations in 20 steps to natural map 1e-11\n",
                (int)strcspn(assembled[m], "\n"), assembled[m], iters);
    }
}
END_TEST

/* The incline (incline) with every assembled solver, to 1e-8 relative at the natural map's
 * 1e-12. */
START_TEST(analytic_assembled_incline)
{
    for (int m = 0; m < N_ASSEMBLED; m++)
        incline(assembled[m], 1e-12, 1e-8, assembled[m]);
}
END_TEST

/* Anitescu's convex relaxation (apgd, desaxce = false) on the sliding incline: in the first
 * step the contact separates at u_N = mu |u_T| (the relaxation's dilation), measured on the
 * sphere: its normal velocity is mu times the contact point's slip, to 1e-6 relative, and the
 * step's dilation figures say so; with De Saxce's fixed point (desaxce = true) u_N is zero. */
START_TEST(analytic_apgd_relaxation_dilation)
{
    const double theta = 30.0 * CDLAB_PI / 180.0, g = 9.81, dt = 1e-3, mu = 0.1;
    for (int ds = 0; ds < 2; ds++) {
        char ini[1024];
        snprintf(ini, sizeof ini,
                 "[system]\ndimension = 3\ndt = %g\nsteps = 1\ngravity = %.17g 0 %.17g\n"
                 "[solver]\nmethod = apgd\ndesaxce = %s\ncriterion = natural_map\n"
                 "epsilon = 1e-12\niterations = 100000\n"
                 "[particles]\ncount = 1\nradius = 0.5\nmass = 2\norigin = 0 0 0.5\n"
                 "[contact]\nfriction = %g\n"
                 "[plane.slope]\npoint = 0 0 0\nnormal = 0 0 1\n",
                 dt, g * sin(theta), -g * cos(theta), ds ? "true" : "false", mu);
        sim sm;
        sim_open(&sm, ini, 1);
        sim_steps(&sm, 1);
        double slip = sm.W.P.v[0].x - 0.5 * sm.W.P.w[0].y, vn = sm.W.P.v[0].z;
        ck_assert_double_gt(slip, 0.0);
        if (ds) {
            ck_assert_msg(fabs(vn) <= 1e-9 * slip, "desaxce: v_n = %g, slip %g", vn, slip);
        } else {
            ck_assert_msg(fabs(vn / (mu * slip) - 1.0) < 1e-6,
                          "relaxation: v_n = %.12g, mu slip %.12g", vn, mu * slip);
            ck_assert_double_eq_tol(sm.st.dilation_mean, vn, 1e-6 * vn);
            ck_assert_double_eq_tol(sm.st.dilation_max, vn, 1e-6 * vn);
        }
        sim_close(&sm);
    }
}
END_TEST

/* The head-on collision (head_on) with every assembled solver, to 1e-12 at the natural map's
 * 1e-13. */
START_TEST(analytic_assembled_head_on_collision)
{
    for (int m = 0; m < N_ASSEMBLED; m++)
        head_on(assembled[m], 1e-13, 1e-12, assembled[m]);
}
END_TEST

/* A 3D pile under a piston with every assembled solver, a fixed count of 30 iterations: the
 * same bits on 1, 2 and 3 threads (positions, velocities and forces after 15 steps). */
START_TEST(determinism_assembled_threads)
{
    const char *ini = "[system]\ndimension = 3\ndt = 0.02\nsteps = 1\nseed = 5\n"
                      "gravity = 0 0 -10\n"
                      "[solver]\ncriterion = fixed\niterations = 30\n%s"
                      "[particles]\nsource = random\ncount = 60\nradius_min = 0.4\n"
                      "radius_max = 0.6\nbox_min = 0 0 0\nbox_max = 4 4 8\n"
                      "[contact]\nfriction = 0.4\n"
                      "[plane.base]\npoint = 0 0 0\nnormal = 0 0 1\n"
                      "[piston.top]\npoint = 0 0 8.5\nnormal = 0 0 -1\nmass = 5\nforce = 20\n";
    int saved = cdlab_threads();
    for (int m = 0; m < N_ASSEMBLED; m++) {
        char text[2048];
        snprintf(text, sizeof text, ini, assembled[m]);
        vec3 ref[120];
        for (int t = 1; t <= 3; t++) {
            cdlab_set_threads(t);
            sim sm;
            sim_open(&sm, text, 5);
            sim_steps(&sm, 15);
            ck_assert_int_eq(sm.W.P.n, 60);
            for (int i = 0; i < 60; i++) {
                if (t == 1) {
                    ref[2 * i] = sm.W.P.x[i];
                    ref[2 * i + 1] = sm.W.P.v[i];
                }
                ck_assert_msg(memcmp(&ref[2 * i], &sm.W.P.x[i], sizeof(vec3)) == 0 &&
                                  memcmp(&ref[2 * i + 1], &sm.W.P.v[i], sizeof(vec3)) == 0,
                              "%s: particle %d differs on %d threads", assembled[m], i, t);
            }
            sim_close(&sm);
        }
    }
    cdlab_set_threads(saved);
}
END_TEST

/* Eqs. 35-36 stop the assembled solvers too, on the change of the impulses over one iteration:
 * the resting column of five disks (resting_stack) with every assembled solver under
 * criterion = local and global, epsilon 1e-12 (delta 0): 20 steps, each converged with the
 * criterion's measure <= epsilon within 100,000 iterations, and the contact below disk k carries
 * k m g to 1e-8 relative (the change criteria stop where the iterates stall, not at a measured
 * distance from the answer: a looser bound than the natural map's 1e-9). */
START_TEST(analytic_assembled_change_criteria)
{
    static const char *const crits[] = {"local", "global"};
    static const char *const label[N_ASSEMBLED] = {"apgd", "newton", "newton, 2 presweeps"};
    for (int m = 0; m < N_ASSEMBLED; m++)
        for (int k = 0; k < 2; k++) {
            char text[1024];
            snprintf(text, sizeof text,
                     "[system]\ndimension = 2\ndt = 0.01\nsteps = 1\ngravity = 0 -10 0\n"
                     "[solver]\ncriterion = %s\nepsilon = 1e-12\ndelta = 0\n"
                     "iterations = 100000\n%s"
                     "[particles]\ncount = 5\nradius = 0.5\nmass = 1\nspacing = 0\n"
                     "origin = 0 0.5 0\ndirection = 0 1 0\n"
                     "[plane.floor]\npoint = 0 0 0\nnormal = 0 1 0\n",
                     crits[k], assembled[m]);
            sim sm;
            sim_open(&sm, text, 1);
            long iters = 0;
            for (int step = 0; step < 20; step++) {
                sim_steps(&sm, 1);
                ck_assert_msg(sm.st.converged && sm.st.residual <= 1e-12,
                              "%s, %s: step %d: measure %g after %d iterations", label[m], crits[k],
                              step, sm.st.residual, sm.st.sweeps);
                iters += sm.st.sweeps;
            }
            double f[8];
            int n = 0;
            for (int c = 0; c < sm.S.C.n; c++)
                if (v3_norm(sm.S.C.c[c].R) > 0.0) {
                    ck_assert_int_lt(n, 8);
                    f[n++] = v3_norm(sm.S.C.c[c].R);
                }
            ck_assert_int_eq(n, 5);
            qsort(f, (size_t)n, sizeof f[0], cmp_double);
            for (int c = 0; c < n; c++)
                ck_assert_msg(fabs(f[c] - 10.0 * (c + 1)) <= 1e-8 * 10.0 * (c + 1),
                              "%s, %s: force %d is %.17g, expected %g", label[m], crits[k], c, f[c],
                              10.0 * (c + 1));
            printf("  resting stack, %s, criterion %s: %ld iterations in 20 steps\n", label[m],
                   crits[k], iters);
            sim_close(&sm);
        }
}
END_TEST

/* What solver.method cannot be combined with is refused, naming the key and the reason. */
START_TEST(errors_assembled_combinations)
{
    static const struct {
        const char *lines, *key, *why;
    } bad[] = {
        {"method = apgd\nrelaxation = 1.5\n", "solver.relaxation", "APGD"},
        {"method = apgd\nsweep = colored\n", "solver.sweep", "no sweeps"},
        {"method = newton\nsweep = jacobi\n", "solver.sweep", "random, forward or backward"},
        {"desaxce = false\n", "solver.desaxce", "apgd"},
        {"method = apgd\npresweeps = 3\n", "solver.presweeps", "newton"},
        {"method = cg\n", "solver.method", "sweeps"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char text[512];
        snprintf(text, sizeof text,
                 "[system]\ndimension = 2\ndt = 0.01\nsteps = 1\n[solver]\n%s"
                 "[particles]\ncount = 1\nradius = 0.5\nmass = 1\n",
                 bad[k].lines);
        config c;
        diag err;
        ck_assert_int_eq(config_load_string(&c, text, "bad.ini", &err), CDLAB_OK);
        ck_assert_msg(run_validate(&c, NULL, &err) != CDLAB_OK, "taken: %s", bad[k].lines);
        ck_assert_msg(strstr(err.msg, bad[k].key) && strstr(err.msg, bad[k].why), "%s: message: %s",
                      bad[k].lines, err.msg);
        config_free(&c);
    }
    /* a DEM twin of an assembled solver has no q to take */
    const char *twin = "[system]\nmode = dem\ndimension = 1\ndt = 1e-5\nsteps = 1\n"
                       "[solver]\nmethod = apgd\niterations = 20\n[dem]\ncd_dt = 0.01\n"
                       "[particles]\ncount = 3\nradius = 0.5\nmass = 1\nspacing = 0\n";
    config c;
    diag err;
    ck_assert_int_eq(config_load_string(&c, twin, "twin.ini", &err), CDLAB_OK);
    ck_assert(run_validate(&c, NULL, &err) != CDLAB_OK);
    ck_assert_msg(strstr(err.msg, "solver.method") && strstr(err.msg, "twin"), "message: %s",
                  err.msg);
    config_free(&c);
}
END_TEST

Suite *solvers_suite(void)
{
    Suite *s = suite_create("solvers");
    TCase *tc = tcase_create("analytic");
    tcase_set_timeout(tc, TEST_TIMEOUT_SECONDS);
    tcase_add_test(tc, analytic_relaxed_resting_stack);
    tcase_add_test(tc, analytic_relaxed_incline);
    tcase_add_test(tc, analytic_relaxed_head_on_collision);
    tcase_add_test(tc, unit_natural_map_criterion);
    tcase_add_test(tc, errors_relaxation_range_and_twin);
    tcase_add_test(tc, analytic_assembled_resting_stack);
    tcase_add_test(tc, analytic_assembled_incline);
    tcase_add_test(tc, analytic_apgd_relaxation_dilation);
    tcase_add_test(tc, analytic_assembled_head_on_collision);
    tcase_add_test(tc, analytic_assembled_change_criteria);
    tcase_add_test(tc, determinism_assembled_threads);
    tcase_add_test(tc, errors_assembled_combinations);
    suite_add_tcase(s, tc);
    return s;
}

/* FCLIB export: the contact problem of a CD step, read back with fclib, is solved by the stored
 * cdlab solution (natural-map residual within the solver's tolerance), and exporting does not
 * change the run. */
#include "suites.h"

#include "nscd/cd_contact_problem.h"
#include "parallel.h"

#include <fclib.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* 2D: 50 frictional disks settling in a box under a piston (mass 20, pushed down). The seed is
 * one whose every step converges: the random-sweep Gauss-Seidel cycles on some frictional
 * configurations (seeds 1-6 of this pile: 0 to 14 of 120 steps reach 30,000 sweeps, with the
 * old and the new lever arms of open contacts alike; seed 11, used before, now has 4). */
static const char *ini_2d = "[system]\ndimension = 2\ndt = 0.02\nsteps = 120\nseed = 1\n"
                            "gravity = 0 -1 0\n"
                            "[solver]\ncriterion = local\nepsilon = 1e-10\niterations = 200000\n"
                            "[particles]\nsource = random\ncount = 50\nradius_min = 0.4\n"
                            "radius_max = 0.6\nbox_min = 0 0 0\nbox_max = 8 12 0\ndensity = 1\n"
                            "[contact]\nfriction = 0.3\ndetect_gap = 0.2\n"
                            "[plane.base]\npoint = 0 0 0\nnormal = 0 1 0\n"
                            "[plane.left]\npoint = 0 0 0\nnormal = 1 0 0\n"
                            "[plane.right]\npoint = 8 0 0\nnormal = -1 0 0\n"
                            "[piston.top]\npoint = 0 13 0\nnormal = 0 -1 0\nmass = 20\n"
                            "force = 100\n"
                            "[output]\nevery = 0\n";

/* 3D: 60 frictional spheres settling in a box, walls with their own friction. */
static const char *ini_3d = "[system]\ndimension = 3\ndt = 0.02\nsteps = 100\nseed = 5\n"
                            "gravity = 0 0 -1\n"
                            "[solver]\ncriterion = local\nepsilon = 1e-10\niterations = 200000\n"
                            "[particles]\nsource = random\ncount = 60\nradius_min = 0.4\n"
                            "radius_max = 0.6\nbox_min = 0 0 0\nbox_max = 4 4 8\ndensity = 1\n"
                            "[contact]\nfriction = 0.4\ndetect_gap = 0.2\n"
                            "[plane.base]\npoint = 0 0 0\nnormal = 0 0 1\nfriction = 0.6\n"
                            "[plane.x0]\npoint = 0 0 0\nnormal = 1 0 0\n"
                            "[plane.x1]\npoint = 4 0 0\nnormal = -1 0 0\n"
                            "[plane.y0]\npoint = 0 0 0\nnormal = 0 1 0\n"
                            "[plane.y1]\npoint = 0 4 0\nnormal = 0 -1 0\n"
                            "[output]\nevery = 0\n";

/* Steps a sim to the step before `step`, solves that step, writes its problem to a temporary
 * FCLIB file (path: 32 bytes), finishes the step. Returns the natural-map residual computed
 * before writing. */
static double export_step(sim *s, long step, char *path)
{
    diag err = {{0}};
    sim_steps(s, step - 1);
    ck_assert_int_eq(cd_step_solve(&s->W, &s->S, &s->p, &s->st, &err), CDLAB_OK);
    ck_assert_msg(s->st.converged, "step %ld did not converge (%d sweeps)", step, s->st.sweeps);
    contact_problem cp;
    ck_assert_msg(contact_problem_build(&s->W, &s->S.C, &cp, &err) == CDLAB_OK, "%s", err.msg);
    double res = natural_map_residual(cp.nc, cp.d, cp.colptr, cp.row, cp.val, cp.q, cp.mu, cp.r,
                                      NM_RHO_ONE, NULL);
    /* the criterion's residual, read from the bodies without W, is the same measure (the
     * velocities of the step's end: u = W r + q up to the assembly's roundings) */
    double live = cd_natural_map_now(&s->W, &s->S);
    ck_assert_msg(fabs(live - res) <= 1e-6 * res + 1e-13,
                  "natural map from the bodies %.17g, "
                  "from W %.17g",
                  live, res);
    strcpy(path, "/tmp/cdlab_fcXXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    fclib_meta meta = {.title = "test",
                       .description = "check_fclib",
                       .step = step,
                       .dt = s->W.dt,
                       .criterion = "local",
                       .sweep = "random",
                       .natural_map = res};
    ck_assert_msg(contact_problem_write_fclib(&cp, path, &meta, &err) == CDLAB_OK, "%s", err.msg);
    contact_problem_free(&cp);
    ck_assert_int_eq(cd_step_finish(&s->W, &s->S, &s->p, &s->st, &err), CDLAB_OK);
    return res;
}

typedef struct readback {
    struct fclib_local *p;
    struct fclib_solution *sol;
    int nc, d;
} readback;

static readback read_back(const char *path, int d_expected)
{
    readback b;
    b.p = fclib_read_local(path);
    ck_assert_ptr_nonnull(b.p);
    b.sol = fclib_read_solution(path);
    ck_assert_ptr_nonnull(b.sol);
    b.d = b.p->spacedim;
    ck_assert_int_eq(b.d, d_expected);
    ck_assert_int_eq(b.p->W->m, b.p->W->n);
    ck_assert_int_eq(b.p->W->m % b.d, 0);
    ck_assert_int_eq(b.p->W->nz, -1); /* compressed columns */
    b.nc = b.p->W->m / b.d;
    return b;
}

static void readback_free(readback *b)
{
    fclib_delete_local(b->p);
    free(b->p); /* fclib_delete_local frees the contents, not the struct */
    fclib_delete_solutions(b->sol, 1);
}

/* The checks shared by 2D and 3D: W symmetric with a positive diagonal, the stored u equal to
 * W r + q, the Signorini-Coulomb conditions met by the stored r (natural map), and a wrong
 * solution rejected. */
static void check_problem(const readback *b, int want_active)
{
    const struct fclib_matrix *W = b->p->W;
    int m = W->m, d = b->d, nc = b->nc;
    double wmax = 0.0;
    for (int e = 0; e < W->p[m]; e++)
        wmax = fmax(wmax, fabs(W->x[e]));
    ck_assert(wmax > 0.0);
    /* symmetry: for every entry (i, k) the entry (k, i) exists and is equal (1e-12 relative) */
    for (int k = 0; k < m; k++)
        for (int e = W->p[k]; e < W->p[k + 1]; e++) {
            int i = W->i[e];
            double other = 0.0;
            int found = 0;
            for (int f = W->p[i]; f < W->p[i + 1]; f++)
                if (W->i[f] == k) {
                    other = W->x[f];
                    found = 1;
                }
            ck_assert_msg(found || fabs(W->x[e]) < 1e-12 * wmax, "W(%d,%d) has no transpose", i, k);
            ck_assert_msg(fabs(W->x[e] - other) <= 1e-12 * wmax, "W(%d,%d) = %g, W(%d,%d) = %g", i,
                          k, W->x[e], k, i, other);
        }
    for (int k = 0; k < m; k += d) { /* normal diagonal: 1/m_n > 0 */
        double w_kk = 0.0;
        for (int e = W->p[k]; e < W->p[k + 1]; e++)
            if (W->i[e] == k)
                w_kk = W->x[e];
        ck_assert_msg(w_kk > 0.0, "W(%d,%d) = %g", k, k, w_kk);
    }
    /* u = W r + q, computed independently by the exporter from the final velocities */
    double *u = calloc((size_t)m, sizeof *u);
    double umax = 0.0;
    for (int k = 0; k < m; k++)
        for (int e = W->p[k]; e < W->p[k + 1]; e++)
            u[W->i[e]] += W->x[e] * b->sol->r[k];
    for (int k = 0; k < m; k++) {
        u[k] += b->p->q[k];
        umax = fmax(umax, fabs(b->sol->u[k]));
    }
    for (int k = 0; k < m; k++)
        ck_assert_msg(fabs(u[k] - b->sol->u[k]) <= 1e-9 * (umax + 1.0),
                      "u[%d]: W r + q = %.17g, stored %.17g", k, u[k], b->sol->u[k]);
    free(u);
    /* the impulses are stored in the local axes, turned from global ones: round-off of the
     * largest impulse's size in a frictionless contact's tangent (1.1e-18, 8.9e-18 measured) */
    double rmax = 0.0;
    for (int k = 0; k < m; k++)
        rmax = fmax(rmax, fabs(b->sol->r[k]));
    int active = 0, sliding = 0;
    for (int a = 0; a < nc; a++) {
        const double *r = &b->sol->r[a * d];
        double rt = 0.0;
        for (int k = 1; k < d; k++)
            rt += r[k] * r[k];
        rt = sqrt(rt);
        ck_assert_msg(r[0] >= 0.0, "contact %d: r_N = %g < 0", a, r[0]);
        ck_assert_msg(rt <= b->p->mu[a] * r[0] * (1.0 + 1e-12) + 1e-14 * rmax,
                      "contact %d: |r_T| = %g above mu r_N = %g", a, rt, b->p->mu[a] * r[0]);
        active += r[0] > 0.0;
        sliding += r[0] > 0.0 && rt >= b->p->mu[a] * r[0] * (1.0 - 1e-9);
    }
    ck_assert_msg(active >= want_active, "only %d active contacts", active);
    /* The stored solution: natural-map residual 1e-7 relative. The solver stopped when no
     * force changed by more than 1e-10 of itself in a sweep; one sweep's change bounds the
     * residual up to the conditioning of the packing (measured: ~1e-10 here). */
    double res = natural_map_residual(nc, d, W->p, W->i, W->x, b->p->q, b->p->mu, b->sol->r,
                                      NM_RHO_INV_W, NULL);
    ck_assert_msg(res < 1e-7, "natural-map residual %g", res);
    /* a wrong solution (normal impulses 1% too large) is rejected: residual above 1e-3 */
    double *r_bad = malloc((size_t)m * sizeof *r_bad);
    memcpy(r_bad, b->sol->r, (size_t)m * sizeof *r_bad);
    for (int a = 0; a < nc; a++)
        r_bad[a * d] *= 1.01;
    double bad =
        natural_map_residual(nc, d, W->p, W->i, W->x, b->p->q, b->p->mu, r_bad, NM_RHO_INV_W, NULL);
    ck_assert_msg(bad > 1e-3, "1%% wrong impulses give a residual of only %g", bad);
    free(r_bad);
    fprintf(stderr,
            "  fclib %dD: %d contacts (%d active, %d sliding), W %d entries, natural map %.3g, "
            "1%% wrong r: %.3g\n",
            d, nc, active, sliding, W->p[m], res, bad);
}

START_TEST(fclib_2d_piston)
{
    sim s;
    sim_open(&s, ini_2d, 1);
    char path[32];
    double res = export_step(&s, 120, path);
    readback b = read_back(path, 2);
    ck_assert_int_eq(b.nc, s.S.C.n);
    check_problem(&b, 50);
    /* the piston couples its contacts: some column of a piston contact has entries in the rows
     * of another piston contact (two distinct particles) */
    int piston = -1 - (s.W.n_walls - 1), coupled = 0;
    for (int a = 0; a < s.S.C.n; a++)
        if (s.S.C.c[a].i == piston)
            for (int e = b.p->W->p[a * 2]; e < b.p->W->p[a * 2 + 1]; e++) {
                int row_c = b.p->W->i[e] / 2;
                coupled += row_c != a && s.S.C.c[row_c].i == piston;
            }
    ck_assert_msg(coupled > 0, "no coupling through the piston in W");
    ck_assert(res < 1e-7);
    readback_free(&b);
    unlink(path);
    sim_close(&s);
}
END_TEST

START_TEST(fclib_3d_merit)
{
    sim s;
    sim_open(&s, ini_3d, 5);
    char path[32];
    export_step(&s, 100, path);
    readback b = read_back(path, 3);
    check_problem(&b, 60);
    /* fclib's own merit function (natural map, 3D only) agrees that this is a solution */
    double merit = fclib_merit_local(b.p, MERIT_1, b.sol);
    ck_assert_msg(merit < 1e-7, "fclib_merit_local = %g", merit);
    struct fclib_solution bad = *b.sol;
    double *r_bad = malloc((size_t)b.p->W->m * sizeof *r_bad);
    memcpy(r_bad, b.sol->r, (size_t)b.p->W->m * sizeof *r_bad);
    for (int a = 0; a < b.nc; a++)
        r_bad[a * 3] *= 1.01;
    bad.r = r_bad;
    double merit_bad = fclib_merit_local(b.p, MERIT_1, &bad);
    ck_assert_msg(merit_bad > 100.0 * merit && merit_bad > 1e-6, "merit of a wrong r: %g (%g)",
                  merit_bad, merit);
    fprintf(stderr, "  fclib_merit_local: %.3g, 1%% wrong r: %.3g\n", merit, merit_bad);
    free(r_bad);
    readback_free(&b);
    unlink(path);
    sim_close(&s);
}
END_TEST

/* `cdlab solve`'s reader and sweeps: cdlab's reader gives the arrays fclib's own reader gives
 * (bit for bit), the stored solution's residual is the one the export recorded, and the sweeps
 * from zero reach 1e-10 at every relaxation tried, the residual recomputed independently (the
 * assembled W times r, natural_map_residual) at most 1.01e-10; forward and random alike. */
START_TEST(fclib_read_and_solve)
{
    for (int dim = 2; dim <= 3; dim++) {
        sim s;
        sim_open(&s, dim == 2 ? ini_2d : ini_3d, dim == 2 ? 1 : 5);
        char path[32];
        double recorded = export_step(&s, dim == 2 ? 120 : 100, path);
        readback b = read_back(path, dim);
        contact_problem cp;
        int stored;
        diag err;
        ck_assert_msg(contact_problem_read_fclib(path, &cp, &stored, &err) == CDLAB_OK, "%s",
                      err.msg);
        ck_assert_int_eq(stored, 1);
        ck_assert_int_eq(cp.d, dim);
        ck_assert_int_eq(cp.m, b.p->W->m);
        ck_assert_int_eq(cp.nnz, b.p->W->p[b.p->W->m]);
        ck_assert(memcmp(cp.colptr, b.p->W->p, (size_t)(cp.m + 1) * sizeof(int)) == 0);
        ck_assert(memcmp(cp.row, b.p->W->i, (size_t)cp.nnz * sizeof(int)) == 0);
        ck_assert(memcmp(cp.val, b.p->W->x, (size_t)cp.nnz * sizeof(double)) == 0);
        ck_assert(memcmp(cp.q, b.p->q, (size_t)cp.m * sizeof(double)) == 0);
        ck_assert(memcmp(cp.mu, b.p->mu, (size_t)cp.nc * sizeof(double)) == 0);
        ck_assert(memcmp(cp.r, b.sol->r, (size_t)cp.m * sizeof(double)) == 0);
        double again = natural_map_residual(cp.nc, cp.d, cp.colptr, cp.row, cp.val, cp.q, cp.mu,
                                            cp.r, NM_RHO_ONE, NULL);
        ck_assert_double_eq(again, recorded);
        const double omegas[] = {1.0, 1.5, 0.7};
        for (int k = 0; k < 4; k++) {
            double *r = calloc((size_t)cp.m, sizeof *r);
            cp_sweep_options o = {.order = k == 3 ? CP_FORWARD : CP_RANDOM,
                                  .relaxation = omegas[k % 3],
                                  .tolerance = 1e-10,
                                  .max_sweeps = 200000,
                                  .every = 0,
                                  .seed = 3};
            cp_sweep_result res;
            ck_assert_msg(contact_problem_sweeps(&cp, r, &o, NULL, NULL, &res, &err) == CDLAB_OK,
                          "%s", err.msg);
            ck_assert_msg(res.converged && res.residual <= 1e-10, "%dD omega %g: %g after %d", dim,
                          o.relaxation, res.residual, res.sweeps);
            double indep = natural_map_residual(cp.nc, cp.d, cp.colptr, cp.row, cp.val, cp.q, cp.mu,
                                                r, NM_RHO_ONE, NULL);
            ck_assert_msg(indep <= 1.01e-10, "%dD: W r + q gives %g", dim, indep);
            fprintf(stderr, "  solve %dD, %d contacts, %s omega %.1f: 1e-10 in %d sweeps\n", dim,
                    cp.nc, k == 3 ? "forward" : "random", o.relaxation, res.sweeps);
            free(r);
        }
        contact_problem_free(&cp);
        readback_free(&b);
        unlink(path);
        sim_close(&s);
    }
}
END_TEST

/* The other solvers of a stored problem on the same exports: APGD with De Saxce's outer loop and
 * the semismooth Newton method reach their tolerance from zero (1e-8 and 1e-10), the residual
 * recomputed independently from the assembled W (at most 1.01 times the tolerance), Newton in at
 * most 40 iterations (a wrong Jacobian would leave it linear, or stalled); APGD without the
 * outer loop solves the convex relaxation (its own residual <= 1e-8) and not Coulomb's law
 * where contacts slide: there its sliding contacts separate at u_N = mu |u_T| (to 1e-6 of the
 * largest |u|), the dilation, positive on average. */
START_TEST(fclib_apgd_and_newton)
{
    for (int dim = 2; dim <= 3; dim++) {
        sim s;
        sim_open(&s, dim == 2 ? ini_2d : ini_3d, dim == 2 ? 1 : 5);
        char path[32];
        export_step(&s, dim == 2 ? 120 : 100, path);
        contact_problem cp;
        int stored;
        diag err;
        ck_assert_msg(contact_problem_read_fclib(path, &cp, &stored, &err) == CDLAB_OK, "%s",
                      err.msg);
        for (int k = 0; k < 3; k++) {
            double *r = calloc((size_t)cp.m, sizeof *r), tol = k == 2 ? 1e-10 : 1e-8;
            cp_sweep_options o = {.method = k == 2 ? CP_NEWTON : CP_APGD,
                                  .order = CP_RANDOM,
                                  .relaxation = 1.0,
                                  .tolerance = tol,
                                  .max_sweeps = 200000,
                                  .seed = 3,
                                  .desaxce = k == 0};
            cp_sweep_result res;
            ck_assert_msg(contact_problem_solve(&cp, r, &o, NULL, NULL, &res, &err) == CDLAB_OK,
                          "%s", err.msg);
            ck_assert_msg(res.converged && res.residual <= tol, "%dD method %d: %g after %d", dim,
                          k, res.residual, res.sweeps);
            double indep = natural_map_residual(cp.nc, cp.d, cp.colptr, cp.row, cp.val, cp.q, cp.mu,
                                                r, NM_RHO_ONE, NULL);
            if (k != 1) {
                ck_assert_msg(indep <= 1.01 * tol, "%dD method %d: W r + q gives %g", dim, k,
                              indep);
                ck_assert_double_eq(indep, res.coulomb);
            } else {
                /* the convex relaxation: u_N = mu |u_T| at its sliding contacts */
                double *u = malloc((size_t)cp.m * sizeof *u), umax = 0.0, worst = 0.0;
                contact_problem_matvec(cp.m, cp.colptr, cp.row, cp.val, r, u);
                for (int j = 0; j < cp.m; j++) {
                    u[j] += cp.q[j];
                    umax = fmax(umax, fabs(u[j]));
                }
                int sliding = 0;
                for (int a = 0; a < cp.nc; a++) {
                    double *ua = &u[a * dim], *ra = &r[a * dim], ut = 0.0, rt = 0.0;
                    for (int j = 1; j < dim; j++) {
                        ut += ua[j] * ua[j];
                        rt += ra[j] * ra[j];
                    }
                    if (ra[0] > 0.0 && sqrt(rt) > (1.0 - 1e-9) * cp.mu[a] * ra[0] &&
                        sqrt(ut) > 1e-6 * umax) {
                        sliding++;
                        worst = fmax(worst, fabs(ua[0] - cp.mu[a] * sqrt(ut)));
                    }
                }
                ck_assert_msg(sliding > 0, "%dD: no contact slides in the convex answer", dim);
                ck_assert_msg(worst <= 1e-6 * umax, "%dD: u_N - mu |u_T| up to %g (|u| %g)", dim,
                              worst, umax);
                ck_assert_msg(res.dilation_mean > 0.0 && res.coulomb > 1e-4,
                              "%dD: dilation %g, Coulomb residual %g", dim, res.dilation_mean,
                              res.coulomb);
                fprintf(stderr,
                        "  APGD convex %dD: %d sliding, u_N - mu|u_T| <= %.2g, dilation "
                        "mean %.3g, Coulomb residual %.3g\n",
                        dim, sliding, worst, res.dilation_mean, res.coulomb);
                free(u);
            }
            if (k == 2)
                ck_assert_msg(res.sweeps <= 40, "%dD: Newton took %d iterations", dim, res.sweeps);
            fprintf(stderr, "  %s %dD, %d contacts: %.3g in %d iterations\n",
                    k == 2   ? "newton"
                    : k == 0 ? "apgd+desaxce"
                             : "apgd convex",
                    dim, cp.nc, res.residual, res.sweeps);
            free(r);
        }
        contact_problem_free(&cp);
        unlink(path);
        sim_close(&s);
    }
}
END_TEST

/* Another code's file: W as triplets (FCLIB's nz >= 0), here one frictionless 2D contact
 * W = diag(2, 1), q = (-1, 0.5): converted to columns and solved exactly (r_N = 0.5); files
 * that are no local problem are refused in a message naming them. */
START_TEST(fclib_read_triplets_and_refusals)
{
    char path[32] = "/tmp/cdlab_fctXXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    unlink(path);
    int rows[] = {1, 0}, cols[] = {1, 0};
    double vals[] = {1.0, 2.0}, q[] = {-1.0, 0.5}, mu[] = {0.0};
    struct fclib_matrix W = {.nzmax = 2, .m = 2, .n = 2, .p = cols, .i = rows, .x = vals, .nz = 2};
    struct fclib_info info = {.title = "triplets", .description = "test", .math_info = "none"};
    struct fclib_local prob = {.W = &W, .mu = mu, .q = q, .spacedim = 2, .info = &info};
    ck_assert_int_eq(fclib_write_local(&prob, path), 1);
    contact_problem cp;
    int stored;
    diag err;
    ck_assert_msg(contact_problem_read_fclib(path, &cp, &stored, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_int_eq(stored, 0);
    ck_assert_int_eq(cp.nnz, 2);
    ck_assert_int_eq(cp.colptr[0], 0);
    ck_assert_int_eq(cp.colptr[1], 1);
    ck_assert_int_eq(cp.row[0], 0);
    ck_assert_double_eq(cp.val[0], 2.0);
    double r[2] = {0.0, 0.0};
    cp_sweep_options o = {
        .order = CP_FORWARD, .relaxation = 1.0, .tolerance = 0.0, .max_sweeps = 3};
    cp_sweep_result res;
    ck_assert_int_eq(contact_problem_sweeps(&cp, r, &o, NULL, NULL, &res, &err), CDLAB_OK);
    ck_assert_double_eq(r[0], 0.5);
    ck_assert_double_eq(r[1], 0.0);
    ck_assert_double_eq(res.residual, 0.0);
    contact_problem_free(&cp);
    unlink(path);
    /* not a local problem, not HDF5, absent */
    char other[32] = "/tmp/cdlab_fcnXXXXXX";
    fd = mkstemp(other);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "not hdf5\n", 9), 9);
    close(fd);
    ck_assert_int_ne(contact_problem_read_fclib(other, &cp, &stored, &err), CDLAB_OK);
    ck_assert_msg(strstr(err.msg, other), "%s", err.msg);
    ck_assert_int_ne(contact_problem_read_fclib("/nonexistent/x.h5", &cp, &stored, &err), CDLAB_OK);
    ck_assert_msg(strstr(err.msg, "/nonexistent/x.h5"), "%s", err.msg);
    unlink(other);
}
END_TEST

/* The natural map on one contact (W = 1): an open frictionless contact with no sliding is
 * solved by r = 0 (the residual was |u_N|: the cone's projection kept a negative normal when
 * mu = 0, and every frictionless export printed a residual of the order of its gaps/dt), a
 * closed one by r = -q_N, a wrong r is not. */
START_TEST(unit_natural_map_frictionless)
{
    const int colptr[] = {0, 1, 2}, row[] = {0, 1};
    const double val[] = {1.0, 1.0}, mu0[] = {0.0}, mu1[] = {0.5};
    const double *mus[] = {mu0, mu1};
    for (int k = 0; k < 2; k++) {
        double ab = -1.0;
        double open = natural_map_residual(1, 2, colptr, row, val, (double[]){2.0, 0.0}, mus[k],
                                           (double[]){0.0, 0.0}, NM_RHO_INV_W, &ab);
        ck_assert_msg(open == 0.0 && ab == 0.0, "mu %g: open contact %g (%g)", mus[k][0], open, ab);
        double closed = natural_map_residual(1, 2, colptr, row, val, (double[]){-1.0, 0.0}, mus[k],
                                             (double[]){1.0, 0.0}, NM_RHO_INV_W, NULL);
        ck_assert_msg(closed == 0.0, "mu %g: closed contact %g", mus[k][0], closed);
        double wrong = natural_map_residual(1, 2, colptr, row, val, (double[]){2.0, 0.0}, mus[k],
                                            (double[]){1.0, 0.0}, NM_RHO_INV_W, NULL);
        ck_assert_msg(fabs(wrong - 1.0) < 1e-15, "mu %g: wrong r %g", mus[k][0], wrong);
    }
}
END_TEST

/* Disks falling from rest without friction, the first ones on the floor: the pairs still apart
 * have no sliding (the printed residual of such an export was 10 to 60 where it is 1e-13). */
static const char *ini_fall = "[system]\ndimension = 2\ndt = 0.01\nsteps = 60\n"
                              "gravity = 0 -10 0\n"
                              "[solver]\ncriterion = local\nepsilon = 1e-12\n"
                              "iterations = 100000\n"
                              "[particles]\nsource = random\ncount = 40\nradius_min = 0.4\n"
                              "radius_max = 0.5\nbox_min = 0 0 0\nbox_max = 8 12 0\n"
                              "[contact]\nfriction = 0\n"
                              "[plane.floor]\npoint = 0 0 0\nnormal = 0 1 0\n"
                              "[plane.left]\npoint = 0 0 0\nnormal = 1 0 0\n"
                              "[plane.right]\npoint = 8 0 0\nnormal = -1 0 0\n"
                              "[output]\nevery = 0\n";

START_TEST(fclib_2d_frictionless)
{
    sim s;
    sim_open(&s, ini_fall, 1);
    char path[32];
    double res = export_step(&s, 60, path);
    ck_assert_msg(res < 1e-7, "natural-map residual %g", res);
    readback b = read_back(path, 2);
    check_problem(&b, 3);
    readback_free(&b);
    unlink(path);
    sim_close(&s);
}
END_TEST

/* A run that stops before the export's step says that the export was not written (nothing
 * said so: only the absence of the "fclib: step N written" line told). */
START_TEST(fclib_export_not_reached_said)
{
    char cfg[32] = "/tmp/cdlab_fcnXXXXXX", dir[32] = "/tmp/cdlab_fcdXXXXXX";
    temp_text_file(cfg, ini_fall);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char cmd[1024], out[8192];
    snprintf(cmd, sizeof cmd,
             "%s run %s -o %s/z.h5 --quiet --export-fclib 15 --fclib-out %s/zf.h5 "
             "--set system.dt=0.5 --set solver.criterion=fixed --set solver.iterations=1 "
             "--set solver.sweep=jacobi 2>&1",
             cdlab_bin(), cfg, dir, dir);
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "exceeds solver.abort_overlap") &&
                      strstr(out, "--export-fclib 15: not written (the run stopped at step "),
                  "%s", out);
    snprintf(cmd, sizeof cmd, "test ! -e %s/zf.h5 && rm -rf %s %s", dir, dir, cfg);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* Building the problem restores the velocities bit for bit: a run with an export is the run
 * without one. */
START_TEST(fclib_export_changes_nothing)
{
    sim a, b;
    sim_open(&a, ini_3d, 5);
    sim_open(&b, ini_3d, 5);
    char path[32];
    export_step(&a, 40, path);
    unlink(path);
    sim_steps(&a, 20);
    sim_steps(&b, 60);
    same_particles(&a.W, &b.W);
    sim_close(&a);
    sim_close(&b);
}
END_TEST

/* Through run_simulation (what `cdlab run --export-fclib` calls): the file is written where asked,
 * and a DEM run or a step outside the run is refused. */
START_TEST(fclib_run_hooks)
{
    char out[32], fc[32] = "/tmp/cdlab_fcrXXXXXX";
    int fd = mkstemp(fc);
    ck_assert_int_ge(fd, 0);
    close(fd);
    unlink(fc); /* fresh names: existing outputs are refused without overwrite */
    strcpy(out, "/tmp/cdlab_fcoXXXXXX");
    fd = mkstemp(out);
    close(fd);
    unlink(out);
    config c;
    diag err = {{0}};
    run_summary sum;
    ck_assert_int_eq(config_load_string(&c, ini_3d, "fc.ini", &err), CDLAB_OK);
    config_set(&c, "system.steps=30", &err);
    run_hooks hk = {.fclib_step = 30, .fclib_path = fc};
    ck_assert_msg(run_simulation(&c, out, &hk, &sum, &err) == CDLAB_OK, "%s", err.msg);
    config_free(&c);
    struct fclib_local *p = fclib_read_local(fc);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(p->spacedim, 3);
    fclib_delete_local(p);
    free(p); /* fclib_delete_local frees the contents, not the struct */

    ck_assert_int_eq(config_load_string(&c, ini_3d, "fc.ini", &err), CDLAB_OK);
    config_set(&c, "system.steps=30", &err);
    hk.fclib_step = 31;
    hk.overwrite = 1; /* out and fc exist now */
    ck_assert_int_eq(run_simulation(&c, out, &hk, &sum, &err), CDLAB_ERR_ARG);
    ck_assert_ptr_nonnull(strstr(err.msg, "--export-fclib 31: the run does steps 1 to 30"));
    ck_assert_int_eq(sum.started, 0);
    config_free(&c);

    const char *dem = "[system]\nmode = dem\ndimension = 3\ndt = 1e-3\nsteps = 3\n"
                      "[particles]\nsource = random\ncount = 10\nradius_min = 0.4\n"
                      "radius_max = 0.5\nbox_min = 0 0 0\nbox_max = 4 4 4\n"
                      "[dem]\nk_n = 1e4\nk_t = 5e3\n[plane.base]\npoint = 0 0 0\n"
                      "normal = 0 0 1\n[output]\nevery = 0\n";
    ck_assert_int_eq(config_load_string(&c, dem, "dem.ini", &err), CDLAB_OK);
    hk.fclib_step = 2;
    ck_assert_int_eq(run_simulation(&c, out, &hk, &sum, &err), CDLAB_ERR_ARG);
    ck_assert_msg(strstr(err.msg, "whose engine has no contact problem to export") != NULL, "%s",
                  err.msg);
    config_free(&c);
    remove_output(out);
    unlink(fc);
}
END_TEST

/* The cdlab program links the static HDF5 and loads libfclib with dlopen (its own shared HDF5
 * writes the problem; the program's HDF5 then adds /cdlab). Its export of step 100 is the one
 * run_simulation writes inside this suite, where one shared HDF5 does both: every array bit
 * for bit, and fclib's reader and merit accept it. The partial file a killed export left
 * (FILE.PID.partial, its process gone) is said at the start and left alone. */
START_TEST(fclib_program_export)
{
    char cfg[32] = "/tmp/cdlab_fciXXXXXX", out[32] = "/tmp/cdlab_fcoXXXXXX";
    char fa[32] = "/tmp/cdlab_fcaXXXXXX", fb[32] = "/tmp/cdlab_fcbXXXXXX";
    char *tmp[] = {cfg, out, fa, fb};
    for (int k = 0; k < 4; k++) {
        int fd = mkstemp(tmp[k]);
        ck_assert_int_ge(fd, 0);
        if (k == 0)
            ck_assert_int_eq(write(fd, ini_3d, strlen(ini_3d)), (ssize_t)strlen(ini_3d));
        close(fd);
    }
    config c;
    diag err = {{0}};
    run_summary sum;
    ck_assert_int_eq(config_load_string(&c, ini_3d, "fc.ini", &err), CDLAB_OK);
    run_hooks hk = {.fclib_step = 100, .fclib_path = fa, .overwrite = 1};
    ck_assert_msg(run_simulation(&c, out, &hk, &sum, &err) == CDLAB_OK, "%s", err.msg);
    config_free(&c);
    remove_output(out);

    /* the partial file of an earlier export that was killed (its process gone) is said, and
     * left where it is */
    pid_t gone = fork();
    ck_assert_int_ge(gone, 0);
    if (gone == 0)
        _exit(0);
    ck_assert_int_eq(waitpid(gone, NULL, 0), gone);
    char stale[64], said[8192], cmd[512];
    snprintf(stale, sizeof stale, "%s.%ld.partial", fb, (long)gone);
    FILE *f = fopen(stale, "w");
    ck_assert_ptr_nonnull(f);
    fputs("cut short", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s run %s -o %s --overwrite --export-fclib 100 --fclib-out %s 2>&1",
             cdlab_bin(), cfg, out, fb);
    ck_assert_int_eq(run_capture(cmd, said, sizeof said), 0);
    char want[200];
    snprintf(want, sizeof want,
             "notice: %s: the partial file of an export that was killed (its process %ld is "
             "gone); cdlab does not use it: remove it\n",
             stale, (long)gone);
    ck_assert_msg(strstr(said, want), "%s", said);
    ck_assert_int_eq(access(stale, F_OK), 0);
    unlink(stale);
    const char *names[] = {"/fclib_local/W/x",
                           "/fclib_local/vectors/q",
                           "/fclib_local/vectors/mu",
                           "/solution/r",
                           "/solution/u",
                           "/cdlab/gap",
                           "/cdlab/frame",
                           NULL};
    same_data(fa, fb, names);
    /* cdlab info describes the export (it was "not a cdlab output") */
    char text[4096];
    snprintf(cmd, sizeof cmd, "%s info %s 2>&1", cdlab_bin(), fb);
    ck_assert_int_eq(run_capture(cmd, text, sizeof text), 0);
    ck_assert_msg(strstr(text, "an FCLIB local problem exported by cdlab") &&
                      strstr(text, "  @step = 100\n") && strstr(text, "@natural_map_residual = "),
                  "%s", text);
    readback b = read_back(fb, 3);
    check_problem(&b, 60);
    double merit = fclib_merit_local(b.p, MERIT_1, b.sol);
    ck_assert_msg(merit < 1e-7, "fclib_merit_local = %g", merit);
    readback_free(&b);
    /* cdlab solve: the history and the verdict; exit 0 reached, 1 not within the sweeps given,
     * 2 for a file that is no problem (the run's output) */
    char said2[8192];
    snprintf(cmd, sizeof cmd, "%s solve %s --relaxation 1.4 --tolerance 1e-9 --every 10 2>&1",
             cdlab_bin(), fb);
    ck_assert_int_eq(run_capture(cmd, said2, sizeof said2), 0);
    ck_assert_msg(strstr(said2, "177 contacts, local dimension 3") &&
                      strstr(said2, "its stored solution: natural-map residual") &&
                      strstr(said2, "  sweep       10   residual ") && strstr(said2, "reached: "),
                  "%s", said2);
    snprintf(cmd, sizeof cmd, "%s solve %s --method newton --presweeps 5 --tolerance 1e-11 2>&1",
             cdlab_bin(), fb);
    ck_assert_int_eq(run_capture(cmd, said2, sizeof said2), 0);
    ck_assert_msg(strstr(said2, "semismooth Newton") && strstr(said2, "reached: ") &&
                      strstr(said2, "factorizations") && strstr(said2, "dilation: u_N at the "),
                  "%s", said2);
    /* eqs. 35-36 stop every method too: met, and the answer's natural map within 1e-6 (the
     * change criteria stall, they do not measure the distance to the answer) */
    static const char *const change_runs[] = {"--criterion local --tolerance 1e-10",
                                              "--criterion global --tolerance 1e-12",
                                              "--method newton --criterion local --tolerance 1e-10",
                                              "--method apgd --criterion global --tolerance 1e-12"};
    for (int k = 0; k < 4; k++) {
        snprintf(cmd, sizeof cmd, "%s solve %s %s --every 0 2>&1", cdlab_bin(), fb, change_runs[k]);
        ck_assert_int_eq(run_capture(cmd, said2, sizeof said2), 0);
        const char *v = strstr(said2, "reached: residual ");
        ck_assert_msg(v && strstr(said2, "criterion met: the last iteration's change") &&
                          strstr(said2, k % 2 ? "(eq. 36)" : "(eq. 35)"),
                      "%s", said2);
        double res = strtod(v + strlen("reached: residual "), NULL);
        ck_assert_msg(res < 1e-6, "%s: natural map %g", change_runs[k], res);
    }
    snprintf(cmd, sizeof cmd, "%s solve %s --delta 1e-9 2>&1", cdlab_bin(), fb);
    ck_assert_int_eq(run_capture(cmd, said2, sizeof said2), 2);
    ck_assert_msg(strstr(said2, "--delta is the local criterion's"), "%s", said2);
    snprintf(cmd, sizeof cmd, "%s solve %s --method apgd --desaxce sideways 2>&1", cdlab_bin(), fb);
    ck_assert_int_eq(run_capture(cmd, said2, sizeof said2), 2);
    ck_assert_msg(strstr(said2, "--desaxce 'sideways' is not taken"), "%s", said2);
    snprintf(cmd, sizeof cmd, "%s solve %s --max-sweeps 2 --tolerance 0 2>&1", cdlab_bin(), fb);
    ck_assert_int_eq(run_capture(cmd, said2, sizeof said2), 1);
    ck_assert_msg(strstr(said2, "not reached: ") && strstr(said2, "after 2 sweeps"), "%s", said2);
    snprintf(cmd, sizeof cmd, "%s solve %s 2>&1", cdlab_bin(), out);
    ck_assert_int_eq(run_capture(cmd, said2, sizeof said2), 2);
    ck_assert_msg(strstr(said2, "not an FCLIB local problem"), "%s", said2);
    remove_output(out);
    for (int k = 0; k < 4; k++)
        unlink(tmp[k]);
}
END_TEST

/* The stand-ins for libfclib.so.0 beside the program (Makefile: FAKE_FCLIB), first on
 * LD_LIBRARY_PATH, and what the loader says of each. */
static const struct {
    const char *dir, *why;
} fake_fclib[] = {{"nosym", "undefined symbol: fclib_write_local"},
                  {"nodep", "libcdlab_gone.so: cannot open shared object file"}};

/* Runs "LD_LIBRARY_PATH=lib cdlab args" with stdout and stderr into buf; its exit status. */
static int run_with_library(const char *lib, const char *args, char *buf, size_t n)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "LD_LIBRARY_PATH=%s %s %s 2>&1", lib, cdlab_bin(), args);
    return run_capture(cmd, buf, n);
}

/* A libfclib.so.0 the program cannot use (one without FCLIB's functions, one that needs a
 * library that is not there) refuses a run that asks for an export at its start: exit 2, one
 * message naming the library, its package and what the loader said; the existing output file
 * keeps its bytes and no FCLIB file is made. `cdlab --version` says it does not load, and why. */
START_TEST(fclib_program_refuses_unusable_library)
{
    char cfg[32] = "/tmp/cdlab_fcuXXXXXX", out[32] = "/tmp/cdlab_fcvXXXXXX";
    char fb[32] = "/tmp/cdlab_fcwXXXXXX";
    char *tmp[] = {cfg, out, fb};
    const char *kept = "an earlier run's file\n";
    for (int k = 0; k < 3; k++) {
        int fd = mkstemp(tmp[k]);
        ck_assert_int_ge(fd, 0);
        const char *text = k == 0 ? ini_3d : k == 1 ? kept : "";
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
    }
    unlink(fb); /* the export's file must not come to exist */
    char dir[512];
    snprintf(dir, sizeof dir, "%s", cdlab_bin());
    char *slash = strrchr(dir, '/');
    ck_assert_ptr_nonnull(slash);
    *slash = '\0';
    for (size_t f = 0; f < sizeof fake_fclib / sizeof fake_fclib[0]; f++) {
        char lib[600], args[512], msg[4096];
        snprintf(lib, sizeof lib, "%s/fakefclib/%s", dir, fake_fclib[f].dir);
        char so[700];
        snprintf(so, sizeof so, "%s/libfclib.so.0", lib);
        ck_assert_msg(access(so, R_OK) == 0, "%s: not built (Makefile: FAKE_FCLIB)", so);
        snprintf(args, sizeof args,
                 "run %s -o %s --overwrite --quiet --export-fclib 100 --fclib-out %s", cfg, out,
                 fb);
        ck_assert_int_eq(run_with_library(lib, args, msg, sizeof msg), 2);
        ck_assert_msg(strstr(msg, "libfclib.so.0") && strstr(msg, "libfclib0") &&
                          strstr(msg, fake_fclib[f].why),
                      "%s: %s", fake_fclib[f].dir, msg);
        int said = 0;
        for (const char *m = msg; (m = strstr(m, "cdlab: ")); m++)
            said++;
        ck_assert_msg(said == 1, "%d messages: %s", said, msg);
        FILE *o = fopen(out, "r");
        ck_assert_ptr_nonnull(o);
        char back[64] = {0};
        size_t got = fread(back, 1, sizeof back - 1, o);
        fclose(o);
        ck_assert_msg(got == strlen(kept) && strcmp(back, kept) == 0, "%s: output changed",
                      fake_fclib[f].dir);
        ck_assert_msg(access(fb, F_OK) != 0, "%s: %s was made", fake_fclib[f].dir, fb);
        ck_assert_int_eq(run_with_library(lib, "--version", msg, sizeof msg), 0);
        ck_assert_msg(strstr(msg, "fclib does not load: ") && strstr(msg, fake_fclib[f].why),
                      "%s: %s", fake_fclib[f].dir, msg);
    }
    unlink(cfg);
    unlink(out);
}
END_TEST

/* W x by rows on threads (contact_problem_product, the assembled solvers' product) is the
 * columns' scatter (contact_problem_matvec) bit for bit, at 1, 2 and 3 threads, on a
 * pseudo-random sparse W of 40,000 rows (above the threads' threshold) with values of every
 * sign and size. */
START_TEST(unit_product_by_rows_bit_identical)
{
    enum { M = 40000, PER = 7 };
    contact_problem cp;
    memset(&cp, 0, sizeof cp);
    cp.m = M;
    cp.nc = M / 2;
    cp.d = 2;
    cp.colptr = malloc((M + 1) * sizeof *cp.colptr);
    cp.row = malloc((size_t)M * PER * sizeof *cp.row);
    cp.val = malloc((size_t)M * PER * sizeof *cp.val);
    double *x = malloc(M * sizeof *x), *y0 = malloc(M * sizeof *y0), *y1 = malloc(M * sizeof *y1);
    ck_assert(cp.colptr && cp.row && cp.val && x && y0 && y1);
    uint64_t z = 12345;
    int nnz = 0;
    for (int k = 0; k < M; k++) {
        cp.colptr[k] = nnz;
        int last = -1;
        for (int e = 0; e < PER; e++) { /* ascending rows, some columns with fewer */
            z = z * 6364136223846793005ull + 1442695040888963407ull;
            int r = last + 1 + (int)((z >> 33) % 9000);
            if (r >= M)
                break;
            cp.row[nnz] = r;
            cp.val[nnz++] =
                ((double)(z >> 11) / 9007199254740992.0 - 0.5) * pow(10.0, (int)(z % 7) - 3);
            last = r;
        }
        x[k] = sin(0.37 * k) * (k % 5 + 1);
    }
    cp.colptr[M] = nnz;
    contact_problem rows;
    diag err;
    ck_assert_int_eq(contact_problem_with_rows(&cp, &rows, &err), CDLAB_OK);
    contact_problem_matvec(M, cp.colptr, cp.row, cp.val, x, y0);
    int saved = cdlab_threads();
    for (int t = 1; t <= 3; t++) {
        cdlab_set_threads(t);
        memset(y1, 0xff, M * sizeof *y1);
        contact_problem_product(&rows, x, y1);
        ck_assert_msg(memcmp(y0, y1, M * sizeof *y0) == 0, "%d threads: W x by rows differs", t);
    }
    cdlab_set_threads(saved);
    contact_problem_rows_free(&rows);
    free(cp.colptr);
    free(cp.row);
    free(cp.val);
    free(x);
    free(y0);
    free(y1);
}
END_TEST

Suite *fclib_suite(void)
{
    Suite *s = suite_create("fclib");
    TCase *tc = tcase_create("export");
    tcase_set_timeout(tc, TEST_TIMEOUT_SECONDS);
    tcase_add_test(tc, fclib_2d_piston);
    tcase_add_test(tc, fclib_3d_merit);
    tcase_add_test(tc, unit_natural_map_frictionless);
    tcase_add_test(tc, fclib_read_and_solve);
    tcase_add_test(tc, fclib_apgd_and_newton);
    tcase_add_test(tc, unit_product_by_rows_bit_identical);
    tcase_add_test(tc, fclib_read_triplets_and_refusals);
    tcase_add_test(tc, fclib_2d_frictionless);
    tcase_add_test(tc, fclib_export_not_reached_said);
    tcase_add_test(tc, fclib_export_changes_nothing);
    tcase_add_test(tc, fclib_run_hooks);
    tcase_add_test(tc, fclib_program_export);
    tcase_add_test(tc, fclib_program_refuses_unusable_library);
    suite_add_tcase(s, tc);
    return s;
}

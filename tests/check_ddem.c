/* Bonded contacts and deformable discs in the DEM engine (dem.bond, dem.deformable; Rojek et
 * al.): the rigid limit, the energy ledger with bonds and with deformable discs, bond breaking,
 * the lattice against the analytic estimate of docs/physics.md, and the refused inputs. */
#include "suites.h"

#include "h5io.h"
#include "xdmf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A square lattice of discs r = 1 mm, rows x cols, in a temporary file (path: 32 bytes). */
static void write_lattice(char *path, int rows, int cols)
{
    strcpy(path, "/tmp/cdlab_latticeXXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            fprintf(f, "%.17g %.17g 0 0.001\n", (2 * c + 1) * 1e-3, (2 * r + 1) * 1e-3);
    fclose(f);
}

/* The config of the paper's specimen on a rows x cols lattice (Rojek et al.: rho = 2000, k_n =
 * 7e10, 10 kN per column from both ends over 0.1 ms; thickness 10, so that k_n/(t E_p) is the
 * paper's printed ratio), with the dashpots xi and the [dem] lines extra. */
static void specimen(char *ini, size_t n, const char *lattice, int rows, int cols, double dt,
                     double xi, const char *extra)
{
    char top[256] = "", bottom[256] = "";
    for (int c = 0; c < cols; c++) {
        snprintf(top + strlen(top), sizeof top - strlen(top), " %d", (rows - 1) * cols + c);
        snprintf(bottom + strlen(bottom), sizeof bottom - strlen(bottom), " %d", c);
    }
    snprintf(ini, n,
             "[system]\nmode = dem\ndimension = 2\ndt = %g\nsteps = 1\n"
             "[particles]\ncount = %d\nsource = file\nfile = %s\ndensity = 2000\nthickness = 10\n"
             "[dem]\nk_n = 7e10\nk_t = 7e10\ndamping_normal = %g\ndamping_tangential = %g\n"
             "bond = true\n%s"
             "[load]\nparticles =%s\nopposite =%s\nforce = 0 -10000 0\nramp = 1e-4\n",
             dt, rows * cols, lattice, xi, xi, extra, top, bottom);
}

/* Opens ini, runs n steps from the start; returns the largest |ledger residual| over the steps
 * divided by the final work of the loads (s stays open for the caller's checks). */
static double ledger_run(dsim *s, const char *ini, long n)
{
    dsim_open(s, ini);
    dsim_start(s);
    double worst = 0.0;
    for (long k = 0; k < n; k++) {
        dsim_steps(s, 1);
        worst = fmax(worst, fabs(dem_energy_residual(&s->S.E)));
    }
    return worst / s->S.E.work_external;
}

/* E_p -> infinity gives back standard DEM: a bonded 6 x 3 lattice loaded over 400 steps with
 * deformable discs of E_p = 1e300 moves as without them, to round-off (the reach of a circle
 * r / |u| differs from r by an ulp; measured: 1.6e-16 of the largest displacement). */
START_TEST(invariant_rigid_limit_is_dem)
{
    char lat[32], ini[2048];
    write_lattice(lat, 6, 3);
    dsim a, b;
    specimen(ini, sizeof ini, lat, 6, 3, 1e-7, 0.1,
             "deformable = true\nyoung_modulus = 1e300\npoisson_ratio = 0.35\n");
    dsim_open(&a, ini);
    specimen(ini, sizeof ini, lat, 6, 3, 1e-7, 0.1, "");
    dsim_open(&b, ini);
    dsim_steps(&a, 400);
    dsim_steps(&b, 400);
    double umax = 0.0, diff = 0.0;
    for (int i = 0; i < 18; i++) {
        umax = fmax(umax, fabs(b.W.P.x[i].y - (2 * (i / 3) + 1) * 1e-3));
        diff = fmax(diff, v3_norm(v3_sub(a.W.P.x[i], b.W.P.x[i])));
    }
    ck_assert_double_gt(umax, 1e-8); /* it moved */
    ck_assert_msg(diff < 1e-12 * umax, "rigid limit differs by %g of %g", diff, umax);
    ck_assert_int_eq(b.S.nbond, 6 * 2 + 5 * 3);
    dsim_close(&a);
    dsim_close(&b);
    unlink(lat);
}
END_TEST

/* The ledger closes with bonds (rigid discs, dashpots 0.1): kinetic + bond energy + damping -
 * work of the loads stays within 1e-6 of the final work at every step. */
START_TEST(energy_ledger_closes_with_bonds)
{
    char lat[32], ini[2048];
    write_lattice(lat, 6, 3);
    specimen(ini, sizeof ini, lat, 6, 3, 1e-7, 0.1, "");
    dsim s;
    double worst = ledger_run(&s, ini, 2000);
    ck_assert_double_gt(s.S.E.elastic_n, 0.1 * s.S.E.work_external);
    ck_assert_double_gt(s.S.E.damping, 0.0);
    ck_assert_msg(worst < 1e-6, "ledger residual %g of the work", worst);
    dsim_close(&s);
    unlink(lat);
}
END_TEST

/* Deformable discs (k_n/(t E_p) = 0.35, no dashpots): the ledger (with the discs' strain
 * energy and the loads' work on the strain) does not close exactly, since a disc's shape lags
 * its forces by one step; the residual is of first order in dt (measured relative to the work:
 * 4.9e-3, 2.7e-3, 1.4e-3 at dt = 2e-7, 1e-7, 5e-8 on the 20 x 9 specimen): the model
 * conserves energy in the limit dt -> 0. */
START_TEST(energy_deformable_residual_first_order)
{
    char lat[32], ini[2048];
    write_lattice(lat, 8, 3);
    double res[3];
    for (int k = 0; k < 3; k++) {
        double dt = 2e-7 / (1 << k);
        specimen(ini, sizeof ini, lat, 8, 3, dt, 0.0,
                 "deformable = true\nyoung_modulus = 2e10\npoisson_ratio = 0.35\n");
        dsim s;
        res[k] = ledger_run(&s, ini, 200L << k);
        ck_assert_double_gt(s.S.E.elastic_particles, 0.1 * s.S.E.work_external);
        dsim_close(&s);
    }
    ck_assert_msg(res[0] < 2e-2, "residual %g", res[0]);
    ck_assert_msg(res[1] < 0.65 * res[0] && res[2] < 0.65 * res[1], "residuals %g %g %g", res[0],
                  res[1], res[2]);
    unlink(lat);
}
END_TEST

/* Two bonded discs pulled apart by 1 kN each, the bond's tensile strength 500 N: it breaks
 * once (counted), the discs separate, and the released spring energy is booked as dissipated
 * (the ledger closes to 1e-6 of the work). */
START_TEST(unit_bond_breaks_in_tension)
{
    char lat[32], ini[2048];
    write_lattice(lat, 2, 1);
    specimen(ini, sizeof ini, lat, 2, 1, 1e-7, 0.0, "bond_strength_normal = 500\n");
    /* pull instead of push: top up, bottom down */
    char *f = strstr(ini, "force = 0 -10000 0");
    ck_assert_ptr_nonnull(f);
    memcpy(f, "force = 0  10000 0", 18);
    dsim s;
    double worst = ledger_run(&s, ini, 3000);
    ck_assert_int_eq(s.S.nbond, 1);
    ck_assert_int_eq(s.S.bonds_broken, 1);
    ck_assert_int_eq(dem_bonds_intact(&s.S), 0);
    ck_assert_double_gt(s.W.P.x[1].y - s.W.P.x[0].y, 2.001e-3); /* apart */
    ck_assert_double_gt(s.S.E.friction, 0.0);                   /* the released energy */
    ck_assert_msg(worst < 1e-6, "ledger residual %g of the work", worst);
    dsim_close(&s);
    unlink(lat);
}
END_TEST

/* The 20 x 9 specimen, loaded, then damped to rest (dashpots 0.5 of critical, 1.5 ms; dt =
 * 1e-7: with these dashpots the bonded lattice is unstable from about 1.5e-7 once its lateral
 * modes are excited, experiments/ddem). Standard DEM gives E = k_n/t (to 1e-6) and nu = 0
 * exactly (no x movement at all); deformable discs at k_n/(t E_p) = 0.35, nu_p = 0.35 give the
 * series estimate of docs/physics.md, E_DDEM/E_DEM = 0.71888 and nu = 0.15137, within 1e-3
 * (measured 0.71890 and 0.15136). */
START_TEST(analytic_lattice_moduli)
{
    char lat[32], ini[2048];
    write_lattice(lat, 20, 9);
    const char *extra[2] = {"", "deformable = true\nyoung_modulus = 2e10\npoisson_ratio = 0.35\n"};
    double E[2], nu[2];
    for (int m = 0; m < 2; m++) {
        specimen(ini, sizeof ini, lat, 20, 9, 1e-7, 0.5, extra[m]);
        dsim s;
        dsim_open(&s, ini);
        vec3 x0[180];
        memcpy(x0, s.W.P.x, sizeof x0);
        dsim_steps(&s, 15000); /* 0.1 ms of loading, 1.4 ms at the full load */
        ck_assert_double_lt(s.S.E.kin_trans, 1e-9 * s.S.E.work_external);
        double top = 0, bot = 0, left = 0, right = 0;
        for (int c = 0; c < 9; c++) {
            top += (s.W.P.x[171 + c].y - x0[171 + c].y) / 9;
            bot += (s.W.P.x[c].y - x0[c].y) / 9;
        }
        for (int r = 0; r < 20; r++) {
            left += (s.W.P.x[9 * r].x - x0[9 * r].x) / 20;
            right += (s.W.P.x[9 * r + 8].x - x0[9 * r + 8].x) / 20;
        }
        double ey = (top - bot) / 38e-3, ex = (right - left) / 16e-3;
        double sigma = 9e4 / (18e-3 * 10.0);
        E[m] = -sigma / ey;
        nu[m] = -ex / ey;
        dsim_close(&s);
    }
    ck_assert_double_eq_tol(E[0] / (7e10 / 10.0), 1.0, 1e-6);
    ck_assert_double_eq(nu[0], 0.0);
    double kappa = 0.35, a = 4.0 * (1 - 0.35 * 0.35) * kappa / CDLAB_PI;
    double ratio = 1.0 / (1.0 + a), nu_est = 4.0 * 0.35 * 1.35 * kappa / CDLAB_PI / (1.0 + a);
    ck_assert_msg(fabs(E[1] / E[0] / ratio - 1.0) < 1e-3, "E ratio %.6g, estimate %.6g",
                  E[1] / E[0], ratio);
    ck_assert_msg(fabs(nu[1] / nu_est - 1.0) < 1e-3, "nu %.6g, estimate %.6g", nu[1], nu_est);
    unlink(lat);
}
END_TEST

/* Refused, with the key named: E_p <= 0, nu_p outside (-1, 0.5), deformable discs in 3D, the
 * options of a mode not switched on, a thickness for spheres, a bond gap beyond the skin. */
START_TEST(errors_ddem_input)
{
    const char *base = "[system]\nmode = dem\ndimension = %d\ndt = 1e-3\nsteps = 1\n"
                       "[particles]\ncount = 2\nradius = 0.5\nmass = 1\n%s"
                       "[dem]\nk_n = 1\n%s";
    struct {
        int dim;
        const char *particles, *dem, *message;
    } cases[] = {
        {2, "", "deformable = true\nyoung_modulus = 0\npoisson_ratio = 0.3\n", "young_modulus"},
        {2, "", "deformable = true\nyoung_modulus = -1\npoisson_ratio = 0.3\n", "young_modulus"},
        {2, "", "deformable = true\nyoung_modulus = 1\npoisson_ratio = 0.5\n", "below 0.5"},
        {2, "", "deformable = true\nyoung_modulus = 1\npoisson_ratio = -1\n", "poisson_ratio"},
        {2, "", "deformable = true\nyoung_modulus = 1\n", "poisson_ratio"},
        {3, "", "deformable = true\nyoung_modulus = 1\npoisson_ratio = 0.3\n",
         "dimension must be 2"},
        {2, "", "young_modulus = 1\n", "only with dem.deformable"},
        {2, "", "bond_gap = 0.01\n", "only with dem.bond"},
        {2, "", "bond = true\nbond_gap = 0.3\n", "skin"},
        {3, "thickness = 2\n", "", "only discs"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char ini[1024];
        snprintf(ini, sizeof ini, base, cases[k].dim, cases[k].particles, cases[k].dem);
        diag err = {{0}};
        status s = read_config_text(ini, "ddem.ini", 1, &err);
        ck_assert_msg(s == CDLAB_ERR_CONFIG && strstr(err.msg, cases[k].message),
                      "case %zu: status %d, %s", k, (int)s, err.msg);
    }
}
END_TEST

/* A bonded, deformable run through the run driver: the bond counts, the strain energy and
 * the snapshots' stress, strain and ellipses are in the file, and the XDMF sidecar names
 * them. */
START_TEST(io_ddem_output)
{
    char lat[32], ini[2048];
    write_lattice(lat, 4, 3);
    specimen(ini, sizeof ini, lat, 4, 3, 1e-7, 0.2,
             "deformable = true\nyoung_modulus = 2e10\npoisson_ratio = 0.35\n");
    char *steps = strstr(ini, "steps = 1\n");
    ck_assert_ptr_nonnull(steps);
    memcpy(steps, "steps = 9\n", 10);
    char full[2200];
    snprintf(full, sizeof full, "%s[output]\nevery = 3\n", ini);
    char path[32];
    diag err = {{0}};
    run_summary sum;
    ck_assert_msg(run_to_temp(full, "ddem.ini", path, &sum, &err) == CDLAB_OK, "%s", err.msg);
    double *d;
    long n;
    ck_assert_int_eq(h5in_read_doubles(path, "/series/bonds/intact", &d, &n, &err), CDLAB_OK);
    ck_assert_int_eq(n, 10);
    ck_assert_double_eq(d[n - 1], 4 * 2 + 3 * 3);
    free(d);
    ck_assert_int_eq(h5in_read_doubles(path, "/series/energy/elastic_particles", &d, &n, &err),
                     CDLAB_OK);
    ck_assert_double_gt(d[n - 1], 0.0);
    free(d);
    ck_assert_int_eq(h5in_read_doubles(path, "/snapshots/00000009/stress", &d, &n, &err), CDLAB_OK);
    ck_assert_int_eq(n, 12 * 9);
    ck_assert_double_lt(d[9 * 10 + 4], 0.0); /* a top disc: compressed along y */
    free(d);
    ck_assert_int_eq(h5in_read_doubles(path, "/snapshots/00000009/ellipse_b", &d, &n, &err),
                     CDLAB_OK);
    ck_assert_double_lt(d[10], 1e-3); /* shorter than the radius along y */
    free(d);
    char xmf[64];
    xdmf_sidecar_path(path, xmf, sizeof xmf);
    FILE *f = fopen(xmf, "r");
    ck_assert_ptr_nonnull(f);
    char buf[65536];
    size_t got = fread(buf, 1, sizeof buf - 1, f);
    buf[got] = 0;
    fclose(f);
    ck_assert_ptr_nonnull(strstr(buf, "<Attribute Name=\"stress\" AttributeType=\"Tensor\""));
    ck_assert_ptr_nonnull(strstr(buf, "Dimensions=\"12 3 3\""));
    ck_assert_ptr_nonnull(strstr(buf, "<Attribute Name=\"ellipse_axis\" AttributeType=\"Vector\""));
    remove_output(path);
    unlink(lat);
}
END_TEST

Suite *ddem_suite(void)
{
    Suite *s = suite_create("ddem");
    TCase *t = tcase_create("ddem");
    tcase_set_timeout(t, TEST_TIMEOUT_SECONDS);
    tcase_add_test(t, invariant_rigid_limit_is_dem);
    tcase_add_test(t, energy_ledger_closes_with_bonds);
    tcase_add_test(t, energy_deformable_residual_first_order);
    tcase_add_test(t, unit_bond_breaks_in_tension);
    tcase_add_test(t, analytic_lattice_moduli);
    tcase_add_test(t, errors_ddem_input);
    tcase_add_test(t, io_ddem_output);
    suite_add_tcase(s, t);
    return s;
}

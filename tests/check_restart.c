/* Restart from checkpoints, determinism of whole runs, and clean interruption by a signal. */
#include "suites.h"

#include "config.h"
#include "h5io.h"
#include "xdmf.h"

#include <hdf5.h>

#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *CD_PILE =
    "[system]\ndimension = 2\ndt = 0.01\nsteps = %ld\ngravity = 0 -1 0\nseed = 9\n"
    "[solver]\nsweep = random\ncriterion = local\niterations = 200\nepsilon = 1e-4\n"
    "[particles]\nsource = random\ncount = 300\nradius_min = 0.4\nradius_max = 0.5\n"
    "box_min = 0 0 0\nbox_max = 15 30 0\n"
    "[contact]\nfriction = 0.3\n"
    "[plane.floor]\npoint = 0 0 0\nnormal = 0 1 0\n"
    "[plane.left]\npoint = 0 0 0\nnormal = 1 0 0\n"
    "[plane.right]\npoint = 15 0 0\nnormal = -1 0 0\n"
    "[piston.top]\npoint = 0 30 0\nnormal = 0 -1 0\nmass = 50\nforce = 20\nvelocity = 3\n"
    "[output]\nevery = 0\n";

static const char *DEM_PILE =
    "[system]\nmode = dem\ndimension = 3\ndt = 2e-4\nsteps = %ld\ngravity = 0 0 -10\nseed = 3\n"
    "periodic = x y\nbox_min = 0 0 0\nbox_max = 6 6 0\n"
    "[particles]\nsource = random\ncount = 250\nradius_min = 0.25\nradius_max = 0.3\n"
    "box_min = 0 0 0\nbox_max = 6 6 8\n"
    "[contact]\nfriction = 0.4\ndetect_gap = 0.05\n"
    "[dem]\nk_n = 1e4\nk_t = 5e3\ndamping_normal = 0.2\ndamping_tangential = 0.1\n"
    "[plane.floor]\npoint = 0 0 0\nnormal = 0 0 1\n"
    "[piston.top]\npoint = 0 0 8\nnormal = 0 0 -1\nmass = 5\nforce = 10\n"
    "[output]\nevery = 0\n";

/* Runs config text (steps filled in) into a new temporary file, optionally continuing from
 * restart; returns the status, path holds the file name (32 bytes). */
static status run_config(const char *fmt, long steps, const char *restart, char *path, diag *err)
{
    char ini[2048];
    snprintf(ini, sizeof ini, fmt, steps);
    run_summary sum;
    return run_to_temp_from(ini, "restart.ini", restart, path, &sum, err);
}

/* The state datasets of a file's checkpoint at step, concatenated (x, v, w, q, walls, contacts). */
static void *checkpoint_state(const char *file, long step, long n, long nw, size_t *bytes,
                              long *contacts)
{
    h5in *h;
    diag err;
    ck_assert_msg(h5in_open(&h, file, &err) == CDLAB_OK, "%s", err.msg);
    char g[64], p[96];
    snprintf(g, sizeof g, "/checkpoints/%08ld", step);
    long long nc, cb;
    ck_assert_msg(h5in_attr_int(h, g, "contacts", &nc, &err) == CDLAB_OK, "%s", err.msg);
    /* CD contact records or DEM pair records */
    ck_assert_msg(h5in_attr_int(h, g, "contact_bytes", &cb, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert(cb == (long long)sizeof(contact) || cb == (long long)sizeof(dem_pair));
    long words = (long)(cb / 8);
    size_t total = (size_t)(13 * n + 3 * nw + nc * words) * 8;
    char *buf = malloc(total), *at = buf;
    const char *names[] = {"x", "v", "w", "q", "walls", "contacts"};
    long counts[] = {3 * n, 3 * n, 3 * n, 4 * n, 3 * nw, nc * words};
    for (int k = 0; k < 6; k++) {
        snprintf(p, sizeof p, "%s/%s", g, names[k]);
        ck_assert_msg(h5in_read(h, p, k == 5 ? H5IO_INT64 : H5IO_DOUBLE, at, counts[k], &err) ==
                          CDLAB_OK,
                      "%s", err.msg);
        at += counts[k] * 8;
    }
    h5in_close(h);
    *bytes = total;
    *contacts = (long)nc;
    return buf;
}

static void check_restart_identical(const char *fmt, long n, long nw, long half)
{
    char full[32], first[32], second[32];
    diag err;
    ck_assert_msg(run_config(fmt, 2 * half, NULL, full, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_msg(run_config(fmt, half, NULL, first, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_msg(run_config(fmt, 2 * half, first, second, &err) == CDLAB_OK, "%s", err.msg);
    size_t ba, bb;
    long ca, cb;
    void *a = checkpoint_state(full, 2 * half, n, nw, &ba, &ca);
    void *b = checkpoint_state(second, 2 * half, n, nw, &bb, &cb);
    ck_assert_int_gt(ca, n / 10);
    ck_assert_int_eq(ca, cb);
    ck_assert_msg(ba == bb && memcmp(a, b, ba) == 0, "restarted run differs from the full run");
    /* and the first half really ended elsewhere */
    size_t bh;
    long ch;
    void *h = checkpoint_state(first, half, n, nw, &bh, &ch);
    ck_assert(bh != ba || memcmp(h, a, bh) != 0);
    /* the continued run's summary is over its own steps: its mean sweeps is the mean of its
     * rows after the checkpoint's (it was divided by all 2N steps: half of it) */
    double *sw, mean, sum = 0.0;
    long rows;
    h5in *f;
    ck_assert_msg(h5in_read_doubles(second, "/series/sweeps", &sw, &rows, &err) == CDLAB_OK, "%s",
                  err.msg);
    ck_assert_int_eq(rows, half + 1);
    for (long k = 1; k < rows; k++)
        sum += sw[k];
    ck_assert_msg(h5in_open(&f, second, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_msg(h5in_attr_double(f, "/summary", "mean_sweeps", &mean, &err) == CDLAB_OK, "%s",
                  err.msg);
    h5in_close(f);
    ck_assert_msg(fabs(mean - sum / (double)half) <= 1e-12 * (sum / (double)half),
                  "mean_sweeps %.17g, its rows' mean %.17g", mean, sum / (double)half);
    free(sw);
    /* every common series goes on as the full run's, from the checkpoint's row on: its first
     * row included (its contacts, overlaps, sweeps and residual were zeros) */
    static const char *const common[] = {"/series/t",
                                         "/series/sweeps",
                                         "/series/converged",
                                         "/series/residual",
                                         "/series/mean_overlap",
                                         "/series/max_overlap",
                                         "/series/contacts",
                                         "/series/active_contacts",
                                         "/series/sliding_contacts",
                                         "/series/kinetic_energy"};
    for (size_t k = 0; k < sizeof common / sizeof common[0]; k++) {
        double *xf, *xc;
        long mf, mc;
        ck_assert_msg(h5in_read_doubles(full, common[k], &xf, &mf, &err) == CDLAB_OK, "%s",
                      err.msg);
        ck_assert_msg(h5in_read_doubles(second, common[k], &xc, &mc, &err) == CDLAB_OK, "%s",
                      err.msg);
        ck_assert_int_eq(mf, 2 * half + 1);
        ck_assert_int_eq(mc, half + 1);
        for (long r = 0; r < mc; r++)
            ck_assert_msg(memcmp(&xf[half + r], &xc[r], sizeof *xc) == 0,
                          "%s row %ld of the continued run: %.17g, the full run's %.17g", common[k],
                          r, xc[r], xf[half + r]);
        free(xf);
        free(xc);
    }
    /* the stress series (both modes) goes on as the full run's: its rows from the checkpoint's
     * (the CD pile's carry forces; the DEM piles may still be falling apart) */
    double *sf, *sc;
    long nf, nc;
    static const char *const stress[] = {"/series/stress_walls", "/series/stress"};
    for (int k = 0; k < 2; k++) { /* the particles' stays in sc for the check below */
        if (k > 0) {
            free(sf);
            free(sc);
        }
        ck_assert_msg(h5in_read_doubles(full, stress[k], &sf, &nf, &err) == CDLAB_OK, "%s",
                      err.msg);
        ck_assert_msg(h5in_read_doubles(second, stress[k], &sc, &nc, &err) == CDLAB_OK, "%s",
                      err.msg);
        ck_assert_int_eq(nf, 9 * (2 * half + 1));
        ck_assert_int_eq(nc, 9 * (half + 1));
        ck_assert_msg(memcmp(sf + 9 * half, sc, (size_t)nc * sizeof *sc) == 0,
                      "the continued %s rows differ", stress[k]);
    }
    ck_assert_msg(h5in_open(&f, second, &err) == CDLAB_OK, "%s", err.msg);
    if (h5in_exists(f, "/elasticity"))
        ck_assert(sc[nc - 9] < 0.0 && sc[nc - 5] < 0.0); /* sigma_xx, sigma_yy: 2D, compressed */
    h5in_close(f);
    free(sf);
    free(sc);
    /* cdlab info shows where the continued run began and the engine's figures, each double
     * in full (it printed only /, /parameters, /build and /summary, floats to 10 digits) */
    {
        char *text = NULL, want[128], num[32];
        size_t len = 0;
        FILE *m = open_memstream(&text, &len);
        ck_assert_ptr_nonnull(m);
        ck_assert_msg(h5in_describe(second, m, &err) == CDLAB_OK, "%s", err.msg);
        fclose(m);
        snprintf(want, sizeof want, "/restart\n  @from_file = %s\n  @from_step = %ld\n", first,
                 half);
        ck_assert_msg(strstr(text, want), "no '%s' in\n%s", want, text);
        ck_assert_msg(h5in_open(&f, second, &err) == CDLAB_OK, "%s", err.msg);
        int cd = h5in_exists(f, "/elasticity");
        ck_assert(cd != h5in_exists(f, "/dem"));
        const char *group = cd ? "/elasticity" : "/dem", *name = cd ? "q" : "critical_dt";
        double v;
        ck_assert_msg(h5in_attr_double(f, group, name, &v, &err) == CDLAB_OK, "%s", err.msg);
        h5in_close(f);
        config_fmt_double(num, sizeof num, v);
        ck_assert_msg(strtod(num, NULL) == v && strlen(num) > 11, "%s", num);
        snprintf(want, sizeof want, "%s\n", group);
        ck_assert_msg(strstr(text, want), "no %s in\n%s", group, text);
        snprintf(want, sizeof want, "  @%s = %s\n", name, num);
        ck_assert_msg(strstr(text, want), "no '%s' in\n%s", want, text);
        ck_assert_msg(strstr(text, "/checkpoints: 1 checkpoint\n"), "%s", text);
        free(text);
    }
    free(a);
    free(b);
    free(h);
    remove_output(full);
    remove_output(first);
    remove_output(second);
}

/* CD (random sweep, local criterion, friction, piston): 2N steps, and N steps plus a restart
 * for N more, end in bit-identical states (positions, velocities, orientations, walls, every
 * contact record with its force). */
START_TEST(determinism_restart_cd_bit_identical)
{
    check_restart_identical(CD_PILE, 300, 4, 40);
}
END_TEST

/* The same in DEM mode (Kuhn law, dashpots, periodic x/y, piston, neighbour-list rebuilds
 * across the restart). */
START_TEST(determinism_restart_dem_bit_identical)
{
    check_restart_identical(DEM_PILE, 250, 2, 150);
}
END_TEST

/* A restart may widen the neighbour list's skin (contact.detect_gap): the list is rebuilt at its
 * first step, else pairs between the two skins, not listed, could touch unseen (the memcheck
 * pile from 0.02 to 0.8 ended 4.4 apart, overlaps 0.138 against 0.047). The particles end as in
 * the run that kept the narrow skin throughout (the skin moves only the list, not the
 * forces), also from a checkpoint that does not record its skin (an older cdlab's: its file's
 * contact.detect_gap stands in). */
/* tests/memcheck/dem.ini's pile (60 spheres falling onto a base under a piston) with the skin
 * given */
#define SKIN_PILE(gap)                                                                             \
    "[system]\ndimension = 3\ndt = 1e-3\nmode = dem\nsteps = %ld\nseed = 5\ngravity = 0 0 -20\n"   \
    "[dem]\nk_n = 1e4\nk_t = 5e3\ndamping_normal = 0.5\ndamping_tangential = 0.2\n"                \
    "[particles]\nsource = random\ncount = 60\nradius_min = 0.4\nradius_max = 0.6\n"               \
    "box_min = 0 0 0\nbox_max = 4 4 8\n[contact]\nfriction = 0.4\ndetect_gap = " gap "\n"          \
    "[plane.base]\npoint = 0 0 0\nnormal = 0 0 1\n"                                                \
    "[piston.top]\npoint = 0 0 8.5\nnormal = 0 0 -1\nmass = 5\nforce = 20\n[output]\nevery = 0\n"

START_TEST(determinism_restart_dem_wider_skin)
{
    const long n = 60, nw = 2, half = 300, end = 450;
    char full[32], first[32], second[32], third[32];
    diag err;
    ck_assert_msg(run_config(SKIN_PILE("0.02"), end, NULL, full, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_msg(run_config(SKIN_PILE("0.02"), half, NULL, first, &err) == CDLAB_OK, "%s",
                  err.msg);
    ck_assert_msg(run_config(SKIN_PILE("0.8"), end, first, second, &err) == CDLAB_OK, "%s",
                  err.msg);
    /* the first part's checkpoint as an older cdlab wrote it */
    hid_t f = H5Fopen(first, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    char g[64];
    snprintf(g, sizeof g, "/checkpoints/%08ld", half);
    ck_assert_int_ge(H5Adelete_by_name(f, g, "dem_skin", H5P_DEFAULT), 0);
    H5Fclose(f);
    ck_assert_msg(run_config(SKIN_PILE("0.8"), end, first, third, &err) == CDLAB_OK, "%s", err.msg);
    size_t ba, bb, bc;
    long ca, cb, cc;
    char *a = checkpoint_state(full, end, n, nw, &ba, &ca);
    char *b = checkpoint_state(second, end, n, nw, &bb, &cb);
    char *c = checkpoint_state(third, end, n, nw, &bc, &cc);
    ck_assert_int_gt(cb, ca);                     /* the wider list */
    size_t state = (size_t)(13 * n + 3 * nw) * 8; /* x, v, w, q, walls: the lists differ */
    ck_assert_msg(memcmp(a, b, state) == 0, "the restart with the wider skin ends elsewhere");
    ck_assert_msg(memcmp(a, c, state) == 0, "the same from a checkpoint without its skin");
    free(a);
    free(b);
    free(c);
    remove_output(full);
    remove_output(first);
    remove_output(second);
    remove_output(third);
}
END_TEST

/* A CD restart that changes contact.detect_gap counts the missed contacts of its checkpoint's
 * step with the gap that step's detection used (unit_missed_contacts_counted's pair: pushed 0.6
 * across a gap of 0.5 in step 1, seen overlapping by 0.1 at step 2's detection). Continued from
 * step 1 with the gap raised to 0.6, the pair was missed all the same (the run that wrote the
 * checkpoint looked within 0.25); the old code took 0.5 < 0.6 as a candidate and counted none.
 * A checkpoint without its detect_gap (written before 2026-11-28) gives the writing run's
 * contact.detect_gap, from /parameters. */
START_TEST(determinism_restart_cd_missed_with_checkpoint_gap)
{
    const char *fmt = "[system]\ndimension = 1\ndt = 1\nsteps = %d\n"
                      "[solver]\ncriterion = local\nepsilon = 1e-12\ndelta = 1e-15\n"
                      "[particles]\ncount = 2\nradius = 0.5\nmass = 1\nspacing = 0.5\n"
                      "[contact]\ndetect_gap = %s\n"
                      "[load]\nparticles = 0\nforce = 0.6 0 0\n[output]\nevery = 0\n";
    char ini[1024], first[32], second[32], third[32];
    diag err = {{0}};
    run_summary sum;
    snprintf(ini, sizeof ini, fmt, 1, "0.25");
    ck_assert_msg(run_to_temp(ini, "gap.ini", first, &sum, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_int_eq(sum.missed_contacts, 0);
    snprintf(ini, sizeof ini, fmt, 3, "0.6");
    ck_assert_msg(run_to_temp_from(ini, "gap.ini", first, second, &sum, &err) == CDLAB_OK, "%s",
                  err.msg);
    ck_assert_msg(sum.missed_contacts == 1 && fabs(sum.missed_overlap - 0.1) < 1e-12,
                  "%ld missed, overlap %g", sum.missed_contacts, sum.missed_overlap);
    hid_t f = H5Fopen(first, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    ck_assert_int_ge(H5Adelete_by_name(f, "/checkpoints/00000001", "detect_gap", H5P_DEFAULT), 0);
    H5Fclose(f);
    ck_assert_msg(run_to_temp_from(ini, "gap.ini", first, third, &sum, &err) == CDLAB_OK, "%s",
                  err.msg);
    ck_assert_msg(sum.missed_contacts == 1, "%ld missed without the attribute",
                  sum.missed_contacts);
    remove_output(first);
    remove_output(second);
    remove_output(third);
}
END_TEST

/* The same with particles.order = spatial: the restart builds the scene again, renumbered
 * alike, under the checkpoint's state. A restart that changes the order is refused, also where
 * every particle is alike (equal radii: the checkpoint's states would land on other ids). */
START_TEST(determinism_restart_dem_spatial_order)
{
    char fmt[2048];
    const char *at = strstr(DEM_PILE, "[particles]\n") + strlen("[particles]\n");
    snprintf(fmt, sizeof fmt, "%.*sorder = spatial\n%s", (int)(at - DEM_PILE), DEM_PILE, at);
    check_restart_identical(fmt, 250, 2, 150);
    /* equal spheres: given, then spatial; spatial, then given */
    char alike[2][2048], first[32], second[32];
    for (int v = 0; v < 2; v++) {
        const char *src = v ? fmt : DEM_PILE, *r = strstr(src, "radius_max = 0.3");
        snprintf(alike[v], sizeof alike[v], "%.*sradius_max = 0.25%s", (int)(r - src), src,
                 r + strlen("radius_max = 0.3"));
    }
    for (int v = 0; v < 2; v++) {
        diag err;
        ck_assert_msg(run_config(alike[v], 20, NULL, first, &err) == CDLAB_OK, "%s", err.msg);
        ck_assert_int_ne(run_config(alike[1 - v], 40, first, second, &err), CDLAB_OK);
        ck_assert_msg(strstr(err.msg, "changes the particles' radii, masses, frozen flags or "
                                      "order ([particles])"),
                      "%s", err.msg);
        remove_output(first);
        remove_output(second);
    }
}
END_TEST

/* particles.order = auto (the default) decides from the input alone, so a restart renumbers
 * as its run did: 50,000 discs placed at random (renumbered), 2 steps plus 2 end bit-identical
 * to 4. A run in the given order (as cdlab made them before auto) is refused a restart in auto,
 * told to set particles.order = given, and continues with it. */
START_TEST(determinism_restart_dem_auto_order)
{
    const char *fmt = "[system]\nmode = dem\ndimension = 2\ndt = 1e-3\nsteps = %ld\n"
                      "gravity = 0 -1 0\nseed = 2\n"
                      "[particles]\nsource = random\ncount = 50000\nradius_min = 0.4\n"
                      "radius_max = 0.5\nbox_min = 0 0 0\nbox_max = 300 300 0\n"
                      "[contact]\nfriction = 0.4\ndetect_gap = 0.2\n[dem]\nk_n = 1e4\n"
                      "damping_normal = 0.2\n[plane.floor]\npoint = 0 0 0\nnormal = 0 1 0\n"
                      "[output]\nevery = 0\n";
    char ini[1024];
    snprintf(ini, sizeof ini, fmt, 4L);
    ck_assert_int_eq(scene_order_taken(ini).automatic, 1);
    check_restart_identical(fmt, 50000, 1, 2);
    diag err;
    char given[1024], first[32], second[32];
    const char *at = strstr(fmt, "[particles]\n") + strlen("[particles]\n");
    snprintf(given, sizeof given, "%.*sorder = given\n%s", (int)(at - fmt), fmt, at);
    ck_assert_msg(run_config(given, 2, NULL, first, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_int_ne(run_config(fmt, 4, first, second, &err), CDLAB_OK);
    ck_assert_msg(strstr(err.msg, "changes the particles' radii, masses, frozen flags or order") &&
                      strstr(err.msg, "continues with --set particles.order=given"),
                  "%s", err.msg);
    remove_output(second);
    ck_assert_msg(run_config(given, 4, first, second, &err) == CDLAB_OK, "%s", err.msg);
    remove_output(first);
    remove_output(second);
}
END_TEST

/* Bonded deformable discs (a 6 x 4 lattice loaded from both ends, dashpots): the bonds, their
 * tangential displacements and the discs' stresses (their shapes) cross the restart; N steps
 * plus N more end bit-identical to 2N. */
START_TEST(determinism_restart_ddem_bit_identical)
{
    char lat[32] = "/tmp/cdlab_latticeXXXXXX";
    int fd = mkstemp(lat);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < 4; c++)
            fprintf(f, "%.17g %.17g 0 0.001\n", (2 * c + 1) * 1e-3, (2 * r + 1) * 1e-3);
    fclose(f);
    char fmt[1024];
    snprintf(fmt, sizeof fmt,
             "[system]\nmode = dem\ndimension = 2\ndt = 1e-7\nsteps = %%ld\n"
             "[particles]\ncount = 24\nsource = file\nfile = %s\ndensity = 2000\nthickness = 10\n"
             "[dem]\nk_n = 7e10\nk_t = 7e10\ndamping_normal = 0.2\ndamping_tangential = 0.2\n"
             "bond = true\ndeformable = true\nyoung_modulus = 2e10\npoisson_ratio = 0.35\n"
             "[load]\nparticles = 20 21 22 23\nopposite = 0 1 2 3\nforce = 3000 -10000 0\n"
             "ramp = 1e-5\n[output]\nevery = 0\n",
             lat);
    check_restart_identical(fmt, 24, 0, 150);
    unlink(lat);
}
END_TEST

/* The same config and seed give bit-identical final states, in both modes. */
START_TEST(determinism_same_config_same_state)
{
    const char *fmts[] = {CD_PILE, DEM_PILE};
    long ns[] = {300, 250}, nws[] = {4, 2}, steps[] = {30, 100};
    for (int k = 0; k < 2; k++) {
        char a[32], b[32];
        diag err;
        ck_assert_msg(run_config(fmts[k], steps[k], NULL, a, &err) == CDLAB_OK, "%s", err.msg);
        ck_assert_msg(run_config(fmts[k], steps[k], NULL, b, &err) == CDLAB_OK, "%s", err.msg);
        size_t ba, bb;
        long ca, cb;
        void *sa = checkpoint_state(a, steps[k], ns[k], nws[k], &ba, &ca);
        void *sb = checkpoint_state(b, steps[k], ns[k], nws[k], &bb, &cb);
        ck_assert(ba == bb && memcmp(sa, sb, ba) == 0);
        free(sa);
        free(sb);
        remove_output(a);
        remove_output(b);
    }
}
END_TEST

/* Bad restart files: one-line errors naming the file. */
START_TEST(errors_restart_files)
{
    char good[32], out[32], txt[] = "/tmp/cdlab_txtXXXXXX", foreign[] = "/tmp/cdlab_h5XXXXXX";
    diag err;
    ck_assert_msg(run_config(CD_PILE, 5, NULL, good, &err) == CDLAB_OK, "%s", err.msg);
    int fd = mkstemp(txt);
    ck_assert_int_eq(write(fd, "not hdf5\n", 9), 9);
    close(fd);
    close(mkstemp(foreign));
    h5out *h;
    ck_assert_int_eq(h5out_create(&h, foreign, &err), CDLAB_OK);
    ck_assert_int_eq(h5out_group(h, "/something", &err), CDLAB_OK);
    ck_assert_int_eq(h5out_close(h, &err), CDLAB_OK);
    struct {
        const char *file, *fmt, *expect;
        long steps;
    } cases[] = {
        {"/nonexistent/run.h5", CD_PILE, "cannot open restart file", 10},
        {txt, CD_PILE, "not an HDF5 file", 10},
        {foreign, CD_PILE, "no /checkpoints group", 10},
        {good, DEM_PILE, "its checkpoint is of a system.mode = cd run, this is a system.mode = dem",
         10},
        {good, CD_PILE, "nothing to do", 5},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        status s = run_config(cases[k].fmt, cases[k].steps, cases[k].file, out, &err);
        ck_assert_msg(s != CDLAB_OK, "case %zu accepted", k);
        ck_assert_msg(strstr(err.msg, cases[k].expect), "case %zu: '%s' lacks '%s'", k, err.msg,
                      cases[k].expect);
        ck_assert_msg(!strchr(err.msg, '\n'), "case %zu: not one line", k);
        remove_output(out);
    }
    remove_output(good);
    remove_output(txt);
    remove_output(foreign);
}
END_TEST

/* A DEM pile of 10^8 steps started in the background: its config written to ini, its stderr
 * to log, its output named out (a fresh name: cdlab refuses an existing output without
 * --overwrite); the names are mkstemp templates. Returns its pid. */
static pid_t start_long_run(char *ini, char *out, char *log)
{
    int fd = mkstemp(ini);
    char text[2048];
    snprintf(text, sizeof text, DEM_PILE, 100000000L);
    ck_assert_int_eq(write(fd, text, strlen(text)), (long)strlen(text));
    close(fd);
    close(mkstemp(out));
    unlink(out);
    close(mkstemp(log));
    pid_t pid = fork();
    if (pid == 0) {
        int lf = open(log, O_WRONLY);
        dup2(lf, 2);
        execl(cdlab_bin(), "cdlab", "run", ini, "-o", out, "--quiet", (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* The first n - 1 bytes of a run's log. */
static void read_log(const char *log, char *msg, size_t n)
{
    FILE *f = fopen(log, "r");
    ck_assert_ptr_nonnull(f);
    size_t got = fread(msg, 1, n - 1, f);
    msg[got] = '\0';
    fclose(f);
}

/* The step of the last checkpoint in file (> 0), and the run continued from it for 20 steps. */
static void continue_from(const char *file)
{
    h5in *h;
    diag err;
    ck_assert_msg(h5in_open(&h, file, &err) == CDLAB_OK, "%s", err.msg);
    char last[256];
    ck_assert_msg(h5in_last_child(h, "/checkpoints", NULL, last, &err) == CDLAB_OK, "%s", err.msg);
    h5in_close(h);
    long at = atol(last);
    ck_assert_int_gt(at, 0);
    char second[32];
    ck_assert_msg(run_config(DEM_PILE, at + 20, file, second, &err) == CDLAB_OK, "%s", err.msg);
    remove_output(second);
}

/* SIGINT during a run: exit status 130, the message says how to restart, the file is closed and
 * readable with a checkpoint, and the restart completes the run. */
START_TEST(io_sigint_ends_cleanly_and_restarts)
{
    char ini[] = "/tmp/cdlab_sigXXXXXX", out[] = "/tmp/cdlab_sigoXXXXXX",
         log[] = "/tmp/cdlab_siglXXXXXX";
    pid_t pid = start_long_run(ini, out, log);
    nanosleep(&(struct timespec){0, 700000000L}, NULL);
    kill(pid, SIGINT);
    int wst;
    waitpid(pid, &wst, 0);
    ck_assert_msg(WIFEXITED(wst), "cdlab did not exit (signal %d)",
                  WIFSIGNALED(wst) ? WTERMSIG(wst) : 0);
    ck_assert_int_eq(WEXITSTATUS(wst), 130);
    char msg[2048];
    read_log(log, msg, sizeof msg);
    ck_assert_msg(strstr(msg, "interrupted by signal 2") && strstr(msg, "--restart"), "%s", msg);
    h5in *h;
    diag err;
    ck_assert_msg(h5in_open(&h, out, &err) == CDLAB_OK, "%s", err.msg);
    char *st;
    ck_assert_int_eq(h5in_attr_str(h, "/summary", "status", &st, &err), CDLAB_OK);
    ck_assert_msg(strstr(st, "interrupted"), "%s", st);
    free(st);
    h5in_close(h);
    continue_from(out);
    remove_output(ini);
    remove_output(out);
    remove_output(log);
}
END_TEST

/* OUT.h5.partial removed while the run writes it (a cleanup, a slip): the run stops within a
 * second, keeps its state in OUT.h5.checkpoint and says so, and that copy continues the run. It
 * went on to its end, writing into the removed file, and then said "the data are in
 * OUT.h5.partial". Rows only (output.every = 0): the check that does not wait for a snapshot. */
START_TEST(io_removed_output_stops_and_keeps_state)
{
    char ini[] = "/tmp/cdlab_rmXXXXXX", out[] = "/tmp/cdlab_rmoXXXXXX",
         log[] = "/tmp/cdlab_rmlXXXXXX";
    pid_t pid = start_long_run(ini, out, log);
    char partial[64], copy[64], xmf[64], xmf_partial[80];
    snprintf(partial, sizeof partial, "%s.partial", out);
    snprintf(copy, sizeof copy, "%s.checkpoint", out);
    for (int k = 0; k < 100 && access(partial, F_OK) != 0; k++)
        nanosleep(&(struct timespec){0, 50000000L}, NULL);
    nanosleep(&(struct timespec){0, 300000000L}, NULL);
    ck_assert_int_eq(unlink(partial), 0);
    int wst = 0, done = 0;
    for (int k = 0; k < 200 && !done; k++) { /* 20 s at most */
        done = waitpid(pid, &wst, WNOHANG) == pid;
        if (!done)
            nanosleep(&(struct timespec){0, 100000000L}, NULL);
    }
    if (!done) {
        kill(pid, SIGKILL);
        waitpid(pid, &wst, 0);
    }
    ck_assert_msg(done, "the run went on after its file was removed");
    ck_assert_msg(WIFEXITED(wst) && WEXITSTATUS(wst) == 1, "exit %d", WEXITSTATUS(wst));
    char msg[2048];
    read_log(log, msg, sizeof msg);
    ck_assert_msg(strstr(msg, "was removed while the run wrote it: the run stops") &&
                      strstr(msg, "is gone (moved or removed while the run wrote it)") &&
                      strstr(msg, "holds the state of step") && strstr(msg, "--restart"),
                  "%s", msg);
    /* no sidecar left of a file that is gone */
    xdmf_sidecar_path(out, xmf, sizeof xmf);
    snprintf(xmf_partial, sizeof xmf_partial, "%s.partial", xmf);
    ck_assert_msg(access(xmf_partial, F_OK) != 0 && access(xmf, F_OK) != 0, "%s left", xmf);
    continue_from(copy);
    remove_output(ini);
    remove_output(copy);
    remove_output(log);
}
END_TEST

Suite *restart_suite(void)
{
    Suite *s = suite_create("restart");
    TCase *t = tcase_create("determinism");
    tcase_set_timeout(t, TEST_TIMEOUT_SECONDS);
    tcase_add_test(t, determinism_restart_cd_bit_identical);
    tcase_add_test(t, determinism_restart_dem_bit_identical);
    tcase_add_test(t, determinism_restart_dem_wider_skin);
    tcase_add_test(t, determinism_restart_cd_missed_with_checkpoint_gap);
    tcase_add_test(t, determinism_restart_dem_spatial_order);
    tcase_add_test(t, determinism_restart_dem_auto_order);
    tcase_add_test(t, determinism_restart_ddem_bit_identical);
    tcase_add_test(t, determinism_same_config_same_state);
    tcase_add_test(t, errors_restart_files);
    tcase_add_test(t, io_sigint_ends_cleanly_and_restarts);
    tcase_add_test(t, io_removed_output_stops_and_keeps_state);
    suite_add_tcase(s, t);
    return s;
}

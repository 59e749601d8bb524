/* HDF5 output of a run: series lengths, parameters, provenance, snapshots. */
#include "suites.h"

#include "run/run.h"
#include "run/run_checkpoint.h"
#include "run/run_output.h"
#include "h5io.h"
#include "xdmf.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

START_TEST(io_run_writes_documented_layout)
{
    const char *ini = "[system]\ndimension = 1\ndt = 1\nsteps = 30\nseed = 5\n"
                      "[particles]\ncount = 5\nradius = 0.5\nmass = 1\norigin = 1.5 0 0\n"
                      "[plane.wall]\npoint = 0 0 0\nnormal = 1 0 0\n"
                      "[piston.top]\npoint = 7 0 0\nnormal = -1 0 0\nmass = 2\nforce = 0.1\n"
                      "[output]\nevery = 10\nprobes = 0 -1\n";
    char path[32];
    diag err = {{0}};
    run_summary sum;
    status s = run_to_temp(ini, "io.ini", path, &sum, &err);
    ck_assert_msg(s == CDLAB_OK, "%s", err.msg);
    ck_assert_int_eq(sum.steps_done, 30);

    double *d;
    long n;
    /* one row per step plus the initial state */
    ck_assert_int_eq(h5in_read_doubles(path, "/series/t", &d, &n, &err), CDLAB_OK);
    ck_assert_int_eq(n, 31);
    ck_assert_double_eq_tol(d[30], 30.0, 1e-12);
    free(d);
    ck_assert_int_eq(h5in_read_doubles(path, "/series/probe_position", &d, &n, &err), CDLAB_OK);
    ck_assert_int_eq(n, 31 * 2 * 3);
    ck_assert_double_eq_tol(d[0], 1.5, 1e-15); /* probe 0 at t = 0 */
    ck_assert_double_eq_tol(d[3], 5.5, 1e-15); /* probe -1 (particle 4) at t = 0 */
    free(d);
    ck_assert_int_eq(h5in_read_doubles(path, "/series/piston_position", &d, &n, &err), CDLAB_OK);
    ck_assert_int_eq(n, 31);
    ck_assert_double_gt(d[30], 0.0); /* pushed inward along its normal */
    free(d);
    ck_assert_int_eq(h5in_read_doubles(path, "/snapshots/00000030/position", &d, &n, &err),
                     CDLAB_OK);
    ck_assert_int_eq(n, 15);
    free(d);
    ck_assert_int_eq(h5in_read_doubles(path, "/snapshots/00000010/contacts/force", &d, &n, &err),
                     CDLAB_OK);
    free(d);
    char *v;
    ck_assert_int_eq(h5in_read_attr_string(path, "/", "config_text", &v, &err), CDLAB_OK);
    ck_assert_ptr_nonnull(strstr(v, "[piston.top]"));
    free(v);
    ck_assert_int_eq(h5in_read_attr_string(path, "/parameters", "solver.sweep", &v, &err),
                     CDLAB_OK);
    ck_assert_str_eq(v, "random"); /* defaults are recorded too */
    free(v);
    ck_assert_int_eq(h5in_read_attr_string(path, "/build", "git_commit", &v, &err), CDLAB_OK);
    ck_assert_int_gt((int)strlen(v), 0);
    free(v);
    /* the writing library's version: the headers' (the same Debian package) */
    ck_assert_int_eq(h5in_read_attr_string(path, "/build", "hdf5", &v, &err), CDLAB_OK);
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE);
    ck_assert_str_eq(v, want);
    free(v);
    ck_assert_int_eq(h5in_read_attr_string(path, "/summary", "status", &v, &err), CDLAB_OK);
    ck_assert_str_eq(v, "completed");
    free(v);
    remove_output(path);
}
END_TEST

/* contacts/endpoints (docs/output.md): row 2k is body 0's centre (or the point of the wall's
 * surface nearest body 1), row 2k+1 body 1's centre, also for open candidates (gap > 0), where
 * x_j + l1 - l0 was once off by g n. Three disks 0.1 apart on a line 0.05 above a floor, all
 * candidates (detect_gap 0.25) and all open; exact to 1e-14 (one subtraction of O(1) values). */
START_TEST(io_snapshot_endpoints_open_candidates)
{
    const char *ini = "[system]\ndimension = 2\ndt = 0.01\nsteps = 2\n"
                      "[particles]\ncount = 3\nradius = 0.5\nmass = 1\nspacing = 0.1\n"
                      "origin = 1 0.55 0\ndirection = 1 0 0\n"
                      "[contact]\ndetect_gap = 0.25\nfriction = 0.3\n"
                      "[plane.floor]\npoint = 0 0 0\nnormal = 0 1 0\n"
                      "[output]\nevery = 1\n";
    char path[32];
    diag err = {{0}};
    run_summary sum;
    status s = run_to_temp(ini, "endpoints.ini", path, &sum, &err);
    ck_assert_msg(s == CDLAB_OK, "%s", err.msg);
    double *x, *e, *gap;
    long n, ne, ng;
    ck_assert_int_eq(h5in_read_doubles(path, "/snapshots/00000001/position", &x, &n, &err),
                     CDLAB_OK);
    ck_assert_int_eq(h5in_read_doubles(path, "/snapshots/00000001/contacts/endpoints", &e, &ne,
                                       &err),
                     CDLAB_OK);
    ck_assert_int_eq(h5in_read_doubles(path, "/snapshots/00000001/contacts/gap", &gap, &ng, &err),
                     CDLAB_OK);
    h5in *h;
    ck_assert_int_eq(h5in_open(&h, path, &err), CDLAB_OK);
    int32_t pair[16];
    ck_assert_int_eq(ng, 5); /* 2 particle pairs + 3 wall contacts */
    ck_assert_int_eq(h5in_read(h, "/snapshots/00000001/contacts/pair", H5IO_INT32, pair, 2 * ng,
                               &err),
                     CDLAB_OK);
    h5in_close(h);
    for (long k = 0; k < ng; k++) {
        int i = pair[2 * k], j = pair[2 * k + 1];
        ck_assert_msg(gap[k] > 0.04, "contact %ld: gap %g (the test wants open candidates)", k,
                      gap[k]);
        double want0[3];
        if (i >= 0)
            for (int a = 0; a < 3; a++)
                want0[a] = x[3 * i + a];
        else
            want0[0] = x[3 * j], want0[1] = 0.0, want0[2] = 0.0; /* the floor below body 1 */
        for (int a = 0; a < 3; a++) {
            ck_assert_double_eq_tol(e[6 * k + a], want0[a], 1e-14);
            ck_assert_double_eq_tol(e[6 * k + 3 + a], x[3 * j + a], 1e-14);
        }
    }
    free(x);
    free(e);
    free(gap);
    remove_output(path);
}
END_TEST

/* The kinetic energy series with frozen particles (inv_I = 0): finite, and equal to the free
 * particle's 0.5 m v^2 (it was NaN: 0.5/inv_I * |w|^2 = inf * 0). 1e-12 relative: one sum. */
START_TEST(io_kinetic_energy_with_frozen_particles)
{
    char txt[] = "/tmp/cdlab_frXXXXXX";
    const char *rows = "0 0 0.5 1 0 0 0 0 0 0 1\n0 0 3 1 0 0 0 0 0 0 0\n";
    temp_text_file(txt, rows);
    char ini[512];
    snprintf(ini, sizeof ini,
             "[system]\ndimension = 3\ndt = 0.01\nsteps = 10\ngravity = 0 0 -1\n"
             "[particles]\nsource = file\nformat = chute\nfile = %s\ncount = 2\nmass = 2\n"
             "[output]\nevery = 0\n",
             txt);
    char path[32];
    diag err = {{0}};
    run_summary sum;
    ck_assert_msg(run_to_temp(ini, "frozen.ini", path, &sum, &err) == CDLAB_OK, "%s", err.msg);
    double *ke, *v;
    long n, nv;
    ck_assert_int_eq(h5in_read_doubles(path, "/series/kinetic_energy", &ke, &n, &err), CDLAB_OK);
    ck_assert_int_eq(h5in_read_doubles(path, "/snapshots/00000010/velocity", &v, &nv, &err),
                     CDLAB_OK);
    ck_assert_int_eq(n, 11);
    double vz = v[5]; /* particle 1, z */
    ck_assert_msg(isfinite(ke[10]) && fabs(ke[10] - 0.5 * 2.0 * vz * vz) <= 1e-12 * ke[10],
                  "kinetic energy %g, expected %g", ke[10], vz * vz);
    ck_assert(v[0] == 0.0 && v[1] == 0.0 && v[2] == 0.0); /* the frozen one */
    free(ke);
    free(v);
    remove_output(path);
    unlink(txt);
}
END_TEST

/* The Python command line (tools/cdlab-py) finds Debian's python3 itself: it works with a
 * broken python3 first on PATH, prints the run's summary and a series, and refuses an unknown
 * series or a row step below 1 with exit 2; plot refuses without touching files, and a file of
 * another program is named as such. */
START_TEST(io_python_command_line)
{
    const char *ini = "[system]\ndimension = 1\ndt = 1\nsteps = 12\nseed = 5\n"
                      "[particles]\ncount = 5\nradius = 0.5\nmass = 1\norigin = 1.5 0 0\n"
                      "[plane.wall]\npoint = 0 0 0\nnormal = 1 0 0\n"
                      "[load]\nparticles = -1\nforce = -0.05 0 0\n[output]\nevery = 0\n";
    char path[32];
    diag err = {{0}};
    run_summary sum;
    ck_assert_msg(run_to_temp(ini, "py.ini", path, &sum, &err) == CDLAB_OK, "%s", err.msg);
    char fake[] = "/tmp/cdlab_pyXXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(fake));
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "printf '#!/bin/sh\\nexit 1\\n' > %s/python3 && chmod +x %s/python3", fake,
             fake);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "PATH=%s:$PATH ../tools/cdlab-py summary %s > %s/out.txt 2>&1 && "
             "PATH=%s:$PATH ../tools/cdlab-py series %s kinetic_energy --every 6 >> %s/out.txt 2>&1",
             fake, path, fake, fake, path, fake);
    int st = system(cmd);
    char out[4096] = "", outp[64];
    snprintf(outp, sizeof outp, "%s/out.txt", fake);
    FILE *f = fopen(outp, "r");
    if (f) {
        size_t got = fread(out, 1, sizeof out - 1, f);
        out[got] = '\0';
        fclose(f);
    }
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "cdlab-py: %s", out);
    ck_assert_msg(strstr(out, "status      completed") && strstr(out, "steps done  12") &&
                      strstr(out, "# t kinetic_energy\n0 0\n6 "),
                  "%s", out);
    /* cdlab info counts the series' rows with their times (it said "13 steps recorded", also
     * where a row stands for many steps) */
    {
        char *text = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&text, &len);
        ck_assert_ptr_nonnull(m);
        ck_assert_msg(h5in_describe(path, m, &err) == CDLAB_OK, "%s", err.msg);
        fclose(m);
        ck_assert_msg(strstr(text, "/series: 13 rows, t = 0 to 12\n"), "%s", text);
        free(text);
    }
    /* compare: a file against itself is bit-identical (exit 0); chain refuses a run it cannot
     * fit (this chain has no probes) in one line naming the file (exit 2) */
    snprintf(cmd, sizeof cmd, "../tools/cdlab-py compare %s %s 2>&1", path, path);
    st = run_capture(cmd, out, sizeof out);
    ck_assert_msg(st == 0 && strstr(out, "bit-identical"), "%s", out);
    snprintf(cmd, sizeof cmd, "../tools/cdlab-py chain %s 2>&1", path);
    st = run_capture(cmd, out, sizeof out);
    ck_assert_msg(st == 2 && strstr(out, "the last disk is not among output.probes") &&
                      strstr(out, path) && !strstr(out, "Traceback"),
                  "%s", out);
    snprintf(cmd, sizeof cmd, "../tools/cdlab-py series %s nosuchseries > /dev/null 2>&1", path);
    st = system(cmd);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    /* a group of series and the probes' ids are no series (a traceback); a reader that stops
     * early is no error ("cdlab-py: [Errno 32] Broken pipe" and a traceback) */
    const char *not_series[] = {"energy", "probe_ids"};
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "../tools/cdlab-py series %s %s 2>&1", path, not_series[k]);
        st = run_capture(cmd, out, sizeof out);
        ck_assert_msg(st == 2 && strstr(out, "has no series") && !strstr(out, "Traceback"),
                      "%s: %s", not_series[k], out);
    }
    snprintf(cmd, sizeof cmd,
             "(sleep 0.3; ../tools/cdlab-py series %s kinetic_energy 2>%s/pipe.txt) | true; "
             "cat %s/pipe.txt",
             path, fake, fake);
    st = run_capture(cmd, out, sizeof out);
    ck_assert_msg(st == 0 && out[0] == '\0', "%s", out);
    /* a row step below 1 is refused (0 raised a traceback, -2 printed no rows) */
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "../tools/cdlab-py series %s kinetic_energy --every %s 2>&1",
                 path, k ? "-2" : "0");
        st = run_capture(cmd, out, sizeof out);
        ck_assert_msg(st == 2 && strstr(out, "expected an integer >= 1") &&
                          !strstr(out, "Traceback"),
                      "%s", out);
    }
    /* plot: a refused name or an unknown series leaves an existing file as it was (a name of
     * another format gave a traceback); a PNG is written whole, by rename */
    snprintf(
        cmd, sizeof cmd,
        "echo keep > %s/keep.png && ../tools/cdlab-py plot %s nosuchseries --png %s/keep.png 2>&1",
        fake, path, fake);
    st = run_capture(cmd, out, sizeof out);
    ck_assert_msg(st == 2 && strstr(out, "no series 'nosuchseries'"), "%s", out);
    snprintf(cmd, sizeof cmd,
             "../tools/cdlab-py plot %s kinetic_energy --png %s/k.txt 2>&1; "
             "test -e %s/k.txt && echo EXISTS; cat %s/keep.png",
             path, fake, fake, fake);
    st = run_capture(cmd, out, sizeof out);
    ck_assert_msg(strstr(out, "must end in .png (nothing written)") && !strstr(out, "Traceback") &&
                      !strstr(out, "EXISTS") && strstr(out, "keep\n"),
                  "%s", out);
    snprintf(cmd, sizeof cmd,
             "../tools/cdlab-py plot %s kinetic_energy --png %s/keep.png > /dev/null && "
             "head -c 4 %s/keep.png | od -An -c && ls %s",
             path, fake, fake, fake);
    st = run_capture(cmd, out, sizeof out);
    ck_assert_msg(st == 0 && strstr(out, "P   N   G") && !strstr(out, "partial"), "%s", out);
    /* the chain's analysis (docs/howto/python.md: "a chain run's fit") says why a run is not one
     * (a run of another criterion or source gave a KeyError traceback) */
    const char *random1d =
        "[system]\ndimension = 1\ndt = 1\nsteps = 2\n[particles]\nsource = random\n"
        "count = 5\nradius_min = 0.4\nradius_max = 0.5\nbox_min = 0 0 0\n"
        "box_max = 10 0 0\n[output]\nevery = 0\nprobes = -1\n";
    char other[32];
    ck_assert_msg(run_to_temp(random1d, "py1.ini", other, &sum, &err) == CDLAB_OK, "%s", err.msg);
    snprintf(cmd, sizeof cmd,
             "PYTHONPATH=../tools /usr/bin/python3 ../experiments/chain1d/analyze.py %s 2>&1", other);
    st = run_capture(cmd, out, sizeof out);
    ck_assert_msg(st == 1 && !strstr(out, "Traceback") &&
                      strstr(out, "is not a 1D wave test run like experiments/chain1d/chain1d.ini "
                                  "(particles.source = random, the chain has chain)"),
                  "%s", out);
    remove_output(other);
    /* another program's HDF5 file is named as such (gave a KeyError traceback) */
    snprintf(cmd, sizeof cmd,
             "/usr/bin/python3 -c \"import h5py; h5py.File('%s/other.h5', 'w')\" && "
             "../tools/cdlab-py summary %s/other.h5 2>&1",
             fake, fake);
    st = run_capture(cmd, out, sizeof out);
    ck_assert_msg(st == 2 && strstr(out, "not a cdlab output") && !strstr(out, "Traceback"), "%s",
                  out);
    snprintf(cmd, sizeof cmd, "rm -rf %s", fake);
    ck_assert_int_eq(system(cmd), 0);
    remove_output(path);
}
END_TEST

/* Checkpoints and snapshots are found in step order past step 99,999,999, where the names grow
 * a digit ("100000000" sorted before "99999999": a restart took an older checkpoint, and the
 * Python reader's last snapshot was not the last). */
START_TEST(io_step_groups_in_step_order)
{
    char path[] = "/tmp/cdlab_stepsXXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    h5out *h;
    diag err;
    ck_assert_int_eq(h5out_create(&h, path, &err), CDLAB_OK);
    const char *names[] = {"00000005", "1000000000", "99999999", "100000000"};
    ck_assert_int_eq(h5out_group(h, "/checkpoints", &err), CDLAB_OK);
    for (int k = 0; k < 4; k++) {
        char g[64];
        snprintf(g, sizeof g, "/checkpoints/%s", names[k]);
        ck_assert_msg(h5out_group(h, g, &err) == CDLAB_OK, "%s", err.msg);
    }
    ck_assert_int_eq(h5out_close(h, &err), CDLAB_OK);
    h5in *in;
    ck_assert_int_eq(h5in_open(&in, path, &err), CDLAB_OK);
    const char *order[] = {"1000000000", "100000000", "99999999", "00000005"};
    char last[256];
    for (int k = 0; k < 4; k++) {
        ck_assert_msg(h5in_last_child(in, "/checkpoints", k ? order[k - 1] : NULL, last, &err) ==
                          CDLAB_OK,
                      "%s", err.msg);
        ck_assert_str_eq(last, order[k]);
    }
    ck_assert_int_eq(h5in_last_child(in, "/checkpoints", "00000005", last, &err), CDLAB_ERR_IO);
    h5in_close(in);
    unlink(path);
    /* the Python reader: a run's snapshots with two of such names added */
    const char *ini = "[system]\ndimension = 1\ndt = 1\nsteps = 2\n[particles]\nsource = chain\n"
                      "count = 3\nradius = 0.5\n[output]\nevery = 1\n";
    char out[32];
    run_summary sum;
    ck_assert_msg(run_to_temp(ini, "steps.ini", out, &sum, &err) == CDLAB_OK, "%s", err.msg);
    char cmd[1024], text[512];
    snprintf(cmd, sizeof cmd,
             "cd ../tools && /usr/bin/python3 -c \"import sys, h5py, cdlab; "
             "f = h5py.File(sys.argv[1], 'a'); f['snapshots/99999999'] = f['snapshots/00000002']; "
             "f['snapshots/100000000'] = f['snapshots/00000002']; f.close(); "
             "print(' '.join(cdlab.Run(sys.argv[1]).snapshot_names))\" %s 2>&1",
             out);
    ck_assert_int_eq(run_capture(cmd, text, sizeof text), 0);
    ck_assert_msg(strstr(text, "00000000 00000001 00000002 99999999 100000000\n"), "%s", text);
    remove_output(out);
}
END_TEST

/* tools/h5compare.py compares bit for bit: -0.0 against 0.0 differs (== took them for equal, so
 * "bit-identical" could hide a sign), two equal NaNs agree, --rtol compares values. */
START_TEST(io_h5compare_bits)
{
    char dir[] = "/tmp/cdlab_cmpXXXXXX", cmd[2048], out[4096];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *cases[][3] = {{"0.0", "-0.0", "1"},
                              {"float('nan')", "float('nan')", "0"},
                              {"1.5", "1.5", "0"},
                              {"1.0", "1.0 + 2**-52", "1"}};
    for (int k = 0; k < 4; k++) {
        snprintf(cmd, sizeof cmd,
                 "/usr/bin/python3 -c \"import h5py\n"
                 "for n, v in (('a', %s), ('b', %s)):\n"
                 "    f = h5py.File('%s/' + n + '.h5', 'w'); f['d'] = [1.0, v]; f.close()\" && "
                 "../tools/h5compare.py %s/a.h5 %s/b.h5 2>&1",
                 cases[k][0], cases[k][1], dir, dir, dir);
        int st = run_capture(cmd, out, sizeof out);
        ck_assert_msg(st == atoi(cases[k][2]), "%s vs %s: exit %d, %s", cases[k][0], cases[k][1],
                      st, out);
        if (k == 0)
            ck_assert_msg(strstr(out, "in the bits only"), "%s", out);
    }
    snprintf(cmd, sizeof cmd, "../tools/h5compare.py %s/a.h5 %s/b.h5 --rtol 1e-15 2>&1", dir, dir);
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 0);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The Python reader's input order (tools/cdlab, Run.snapshot(input_order=True)): a DEM start of
 * 80 spheres placed at random, stored in given and in spatial order (0 steps: the same state,
 * renumbered); read in input order the spatial run's positions, radii, velocities and ids
 * equal the given run's exactly, its contacts name the same pairs of input particles (and
 * walls), and without input_order its rows are the renumbered ones. `cdlab info` names the
 * renumbering. */
/* In a periodic box the probes' positions are wrapped, and /series/probe_image counts their
 * crossings (it was missing: a probe's path jumped by the period with nothing to unwrap it by);
 * Run.probe_path() unwraps them. A disc pushed round a ring of 10: x = 3 + 0.01 n (n + 1) until
 * it meets the other disc at step 25, and wrapped past 10 a few steps later (by step 28).
 * Without a periodic axis there
 * is no probe_image, and probe_path() is probe_position. */
START_TEST(io_probe_image_periodic)
{
    const char *base = "[system]\ndimension = 1\ndt = 0.1\nsteps = 40\n%s\n"
                       "[particles]\ncount = 2\nradius = 0.5\nmass = 1\nspacing = 2\n"
                       "[load]\nparticles = 1\nforce = 2 0 0\n[output]\nevery = 0\nprobes = 1 0\n";
    char ini[1024], ring[32], line[32];
    diag err = {{0}};
    run_summary sum;
    snprintf(ini, sizeof ini, base, "periodic = x\nbox_min = 0 0 0\nbox_max = 10 0 0");
    ck_assert_msg(run_to_temp(ini, "ring.ini", ring, &sum, &err) == CDLAB_OK, "%s", err.msg);
    snprintf(ini, sizeof ini, base, "");
    ck_assert_msg(run_to_temp(ini, "line.ini", line, &sum, &err) == CDLAB_OK, "%s", err.msg);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd ../tools && /usr/bin/python3 -c '\n"
             "import numpy as np\n"
             "from cdlab import Run\n"
             "r, l = Run(\"%s\"), Run(\"%s\")\n"
             "x, img, path = r.series(\"probe_position\"), r.series(\"probe_image\"), "
             "r.probe_path()\n"
             "n = np.arange(25)\n"
             "assert np.allclose(path[:25, 0, 0], 3 + 0.01 * n * (n + 1), rtol=0, atol=1e-12)\n"
             "assert img.shape == (41, 2, 3) and img[-1, 0, 0] == 1 and img[:25].max() == 0\n"
             "assert (x >= 0).all() and (x < 10).all() and np.abs(np.diff(x[:, 0, 0])).max() > 5\n"
             "assert np.abs(np.diff(path[:, :, 0], axis=0)).max() < 1\n"
             "assert not l.has_series(\"probe_image\")\n"
             "assert np.array_equal(l.probe_path(), l.series(\"probe_position\"))\n"
             "print(\"unwrapped\")' 2>&1",
             ring, line);
    char out[4096];
    ck_assert_msg(run_capture(cmd, out, sizeof out) == 0 && strcmp(out, "unwrapped\n") == 0, "%s",
                  out);
    remove_output(ring);
    remove_output(line);
}
END_TEST

START_TEST(io_python_input_order)
{
    const char *base = "[system]\nmode = dem\ndimension = 3\ndt = 1e-4\nsteps = 0\nseed = 9\n"
                       "gravity = 0 0 -1\n[particles]\nsource = random\ncount = 80\n"
                       "radius_min = 0.3\nradius_max = 0.5\nbox_min = 0 0 0\nbox_max = 5 5 5\n"
                       "order = %s\n[plane.floor]\npoint = 0 0 0\nnormal = 0 0 1\n"
                       "[contact]\ndetect_gap = 0.5\n[dem]\nk_n = 1e4\n";
    char ini[1024], given[32], spatial[32];
    diag err = {{0}};
    run_summary sum;
    snprintf(ini, sizeof ini, base, "given");
    ck_assert_msg(run_to_temp(ini, "g.ini", given, &sum, &err) == CDLAB_OK, "%s", err.msg);
    snprintf(ini, sizeof ini, base, "spatial");
    ck_assert_msg(run_to_temp(ini, "s.ini", spatial, &sum, &err) == CDLAB_OK, "%s", err.msg);
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "cd ../tools && /usr/bin/python3 -c '\n"
             "import numpy as np\n"
             "from cdlab import Run\n"
             "g, s = Run(\"%s\"), Run(\"%s\")\n"
             "assert g.input_index is None and s.input_index is not None\n"
             "a, b, raw = g.snapshot(), s.snapshot(input_order=True), s.snapshot()\n"
             "for k in (\"position\", \"velocity\", \"radius\", \"mass\", \"id\"):\n"
             "    assert np.array_equal(a[k], b[k]), k\n"
             "assert not np.array_equal(a[\"position\"], raw[\"position\"])\n"
             "pairs = lambda x: sorted(tuple(sorted(p)) if p[0] >= 0 else tuple(p)"
             " for p in x[\"contacts/pair\"].tolist())\n"
             "assert len(pairs(a)) > 40 and pairs(a) == pairs(b)\n"
             "assert min(p[0] for p in pairs(a)) < 0\n"
             "print(\"same\")' 2>&1",
             given, spatial);
    char out[4096];
    ck_assert_msg(run_capture(cmd, out, sizeof out) == 0 && strcmp(out, "same\n") == 0, "%s", out);
    /* cdlab info names the renumbering, and only where there was one */
    for (int k = 0; k < 2; k++) {
        char *text = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&text, &len);
        ck_assert_ptr_nonnull(m);
        ck_assert_msg(h5in_describe(k ? spatial : given, m, &err) == CDLAB_OK, "%s", err.msg);
        fclose(m);
        ck_assert_msg(
            (strstr(text, "/input_index: 80 particles renumbered in spatial order") != NULL) == k,
            "%s", text);
        free(text);
    }
    remove_output(given);
    remove_output(spatial);
}
END_TEST

/* The summary's peak_rss_kib is the run's own: started by a process holding 512 MiB (as a
 * Python driver holds its modules), a small run reports far less. getrusage's ru_maxrss, which
 * it used before, counts the starter's memory up to the exec and read at least 512 MiB here. */
START_TEST(io_peak_rss_is_the_runs_own)
{
    size_t bytes = (size_t)512 << 20;
    char *hold = malloc(bytes);
    ck_assert_ptr_nonnull(hold);
    memset(hold, 1, bytes);
    char dir[] = "/tmp/cdlab_rssXXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char ini[64], out[64], cmd[512];
    snprintf(ini, sizeof ini, "%s/r.ini", dir);
    snprintf(out, sizeof out, "%s/r.h5", dir);
    FILE *f = fopen(ini, "w");
    ck_assert_ptr_nonnull(f);
    fputs("[system]\ndimension = 2\ndt = 0.01\nsteps = 5\n"
          "[particles]\ncount = 10\nradius = 0.5\nmass = 1\n[output]\nevery = 0\n",
          f);
    fclose(f);
    /* exec: cdlab in the process that system() started (as a Python driver starts it) */
    snprintf(cmd, sizeof cmd, "exec %s run %s -o %s --quiet", cdlab_bin(), ini, out);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(hold[bytes - 1], 1); /* still held while the run ran */
    free(hold);
    h5in *h = NULL;
    diag err = {{0}};
    long long kib = -1;
    ck_assert_msg(h5in_open(&h, out, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_msg(h5in_attr_int(h, "/summary", "peak_rss_kib", &kib, &err) == CDLAB_OK, "%s",
                  err.msg);
    h5in_close(h);
    ck_assert_msg(kib > 0 && kib < 256 * 1024, "peak_rss_kib %lld", kib);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* A run that blows up stops with a message naming the step and keeps what it wrote. */
START_TEST(io_failure_keeps_file_readable)
{
    /* dimension 1, a chain pushed hard into a wall with a single sweep per step: the overlap
     * grows past the abort threshold */
    const char *ini = "[system]\ndimension = 1\ndt = 1\nsteps = 200\n"
                      "[solver]\niterations = 1\nabort_overlap = 0.05\n"
                      "[particles]\ncount = 40\nradius = 0.5\nmass = 1\norigin = 0.5 0 0\n"
                      "[plane.wall]\npoint = 0 0 0\nnormal = 1 0 0\n"
                      "[load]\nparticles = -1\nforce = -5 0 0\n";
    char path[32];
    diag err = {{0}};
    run_summary sum;
    status s = run_to_temp(ini, "fail.ini", path, &sum, &err);
    ck_assert_int_eq(s, CDLAB_ERR_NUMERIC);
    ck_assert_ptr_nonnull(strstr(err.msg, "exceeds solver.abort_overlap"));
    ck_assert_int_eq(sum.started, 1);
    assert_stopped_file(path, &sum, "abort_overlap");
}
END_TEST

/* A CD run whose velocities overflow (a load of 1e308 on a mass of 1e-10) stops at that step
 * with a message naming the step and the particle (stable id), and the file holds its series up
 * to that step. */
START_TEST(io_cd_non_finite_stops)
{
    const char *ini = "[system]\ndimension = 2\ndt = 1\nsteps = 5\n"
                      "[particles]\ncount = 3\nradius = 0.5\nmass = 1e-10\norigin = 0.5 0.5 0\n"
                      "[load]\nparticles = -1\nforce = 1e308 0 0\n";
    char path[32];
    diag err = {{0}};
    run_summary sum;
    status s = run_to_temp(ini, "nonfinite.ini", path, &sum, &err);
    ck_assert_int_eq(s, CDLAB_ERR_NUMERIC);
    ck_assert_msg(strstr(err.msg, "step 1: particle 2 has a non-finite position or velocity"), "%s",
                  err.msg);
    ck_assert_int_eq(sum.steps_done, 1);
    assert_stopped_file(path, &sum, "non-finite");
}
END_TEST

/* output.series_every: rows at steps 0, 10, 20 and the last (25). */
START_TEST(io_series_every)
{
    const char *ini = "[system]\ndimension = 1\ndt = 1\nsteps = 25\n"
                      "[particles]\ncount = 3\nradius = 0.5\nmass = 1\n"
                      "[output]\nevery = 0\nseries_every = 10\n";
    char path[32];
    diag err = {{0}};
    run_summary sum;
    ck_assert_msg(run_to_temp(ini, "se.ini", path, &sum, &err) == CDLAB_OK, "%s", err.msg);
    double *d;
    long n;
    ck_assert_int_eq(h5in_read_doubles(path, "/series/t", &d, &n, &err), CDLAB_OK);
    ck_assert_int_eq(n, 4);
    ck_assert(d[0] == 0.0 && d[1] == 10.0 && d[2] == 20.0 && d[3] == 25.0);
    free(d);
    remove_output(path);
}
END_TEST

/* The XDMF sidecar: every snapshot is a particles grid and (when it has contacts) a contacts
 * grid with the snapshot's time, and every DataItem names a dataset of the HDF5 file with
 * exactly the dimensions it declares. */
/* Collects the lines of the run's messages (4096 bytes). */
static void keep_note(void *user, const char *line)
{
    char *buf = user;
    size_t used = strlen(buf);
    snprintf(buf + used, 4096 - used, "%s\n", line);
}

/* H5Ovisit: the stored bytes of every dataset under the group visited */
static herr_t add_storage(hid_t g, const char *name, const H5O_info_t *info, void *op)
{
    if (info->type == H5O_TYPE_DATASET) {
        hid_t d = H5Dopen2(g, name, H5P_DEFAULT);
        *(double *)op += (double)H5Dget_storage_size(d);
        H5Dclose(d);
    }
    return 0;
}

static long count_members(hid_t h, const char *group)
{
    H5G_info_t gi;
    hid_t g = H5Gopen2(h, group, H5P_DEFAULT);
    ck_assert_int_ge(g, 0);
    H5Gget_info(g, &gi);
    H5Gclose(g);
    return (long)gi.nlinks;
}

/* The counts of the banner's output-size line in note: snapshots, checkpoints, contacts. */
static void output_size_said(const char *note, long *snaps, long *ckpts, long *contacts)
{
    const char *p = strstr(note, "output size: ");
    ck_assert_msg(p && sscanf(p,
                              "output size: %ld snapshots of about %*g %*s (with the start's "
                              "%ld contacts), %ld checkpoints",
                              snaps, contacts, ckpts) == 3,
                  "%s", note);
}

/* The output size announced (`cdlab check` and `cdlab run`): the snapshots' count and the
 * checkpoints' as the run writes them (45 steps, every 10: 0, 10, ..., 40, 45; checkpoints every
 * 20: 20, 40, 45), and a snapshot's bytes (run_snapshot_bytes) equal to step 10's stored
 * datasets, exactly, with its contacts the start's (scene_info.start_pairs; CD lists its
 * contacts in the steps, so its step-0 snapshot has none); a checkpoint's bytes
 * (run_checkpoint_bytes) equal to step 20's stored datasets with its contact records, and the
 * series' (run_series_row_bytes: 46 rows, one chunk each) to /series's, and the announced
 * whole (run_output_bytes) to the file's datasets but the walls' 48 bytes, plus the
 * checkpoint's copy: a CD run of disks on a floor, DEM deformable discs (their stress,
 * strain and ellipses besides), and CD discs on a frozen row (their `frozen` besides). */
START_TEST(io_output_size_announced)
{
    const char *base = "dimension = 2\ndt = 1e-3\nsteps = 45\nseed = 3\n"
                       "gravity = 0 -1 0\n"
                       "[particles]\nsource = random\ncount = 30\nradius_min = 0.4\n"
                       "radius_max = 0.5\nbox_min = 0 0 0\nbox_max = 5 8 0\n"
                       "[plane.base]\npoint = 0 0 0\nnormal = 0 1 0\n"
                       "[contact]\ndetect_gap = 0.3\n"
                       "[output]\nevery = 10\ncheckpoint_every = 20\n";
    /* mode 2: CD, 30 discs on a 6 x 5 grid from a chute-format file, the bottom row frozen
     * (the snapshots' `frozen`, a byte per particle) */
    char grid[] = "/tmp/cdlab_gridXXXXXX", lines[2048] = "", frozen_keys[128];
    for (int k = 0; k < 30; k++)
        snprintf(lines + strlen(lines), sizeof lines - strlen(lines),
                 "%g %g 0 0.9 0 0 0 0 0 0 %d\n", 0.5 + k % 6, 0.45 + k / 6, k < 6);
    temp_text_file(grid, lines);
    snprintf(frozen_keys, sizeof frozen_keys,
             "[particles]\nsource = file\nformat = chute\nfile = %s\n", grid);
    for (int m = 0; m < 3; m++) {
        char ini[2048];
        snprintf(ini, sizeof ini, "[system]\n%s%s%s", m == 1 ? "mode = dem\n" : "", base,
                 m == 1 ? "[dem]\nk_n = 1e4\ndeformable = true\nyoung_modulus = 1e5\n"
                          "poisson_ratio = 0.3\n"
                        : "");
        if (m == 2) {
            char *t = strstr(ini, "[particles]"), *end = strstr(ini, "[plane.base]");
            char tail[1024];
            snprintf(tail, sizeof tail, "%s", end);
            snprintf(t, sizeof ini - (size_t)(t - ini), "%s%s", frozen_keys, tail);
        }
        config c;
        diag err = {{0}};
        ck_assert_int_eq(config_load_string(&c, ini, "size.ini", &err), CDLAB_OK);
        char note[4096] = "";
        run_hooks hk = {.message = keep_note, .user = note};
        ck_assert_msg(run_validate(&c, &hk, &err) == CDLAB_OK, "%s", err.msg);
        run_setup S;
        ck_assert_msg(run_setup_read(&c, &S, NULL, &err) == CDLAB_OK, "%s", err.msg);
        config_free(&c);
        long snaps, ckpts, said;
        output_size_said(note, &snaps, &ckpts, &said);
        ck_assert_int_eq(said, S.info.start_pairs);
        ck_assert_int_eq(snaps, 6);
        ck_assert_int_eq(ckpts, 3);

        char path[32];
        run_summary sum;
        status s = run_to_temp(ini, "size.ini", path, &sum, &err);
        ck_assert_msg(s == CDLAB_OK, "%s", err.msg);
        hid_t h = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
        ck_assert_int_ge(h, 0);
        ck_assert_int_eq(count_members(h, "/snapshots"), snaps);
        ck_assert_int_eq(count_members(h, "/checkpoints"), ckpts);
        hid_t g = H5Gopen2(h, "/snapshots/00000010", H5P_DEFAULT); /* CD lists at steps */
        double stored = 0.0;
        H5Ovisit2(g, H5_INDEX_NAME, H5_ITER_NATIVE, add_storage, &stored, H5O_INFO_BASIC);
        hid_t d = H5Dopen2(g, "contacts/pair", H5P_DEFAULT), sp = H5Dget_space(d);
        hsize_t dims[2];
        H5Sget_simple_extent_dims(sp, dims, NULL);
        H5Sclose(sp);
        H5Dclose(d);
        H5Gclose(g);
        ck_assert_int_gt((long)dims[0], 30);
        ck_assert_int_eq((long)dims[0], S.info.start_pairs);
        ck_assert_msg(stored == run_snapshot_bytes(&S, (long)dims[0]),
                      "mode %d: %.0f bytes stored, %.0f estimated", m, stored,
                      run_snapshot_bytes(&S, (long)dims[0]));
        /* the frozen flags, in the snapshots of a run that has frozen particles only */
        ck_assert_int_eq(H5Lexists(h, "/snapshots/00000010/frozen", H5P_DEFAULT) > 0, m == 2);
        if (m == 2) {
            int frozen[30];
            d = H5Dopen2(h, "/snapshots/00000010/frozen", H5P_DEFAULT);
            ck_assert_int_ge(H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, frozen), 0);
            H5Dclose(d);
            for (int k = 0; k < 30; k++)
                ck_assert_int_eq(frozen[k], k < 6);
        }
        /* and in the XDMF sidecar, as a byte per particle (ParaView colours by it) */
        char xmf[64], text[16384];
        xdmf_sidecar_path(path, xmf, sizeof xmf);
        FILE *fx = fopen(xmf, "r");
        ck_assert_ptr_nonnull(fx);
        text[fread(text, 1, sizeof text - 1, fx)] = 0;
        fclose(fx);
        ck_assert_msg((strstr(text, "<Attribute Name=\"frozen\" AttributeType=\"Scalar\" "
                                    "Center=\"Node\">\n      <DataItem Dimensions=\"30\" "
                                    "NumberType=\"UChar\" Precision=\"1\"") != NULL) == (m == 2),
                      "mode %d: %s", m, text);
        /* a checkpoint's datasets with its own contact count, and the series' 46 rows (one
         * chunk of each series), exactly */
        g = H5Gopen2(h, "/checkpoints/00000020", H5P_DEFAULT);
        long long records = -1;
        hid_t a = H5Aopen(g, "contacts", H5P_DEFAULT);
        H5Aread(a, H5T_NATIVE_LLONG, &records);
        H5Aclose(a);
        stored = 0.0;
        H5Ovisit2(g, H5_INDEX_NAME, H5_ITER_NATIVE, add_storage, &stored, H5O_INFO_BASIC);
        H5Gclose(g);
        ck_assert_int_gt(records, 30);
        ck_assert_msg(stored == run_checkpoint_bytes(&S, (long)records),
                      "mode %d: %.0f checkpoint bytes stored, %.0f estimated", m, stored,
                      run_checkpoint_bytes(&S, (long)records));
        g = H5Gopen2(h, "/series", H5P_DEFAULT);
        stored = 0.0;
        H5Ovisit2(g, H5_INDEX_NAME, H5_ITER_NATIVE, add_storage, &stored, H5O_INFO_BASIC);
        H5Gclose(g);
        double series = S.series_row_bytes * (double)h5out_series_stored_rows(46);
        ck_assert_msg(stored > 0.0 && stored == series,
                      "mode %d: %.0f series bytes stored, %.0f estimated", m, stored, series);
        /* the whole: every snapshot and checkpoint of this run keeps the start's contacts (a
         * CD run's first snapshot none), so the total is exact but for the checkpoint's copy */
        output_bytes b = run_output_bytes(&S);
        ck_assert(b.snapshots == snaps && b.checkpoints == ckpts && b.series == series);
        double all = 0.0;
        H5Ovisit2(h, H5_INDEX_NAME, H5_ITER_NATIVE, add_storage, &all, H5O_INFO_BASIC);
        double other = 0.0; /* the header's datasets: walls, probe ids, the config's */
        g = H5Gopen2(h, "/snapshots", H5P_DEFAULT);
        double in_snaps = 0.0, in_ckpts = 0.0;
        H5Ovisit2(g, H5_INDEX_NAME, H5_ITER_NATIVE, add_storage, &in_snaps, H5O_INFO_BASIC);
        H5Gclose(g);
        g = H5Gopen2(h, "/checkpoints", H5P_DEFAULT);
        H5Ovisit2(g, H5_INDEX_NAME, H5_ITER_NATIVE, add_storage, &in_ckpts, H5O_INFO_BASIC);
        H5Gclose(g);
        other = all - in_snaps - in_ckpts - series;
        ck_assert_msg(other >= 0.0 && other < 4096.0, "mode %d: %.0f bytes elsewhere", m, other);
        ck_assert_msg(in_snaps + in_ckpts + series + b.checkpoint == b.all,
                      "mode %d: %.0f bytes stored (and a checkpoint's copy, %.0f), %.0f "
                      "announced",
                      m, in_snaps + in_ckpts + series, b.checkpoint, b.all);
        H5Fclose(h);
        run_setup_free(&S);
        remove_output(path);
    }
    unlink(grid);
    /* the largest system.steps gives a positive size (LONG_MAX gave the series 0 B, one less
     * -775 EB), and one more is refused */
    const char *big[] = {"system.steps=9007199254740992", "system.steps=9007199254740993"};
    for (int k = 0; k < 2; k++) {
        char ini[2048];
        snprintf(ini, sizeof ini, "[system]\n%s", base);
        config c;
        diag err = {{0}};
        ck_assert_int_eq(config_load_string(&c, ini, "size.ini", &err), CDLAB_OK);
        ck_assert_int_eq(config_set(&c, big[k], &err), CDLAB_OK);
        run_setup S;
        status s = run_setup_read(&c, &S, NULL, &err);
        config_free(&c);
        if (k == 1) {
            ck_assert_msg(s == CDLAB_ERR_CONFIG &&
                              strstr(err.msg, "system.steps: must be in [0, 9007199254740992]"),
                          "%s", err.msg);
            continue;
        }
        ck_assert_msg(s == CDLAB_OK, "%s", err.msg);
        output_bytes b = run_output_bytes(&S);
        double rows = 9007199254740993.0;
        ck_assert_msg(b.series >= S.series_row_bytes * rows &&
                          b.series < 2.0 * S.series_row_bytes * rows && b.all > b.series,
                      "series %g, all %g", b.series, b.all);
        run_setup_free(&S);
    }
}
END_TEST

/* The pairs within detect_gap at the start of the config ini (scene_info.start_pairs). */
static long start_pairs_of(const char *ini)
{
    config c;
    diag err = {{0}};
    ck_assert_int_eq(config_load_string(&c, ini, "pairs.ini", &err), CDLAB_OK);
    run_setup S;
    ck_assert_msg(run_setup_read(&c, &S, NULL, &err) == CDLAB_OK, "%s", err.msg);
    long n = S.info.start_pairs;
    run_setup_free(&S);
    config_free(&c);
    return n;
}

/* A restart's output size counts from its checkpoint's step and with its contact records: the
 * run of io_output_size_announced (45 steps) continued to 95 writes the snapshots of steps 45
 * (its first), 50, ..., 90 and 95, checkpoints at 60, 80 and 95 and 51 series rows, as
 * announced; the banner names the step. */
START_TEST(io_output_size_restart)
{
    const char *base = "[system]\ndimension = 2\ndt = 1e-3\nsteps = %d\nseed = 3\n"
                       "gravity = 0 -1 0\n"
                       "[particles]\nsource = random\ncount = 30\nradius_min = 0.4\n"
                       "radius_max = 0.5\nbox_min = 0 0 0\nbox_max = 5 8 0\n"
                       "[plane.base]\npoint = 0 0 0\nnormal = 0 1 0\n"
                       "[output]\nevery = 10\ncheckpoint_every = 20\n";
    char ini[1024], first[32], path[32];
    diag err = {{0}};
    run_summary sum;
    snprintf(ini, sizeof ini, base, 45);
    ck_assert_msg(run_to_temp(ini, "a.ini", first, &sum, &err) == CDLAB_OK, "%s", err.msg);
    snprintf(ini, sizeof ini, base, 95);
    /* a wider gap from here (it may change on restart): the config's start lists more pairs
     * than the checkpoint holds */
    strncat(ini, "[contact]\ndetect_gap = 1\n", sizeof ini - strlen(ini) - 1);
    strcpy(path, "/tmp/cdlab_ioXXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    unlink(path);
    config c;
    ck_assert_int_eq(config_load_string(&c, ini, "b.ini", &err), CDLAB_OK);
    char note[4096] = "";
    run_hooks hk = {.restart = first, .message = keep_note, .user = note};
    ck_assert_msg(run_simulation(&c, path, &hk, &sum, &err) == CDLAB_OK, "%s", err.msg);
    config_free(&c);
    long snaps, ckpts, said;
    ck_assert_msg(strstr(note, "95 steps of dt = 0.001, continuing from step 45"), "%s", note);
    output_size_said(note, &snaps, &ckpts, &said);
    ck_assert_int_eq(snaps, 7);
    ck_assert_int_eq(ckpts, 3);
    /* the contacts counted are the checkpoint's records, not the config's start */
    hid_t h = H5Fopen(first, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert_int_ge(h, 0);
    hid_t a = H5Aopen_by_name(h, "/checkpoints/00000045", "contacts", H5P_DEFAULT, H5P_DEFAULT);
    long long records = -1;
    H5Aread(a, H5T_NATIVE_LLONG, &records);
    H5Aclose(a);
    H5Fclose(h);
    ck_assert_int_gt(records, 30);
    ck_assert_int_eq(said, records);
    ck_assert_int_gt(start_pairs_of(ini), 2 * records);
    h = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert_int_ge(h, 0);
    ck_assert_int_eq(count_members(h, "/snapshots"), snaps);
    ck_assert_int_eq(count_members(h, "/checkpoints"), ckpts);
    hid_t d = H5Dopen2(h, "/series/t", H5P_DEFAULT), sp = H5Dget_space(d);
    hsize_t rows;
    H5Sget_simple_extent_dims(sp, &rows, NULL);
    H5Sclose(sp);
    H5Dclose(d);
    H5Fclose(h);
    ck_assert_int_eq((long)rows, 51);
    remove_output(first);
    remove_output(path);
}
END_TEST

/* The sidecar of a run of this config (snapshots every 10 steps of 0.05, steps 0 to 40) names
 * datasets of its file with their dimensions: 5 items per particles grid (position, radius,
 * velocity, angular velocity, id), one more where the particles were renumbered (the file's
 * /input_index), and 5 per contacts grid. */
static void check_sidecar(const char *ini, int renumbered)
{
    char path[32], xmf[64];
    diag err = {{0}};
    run_summary sum;
    ck_assert_msg(run_to_temp(ini, "x.ini", path, &sum, &err) == CDLAB_OK, "%s", err.msg);
    xdmf_sidecar_path(path, xmf, sizeof xmf);
    FILE *f = fopen(xmf, "r");
    ck_assert_msg(f != NULL, "no sidecar %s", xmf);
    hid_t h = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert_int_ge(h, 0);
    const char *base = strrchr(path, '/') + 1;
    char line[1024];
    int times = 0, items = 0, particle_grids = 0, contact_grids = 0, closed = 0, inputs = 0;
    while (fgets(line, sizeof line, f)) {
        double t;
        char *p;
        particle_grids += strstr(line, "<Grid Name=\"particles ") != NULL;
        contact_grids += strstr(line, "<Grid Name=\"contacts ") != NULL;
        closed += strstr(line, "</Xdmf>") != NULL;
        if ((p = strstr(line, "<Time Value=\"")) && sscanf(p, "<Time Value=\"%lf", &t) == 1) {
            /* a snapshot time: a multiple of 10 steps of 0.05 */
            ck_assert_double_eq_tol(t / 0.5, (double)(long)(t / 0.5 + 0.5), 1e-9);
            times++;
        }
        if ((p = strstr(line, "<DataItem Dimensions=\""))) {
            long d0 = 0, d1 = 0;
            int nd = sscanf(p, "<DataItem Dimensions=\"%ld %ld\"", &d0, &d1);
            char *ref = strchr(p, '>') + 1, *end = strstr(ref, "</DataItem>");
            ck_assert_ptr_nonnull(end);
            *end = '\0';
            ck_assert_msg(strncmp(ref, base, strlen(base)) == 0 && ref[strlen(base)] == ':',
                          "DataItem %s not in %s", ref, base);
            const char *ds = ref + strlen(base) + 1;
            inputs += strcmp(ds, "/input_index") == 0;
            hid_t d = H5Dopen2(h, ds, H5P_DEFAULT);
            ck_assert_msg(d >= 0, "%s: no dataset %s", path, ds);
            hid_t sp = H5Dget_space(d);
            hsize_t dims[3] = {0, 0, 0};
            int rank = H5Sget_simple_extent_dims(sp, dims, NULL);
            ck_assert_msg(rank == nd && (long)dims[0] == d0 && (nd < 2 || (long)dims[1] == d1),
                          "%s: rank %d dims %llu %llu, sidecar says %d: %ld %ld", ds, rank,
                          (unsigned long long)dims[0], (unsigned long long)dims[1], nd, d0, d1);
            H5Sclose(sp);
            H5Dclose(d);
            items++;
        }
    }
    fclose(f);
    H5Fclose(h);
    ck_assert_int_eq(particle_grids, 5); /* steps 0, 10, 20, 30, 40 */
    ck_assert_int_ge(contact_grids, 3);
    ck_assert_int_eq(times, particle_grids + contact_grids);
    ck_assert_int_eq(items, (5 + renumbered) * particle_grids + 5 * contact_grids);
    ck_assert_int_eq(inputs, renumbered * particle_grids);
    ck_assert_int_eq(closed, 1);
    remove_output(path);
}

START_TEST(io_xdmf_sidecar_matches_file)
{
    const char *ini = "[system]\ndimension = 2\ndt = 0.05\nsteps = 40\nseed = 3\n"
                      "gravity = 0 -1 0\n"
                      "[particles]\nsource = random\ncount = 30\nradius_min = 0.4\n"
                      "radius_max = 0.5\nbox_min = 0 0 0\nbox_max = 5 8 0\norder = %s\n"
                      "[plane.base]\npoint = 0 0 0\nnormal = 0 1 0\n"
                      "[output]\nevery = 10\n";
    char text[512];
    for (int renumbered = 0; renumbered < 2; renumbered++) {
        snprintf(text, sizeof text, ini, renumbered ? "spatial" : "given");
        check_sidecar(text, renumbered);
    }
}
END_TEST

Suite *io_suite(void)
{
    Suite *s = suite_create("io");
    TCase *tc = tcase_create("io");
    tcase_add_test(tc, io_run_writes_documented_layout);
    tcase_add_test(tc, io_snapshot_endpoints_open_candidates);
    tcase_add_test(tc, io_kinetic_energy_with_frozen_particles);
    tcase_add_test(tc, io_python_command_line);
    tcase_add_test(tc, io_python_input_order);
    tcase_add_test(tc, io_probe_image_periodic);
    tcase_add_test(tc, io_step_groups_in_step_order);
    tcase_add_test(tc, io_h5compare_bits);
    tcase_add_test(tc, io_peak_rss_is_the_runs_own);
    tcase_add_test(tc, io_failure_keeps_file_readable);
    tcase_add_test(tc, io_cd_non_finite_stops);
    tcase_add_test(tc, io_series_every);
    tcase_add_test(tc, io_xdmf_sidecar_matches_file);
    tcase_add_test(tc, io_output_size_announced);
    tcase_add_test(tc, io_output_size_restart);
    suite_add_tcase(s, tc);
    return s;
}

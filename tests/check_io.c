/* HDF5 output of a run: series lengths, parameters, provenance, snapshots. */
#include "suites.h"

#include "cd_run.h"
#include "h5io.h"

#include <stdlib.h>
#include <string.h>
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
    ck_assert_int_eq(h5in_read_attr_string(path, "/summary", "status", &v, &err), CDLAB_OK);
    ck_assert_str_eq(v, "completed");
    free(v);
    unlink(path);
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
    double *d;
    long n;
    ck_assert_int_eq(h5in_read_doubles(path, "/series/t", &d, &n, &err), CDLAB_OK);
    ck_assert_int_eq(n, sum.steps_done + 1); /* every step up to and including the failed one */
    free(d);
    char *v;
    ck_assert_int_eq(h5in_read_attr_string(path, "/summary", "status", &v, &err), CDLAB_OK);
    ck_assert_ptr_nonnull(strstr(v, "abort_overlap"));
    free(v);
    unlink(path);
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
    unlink(path);
}
END_TEST

Suite *io_suite(void)
{
    Suite *s = suite_create("io");
    TCase *tc = tcase_create("io");
    tcase_add_test(tc, io_run_writes_documented_layout);
    tcase_add_test(tc, io_failure_keeps_file_readable);
    tcase_add_test(tc, io_series_every);
    suite_add_tcase(s, tc);
    return s;
}

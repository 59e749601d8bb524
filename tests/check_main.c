/* Runs every suite; exits non-zero on any failure. Slow tests carry the tag "slow":
 * `make test` excludes them (CK_EXCLUDE_TAGS=slow), `make test-slow` runs only them. */
#include "suites.h"

#include "nscd/cd_config.h"
#include "h5io.h"
#include "run/run.h"
#include "xdmf.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void build_from_string(const char *ini, world *W, scene_info *info, cd_params *p)
{
    config c;
    diag err = {{0}};
    status s = config_load_string(&c, ini, "test.ini", &err);
    ck_assert_msg(s == CDLAB_OK, "config: %s", err.msg);
    s = scene_build(&c, W, info, &err);
    ck_assert_msg(s == CDLAB_OK, "scene: %s", err.msg);
    s = p ? cd_config_read(&c, p, &err) : CDLAB_OK;
    ck_assert_msg(s == CDLAB_OK, "solver: %s", err.msg);
    config_free(&c);
}

void sim_open(sim *s, const char *ini, uint64_t seed)
{
    build_from_string(ini, &s->W, &s->info, &s->p);
    cd_solver_init(&s->S, seed);
    s->st = (cd_stats){.converged = 1};
}

void sim_close(sim *s)
{
    cd_solver_free(&s->S);
    world_free(&s->W);
    scene_info_free(&s->info);
}

void sim_steps(sim *s, long n)
{
    diag err;
    for (long k = 0; k < n; k++) {
        status st = cd_step(&s->W, &s->S, &s->p, &s->st, &err);
        ck_assert_msg(st == CDLAB_OK, "step %ld: %s", s->W.step, err.msg);
    }
}

status read_config_text(const char *ini, const char *name, int dem, diag *err)
{
    config c;
    ck_assert_msg(config_load_string(&c, ini, name, err) == CDLAB_OK, "%s", err->msg);
    world W;
    scene_info info;
    status s = scene_build(&c, &W, &info, err);
    if (s == CDLAB_OK && dem) {
        dem_setup d;
        s = dem_config_read(&c, &W, &info, NULL, &d, err);
    }
    world_free(&W); /* scene_build leaves a world that world_free takes, built or not */
    config_free(&c);
    return s;
}

void dsim_open(dsim *s, const char *ini)
{
    config c;
    diag err = {{0}};
    ck_assert_msg(config_load_string(&c, ini, "dem.ini", &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_msg(scene_build(&c, &s->W, &s->info, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_msg(dem_config_read(&c, &s->W, &s->info, NULL, &s->d, &err) == CDLAB_OK, "%s",
                  err.msg);
    config_free(&c);
    dem_solver_init(&s->S);
}

void dsim_start(dsim *s)
{
    diag err;
    ck_assert_msg(dem_start(&s->W, &s->S, &s->d.p, &s->st, &err) == CDLAB_OK, "%s", err.msg);
}

void dsim_steps(dsim *s, long n)
{
    diag err;
    for (long k = 0; k < n; k++)
        ck_assert_msg(dem_step(&s->W, &s->S, &s->d.p, &s->st, &err) == CDLAB_OK, "%s", err.msg);
    /* the energy ledger of the state reached (s->S.E) */
    ck_assert_msg(dem_ledger(&s->W, &s->S, &s->d.p, &err) == CDLAB_OK, "%s", err.msg);
}

void dsim_close(dsim *s)
{
    dem_solver_free(&s->S);
    world_free(&s->W);
    scene_info_free(&s->info);
}

status run_to_temp_from(const char *ini, const char *name, const char *restart, char *path,
                        run_summary *sum, diag *err)
{
    strcpy(path, "/tmp/cdlab_ioXXXXXX");
    int fd = mkstemp(path); /* a fresh name; the run creates the file (it refuses existing ones) */
    ck_assert_int_ge(fd, 0);
    close(fd);
    unlink(path);
    config c;
    ck_assert_int_eq(config_load_string(&c, ini, name, err), CDLAB_OK);
    run_hooks hk = {.restart = restart};
    status s = run_simulation(&c, path, &hk, sum, err);
    config_free(&c);
    return s;
}

status run_to_temp(const char *ini, const char *name, char *path, run_summary *sum, diag *err)
{
    return run_to_temp_from(ini, name, NULL, path, sum, err);
}

void run_ok(const char *ini, const char *name, char *path)
{
    run_summary sum;
    diag err = {{0}};
    ck_assert_msg(run_to_temp(ini, name, path, &sum, &err) == CDLAB_OK, "%s: %s", name, err.msg);
}

order_taken scene_order_taken(const char *ini)
{
    config c;
    world W;
    scene_info info;
    diag err = {{0}};
    ck_assert_int_eq(config_load_string(&c, ini, "order.ini", &err), CDLAB_OK);
    ck_assert_msg(scene_build(&c, &W, &info, &err) == CDLAB_OK, "%s", err.msg);
    order_taken o = {info.order_auto, info.input_index != NULL, info.storage_spread, ""};
    snprintf(o.resolved, sizeof o.resolved, "%s", resolved_value(&c, "particles.order"));
    config_free(&c);
    scene_info_free(&info);
    world_free(&W);
    return o;
}

void remove_output(const char *path)
{
    char xmf[600];
    xdmf_sidecar_path(path, xmf, sizeof xmf);
    unlink(path);
    unlink(xmf);
}

void assert_stopped_file(const char *path, const run_summary *sum, const char *status_part)
{
    diag err = {{0}};
    double *d;
    long n;
    ck_assert_int_eq(h5in_read_doubles(path, "/series/t", &d, &n, &err), CDLAB_OK);
    ck_assert_int_eq(n, sum->steps_done + 1);
    free(d);
    char *v;
    ck_assert_int_eq(h5in_read_attr_string(path, "/summary", "status", &v, &err), CDLAB_OK);
    ck_assert_msg(strstr(v, status_part), "%s", v);
    free(v);
    remove_output(path);
}

void same_data(const char *a, const char *b, const char *const *names)
{
    for (int k = 0; names[k]; k++) {
        double *x, *y;
        long n, m;
        diag e;
        ck_assert_msg(h5in_read_doubles(a, names[k], &x, &n, &e) == CDLAB_OK, "%s", e.msg);
        ck_assert_msg(h5in_read_doubles(b, names[k], &y, &m, &e) == CDLAB_OK, "%s", e.msg);
        ck_assert_int_eq(n, m);
        ck_assert_msg(n > 0, "%s is empty", names[k]);
        double big = 0.0, diff = 0.0;
        for (long i = 0; i < n; i++) {
            big = fmax(big, fabs(x[i]));
            diff = fmax(diff, fabs(x[i] - y[i]));
        }
        ck_assert_msg(memcmp(x, y, (size_t)n * sizeof *x) == 0, "%s differs (by %g of %g)",
                      names[k], diff, big);
        free(x);
        free(y);
    }
}

const char *resolved_value(const config *c, const char *name)
{
    for (int k = 0; k < c->nres; k++)
        if (strcmp(c->res[k].name, name) == 0)
            return c->res[k].value;
    return "";
}

void temp_text_file(char *path, const char *text)
{
    int fd = mkstemp(path);
    ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
    size_t len = strlen(text);
    ck_assert_msg(write(fd, text, len) == (ssize_t)len, "%s: cannot write", path);
    close(fd);
}

const char *cdlab_bin(void)
{
    const char *b = getenv("CDLAB_BIN");
    return b ? b : "../build/cdlab";
}

void same_particles(const world *a, const world *b)
{
    ck_assert_int_eq(a->P.n, b->P.n);
    size_t bytes = (size_t)a->P.n * sizeof(vec3);
    ck_assert_msg(memcmp(a->P.x, b->P.x, bytes) == 0, "positions differ");
    ck_assert_msg(memcmp(a->P.v, b->P.v, bytes) == 0, "velocities differ");
    ck_assert_msg(memcmp(a->P.w, b->P.w, bytes) == 0, "angular velocities differ");
}

int run_capture(const char *cmd, char *buf, size_t n)
{
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t got = fread(buf, 1, n - 1, p);
    buf[got] = '\0';
    char rest[4096];
    while (fread(rest, 1, sizeof rest, p) > 0)
        ;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int main(void)
{
    /* Check's default of 4 s per test (for the test cases that set none) was exceeded by tests
     * that take a fraction of a second on a quiet machine when the 2-core machine built other
     * things beside them: TEST_TIMEOUT_SECONDS (suites.h). CK_DEFAULT_TIMEOUT set by the
     * caller wins. */
    char limit[32];
    snprintf(limit, sizeof limit, "%d", TEST_TIMEOUT_SECONDS);
    setenv("CK_DEFAULT_TIMEOUT", limit, 0);
    SRunner *sr = srunner_create(pcg32_suite());
    srunner_add_suite(sr, shock_law_suite());
    srunner_add_suite(sr, config_suite());
    srunner_add_suite(sr, cd_suite());
    srunner_add_suite(sr, solvers_suite());
    srunner_add_suite(sr, io_suite());
    srunner_add_suite(sr, dem_contact_suite());
    srunner_add_suite(sr, dem_suite());
    srunner_add_suite(sr, periodic_suite());
    srunner_add_suite(sr, restart_suite());
    srunner_add_suite(sr, fclib_suite());
    srunner_add_suite(sr, fuzz_regress_suite());
    srunner_add_suite(sr, safety_suite());
    srunner_add_suite(sr, python_suite());
    srunner_add_suite(sr, engine_suite());
    srunner_add_suite(sr, dem_deform_suite());
    srunner_add_suite(sr, dem_bond_suite());
    srunner_add_suite(sr, ddem_suite());
    srunner_add_suite(sr, mpi_suite());
    srunner_add_suite(sr, decomp_suite());
    srunner_add_suite(sr, xsum_suite());
    srunner_add_suite(sr, exchange_suite());
    srunner_add_suite(sr, experiments_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

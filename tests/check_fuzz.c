/* Replays the inputs in tests/fuzz/regress/ (failures the fuzzers found, and hostile inputs
 * written by hand) through the fuzz targets' own bodies (fuzz/targets.h). Each must end in a clean
 * error with a message or in success; under `make check-asan` a memory error or undefined
 * behaviour fails the run. */
#include "suites.h"

#include "fuzz/targets.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Calls fn on every regular file of dir; returns the count. */
static int each_file(const char *dir, void (*fn)(const char *path, const char *text, long n))
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        ck_assert_msg(f != NULL, "cannot open %s", path);
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        char *text = malloc((size_t)n + 1);
        ck_assert_int_eq((long)fread(text, 1, (size_t)n, f), n);
        text[n] = '\0';
        fclose(f);
        fn(path, text, n);
        free(text);
        count++;
    }
    closedir(d);
    return count;
}

static void replay_config(const char *path, const char *text, long n)
{
    (void)n;
    diag err = {{0}};
    status s = fuzz_config_text(text, path, &err);
    ck_assert_msg(s == CDLAB_OK || err.msg[0] != '\0', "%s: error %d without a message", path, s);
    ck_assert_msg(s != CDLAB_OK, "%s: expected to be refused", path);
}

static void replay_particles(const char *path, const char *text, long n)
{
    char tmp[] = "/tmp/cdlab_fzXXXXXX";
    int fd = mkstemp(tmp);
    ck_assert_int_ge(fd, 0);
    close(fd);
    diag err = {{0}};
    status s = fuzz_particle_file((const uint8_t *)text, (size_t)n, tmp, &err);
    ck_assert_msg(s == CDLAB_OK || err.msg[0] != '\0', "%s: error %d without a message", path, s);
    remove(tmp);
}

static char ck_dir[64];

/* Hostile checkpoints written by hand (and any the fuzzer finds): each must be refused with a
 * message, not crash, hang or run. */
static void replay_checkpoint(const char *path, const char *text, long n)
{
    diag err = {{0}};
    status s = fuzz_checkpoint((const uint8_t *)text, (size_t)n, ck_dir, &err);
    ck_assert_msg(s != CDLAB_OK, "%s: the mutated checkpoint was restored and run", path);
    ck_assert_msg(err.msg[0] != '\0', "%s: error %d without a message", path, s);
}

START_TEST(fuzz_regress_checkpoint)
{
    strcpy(ck_dir, "/tmp/cdlab_fzckXXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(ck_dir));
    /* the unmutated templates restore and run: the harness itself works */
    diag err = {{0}};
    const uint8_t none[2] = {0, 1};
    ck_assert_msg(fuzz_checkpoint(none, 1, ck_dir, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_msg(fuzz_checkpoint(none + 1, 1, ck_dir, &err) == CDLAB_OK, "%s", err.msg);
    int n = each_file("fuzz/regress/checkpoint", replay_checkpoint);
    ck_assert_int_ge(n, 10);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", ck_dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

START_TEST(fuzz_regress_config)
{
    int n = each_file("fuzz/regress/config", replay_config);
    ck_assert_int_ge(n, 1);
}
END_TEST

START_TEST(fuzz_regress_particles)
{
    int n = each_file("fuzz/regress/particles", replay_particles);
    ck_assert_int_ge(n, 1);
}
END_TEST

/* run_hooks.memory_limit (the fuzz targets' ceiling): a config whose estimate exceeds it is
 * refused before the scene is built, with the limit named; without it the same config runs. */
START_TEST(errors_memory_limit_refuses)
{
    const char *ini = "[system]\ndimension = 3\ndt = 0.01\nsteps = 1\n[particles]\n"
                      "count = 2000\nradius = 0.5\nspacing = 0.1\n";
    config c;
    diag err = {{0}};
    ck_assert_int_eq(config_load_string(&c, ini, "limit.ini", &err), CDLAB_OK);
    run_hooks hk = {.memory_limit = 1e5};
    ck_assert_int_eq(run_validate(&c, &hk, &err), CDLAB_ERR_CONFIG);
    ck_assert_msg(strstr(err.msg, "2000 particles need about") &&
                      strstr(err.msg, "more than the limit of 100 kB"),
                  "%s", err.msg);
    config_free(&c);
    /* the caller's limit (the fuzz targets' ceiling) holds whatever the config says */
    ck_assert_int_eq(config_load_string(&c, ini, "limit.ini", &err), CDLAB_OK);
    ck_assert_int_eq(config_set(&c, "system.memory_check=false", &err), CDLAB_OK);
    ck_assert_int_eq(run_validate(&c, &hk, &err), CDLAB_ERR_CONFIG);
    config_free(&c);
    ck_assert_int_eq(config_load_string(&c, ini, "limit.ini", &err), CDLAB_OK);
    ck_assert_msg(run_validate(&c, NULL, &err) == CDLAB_OK, "%s", err.msg);
    config_free(&c);
}
END_TEST

/* A sanitizer's program cannot start under ulimit -v: it reserves terabytes of address space for
 * its shadow memory (CDLAB_SANITIZED, suites.h). */
/* Over the process's address-space limit (ulimit -v 600 MB), 400,000 spheres (an estimate of
 * 678 MB with a dense packing's pairs) are refused, the refusal naming system.memory_check;
 * with system.memory_check = false the same check passes with a warning that says so. Run by
 * make test; not in the sanitizers' builds (above). */
START_TEST(errors_memory_check_false_warns)
{
#ifdef CDLAB_SANITIZED
    return;
#endif
    const char *ini = "[system]\ndimension = 3\ndt = 0.01\nsteps = 1\n[particles]\n"
                      "count = 400000\nradius = 0.5\nspacing = 0.1\n";
    char path[] = "/tmp/cdlab-memcheck-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, ini, strlen(ini)), (ssize_t)strlen(ini));
    close(fd);
    char cmd[1024], out[8192];
    for (int off = 0; off < 2; off++) {
        snprintf(cmd, sizeof cmd, "ulimit -v 600000; %s check %s%s 2>&1", cdlab_bin(), path,
                 off ? " --set system.memory_check=false" : "");
        int st = run_capture(cmd, out, sizeof out);
        ck_assert_msg(st == (off ? 0 : 2), "%s: status %d: %s", cmd, st, out);
        ck_assert_msg(strstr(out, "400000 particles need about 678 MB") &&
                          strstr(out, "address-space limit of 614 MB (ulimit -v)"),
                      "%s", out);
        ck_assert_msg((strstr(out, "system.memory_check = false starts it anyway") != NULL) == !off,
                      "%s", out);
        ck_assert_msg((strstr(out, "warning: 400000 particles") && strstr(out, "started anyway") &&
                       strstr(out, ": ok")) ||
                          !off,
                      "%s", out);
    }
    unlink(path);
}
END_TEST

/* The pairs within contact.detect_gap at the start count in the estimate: 1,000 spheres packed
 * at random into a cube of 12 diameters (solid fraction 0.3) with detect_gap = 5 list about a
 * third of their 499,500 pairs; under a limit of 20 MB (their 1,000 particles alone: 12 MB) the
 * run is refused naming contact.detect_gap and the count, which stopped where the memory was
 * full ("more than"); with a gap of 0.1 it runs. */
START_TEST(errors_memory_limit_detect_gap)
{
    const char *ini = "[system]\ndimension = 3\ndt = 0.01\nsteps = 1\n[particles]\n"
                      "source = random\ncount = 1000\nradius_min = 0.5\nradius_max = 0.5\n"
                      "box_min = 0 0 0\nbox_max = 12 12 12\n[contact]\ndetect_gap = 5\n";
    config c;
    diag err = {{0}};
    run_hooks hk = {.memory_limit = 2e7};
    ck_assert_int_eq(config_load_string(&c, ini, "gap.ini", &err), CDLAB_OK);
    ck_assert_int_eq(run_validate(&c, &hk, &err), CDLAB_ERR_CONFIG);
    ck_assert_msg(strstr(err.msg, "gap.ini:13: contact.detect_gap: more than ") &&
                      strstr(err.msg, "lie within detect_gap = 5 at the start") &&
                      strstr(err.msg, "more than the limit of 20.0 MB"),
                  "%s", err.msg);
    config_free(&c);
    ck_assert_int_eq(config_load_string(&c, ini, "gap.ini", &err), CDLAB_OK);
    ck_assert_int_eq(config_set(&c, "contact.detect_gap=0.1", &err), CDLAB_OK);
    ck_assert_msg(run_validate(&c, &hk, &err) == CDLAB_OK, "%s", err.msg);
    config_free(&c);
}
END_TEST

Suite *fuzz_regress_suite(void)
{
    Suite *s = suite_create("fuzz_regress");
    TCase *tc = tcase_create("replay");
    tcase_add_test(tc, fuzz_regress_config);
    tcase_add_test(tc, fuzz_regress_particles);
    tcase_add_test(tc, fuzz_regress_checkpoint);
    tcase_add_test(tc, errors_memory_limit_refuses);
    tcase_add_test(tc, errors_memory_check_false_warns);
    tcase_add_test(tc, errors_memory_limit_detect_gap);
    suite_add_tcase(s, tc);
    return s;
}

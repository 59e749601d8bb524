/* Replays the inputs in tests/fuzz/regress/ (failures the fuzzers found, and hostile inputs
 * written by hand) through the same entry points as the fuzz targets. Each must end in a clean
 * error with a message or in success; under `make check-asan` a memory error or undefined
 * behaviour fails the run. */
#include "suites.h"

#include "generate.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    config c;
    diag err = {{0}};
    status s = config_load_string(&c, text, path, &err);
    if (s == CDLAB_OK)
        s = cd_run_validate(&c, &err);
    config_free(&c);
    ck_assert_msg(s == CDLAB_OK || err.msg[0] != '\0', "%s: error %d without a message", path, s);
    ck_assert_msg(s != CDLAB_OK, "%s: expected to be refused", path);
}

static void replay_particles(const char *path, const char *text, long n)
{
    char tmp[] = "/tmp/cdlab_fzXXXXXX";
    int fd = mkstemp(tmp);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "wb");
    if (n > 1)
        fwrite(text + 1, 1, (size_t)n - 1, f);
    fclose(f);
    particle_format fmt = n > 0 && (text[0] & 1) ? PARTICLE_FORMAT_CHUTE : PARTICLE_FORMAT_XYZR;
    int count = 0;
    diag err = {{0}};
    status s = generate_load_file(NULL, tmp, fmt, &count, &err);
    if (s == CDLAB_OK && count > 0) {
        particles P;
        ck_assert_int_eq(particles_init(&P, count, 3, &err), CDLAB_OK);
        int m = 0;
        s = generate_load_file(&P, tmp, fmt, &m, &err);
        ck_assert_msg(s != CDLAB_OK || m == count, "%s: counted %d, read %d", path, count, m);
        particles_free(&P);
    }
    ck_assert_msg(s == CDLAB_OK || err.msg[0] != '\0', "%s: error %d without a message", path, s);
    remove(tmp);
}

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

Suite *fuzz_regress_suite(void)
{
    Suite *s = suite_create("fuzz_regress");
    TCase *tc = tcase_create("replay");
    tcase_add_test(tc, fuzz_regress_config);
    tcase_add_test(tc, fuzz_regress_particles);
    suite_add_tcase(s, tc);
    return s;
}

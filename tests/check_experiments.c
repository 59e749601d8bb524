/* The experiments' scripts must not rot: `make experiments QUICK=1` (small versions of every
 * study: runs, analysis, plots, summary.md) must succeed. Slow (a few minutes): tagged. */
#include "suites.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

START_TEST(slow_experiments_quick)
{
    int st = system("cd .. && make --no-print-directory experiments QUICK=1 > "
                    "build/experiments_quick.log 2>&1");
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                  "make experiments QUICK=1 failed (see build/experiments_quick.log)");
    const char *names[] = {"chain1d", "piston2d",     "cd_vs_dem", "convergence",
                           "kuhn",    "sliding_pair", "ddem",      "lammps"};
    for (int k = 0; k < (int)(sizeof names / sizeof names[0]); k++) {
        char path[256];
        snprintf(path, sizeof path, "../experiments/%s/summary_quick.md", names[k]);
        FILE *f = fopen(path, "r");
        if (!f) { /* kuhn and sliding_pair have no small version: their full summary */
            snprintf(path, sizeof path, "../experiments/%s/summary.md", names[k]);
            f = fopen(path, "r");
        }
        ck_assert_msg(f != NULL, "no %s", path);
        char buf[65536];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose(f);
        /* every summary states its verdicts */
        ck_assert_msg(strstr(buf, "pass") || strstr(buf, "FAIL"), "%s has no verdict", path);
    }
}
END_TEST

Suite *experiments_suite(void)
{
    Suite *s = suite_create("experiments");
    TCase *tc = tcase_create("slow");
    tcase_set_tags(tc, "slow");
    tcase_set_timeout(tc, TEST_TIMEOUT_SECONDS);
    tcase_add_test(tc, slow_experiments_quick);
    suite_add_tcase(s, tc);
    return s;
}

/* The Python package (tools/cdlab) as a user meets it: installed by make install into a
 * prefix, driving runs (cdlab/runs.py) and parameter scans (cdlab/scan.py, cdlab scan) that
 * survive a kill. The scripts in tests/python/ assert the details; each prints its verdict. */
#define _GNU_SOURCE /* realpath */
#include "suites.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PYTHON_BIN "/usr/bin/python3"

static char dir[64];

static const char *bin(void)
{
    static char buf[4096];
    if (!realpath(cdlab_bin(), buf))
        snprintf(buf, sizeof buf, "%s", cdlab_bin());
    return buf;
}

static void setup_dir(void)
{
    strcpy(dir, "/tmp/cdlab_pyXXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

/* make install-built into a fresh prefix (the programs of the build under test): the installed
 * cdlab runs, Debian's python3 imports the installed package from anywhere and finds the
 * installed program, cdlab-py reads the run, cdlab scan runs the installed package's scan with
 * the installed program, and the docs and example configs are there. */
START_TEST(python_make_install)
{
    setup_dir();
    char build[4096], cmd[16384], out[16384];
    snprintf(build, sizeof build, "%s", bin());
    *strrchr(build, '/') = '\0';
    snprintf(cmd, sizeof cmd,
             "make -s -C .. --no-print-directory install-built PREFIX=%s/p BUILD=%s 2>&1", dir,
             build);
    ck_assert_msg(run_capture(cmd, out, sizeof out) == 0, "%s", out);
    ck_assert_msg(strstr(out, "installed: "), "%s", out);
    snprintf(
        cmd, sizeof cmd,
        "cd / && P=%s/p && PYDIR=$(ls -d $P/lib/python3*/dist-packages) && "
        "ex=$P/share/doc/cdlab/examples/chain1d/chain1d.ini && "
        "test -f $P/share/doc/cdlab/README.md && test -f $P/share/doc/cdlab/docs/config.md && "
        "$P/bin/cdlab --version | head -1 && "
        "env -u CDLAB PYTHONPATH=$PYDIR " PYTHON_BIN " -c \"import sys, cdlab; "
        "assert cdlab.__file__.startswith(sys.argv[1]), cdlab.__file__; "
        "assert cdlab.program() == sys.argv[2] + '/bin/cdlab', cdlab.program(); "
        "r = cdlab.Config(sys.argv[3], {'system.steps': 20}).run(sys.argv[4], progress=False); "
        "print('import ok', r.summary['steps_done'])\" $PYDIR $P $ex %s/r.h5 && "
        "$P/bin/cdlab-py summary %s/r.h5 | grep -c 'status      completed' && "
        "env -u CDLAB $P/bin/cdlab scan $ex %s/s --grid solver.iterations=10,20 "
        "--set system.steps=20 --quiet && wc -l < %s/s/results.csv && "
        "head -1 %s/s/rows/0001.log | cut -d' ' -f1 2>&1",
        dir, dir, dir, dir, dir, dir);
    int st = run_capture(cmd, out, sizeof out);
    char want[256];
    snprintf(want, sizeof want, "%s/p/bin/cdlab\n", dir);
    ck_assert_msg(st == 0 && strstr(out, "cdlab 0.") && strstr(out, "import ok 20\n1\n3\n") &&
                      strstr(out, want),
                  "exit %d: %s", st, out);
    teardown_dir();
}
END_TEST

/* Config(...).run(...): overrides, a config from scratch, a refused key (RunError with cdlab's
 * message, exit 2) and a kept output (tests/python/drive.py). */
START_TEST(python_config_run)
{
    setup_dir();
    char cmd[8192], out[16384];
    snprintf(cmd, sizeof cmd, "CDLAB=%s PYTHONPATH=../tools %s ../tests/python/drive.py %s 2>&1",
             bin(), PYTHON_BIN, dir);
    ck_assert_msg(run_capture(cmd, out, sizeof out) == 0 && strstr(out, "drive: ok"), "%s", out);
    teardown_dir();
}
END_TEST

/* A 12-row scan (N_I x sweep on the chain) killed with SIGKILL, resumed and its table checked
 * (tests/python/scan_resume.py). */
/* tools/h5compare.py --continued: a run continued from its checkpoint against the whole run,
 * bit for bit; another continuation differs; a file that continues nothing is refused
 * (tests/python/compare_continued.py). */
START_TEST(python_h5compare_continued)
{
    setup_dir();
    char cmd[8192], out[16384];
    snprintf(cmd, sizeof cmd,
             "PYTHONPATH=../tools %s ../tests/python/compare_continued.py %s %s 2>&1", PYTHON_BIN,
             bin(), dir);
    ck_assert_msg(run_capture(cmd, out, sizeof out) == 0 && strstr(out, "compare continued: ok"),
                  "%s", out);
    teardown_dir();
}
END_TEST

START_TEST(python_scan_resume)
{
    setup_dir();
    char cmd[8192], out[16384];
    snprintf(cmd, sizeof cmd, "PYTHONPATH=../tools %s ../tests/python/scan_resume.py %s %s 2>&1",
             PYTHON_BIN, bin(), dir);
    ck_assert_msg(run_capture(cmd, out, sizeof out) == 0 && strstr(out, "scan resume: ok"), "%s",
                  out);
    teardown_dir();
}
END_TEST

/* tools/colour_rounds.py on snapshots answered by hand: a chain's colours and rounds on 1, 2
 * and 8 ranks, cut by a frozen disk, a triangle, and its refusals
 * (tests/python/colour_rounds.py). */
START_TEST(python_colour_rounds)
{
    setup_dir();
    char cmd[8192], out[16384];
    snprintf(cmd, sizeof cmd, "%s ../tests/python/colour_rounds.py %s 2>&1", PYTHON_BIN, dir);
    ck_assert_msg(run_capture(cmd, out, sizeof out) == 0 && strstr(out, "colour rounds: ok"), "%s",
                  out);
    teardown_dir();
}
END_TEST

/* Every sh block of the README and the tutorial runs as printed, against the build under test
 * (tools/doc_commands.py: a scratch folder whose build/ is that build's folder). */
START_TEST(docs_commands_run)
{
    char build[4096], cmd[8192], out[16384];
    snprintf(build, sizeof build, "%s", bin());
    *strrchr(build, '/') = '\0';
    snprintf(cmd, sizeof cmd,
             "cd .. && %s tools/doc_commands.py --build %s README.md docs/tutorial.md 2>&1",
             PYTHON_BIN, build);
    int st = run_capture(cmd, out, sizeof out);
    ck_assert_msg(st == 0 && strstr(out, "docs: ") && !strstr(out, "FAIL"), "exit %d: %s", st, out);
    /* the README and the tutorial have blocks to run (a page whose blocks lost their sh mark
     * would pass with none) */
    int blocks = 0;
    const char *at = strstr(out, "docs: ");
    ck_assert_int_eq(sscanf(at, "docs: %d blocks ran", &blocks), 1);
    ck_assert_msg(blocks >= 10, "%d blocks: %s", blocks, out);
}
END_TEST

Suite *python_suite(void)
{
    Suite *s = suite_create("python");
    TCase *tc = tcase_create("package");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, python_make_install);
    tcase_add_test(tc, python_config_run);
    tcase_add_test(tc, python_scan_resume);
    tcase_add_test(tc, python_h5compare_continued);
    tcase_add_test(tc, python_colour_rounds);
    suite_add_tcase(s, tc);
    TCase *docs = tcase_create("docs");
    tcase_set_timeout(docs, 600);
    tcase_add_test(docs, docs_commands_run);
    suite_add_tcase(s, docs);
    return s;
}

/* Configuration errors: every bad input stops before the run with FILE:LINE (or --set) and the
 * key's name; the command line exits with status 2. */
#include "suites.h"

#include "eta.h"
#include "generate.h"
#include "h5io.h"
#include "parallel.h"
#include "run/run.h"

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *GOOD = "[system]\n"        /* line 1 */
                          "dimension = 1\n"   /* 2 */
                          "dt = 1\n"          /* 3 */
                          "steps = 5\n"       /* 4 */
                          "[particles]\n"     /* 5 */
                          "count = 3\n"       /* 6 */
                          "radius = 0.5\n"    /* 7 */
                          "mass = 1\n"        /* 8 */
                          "[contact]\n"       /* 9 */
                          "friction = 0.2\n"; /* 10 */

/* Validates text (with optional --set); returns the status and the message in err. */
static status validate(const char *text, const char *set, diag *err)
{
    config c;
    status s = config_load_string(&c, text, "test.ini", err);
    if (s == CDLAB_OK && set)
        s = config_set(&c, set, err);
    if (s == CDLAB_OK)
        s = run_validate(&c, NULL, err);
    config_free(&c);
    return s;
}

static char *replace(const char *text, const char *from, const char *to)
{
    const char *p = strstr(text, from);
    ck_assert_ptr_nonnull(p);
    char *out = malloc(strlen(text) + strlen(to) + 1);
    size_t pre = (size_t)(p - text);
    memcpy(out, text, pre);
    strcpy(out + pre, to);
    strcat(out, p + strlen(from));
    return out;
}

static void expect_error(const char *text, const char *set, const char *needle)
{
    diag err = {{0}};
    status s = validate(text, set, &err);
    ck_assert_msg(s == CDLAB_ERR_CONFIG,
                  "expected a config error containing '%s', got status %d (%s)", needle, s,
                  err.msg);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "message '%s' lacks '%s'", err.msg, needle);
}

START_TEST(errors_good_config_passes)
{
    diag err = {{0}};
    ck_assert_msg(validate(GOOD, NULL, &err) == CDLAB_OK, "%s", err.msg);
}
END_TEST

START_TEST(errors_messages_name_key_and_line)
{
    /* each case: replace `from` by `to` in GOOD (or apply `set`), expect `needle` */
    static const struct {
        const char *from, *to, *set, *needle;
    } cases[] = {
        {"dt = 1\n", "dt = -1\n", NULL, "test.ini:3: system.dt: must be > 0 (got -1)"},
        {"friction = 0.2\n", "friction = -0.1\n", NULL,
         "test.ini:10: contact.friction: must be >= 0 (got -0.1)"},
        {"mass = 1\n", "mass = 1\ncolour = red\n", NULL,
         "test.ini:9: particles.colour: unknown key 'colour'"},
        {"[contact]\n", "[contacts]\n", NULL, "test.ini:10: unknown section [contacts]"},
        {"steps = 5\n", "", NULL, "missing required key system.steps"},
        {"steps = 5\n", "steps = many\n", NULL,
         "test.ini:4: system.steps: expected an integer (got 'many')"},
        {"dimension = 1\n", "dimension = 4\n", NULL,
         "test.ini:2: system.dimension: must be in [1, 3] (got 4)"},
        {"dt = 1\n", "dt = 1\ndt = 2\n", NULL,
         "test.ini:4: system.dt: duplicate key (first given on line 3)"},
        {"mass = 1\n", "mass = 1\ndensity = 2\n", NULL, "give either mass or density"},
        {"[contact]\n", "[output]\nprobes = 0 7\n[contact]\n", NULL,
         "output.probes: particle 7 does not exist"},
        {"[contact]\n", "[plane.w]\npoint = 0 0 0\nnormal = 0 1 0\n[contact]\n", NULL,
         "plane.w.normal: in dimension 1 a wall normal must be along x"},
        {"[contact]\n", "[load]\nparticles = 1\nforce = 1 0\n[contact]\n", NULL,
         "load.force: expected three numbers"},
        /* a force along an axis the particles cannot move on (it did not act: gravity
         * 0 0 -10 in 2D moved nothing) */
        {"dt = 1\n", "dt = 1\ngravity = 0 0 -10\n", NULL,
         "test.ini:4: system.gravity: in dimension 1 the particles move along x: its y and z "
         "components (0, -10) would not act"},
        {"dimension = 1\n", "dimension = 2\n", "system.gravity=0 -1 -10",
         "system.gravity: in dimension 2 the particles move in the xy plane: its z component "
         "(-10) would not act"},
        {"[contact]\n", "[load]\nparticles = 1\nforce = 1 2 0\n[contact]\n", NULL,
         "load.force: in dimension 1 the particles move along x: its y and z components (2, 0)"},
        {"steps = 5\n[particles]\n",
         "steps = 5\nmode = dem\n[dem]\nk_n = 100\n[drive]\nmotion = affine\n"
         "gradient = 0 0.1 0 0 0 0 0 0 0\n[particles]\n",
         NULL, "drive.gradient: in dimension 1 the entry G_xy (0.1) must be 0"},
        {"steps = 5\n[particles]\n",
         "steps = 5\nmode = dem\n[dem]\nk_n = 100\n[drive]\nmotion = rotation\n"
         "rotation = 0 0 0.1\n[particles]\n",
         NULL, "drive.motion: a rotation cannot move particles that move along x alone"},
        /* an item out of range is named with the range (it said only 'expected three numbers') */
        {"[contact]\n", "[load]\nparticles = 1\nforce = 1 1e400 0\n[contact]\n", NULL,
         "load.force: expected three numbers 'x y z' (bad item '1e400': a finite number, 0 or of "
         "magnitude 1e-308 to 1e308)"},
        /* a piston's force_after without its step_time (never applied), or the other way */
        {"[contact]\n",
         "[piston.p]\npoint = 0 0 0\nnormal = 1 0 0\nmass = 1\nforce_after = 2\n[contact]\n", NULL,
         "piston.p.force_after: is used only with piston.p.step_time"},
        /* a force no particle carries (it was taken and never applied) */
        {"[contact]\n", "[load]\nforce = 1 0 0\n[contact]\n", NULL,
         "test.ini:10: load.force: is used only with load.particles or load.opposite"},
        {NULL, NULL, "solver.sweep=sideways",
         "--set solver.sweep: expected one of random, forward, backward, jacobi, colored (got "
         "'sideways')"},
        {NULL, NULL, "solver.nonsense=1", "--set solver.nonsense: unknown key"},
        {NULL, NULL, "system.dt=0", "--set system.dt: must be > 0 (got 0)"},
        /* out of range, not refused for the memory it would need (with the hint to start it
         * anyway with system.memory_check = false) */
        {NULL, NULL, "particles.count=3000000000",
         "--set particles.count: must be in [1, 100000000] (got 3000000000)"},
        {NULL, NULL, "solver.warm_start=maybe", "--set solver.warm_start: expected true or false"},
        /* the system itself */
        {"count = 3\n", "count = 0\n", NULL, "test.ini:6: particles.count: must be in [1, "},
        {"radius = 0.5\n", "radius = 0.5\nspacing = -0.2\n", NULL,
         "particles 0 and 1 overlap by 0.2 (0.4 of the smaller radius) at the start"},
        {"[contact]\n", "[plane.w]\npoint = 0.2 0 0\nnormal = 1 0 0\n[contact]\n", NULL,
         "particle 0 at (0, 0, 0) lies 0.7 beyond wall 'plane.w'"},
        /* a chain of 150,000 wrapped 7,500 times around a periodic box: 10^9 touching pairs,
         * refused after the first part of the search; with every overlap allowed, after 32 pairs
         * per particle (scene.c) */
        {"steps = 5\n[particles]\ncount = 3\n",
         "steps = 5\nperiodic = x\nbox_min = 0 0 0\nbox_max = 20 0 0\n[particles]\ncount = "
         "150000\n",
         NULL, "particles 0 and 20 overlap by 1 (2 of the smaller radius) at the start"},
        {"steps = 5\n[particles]\ncount = 3\n",
         "steps = 5\nperiodic = x\nbox_min = 0 0 0\nbox_max = 20 0 0\n[particles]\ncount = "
         "150000\n",
         "contact.max_initial_overlap=1e9",
         "test.ini:9: particles.count: more than 4800000 pairs of particles touch or overlap at "
         "the "
         "start (32 per particle on average"},
        {"[contact]\n", "[contact]\nmax_initial_overlap = -1\n", NULL,
         "contact.max_initial_overlap: must be >= 0 (got -1)"},
        {"dt = 1\n", "dt = inf\n", NULL, "test.ini:3: system.dt:"},
        {"dt = 1\n", "dt = nan\n", NULL, "test.ini:3: system.dt:"},
        {NULL, NULL, "solver.iterations=0", "--set solver.iterations: must be in [1, "},
        {NULL, NULL, "output.checkpoint_every=-1",
         "--set output.checkpoint_every: must be >= 0 (got -1)"},
        {NULL, NULL, "particles.tile=2 1 1", "particles.tile: unknown key"},
        {"steps = 5\n[particles]\n", "steps = 5\nmode = dem\n[dem]\nk_n = 100\n[particles]\n",
         "dem.damping=viscous",
         "--set dem.damping: expected one of fraction, absolute, rate (got 'viscous')"},
        {"steps = 5\n[particles]\n", "steps = 5\nmode = dem\n[dem]\nk_n = 100\n[particles]\n",
         "dem.k_n=-5", "--set dem.k_n: must be > 0 (got -5)"},
        {"dimension = 1\n", "dimension = 1\nmode = chaos\n", NULL,
         "test.ini:3: system.mode: expected one of cd, dem (got 'chaos')"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *t = cases[k].from ? replace(GOOD, cases[k].from, cases[k].to) : strdup(GOOD);
        expect_error(t, cases[k].set, cases[k].needle);
        free(t);
    }
}
END_TEST

/* Particle files: unreadable, malformed, bad columns, wrong counts, bad tiling: one-line
 * errors naming the file and line (or the key). */
START_TEST(errors_particle_files)
{
    char good[] = "/tmp/cdlab_pfXXXXXX", bad[] = "/tmp/cdlab_pbXXXXXX";
    close(mkstemp(good));
    close(mkstemp(bad));
    FILE *f = fopen(good, "w");
    fputs("# x y z r\n0 0 0 0.5\n1 0 0 0.5\n", f);
    fclose(f);
    struct {
        const char *content, *keys, *needle;
    } cases[] = {
        {NULL, "file = /nonexistent/p.txt\ncount = 2\n",
         "/nonexistent/p.txt: cannot open particle file"},
        {"0 0 0\n", "count = 1\n", ":1: expected four numbers 'x y z radius'"},
        {"0 0 0 0.5 7\n", "count = 1\n", ":1: expected four numbers"},
        {"# c\n0 0 0 -0.5\n", "count = 1\n", ":2: the radius must be > 0"},
        {"0 0 zero 0.5\n", "count = 1\n", ":1: expected four numbers"},
        /* out of range: 1e-400 was read as 0 (a particle at the origin), 1e400 as infinite */
        {"0 1e-400 0 0.5\n", "count = 1\n",
         ":1: '1e-400' is out of range (a finite number, 0 or of magnitude 1e-308 to 1e308)"},
        {"# c\n0 0 1e400 0.5\n", "count = 1\n", ":2: '1e400' is out of range"},
        {"0 0 0 1 0 0 0 0 0 0 2\n", "format = chute\ncount = 1\n",
         ":1: the frozen column must be 0 or 1"},
        {"0 0 0 1 0 0 0\n", "format = chute\ncount = 1\n", ":1: expected eleven numbers"},
        {NULL, "count = 5\n", "holds 2 particles, not 5"},
        {NULL, "count = 4\ntile = 2 1 1\n", "tiling along x needs a periodic x axis"},
        /* tiled: the whole count (per tile it read "per tile, not 2" for 5 in 2 tiles) */
        {NULL,
         "count = 5\ntile = 2 1 1\n[system]\nperiodic = x\nbox_min = 0 0 0\nbox_max = 4 0 0\n",
         "holds 2 particles, tiled 2 x 1 x 1: 4 particles, not 5"},
        {NULL, "count = 2\nformat = csv\n", "particles.format: expected one of xyzr, chute"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char *path = good;
        if (cases[k].content) {
            f = fopen(bad, "w");
            fputs(cases[k].content, f);
            fclose(f);
            path = bad;
        }
        char ini[1024];
        snprintf(ini, sizeof ini,
                 "[system]\ndimension = 3\ndt = 1\nsteps = 1\n[particles]\nsource = file\n%s%s%s"
                 "mass = 1\n",
                 strstr(cases[k].keys, "file =") ? "" : "file = ",
                 strstr(cases[k].keys, "file =") ? "" : path,
                 strstr(cases[k].keys, "file =") ? "" : "\n");
        strncat(ini, cases[k].keys, sizeof ini - strlen(ini) - 1);
        diag err = {{0}};
        status s = validate(ini, NULL, &err);
        ck_assert_msg(s != CDLAB_OK, "case %zu accepted", k);
        ck_assert_msg(strstr(err.msg, cases[k].needle), "case %zu: '%s' lacks '%s'", k, err.msg,
                      cases[k].needle);
        ck_assert_msg(!strchr(err.msg, '\n'), "case %zu: not one line", k);
    }
    unlink(good);
    unlink(bad);
}
END_TEST

/* particles.count may be left out with source = file: the file's particles (times the tiles),
 * recorded in /parameters as the resolved count. Other sources still need it. */
START_TEST(io_file_count_from_file)
{
    char txt[] = "/tmp/cdlab_pcountXXXXXX";
    const char *rows = "0 0 0 0.5\n1 0 0 0.5\n";
    temp_text_file(txt, rows);
    const char *tiles[] = {
        "", "tile = 2 1 1\n[system]\nperiodic = x\nbox_min = 0 0 0\nbox_max = 4 0 0\n"};
    for (int k = 0; k < 2; k++) {
        char ini[512];
        snprintf(ini, sizeof ini,
                 "[system]\ndimension = 3\ndt = 1\nsteps = 1\n[particles]\nsource = file\n"
                 "file = %s\nmass = 1\n%s",
                 txt, tiles[k]);
        config c;
        diag err = {{0}};
        world W;
        scene_info info;
        ck_assert_int_eq(config_load_string(&c, ini, "test.ini", &err), CDLAB_OK);
        ck_assert_msg(scene_build(&c, &W, &info, &err) == CDLAB_OK, "tiles %d: %s", k, err.msg);
        ck_assert_int_eq(W.P.n, 2 * (k + 1));
        const char *rec = resolved_value(&c, "particles.count");
        ck_assert_msg(strcmp(rec, k ? "4" : "2") == 0, "recorded '%s'", rec);
        config_free(&c);
        world_free(&W);
    }
    char *chain = replace(GOOD, "count = 3\n", "");
    expect_error(chain, NULL, "missing required key particles.count");
    free(chain);
    unlink(txt);
}
END_TEST

START_TEST(errors_set_overrides_file)
{
    config c;
    diag err = {{0}};
    ck_assert_int_eq(config_load_string(&c, GOOD, "test.ini", &err), CDLAB_OK);
    ck_assert_int_eq(config_set(&c, "system.dt = 0.25", &err), CDLAB_OK);
    double dt;
    ck_assert_int_eq(config_double(&c, "system", "dt", 1, 0, 0, 1, INFINITY, &dt, &err), CDLAB_OK);
    ck_assert_double_eq(dt, 0.25);
    config_free(&c);
}
END_TEST

/* The lists of numbers (vectors, number lists, integer lists) read each item whole, however
 * long: an item of over 63 characters was cut short, and '-1.000...0e1' (66 characters) read as
 * -1 without a word. */
START_TEST(errors_long_numbers_read_whole)
{
    char zeros[80], g[200], tile[320], ids[200];
    memset(zeros, '0', 70);
    zeros[70] = '\0';
    snprintf(g, sizeof g, "system.gravity = 0, -1.%se1 0", zeros);
    snprintf(tile, sizeof tile, "particles.tile = 2.%s 1.%se0,3.%s", zeros, zeros, zeros);
    snprintf(ids, sizeof ids, "output.probes = %s17 2", zeros);
    config c;
    diag err = {{0}};
    ck_assert_int_eq(config_load_string(&c, GOOD, "test.ini", &err), CDLAB_OK);
    ck_assert_int_eq(config_set(&c, g, &err), CDLAB_OK);
    ck_assert_int_eq(config_set(&c, tile, &err), CDLAB_OK);
    ck_assert_int_eq(config_set(&c, ids, &err), CDLAB_OK);
    vec3 v;
    ck_assert_int_eq(config_vec3(&c, "system", "gravity", 1, v3_zero(), &v, &err), CDLAB_OK);
    ck_assert_double_eq(v.x, 0.0);
    ck_assert_double_eq(v.y, -10.0);
    ck_assert_double_eq(v.z, 0.0);
    double d[3], one[3] = {1, 1, 1};
    ck_assert_int_eq(config_doubles(&c, "particles", "tile", 1, 3, one, d, &err), CDLAB_OK);
    ck_assert_double_eq(d[0], 2.0);
    ck_assert_double_eq(d[1], 1.0);
    ck_assert_double_eq(d[2], 3.0);
    long *l;
    int m;
    ck_assert_int_eq(config_int_list(&c, "output", "probes", &l, &m, &err), CDLAB_OK);
    ck_assert_int_eq(m, 2);
    ck_assert_int_eq(l[0], 17);
    ck_assert_int_eq(l[1], 2);
    free(l);
    /* and a bad item is still named, whole */
    ck_assert_int_eq(config_set(&c, "output.probes = 1 2x", &err), CDLAB_OK);
    ck_assert_int_eq(config_int_list(&c, "output", "probes", &l, &m, &err), CDLAB_ERR_CONFIG);
    ck_assert_msg(strstr(err.msg, "bad item '2x'"), "%s", err.msg);
    config_free(&c);
}
END_TEST

/* A config file's line of 200 characters or more is read as one line: libinih's buffer stayed
 * at 200 bytes, so such a line was split and its tail parsed as a line of its own: a syntax
 * error, or, where the tail read "key = value" (here inside a comment), a key taking effect. */
START_TEST(errors_long_config_lines_whole)
{
    char *text = malloc(8000), *p = text;
    p += sprintf(p, "[system]\ndimension = 3\ndt = 1   # ");
    for (int k = 0; k < 187; k++) /* the line's first 199 characters end before "steps" */
        *p++ = 'c';
    sprintf(p, " steps = 9\n");
    config c;
    diag err = {{0}};
    ck_assert_msg(config_load_string(&c, text, "long.ini", &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_msg(!config_has(&c, "system", "steps"), "a comment's tail was read as a key");
    config_free(&c);
    p = text + sprintf(text, "[output]\nprobes =");
    for (int k = 0; k < 300; k++) /* 1,200 characters */
        p += sprintf(p, " %3d", k);
    sprintf(p, "\n");
    ck_assert_msg(config_load_string(&c, text, "long.ini", &err) == CDLAB_OK, "%s", err.msg);
    long *l;
    int m;
    ck_assert_int_eq(config_int_list(&c, "output", "probes", &l, &m, &err), CDLAB_OK);
    ck_assert_int_eq(m, 300);
    ck_assert_int_eq(l[299], 299);
    free(l);
    config_free(&c);
    free(text);
}
END_TEST

/* A particle file as editors write it: a UTF-8 byte order mark, CRLF line ends, tabs, blank
 * lines, comments after the numbers (the mark and such comments were "expected four
 * numbers"); the particles read exactly. */
START_TEST(io_particle_file_forms)
{
    char txt[] = "/tmp/cdlab_pformXXXXXX";
    const char *rows = "\xef\xbb\xbf"
                       "0 0 0 0.5 # the first\r\n\r\n\t# a comment line\r\n"
                       "3\t0.25\t-1e-3\t0.5\t\r\n  6 0 0 0.75#last\n";
    temp_text_file(txt, rows);
    particles P;
    diag err = {{0}};
    int n;
    ck_assert_msg(generate_load_file(NULL, txt, PARTICLE_FORMAT_XYZR, &n, &err) == CDLAB_OK, "%s",
                  err.msg);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(particles_init(&P, 3, 3, &err), CDLAB_OK);
    ck_assert_msg(generate_load_file(&P, txt, PARTICLE_FORMAT_XYZR, &n, &err) == CDLAB_OK, "%s",
                  err.msg);
    ck_assert(P.x[0].x == 0.0 && P.r[0] == 0.5);
    ck_assert(P.x[1].x == 3.0 && P.x[1].y == 0.25 && P.x[1].z == -1e-3 && P.r[1] == 0.5);
    ck_assert(P.x[2].x == 6.0 && P.r[2] == 0.75);
    particles_free(&P);
    unlink(txt);
}
END_TEST

/* A particle file's path that, with the config's folder, would not fit is refused (it was cut
 * short: another file, or a wrong "cannot open"). */
START_TEST(errors_long_file_path_refused)
{
    char *name = malloc(4200);
    strcpy(name, "/");
    for (int k = 0; k < 2042; k++) /* a name of 4,092 characters, a path of 4,096 */
        strcat(name, "d/");
    strcat(name, "run.ini");
    char *text = replace(GOOD, "count = 3\n", "count = 3\nsource = file\nfile = spheres.txt\n");
    config c;
    diag err = {{0}};
    ck_assert_int_eq(config_load_string(&c, text, name, &err), CDLAB_OK);
    ck_assert_int_eq(run_validate(&c, NULL, &err), CDLAB_ERR_CONFIG);
    ck_assert_msg(strstr(err.msg, "particles.file: the path (with the config file's folder) is "
                                  "longer than 4095 characters"),
                  "%.300s", err.msg + (strlen(err.msg) > 300 ? strlen(err.msg) - 300 : 0));
    config_free(&c);
    free(text);
    free(name);
}
END_TEST

/* Runs the binary with the shell redirection redir; returns its exit status and the first
 * bytes of what reaches the pipe. */
static int run_binary(const char *args, const char *redir, char *buf, size_t n)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s %s %s", cdlab_bin(), args, redir);
    return run_capture(cmd, buf, n);
}

/* Its exit status and stderr; and with stdout and stderr together. */
static int run_cli(const char *args, char *errbuf, size_t n)
{
    return run_binary(args, "2>&1 >/dev/null", errbuf, n);
}

static int run_cli_output(const char *args, char *out, size_t n)
{
    return run_binary(args, "2>&1", out, n);
}

/* particles.format = cdlab takes the particles only: a piston of the source run's name and
 * normal that starts elsewhere than the source's stood at the snapshot's step, or at another
 * velocity where the particles take the snapshot's, is said, with the point and velocity that
 * start it as it was (the source's point + s n and u, from its /series/piston_position and
 * piston_velocity rows of the snapshot's time); nothing once they are given (to the 17 digits
 * said), for a piston of another name, or at rest with that point. A source whose series has
 * no row at the snapshot's step (output.series_every) cannot tell: that is said instead. */
START_TEST(io_start_from_output_piston)
{
    const char *src = "[system]\ndimension = 3\ndt = 0.02\nsteps = 30\nseed = 5\n"
                      "gravity = 0 0 -10\n[particles]\nsource = random\ncount = 40\n"
                      "radius_min = 0.4\nradius_max = 0.6\nbox_min = 0 0 0\nbox_max = 4 4 8\n"
                      "[plane.base]\npoint = 0 0 0\nnormal = 0 0 1\n"
                      "[piston.top]\npoint = 0.5 0 8.5\nnormal = 0 0 -2\nmass = 5\nforce = 20\n"
                      "[output]\nevery = 10\n";
    char out[32];
    run_summary sum;
    diag err = {{0}};
    ck_assert_msg(run_to_temp(src, "src.ini", out, &sum, &err) == CDLAB_OK, "%s", err.msg);
    double *t, *s, *u;
    long nt, ns, nu;
    ck_assert_int_eq(h5in_read_doubles(out, "/series/t", &t, &nt, &err), CDLAB_OK);
    ck_assert_int_eq(h5in_read_doubles(out, "/series/piston_position", &s, &ns, &err), CDLAB_OK);
    ck_assert_int_eq(h5in_read_doubles(out, "/series/piston_velocity", &u, &nu, &err), CDLAB_OK);
    ck_assert_int_eq(nt, 31);
    ck_assert_int_eq(ns, 31);
    ck_assert_int_eq(nu, 31);
    ck_assert_double_gt(s[20], 0.1); /* it fell */
    ck_assert_double_ne(u[20], 0.0);
    const char *from = "[system]\ndimension = 3\ndt = 0.02\nsteps = 1\n"
                       "[particles]\nsource = file\nformat = cdlab\nfile = %s\nsnapshot = 20\n"
                       "snapshot_velocities = %s\n[plane.base]\npoint = 0 0 0\nnormal = 0 0 1\n"
                       "[piston.%s]\npoint = %s\nnormal = 0 0 -1\nmass = 5\nvelocity = %s\n";
    char ini[1024], point[128] = "0.5 0 8.5", speed[64] = "0";
    for (int k = 0; k < 4; k++) {
        world W;
        scene_info info;
        snprintf(ini, sizeof ini, from, out, k == 3 ? "false" : "true", k == 2 ? "lid" : "top",
                 point, k == 3 ? "0" : speed);
        build_from_string(ini, &W, &info, NULL);
        if (k == 0) {
            const char *said = info.source_pistons[0],
                       *set = strstr(said, "--set piston.top.point=");
            ck_assert_msg(set && strstr(said, "at step 20 the source run's piston.top stood "),
                          "%s", said);
            double x, y, z, v;
            ck_assert_int_eq(sscanf(set,
                                    "--set piston.top.point=%lf,%lf,%lf --set "
                                    "piston.top.velocity=%lf",
                                    &x, &y, &z, &v),
                             4);
            ck_assert(x == 0.5 && y == 0.0 && z == 8.5 - s[20] && v == u[20]);
            snprintf(point, sizeof point, "%s", set + strlen("--set piston.top.point="));
            *strchr(point, ' ') = '\0';
            snprintf(speed, sizeof speed, "%s", strstr(set, "velocity=") + strlen("velocity="));
        } else {
            ck_assert_msg(info.source_pistons[0][0] == '\0', "%d: %s", k, info.source_pistons[0]);
        }
        world_free(&W);
        scene_info_free(&info);
    }
    free(t);
    free(s);
    free(u);
    remove_output(out);
    /* a source whose series skipped the snapshot's step (rows every 7): not known, said so */
    char skip[1024];
    snprintf(skip, sizeof skip, "%sseries_every = 7\n", src);
    ck_assert_msg(run_to_temp(skip, "src.ini", out, &sum, &err) == CDLAB_OK, "%s", err.msg);
    snprintf(ini, sizeof ini, from, out, "true", "top", "0.5 0 8.5", "0");
    world W;
    scene_info info;
    build_from_string(ini, &W, &info, NULL);
    ck_assert_str_eq(info.source_pistons[0],
                     "notice: where the source run's piston.top stood at step 20 is not known: "
                     "its series has no row at that step (its output.series_every), and the "
                     "snapshot holds the particles only; this run's starts at its own point");
    ck_assert(info.source_pistons[1][0] == '\0');
    world_free(&W);
    scene_info_free(&info);
    remove_output(out);
}
END_TEST

/* particles.format = cdlab starts from a snapshot of another run: positions, radii, velocities
 * and spins bit for bit, in that run's input order. The run here renumbers its 300 random discs
 * (order = spatial), so the rows of its snapshots are not its input's: its first snapshot taken
 * in given order is the random packing itself, its last (the default) matches the file row by
 * row through /input_index (with snapshot_velocities = false at rest); its periodic axis, which
 * this run lacks, is warned of. Refused: a step with no snapshot, `snapshot` with a text format,
 * and the last snapshot of a file without /summary (a killed run's, maybe cut short). Frozen
 * particles stay frozen. */
START_TEST(io_start_from_output)
{
    const char *src = "[system]\ndimension = 2\ndt = 0.01\nsteps = 10\nseed = 3\ngravity = 0 -1 0\n"
                      "periodic = x\nbox_min = 0 0 0\nbox_max = 30 30 0\n"
                      "[particles]\nsource = random\ncount = 300\nradius_min = 0.4\n"
                      "radius_max = 0.6\nbox_min = 0 0 0\nbox_max = 30 30 0\norder = %s\n"
                      "[plane.base]\npoint = 0 0 0\nnormal = 0 1 0\n[output]\nevery = 0\n";
    char ini[1024], out[32], path[64];
    snprintf(ini, sizeof ini, src, "spatial");
    run_summary sum;
    diag err = {{0}};
    ck_assert_msg(run_to_temp(ini, "src.ini", out, &sum, &err) == CDLAB_OK, "%s", err.msg);
    /* the packing itself, in input order */
    world R;
    scene_info ri;
    config c;
    snprintf(ini, sizeof ini, src, "given");
    build_from_string(ini, &R, &ri, NULL);
    /* the last snapshot's rows, ids and the renumbering */
    enum { N = 300 };
    static double x[3 * N], v[3 * N];
    int id[N], index[N];
    h5in *h;
    ck_assert_int_eq(h5in_open(&h, out, &err), CDLAB_OK);
    ck_assert_int_eq(h5in_read(h, "/snapshots/00000010/position", H5IO_DOUBLE, x, 3 * N, &err),
                     CDLAB_OK);
    ck_assert_int_eq(h5in_read(h, "/snapshots/00000010/velocity", H5IO_DOUBLE, v, 3 * N, &err),
                     CDLAB_OK);
    ck_assert_int_eq(h5in_read(h, "/snapshots/00000010/id", H5IO_INT32, id, N, &err), CDLAB_OK);
    ck_assert_int_eq(h5in_read(h, "/input_index", H5IO_INT32, index, N, &err), CDLAB_OK);
    h5in_close(h);
    const char *from = "[system]\ndimension = 2\ndt = 0.01\nsteps = 1\n"
                       "[particles]\nsource = file\nformat = cdlab\nfile = %s\norder = given\n%s";
    const char *snap[] = {"", "snapshot = 0\n", "snapshot_velocities = false\n"};
    int moved = 0;
    for (int k = 0; k < 3; k++) {
        world W;
        scene_info info;
        snprintf(ini, sizeof ini, from, out, snap[k]);
        ck_assert_int_eq(config_load_string(&c, ini, "from.ini", &err), CDLAB_OK);
        ck_assert_msg(scene_build(&c, &W, &info, &err) == CDLAB_OK, "%s", err.msg);
        ck_assert_int_eq(W.P.n, N);
        ck_assert_str_eq(resolved_value(&c, "particles.snapshot"), k == 1 ? "0" : "10");
        ck_assert_str_eq(resolved_value(&c, "particles.count"), "300");
        ck_assert_str_eq(info.source_lost_periodic, "x"); /* this run is not periodic */
        for (int r = 0; r < N; r++) {
            int i = index[id[r]];
            if (k != 1) {
                ck_assert(memcmp(&W.P.x[i], &x[3 * r], sizeof(vec3)) == 0);
                if (k == 0)
                    ck_assert(memcmp(&W.P.v[i], &v[3 * r], sizeof(vec3)) == 0);
                else /* at rest */
                    ck_assert(v3_norm(W.P.v[i]) == 0.0 && v3_norm(W.P.w[i]) == 0.0);
                moved += k == 0 && W.P.x[i].y != R.P.x[i].y;
            } else {
                ck_assert(memcmp(&W.P.x[i], &R.P.x[i], sizeof(vec3)) == 0);
            }
            ck_assert(W.P.r[i] == R.P.r[i]);
        }
        config_free(&c);
        scene_info_free(&info);
        world_free(&W);
    }
    ck_assert_int_gt(moved, N / 2); /* the last snapshot is not the start */
    scene_info_free(&ri);
    world_free(&R);
    /* the periodic axis the source had and this run lacks is said, with --quiet too */
    char cfg[] = "/tmp/cdlab_fromXXXXXX", cmd[256], said[8192];
    snprintf(ini, sizeof ini, from, out, "");
    temp_text_file(cfg, ini);
    snprintf(cmd, sizeof cmd, "%s run %s -o %s.h5 -q 2>&1", cdlab_bin(), cfg, cfg);
    ck_assert_int_eq(run_capture(cmd, said, sizeof said), 0);
    ck_assert_msg(strstr(said, "warning: the run that wrote particles.file was periodic along x, "
                               "this one is not"),
                  "%s", said);
    snprintf(cmd, sizeof cmd, "%s check %s 2>&1", cdlab_bin(), cfg);
    ck_assert_int_eq(run_capture(cmd, said, sizeof said), 0);
    char want[128];
    snprintf(want, sizeof want, "particles: 300 from the snapshot of step 10 of %s (with its", out);
    ck_assert_msg(strstr(said, want), "%s", said);
    snprintf(path, sizeof path, "%s.h5", cfg);
    /* and tools/cdlab-py's summary of the run says it */
    snprintf(cmd, sizeof cmd, "../tools/cdlab-py summary %s 2>&1", path);
    ck_assert_int_eq(run_capture(cmd, said, sizeof said), 0);
    snprintf(want, sizeof want, "  particles   from the snapshot of step 10 of %s\n", out);
    ck_assert_msg(strstr(said, want), "%s", said);
    remove_output(path);
    unlink(cfg);
    /* refusals */
    snprintf(ini, sizeof ini, from, out, "snapshot = 5\n");
    expect_error(ini, NULL, "no snapshot of step 5 (the last one is 00000010)");
    snprintf(ini, sizeof ini, from, out, "");
    char *t = replace(ini, "format = cdlab\n", "snapshot = 0\n");
    expect_error(t, NULL, "particles.snapshot: is used only with format = cdlab");
    free(t);
    snprintf(path, sizeof path, "%s.killed", out);
    snprintf(cmd, sizeof cmd, "cp %s %s", out, path);
    ck_assert_int_eq(system(cmd), 0);
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    ck_assert_int_ge(H5Ldelete(f, "/summary", H5P_DEFAULT), 0);
    H5Fclose(f);
    snprintf(ini, sizeof ini, from, path, "");
    expect_error(ini, NULL,
                 "no /summary (its run was killed or is still running), so its last "
                 "snapshot, of step 10, may be cut short");
    snprintf(ini, sizeof ini, from, path, "snapshot = 0\n");
    ck_assert_msg(validate(ini, NULL, &err) == CDLAB_OK, "%s", err.msg);
    /* an HDF5 file that is no cdlab output, and a file that is no HDF5 file */
    f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert_int_ge(f, 0);
    H5Fclose(f);
    snprintf(ini, sizeof ini, from, path, "");
    expect_error(ini, NULL, "not a cdlab output with snapshots (no /parameters or /snapshots)");
    snprintf(ini, sizeof ini, from, "memcheck/cd.ini", "");
    ck_assert_int_ne(validate(ini, NULL, &err), CDLAB_OK);
    ck_assert_msg(strstr(err.msg, "memcheck/cd.ini: not an HDF5 file"), "%s", err.msg);
    unlink(path);
    remove_output(out);
    /* frozen particles stay frozen: a row of 6 frozen discs under 6 free ones, from a chute-format
     * file, run 5 steps and taken back */
    char grid[] = "/tmp/cdlab_gridXXXXXX", lines[1024] = "";
    for (int k = 0; k < 12; k++)
        snprintf(lines + strlen(lines), sizeof lines - strlen(lines),
                 "%g %g 0 0.9 0 0 0 0 0 0 %d\n", 0.5 + k % 6, 0.45 + k / 6, k < 6);
    temp_text_file(grid, lines);
    snprintf(ini, sizeof ini,
             "[system]\ndimension = 2\ndt = 0.01\nsteps = 5\ngravity = 0 -1 0\n"
             "[particles]\nsource = file\nformat = chute\nfile = %s\n",
             grid);
    ck_assert_msg(run_to_temp(ini, "grid.ini", out, &sum, &err) == CDLAB_OK, "%s", err.msg);
    snprintf(ini, sizeof ini, from, out, "");
    world W;
    scene_info info;
    ck_assert_int_eq(config_load_string(&c, ini, "from.ini", &err), CDLAB_OK);
    ck_assert_msg(scene_build(&c, &W, &info, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_int_eq(W.P.n, 12);
    for (int k = 0; k < 12; k++)
        ck_assert_msg(W.P.frozen[k] == (k < 6) && (W.P.inv_m[k] == 0.0) == (k < 6), "particle %d",
                      k);
    config_free(&c);
    scene_info_free(&info);
    world_free(&W);
    remove_output(out);
    unlink(grid);
}
END_TEST

/* The progress line's remaining time (common/eta.h) on runs of known cost, sampled every
 * 0.1 s as a terminal's line is: a constant cost gives one number, right to 1%; a cost that
 * grows linearly with the step (a packing gathering contacts) gives a range whose low end is
 * the recent cost held (to 10%: an average over the last quarter of the time; the old
 * estimate, 3.5x low on piston2d/prepare.ini at 1%) and whose high end is the true remaining time
 * to 3%; a falling cost, a range with the truth in it; 10^4 samples are thinned to ETA_SAMPLES and
 * give the same; fewer than ETA_FIRST samples or 2 s: nothing. */
static double cost_integral(int kind, double s)
{
    /* elapsed time at step s: 10 ms a step; growing: x(1 + s/2000); falling: x(1 + e^(-s/4000)) */
    return kind == 0   ? 0.01 * s
           : kind == 1 ? 0.01 * (s + s * s / 4000.0)
                       : 0.01 * (s + 4000.0 * (1.0 - exp(-s / 4000.0)));
}

static void eta_run(int kind, long upto, long steps, double *lo, double *hi, int *n)
{
    eta_state e = {0};
    long s = 0;
    for (double t = 0.0; s < upto; t += 0.1) {
        while (s < upto && cost_integral(kind, (double)(s + 1)) <= t)
            s++;
        eta_sample(&e, s, cost_integral(kind, (double)s));
    }
    *n = e.n;
    ck_assert_msg(eta_estimate(&e, upto, steps, lo, hi), "no estimate at step %ld", upto);
}

START_TEST(io_eta_estimates)
{
    double lo, hi;
    int n;
    eta_state e = {0};
    eta_sample(&e, 0, 0.0);
    eta_sample(&e, 100, 1.0);
    eta_sample(&e, 200, 1.9);
    ck_assert_msg(!eta_estimate(&e, 200, 1000, &lo, &hi), "an estimate before 2 s");
    eta_run(0, 1000, 10000, &lo, &hi, &n);
    ck_assert_msg(lo == hi && fabs(lo / 90.0 - 1.0) <= 0.01, "constant: %g to %g (90 s)", lo, hi);
    long S = 40000;
    for (long upto = 400; upto <= 10000; upto *= 5) { /* 1%, 5% and 25% of the run */
        double truth = cost_integral(1, (double)S) - cost_integral(1, (double)upto);
        double held = 0.01 * (1.0 + upto / 2000.0) * (double)(S - upto);
        eta_run(1, upto, S, &lo, &hi, &n);
        ck_assert_msg(lo < hi && fabs(hi / truth - 1.0) <= 0.03 && fabs(lo / held - 1.0) <= 0.10,
                      "growing, at step %ld: %g to %g (truth %g, recent cost held %g)", upto, lo,
                      hi, truth, held);
    }
    eta_run(2, 2000, S, &lo, &hi, &n);
    double truth = cost_integral(2, (double)S) - cost_integral(2, 2000.0);
    ck_assert_msg(lo < hi && lo <= truth && truth <= hi, "falling: %g to %g (truth %g)", lo, hi,
                  truth);
    eta_run(0, 100000, 200000, &lo, &hi, &n);
    ck_assert_msg(n <= ETA_SAMPLES && lo == hi && fabs(lo / 1000.0 - 1.0) <= 0.01,
                  "thinned (%d samples): %g to %g (1000 s)", n, lo, hi);
}
END_TEST

/* Progress in a log file (standard error not a terminal): a line at the first step and at each
 * tenth of the run, the last one "remaining 0 s"; none with --quiet. (The line at least every
 * 5 minutes of a long run was checked by hand with the interval made small.) */
START_TEST(io_progress_lines_in_a_log)
{
    char out[8192], path[] = "/tmp/cdlab_progressXXXXXX", args[256];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    for (int quiet = 0; quiet < 2; quiet++) {
        snprintf(args, sizeof args, "run memcheck/cd.ini -o %s.h5 --overwrite%s", path,
                 quiet ? " --quiet" : "");
        ck_assert_int_eq(run_cli_output(args, out, sizeof out), 0);
        int lines = 0;
        const char *at = out, *last = NULL;
        while ((at = strstr(at, "step ")) != NULL) {
            if (at == out || at[-1] == '\n') {
                lines++;
                last = at;
            }
            at++;
        }
        if (quiet) {
            ck_assert_msg(lines == 0, "%s", out);
            continue;
        }
        ck_assert_msg(lines == 11, "%d progress lines:\n%s", lines, out);
        ck_assert_msg(strncmp(strstr(out, "\nstep ") + 1, "step 1/60 ", 10) == 0, "%s", out);
        ck_assert_msg(strstr(out, "\nstep 6/60 ") && strstr(out, "\nstep 54/60 "), "%s", out);
        ck_assert_msg(strncmp(last, "step 60/60 ", 11) == 0 && strstr(last, "remaining 0 s\n"),
                      "%s", out);
    }
    snprintf(args, sizeof args, "%s.h5", path);
    remove_output(args);
    unlink(path);
}
END_TEST

/* Every command answers --help (and cdlab help COMMAND) on stdout with exit 0: what it does,
 * its usage and an example; --version gives the commit, the results epoch, OpenMP, the HDF5
 * version and whether libfclib loads. */
START_TEST(io_help_and_version)
{
    const char *cmds[] = {"run", "check", "info", "equiv", "help"};
    char args[128], out[4096];
    for (int k = 0; k < 5; k++) {
        for (int form = 0; form < 2; form++) {
            snprintf(args, sizeof args, form == 0 ? "%s --help" : "help %s", cmds[k]);
            ck_assert_int_eq(run_cli_output(args, out, sizeof out), 0);
            ck_assert_msg(strstr(out, "usage: cdlab ") && strstr(out, "example:"), "%s: %s", args,
                          out);
        }
    }
    ck_assert_int_eq(run_cli_output("--version", out, sizeof out), 0);
    ck_assert_msg(strstr(out, "commit ") && strstr(out, "results epoch ") && strstr(out, "openmp"),
                  "%s", out);
    /* the HDF5 the program links, and whether it can load libfclib (installed here) */
    char hdf5[64];
    snprintf(hdf5, sizeof hdf5, "hdf5 %d.%d.%d\n", H5_VERS_MAJOR, H5_VERS_MINOR, H5_VERS_RELEASE);
    ck_assert_msg(strstr(out, hdf5) && strstr(out, "fclib loads"), "%s", out);
    char err[512];
    ck_assert_int_eq(run_cli("help nosuchcommand", err, sizeof err), 2);
}
END_TEST

/* More threads than cores are taken as asked, and the banner says what they cost; a count
 * within the cores gets no such line. */
START_TEST(io_threads_beyond_cores_said)
{
    char args[256], out[8192];
    for (int k = 0; k < 2; k++) {
        snprintf(args, sizeof args, "check memcheck/cd.ini --threads %d",
                 k ? cdlab_cores() + 1 : 1);
        ck_assert_int_eq(run_cli_output(args, out, sizeof out), 0);
        char line[64];
        snprintf(line, sizeof line, "threads: %d of %d cores", k ? cdlab_cores() + 1 : 1,
                 cdlab_cores());
        ck_assert_msg(strstr(out, line), "%s: %s", args, out);
        ck_assert_msg((strstr(out, "more threads than cores") != NULL) == k, "%s: %s", args, out);
    }
    /* an OMP_NUM_THREADS that is no count is not named as the choice (libgomp takes its
     * default): the automatic choice, and the value said */
    char cmd[512];
    snprintf(cmd, sizeof cmd, "OMP_NUM_THREADS=abc %s check memcheck/dem.ini 2>&1", cdlab_bin());
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "(automatic: ") &&
                      strstr(out, "OMP_NUM_THREADS='abc' is no thread count: not used"),
                  "%s", out);
    snprintf(cmd, sizeof cmd, "OMP_NUM_THREADS=1,1 %s check memcheck/dem.ini 2>&1", cdlab_bin());
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "threads: 1 of ") && strstr(out, "(OMP_NUM_THREADS)"), "%s", out);
}
END_TEST

/* cdlab-lab answers --help on stdout with exit 0 (each of its commands named); an unknown
 * command, a known one with arguments it does not take and a bad number are refused (exit 2)
 * with a message that says which, and nothing on stdout. */
START_TEST(io_lab_help_and_refusals)
{
    char lab[512], args[640], out[4096];
    snprintf(lab, sizeof lab, "%s-lab", cdlab_bin());
    snprintf(args, sizeof args, "%s --help 2>&1", lab);
    int st = run_capture(args, out, sizeof out);
    ck_assert_msg(st == 0, "--help: status %d", st);
    const char *cmds[] = {"usage: cdlab-lab", "example:", "fig4", "fig6", "sliding-pair"};
    for (int k = 0; k < 5; k++)
        ck_assert_msg(strstr(out, cmds[k]), "--help lacks %s: %s", cmds[k], out);
    const struct {
        const char *args, *message;
    } bad[] = {
        {"nonsense", "unknown command 'nonsense'"},
        {"", "usage: cdlab-lab"},
        {"fig6 extra", "fig6: INCREMENTS: expected a whole number in [1, 10000000], got 'extra'"},
        {"fig6 10 extra", "fig6: wrong arguments"},
        {"fig4 abc", "fig4: Z1/Z0 must be a number > 0, got 'abc'"},
        {"fig4 -1", "fig4: Z1/Z0 must be a number > 0"},
        {"sliding-pair sideways", "sliding-pair: wrong arguments"},
        /* the MPI self-tests moved to tests/mpi_selftest.c */
        {"dem-selftest", "unknown command 'dem-selftest'"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        /* stderr into the pipe, stdout away: a refusal prints no data */
        snprintf(args, sizeof args, "%s %s 2>&1 >/dev/null", lab, bad[k].args);
        st = run_capture(args, out, sizeof out);
        ck_assert_msg(st == 2, "'%s': status %d", bad[k].args, st);
        ck_assert_msg(strstr(out, bad[k].message), "'%s': %s", bad[k].args, out);
        snprintf(args, sizeof args, "%s %s 2>/dev/null", lab, bad[k].args);
        run_capture(args, out, sizeof out);
        ck_assert_msg(out[0] == '\0', "'%s' printed on stdout: %s", bad[k].args, out);
    }
    /* data that cannot be written (a full disk under "> fig4.csv") is an error: the programs
     * ended with 0, the file cut short */
    const char *full[] = {"-lab sliding-pair", "-lab fig6", " equiv 40 1 1", " help config"};
    for (int k = 0; k < 4; k++) {
        snprintf(args, sizeof args, "%s%s 2>&1 >/dev/full", cdlab_bin(), full[k]);
        st = run_capture(args, out, sizeof out);
        ck_assert_msg(st == 1 && strstr(out, "cannot write the standard output: No space left on "
                                             "device"),
                      "'%s': status %d, %s", full[k], st, out);
    }
}
END_TEST

/* A misspelt key or section gets the closest known name (among the keys the readers asked for
 * in that section, or the sections cdlab knows); a name far from all gets none. */
START_TEST(errors_did_you_mean)
{
    struct {
        const char *set, *expect;
    } cases[] = {
        {"solver.iteration=3",
         "unknown key 'iteration' in section [solver] (did you mean 'iterations'?)"},
        {"solvr.iterations=3", "unknown section [solvr] (did you mean [solver]?)"},
        {"plane.wall.normall=1 0 0", "(did you mean 'normal'?)"},
        {"dem.kn=3", "unknown key 'kn' in section [dem] (did you mean 'k_n'?)"},
        {"output.xyz=3", "unknown key 'xyz' in section [output]\n"},
    };
    for (int k = 0; k < 5; k++) {
        char args[512], err[1024];
        snprintf(args, sizeof args, "check ../experiments/chain1d/chain1d.ini --set '%s'",
                 cases[k].set);
        ck_assert_int_eq(run_cli(args, err, sizeof err), 2);
        ck_assert_msg(strstr(err, cases[k].expect), "--set %s: %s", cases[k].set, err);
    }
}
END_TEST

/* An option of one value given twice is refused, naming both (the last took effect: -o a.h5 ...
 * -o b.h5 wrote only b.h5), and nothing is written; an option without its value is named. */
START_TEST(errors_options_given_twice)
{
    char dir[] = "/tmp/cdlab_twiceXXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const char *opts[][3] = {{"-o", "%s/a.h5", "%s/b.h5"},
                             {"--restart", "%s/a.h5", "%s/b.h5"},
                             {"--export-fclib", "5", "6"},
                             {"--fclib-out", "%s/a.h5", "%s/b.h5"},
                             {"--threads", "1", "2"}};
    for (int k = 0; k < 5; k++) {
        char one[128], two[128], out[160] = "", args[600], err[1024], expect[400];
        snprintf(one, sizeof one, opts[k][1], dir);
        snprintf(two, sizeof two, opts[k][2], dir);
        if (k > 0)
            snprintf(out, sizeof out, "-o %s/out.h5", dir);
        snprintf(args, sizeof args, "run ../experiments/chain1d/chain1d.ini %s %s %s %s %s", out,
                 opts[k][0], one, opts[k][0], two);
        ck_assert_int_eq(run_cli(args, err, sizeof err), 2);
        snprintf(expect, sizeof expect, "cdlab: %s given twice ('%s', then '%s'): give it once",
                 opts[k][0], one, two);
        ck_assert_msg(strstr(err, expect), "%s: %s", args, err);
    }
    /* and one without its value is named (it was an 'unexpected argument') */
    char err[1024];
    ck_assert_int_eq(run_cli("run ../experiments/chain1d/chain1d.ini --restart", err, sizeof err),
                     2);
    ck_assert_msg(strstr(err, "cdlab: --restart needs a value"), "%s", err);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rmdir %s", dir); /* empty: nothing was written */
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* cdlab check prints the figures a user checks before a long run: the spurious elasticity (CD,
 * fixed N_I), the critical time step (DEM), memory and time estimates. */
START_TEST(io_check_prints_figures)
{
    char out[8192];
    ck_assert_int_eq(run_cli_output("check ../experiments/chain1d/chain1d.ini", out, sizeof out),
                     0);
    ck_assert_msg(strstr(out, "l_diff = 11.3") && strstr(out, "kappa_eff = 31.9") &&
                      strstr(out, "estimates: memory about"),
                  "%s", out);
    /* the solver line names what its criterion uses (it gave epsilon for the fixed count too) */
    ck_assert_msg(strstr(out, "criterion fixed: 40 sweeps every step (solver.epsilon not used)"),
                  "%s", out);
    ck_assert_int_eq(
        run_cli_output("check ../experiments/chain1d/chain1d.ini --set system.mode=dem "
                       "--set system.dt=0.001",
                       out, sizeof out),
        0);
    ck_assert_msg(strstr(out, "DEM: critical time step 0.0155541") && strstr(out, "estimates:"),
                  "%s", out);
}
END_TEST

/* docs/config.md is the key list: cdlab help config prints it, every config of the repository
 * passes `cdlab check` (the reader refuses a key the list lacks), and the mechanism catches a
 * key read but not documented. */
START_TEST(io_help_config_is_the_parsers_list)
{
    static char out[65536];
    ck_assert_int_eq(run_cli_output("help config", out, sizeof out), 0);
    ck_assert_msg(strstr(out, "[solver]\n  sweep") && strstr(out, "[plane.NAME]") &&
                      strstr(out, "stiffness_from_cd") && strstr(out, "threads"),
                  "%.2000s", out);
    ck_assert_int_eq(run_cli_output("help config dem", out, sizeof out), 0);
    ck_assert_msg(strstr(out, "[dem]") && !strstr(out, "[solver]"), "%s", out);
    const char *configs[] = {"experiments/chain1d/chain1d.ini",
                             "experiments/chain1d/chain1d_dem.ini",
                             "experiments/convergence/settle.ini",
                             "experiments/convergence/lattice.ini",
                             "experiments/piston2d/prepare.ini",
                             "tests/memcheck/cd.ini",
                             "tests/memcheck/dem.ini",
                             "bench/chute.ini"};
    for (int k = 0; k < 8; k++) {
        char args[256], err[2048];
        snprintf(args, sizeof args, "check ../%s", configs[k]);
        int rc = run_cli(args, err, sizeof err);
        ck_assert_msg(rc == 0 || !strstr(err, "does not document"), "%s: %s", configs[k], err);
    }
    config c;
    diag e = {{0}};
    static const config_key_doc tiny[] = {{"system", "dt", "", "", ""},
                                          {"plane.", "point", "", "", ""}};
    ck_assert_int_eq(config_load_string(&c, "[system]\ndt = 1\n", "t.ini", &e), CDLAB_OK);
    config_use_schema(&c, tiny, 2);
    double v;
    long l;
    ck_assert_int_eq(config_double(&c, "system", "dt", 1, 0, 0, 1, 10, &v, &e), CDLAB_OK);
    ck_assert(config_documented(&c, "plane.floor", "point") &&
              !config_documented(&c, "plane", "point"));
    ck_assert_str_eq(c.undocumented, "");
    ck_assert_int_eq(config_int(&c, "system", "steps", 0, 5, 0, 10, &l, &e), CDLAB_OK);
    ck_assert_str_eq(c.undocumented, "system.steps");
    config_free(&c);
}
END_TEST

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

START_TEST(errors_cli_exit_status_2)
{
    char dir[] = "/tmp/cdlab_cfgXXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[256], args[512], out[4096];
    snprintf(path, sizeof path, "%s/bad.ini", dir);
    struct {
        const char *from, *to, *needle;
    } cases[] = {
        {"mass = 1\n", "mass = 1\nwobble = 3\n", "bad.ini:9: particles.wobble: unknown key"},
        {"dt = 1\n", "dt = -0.5\n", "bad.ini:3: system.dt: must be > 0"},
        {"dt = 1\n", "dt = 1\niterations = 80\n",
         "bad.ini:4: system.iterations: unknown key 'iterations' in section [system] (it is a key "
         "of [solver])"},
        {"friction = 0.2\n", "friction = -1\n", "bad.ini:10: contact.friction: must be >= 0"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *t = replace(GOOD, cases[k].from, cases[k].to);
        write_file(path, t);
        free(t);
        snprintf(args, sizeof args, "run %s -o %s/x.h5", path, dir);
        int rc = run_cli(args, out, sizeof out);
        ck_assert_msg(rc == 2, "exit %d for '%s': %s", rc, cases[k].to, out);
        ck_assert_msg(strstr(out, cases[k].needle), "stderr '%s' lacks '%s'", out, cases[k].needle);
    }
    /* missing config file */
    snprintf(args, sizeof args, "run %s/nonexistent.ini", dir);
    ck_assert_int_eq(run_cli(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "nonexistent.ini: cannot open config file"), "%s", out);
    /* missing particle file named in the config */
    char *t = replace(GOOD, "radius = 0.5\n", "source = file\nfile = /nonexistent/pos.txt\n");
    write_file(path, t);
    free(t);
    snprintf(args, sizeof args, "run %s -o %s/x.h5", path, dir);
    ck_assert_int_eq(run_cli(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "/nonexistent/pos.txt: cannot open particle file"), "%s", out);
    ck_assert_msg(!strstr(out, "run.sh makes"), "%s", out);
    /* a packing a study makes: the message names the study's script */
    snprintf(args, sizeof args,
             "run %s -o %s/x.h5 --set particles.file=%s/experiments/demo/out/packing.txt", path,
             dir, dir);
    ck_assert_int_eq(run_cli(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out,
                         "packing.txt: cannot open particle file: No such file or directory (a "
                         "file that experiments/demo/run.sh makes: run it first)"),
                  "%s", out);
    /* --set with a bad value */
    write_file(path, GOOD);
    snprintf(args, sizeof args, "run %s -o %s/x.h5 --set solver.iterations=0", path, dir);
    ck_assert_int_eq(run_cli(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--set solver.iterations: must be in [1, 100000000] (got 0)"), "%s",
                  out);
    /* and a good run exits 0 */
    snprintf(args, sizeof args, "run %s -o %s/x.h5 --quiet", path, dir);
    ck_assert_int_eq(run_cli(args, out, sizeof out), 0);
    /* info takes one file, and says so (it printed the usage alone) */
    snprintf(args, sizeof args, "info %s/x.h5 %s/x.h5", dir, dir);
    ck_assert_int_eq(run_cli(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "cdlab info: expected one OUT.h5 (got 2 arguments)"), "%s", out);
    snprintf(args, sizeof args, "rm -rf %s", dir);
    ck_assert_int_eq(system(args), 0);
}
END_TEST

Suite *config_suite(void)
{
    Suite *s = suite_create("config");
    TCase *tc = tcase_create("errors");
    tcase_add_test(tc, errors_good_config_passes);
    tcase_add_test(tc, errors_particle_files);
    tcase_add_test(tc, io_file_count_from_file);
    tcase_add_test(tc, io_start_from_output);
    tcase_add_test(tc, io_start_from_output_piston);
    tcase_add_test(tc, io_progress_lines_in_a_log);
    tcase_add_test(tc, io_eta_estimates);
    tcase_add_test(tc, errors_messages_name_key_and_line);
    tcase_add_test(tc, errors_set_overrides_file);
    tcase_add_test(tc, errors_long_numbers_read_whole);
    tcase_add_test(tc, errors_long_config_lines_whole);
    tcase_add_test(tc, io_particle_file_forms);
    tcase_add_test(tc, errors_options_given_twice);
    tcase_add_test(tc, errors_long_file_path_refused);
    tcase_add_test(tc, errors_cli_exit_status_2);
    tcase_add_test(tc, io_help_and_version);
    tcase_add_test(tc, io_threads_beyond_cores_said);
    tcase_add_test(tc, io_lab_help_and_refusals);
    tcase_add_test(tc, errors_did_you_mean);
    tcase_add_test(tc, io_check_prints_figures);
    tcase_add_test(tc, io_help_config_is_the_parsers_list);
    suite_add_tcase(s, tc);
    return s;
}

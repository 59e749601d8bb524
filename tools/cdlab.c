/* cdlab command-line program. The only code that prints to the terminal and calls exit().
 *
 *   cdlab run CONFIG.ini [-o OUT.h5] [--set section.key=value ...] [--quiet]
 *             [--restart OLD.h5] [--export-fclib STEP [--fclib-out FILE]]
 *   cdlab check CONFIG.ini [--set ...]     validate a config without running
 *   cdlab info OUT.h5                      parameters and summary of a run
 *
 * Exit status: 0 success, 1 failure during the run (the output file is kept, readable up to
 * the last recorded step), 2 bad command line, bad configuration or missing input. */
#include "cdlab.h"
#include "comm.h"
#include "eta.h"
#include "build_info.h"
#include "config_schema.h" /* generated from docs/config.md into the build folder */
#include "h5io.h"
#include "parallel.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <glob.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "usage:\n"
            "  cdlab run CONFIG.ini [-o OUT.h5] [--set section.key=value ...] [--quiet]\n"
            "            [--overwrite]             replace an existing OUT.h5 (once the run has\n"
            "                                      completed; until then it is kept)\n"
            "            [--restart PREVIOUS.h5]   continue from its last checkpoint\n"
            "            [--export-fclib STEP [--fclib-out FILE]]  write the contact problem\n"
            "                                      of that step (CD) as an FCLIB local problem\n"
            "  cdlab check CONFIG.ini [--set section.key=value ...]\n"
            "  cdlab info OUT.h5\n"
            "  cdlab equiv N_I DT MASS [SWEEP] [--diameter D] [--length L]\n"
            "  cdlab solve FILE.fclib.h5 [--sweep S] [--relaxation W] [--tolerance T] [...]\n"
            "  cdlab scan CONFIG.ini DIR --grid KEY=V1,V2,... | --table ROWS.csv [--jobs N]\n"
            "                                     a run per row, one results table (resumable)\n"
            "  cdlab help [COMMAND]               what a command does, with an example\n"
            "  cdlab help config [SECTION]        every configuration key: type, default, meaning\n"
            "  cdlab --version                    version, commit, results epoch, build options,\n"
            "                                     HDF5 version, whether libfclib loads\n"
            "Every command answers --help.\n"
            "Configuration keys: docs/config.md; output layout: docs/output.md.\n");
}

/* What each command does, its arguments and an example: `cdlab COMMAND --help`, `cdlab help
 * COMMAND`. */
static const struct {
    const char *name, *synopsis, *what, *options, *example;
} commands[] = {
    {"run", "cdlab run CONFIG.ini [-o OUT.h5] [options]",
     "Runs the simulation CONFIG.ini describes (contact dynamics or DEM) and writes OUT.h5: "
     "series,\n"
     "snapshots, checkpoints, provenance (docs/output.md), with an XDMF sidecar OUT.xmf. While it\n"
     "runs the output is OUT.h5.partial; it becomes OUT.h5 when the run ends. An existing OUT.h5\n"
     "is kept unless --overwrite is given. Ctrl-C ends the run cleanly after the current step.",
     "  -o OUT.h5                  the output (default: output.file of the config, cdlab.h5)\n"
     "  --set section.key=value    override a config key (repeatable; docs/config.md)\n"
     "  --overwrite                replace an existing OUT.h5 once the run has completed\n"
     "  --restart PREVIOUS.h5      continue from its last complete checkpoint\n"
     "  --export-fclib STEP        write that CD step's contact problem as FCLIB "
     "(OUT-stepSTEP.fclib.h5)\n"
     "  --fclib-out FILE           ... to FILE instead\n"
     "  --threads N                threads (as system.threads; default: automatic, see\n"
     "                             docs/config.md: every core only where the work pays)\n"
     "  --quiet, -q                no progress or banner (errors are still printed)\n"
     "Exit status: 0 completed, 1 failed during the run (the output says how far it got),\n"
     "2 refused before it started (nothing was written), 128+N ended by signal N.",
     "  cdlab run experiments/chain1d/chain1d.ini -o chain.h5 --set solver.iterations=80"},
    {"check", "cdlab check CONFIG.ini [--set section.key=value ...]",
     "Reads and validates CONFIG.ini and builds the system without running or writing anything:\n"
     "every key checked, the same messages and exit status 2 as cdlab run.",
     "  --set section.key=value    override a config key (repeatable)\n"
     "  --quiet, -q                print only errors",
     "  cdlab check my.ini --set system.mode=dem --set system.dt=0.01"},
    {"info", "cdlab info OUT.h5",
     "Prints what a cdlab output holds: provenance (config text, overrides, command line, build),\n"
     "resolved parameters, the engine's figures (CD: the spurious-elasticity figures of\n"
     "/elasticity; DEM: /dem's stiffnesses and critical time step), where a continued run began\n"
     "(/restart), the run's summary, and how many rows, snapshots, checkpoints and walls it\n"
     "recorded. Numbers are printed in full (the shortest text that reads back to the same\n"
     "double).",
     "", "  cdlab info chain.h5"},
    {"equiv", "cdlab equiv N_I DT MASS [SWEEP] [--diameter D] [--length L] [--relaxation W]",
     "The CD <-> DEM equivalence of Unger & Kertesz (sec. 3.4) for a CD run of N_I sweeps per\n"
     "step of DT with particles of mass MASS: q of the sweep order, the effective contact\n"
     "stiffness and dashpot (eqs. 67-68), sound speed, diffusion length, the DEM twin's critical\n"
     "time step, and a ready [dem] section. SWEEP: random (default), forward, backward, jacobi,\n"
     "colored.",
     "  --diameter D               particle diameter (default 1)\n"
     "  --length L                 system size, to compare with the diffusion length\n"
     "  --relaxation W             the sweeps' relaxation omega in (0, 2) (solver.relaxation)",
     "  cdlab equiv 40 1.0 1.0 random --length 50"},
    {"solve", "cdlab solve FILE.fclib.h5 [options]",
     "Solves a stored contact problem (an FCLIB local problem: cdlab's --export-fclib files or\n"
     "another code's) with the sweeps, APGD or Newton's method, from zero or from its stored\n"
     "solution, and prints the natural-map residual (rho = 1, FCLIB's and Siconos's error) every\n"
     "K iterations: a step studied without re-running its simulation. The sweeps' one-contact\n"
     "update is the engine's (docs/physics.md; the methods: docs/output.md).",
     "  --method sweeps|apgd|newton   the solver (default sweeps)\n"
     "  --sweep random|forward|backward   the sweeps' order (default random)\n"
     "  --desaxce on|off           APGD: De Saxce's outer loop to Coulomb's law (default on;\n"
     "                             off: the convex relaxation, which dilates sliding contacts)\n"
     "  --presweeps N              Newton: N sweeps before the first Newton step (default 0)\n"
     "  --relaxation W             omega in (0, 2) (default 1: Gauss-Seidel)\n"
     "  --criterion C              natural_map (default): stop at a residual <= T; local: when\n"
     "                             every contact's |dr| <= T |r| + D over one iteration (eq. 35);\n"
     "                             global: when |d sum |r|| <= T sum |r| (eq. 36)\n"
     "  --tolerance T              the criterion's tolerance (default 1e-8)\n"
     "  --delta D                  local: the impulse D added to its right-hand side (default 0)\n"
     "  --max-sweeps N             at most N iterations (default 100000)\n"
     "  --max-seconds S            and none begun after S seconds (default: no limit)\n"
     "  --every K                  a history line every K iterations (default 100; 0: first, "
     "last)\n"
     "  --start zero|stored        from zero impulses (default) or the file's /solution/r\n"
     "  --seed S                   the random order's stream (default 1)\n"
     "Exit status: 0 tolerance reached, 1 not reached (or a failed write), 2 refused.",
     "  cdlab run tests/memcheck/cd.ini -o pile.h5 --export-fclib 30\n"
     "  cdlab solve pile-step30.fclib.h5 --relaxation 1.5 --tolerance 1e-10"},
    {"scan", "cdlab scan CONFIG.ini DIR (--grid KEY=V1,V2,... ... | --table ROWS.csv) [options]",
     "Runs CONFIG.ini once per row of a grid or of a CSV table of --set values, rows in parallel\n"
     "processes, into DIR/rows/NNNN.h5, and writes one results table, DIR/results.csv and\n"
     "results.h5, with the chosen figures of each row. Run it again to resume: the rows whose\n"
     "file is completed by this build are skipped. (Python: cdlab/scan.py; docs/howto/scan.md.)",
     "  --grid KEY=V1,V2,...       a key and its values; several: their product, first slowest\n"
     "  --table ROWS.csv           the rows: a header of section.key names, a line per row\n"
     "  --set KEY=VALUE            a value for every row\n"
     "  --figure SPEC              a results column: summary.NAME, elasticity.NAME,\n"
     "                             param.SECTION.KEY, series.NAME.last|first|max|min|mean,\n"
     "                             module:function (default: steps, wall time, mean sweeps)\n"
     "  --jobs N                   rows at once (default: the cores); --threads T per row (1)\n"
     "  --retry-failed             run again the rows whose run failed\n"
     "Exit status: 0 every row completed, 1 some failed, 2 refused, 130 interrupted.",
     "  cdlab scan experiments/chain1d/chain1d.ini scan1 --grid solver.iterations=10,20,40 \\\n"
     "      --grid solver.sweep=random,jacobi --figure elasticity.q"},
    {"help", "cdlab help [COMMAND | config [SECTION]]",
     "Lists the commands, or explains one; `cdlab help config` lists every configuration key\n"
     "with its type, default and meaning (from docs/config.md, which is the parser's key list).",
     "", "  cdlab help run\n  cdlab help config solver"},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

/* Prints text wrapped at 100 columns, each line after the first indented by indent. */
static void wrap(FILE *f, const char *text, int indent, int col)
{
    const char *p = text;
    while (*p) {
        int room = 100 - col;
        int len = (int)strlen(p), cut = len;
        if (len > room) {
            cut = room;
            while (cut > 0 && p[cut] != ' ')
                cut--;
            if (cut == 0)
                cut = room;
        }
        fprintf(f, "%.*s\n", cut, p);
        p += cut;
        while (*p == ' ')
            p++;
        if (*p)
            fprintf(f, "%*s", indent, "");
        col = indent;
    }
}

/* cdlab help config [SECTION]: the configuration's keys, from docs/config.md's tables (the
 * reader refuses any key not among them, so this list is the parser's). */
static int config_help(const char *only)
{
    const char *last = "";
    int shown = 0;
    for (int k = 0; k < CONFIG_SCHEMA_N; k++) {
        const config_key_doc *d = &config_schema[k];
        size_t l = strlen(d->section);
        int named = l > 0 && d->section[l - 1] == '.'; /* [plane.NAME] */
        if (only && strncmp(d->section, only, strlen(only)) != 0)
            continue;
        if (strcmp(d->section, last) != 0) {
            printf("%s[%s%s]\n", shown ? "\n" : "", d->section, named ? "NAME" : "");
            last = d->section;
        }
        printf("  %s = %s%s%s%s\n      ", d->key, d->dflt[0] ? d->dflt : "(no default)",
               d->type[0] ? "   [" : "", d->type, d->type[0] ? "]" : "");
        wrap(stdout, d->meaning, 6, 6);
        shown++;
    }
    if (!shown) {
        fprintf(stderr, "cdlab: no section '%s' (cdlab help config lists them all)\n", only);
        return 2;
    }
    printf("\nAll of it, with the rules: docs/config.md.\n");
    return 0;
}

static int command_help(const char *name, FILE *f)
{
    for (size_t k = 0; k < N_COMMANDS; k++)
        if (strcmp(commands[k].name, name) == 0) {
            fprintf(f, "usage: %s\n\n%s\n", commands[k].synopsis, commands[k].what);
            if (commands[k].options[0])
                fprintf(f, "\noptions:\n%s\n", commands[k].options);
            fprintf(f, "\nexample:\n%s\n", commands[k].example);
            return 1;
        }
    return 0;
}

/* Whether the arguments of a command ask for its help. */
static int wants_help(int argc, char **argv)
{
    for (int k = 0; k < argc; k++)
        if (strcmp(argv[k], "--help") == 0 || strcmp(argv[k], "-h") == 0)
            return 1;
    return 0;
}

typedef struct progress_state {
    int quiet;
    int tty;
    double last_shown;
    int last_decile;
    int shown;
    eta_state eta; /* the remaining time (common/eta.h), from the first step this run shows */
} progress_state;

static void show_message(void *user, const char *line)
{
    progress_state *ps = user;
    if (!ps->quiet)
        fprintf(stderr, "%s\n", line);
}

/* Results are printed with --quiet too: --quiet hides progress, not findings. */
static void show_result(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "%s\n", line);
}

static void fmt_time(char *buf, size_t n, double s)
{
    if (s < 120)
        snprintf(buf, n, "%.1f s", s);
    else if (s < 7200)
        snprintf(buf, n, "%.1f min", s / 60);
    else
        snprintf(buf, n, "%.1f h", s / 3600);
}

/* The longest a log file (standard error not a terminal) waits for a progress line. */
#define PROGRESS_LOG_SECONDS 300.0

static void show_progress(void *user, const run_progress *p)
{
    progress_state *ps = user;
    if (ps->quiet)
        return;
    /* from the first step this run shows: a restart's first step is its checkpoint's */
    eta_sample(&ps->eta, p->step, p->elapsed);
    int last = p->step == p->steps;
    int decile = p->steps > 0 ? (int)(10 * p->step / p->steps) : 10;
    /* In place on a terminal (at most 10 updates a second); in a log file a line per 10%, and
     * one at least every PROGRESS_LOG_SECONDS (a day-long run said nothing for 2.4 hours) */
    if (ps->tty ? !(last || p->elapsed - ps->last_shown >= 0.1)
                : !(last || decile > ps->last_decile ||
                    p->elapsed - ps->last_shown >= PROGRESS_LOG_SECONDS))
        return;
    ps->last_shown = p->elapsed;
    ps->last_decile = decile;
    char el[32], rem[128], sw[32] = "";
    fmt_time(el, sizeof el, p->elapsed);
    double lo, hi;
    if (last)
        snprintf(rem, sizeof rem, "0 s");
    else if (eta_estimate(&ps->eta, p->step, p->steps, &lo, &hi)) {
        char a[32], b[32];
        fmt_time(a, sizeof a, lo);
        fmt_time(b, sizeof b, hi);
        /* a range: the recent cost per step held, and its trend followed (common/eta.h) */
        if (strcmp(a, b) == 0)
            snprintf(rem, sizeof rem, "%s", a);
        else
            snprintf(rem, sizeof rem, "%s to %s (the cost per step is changing)", a, b);
    } else
        snprintf(rem, sizeof rem, "estimating");
    if (p->sweeps >= 0)
        snprintf(sw, sizeof sw, "  sweeps %d", p->sweeps);
    fprintf(stderr, "%sstep %ld/%ld  t = %.6g%s  mean overlap %.3e  elapsed %s  remaining %s%s",
            ps->tty ? "\r" : "", p->step, p->steps, p->t, sw, p->mean_overlap, el, rem,
            ps->tty ? "\033[K" : "\n");
    if (ps->tty && last)
        fputc('\n', stderr);
    ps->shown = 1;
}

/* Loads the config and applies the --set overrides; returns 0 on success. */
static int load_config(config *c, const char *path, int nset, char **sets, diag *err)
{
    if (config_load_file(c, path, err) != CDLAB_OK)
        return 0;
    for (int k = 0; k < nset; k++)
        if (config_set(c, sets[k], err) != CDLAB_OK)
            return 0;
    return 1;
}

static volatile int stop_signal = 0;
static volatile int armed = 0; /* set by run_simulation as it makes the output file */

/* The signals that end a run cleanly once its output is being made (after the current step: a
 * snapshot and a checkpoint, the file closed). Before, during set-up, they act as by default:
 * nothing has been written, and a set-up that allocates for minutes must stay killable. */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE};

static void on_stop_signal(int sig)
{
    if (!armed) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    /* only a flag: the run loop ends cleanly after the current step */
    stop_signal = sig;
}

/* What the output of a run that did not complete holds, exactly, and how to continue it. */
static void report_kept(const run_summary *sum, const char *cfg_path)
{
    struct stat gone;
    if (stat(sum->out_file, &gone) != 0 && errno == ENOENT) {
        /* removed while the run wrote it: nothing to describe but the checkpoint's copy */
        fprintf(stderr, "cdlab: %s is gone (moved or removed while the run wrote it)\n",
                sum->out_file);
        if (sum->copy_step >= 0)
            fprintf(stderr,
                    "cdlab: %s holds a copy of the checkpoint of step %ld, written whole: to "
                    "continue, cdlab run %s -o NEW.h5 --restart %s\n",
                    sum->copy_file, sum->copy_step, cfg_path, sum->copy_file);
        return;
    }
    if (sum->kept_partial)
        fprintf(stderr, "cdlab: the existing output was kept; this run's data are in %s\n",
                sum->out_file);
    if (sum->closed_whole) {
        /* closed with its /summary: every row written is there (it said "every series row and
         * snapshot up to step 0 (what came after it may be incomplete)" of a run that failed
         * at step 5 with its rows to step 5) */
        if (sum->row_step >= 0)
            fprintf(stderr, "cdlab: %s is whole: its series to step %ld", sum->out_file,
                    sum->row_step);
        else /* "its series to step -1" */
            fprintf(stderr, "cdlab: %s is whole: no series row", sum->out_file);
        if (sum->snapshot_step >= 0)
            fprintf(stderr, ", its snapshots to step %ld", sum->snapshot_step);
        else
            fprintf(stderr, ", no snapshot");
    } else if (sum->verified) {
        /* read back after its close: what it holds was checked, datasets and attributes */
        fprintf(stderr, "cdlab: %s, read back after its close, holds %ld series row%s",
                sum->out_file, sum->rows_held > 0 ? sum->rows_held : 0,
                sum->rows_held == 1 ? "" : "s");
        if (sum->row_step >= 0)
            fprintf(stderr, " (to step %ld)", sum->row_step);
        if (sum->snapshot_step >= 0)
            fprintf(stderr, ", its snapshots to step %ld", sum->snapshot_step);
        else
            fprintf(stderr, ", no whole snapshot");
    } else if (sum->snapshot_step < 0) {
        fprintf(stderr, "cdlab: %s holds no complete snapshot\n", sum->out_file);
        return;
    } else {
        fprintf(stderr,
                "cdlab: %s holds every series row and snapshot up to step %ld (what came after "
                "it may be incomplete)",
                sum->out_file, sum->snapshot_step);
    }
    if (sum->checkpoint_step >= 0 && sum->checkpoint_step >= sum->last_step)
        /* a restart from it has nothing to do (it was told "to continue") */
        fprintf(stderr,
                "; its last complete checkpoint is at step %ld, the run's last: every step was "
                "done; to run further, cdlab run %s -o NEW.h5 --restart %s --set "
                "system.steps=N (N > %ld)\n",
                sum->checkpoint_step, cfg_path, sum->out_file, sum->checkpoint_step);
    else if (sum->checkpoint_step >= 0)
        fprintf(stderr,
                "; its last complete checkpoint is at step %ld: to continue, cdlab run %s "
                "-o NEW.h5 --restart %s\n",
                sum->checkpoint_step, cfg_path, sum->out_file);
    else
        fprintf(stderr, "; it has no checkpoint to continue from\n");
    if (sum->copy_step >= 0)
        fprintf(stderr,
                "cdlab: %s holds a copy of the checkpoint of step %ld, written whole: should %s "
                "be unreadable, cdlab run %s -o NEW.h5 --restart %s\n",
                sum->copy_file, sum->copy_step, sum->out_file, cfg_path, sum->copy_file);
}

/* The arguments of cdlab run and cdlab check. */
typedef struct run_args {
    const char *cfg_path, *out, *restart, *fclib_out;
    long fclib_step;
    char **sets;
    int nset, quiet, overwrite;
} run_args;

/* An option that takes one value given a second time is refused: the last one taking effect
 * silently (-o a.h5 ... -o b.h5 wrote only b.h5) hides a slip in a script. */
static int given_twice(const char *opt, const char *first, const char *second)
{
    fprintf(stderr, "cdlab: %s given twice ('%s', then '%s'): give it once\n", opt, first, second);
    return 2;
}

/* Returns 0, or the exit status of a bad command line (its message printed). */
static int parse_run_args(int argc, char **argv, int check_only, run_args *a)
{
    static char threads_set[64];
    const char *fclib_step_text = NULL, *threads_text = NULL;
    for (int k = 0; k < argc; k++) {
        if (strcmp(argv[k], "-o") == 0 && k + 1 < argc && !check_only) {
            if (a->out)
                return given_twice("-o", a->out, argv[k + 1]);
            a->out = argv[++k];
        } else if (strcmp(argv[k], "--set") == 0 && k + 1 < argc) {
            a->sets[a->nset++] = argv[++k];
        } else if (strncmp(argv[k], "--set=", 6) == 0) {
            a->sets[a->nset++] = argv[k] + 6;
        } else if (strcmp(argv[k], "--restart") == 0 && k + 1 < argc) {
            if (a->restart)
                return given_twice("--restart", a->restart, argv[k + 1]);
            a->restart = argv[++k];
        } else if (strcmp(argv[k], "--export-fclib") == 0 && k + 1 < argc && !check_only) {
            if (fclib_step_text)
                return given_twice("--export-fclib", fclib_step_text, argv[k + 1]);
            fclib_step_text = argv[k + 1];
            char *end;
            a->fclib_step = strtol(argv[++k], &end, 10);
            if (*end != '\0' || end == argv[k] || a->fclib_step < 1) {
                fprintf(stderr, "cdlab: --export-fclib: '%s' is not a step number >= 1\n", argv[k]);
                return 2;
            }
        } else if (strcmp(argv[k], "--fclib-out") == 0 && k + 1 < argc && !check_only) {
            if (a->fclib_out)
                return given_twice("--fclib-out", a->fclib_out, argv[k + 1]);
            a->fclib_out = argv[++k];
        } else if (strcmp(argv[k], "--threads") == 0 && k + 1 < argc) {
            if (threads_text)
                return given_twice("--threads", threads_text, argv[k + 1]);
            threads_text = argv[k + 1];
            /* the same as --set system.threads=N (recorded with the overrides) */
            char *end;
            long t = strtol(argv[++k], &end, 10);
            if (*end != '\0' || end == argv[k] || t < 1 || t > 4096) {
                fprintf(stderr, "cdlab: --threads: '%s' is not a thread count (1 to 4096)\n",
                        argv[k]);
                return 2;
            }
            snprintf(threads_set, sizeof threads_set, "system.threads=%ld", t);
            a->sets[a->nset++] = threads_set;
        } else if (strcmp(argv[k], "--overwrite") == 0 && !check_only) {
            a->overwrite = 1;
        } else if (strcmp(argv[k], "--quiet") == 0 || strcmp(argv[k], "-q") == 0) {
            a->quiet = 1;
        } else if (k + 1 == argc &&
                   (strcmp(argv[k], "-o") == 0 || strcmp(argv[k], "--set") == 0 ||
                    strcmp(argv[k], "--restart") == 0 || strcmp(argv[k], "--export-fclib") == 0 ||
                    strcmp(argv[k], "--fclib-out") == 0 || strcmp(argv[k], "--threads") == 0)) {
            fprintf(stderr, "cdlab: %s needs a value\n", argv[k]);
            return 2;
        } else if (argv[k][0] == '-' || a->cfg_path) {
            fprintf(stderr, "cdlab: unexpected argument '%s'\n", argv[k]);
            usage(stderr);
            return 2;
        } else {
            a->cfg_path = argv[k];
        }
    }
    if (!a->cfg_path) {
        fprintf(stderr, "cdlab: missing CONFIG.ini\n");
        usage(stderr);
        return 2;
    }
    return 0;
}

/* cdlab check: the banner and "ok", or the first error (exit 2). */
static int check_config(config *c, const run_args *a)
{
    progress_state cps = {.quiet = a->quiet};
    /* warnings with --quiet too, as a run gives them (check -q gave none: the memory warning) */
    run_hooks chk = {.message = show_message, .result = show_result, .user = &cps};
    diag err = {{0}};
    status s = run_validate(c, &chk, &err);
    if (s != CDLAB_OK) {
        fprintf(stderr, "cdlab: %s\n", err.msg);
        return 2;
    }
    printf("%s: ok\n", a->cfg_path);
    return 0;
}

/* cdlab run: the run with progress, Ctrl-C ending it cleanly; the exit status (docs: cdlab help
 * run). command: the command as typed, for the output's provenance. */
static int run_config_as(config *c, const run_args *a, const char *command)
{
    progress_state ps = {.quiet = a->quiet, .tty = isatty(STDERR_FILENO), .last_decile = -1};
    run_hooks hooks = {.command_line = command,
                       .progress = show_progress,
                       .message = show_message,
                       .result = show_result,
                       .user = &ps,
                       .stop = &stop_signal,
                       .restart = a->restart,
                       .fclib_step = a->fclib_step,
                       .fclib_path = a->fclib_out,
                       .overwrite = a->overwrite,
                       .armed = &armed};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t k = 0; k < sizeof stop_signals / sizeof stop_signals[0]; k++)
        sigaction(stop_signals[k], &sa, NULL);
    run_summary sum;
    diag err = {{0}};
    status s = run_simulation(c, a->out, &hooks, &sum, &err);
    if (s != CDLAB_OK) {
        if (ps.tty && ps.shown)
            fputc('\n', stderr);
        fprintf(stderr, "cdlab: %s\n", err.msg);
        if (sum.started)
            report_kept(&sum, a->cfg_path);
        /* the export is made in its step, before the step's state is checked: a run that
         * stopped before that step did not write it (nothing said so) */
        if (sum.started && a->fclib_step > 0 && sum.steps_done < a->fclib_step)
            fprintf(stderr,
                    "cdlab: --export-fclib %ld: not written (the run stopped at step %ld)\n",
                    a->fclib_step, sum.steps_done);
        if (s == CDLAB_ERR_INTERRUPTED)
            return 128 + stop_signal;
        return sum.started ? 1 : 2;
    }
    /* a restart: the steps it did, from its checkpoint's ("done: 100 steps" for 50) */
    char done[96];
    if (sum.first_step > 0)
        snprintf(done, sizeof done, "steps %ld to %ld (%ld)", sum.first_step + 1, sum.steps_done,
                 sum.steps_done - sum.first_step);
    else
        snprintf(done, sizeof done, "%ld steps", sum.steps_done);
    if (!a->quiet && !sum.iterative)
        fprintf(stderr, "done: %s in %.2f s; output %s\n", done, sum.wall_seconds, sum.out_file);
    else if (!a->quiet) {
        char missed[96] = "";
        if (sum.missed_contacts > 0)
            snprintf(missed, sizeof missed, ", %ld contact%s missed by the detection",
                     sum.missed_contacts, sum.missed_contacts > 1 ? "s" : "");
        fprintf(stderr,
                "done: %s in %.2f s, %.1f sweeps per step on average, %ld steps "
                "not converged%s; output %s\n",
                done, sum.wall_seconds, sum.mean_sweeps, sum.unconverged_steps, missed,
                sum.out_file);
    }
    if (!a->quiet && sum.ranks > 1) {
        char peak[64] = "";
        if (sum.rank_peak_rss_kib > 0.0)
            snprintf(peak, sizeof peak, ", peak memory of a rank %.0f MiB",
                     sum.rank_peak_rss_kib / 1024.0);
        fprintf(stderr,
                "ranks: %d; communication %.1f%% of the step time (mean over the ranks; largest "
                "%.1f%%), %.0f messages and %.3g bytes sent per rank and step%s "
                "(/parallel/ranks)\n",
                sum.ranks, 100.0 * sum.comm_share_mean, 100.0 * sum.comm_share_max,
                sum.messages_per_step, sum.bytes_per_step, peak);
    }
    return 0;
}

/* run_config_as with the command as typed, whole (a fixed buffer once cut a long one short) */
static int run_config(config *c, const run_args *a, int argc, char **argv)
{
    size_t len = sizeof "cdlab run";
    for (int k = 0; k < argc; k++)
        len += 1 + strlen(argv[k]);
    char *command = malloc(len);
    if (!command) {
        fprintf(stderr, "cdlab: out of memory\n");
        return 2;
    }
    strcpy(command, "cdlab run");
    for (int k = 0; k < argc; k++) {
        strcat(command, " ");
        strcat(command, argv[k]);
    }
    int rc = run_config_as(c, a, command);
    free(command);
    return rc;
}

static int cmd_run(int argc, char **argv, int check_only)
{
    run_args a = {.sets = calloc((size_t)argc + 1, sizeof(char *))};
    int rc = a.sets ? parse_run_args(argc, argv, check_only, &a) : 2;
    config c;
    diag err = {{0}};
    if (rc == 0 && !load_config(&c, a.cfg_path, a.nset, a.sets, &err)) {
        fprintf(stderr, "cdlab: %s\n", err.msg);
        config_free(&c);
        rc = 2;
    } else if (rc == 0) {
        rc = check_only ? check_config(&c, &a) : run_config(&c, &a, argc, argv);
        config_free(&c);
    }
    free(a.sets);
    return rc;
}

static int parse_pos(const char *s, double *v)
{
    return config_parse_number(s, v) && *v > 0.0;
}

/* CD <-> DEM equivalence of Unger & Kertesz sec. 3.4 for a CD run with N_I sweeps of DT.
 * Long: cdlab equiv's arguments read and its table printed, line after line, as `cdlab help equiv`
 * documents them. */
static int cmd_equiv(int argc, char **argv)
{
    double args[3], d = 1.0, L = 0.0, omega = 1.0;
    const char *sweep_name = "random", *n_i_text = NULL, *d_text = NULL, *L_text = NULL;
    const char *w_text = NULL;
    const char *argv_dt = NULL, *argv_m = NULL;
    int npos = 0;
    for (int k = 0; k < argc; k++) {
        if (strcmp(argv[k], "--relaxation") == 0) {
            if (k + 1 >= argc) {
                fprintf(stderr, "cdlab equiv: --relaxation needs a number\n");
                return 2;
            }
            if (w_text)
                return given_twice(argv[k], w_text, argv[k + 1]);
            w_text = argv[++k];
            if (!parse_pos(w_text, &omega) || !(omega < 2.0)) {
                fprintf(stderr, "cdlab equiv: --relaxation must be in (0, 2) (got '%s')\n", w_text);
                return 2;
            }
        } else if (strcmp(argv[k], "--diameter") == 0 || strcmp(argv[k], "--length") == 0) {
            /* without its value it was taken for the SWEEP ("unknown sweep '--diameter'") */
            int is_d = argv[k][2] == 'd';
            const char **seen = is_d ? &d_text : &L_text;
            if (k + 1 >= argc) {
                fprintf(stderr, "cdlab equiv: %s needs a number\n", argv[k]);
                return 2;
            }
            if (*seen)
                return given_twice(argv[k], *seen, argv[k + 1]);
            *seen = argv[k + 1];
            if (!parse_pos(argv[k + 1], is_d ? &d : &L)) {
                fprintf(stderr, "cdlab equiv: %s must be a number > 0 (got '%s')\n", argv[k],
                        argv[k + 1]);
                return 2;
            }
            k++;
        } else if (strncmp(argv[k], "--", 2) == 0) {
            fprintf(stderr,
                    "cdlab equiv: unknown option '%s' (--diameter D, --length L, --relaxation W)\n",
                    argv[k]);
            return 2;
        } else if (npos < 3) {
            if (!parse_pos(argv[k], &args[npos])) {
                fprintf(stderr, "cdlab equiv: %s must be a number > 0 (got '%s')\n",
                        (const char *[]){"N_I", "DT", "MASS"}[npos], argv[k]);
                return 2;
            }
            if (npos == 0)
                n_i_text = argv[k];
            else if (npos == 1)
                argv_dt = argv[k];
            else
                argv_m = argv[k];
            npos++;
        } else if (npos == 3) {
            sweep_name = argv[k];
            npos++;
        } else {
            fprintf(stderr, "cdlab equiv: unexpected argument '%s'\n", argv[k]);
            return 2;
        }
    }
    if (npos < 3) {
        fprintf(stderr,
                "usage: cdlab equiv N_I DT MASS [SWEEP] [--diameter D] [--length L]\n"
                "  N_I (integer sweeps per step), DT and MASS of the CD run; SWEEP = random "
                "(default), jacobi or colored (measured q)\n");
        return 2;
    }
    /* solver.iterations' range (a larger one wrapped round in the int: N_I = -2147483648) */
    if (args[0] != floor(args[0]) || args[0] > 100000000.0) {
        fprintf(stderr,
                "cdlab equiv: N_I must be an integer from 1 to 100000000, as "
                "solver.iterations (got '%s')\n",
                n_i_text);
        return 2;
    }
    int sweep = -1;
    for (int k = 0; sweep_order_names[k]; k++)
        if (strcmp(sweep_name, sweep_order_names[k]) == 0)
            sweep = k;
    if (sweep < 0 || !isfinite(equiv_q((sweep_order)sweep))) {
        fprintf(stderr,
                "cdlab equiv: unknown sweep '%s' (random, forward, backward, jacobi, colored)\n",
                sweep_name);
        return 2;
    }
    if (!isfinite(equiv_q_relaxed((sweep_order)sweep, omega))) {
        fprintf(stderr,
                "cdlab equiv: the %s sweep relaxed by %s has no q (relaxed Jacobi "
                "diverges above 1)\n",
                sweep_name, w_text);
        return 2;
    }
    int N_I = (int)args[0];
    double dt = args[1], m = args[2];
    equiv_figures e = equiv_of_relaxed((sweep_order)sweep, omega, N_I, dt, d, m);
    double dtc = equiv_critical_dt(e.kappa, e.gamma, m);
    /* a figure beyond a double's range was printed as inf, 0 or -nan, and the [dem] section
     * below then described another system */
    const char *fig_names[] = {"kappa", "gamma", "c", "D", "l_diff", "the critical time step"};
    double figs[] = {e.kappa, e.gamma, e.c, e.D, e.l_diff, dtc};
    for (int k = 0; k < 6; k++)
        if (!isfinite(figs[k]) || !(figs[k] > 0.0)) {
            fprintf(stderr,
                    "cdlab equiv: %s is %g for N_I = %s, DT = %s, MASS = %s, diameter %s: beyond "
                    "the range of a double; choose units that keep the figures near 1\n",
                    fig_names[k], figs[k], n_i_text, argv_dt, argv_m, d_text ? d_text : "1");
            return 2;
        }
    /* the inputs echoed and the [dem] section in full (cd_dt = %g gave a twin of 6 digits'
     * time step: 0.00123456789 became 0.00123457, and k_n moved by 5e-6) */
    char dt_s[32], m_s[32], d_s[32], kn_s[32], gn_s[32];
    config_fmt_double(dt_s, sizeof dt_s, dt);
    config_fmt_double(m_s, sizeof m_s, m);
    config_fmt_double(d_s, sizeof d_s, d);
    config_fmt_double(kn_s, sizeof kn_s, e.kappa);
    config_fmt_double(gn_s, sizeof gn_s, e.gamma);
    printf("CD run: N_I = %d sweeps per step, dt = %s, particle mass m = %s, diameter d = %s, %s "
           "sweep%s%s\n",
           N_I, dt_s, m_s, d_s, sweep_name, w_text ? " relaxed by omega = " : "",
           w_text ? w_text : "");
    if (omega != 1.0)
        printf("  q         = %.6g      q(omega), derived on the chain (docs/physics.md; %.6g at "
               "omega = 1)\n",
               e.q, equiv_q((sweep_order)sweep));
    else
        printf("  q         = %.6g      (%s)\n", e.q,
               sweep == SWEEP_RANDOM   ? "eq. 46"
               : sweep == SWEEP_JACOBI ? "eq. 45"
                                       : "measured: 1D wave test at N_I = 40, experiments/chain1d");
    printf("  kappa     = %.6g      q m N_I / dt^2 (eq. 67): effective contact stiffness\n",
           e.kappa);
    printf("  gamma     = %.6g      q m N_I / dt (eq. 68): effective contact dashpot\n", e.gamma);
    printf("  c         = %.6g      sqrt(q N_I) d / dt (eq. 57): sound speed\n", e.c);
    printf("  D         = %.6g      q N_I d^2 / dt (eq. 54)\n", e.D);
    printf("  l_diff    = %.6g      sqrt(4 D dt) (eq. 63): rigid only for systems much smaller "
           "than it\n",
           e.l_diff);
    if (L > 0.0)
        printf("  L/l_diff  = %.4g      for L = %g: %s\n", L / e.l_diff, L,
               e.l_diff < L ? "spuriously soft regime (l_diff < L)" : "l_diff >= L");
    printf("\nDEM twin: critical time step %.6g for mass %s (use dt well below it)\n\n", dtc, m_s);
    printf("[dem]\nstiffness_from_cd = %d\ncd_dt = %s\ncd_sweep = %s\n", N_I, dt_s, sweep_name);
    if (omega != 1.0)
        printf("cd_relaxation = %s\n", w_text);
    printf("; equivalent to: k_n = %s, damping = absolute, damping_normal = %s, k_t = 0\n"
           "; (the mean particle mass of the DEM config is used; with m = %s as here)\n",
           kn_s, gn_s, m_s);
    return 0;
}

static void solve_report(void *ctx, int sweep, double residual, double seconds)
{
    (void)ctx;
    printf("  %s %8d   residual %.6e   %.4g s\n", (const char *)ctx, sweep, residual, seconds);
}

typedef struct solve_args {
    const char *file, *order, *start, *method, *criterion;
    double relaxation, tolerance, max_seconds, delta;
    long max_sweeps, every, presweeps;
    int desaxce;
    uint64_t seed;
} solve_args;

/* cdlab solve's command line into a; 0, or the exit status of a bad one (its message printed). */
static int parse_solve_args(int argc, char **argv, solve_args *a)
{
    *a = (solve_args){.order = "random",
                      .method = "sweeps",
                      .criterion = "natural_map",
                      .desaxce = 1,
                      .start = "zero",
                      .relaxation = 1.0,
                      .tolerance = 1e-8,
                      .max_sweeps = 100000,
                      .every = 100,
                      .seed = 1};
    double v;
    for (int k = 0; k < argc; k++) {
        const char *o = argv[k];
        if (strncmp(o, "--", 2) != 0) {
            if (a->file) {
                fprintf(stderr, "cdlab solve: one FILE.fclib.h5 (got '%s' and '%s')\n", a->file, o);
                return 2;
            }
            a->file = o;
            continue;
        }
        if (k + 1 >= argc) {
            fprintf(stderr, "cdlab solve: %s needs a value\n", o);
            return 2;
        }
        const char *val = argv[++k];
        if (strcmp(o, "--sweep") == 0 &&
            (strcmp(val, "random") == 0 || strcmp(val, "forward") == 0 ||
             strcmp(val, "backward") == 0))
            a->order = val;
        else if (strcmp(o, "--method") == 0 &&
                 (strcmp(val, "sweeps") == 0 || strcmp(val, "apgd") == 0 ||
                  strcmp(val, "newton") == 0))
            a->method = val;
        else if (strcmp(o, "--criterion") == 0 &&
                 (strcmp(val, "natural_map") == 0 || strcmp(val, "local") == 0 ||
                  strcmp(val, "global") == 0))
            a->criterion = val;
        else if (strcmp(o, "--delta") == 0 && config_parse_number(val, &v) && v >= 0.0)
            a->delta = v;
        else if (strcmp(o, "--desaxce") == 0 && (strcmp(val, "on") == 0 || strcmp(val, "off") == 0))
            a->desaxce = strcmp(val, "on") == 0;
        else if (strcmp(o, "--presweeps") == 0 && config_parse_number(val, &v) && v >= 0.0 &&
                 v <= 1e9 && v == floor(v))
            a->presweeps = (long)v;
        else if (strcmp(o, "--max-seconds") == 0 && config_parse_number(val, &v) && v > 0.0 &&
                 v < 1e9)
            a->max_seconds = v;
        else if (strcmp(o, "--start") == 0 &&
                 (strcmp(val, "zero") == 0 || strcmp(val, "stored") == 0))
            a->start = val;
        else if (strcmp(o, "--relaxation") == 0 && config_parse_number(val, &v) && v > 0.0 &&
                 v < 2.0)
            a->relaxation = v;
        else if (strcmp(o, "--tolerance") == 0 && config_parse_number(val, &v) && v >= 0.0)
            a->tolerance = v;
        else if ((strcmp(o, "--max-sweeps") == 0 || strcmp(o, "--every") == 0) &&
                 config_parse_number(val, &v) && v >= (o[2] == 'm' ? 1.0 : 0.0) && v <= 1e9 &&
                 v == floor(v))
            *(o[2] == 'm' ? &a->max_sweeps : &a->every) = (long)v;
        else if (strcmp(o, "--seed") == 0 && config_parse_number(val, &v) && v >= 0.0 &&
                 v < 1.8e19 && v == floor(v))
            a->seed = (uint64_t)v;
        else {
            fprintf(stderr,
                    "cdlab solve: %s '%s' is not taken (cdlab help solve: --method "
                    "sweeps|apgd|newton, --criterion natural_map|local|global, --delta >= 0, "
                    "--sweep random|forward|backward, --relaxation in "
                    "(0, 2), --tolerance >= 0, --max-sweeps >= 1, --every >= 0, --start "
                    "zero|stored, --seed >= 0, --desaxce on|off, --presweeps >= 0, --max-seconds > "
                    "0)\n",
                    o, val);
            return 2;
        }
    }
    if (!a->file) {
        fprintf(stderr, "cdlab solve: which FILE.fclib.h5? (cdlab help solve)\n");
        return 2;
    }
    if (a->delta > 0.0 && strcmp(a->criterion, "local") != 0) {
        fprintf(stderr, "cdlab solve: --delta is the local criterion's (--criterion local)\n");
        return 2;
    }
    return 0;
}

/* cdlab solve's line saying which solver runs, from where, until when. */
static void print_solver(const solve_args *a, int method)
{
    const char *from = strcmp(a->start, "zero") == 0 ? "zero" : "the stored solution";
    char until[160];
    if (strcmp(a->criterion, "local") == 0)
        snprintf(until, sizeof until,
                 "every contact's |dr| <= %g |r| + %g over one iteration (eq. 35)", a->tolerance,
                 a->delta);
    else if (strcmp(a->criterion, "global") == 0)
        snprintf(until, sizeof until, "|d sum |r|| <= %g sum |r| over one iteration (eq. 36)",
                 a->tolerance);
    else
        snprintf(until, sizeof until, "the natural-map residual (rho = 1) <= %g", a->tolerance);
    if (method == CP_APGD)
        printf("solver: APGD on the cone complementarity problem, %s, from %s, until %s or %ld "
               "iterations\n",
               a->desaxce ? "De Saxce's outer loop to Coulomb's law"
                          : "the convex relaxation (no outer loop: sliding contacts dilate)",
               from, until, a->max_sweeps);
    else if (method == CP_NEWTON)
        printf("solver: semismooth Newton (Alart-Curnier, UMFPACK) after %ld %s sweeps "
               "(relaxation %g), from %s, until %s or %ld iterations\n",
               a->presweeps, a->order, a->relaxation, from, until, a->max_sweeps);
    else
        printf("solver: %s sweeps, relaxation %g, from %s, until %s or %ld sweeps\n", a->order,
               a->relaxation, from, until, a->max_sweeps);
}

/* The solver's own figures after the verdict. */
static void print_solver_figures(const solve_args *a, int method, const cp_sweep_result *res,
                                 int nc)
{
    if (method == CP_SWEEPS)
        printf(" (%.3g ns per contact update)\n",
               res->sweeps > 0 ? 1e9 * res->seconds / ((double)res->sweeps * nc) : 0.0);
    else if (method == CP_APGD)
        printf(a->desaxce ? " (%d outer updates of mu |u_T|; the last inner problem's "
                            "residual %.3e)\n"
                          : " (%d outer updates; this residual is the convex problem's own, "
                            "the natural-map residual of Coulomb's law is %.3e)\n",
               res->outer, a->desaxce ? res->inner_residual : res->coulomb);
    else
        printf(" (%d factorizations, %d sweeps in place of a failed line search)\n",
               res->factorizations, res->fallbacks);
}

/* cdlab solve FILE.fclib.h5: a stored contact problem solved by the sweeps, APGD or Newton's
 * method, the residual history printed. */
static int cmd_solve(int argc, char **argv)
{
    solve_args a;
    int bad = parse_solve_args(argc, argv, &a);
    if (bad)
        return bad;
    contact_problem cp;
    int stored;
    diag err;
    if (contact_problem_read_fclib(a.file, &cp, &stored, &err) != CDLAB_OK) {
        fprintf(stderr, "cdlab: %s\n", err.msg);
        return 2;
    }
    if (strcmp(a.start, "stored") == 0 && !stored) {
        fprintf(stderr, "cdlab solve: %s holds no solution (/solution/r) to start from\n", a.file);
        contact_problem_free(&cp);
        return 2;
    }
    printf("%s: %d contacts, local dimension %d, W %d x %d with %d entries\n", a.file, cp.nc, cp.d,
           cp.m, cp.m, cp.nnz);
    if (stored)
        printf("its stored solution: natural-map residual %.6e (rho = 1, FCLIB's and Siconos's; "
               "rho = 1/W_NN: %.6e)\n",
               natural_map_residual(cp.nc, cp.d, cp.colptr, cp.row, cp.val, cp.q, cp.mu, cp.r,
                                    NM_RHO_ONE, NULL),
               natural_map_residual(cp.nc, cp.d, cp.colptr, cp.row, cp.val, cp.q, cp.mu, cp.r,
                                    NM_RHO_INV_W, NULL));
    double *r = calloc((size_t)cp.m, sizeof *r);
    if (!r) {
        fprintf(stderr, "cdlab: out of memory for %d impulses\n", cp.m);
        contact_problem_free(&cp);
        return 1;
    }
    if (strcmp(a.start, "stored") == 0)
        memcpy(r, cp.r, (size_t)cp.m * sizeof *r);
    int method = strcmp(a.method, "apgd") == 0     ? CP_APGD
                 : strcmp(a.method, "newton") == 0 ? CP_NEWTON
                                                   : CP_SWEEPS;
    cp_sweep_options o = {.method = (cp_method)method,
                          .order = strcmp(a.order, "random") == 0    ? CP_RANDOM
                                   : strcmp(a.order, "forward") == 0 ? CP_FORWARD
                                                                     : CP_BACKWARD,
                          .relaxation = a.relaxation,
                          /* local, global: the change criterion alone stops it */
                          .tolerance = strcmp(a.criterion, "natural_map") == 0 ? a.tolerance : -1.0,
                          .change = strcmp(a.criterion, "local") == 0    ? CP_CHANGE_LOCAL
                                    : strcmp(a.criterion, "global") == 0 ? CP_CHANGE_GLOBAL
                                                                         : CP_CHANGE_NONE,
                          .change_epsilon = a.tolerance,
                          .change_delta = a.delta,
                          .max_sweeps = (int)a.max_sweeps,
                          .every = (int)a.every,
                          .seed = a.seed,
                          .desaxce = a.desaxce,
                          .presweeps = (int)a.presweeps,
                          .max_seconds = a.max_seconds};
    print_solver(&a, method);
    const char *unit = method == CP_SWEEPS ? "sweeps" : "iterations";
    cp_sweep_result res;
    status s =
        contact_problem_solve(&cp, r, &o, solve_report,
                              (void *)(method == CP_SWEEPS ? "sweep" : "iteration"), &res, &err);
    if (s == CDLAB_OK) {
        printf("%s: residual %.6e after %d %s in %.4g s", res.converged ? "reached" : "not reached",
               res.residual, res.sweeps, unit, res.seconds);
        if (o.change != CP_CHANGE_NONE)
            printf(" (the %s criterion %s: the last iteration's change %.3e)", a.criterion,
                   res.change_met ? "met" : "not met", res.change);
        print_solver_figures(&a, method, &res, cp.nc);
        printf("dilation: u_N at the %d contacts with r_N > 0: mean %.3e, largest %.3e\n",
               res.closed, res.dilation_mean, res.dilation_max);
    } else
        fprintf(stderr, "cdlab: %s\n", err.msg);
    free(r);
    contact_problem_free(&cp);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "cdlab: cannot write the standard output: %s\n", strerror(errno));
        return 1;
    }
    return s != CDLAB_OK ? 2 : res.converged ? 0 : 1;
}

/* Reads the pipes fds[0], fds[1] into text[0], text[1] (malloc'ed, len[k] bytes) as the writer
 * writes (a full pipe would stop it), until both end, and closes them; 0, or 1 with errno. */
static int read_both(int fds[2], char *text[2], size_t len[2])
{
    size_t cap[2] = {0, 0};
    int open_n = 2, failed = 0;
    text[0] = text[1] = NULL;
    len[0] = len[1] = 0;
    while (open_n > 0) {
        struct pollfd pf[2] = {{.fd = fds[0], .events = POLLIN}, {.fd = fds[1], .events = POLLIN}};
        if (poll(pf, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            failed = 1;
            break;
        }
        for (int k = 0; k < 2; k++) {
            if (fds[k] < 0 || !(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            if (len[k] + 65536 > cap[k]) {
                char *g = realloc(text[k], cap[k] = 2 * cap[k] + 65536);
                if (!g) {
                    failed = 1;
                    break;
                }
                text[k] = g;
            }
            ssize_t got = read(fds[k], text[k] + len[k], cap[k] - len[k]);
            if (got > 0)
                len[k] += (size_t)got;
            else if (got == 0 || errno != EINTR) {
                close(fds[k]);
                fds[k] = -1;
                open_n--;
            }
        }
        if (failed)
            break;
    }
    for (int k = 0; k < 2; k++)
        if (fds[k] >= 0)
            close(fds[k]);
    return failed;
}

/* cdlab info's description of path, made in a child process and passed on only when the child
 * ends normally: Debian's HDF5 crashes (SIGSEGV in H5A__close) on some damaged files, met on a
 * copy with 64 bytes overwritten at 2 % of the file, and a damaged file must end in one line.
 * 0: described, 2: refused (its message printed), 1: no child process. */
static int describe_in_child(const char *path)
{
    int out[2], err[2];
    if (pipe(out) != 0 || pipe(err) != 0) {
        fprintf(stderr, "cdlab: cannot make a pipe: %s\n", strerror(errno));
        return 1;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "cdlab: cannot start a process: %s\n", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        close(out[0]);
        close(err[0]);
        FILE *o = fdopen(out[1], "w"), *e = fdopen(err[1], "w");
        dup2(err[1], 2); /* the library's own complaints, kept with the child's */
        diag d;
        int rc = 0;
        if (!o || !e || h5in_describe(path, o, &d) != CDLAB_OK) {
            if (e)
                fprintf(e, "cdlab: %s\n", o ? d.msg : "cannot open a pipe");
            rc = 2;
        }
        if (o && fclose(o) != 0)
            rc = 3;
        if (e)
            fclose(e);
        _exit(rc);
    }
    close(out[1]);
    close(err[1]);
    char *text[2];
    size_t len[2];
    int fds[2] = {out[0], err[0]}, failed = read_both(fds, text, len);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    int rc;
    if (failed) {
        fprintf(stderr, "cdlab: cannot read the description of %s: %s\n", path, strerror(errno));
        rc = 1;
    } else if (WIFEXITED(st) && (WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 2)) {
        fwrite(text[0], 1, len[0], stdout);
        fwrite(text[1], 1, len[1], stderr);
        rc = WEXITSTATUS(st);
    } else {
        fprintf(stderr,
                "cdlab: %s: damaged: the HDF5 library %s %d reading it (a file it cannot "
                "describe; if the file is whole, this is a defect: please report it)\n",
                path, WIFSIGNALED(st) ? "was killed by signal" : "ended with status",
                WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
        rc = 2;
    }
    free(text[0]);
    free(text[1]);
    return rc;
}

/* cdlab --version: the build, its libraries and what they can do. */
static int print_version(void)
{
    printf("cdlab %s\ncommit %s\nresults epoch %d\ncompiler %s\ncflags %s\n", cdlab_version,
           cdlab_git_commit, CDLAB_RESULTS_EPOCH, cdlab_compiler, cdlab_cflags);
    char hdf5[32];
    h5io_library_version(hdf5, sizeof hdf5);
    diag why = {{0}};
    printf("hdf5 %s\nfclib %s%s\n", hdf5,
           contact_problem_fclib_load(&why) == CDLAB_OK ? "loads (--export-fclib can write)"
                                                        : "does not load: ",
           why.msg);
#ifdef _OPENMP
    printf("openmp on (%d threads available; OMP_NUM_THREADS sets them)\n", cdlab_threads());
#else
    printf("openmp off (built with OPENMP=0)\n");
#endif
    return 0;
}

static int cdlab_main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    /* cdlab --version, and any command's --version (cdlab info --version) */
    if (strcmp(argv[1], "--version") == 0 || (argc == 3 && strcmp(argv[2], "--version") == 0))
        return print_version();
    if (strcmp(argv[1], "help") == 0) {
        if (argc >= 3 && strcmp(argv[2], "config") == 0)
            return config_help(argc >= 4 ? argv[3] : NULL);
        if (argc >= 3) {
            if (command_help(wants_help(1, argv + 2) ? "help" : argv[2], stdout))
                return 0;
            fprintf(stderr, "cdlab: no command '%s' (cdlab help lists them)\n", argv[2]);
            return 2;
        }
        usage(stdout);
        return 0;
    }
    if (wants_help(argc - 2, argv + 2)) {
        if (command_help(argv[1], stdout))
            return 0;
        fprintf(stderr, "cdlab: unknown command '%s'\n", argv[1]);
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "run") == 0)
        return cmd_run(argc - 2, argv + 2, 0);
    if (strcmp(argv[1], "equiv") == 0)
        return cmd_equiv(argc - 2, argv + 2);
    if (strcmp(argv[1], "solve") == 0)
        return cmd_solve(argc - 2, argv + 2);
    if (strcmp(argv[1], "check") == 0)
        return cmd_run(argc - 2, argv + 2, 1);
    if (strcmp(argv[1], "info") == 0) {
        if (argc != 3) { /* it printed the usage alone, not what was wrong */
            fprintf(stderr, "cdlab info: expected one OUT.h5 (got %d arguments)\n", argc - 2);
            usage(stderr);
            return 2;
        }
        int rc = describe_in_child(argv[2]);
        if (rc == 1)
            return 1;
        if (rc == 2) {
            /* OUT.h5 is made when a run ends: until then, or when it was killed, its data are in
             * OUT.h5.partial */
            char partial[4096];
            struct stat sb;
            if (stat(argv[2], &sb) != 0 && errno == ENOENT &&
                snprintf(partial, sizeof partial, "%s.partial", argv[2]) < (int)sizeof partial &&
                stat(partial, &sb) == 0)
                fprintf(stderr,
                        "cdlab: %s exists: the output of a run that is still running, or that was "
                        "killed (cdlab info %s)\n",
                        partial, partial);
            return 2;
        }
        return 0;
    }
    fprintf(stderr, "cdlab: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}

/* cdlab scan ...: the parameter scan is Python (tools/cdlab/scan.py; docs/howto/scan.md). It
 * runs Debian's python3 (CDLAB_PYTHON to use another) on the package beside this program: the
 * repository's tools/ for build/cdlab, PREFIX/lib/python3.X/dist-packages for PREFIX/bin/cdlab
 * (make install), with CDLAB naming this program, so that the scan's rows run it. */
static int exec_scan(int argc, char **argv)
{
    char self[4096], pkg[4096 + 64] = "";
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "cdlab scan: cannot find this program's own path (/proc/self/exe)\n");
        return 2;
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    size_t dir = slash ? (size_t)(slash - self) : 0;
    snprintf(pkg, sizeof pkg, "%.*s/../tools/cdlab/scan.py", (int)dir, self);
    glob_t g = {0};
    if (access(pkg, R_OK) == 0) {
        snprintf(pkg, sizeof pkg, "%.*s/../tools", (int)dir, self);
    } else {
        snprintf(pkg, sizeof pkg, "%.*s/../lib/python3*/dist-packages/cdlab/scan.py", (int)dir,
                 self);
        if (glob(pkg, 0, NULL, &g) != 0 || g.gl_pathc == 0) {
            fprintf(
                stderr,
                "cdlab scan: the Python package cdlab is not beside this program (%.*s/../tools "
                "or ../lib/python3.X/dist-packages): run the repository's build/cdlab or "
                "make install\n",
                (int)dir, self);
            globfree(&g);
            return 2;
        }
        snprintf(pkg, sizeof pkg, "%s", g.gl_pathv[0]);
        pkg[strlen(pkg) - strlen("/cdlab/scan.py")] = '\0';
        globfree(&g);
    }
    const char *old = getenv("PYTHONPATH");
    char path[8192 + 128];
    snprintf(path, sizeof path, "%s%s%s", pkg, old && *old ? ":" : "", old && *old ? old : "");
    const char *python = getenv("CDLAB_PYTHON") ? getenv("CDLAB_PYTHON") : "/usr/bin/python3";
    if (setenv("PYTHONPATH", path, 1) != 0 || (!getenv("CDLAB") && setenv("CDLAB", self, 1) != 0)) {
        fprintf(stderr, "cdlab scan: cannot set the environment (%s)\n", strerror(errno));
        return 2;
    }
    char **args = calloc((size_t)argc + 3, sizeof *args);
    if (!args) {
        fprintf(stderr, "cdlab scan: out of memory\n");
        return 2;
    }
    args[0] = (char *)python;
    args[1] = "-m";
    args[2] = "cdlab";
    for (int k = 1; k < argc; k++)
        args[k + 2] = argv[k];
    execv(python, args);
    fprintf(stderr,
            "cdlab scan: cannot start %s (%s): the scan needs Debian's python3 with python3-numpy "
            "and python3-h5py (make deps), or CDLAB_PYTHON naming a python that has them\n",
            python, strerror(errno));
    free(args);
    return 2;
}

/* Under mpirun: MPI is started. A job of more than one rank runs `cdlab run` and `cdlab check`
 * (the engine refuses what it cannot distribute) with everything printed by rank 0 only (the
 * other ranks' standard output and error go to /dev/null unless CDLAB_ALL_RANKS_PRINT is set,
 * for debugging; every rank reaches the same exit status); other commands are refused. One rank
 * runs as one process. */
int main(int argc, char **argv)
{
    if (std_streams_safe() != 0)
        return 2; /* a closed standard stream, and no /dev/null to put in its place */
    /* a file-size limit (ulimit -f) makes a write fail with EFBIG, reported as a full disk is,
     * instead of killing the program without a word (SIGXFSZ, exit 153) */
    signal(SIGXFSZ, SIG_IGN);
    if (argc >= 2 && strcmp(argv[1], "scan") == 0)
        return exec_scan(argc, argv); /* before MPI starts: the scan's rows are processes */
    diag err = {{0}};
    if (comm_init(&argc, &argv, &err) != CDLAB_OK) {
        fprintf(stderr, "cdlab: %s\n", err.msg);
        comm_finalize();
        return 2;
    }
    int rc;
    if (comm_size() > 1 && comm_rank() != 0 && !getenv("CDLAB_ALL_RANKS_PRINT") &&
        (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)))
        comm_abort(2);
    if (comm_size() > 1 &&
        !(argc >= 2 && (strcmp(argv[1], "run") == 0 || strcmp(argv[1], "check") == 0))) {
        fprintf(stderr,
                "cdlab: under mpirun with %d ranks only cdlab run and cdlab check work "
                "(docs/parallel.md)\n",
                comm_size());
        rc = 2;
    } else {
        rc = cdlab_main(argc, argv);
    }
    rc = stdout_checked_exit("cdlab", rc);
    comm_finalize();
    return rc;
}

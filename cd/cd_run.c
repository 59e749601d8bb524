#include "cd_run.h"
#include "contact_problem.h"

#include "build_info.h"
#include "cd_config.h"
#include "config_schema.h" /* generated from docs/config.md into the build folder */
#include "dem_config.h"
#include "h5io.h"
#include "outfile.h"
#include "parallel.h"
#include "xdmf.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const known_sections[] = {"system",    "solver",  "dem",       "drive",
                                             "particles", "contact", "load",      "output",
                                             "plane.",    "piston.", "cylinder.", NULL};

typedef enum run_mode { MODE_CD, MODE_DEM } run_mode;
static const char *const mode_names[] = {"cd", "dem", NULL};

typedef struct output_params {
    char file[512];
    long every;
    long series_every;     /* a series row every this many steps (and the last step) */
    long timing_warmup;    /* steps left out of /summary timed_step_seconds */
    long checkpoint_every; /* a restart checkpoint every this many steps (0: only the last step) */
    int *probes;           /* storage indices */
    int n_probes;
} output_params;

static status read_output(config *c, const world *W, output_params *o, diag *err)
{
    memset(o, 0, sizeof *o);
    status s;
    if ((s = config_string(c, "output", "file", 0, "cdlab.h5", o->file, sizeof o->file, err)) ||
        (s = config_int(c, "output", "every", 0, 100, 0, __LONG_MAX__, &o->every, err)) ||
        (s = config_int(c, "output", "series_every", 0, 1, 1, __LONG_MAX__, &o->series_every,
                        err)) ||
        (s = config_int(c, "output", "timing_warmup", 0, 0, 0, __LONG_MAX__, &o->timing_warmup,
                        err)) ||
        (s = config_int(c, "output", "checkpoint_every", 0, 0, 0, __LONG_MAX__,
                        &o->checkpoint_every, err)))
        return s;
    return scene_particle_list(c, "output", "probes", W->P.n, &o->probes, &o->n_probes, err);
}

typedef struct setup {
    world W;
    scene_info info;
    run_mode mode;
    cd_params prm; /* mode cd */
    dem_setup dem; /* mode dem */
    output_params out;
    char notice[512]; /* the other engine's sections left unused, for the user ("" if none) */
    int threads;      /* the threads the run starts with */
    int tune;         /* automatic: measure 1 thread against every core (thread_tuner) */
    char threads_why[160];
} setup;

static void announce(const setup *S, const run_hooks *hk);

static void setup_free(setup *S)
{
    world_free(&S->W);
    free(S->out.probes);
}

/* Peak memory per particle, measured (bench/results, 1e6 particles, everything included): CD
 * 2D 0.9 kB (about two contacts per particle, 0.44 kB each), DEM 3D 1.8 kB; CD 3D from six
 * contacts per particle; rounded up. Only the order of magnitude matters here. */
static double bytes_per_particle(run_mode mode, long dim)
{
    if (mode == MODE_DEM)
        return 2000.0;
    return dim == 3 ? 3000.0 : dim == 2 ? 1000.0 : 500.0;
}

/* A run that cannot fit in the machine's memory is refused before it allocates (it would
 * otherwise allocate for minutes until the kernel kills it). */
static status check_memory(config *c, run_mode mode, diag *err)
{
    long count = 0, dim = 3;
    diag ignore;
    /* both are checked properly by scene_build; here only their product with the estimate */
    if (config_int(c, "particles", "count", 0, 0, 0, __LONG_MAX__, &count, &ignore) != CDLAB_OK ||
        config_int(c, "system", "dimension", 0, 3, 1, 3, &dim, &ignore) != CDLAB_OK)
        return CDLAB_OK;
    double need = (double)count * bytes_per_particle(mode, dim);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return CDLAB_OK;
    double have = (double)pages * (double)page;
    if (need > have)
        return config_error(c, "particles", "count", err,
                            "%ld particles need about %.3g GB (an estimate: %.1f kB per particle "
                            "in this mode and dimension), more than this machine's %.3g GB of "
                            "memory",
                            count, need / 1e9, bytes_per_particle(mode, dim) / 1e3, have / 1e9);
    return CDLAB_OK;
}

/* The threads of a run: system.threads (or --threads) when given; else OMP_NUM_THREADS when set;
 * else automatic. Whether threads pay cannot be told from the particle count (measured on the
 * project's 2-core machine, 2 threads against 1: a dense 4,100-sphere chute 1.66x faster, a
 * loose 4,000-sphere fall 2.2x slower, a loose 16,000 1.5x slower, 32,000 1.3x faster; every
 * run of 50 to 1,000 particles slower, by 4x beside one busy process): an automatic run
 * measures. The random, ordered and Jacobi sweeps are serial: one thread. DEM and the colored
 * sweep start at one thread and time a few steps at one and at every core (thread_tuner), then
 * keep the faster, and measure again every TUNE_EVERY steps (the machine's load changes).
 * Results do not depend on the thread count (tested bit for bit), so this changes only time. */
static void choose_threads(setup *S, long requested)
{
    int cores = cdlab_cores();
    S->tune = 0;
    if (requested > 0) {
        S->threads = (int)requested;
        snprintf(S->threads_why, sizeof S->threads_why, "system.threads");
    } else if (getenv("OMP_NUM_THREADS")) {
        S->threads = cdlab_threads();
        snprintf(S->threads_why, sizeof S->threads_why, "OMP_NUM_THREADS");
    } else if ((S->mode == MODE_DEM || S->prm.sweep == SWEEP_COLORED) && cores > 1) {
        S->threads = 1;
        S->tune = 1;
        snprintf(S->threads_why, sizeof S->threads_why,
                 "automatic: 1 or %d, whichever the run measures faster", cores);
    } else {
        S->threads = 1;
        snprintf(S->threads_why, sizeof S->threads_why,
                 cores > 1 ? "automatic: the %s sweep is serial" : "automatic: one core",
                 cd_sweep_names[S->prm.sweep]);
    }
    if (S->threads < 1)
        S->threads = 1;
}

/* Measured thread choice (see choose_threads): after TUNE_SKIP steps, TUNE_STEPS steps at one
 * thread, TUNE_STEPS at every core; the faster wins until the next trial, TUNE_EVERY steps or
 * about TUNE_EVERY_SECONDS later, whichever comes first, the interval doubling while the choice
 * stays the same. */
#define TUNE_SKIP 3
#define TUNE_STEPS 8
#define TUNE_EVERY 2000
#define TUNE_EVERY_SECONDS 5.0
/* A step shorter than this at one thread is not tried at more: the threads' start and
 * synchronisation cost more than they share (measured: 0.16 ms per step of a loose 4,000-sphere
 * DEM fall, 2.2x slower at 2 threads; 0.7 ms of the dense 4,100-sphere chute, 1.7x faster). */
#define TUNE_MIN_STEP_SECONDS 3e-4
typedef struct thread_tuner {
    int cores, chosen;
    long trial_at; /* step index of the next trial's start */
    long interval; /* steps between trials (doubles while the choice stays) */
    double sum[2]; /* seconds of the trial's steps at 1 thread and at every core */
} thread_tuner;

static void say(const run_hooks *hk, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Called after step index k (its duration: spent); sets the threads of the next step. */
static void tune_threads(thread_tuner *T, long k, double spent, const run_hooks *hk)
{
    if (k + 1 == T->trial_at) /* the trial's first steps: one thread */
        cdlab_set_threads(1);
    long i = k - T->trial_at; /* [0, TUNE_STEPS): one thread; then every core */
    if (i < 0 || i >= 2 * TUNE_STEPS)
        return;
    T->sum[i >= TUNE_STEPS] += spent;
    int decide = i == 2 * TUNE_STEPS - 1;
    if (i == TUNE_STEPS - 1) {
        if (T->sum[0] / TUNE_STEPS < TUNE_MIN_STEP_SECONDS) { /* too short to share */
            T->sum[1] = INFINITY;
            decide = 1;
        } else {
            cdlab_set_threads(T->cores);
        }
    }
    if (decide) {
        int best = T->sum[1] < T->sum[0] ? T->cores : 1;
        cdlab_set_threads(best);
        if (best != T->chosen)
            say(hk, "threads: %d from step %ld (measured: %.3g ms per step at 1 thread, %.3g at %d)",
                best, k + 1, 1e3 * T->sum[0] / TUNE_STEPS, 1e3 * T->sum[1] / TUNE_STEPS, T->cores);
        T->interval = best == T->chosen && T->interval > 0 ? 2 * T->interval : TUNE_EVERY;
        if (T->interval > 64 * TUNE_EVERY)
            T->interval = 64 * TUNE_EVERY;
        T->chosen = best;
        double per_step = fmin(T->sum[0], T->sum[1]) / TUNE_STEPS;
        long by_time = per_step > 0.0 ? (long)(TUNE_EVERY_SECONDS / per_step) : T->interval;
        if (by_time < 4 * TUNE_STEPS)
            by_time = 4 * TUNE_STEPS;
        T->trial_at = k + (by_time < T->interval ? by_time : T->interval);
        T->sum[0] = T->sum[1] = 0.0;
    }
}

static status read_all(config *c, setup *S, diag *err)
{
    memset(S, 0, sizeof *S);
    config_use_schema(c, config_schema, CONFIG_SCHEMA_N);
    status s;
    int mode;
    if ((s = config_enum(c, "system", "mode", 0, MODE_CD, mode_names, &mode, err)))
        return s;
    S->mode = (run_mode)mode;
    if ((s = check_memory(c, S->mode, err)) || (s = scene_build(c, &S->W, &S->info, err)))
        return s;
    /* The other engine's sections are not used, so that one config serves a CD run and its
     * DEM twin (--set system.mode=dem); their key names are still checked. A CD config run in
     * DEM mode gives the twin its N_I, sweep and dt as defaults (dem_config_read). */
    if (S->mode == MODE_CD) {
        int nd, nr;
        if ((s = config_skip_section(c, "dem", dem_config_keys, &nd, err)) ||
            (s = config_skip_section(c, "drive", drive_config_keys, &nr, err)))
            return s;
        if (nd + nr > 0)
            snprintf(S->notice, sizeof S->notice,
                     "notice: %s%s%s not used with system.mode = cd (ignored)",
                     nd ? "[dem]" : "", nd && nr ? " and " : "", nr ? "[drive]" : "");
        s = cd_config_read(c, &S->prm, err);
    } else {
        const cd_params *twin = NULL;
        if (config_section_line(c, "solver") >= 0) {
            if ((s = cd_config_read(c, &S->prm, err)))
                return s;
            twin = &S->prm;
        }
        if ((s = dem_config_read(c, &S->W, &S->info, twin, &S->dem, err)))
            return s;
        if (twin && S->dem.from_cd > 0)
            snprintf(S->notice, sizeof S->notice,
                     "notice: [solver] not used with system.mode = dem; this is the DEM twin of "
                     "its CD run (dem.stiffness_from_cd = %d, cd_sweep = %s, cd_dt = %g)",
                     S->dem.from_cd, cd_sweep_names[S->dem.cd_sweep], S->dem.cd_dt);
        else if (twin)
            snprintf(S->notice, sizeof S->notice,
                     "notice: [solver] not used with system.mode = dem (ignored)");
    }
    long threads;
    if (s || (s = read_output(c, &S->W, &S->out, err)) ||
        (s = config_int(c, "system", "threads", 0, 0, 0, 4096, &threads, err)))
        return s;
    /* the parser and docs/config.md are one list: a key read but not documented is a defect */
    if (c->undocumented[0])
        return diag_set(err, CDLAB_ERR_CONFIG,
                        "internal: cdlab reads %s, which docs/config.md does not document (its "
                        "tables are the key list: tools/config_schema.py)",
                        c->undocumented);
    if ((s = config_check_unused(c, known_sections, err)))
        return s;
    choose_threads(S, threads);
    return CDLAB_OK;
}

status cd_run_validate(config *c, const run_hooks *hk, diag *err)
{
    setup S;
    status s = read_all(c, &S, err);
    if (s == CDLAB_OK)
        announce(&S, hk);
    setup_free(&S);
    return s;
}

enum {
    SER_T,
    SER_SWEEPS,
    SER_CONV,
    SER_RES,
    SER_MEANOV,
    SER_MAXOV,
    SER_KE,
    SER_NC,
    SER_NA,
    SER_NS,
    SER_PPOS,
    SER_PVEL,
    SER_PIST_X,
    SER_PIST_V,
    SER_PIST_F,
    /* DEM energy ledger */
    SER_E_KT,
    SER_E_KR,
    SER_E_KP,
    SER_E_EN,
    SER_E_ET,
    SER_E_FR,
    SER_E_DA,
    SER_E_WX,
    SER_E_WP,
    SER_E_RES,
    SER_STRESS,
    SER_COUNT
};
static const char *const energy_paths[] = {
    "/series/energy/kinetic_translational", "/series/energy/kinetic_rotational",
    "/series/energy/kinetic_piston",        "/series/energy/elastic_normal",
    "/series/energy/elastic_tangential",    "/series/energy/friction_dissipation",
    "/series/energy/damping_dissipation",   "/series/energy/work_external",
    "/series/energy/work_piston",           "/series/energy/balance_residual"};

/* One row of per-step diagnostics, whichever engine made it. */
typedef struct step_record {
    int sweeps, converged, n_contacts, n_active, n_sliding;
    double residual, mean_overlap, max_overlap;
    const dem_energy *energy; /* DEM only */
    const double *stress;     /* DEM only: Love-Weber stress, 3 x 3 row-major */
} step_record;

typedef struct writer {
    h5out *h;
    int ser[SER_COUNT];
    int n_pistons;
    int *piston_idx;
    double *row; /* scratch for one row of the widest series */
    xdmf *xmf;   /* the ParaView sidecar */
    /* what the file holds for sure: the steps of its last flushed snapshot and of its last
     * complete checkpoint (-1: none) */
    long snapshot_step, checkpoint_step;
} writer;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static status write_header(writer *w, config *c, const setup *S, const run_hooks *hk,
                           diag *err)
{
    h5out *h = w->h;
    status s;
    char buf[128];
    /* the --set overrides, as given ("section.key=value", one a line) */
    char overrides[8192];
    config_overrides(c, overrides, sizeof overrides);
    const char *program =
        S->mode == MODE_DEM ? "cdlab run (linear-frictional DEM)" : "cdlab run (contact dynamics)";
    if ((s = h5out_attr_string(h, "/", "program", program, err)) ||
        (s = h5out_attr_string(h, "/", "config_file", c->file, err)) ||
        (s = h5out_attr_string(h, "/", "config_text", c->text ? c->text : "", err)) ||
        (s = h5out_attr_string(h, "/", "overrides", overrides, err)) ||
        (s = h5out_attr_string(h, "/", "command_line",
                               hk && hk->command_line ? hk->command_line : "", err)) ||
        (s = h5out_attr_int(h, "/", "seed", (long long)S->info.seed, err)) ||
        (s = h5out_attr_string(h, "/", "units", "consistent user units (none implied)", err)) ||
        (s = h5out_group(h, "/parameters", err)) || (s = h5out_group(h, "/build", err)))
        return s;
    for (int k = 0; k < c->nres; k++)
        if ((s = h5out_attr_string(h, "/parameters", c->res[k].name, c->res[k].value, err)))
            return s;
    time_t tt = time(NULL);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", gmtime(&tt));
    if ((s = h5out_attr_string(h, "/build", "version", cdlab_version, err)) ||
        (s = h5out_attr_string(h, "/build", "git_commit", cdlab_git_commit, err)) ||
        (s = h5out_attr_string(h, "/build", "compiler", cdlab_compiler, err)) ||
        (s = h5out_attr_string(h, "/build", "cflags", cdlab_cflags, err)) ||
        (s = h5out_attr_int(h, "/build", "threads", cdlab_threads(), err)) ||
        (s = h5out_attr_string(h, "/build", "threads_chosen_by", S->threads_why, err)) ||
        (s = h5out_attr_int(h, "/build", "results_epoch", CDLAB_RESULTS_EPOCH, err)) ||
        (s = h5out_attr_string(h, "/build", "run_started", buf, err)))
        return s;
    if (S->mode == MODE_DEM) {
        const dem_params *p = &S->dem.p;
        if ((s = h5out_group(h, "/dem", err)) ||
            (s = h5out_attr_double(h, "/dem", "k_n", p->law.k_n, err)) ||
            (s = h5out_attr_double(h, "/dem", "k_t", p->law.k_t, err)) ||
            (s = h5out_attr_double(h, "/dem", "critical_dt", S->dem.dt_crit, err)) ||
            (s = h5out_attr_double(h, "/dem", "damping_normal", p->damp_n, err)) ||
            (s = h5out_attr_double(h, "/dem", "damping_tangential", p->damp_t, err)) ||
            (s = h5out_attr_string(h, "/dem", "damping",
                                   p->damp_rate       ? "rate"
                                   : p->damp_absolute ? "absolute"
                                                      : "fraction",
                                   err)))
            return s;
    }
    /* spurious elasticity figures (Unger & Kertesz sec. 3) for the fixed iteration count */
    cd_elasticity e =
        cd_elasticity_of(S->prm.sweep, S->prm.iterations, S->W.dt, S->info.d_mean, S->info.m_mean);
    if (S->mode == MODE_CD &&
        ((s = h5out_group(h, "/elasticity", err)) ||
         (s = h5out_attr_double(h, "/elasticity", "q", e.q, err)) ||
         (s = h5out_attr_double(h, "/elasticity", "D", e.D, err)) ||
         (s = h5out_attr_double(h, "/elasticity", "c", e.c, err)) ||
         (s = h5out_attr_double(h, "/elasticity", "l_diff", e.l_diff, err)) ||
         (s = h5out_attr_double(h, "/elasticity", "kappa_eff", e.kappa, err)) ||
         (s = h5out_attr_double(h, "/elasticity", "gamma_eff", e.gamma, err)) ||
         (s = h5out_attr_double(h, "/elasticity", "L", S->info.length, err)) ||
         (s = h5out_attr_double(h, "/elasticity", "d_mean", S->info.d_mean, err)) ||
         (s = h5out_attr_double(h, "/elasticity", "m_mean", S->info.m_mean, err))))
        return s;
    if (S->mode == MODE_DEM) {
        for (int k = 0; k < SER_E_RES - SER_E_KT + 1; k++)
            if ((s = h5out_series(h, energy_paths[k], H5IO_DOUBLE, 0, NULL, &w->ser[SER_E_KT + k],
                                  err)))
                return s;
        long t33[2] = {3, 3};
        if ((s = h5out_series(h, "/series/stress", H5IO_DOUBLE, 2, t33, &w->ser[SER_STRESS],
                              err)) ||
            (s = h5out_attr_string(h, "/series/stress", "definition",
                                   "Love-Weber sigma_ab = (1/V) sum f_a l_b over particle-particle "
                                   "contacts, f on p, l from p to q (tension positive)",
                                   err)) ||
            (s = h5out_attr_double(h, "/series/stress", "volume", S->dem.stress_volume, err)))
            return s;
    }

    long np = S->out.n_probes, tail3[2] = {np, 3};
    struct {
        int id;
        const char *path;
        h5type t;
        int rank;
        const long *tail;
    } defs[] = {
        {SER_T, "/series/t", H5IO_DOUBLE, 0, NULL},
        {SER_SWEEPS, "/series/sweeps", H5IO_INT32, 0, NULL},
        {SER_CONV, "/series/converged", H5IO_INT32, 0, NULL},
        {SER_RES, "/series/residual", H5IO_DOUBLE, 0, NULL},
        {SER_MEANOV, "/series/mean_overlap", H5IO_DOUBLE, 0, NULL},
        {SER_MAXOV, "/series/max_overlap", H5IO_DOUBLE, 0, NULL},
        {SER_KE, "/series/kinetic_energy", H5IO_DOUBLE, 0, NULL},
        {SER_NC, "/series/contacts", H5IO_INT32, 0, NULL},
        {SER_NA, "/series/active_contacts", H5IO_INT32, 0, NULL},
        {SER_NS, "/series/sliding_contacts", H5IO_INT32, 0, NULL},
        {SER_PPOS, "/series/probe_position", H5IO_DOUBLE, 2, tail3},
        {SER_PVEL, "/series/probe_velocity", H5IO_DOUBLE, 2, tail3},
    };
    for (size_t k = 0; k < sizeof defs / sizeof defs[0]; k++)
        if ((s = h5out_series(h, defs[k].path, defs[k].t, defs[k].rank, defs[k].tail,
                              &w->ser[defs[k].id], err)))
            return s;
    if ((s = h5out_array(h, "/series/probe_ids", H5IO_INT32, 1, (long[]){np > 0 ? np : 0},
                         S->out.probes, err)))
        return s;
    w->piston_idx = malloc((size_t)(S->W.n_walls > 0 ? S->W.n_walls : 1) * sizeof *w->piston_idx);
    if (!w->piston_idx)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    for (int k = 0; k < S->W.n_walls; k++)
        if (S->W.walls[k].kind == WALL_PISTON)
            w->piston_idx[w->n_pistons++] = k;
    if (w->n_pistons > 0) {
        long tp[1] = {w->n_pistons};
        if ((s = h5out_series(h, "/series/piston_position", H5IO_DOUBLE, 1, tp, &w->ser[SER_PIST_X],
                              err)) ||
            (s = h5out_series(h, "/series/piston_velocity", H5IO_DOUBLE, 1, tp, &w->ser[SER_PIST_V],
                              err)) ||
            (s = h5out_series(h, "/series/piston_force", H5IO_DOUBLE, 1, tp, &w->ser[SER_PIST_F],
                              err)))
            return s;
        char names[4096] = "";
        for (int k = 0; k < w->n_pistons; k++) {
            strncat(names, k ? "," : "", sizeof names - strlen(names) - 1);
            strncat(names, S->W.walls[w->piston_idx[k]].name, sizeof names - strlen(names) - 1);
        }
        if ((s = h5out_attr_string(h, "/series/piston_position", "pistons", names, err)))
            return s;
    }
    size_t widest = (size_t)(3 * np + w->n_pistons + 1);
    w->row = malloc(widest * sizeof *w->row);
    if (!w->row)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    /* walls, for plotting and analysis */
    for (int k = 0; k < S->W.n_walls; k++) {
        const wall *wl = &S->W.walls[k];
        char path[64], point[80], dir[80];
        snprintf(path, sizeof path, "/walls/%d", k);
        snprintf(point, sizeof point, "%s/point", path);
        snprintf(dir, sizeof dir, "%s/direction", path);
        static const char *kinds[] = {"plane", "piston", "cylinder"};
        long three = 3;
        if ((s = h5out_group(h, path, err)) ||
            (s = h5out_attr_string(h, path, "name", wl->name, err)) ||
            (s = h5out_attr_string(h, path, "kind", kinds[wl->kind], err)) ||
            (s = h5out_array(h, point, H5IO_DOUBLE, 1, &three, &wl->p, err)) ||
            (s = h5out_array(h, dir, H5IO_DOUBLE, 1, &three, &wl->n, err)) ||
            (s = h5out_attr_double(h, path, "radius", wl->radius, err)))
            return s;
    }
    return CDLAB_OK;
}

static status write_row(writer *w, const world *W, const output_params *o, const step_record *st,
                        diag *err)
{
    h5out *h = w->h;
    status s;
    int32_t sw = st->sweeps, cv = st->converged, nc = st->n_contacts, na = st->n_active,
            ns = st->n_sliding;
    double ke = world_kinetic_energy(W);
    status bad = isfinite(ke) ? CDLAB_OK : world_energy_error(W, err);
    if (st->energy) {
        const dem_energy *E = st->energy;
        double v[10] = {
            E->kin_trans, E->kin_rot, E->kin_piston,    E->elastic_n,   E->elastic_t,
            E->friction,  E->damping, E->work_external, E->work_piston, dem_energy_residual(E)};
        for (int k = 0; k < 10; k++)
            if ((s = h5out_series_append(h, w->ser[SER_E_KT + k], &v[k], err)))
                return s;
        if ((s = h5out_series_append(h, w->ser[SER_STRESS], st->stress, err)))
            return s;
    }
    if ((s = h5out_series_append(h, w->ser[SER_T], &W->t, err)) ||
        (s = h5out_series_append(h, w->ser[SER_SWEEPS], &sw, err)) ||
        (s = h5out_series_append(h, w->ser[SER_CONV], &cv, err)) ||
        (s = h5out_series_append(h, w->ser[SER_RES], &st->residual, err)) ||
        (s = h5out_series_append(h, w->ser[SER_MEANOV], &st->mean_overlap, err)) ||
        (s = h5out_series_append(h, w->ser[SER_MAXOV], &st->max_overlap, err)) ||
        (s = h5out_series_append(h, w->ser[SER_KE], &ke, err)) ||
        (s = h5out_series_append(h, w->ser[SER_NC], &nc, err)) ||
        (s = h5out_series_append(h, w->ser[SER_NA], &na, err)) ||
        (s = h5out_series_append(h, w->ser[SER_NS], &ns, err)))
        return s;
    for (int k = 0; k < o->n_probes; k++) {
        vec3 x = W->P.x[o->probes[k]];
        w->row[3 * k] = x.x, w->row[3 * k + 1] = x.y, w->row[3 * k + 2] = x.z;
    }
    if ((s = h5out_series_append(h, w->ser[SER_PPOS], w->row, err)))
        return s;
    for (int k = 0; k < o->n_probes; k++) {
        vec3 v = W->P.v[o->probes[k]];
        w->row[3 * k] = v.x, w->row[3 * k + 1] = v.y, w->row[3 * k + 2] = v.z;
    }
    if ((s = h5out_series_append(h, w->ser[SER_PVEL], w->row, err)))
        return s;
    if (w->n_pistons > 0) {
        for (int k = 0; k < w->n_pistons; k++)
            w->row[k] = W->walls[w->piston_idx[k]].s;
        if ((s = h5out_series_append(h, w->ser[SER_PIST_X], w->row, err)))
            return s;
        for (int k = 0; k < w->n_pistons; k++)
            w->row[k] = W->walls[w->piston_idx[k]].u;
        if ((s = h5out_series_append(h, w->ser[SER_PIST_V], w->row, err)))
            return s;
        for (int k = 0; k < w->n_pistons; k++)
            w->row[k] = W->walls[w->piston_idx[k]].contact_force;
        if ((s = h5out_series_append(h, w->ser[SER_PIST_F], w->row, err)))
            return s;
    }
    return bad; /* a non-finite kinetic energy stops the run, its row written */
}

/* Contact k of the run's list with the geometry of now: the CD contact list, or the DEM pair
 * store (ds not NULL). */
static void snapshot_contact(const world *W, const dem_solver *ds, int k, contact *c)
{
    if (ds) {
        dem_contact_record(W, ds, k, c);
        return;
    }
    *c = W->C.c[k];
    contact_geometry(c, &W->P, W->walls);
}

/* Its force on body 1 alone. */
static vec3 snapshot_force(const world *W, const dem_solver *ds, int k)
{
    return ds ? dem_pair_force(ds, k) : W->C.c[k].R;
}

static status write_snapshot(writer *w, const world *W, const dem_solver *ds, diag *err)
{
    const particles *P = &W->P;
    char g[64], path[128];
    snprintf(g, sizeof g, "/snapshots/%08ld", W->step);
    status s;
    if ((s = h5out_group(w->h, g, err)) || (s = h5out_attr_int(w->h, g, "step", W->step, err)) ||
        (s = h5out_attr_double(w->h, g, "time", W->t, err)))
        return s;
    long n = P->n, n3[2] = {n, 3}, n4[2] = {n, 4};
#define SNAP(name, type, rank, dims, data)                                                         \
    do {                                                                                           \
        snprintf(path, sizeof path, "%s/%s", g, name);                                             \
        if ((s = h5out_array(w->h, path, type, rank, dims, data, err)))                            \
            return s;                                                                              \
    } while (0)
    SNAP("position", H5IO_DOUBLE, 2, n3, P->x);
    SNAP("velocity", H5IO_DOUBLE, 2, n3, P->v);
    SNAP("angular_velocity", H5IO_DOUBLE, 2, n3, P->w);
    SNAP("orientation", H5IO_DOUBLE, 2, n4, P->q);
    SNAP("radius", H5IO_DOUBLE, 1, &n, P->r);
    SNAP("mass", H5IO_DOUBLE, 1, &n, P->m);
    SNAP("id", H5IO_INT32, 1, &n, P->id);
    /* periodic image counts: unwrapped position = position + image * period */
    SNAP("image", H5IO_INT32, 2, n3, P->image);
    long nc = ds ? ds->npair : W->C.n, nc2[2] = {nc, 2}, nc3[2] = {nc, 3};
    int32_t *pair = malloc((size_t)(nc > 0 ? nc : 1) * 2 * sizeof *pair);
    double *buf = malloc((size_t)(nc > 0 ? nc : 1) * 3 * sizeof *buf);
    double *gap = malloc((size_t)(nc > 0 ? nc : 1) * sizeof *gap);
    double *ends = malloc((size_t)(nc > 0 ? nc : 1) * 6 * sizeof *ends);
    if (!pair || !buf || !gap || !ends) {
        free(pair);
        free(buf);
        free(gap);
        free(ends);
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory writing a snapshot");
    }
    /* the geometry of now, once per contact (the DEM engine does not update the normal of
     * pairs that are apart); with it the lines for viewers: body 0's end of the contact (its
     * centre's nearest periodic image, or the contact point on a wall) and body 1's centre,
     * line k joining rows 2k, 2k+1 */
    for (int k = 0; k < nc; k++) {
        contact c;
        snapshot_contact(W, ds, k, &c);
        pair[2 * k] = c.i;
        pair[2 * k + 1] = c.j;
        buf[3 * k] = c.n.x, buf[3 * k + 1] = c.n.y, buf[3 * k + 2] = c.n.z;
        gap[k] = c.gap;
        /* body 0's end: the image of its centre nearest body 1 (x_j minus the minimum-image
         * separation), or the point of the wall's surface nearest body 1 (x_j - (r_j + g) n),
         * whatever the lever arms */
        vec3 xj = P->x[c.j];
        vec3 x0 = c.i >= 0 ? v3_sub(xj, pbox_delta(&P->box, P->x[c.i], xj))
                           : v3_axpy(-(P->r[c.j] + c.gap), c.n, xj);
        ends[6 * k] = x0.x, ends[6 * k + 1] = x0.y, ends[6 * k + 2] = x0.z;
        ends[6 * k + 3] = xj.x, ends[6 * k + 4] = xj.y, ends[6 * k + 5] = xj.z;
    }
    status st = CDLAB_OK;
#define SNAPC(name, type, rank, dims, data)                                                        \
    if (st == CDLAB_OK) {                                                                          \
        snprintf(path, sizeof path, "%s/contacts/%s", g, name);                                    \
        st = h5out_array(w->h, path, type, rank, dims, data, err);                                 \
    }
    SNAPC("pair", H5IO_INT32, 2, nc2, pair);
    SNAPC("normal", H5IO_DOUBLE, 2, nc3, buf);
    for (int k = 0; k < nc; k++) {
        vec3 R = snapshot_force(W, ds, k);
        buf[3 * k] = R.x, buf[3 * k + 1] = R.y, buf[3 * k + 2] = R.z;
    }
    SNAPC("force", H5IO_DOUBLE, 2, nc3, buf);
    SNAPC("gap", H5IO_DOUBLE, 1, &nc, gap);
    for (int k = 0; k < nc; k++)
        buf[k] = v3_norm(snapshot_force(W, ds, k));
    SNAPC("force_magnitude", H5IO_DOUBLE, 1, &nc, buf);
    long e3[2] = {2 * nc, 3};
    SNAPC("endpoints", H5IO_DOUBLE, 2, e3, ends);
    for (int k = 0; k < 2 * nc; k++)
        pair[k] = k;
    SNAPC("line", H5IO_INT32, 2, nc2, pair);
    free(ends);
    free(pair);
    free(gap);
    free(buf);
    /* every frame reaches the file: a killed run leaves a readable file up to here */
    if (st == CDLAB_OK)
        st = h5out_flush(w->h, err);
    if (st == CDLAB_OK)
        w->snapshot_step = W->step;
    if (st == CDLAB_OK && w->xmf)
        st = xdmf_add_snapshot(w->xmf, g, W->t, n, nc, err);
    return st;
#undef SNAP
#undef SNAPC
}

/* The volume of the Love-Weber stress: as given, or the current bounding box of the particles
 * (area in dimension 2, length in dimension 1). */
static double stress_volume(const world *W, double given)
{
    if (given > 0.0)
        return given;
    vec3 lo = v3(INFINITY, INFINITY, INFINITY), hi = v3(-INFINITY, -INFINITY, -INFINITY);
    for (int i = 0; i < W->P.n; i++) {
        double r = W->P.r[i];
        vec3 x = W->P.x[i];
        lo = v3(fmin(lo.x, x.x - r), fmin(lo.y, x.y - r), fmin(lo.z, x.z - r));
        hi = v3(fmax(hi.x, x.x + r), fmax(hi.y, x.y + r), fmax(hi.z, x.z + r));
    }
    if (W->P.n == 0)
        return 1.0;
    double V = hi.x - lo.x;
    if (W->P.dimension >= 2)
        V *= hi.y - lo.y;
    if (W->P.dimension == 3)
        V *= hi.z - lo.z;
    return V;
}

static void say(const run_hooks *hk, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void say(const run_hooks *hk, const char *fmt, ...)
{
    if (!hk || !hk->message)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    hk->message(hk->user, line);
}

/* A result line (the FCLIB export's residual, say): through hk->result, which shows it even
 * when progress and banner are off, else as a message. */
static void say_result(const run_hooks *hk, const char *line)
{
    if (hk && hk->result)
        hk->result(hk->user, line);
    else
        say(hk, "%s", line);
}

/* ---- checkpoints (restart) ----
 * /checkpoints/NNNNNNNN holds everything the next step reads: the particles' state, the walls,
 * the contact list (raw records: CD contact records with their forces, or the DEM pair store
 * with its history), the random stream, and the DEM solver's forces, neighbour-list paths and
 * energy ledger. A run continued from it gives bit-identical results to an uninterrupted one
 * (same build). Format 2: the DEM pairs are 64-byte dem_pair records (format 1 stored full
 * contact records in DEM runs too). */
#define CHECKPOINT_FORMAT "cdlab-checkpoint-3"
#define CONTACT_WORDS ((long)(sizeof(contact) / sizeof(int64_t)))
#define PAIR_WORDS ((long)(sizeof(dem_pair) / sizeof(int64_t)))

/* What defines the simulated system, stored with every checkpoint (format 3) and compared on
 * restart: a checkpoint continues the same simulation or none. Loads (gravity, [load], piston
 * forces and their step), the number of steps, output cadence, solver settings, detection gap
 * and thread count may change; docs/output.md lists them. */
typedef struct state_def {
    double dt, dimension, friction, k_n, k_t, damp_n, damp_t, dem_law;
    uint64_t bodies, walls, box;
} state_def;

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t k = 0; k < n; k++)
        h = (h ^ p[k]) * 0x100000001b3ULL;
    return h;
}
#define FNV_START 0xcbf29ce484222325ULL

static state_def state_of(const world *W, const dem_setup *dem, run_mode mode)
{
    const particles *P = &W->P;
    state_def d = {.dt = W->dt, .dimension = P->dimension, .friction = W->detect.mu};
    d.bodies = fnv1a(fnv1a(fnv1a(FNV_START, P->r, (size_t)P->n * sizeof *P->r), P->m,
                           (size_t)P->n * sizeof *P->m),
                     P->frozen, (size_t)P->n);
    d.walls = FNV_START;
    for (int k = 0; k < W->n_walls; k++) {
        const wall *w = &W->walls[k];
        double def[10] = {w->kind, w->p.x, w->p.y, w->p.z, w->n.x, w->n.y, w->n.z, w->radius,
                          w->inside, w->mu};
        d.walls = fnv1a(fnv1a(d.walls, def, sizeof def), &w->mass, sizeof w->mass);
    }
    double box[9] = {P->box.periodic[0], P->box.periodic[1], P->box.periodic[2], P->box.lo.x,
                     P->box.lo.y, P->box.lo.z, P->box.L.x, P->box.L.y, P->box.L.z};
    d.box = fnv1a(FNV_START, box, sizeof box);
    if (mode == MODE_DEM) {
        const dem_params *p = &dem->p;
        d.k_n = p->law.k_n;
        d.k_t = p->law.k_t;
        d.damp_n = p->damp_n;
        d.damp_t = p->damp_t;
        d.dem_law = p->law.tangential * 1000 + p->law.projection * 100 + p->law.twirl * 10 +
                    p->damp_absolute * 2 + p->damp_rate;
    }
    return d;
}

/* The attributes of state_def, with the config keys a user would change to make them differ. */
static const struct {
    const char *attr, *keys;
    size_t off;
    int is_hash;
} state_attrs[] = {
    {"dt", "system.dt", offsetof(state_def, dt), 0},
    {"dimension", "system.dimension", offsetof(state_def, dimension), 0},
    {"friction", "contact.friction", offsetof(state_def, friction), 0},
    {"k_n", "dem.k_n (or dem.stiffness_from_cd, cd_dt, cd_sweep)", offsetof(state_def, k_n), 0},
    {"k_t", "dem.k_t", offsetof(state_def, k_t), 0},
    {"damping_normal", "dem.damping_normal (or dem.stiffness_from_cd)", offsetof(state_def, damp_n),
     0},
    {"damping_tangential", "dem.damping_tangential", offsetof(state_def, damp_t), 0},
    {"dem_law", "dem.tangential, projection, twirl or damping", offsetof(state_def, dem_law), 0},
    {"bodies_checksum", "the particles' radii, masses or frozen flags ([particles])",
     offsetof(state_def, bodies), 1},
    {"walls_checksum", "the walls (their kind, position, normal, radius, friction or mass)",
     offsetof(state_def, walls), 1},
    {"box_checksum", "the periodic box (system.periodic, box_min, box_max)",
     offsetof(state_def, box), 1},
};
#define N_STATE_ATTRS (sizeof state_attrs / sizeof state_attrs[0])

static status write_state_def(h5out *h, const char *g, const state_def *d, diag *err)
{
    status s = CDLAB_OK;
    for (size_t k = 0; k < N_STATE_ATTRS && s == CDLAB_OK; k++) {
        const char *p = (const char *)d + state_attrs[k].off;
        if (state_attrs[k].is_hash)
            s = h5out_attr_int(h, g, state_attrs[k].attr, (long long)*(const uint64_t *)p, err);
        else
            s = h5out_attr_double(h, g, state_attrs[k].attr, *(const double *)p, err);
    }
    return s;
}

/* The first difference between the checkpoint's system and this run's, named by its keys. */
static status check_state_def(h5in *h, const char *file, const char *g, const state_def *d,
                              diag *err)
{
    status s;
    for (size_t k = 0; k < N_STATE_ATTRS; k++) {
        const char *p = (const char *)d + state_attrs[k].off;
        if (state_attrs[k].is_hash) {
            long long v;
            if ((s = h5in_attr_int(h, g, state_attrs[k].attr, &v, err)))
                return s;
            if ((uint64_t)v != *(const uint64_t *)p)
                return diag_set(err, CDLAB_ERR_CONFIG,
                                "--restart %s: this config changes %s: a restart continues the "
                                "same system (docs/output.md: what may change on restart)",
                                file, state_attrs[k].keys);
        } else {
            double v;
            if ((s = h5in_attr_double(h, g, state_attrs[k].attr, &v, err)))
                return s;
            if (v != *(const double *)p)
                return diag_set(err, CDLAB_ERR_CONFIG,
                                "--restart %s: %s = %.17g here, %.17g in the checkpoint: a restart "
                                "continues the same system (docs/output.md: what may change on "
                                "restart)",
                                file, state_attrs[k].keys, *(const double *)p, v);
        }
    }
    return CDLAB_OK;
}

static status write_checkpoint(writer *w, const world *W, const cd_solver *cs, const dem_solver *ds,
                               const state_def *sd, diag *err)
{
    char g[64], path[128];
    snprintf(g, sizeof g, "/checkpoints/%08ld", W->step);
    const particles *P = &W->P;
    long n = P->n, n3[2] = {n, 3}, n4[2] = {n, 4}, nw = W->n_walls, nw3[2] = {nw, 3};
    int dem = ds->started;
    long words = dem ? PAIR_WORDS : CONTACT_WORDS;
    long nc = dem ? ds->npair : W->C.n, ncw[2] = {nc, words}, two = 2;
    status s;
    if ((s = h5out_group(w->h, g, err)) ||
        (s = h5out_attr_string(w->h, g, "format", CHECKPOINT_FORMAT, err)) ||
        (s = h5out_attr_int(w->h, g, "step", W->step, err)) ||
        (s = h5out_attr_int(w->h, g, "particles", n, err)) ||
        (s = h5out_attr_int(w->h, g, "walls", nw, err)) ||
        (s = h5out_attr_int(w->h, g, "contacts", nc, err)) ||
        (s = h5out_attr_string(w->h, g, "contact_record", dem ? "dem_pair" : "contact", err)) ||
        (s = h5out_attr_int(w->h, g, "contact_bytes", words * 8, err)) ||
        (s = h5out_attr_int(w->h, g, "dem_rebuilds", ds->rebuilds, err)) ||
        (s = h5out_attr_string(w->h, g, "mode", dem ? "dem" : "cd", err)) ||
        (s = write_state_def(w->h, g, sd, err)))
        return s;
#define CK(name, type, rank, dims, data)                                                           \
    do {                                                                                           \
        snprintf(path, sizeof path, "%s/%s", g, name);                                             \
        if ((s = h5out_array(w->h, path, type, rank, dims, data, err)))                            \
            return s;                                                                              \
    } while (0)
    CK("x", H5IO_DOUBLE, 2, n3, P->x);
    CK("v", H5IO_DOUBLE, 2, n3, P->v);
    CK("w", H5IO_DOUBLE, 2, n3, P->w);
    CK("q", H5IO_DOUBLE, 2, n4, P->q);
    CK("image", H5IO_INT32, 2, n3, P->image);
    double *wb = malloc((size_t)(nw > 0 ? nw : 1) * 3 * sizeof *wb);
    if (!wb)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory writing a checkpoint");
    for (int k = 0; k < nw; k++) {
        wb[3 * k] = W->walls[k].s;
        wb[3 * k + 1] = W->walls[k].u;
        wb[3 * k + 2] = W->walls[k].contact_force;
    }
    s = h5out_array(w->h, (snprintf(path, sizeof path, "%s/walls", g), path), H5IO_DOUBLE, 2, nw3,
                    wb, err);
    free(wb);
    if (s)
        return s;
    int64_t rng[2] = {(int64_t)cs->rng.state, (int64_t)cs->rng.inc};
    CK("rng", H5IO_INT64, 1, &two, rng);
    CK("contacts", H5IO_INT64, 2, ncw, dem ? (const void *)ds->pair : (const void *)W->C.c);
    if (ds->started) {
        long ne = (long)(sizeof ds->E / sizeof(double)), nwp = nw;
        CK("dem_F", H5IO_DOUBLE, 2, n3, ds->F);
        CK("dem_T", H5IO_DOUBLE, 2, n3, ds->T);
        CK("dem_path", H5IO_DOUBLE, 1, &n, ds->path);
        CK("dem_piston_F", H5IO_DOUBLE, 1, &nwp, ds->piston_F);
        CK("dem_energy", H5IO_DOUBLE, 1, &ne, &ds->E);
        long one = 1;
        CK("dem_wall_path", H5IO_DOUBLE, 1, &one, &ds->wall_path);
    }
#undef CK
    /* the mark of a complete checkpoint, written once everything else is on disk: a restart
     * takes the last checkpoint that has it (a disk that fills up mid-checkpoint leaves one
     * without it) */
    if ((s = h5out_flush(w->h, err)) || (s = h5out_attr_int(w->h, g, "complete", 1, err)) ||
        (s = h5out_flush(w->h, err)))
        return s;
    w->checkpoint_step = W->step;
    return CDLAB_OK;
}

/* Whether every value of a restored array is finite. */
static int all_finite(const double *v, long n)
{
    for (long k = 0; k < n; k++)
        if (!isfinite(v[k]))
            return 0;
    return 1;
}

/* Restores the state of the last complete checkpoint of file into a world built from the same
 * config, after checking that the config describes the same system (state_def) and that every
 * restored value is possible: a corrupt or hostile file is refused, never run. */
static status read_checkpoint(const char *file, run_mode mode, world *W, cd_solver *cs,
                              dem_solver *ds, const dem_params *dp, const state_def *sd,
                              diag *err)
{
    h5in *h;
    status s = h5in_open(&h, file, err);
    if (s)
        return s;
    char last[256], g[300], path[400];
    long long step = 0, n = 0, nw = 0, nc = 0, cb = 0, rb = 0, complete = 0;
    char *fmt = NULL, *fmode = NULL;
    /* the last checkpoint with the mark of completeness */
    const char *before = NULL;
    char prev[256];
    for (;;) {
        if ((s = h5in_last_child(h, "/checkpoints", before, last, err))) {
            if (before)
                s = diag_set(err, CDLAB_ERR_IO,
                             "%s: no complete checkpoint (the last ones were cut short)", file);
            goto done;
        }
        snprintf(g, sizeof g, "/checkpoints/%s", last);
        diag ignore;
        if (h5in_attr_int(h, g, "complete", &complete, &ignore) == CDLAB_OK && complete == 1)
            break;
        snprintf(prev, sizeof prev, "%s", last);
        before = prev;
    }
    if ((s = h5in_attr_str(h, g, "format", &fmt, err)))
        goto done;
    if (strcmp(fmt, CHECKPOINT_FORMAT) != 0) {
        s = diag_set(err, CDLAB_ERR_IO, "%s: checkpoint format '%s', this cdlab reads '%s'", file,
                     fmt, CHECKPOINT_FORMAT);
        goto done;
    }
    if ((s = h5in_attr_str(h, g, "mode", &fmode, err)))
        goto done;
    if (strcmp(fmode, mode_names[mode]) != 0) {
        s = diag_set(err, CDLAB_ERR_CONFIG,
                     "--restart %s: its checkpoint is of a system.mode = %s run, this is a "
                     "system.mode = %s run",
                     file, fmode, mode_names[mode]);
        goto done;
    }
    if ((s = h5in_attr_int(h, g, "step", &step, err)) ||
        (s = h5in_attr_int(h, g, "particles", &n, err)) ||
        (s = h5in_attr_int(h, g, "walls", &nw, err)) ||
        (s = h5in_attr_int(h, g, "contacts", &nc, err)) ||
        (s = h5in_attr_int(h, g, "contact_bytes", &cb, err)) ||
        (s = h5in_attr_int(h, g, "dem_rebuilds", &rb, err)))
        goto done;
    if (step < 0 || step > LONG_MAX / 2 || rb < 0 || nc < 0) {
        s = diag_set(err, CDLAB_ERR_IO,
                     "%s: corrupt checkpoint %s (step %lld, %lld contacts, %lld rebuilds)", file, g,
                     step, nc, rb);
        goto done;
    }
    if (n != W->P.n || nw != W->n_walls) {
        s = diag_set(err, CDLAB_ERR_CONFIG,
                     "--restart %s: its checkpoint has %lld particles and %lld walls, this config "
                     "%d particles and %d walls: a restart continues the same system",
                     file, n, nw, W->P.n, W->n_walls);
        goto done;
    }
    if ((s = check_state_def(h, file, g, sd, err)))
        goto done;
    int dem = mode == MODE_DEM;
    long words = dem ? PAIR_WORDS : CONTACT_WORDS;
    if (cb != words * 8 || nc > INT32_MAX / 2) {
        s = diag_set(err, CDLAB_ERR_IO,
                     "%s: checkpoint of %lld %lld-byte contact records does not match this build "
                     "(%ld-byte %s records): restart with the build that wrote it",
                     file, nc, cb, words * 8, dem ? "DEM pair" : "contact");
        goto done;
    }
    /* the records the file holds, before anything is allocated for them */
    long long held;
    snprintf(path, sizeof path, "%s/contacts", g);
    if ((s = h5in_size(h, path, &held, err)))
        goto done;
    if (held != nc * words) {
        s = diag_set(err, CDLAB_ERR_IO,
                     "%s: corrupt checkpoint %s: %lld contacts announced, %lld words stored", file,
                     g, nc, held);
        goto done;
    }
    {
        contact_list *L = &W->C;
        void *cbuf;
        if (dem) {
            if ((s = dem_reserve_pairs(ds, (int)nc, err)) != CDLAB_OK)
                goto done;
            ds->npair = (int)nc;
            cbuf = ds->pair;
        } else {
            contact *buf = NULL;
            if (nc > 0 && posix_memalign((void **)&buf, 64, (size_t)nc * sizeof *buf) != 0) {
                s = diag_set(err, CDLAB_ERR_NOMEM, "out of memory reading a checkpoint");
                goto done;
            }
            free(L->c);
            L->c = buf;
            L->n = L->cap = (int)nc;
            cbuf = buf;
        }
        long n3 = 3 * n, nn = n, nw3 = 3 * nw;
        double *wb = malloc((size_t)(nw3 > 0 ? nw3 : 1) * sizeof *wb);
        int64_t rng[2];
#define RD(name, type, data, count)                                                                \
    if (s == CDLAB_OK) {                                                                           \
        snprintf(path, sizeof path, "%s/%s", g, name);                                             \
        s = h5in_read(h, path, type, data, count, err);                                            \
    }
        if (!wb)
            s = diag_set(err, CDLAB_ERR_NOMEM, "out of memory reading a checkpoint");
        RD("x", H5IO_DOUBLE, W->P.x, n3);
        RD("v", H5IO_DOUBLE, W->P.v, n3);
        RD("w", H5IO_DOUBLE, W->P.w, n3);
        RD("q", H5IO_DOUBLE, W->P.q, 4 * nn);
        RD("image", H5IO_INT32, W->P.image, n3);
        RD("walls", H5IO_DOUBLE, wb, nw3);
        RD("rng", H5IO_INT64, rng, 2);
        RD("contacts", H5IO_INT64, cbuf, nc * words);
        if (s == CDLAB_OK) {
            for (int k = 0; k < nw; k++) {
                W->walls[k].s = wb[3 * k];
                W->walls[k].u = wb[3 * k + 1];
                W->walls[k].contact_force = wb[3 * k + 2];
            }
            cs->rng.state = (uint64_t)rng[0];
            cs->rng.inc = (uint64_t)rng[1];
            /* PCG32 needs an odd increment: with an even one (a zeroed state, say) the stream
             * can be constant and the sweep's bounded draws would never end */
            if (!(cs->rng.inc & 1u))
                s = diag_set(err, CDLAB_ERR_IO,
                             "%s: corrupt checkpoint %s: the random stream's increment is even", file,
                             g);
            const char *bad = !all_finite(&W->P.x[0].x, n3)   ? "x"
                              : !all_finite(&W->P.v[0].x, n3) ? "v"
                              : !all_finite(&W->P.w[0].x, n3) ? "w"
                              : !all_finite(W->P.q, 4 * nn)   ? "q"
                              : !all_finite(wb, nw3)          ? "walls"
                                                              : NULL;
            if (s == CDLAB_OK && bad)
                s = diag_set(err, CDLAB_ERR_IO,
                             "%s: corrupt checkpoint %s: %s holds a value that is not finite", file,
                             g, bad);
            for (long k = 0; k < nc && s == CDLAB_OK; k++) {
                int ci = dem ? ds->pair[k].i : L->c[k].i, cj = dem ? ds->pair[k].j : L->c[k].j;
                if (cj < 0 || cj >= n || ci >= n || ci < -nw)
                    s = diag_set(err, CDLAB_ERR_IO, "%s: corrupt checkpoint (contact %ld)", file,
                                 k);
                else if (dem && !(isfinite(ds->pair[k].ft.x) && isfinite(ds->pair[k].ft.y) &&
                                  isfinite(ds->pair[k].ft.z) && !isnan(ds->pair[k].zeta)))
                    s = diag_set(err, CDLAB_ERR_IO, "%s: corrupt checkpoint (pair %ld)", file, k);
                else if (!dem && !(isfinite(L->c[k].R.x) && isfinite(L->c[k].R.y) &&
                                   isfinite(L->c[k].R.z)))
                    s = diag_set(err, CDLAB_ERR_IO, "%s: corrupt checkpoint (contact %ld)", file,
                                 k);
            }
        }
        free(wb);
        if (s == CDLAB_OK && mode == MODE_DEM) {
            if ((s = dem_resume(W, ds, dp, err)) == CDLAB_OK) {
                long ne = (long)(sizeof ds->E / sizeof(double));
                RD("dem_F", H5IO_DOUBLE, ds->F, n3);
                RD("dem_T", H5IO_DOUBLE, ds->T, n3);
                RD("dem_path", H5IO_DOUBLE, ds->path, nn);
                RD("dem_piston_F", H5IO_DOUBLE, ds->piston_F, (long)nw);
                RD("dem_energy", H5IO_DOUBLE, &ds->E, ne);
                RD("dem_wall_path", H5IO_DOUBLE, &ds->wall_path, 1);
            }
            ds->rebuilds = rb;
        }
#undef RD
    }
    if (s == CDLAB_OK) {
        W->step = (long)step;
        W->t = (double)step * W->dt;
    }
done:
    free(fmt);
    free(fmode);
    h5in_close(h);
    return s;
}

/* Right after the sweeps of a step: the problem, its residual, the file. */
static status export_fclib(world *W, const cd_params *p, const cd_stats *st, const char *cfg,
                           const char *path, const run_hooks *hk, diag *err)
{
    contact_problem cp;
    status s = contact_problem_build(W, &cp, err);
    if (s != CDLAB_OK)
        return s;
    double res_abs;
    double res =
        natural_map_residual(cp.nc, cp.d, cp.colptr, cp.row, cp.val, cp.q, cp.mu, cp.r, &res_abs);
    long step = W->step + 1; /* the step being solved */
    double t = (double)step * W->dt;
    char title[700], desc[1024];
    snprintf(title, sizeof title, "cdlab %s, step %ld", cfg, step);
    snprintf(desc, sizeof desc,
             "Contact dynamics step %ld (t = %.17g, dt = %.17g) of %s: %d contacts, dimension %d; "
             "cdlab solution after %d sweeps (%s sweep, %s criterion, epsilon %g, converged %d)",
             step, t, W->dt, cfg, cp.nc, W->P.dimension, st->sweeps, cd_sweep_names[p->sweep],
             cd_criterion_names[p->crit], p->epsilon, st->converged);
    fclib_meta meta = {.title = title,
                       .description = desc,
                       .step = step,
                       .t = t,
                       .dt = W->dt,
                       .sweeps = st->sweeps,
                       .converged = st->converged,
                       .solver_residual = st->residual,
                       .criterion = cd_criterion_names[p->crit],
                       .sweep = cd_sweep_names[p->sweep],
                       .epsilon = p->epsilon,
                       .natural_map = res};
    s = contact_problem_write_fclib(&cp, path, &meta, err);
    if (s == CDLAB_OK) {
        char line[1024];
        snprintf(line, sizeof line,
                 "fclib: step %ld written to %s: %d contacts, local dimension %d, W %d x %d with "
                 "%d entries; natural-map residual of cdlab's solution %.3g (relative), %.3g "
                 "(absolute)",
                 step, path, cp.nc, cp.d, cp.m, cp.m, cp.nnz, res, res_abs);
        say_result(hk, line);
    }
    contact_problem_free(&cp);
    return s;
}

/* The files of a run, checked before any is created: the restart file exists; no file is named
 * twice (output, its sidecar and temporary names, restart, config, FCLIB export: the same file
 * through another path or a link counts); the FCLIB export can be written. Computes the FCLIB
 * file name (OUT.h5 -> OUT-stepN.fclib.h5 unless given). */
static status check_paths(const config *c, const setup *S, const run_hooks *hk, char *fclib_path,
                          size_t n, diag *err)
{
    const char *out = S->out.file;
    char partial[OUTFILE_PATH_MAX + 16], xmf[OUTFILE_PATH_MAX];
    snprintf(partial, sizeof partial, "%s.partial", out);
    xdmf_sidecar_path(out, xmf, sizeof xmf);
    long fclib_step = hk ? hk->fclib_step : 0;
    if (hk && hk->fclib_path)
        snprintf(fclib_path, n, "%s", hk->fclib_path);
    else { /* OUT.h5 -> OUT-stepN.fclib.h5 */
        char suffix[64];
        snprintf(suffix, sizeof suffix, "-step%ld.fclib.h5", fclib_step);
        h5_sibling_path(out, suffix, fclib_path, n);
    }
    struct {
        const char *path, *what;
    } outputs[4] = {{out, "the output file"},
                    {partial, "the output's temporary file"},
                    {xmf, "the output's XDMF sidecar"},
                    {fclib_step ? fclib_path : NULL, "the FCLIB export"}};
    const char *inputs[2] = {c->file, hk ? hk->restart : NULL};
    const char *input_what[2] = {"the config file", "the restart file"};
    struct stat st;
    if (inputs[1] && stat(inputs[1], &st) != 0)
        return diag_set(err, CDLAB_ERR_IO, "%s: cannot open restart file: %s", inputs[1],
                        strerror(errno));
    for (int a = 0; a < 4; a++) {
        if (!outputs[a].path)
            continue;
        for (int b = 0; b < 2; b++)
            if (inputs[b] && outfile_same(outputs[a].path, inputs[b]))
                return diag_set(err, CDLAB_ERR_ARG,
                                "%s %s is %s: it would be overwritten; give another name with %s",
                                outputs[a].what, outputs[a].path, input_what[b],
                                a == 3 ? "--fclib-out" : "-o");
        for (int b = a + 1; b < 4; b++)
            if (outputs[b].path && outfile_same(outputs[a].path, outputs[b].path))
                return diag_set(err, CDLAB_ERR_ARG, "%s %s is also %s: give another name",
                                outputs[b].what, outputs[b].path, outputs[a].what);
    }
    if (fclib_step) {
        char dir[OUTFILE_PATH_MAX];
        snprintf(dir, sizeof dir, "%s", fclib_path);
        char *slash = strrchr(dir, '/');
        if (slash)
            *(slash == dir ? slash + 1 : slash) = '\0';
        else
            snprintf(dir, sizeof dir, ".");
        if (access(dir, W_OK | X_OK) != 0)
            return diag_set(err, CDLAB_ERR_IO, "--fclib-out %s: cannot write into %s: %s",
                            fclib_path, dir, strerror(errno));
        if (stat(fclib_path, &st) == 0 && !(hk && hk->overwrite))
            return diag_set(err, CDLAB_ERR_ARG,
                            "the FCLIB export %s exists: give --overwrite to replace it or another "
                            "name with --fclib-out",
                            fclib_path);
    }
    return CDLAB_OK;
}

/* Rates measured on the project's machine (bench/results/2026-11-21-81957ac636aa.md, one
 * thread): the CD random sweep's contact updates per second (2D 1e4 disks; 3D 1e5 spheres gave
 * 1.7e7) and the DEM chute's particle-steps per second. Measured against them: the 1500 steps of
 * the 50-disk chain take 0.6 s, estimated 0.12 s (per-step overheads dominate small systems). */
#define EST_CD_UPDATES_PER_S 2.5e7
#define EST_DEM_PARTICLE_STEPS_PER_S 3.0e6

static void estimates(const setup *S, const run_hooks *hk)
{
    const world *W = &S->W;
    double n = W->P.n, steps = (double)S->info.steps;
    double mem = n * bytes_per_particle(S->mode, W->P.dimension);
    char tbuf[96];
    if (S->mode == MODE_DEM) {
        double sec = steps * n / EST_DEM_PARTICLE_STEPS_PER_S;
        snprintf(tbuf, sizeof tbuf, "about %.2g s", sec);
    } else {
        /* contacts per particle of a dense packing: ~1 (chain), 2 (disks), 3 (spheres) */
        double contacts = n * (W->P.dimension == 3 ? 3.0 : W->P.dimension == 2 ? 2.0 : 1.0);
        double per_sweep = steps * contacts / EST_CD_UPDATES_PER_S;
        if (S->prm.crit == CRIT_FIXED)
            snprintf(tbuf, sizeof tbuf, "about %.2g s", per_sweep * S->prm.iterations);
        else
            snprintf(tbuf, sizeof tbuf, "about %.2g s per sweep per step (criterion %s: at most %d)",
                     per_sweep, cd_criterion_names[S->prm.crit], S->prm.iterations);
    }
    say(hk, "estimates: memory about %.3g MB, time %s on one thread (rough: this project's "
            "benchmark rates for large systems; small ones spend relatively more on overheads)",
        mem / 1e6, tbuf);
}

/* What a run is about to do, for the user (`cdlab run` and `cdlab check` print it): the
 * system, the solver or DEM law with the figures a user checks before a long run (spurious
 * elasticity, critical time step), the output, and estimates of memory and time. */
static void announce(const setup *S, const run_hooks *hk)
{
    const world *W = &S->W;
    if (S->notice[0])
        say(hk, "%s", S->notice);
    say(hk, "cdlab %s (%s): %s mode, %d particles, dimension %d, %d walls, %ld steps of dt = %g",
        cdlab_version, cdlab_git_commit, mode_names[S->mode], W->P.n, W->P.dimension, W->n_walls,
        S->info.steps, W->dt);
    say(hk, "threads: %d of %d cores (%s)", S->threads, cdlab_cores(), S->threads_why);
    if (S->mode == MODE_CD) {
        cd_elasticity e =
            cd_elasticity_of(S->prm.sweep, S->prm.iterations, W->dt, S->info.d_mean, S->info.m_mean);
        say(hk,
            "solver: sweep %s, criterion %s, iterations %d, epsilon %g, delta %g, warm start %s",
            cd_sweep_names[S->prm.sweep], cd_criterion_names[S->prm.crit], S->prm.iterations,
            S->prm.epsilon, S->prm.delta, S->prm.warm_start ? "on" : "off");
        if (S->prm.crit == CRIT_FIXED && isfinite(e.q)) {
            say(hk,
                "spurious elasticity (Unger & Kertesz eqs. 54-68, N_I = %d, q = %.4f): c = %.4g, "
                "D = %.4g, l_diff = %.4g, L = %.4g, L/l_diff = %.3g, kappa_eff = %.4g, "
                "gamma_eff = %.4g",
                S->prm.iterations, e.q, e.c, e.D, e.l_diff, S->info.length, S->info.length / e.l_diff,
                e.kappa, e.gamma);
            if (e.l_diff < S->info.length)
                say(hk,
                    "warning: l_diff = %.4g < L = %.4g: the packing is in the spuriously soft "
                    "regime (N_I = %d too small for rigid behaviour, eq. 48)",
                    e.l_diff, S->info.length, S->prm.iterations);
        }
    } else {
        const dem_params *p = &S->dem.p;
        say(hk,
            "DEM: k_n = %.6g, k_t = %.6g, tangential law %s (projection %s, twirl %s), "
            "dashpots %s n = %g, t = %g%s",
            p->law.k_n, p->law.k_t, p->law.tangential == DEM_KUHN ? "kuhn" : "conventional",
            p->law.projection ? "on" : "off", p->law.twirl ? "on" : "off",
            p->damp_rate       ? "rate (c = m_eff gamma)"
            : p->damp_absolute ? "absolute"
                               : "fraction of critical",
            p->damp_n, p->damp_t, S->dem.from_cd ? " (from the CD equivalence, eqs. 67-68)" : "");
        if (S->dem.drive == DRIVE_NONE)
            say(hk, "DEM: critical time step %.6g, dt = %g (%.3g of it)%s", S->dem.dt_crit, W->dt,
                W->dt / S->dem.dt_crit,
                W->dt > S->dem.dt_crit ? "  WARNING: above it (dem.allow_unstable_dt)" : "");
        else if (S->dem.drive == DRIVE_ROTATION)
            say(hk,
                "DEM: kinematic drive, rigid rotation by (%g, %g, %g) per step about "
                "(%g, %g, %g); no dynamics",
                S->dem.rotation.x, S->dem.rotation.y, S->dem.rotation.z, S->dem.centre.x,
                S->dem.centre.y, S->dem.centre.z);
        else
            say(hk,
                "DEM: kinematic drive, affine displacement gradient per step about "
                "(%g, %g, %g); no dynamics",
                S->dem.centre.x, S->dem.centre.y, S->dem.centre.z);
    }
    char snaps[64], probes[32] = "";
    if (S->out.every > 0)
        snprintf(snaps, sizeof snaps, "snapshots every %ld steps", S->out.every);
    else
        snprintf(snaps, sizeof snaps, "snapshots of the first and last step only");
    if (S->out.n_probes > 0)
        snprintf(probes, sizeof probes, ", %d probe%s", S->out.n_probes,
                 S->out.n_probes > 1 ? "s" : "");
    say(hk, "output: %s (%s%s)", S->out.file, snaps, probes);
    estimates(S, hk);
}

status cd_run(config *c, const char *out_path, const run_hooks *hk, run_summary *sum, diag *err)
{
    memset(sum, 0, sizeof *sum);
    setup S;
    status s = read_all(c, &S, err);
    if (s != CDLAB_OK) {
        setup_free(&S);
        return s;
    }
    if (out_path) {
        snprintf(S.out.file, sizeof S.out.file, "%s", out_path);
        config_record(c, "output", "file", "%s", out_path);
    }
    world *W = &S.W;
    int threads_before = cdlab_threads(); /* restored at the end: the library leaves no trace */
    cdlab_set_threads(S.threads);
    announce(&S, hk);

    writer w;
    memset(&w, 0, sizeof w);
    w.snapshot_step = w.checkpoint_step = -1;
    outfile of = {.fd = -1};
    cd_solver solver;
    cd_solver_init(&solver, S.info.seed);
    dem_solver dsolver;
    dem_solver_init(&dsolver);
    cd_stats st = {.converged = 1};
    dem_stats dst;
    memset(&dst, 0, sizeof dst);
    step_record rec = {.converged = 1};
    double sigma[3][3];
    vec3 *du = NULL, *dth = NULL;
    state_def sdef = state_of(W, &S.dem, S.mode);
    long fclib_step = hk ? hk->fclib_step : 0;
    char fclib_path[600];
    /* Every check that can refuse the command comes before any file is created or truncated:
     * the output, its sidecar and every other file stay as they were. */
    s = check_paths(c, &S, hk, fclib_path, sizeof fclib_path, err);
    if (s == CDLAB_OK && S.mode == MODE_DEM && S.dem.drive != DRIVE_NONE) {
        du = malloc((size_t)(W->P.n > 0 ? W->P.n : 1) * sizeof *du);
        dth = malloc((size_t)(W->P.n > 0 ? W->P.n : 1) * sizeof *dth);
        if (!du || !dth)
            s = diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    }
    if (s == CDLAB_OK && hk && hk->restart) {
        s = read_checkpoint(hk->restart, S.mode, W, &solver, &dsolver, &S.dem.p, &sdef, err);
        if (s == CDLAB_OK && W->step >= S.info.steps)
            s = diag_set(err, CDLAB_ERR_CONFIG,
                         "%s: its checkpoint is at step %ld, system.steps = %ld: nothing to do "
                         "(raise system.steps, e.g. --set system.steps=N)",
                         hk->restart, W->step, S.info.steps);
    }
    long first = W->step;
    if (s == CDLAB_OK && fclib_step != 0) {
        if (S.mode != MODE_CD)
            s = diag_set(err, CDLAB_ERR_ARG,
                         "--export-fclib: only contact dynamics runs have a contact problem to "
                         "export (this is a DEM run)");
        else if (fclib_step <= first || fclib_step > S.info.steps)
            s = diag_set(err, CDLAB_ERR_ARG,
                         "--export-fclib %ld: the run does steps %ld to %ld; give a step in "
                         "that range",
                         fclib_step, first + 1, S.info.steps);
    }
    if (s == CDLAB_OK)
        s = outfile_claim(&of, S.out.file, hk && hk->overwrite, err);
    if (s == CDLAB_OK) {
        if ((s = h5out_create(&w.h, of.partial, err)) == CDLAB_OK &&
            (s = write_header(&w, c, &S, hk, err)) == CDLAB_OK)
            s = xdmf_create(&w.xmf, of.xmf_partial, of.final, err);
        if (s != CDLAB_OK) { /* nothing of the run written: no file left behind */
            diag tmp;
            h5out_close(w.h, &tmp);
            xdmf_close(w.xmf, &tmp);
            outfile_abandon(&of);
        }
    }
    if (s != CDLAB_OK)
        goto release; /* refused: no file was left behind */
    if (hk && hk->armed) /* from here on a signal ends the run cleanly, with its file */
        *hk->armed = 1;
    if (hk && hk->restart) {
        say(hk, "restart: continuing from step %ld of %s", W->step, hk->restart);
        if ((s = h5out_group(w.h, "/restart", err)) == CDLAB_OK &&
            (s = h5out_attr_string(w.h, "/restart", "from_file", hk->restart, err)) == CDLAB_OK)
            s = h5out_attr_int(w.h, "/restart", "from_step", W->step, err);
        if (s == CDLAB_OK && S.mode == MODE_DEM) {
            rec.energy = &dsolver.E;
            dem_stress(W, &dsolver, stress_volume(W, S.dem.stress_volume), sigma);
            rec.stress = &sigma[0][0];
        }
    } else if (S.mode == MODE_DEM) {
        s = dem_start(W, &dsolver, &S.dem.p, &dst, err);
        rec.energy = &dsolver.E;
        dem_stress(W, &dsolver, stress_volume(W, S.dem.stress_volume), sigma);
        rec.stress = &sigma[0][0];
        rec.n_contacts = dst.n_contacts;
        rec.n_active = dst.n_active;
        rec.n_sliding = dst.n_sliding;
        rec.mean_overlap = dst.mean_overlap;
        rec.max_overlap = dst.max_overlap;
    }
    /* the initial state is row 0 of the series and the first snapshot */
    if (s == CDLAB_OK)
        s = write_row(&w, W, &S.out, &rec, err);
    if (s == CDLAB_OK)
        s = write_snapshot(&w, W, S.mode == MODE_DEM ? &dsolver : NULL, err);
    /* a run of no steps (or a restart at its last step) still leaves a checkpoint */
    if (s == CDLAB_OK && first >= S.info.steps)
        s = write_checkpoint(&w, W, &solver, &dsolver, &sdef, err);
    double t0 = now_seconds(), sweeps_total = 0.0;
    sum->started = 1; /* the output exists and says what happened */
    sum->dem = S.mode == MODE_DEM;
    snprintf(sum->out_file, sizeof sum->out_file, "%s", S.out.file);
    thread_tuner tuner = {.cores = cdlab_cores(), .chosen = S.threads, .trial_at = first + TUNE_SKIP};
    for (long k = first; k < S.info.steps && s == CDLAB_OK; k++) {
        double ts = now_seconds();
        if (S.mode == MODE_CD) {
            s = cd_step_solve(W, &solver, &S.prm, &st, err);
            if (s == CDLAB_OK && fclib_step == W->step + 1)
                s = export_fclib(W, &S.prm, &st, c->file, fclib_path, hk, err);
            if (s == CDLAB_OK)
                s = cd_step_finish(W, &S.prm, &st, err);
            sum->solve_seconds += st.solve_seconds;
            sum->contact_updates += (double)st.n_contacts * st.sweeps;
            rec = (step_record){.sweeps = st.sweeps,
                                .converged = st.converged,
                                .n_contacts = st.n_contacts,
                                .n_active = st.n_active,
                                .n_sliding = st.n_sliding,
                                .residual = st.residual,
                                .mean_overlap = st.mean_overlap,
                                .max_overlap = st.max_overlap};
        } else {
            if (S.dem.drive == DRIVE_NONE) {
                s = dem_step(W, &dsolver, &S.dem.p, &dst, err);
            } else {
                if (S.dem.drive == DRIVE_ROTATION)
                    dem_rigid_rotation(W, S.dem.centre, S.dem.rotation, du, dth);
                else
                    dem_affine(W, S.dem.centre, S.dem.G, du, dth);
                s = dem_kinematic_step(W, &dsolver, &S.dem.p, du, dth, &dst, err);
            }
            double scale = fabs(dsolver.E.initial) + fabs(dsolver.E.work_external) +
                           fabs(dsolver.E.work_piston);
            rec = (step_record){.sweeps = 0,
                                .converged = 1,
                                .n_contacts = dst.n_contacts,
                                .n_active = dst.n_active,
                                .n_sliding = dst.n_sliding,
                                .residual =
                                    scale > 0.0 ? dem_energy_residual(&dsolver.E) / scale : 0.0,
                                .mean_overlap = dst.mean_overlap,
                                .max_overlap = dst.max_overlap,
                                .energy = &dsolver.E,
                                .stress = &sigma[0][0]};
        }
        double spent = now_seconds() - ts;
        if (S.tune) /* a trial: one thread, then every core; results do not depend on it */
            tune_threads(&tuner, k, spent, hk);
        sum->step_seconds += spent;
        if (k - first >= S.out.timing_warmup) {
            sum->timed_step_seconds += spent;
            sum->timed_steps++;
        }
        sweeps_total += rec.sweeps;
        if (!rec.converged)
            sum->unconverged_steps++;
        sum->steps_done = W->step;
        /* a failed step is still recorded, so the file shows the state that failed */
        if (s != CDLAB_OK || W->step % S.out.series_every == 0 || W->step == S.info.steps) {
            if (S.mode == MODE_DEM) /* a pass over the contacts: only for the rows written */
                dem_stress(W, &dsolver, stress_volume(W, S.dem.stress_volume), sigma);
            status sw = write_row(&w, W, &S.out, &rec, s == CDLAB_OK ? err : &(diag){{0}});
            if (s == CDLAB_OK)
                s = sw;
        }
        if (s == CDLAB_OK &&
            ((S.out.every > 0 && W->step % S.out.every == 0) || W->step == S.info.steps))
            s = write_snapshot(&w, W, S.mode == MODE_DEM ? &dsolver : NULL, err);
        if (s == CDLAB_OK &&
            ((S.out.checkpoint_every > 0 && W->step % S.out.checkpoint_every == 0) ||
             W->step == S.info.steps))
            s = write_checkpoint(&w, W, &solver, &dsolver, &sdef, err);
        /* a signal during the last step: the run is complete, its checkpoint written */
        if (s == CDLAB_OK && hk && hk->stop && *hk->stop && W->step < S.info.steps) {
            int sig = *hk->stop;
            /* the step's snapshot and checkpoint, unless the cadence has just written them */
            if (w.snapshot_step != W->step)
                s = write_snapshot(&w, W, S.mode == MODE_DEM ? &dsolver : NULL, err);
            if (s == CDLAB_OK && w.checkpoint_step != W->step)
                s = write_checkpoint(&w, W, &solver, &dsolver, &sdef, err);
            if (s == CDLAB_OK)
                s = diag_set(err, CDLAB_ERR_INTERRUPTED,
                             "interrupted by signal %d after step %ld of %ld; %s holds every frame "
                             "so far",
                             sig, W->step, S.info.steps, S.out.file);
        }
        if (hk && hk->progress) {
            run_progress p = {.step = W->step,
                              .steps = S.info.steps,
                              .t = W->t,
                              .sweeps = S.mode == MODE_DEM ? -1 : rec.sweeps,
                              .mean_overlap = rec.mean_overlap,
                              .elapsed = now_seconds() - t0};
            hk->progress(hk->user, &p);
        }
    }
    sum->wall_seconds = now_seconds() - t0;
    sum->mean_sweeps = sum->steps_done > 0 ? sweeps_total / (double)sum->steps_done : 0.0;
    diag tmp;
    diag *e2 = s == CDLAB_OK ? err : &tmp; /* keep the first error's message */
    status s2 = h5out_group(w.h, "/summary", e2);
    if (s2 == CDLAB_OK) {
        h5out_attr_string(w.h, "/summary", "status", s == CDLAB_OK ? "completed" : err->msg, e2);
        h5out_attr_int(w.h, "/summary", "steps_done", sum->steps_done, e2);
        h5out_attr_double(w.h, "/summary", "wall_seconds", sum->wall_seconds, e2);
        h5out_attr_double(w.h, "/summary", "step_seconds", sum->step_seconds, e2);
        h5out_attr_double(w.h, "/summary", "solve_seconds", sum->solve_seconds, e2);
        h5out_attr_double(w.h, "/summary", "timed_step_seconds", sum->timed_step_seconds, e2);
        h5out_attr_int(w.h, "/summary", "timed_steps", sum->timed_steps, e2);
        h5out_attr_int(w.h, "/summary", "neighbour_rebuilds", dsolver.rebuilds, e2);
        struct rusage ru;
        if (getrusage(RUSAGE_SELF, &ru) == 0)
            h5out_attr_int(w.h, "/summary", "peak_rss_kib", ru.ru_maxrss, e2);
        h5out_attr_double(w.h, "/summary", "contact_updates", sum->contact_updates, e2);
        h5out_attr_double(w.h, "/summary", "mean_sweeps", sum->mean_sweeps, e2);
        h5out_attr_int(w.h, "/summary", "unconverged_steps", sum->unconverged_steps, e2);
        /* the thread count at the end (an automatic run may have changed it) */
        h5out_attr_int(w.h, "/summary", "threads", cdlab_threads(), e2);
    }
    s2 = h5out_close(w.h, e2);
    if (s == CDLAB_OK)
        s = s2;
    s2 = xdmf_close(w.xmf, s == CDLAB_OK ? err : &tmp);
    if (s == CDLAB_OK)
        s = s2;
    /* what the file holds for sure, for the caller's message */
    sum->snapshot_step = w.snapshot_step;
    sum->checkpoint_step = w.checkpoint_step;
    int kept = 0;
    s2 = outfile_commit(&of, s == CDLAB_OK, &kept, s == CDLAB_OK ? err : &tmp);
    if (s == CDLAB_OK)
        s = s2;
    sum->kept_partial = kept;
    snprintf(sum->out_file, sizeof sum->out_file, "%s", kept || s2 != CDLAB_OK ? of.partial : of.final);
release:
    cdlab_set_threads(threads_before);
    cd_solver_free(&solver);
    dem_solver_free(&dsolver);
    free(du);
    free(dth);
    free(w.piston_idx);
    free(w.row);
    setup_free(&S);
    return s;
}

/* The run's set-up: the config read into a world, an engine (the registry's table for
 * system.mode) and the output's parameters; the banner; the files checked. */
#include "run/run_setup.h"

#include "decomp.h"

#include "comm.h"

#include "build_info.h"
#include "config_schema.h" /* generated from docs/config.md into the build folder */
#include "outfile.h"
#include "parallel.h"
#include "run/run_checkpoint.h"
#include "run/run_output.h"
#include "run/run_threads.h"
#include "xdmf.h"

#include <errno.h>
#include <limits.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* sections that belong to no engine (the engines' come from their tables) */
static const char *const common_sections[] = {
    "particles", "contact", "load", "output", "parallel", "plane.", "piston.", "cylinder.", NULL};

static status read_output(config *c, const world *W, const scene_info *info, output_params *o,
                          diag *err)
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
    /* the probes by input index, as the loads (particles.order = spatial renumbers them) */
    if ((s = scene_particle_list(c, "output", "probes", W->P.n, &o->probes, &o->n_probes, err)))
        return s;
    return scene_ids_of_inputs(info, o->probes, o->n_probes, err);
}

/* The memory a run may use: this machine's, or less where hk->memory_limit (limit) or the
 * process's address-space limit (ulimit -v) says so, in words for a message ("this machine's
 * 24 GB of memory"). 0: unknown. */
static double memory_available(double limit, char *what, size_t n)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return 0.0;
    double have = (double)pages * (double)page;
    const char *form = "this machine's %s of memory";
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (double)rl.rlim_cur < have) {
        have = (double)rl.rlim_cur;
        form = "the process's address-space limit of %s (ulimit -v)";
    }
    if (limit > 0.0 && limit < have) {
        have = limit;
        form = "the limit of %s of memory";
    }
    char amount[24];
    snprintf(what, n, form, format_bytes(have, amount, sizeof amount));
    return have;
}

/* A run whose estimate exceeds the memory: refused (system.memory_check = true, the default, or
 * a limit set by the caller: the fuzz targets' ceiling), else started with a warning for the
 * banner (S->memory_warning). why: the refusal's text; the key it names. */
static status memory_over(config *c, run_setup *S, double limit, int check, const char *sec,
                          const char *key, const char *why, diag *err)
{
    if (check || limit > 0.0)
        return config_error(c, sec, key, err, "%s%s", why,
                            limit > 0.0 ? "" : "; system.memory_check = false starts it anyway");
    snprintf(S->memory_warning, sizeof S->memory_warning,
             "warning: %s (system.memory_check = false: started anyway; the estimate is meant "
             "to be a little high; a run that outgrows the memory is killed by the system and "
             "leaves what a killed run leaves: its .partial file and its last checkpoint's copy)",
             why);
    return CDLAB_OK;
}

/* A run that cannot fit in the machine's memory is refused before it allocates (it would
 * otherwise allocate for minutes until the kernel kills it): from the particle count before the
 * scene is built (the pairs of a dense packing assumed), then from the pairs the start lists
 * (check_pairs_memory). */
static status check_memory(config *c, run_setup *S, double limit, int check, long *max_pairs,
                           diag *err)
{
    *max_pairs = LONG_MAX;
    long count = 0, dim = 3;
    diag ignore;
    /* both are checked properly by scene_build (which names a count out of range: here it is
     * not estimated, else 3e9 particles were refused for the memory, with the hint to start
     * them anyway); here only their product with the estimate */
    int known = config_int(c, "particles", "count", 0, 0, 1, SCENE_MAX_PARTICLES, &count,
                           &ignore) == CDLAB_OK;
    if (config_int(c, "system", "dimension", 0, 3, 1, 3, &dim, &ignore) != CDLAB_OK)
        known = 0, dim = 3;
    engine_memory m = S->mem = S->E.ops->setup.memory(c, (int)dim);
    if (!known)
        return CDLAB_OK;
    double per = m.per_particle, need = m.base + (double)count * per;
    char what[96], amount[24];
    double have = memory_available(limit, what, sizeof what);
    if (have > 0.0) /* the start's pairs need not be counted beyond what the memory holds */
        *max_pairs = (long)fmin(have / m.per_pair + m.pairs_per_particle * (double)count, 1e18);
    if (have > 0.0 && need > have) {
        char why[320];
        snprintf(why, sizeof why,
                 "%ld particles need about %s (an estimate: %.0f bytes per particle in this mode "
                 "and dimension with %g pairs each, as in a dense packing), more than %s",
                 count, format_bytes(need, amount, sizeof amount), per, m.pairs_per_particle, what);
        return memory_over(c, S, limit, check, "particles", "count", why, err);
    }
    return CDLAB_OK;
}

static status check_pairs_memory(config *c, run_setup *S, double limit, int check, diag *err)
{
    char what[96], amount[24], why[400];
    double need = run_memory_estimate(S, 1), have = memory_available(limit, what, sizeof what);
    if (!(have > 0.0 && need > have) || S->memory_warning[0]) /* the count's warning says it */
        return CDLAB_OK;
    /* the particles alone passed check_memory (particles.count is their number): what
     * exceeds the memory is the pairs beyond a dense packing's */
    long n = S->W.P.n, pairs = S->info.start_pairs;
    snprintf(why, sizeof why,
             "%s%ld pairs (%.3g per particle) lie within detect_gap = %g at the start; with the "
             "%ld particles they need about %s (an estimate: %.0f bytes per pair in this mode), "
             "more than %s: the gap is usually a fraction of the diameter",
             S->info.start_pairs_partial ? "more than " : "", pairs,
             n > 0 ? (double)pairs / n : 0.0, S->W.detect.gap, n,
             format_bytes(need, amount, sizeof amount), S->mem.per_pair, what);
    return memory_over(c, S, limit, check, "contact", "detect_gap", why, err);
}

/* The other engines' sections are not used, so that one config serves one engine's run and its
 * twin by another (engine/equiv.h; --set system.mode=...): an engine with read_other checks their
 * values and describes its run for the equivalence (twin); the others' key names are checked. The
 * sections present are named in S->notice; note is what the run's engine adds to it. */
static status read_other_engines(config *c, run_setup *S, equiv_twin *twin, char *present, size_t n,
                                 diag *err)
{
    status s;
    for (int k = 0; engine_registry[k]; k++) {
        const engine_ops *o = engine_registry[k];
        if (o == S->E.ops)
            continue;
        int has_any = 0;
        for (int m = 0; o->sections[m]; m++) {
            int count = 0;
            if (o->setup.read_other)
                count = config_section_line(c, o->sections[m]) >= 0;
            else if ((s = config_skip_section(c, o->sections[m], NULL, &count, err)))
                return s;
            if (count > 0)
                snprintf(present + strlen(present), n - strlen(present), "%s[%s]",
                         present[0] ? " and " : "", o->sections[m]);
            has_any |= count > 0;
        }
        if (has_any && o->setup.read_other && (s = o->setup.read_other(c, twin, err)))
            return s;
    }
    return CDLAB_OK;
}

static status check_keys(const config *c, diag *err)
{
    /* the parser and docs/config.md are one list: a key read but not documented is a defect */
    if (c->undocumented[0])
        return diag_set(err, CDLAB_ERR_CONFIG,
                        "internal: cdlab reads %s, which docs/config.md does not document (its "
                        "tables are the key list: tools/config_schema.py)",
                        c->undocumented);
    const char *known[64];
    int n = 0;
    known[n++] = "system";
    for (int k = 0; engine_registry[k]; k++)
        for (int m = 0; engine_registry[k]->sections[m] && n < 48; m++)
            known[n++] = engine_registry[k]->sections[m];
    for (int m = 0; common_sections[m]; m++)
        known[n++] = common_sections[m];
    known[n] = NULL;
    return config_check_unused(c, known, err);
}

/* n steps of the described run in steps of dt/ratio (a twin): *n scaled to the nearest count, and
 * recorded; refused where it overflows. */
static status scale_steps(config *c, const char *sec, const char *key, double ratio, long *n,
                          diag *err)
{
    double scaled = nearbyint((double)*n * ratio);
    if (!(scaled >= 0.0 && scaled < 0.5 * (double)LONG_MAX))
        return config_error(c, sec, key, err,
                            "%ld steps of the run this config describes are %g steps of its "
                            "twin: too many (give %s.%s with the twin's run)",
                            *n, scaled, sec, key);
    if (*n > 0 && scaled < 1.0)
        scaled = 1.0;
    *n = (long)scaled;
    config_record(c, sec, key, "%ld", *n);
    return CDLAB_OK;
}

/* The twin of a config (engine/equiv.h) runs the physical time of the run the config describes:
 * system.steps and the output cadences scaled by that run's time step over the twin's (ratio,
 * from the engine: equiv_twin),
 * each unless it is given with the twin's run (--set). Said in S->scaled for the banner. */
static status twin_same_time(config *c, run_setup *S, double ratio, diag *err)
{
    if (!(ratio > 0.0) || ratio == 1.0)
        return CDLAB_OK;
    struct {
        const char *sec, *key;
        long *n;
    } keys[] = {{"system", "steps", &S->info.steps},
                {"output", "every", &S->out.every},
                {"output", "checkpoint_every", &S->out.checkpoint_every},
                {"output", "series_every", &S->out.series_every}};
    char *at = S->scaled;
    size_t left = sizeof S->scaled;
    status s;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        long before = *keys[k].n;
        if (config_given_by_set(c, keys[k].sec, keys[k].key) || before == 0)
            continue;
        if ((s = scale_steps(c, keys[k].sec, keys[k].key, ratio, keys[k].n, err)))
            return s;
        int w = snprintf(at, left, "%s%s.%s %ld -> %ld", at == S->scaled ? "" : ", ", keys[k].sec,
                         keys[k].key, before, *keys[k].n);
        if (w > 0 && (size_t)w < left)
            at += w, left -= (size_t)w;
    }
    return CDLAB_OK;
}

status run_setup_read(config *c, run_setup *S, const run_hooks *hk, diag *err)
{
    memset(S, 0, sizeof *S);
    config_use_schema(c, config_schema, CONFIG_SCHEMA_N);
    status s;
    int mode;
    const char *names[ENGINE_MAX + 1];
    engine_list_names(names, ENGINE_MAX + 1);
    if ((s = config_enum(c, "system", "mode", 0, 0, names, &mode, err)))
        return s;
    S->E.ops = engine_registry[mode];
#ifdef __GLIBC__
    if (S->E.ops->mmap_threshold > 0)
        mallopt(M_MMAP_THRESHOLD, (int)S->E.ops->mmap_threshold);
#endif
    if (comm_size() > 1 && !S->E.ops->report.gather)
        return config_error(c, "system", "mode", err,
                            "%s runs in one process only: it is not distributed yet (this is a "
                            "job of %d MPI ranks; docs/parallel.md)",
                            S->E.ops->title, comm_size());
    double limit = hk ? hk->memory_limit : 0.0;
    long max_pairs;
    int check;
    if ((s = config_bool(c, "system", "memory_check", 0, 1, &check, err)) ||
        (s = check_memory(c, S, limit, check, &max_pairs, err)) ||
        (s = scene_build_counted(c, &S->W, &S->info, max_pairs, err)) ||
        /* [parallel]: the distribution's settings, the run's (not the scene's) */
        (s = parallel_read(c, &S->info.par, err)) ||
        (s = check_pairs_memory(c, S, limit, check, err)))
        return s;
    equiv_twin twin = {0};
    char present[128] = "", note[320] = "";
    if ((s = read_other_engines(c, S, &twin, present, sizeof present, err)) ||
        (s = S->E.ops->setup.read(&S->E, c, &S->W, &S->info, &twin, note, sizeof note, err)))
        return s;
    if (present[0])
        snprintf(S->notice, sizeof S->notice, "notice: %s not used with system.mode = %s%s",
                 present, S->E.ops->name, note[0] ? note : " (ignored)");
    long threads;
    if ((s = read_output(c, &S->W, &S->info, &S->out, err)) ||
        (s = twin_same_time(c, S, twin.time_ratio, err)) ||
        (s = config_int(c, "system", "threads", 0, 0, 0, 4096, &threads, err)) ||
        (s = check_keys(c, err)))
        return s;
    run_choose_threads(S, threads);
    return run_series_row_bytes(S, &S->series_row_bytes, err);
}

void run_setup_free(run_setup *S)
{
    if (S->E.ops && S->E.ops->setup.free)
        S->E.ops->setup.free(&S->E);
    world_free(&S->W);
    free(S->out.probes);
    scene_info_free(&S->info);
}

engine_notes run_notes(const run_hooks *hk)
{
    return hk ? (engine_notes){.message = hk->message, .result = hk->result, .user = hk->user}
              : (engine_notes){0};
}

double run_memory_estimate(const run_setup *S, int dense)
{
    const engine_memory *m = &S->mem;
    double n = S->W.P.n, pairs = (double)S->info.start_pairs;
    if (dense && pairs < m->pairs_per_particle * n)
        pairs = m->pairs_per_particle * n;
    /* per_particle holds pairs_per_particle pairs: without them, then the pairs counted */
    return m->base + n * (m->per_particle - m->pairs_per_particle * m->per_pair) +
           pairs * m->per_pair;
}

/* Memory from the engine's figures (with the start's pairs, and with a dense packing's where
 * the start has fewer), time from its estimate (benchmark rates). */
static void estimates(const run_setup *S, const engine_notes *notes)
{
    const world *W = &S->W;
    double mem = run_memory_estimate(S, 0), dense = run_memory_estimate(S, 1);
    char tbuf[128], dtbuf[128], mbuf[24], dbuf[24], more[96] = "", tmore[192] = "";
    format_bytes(mem, mbuf, sizeof mbuf);
    if (strcmp(format_bytes(dense, dbuf, sizeof dbuf), mbuf) != 0)
        snprintf(more, sizeof more, " (%s should the packing reach %g pairs per particle)", dbuf,
                 S->mem.pairs_per_particle);
    long todo = S->info.steps > W->step ? S->info.steps - W->step : 0; /* a restart's: the rest */
    S->E.ops->setup.estimate(&S->E, W, todo, S->info.start_pairs, tbuf, sizeof tbuf);
    /* a loose start gathers pairs as it packs (a compression, a settling): each step dearer */
    long dense_pairs = (long)(S->mem.pairs_per_particle * W->P.n);
    if (dense_pairs > S->info.start_pairs) {
        S->E.ops->setup.estimate(&S->E, W, todo, dense_pairs, dtbuf, sizeof dtbuf);
        if (strcmp(dtbuf, tbuf) != 0)
            snprintf(tmore, sizeof tmore, " (%s should it reach %g pairs per particle)", dtbuf,
                     S->mem.pairs_per_particle);
    }
    engine_say(notes,
               "estimates: memory about %s%s, time %s%s on one thread (rough: this project's "
               "benchmark rates for large systems; small ones spend relatively more on overheads), "
               "with %ld pairs within contact.detect_gap at the start (%.3g per particle)",
               mbuf, more, tbuf, tmore, S->info.start_pairs,
               W->P.n > 0 ? (double)S->info.start_pairs / W->P.n : 0.0);
}

/* The outputs of a cadence every > 0 after the run's first step (W->step: 0, or a restart's
 * checkpoint step) up to its last (run.c: every every-th step, and the last). */
static long outputs_after_first(const run_setup *S, long every)
{
    long first = S->W.step, last = S->info.steps;
    return last / every - first / every + (last % every != 0);
}

/* The snapshots a run writes: the first step's, then every out.every-th and the last (0:
 * the first and the last only). */
static long snapshot_count(const run_setup *S)
{
    if (S->info.steps <= S->W.step)
        return 1;
    return 1 + (S->out.every > 0 ? outputs_after_first(S, S->out.every) : 1);
}

/* The checkpoints it keeps (every out.checkpoint_every-th step, the last; one for no steps). */
static long checkpoint_count(const run_setup *S)
{
    if (S->info.steps <= S->W.step || S->out.checkpoint_every <= 0)
        return 1;
    return outputs_after_first(S, S->out.checkpoint_every);
}

/* The series rows: the first step's, every out.series_every-th, the last. */
static long series_rows(const run_setup *S)
{
    if (S->info.steps <= S->W.step)
        return 1;
    return 1 + outputs_after_first(S, S->out.series_every);
}

/* Bytes free to this user on the file system of path's folder (-1: unknown). */
static double free_bytes_for(const char *path)
{
    char dir[OUTFILE_PATH_MAX];
    outfile_folder(path, dir, sizeof dir);
    struct statvfs v;
    return statvfs(dir, &v) == 0 ? (double)v.f_bavail * (double)v.f_frsize : -1.0;
}

output_bytes run_output_bytes(const run_setup *S)
{
    output_bytes b = {.snapshots = snapshot_count(S), .checkpoints = checkpoint_count(S)};
    long pairs = S->info.start_pairs;
    b.snapshot = run_snapshot_bytes(S, pairs);
    b.checkpoint = run_checkpoint_bytes(S, pairs);
    double first =
        S->W.step == 0 && !S->E.ops->contacts_at_start ? run_snapshot_bytes(S, 0) : b.snapshot;
    b.series = S->series_row_bytes * (double)h5out_series_stored_rows(series_rows(S));
    b.all = first + b.snapshot * (double)(b.snapshots - 1) +
            b.checkpoint * (double)(b.checkpoints + 1) + b.series;
    return b;
}

/* The output's size (run_output_bytes) beside the free space where it goes, and a warning when
 * it does not fit (the run then stops at the output that finds the disk full, its file whole
 * up to the output before). */
static void output_size(const run_setup *S, const engine_notes *notes)
{
    output_bytes b = run_output_bytes(S);
    long n = b.snapshots, nc = b.checkpoints, pairs = S->info.start_pairs;
    double snap = b.snapshot, ckpt = b.checkpoint, series = b.series, all = b.all;
    double room = free_bytes_for(S->out.file);
    char where[96] = "", t[5][24];
    if (room >= 0.0)
        snprintf(where, sizeof where, "; %s free there", format_bytes(room, t[4], sizeof t[4]));
    engine_say(notes,
               "output size: %ld snapshot%s of about %s (with the start's %ld contacts), "
               "%ld checkpoint%s of about %s (and the last one's copy), the series %s: "
               "about %s in all%s",
               n, n > 1 ? "s" : "", format_bytes(snap, t[0], sizeof t[0]), pairs, nc,
               nc > 1 ? "s" : "", format_bytes(ckpt, t[1], sizeof t[1]),
               format_bytes(series, t[2], sizeof t[2]), format_bytes(all, t[3], sizeof t[3]),
               where);
    if (room >= 0.0 && all > room) { /* printed with --quiet too */
        char line[OUTFILE_PATH_MAX + 320];
        snprintf(line, sizeof line,
                 "warning: the output needs about %s, more than the %s free where %s "
                 "goes: the run will stop at the output that finds the disk full, its file whole "
                 "up to the output before (output.every and output.checkpoint_every set how "
                 "often a snapshot and a checkpoint are written)",
                 format_bytes(all, t[3], sizeof t[3]), format_bytes(room, t[4], sizeof t[4]),
                 S->out.file);
        engine_say_result(notes, line);
    }
}

/* Where a piston's force step and the particles' load begin, as steps: a time on a step's end
 * leaves the reader unsure which side of it the step falls (walls.h, STEP_END_SLACK); one after
 * the run's last step is never applied (said with --quiet too: a restart with more steps may
 * want it, so it is no error). */
static void force_steps_said(const run_setup *S, engine_notes *notes)
{
    const world *W = &S->W;
    long last = S->info.steps;
    char line[600];
    for (int k = 0; k < W->n_walls; k++) {
        const wall *w = &W->walls[k];
        if (w->kind != WALL_PISTON || !isfinite(w->step_time))
            continue;
        long first = first_step_after(w->step_time, W->dt);
        if (first > last) {
            snprintf(line, sizeof line,
                     "warning: %s.step_time = %g is at or after the end of the run's last step "
                     "(%ld, t = %g): its force_after is never applied",
                     w->name, w->step_time, last, (double)last * W->dt);
            engine_say_result(notes, line);
        } else
            engine_say(notes,
                       "%s: force %g, then %g from step %ld (t = %g), the first step ending after "
                       "step_time = %g",
                       w->name, w->force, w->force_after, first, (double)first * W->dt,
                       w->step_time);
    }
    long first = first_step_after(W->load_start, W->dt);
    if (first <= 1)
        return;
    if (!particles_loaded(&W->P))
        return;
    if (first > last) {
        snprintf(line, sizeof line,
                 "warning: load.start = %g is at or after the end of the run's last step (%ld, "
                 "t = %g): the load is never applied",
                 W->load_start, last, (double)last * W->dt);
        engine_say_result(notes, line);
    } else
        engine_say(notes,
                   "load: from step %ld (t = %g), the first step ending after load.start = %g%s",
                   first, (double)first * W->dt, W->load_start,
                   W->load_ramp > 0.0 ? ", rising over load.ramp" : "");
}

/* What a run is about to do, for the user (`cdlab run` and `cdlab check` print it): the
 * system, the engine's solver or contact law with the figures a user checks before a long run
 * (spurious elasticity, critical time step), the output, and estimates of memory and time. */
void run_announce(const run_setup *S, const run_hooks *hk)
{
    const world *W = &S->W;
    engine_notes notes = run_notes(hk);
    if (S->notice[0])
        engine_say(&notes, "%s", S->notice);
    if (S->scaled[0])
        engine_say(&notes,
                   "notice: the twin runs the physical time of the run its config describes "
                   "(%ld steps of dt = %g): "
                   "%s (give them with --set to keep them)",
                   S->info.steps, S->W.dt, S->scaled);
    if (S->memory_warning[0]) /* printed with --quiet too */
        engine_say_result(&notes, S->memory_warning);
    char from[64] = "";
    if (W->step > 0)
        snprintf(from, sizeof from, ", continuing from step %ld", W->step);
    engine_say(&notes,
               "cdlab %s (%s): %s mode, %d particles, dimension %d, %d walls, %ld steps of dt = "
               "%g%s",
               cdlab_version, cdlab_git_commit, S->E.ops->name, W->P.n, W->P.dimension, W->n_walls,
               S->info.steps, W->dt, from);
    force_steps_said(S, &notes);
    if (S->info.source_said[0])
        engine_say(&notes, "%s", S->info.source_said);
    /* (a restart's pistons are the checkpoint's) */
    for (size_t k = 0; k < sizeof S->info.source_pistons / sizeof S->info.source_pistons[0]; k++)
        if (S->info.source_pistons[k][0] && W->step == 0)
            engine_say(&notes, "%s", S->info.source_pistons[k]);
    if (S->info.order_auto)
        engine_say(&notes,
                   "particles in spatial order (particles.order = auto: particles next to each "
                   "other in the input lie %.0f diameters apart on average): ids renumbered, "
                   "/input_index in the output gives each id's input index (particles.order = "
                   "given keeps the input's order, and slower steps)",
                   S->info.storage_spread);
    else if (S->info.input_index)
        engine_say(&notes, "particles in spatial order (particles.order): ids renumbered, "
                           "/input_index in the output gives each id's input index");
    else if (S->info.storage_spread > SCENE_ORDER_AUTO_SPREAD) /* particles.order = given */
        engine_say(&notes,
                   "hint: the particles are stored in no spatial order (particles next to each "
                   "other in the input lie %.0f diameters apart on average); particles.order = "
                   "spatial (or auto, the default) renumbers them, which makes a large run's "
                   "steps faster (docs/config.md)",
                   S->info.storage_spread);
    if (S->info.source_lost_periodic[0]) { /* said with --quiet too */
        char line[600];
        snprintf(line, sizeof line,
                 "warning: the run that wrote particles.file was periodic along %s, this one is "
                 "not: its positions were wrapped into its box, so particles that touched across "
                 "that boundary now lie a period apart",
                 S->info.source_lost_periodic);
        engine_say_result(&notes, line);
    }
    engine_say(&notes, "threads: %d of %d cores (%s)%s", S->threads, cdlab_cores(), S->threads_why,
               S->threads > cdlab_cores()
                   ? ": more threads than cores, so they take turns on the cores and every step "
                     "waits for the last of them (slower than a thread per core)"
                   : "");
    if (comm_size() > 1)
        engine_say(&notes, "ranks: %d, %d on rank 0's node of %ld cores%s", comm_size(),
                   comm_node_ranks(), comm_node_cores(),
                   comm_naps() ? ": more ranks than cores, so a rank that waits for the others "
                                 "naps instead of polling (slower than a core per rank; "
                                 "docs/parallel.md)"
                               : "");
    S->E.ops->setup.announce(&S->E, W, &S->info, &notes);
    char snaps[64], probes[32] = "";
    if (S->out.every > 0)
        snprintf(snaps, sizeof snaps, "snapshots every %ld steps", S->out.every);
    else
        snprintf(snaps, sizeof snaps, "snapshots of the first and last step only");
    if (S->out.n_probes > 0)
        snprintf(probes, sizeof probes, ", %d probe%s", S->out.n_probes,
                 S->out.n_probes > 1 ? "s" : "");
    engine_say(&notes, "output: %s (%s%s)", S->out.file, snaps, probes);
    estimates(S, &notes);
    output_size(S, &notes);
}

/* The files of a run, checked before any is created: the restart file exists; no file is named
 * twice (output, its sidecar and temporary names, restart, config, FCLIB export: the same file
 * through another path or a link counts); the FCLIB export can be written. Computes the FCLIB
 * file name (OUT.h5 -> OUT-stepN.fclib.h5 unless given). */
status run_check_paths(const config *c, const run_setup *S, const run_hooks *hk, char *fclib_path,
                       size_t n, diag *err)
{
    const char *out = S->out.file;
    char partial[OUTFILE_PATH_MAX + 16], xmf[OUTFILE_PATH_MAX];
    snprintf(partial, sizeof partial, "%s.partial", out);
    xdmf_sidecar_path(out, xmf, sizeof xmf);
    long fclib_step = hk ? hk->fclib_step : 0;
    /* a name that does not fit is refused: cut short, it named another file (written, or
     * replaced with --overwrite) */
    if (hk && hk->fclib_path) {
        if (strlen(hk->fclib_path) >= n)
            return diag_set(err, CDLAB_ERR_ARG,
                            "--fclib-out %.200s...: name too long (over %zu characters)",
                            hk->fclib_path, n - 1);
        snprintf(fclib_path, n, "%s", hk->fclib_path);
    } else { /* OUT.h5 -> OUT-stepN.fclib.h5 */
        char suffix[64];
        snprintf(suffix, sizeof suffix, "-step%ld.fclib.h5", fclib_step);
        if (!h5_sibling_path(out, suffix, fclib_path, n) && fclib_step)
            return diag_set(err, CDLAB_ERR_ARG,
                            "the FCLIB export's name (%s with %s) would be over %zu characters: "
                            "give a shorter one with --fclib-out",
                            out, suffix, n - 1);
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
        outfile_folder(fclib_path, dir, sizeof dir);
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

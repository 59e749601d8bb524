/* The run: config -> world -> engine -> step loop -> output file, whatever the engine.
 *
 *   run_simulation
 *     run_setup_read        config -> world (scene), engine (registry: system.mode), output,
 *                           threads                                              run_setup.c
 *     prepare               every refusal before any file exists: paths, restart
 *                           (run_checkpoint_read), FCLIB step; then OUT.h5.partial with its
 *                           header (run_output_header, engine->header) and XDMF sidecar
 *     begin                 restart, or engine->start; row 0, first snapshot
 *     loop                  engine->step; rows, snapshots, checkpoints at their cadence;
 *                           thread tuning (run_threads.c); a signal ends it cleanly
 *     finish                /summary, close, OUT.h5.partial -> OUT.h5 (outfile.c)
 *
 * A distributed run (MPI, docs/parallel.md) goes through the same phases on every rank: the
 * engine steps everywhere, rank 0 alone creates and writes the files, from the state the engine
 * gathers on it before each output; every decision that could differ between ranks (a step's
 * status, a signal, an output's status) is agreed on first, so that all ranks stop together.
 */
#include "run/run.h"

#include "comm.h"
#include "outfile.h"
#include "parallel.h"
#include "run/run_checkpoint.h"
#include "run/run_setup.h"
#include "run/run_threads.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Everything one run holds between its phases. */
typedef struct run_state {
    config *c;
    const run_hooks *hk;
    engine_notes notes;
    run_setup S;
    run_writer w;
    outfile of;
    state_def sdef;
    engine_record rec; /* the last step's (or the start's) */
    char fclib_path[OUTFILE_PATH_MAX];
    char fd_path[64]; /* OUT.h5.partial by its descriptor (outfile_fd_path): read back so */
    long first;       /* the first step index of this run (a restart's checkpoint step) */
    double t0, sweeps_total;
    double present_checked; /* when OUT.h5.partial was last found still there */
    thread_tuner tuner;
    run_summary *sum; /* the caller's, filled as the run goes */
    int signal;       /* a distributed run: the signal any rank had seen at the step's end */
} run_state;

status run_validate(config *c, const run_hooks *hk, diag *err)
{
    run_setup S;
    status s = run_setup_read(c, &S, hk, err);
    if (s == CDLAB_OK)
        run_announce(&S, hk);
    run_setup_free(&S);
    return s;
}

/* The restart's checkpoint and the FCLIB step: checked before any file is created. */
static status check_restart_export(run_state *R, diag *err)
{
    run_setup *S = &R->S;
    world *W = &S->W;
    const run_hooks *hk = R->hk;
    long fclib_step = hk ? hk->fclib_step : 0;
    status s = CDLAB_OK;
    if (hk && hk->restart) {
        s = run_checkpoint_read(hk->restart, S, &R->sdef, err);
        char copy[OUTFILE_PATH_MAX + 16];
        outfile_checkpoint_path(hk->restart, copy, sizeof copy);
        if (s == CDLAB_ERR_IO && access(copy, F_OK) == 0 && !outfile_same(copy, hk->restart)) {
            char why[sizeof err->msg];
            snprintf(why, sizeof why, "%s", err->msg);
            diag_set(err, s, "%s; %s beside it holds a copy of its last checkpoint: --restart %s",
                     why, copy, copy);
        }
        if (s == CDLAB_OK && W->step >= S->info.steps)
            s = diag_set(err, CDLAB_ERR_CONFIG,
                         "%s: its checkpoint is at step %ld, system.steps = %ld: nothing to do "
                         "(raise system.steps, e.g. --set system.steps=N)",
                         hk->restart, W->step, S->info.steps);
    }
    R->first = W->step;
    if (s != CDLAB_OK || fclib_step == 0)
        return s;
    if (!S->E.ops->step.plan_export)
        return diag_set(err, CDLAB_ERR_ARG,
                        "--export-fclib: this is a %s run, whose engine has no contact problem "
                        "to export",
                        S->E.ops->title);
    if (fclib_step <= R->first || fclib_step > S->info.steps)
        return diag_set(err, CDLAB_ERR_ARG,
                        "--export-fclib %ld: the run does steps %ld to %ld; give a step in "
                        "that range",
                        fclib_step, R->first + 1, S->info.steps);
    return S->E.ops->step.plan_export(&S->E, fclib_step, R->fclib_path, R->c->file, &R->notes, err);
}

/* Every check that can refuse the command comes before any file is created or truncated: the
 * output, its sidecar and every other file stay as they were. Then the output's temporary
 * file with its header; on failure nothing is left behind. */
static status prepare(run_state *R, diag *err)
{
    run_setup *S = &R->S;
    status s = run_check_paths(R->c, S, R->hk, R->fclib_path, sizeof R->fclib_path, err);
    if (s == CDLAB_OK)
        s = check_restart_export(R, err);
    int claimed = 0;
    if (s == CDLAB_OK && comm_rank() == 0 &&
        (s = outfile_claim(&R->of, S->out.file, R->hk && R->hk->overwrite, err)) == CDLAB_OK) {
        claimed = 1;
        R->w.of = &R->of;
        outfile_fd_path(R->of.fd, R->fd_path, sizeof R->fd_path);
        /* made through the claimed descriptor; if it fails while the name was taken by another
         * file (HDF5 resolves the descriptor's path by name and met the moment between a
         * rename and a new file: "No such file or directory"), that is the reason given */
        diag moved;
        if ((s = h5out_create_via(&R->w.h, R->fd_path, R->of.partial, err)) != CDLAB_OK &&
            outfile_present(&R->of, &moved) != CDLAB_OK)
            *err = moved;
        if (s == CDLAB_OK &&
            (h5out_read_back_as(R->w.h, R->fd_path), s = outfile_present(&R->of, err)) ==
                CDLAB_OK &&
            (s = run_output_header(&R->w, R->c, S, R->hk, err)) == CDLAB_OK)
            s = xdmf_create(&R->w.xmf, R->of.xmf_partial, R->of.final, err);
    }
    s = comm_agree(s, err);
    if (s != CDLAB_OK && claimed) { /* nothing of the run written: no file left behind */
        diag tmp;
        h5out_close(R->w.h, &tmp);
        xdmf_close(R->w.xmf, &tmp);
        R->w.h = NULL;
        R->w.xmf = NULL;
        outfile_abandon(&R->of);
    }
    return s;
}

/* A warning of the engine's about its record of step `step` (engine_ops.warning), said with
 * --quiet too. */
static void warn(run_state *R, engine_warning kind, const world *W, long step)
{
    if (!R->S.E.ops->report.warning)
        return;
    char line[1200] = "warning: ";
    size_t used = strlen(line);
    R->S.E.ops->report.warning(&R->S.E, kind, W, step, &R->rec, line + used, sizeof line - used);
    engine_say_result(&R->notes, line);
}

/* An energy balance in the record (residual, when the record's balance is set): its largest size
 * kept for /summary, and a warning, once, where it passes RUN_BALANCE_WARN: energy the run made
 * or lost that no term of the balance books, a numerical instability (rank 0, which writes the
 * outputs). */
static void check_balance(run_state *R, const world *W)
{
    if (!R->rec.balance)
        return;
    double r = fabs(R->rec.residual);
    if (r > RUN_BALANCE_WARN && !(R->sum->balance_max > RUN_BALANCE_WARN))
        warn(R, ENGINE_WARN_BALANCE, W, W->step);
    R->sum->balance_max = fmax(R->sum->balance_max, r);
}

/* The outputs of this step that are due (a row of the series, a snapshot, a checkpoint). The
 * engine first makes what only outputs need (gather: an energy ledger, say) and, in a distributed
 * run, gathers the state on rank 0 (collective), which writes it from a view of the set-up with
 * the gathered world. Every rank returns the same status. */
static status output(run_state *R, int row, int snapshot, int checkpoint, diag *err)
{
    if (!row && !snapshot && !checkpoint)
        return CDLAB_OK;
    run_setup *S = &R->S, V;
    status s = CDLAB_OK;
    if (S->E.ops->report.gather) {
        world *view = NULL;
        s = S->E.ops->report.gather(&S->E, &S->W, &view, &R->rec, err);
        if (s != CDLAB_OK || !view)
            return comm_agree(s, err);
        check_balance(R, view);
        if (view != &S->W) {
            V = *S;
            V.W = *view;
            S = &V;
        }
    }
    /* rank 0's file: room for them, or stop before they start: at least their datasets'
     * bytes with the contacts of now (an engine that finds its contacts in the steps has
     * none at the first snapshot, and they can grow many times over as it goes) */
    /* the file still there: at every snapshot and checkpoint, and a row's at most once a
     * second (a run of rows alone would learn it only at its end) */
    double now = R->w.of ? run_now_seconds() : 0.0;
    if (R->w.of && (snapshot || checkpoint || now - R->present_checked >= 1.0)) {
        R->present_checked = now;
        s = outfile_present(R->w.of, err);
        diag why; /* the state of now kept where it can be: the checkpoint's copy */
        if (s != CDLAB_OK && run_checkpoint_copy(&R->w, S, &R->sdef, &R->rec, &why) == CDLAB_OK) {
            size_t used = strlen(err->msg);
            snprintf(err->msg + used, sizeof err->msg - used, "; %s holds the state of step %ld",
                     R->of.ckpt, S->W.step);
        }
    }
    if (s == CDLAB_OK && (snapshot || checkpoint)) {
        long nc = S->E.ops->report.contact_count(&S->E, &S->W);
        double expect = (snapshot ? run_snapshot_bytes(S, nc) : 0.0) +
                        (checkpoint ? run_checkpoint_bytes(S, nc) : 0.0);
        s = h5out_make_room(R->w.h, (long long)expect, err);
    }
    if (s == CDLAB_OK && row)
        s = run_output_row(&R->w, S, &R->rec, err);
    if (s == CDLAB_OK && snapshot)
        s = run_output_snapshot(&R->w, S, err);
    if (s == CDLAB_OK && checkpoint)
        s = run_checkpoint_write(&R->w, S, &R->sdef, &R->rec, err);
    if (s == CDLAB_OK && checkpoint && R->w.of) {
        /* a copy that cannot be written (a full disk: the next output's room stops the run)
         * leaves the older copy, and the run goes on with its file whole; said every time */
        diag why;
        if (run_checkpoint_copy(&R->w, S, &R->sdef, &R->rec, &why) != CDLAB_OK) {
            char line[DIAG_MSG_MAX + OUTFILE_PATH_MAX + 256];
            snprintf(line, sizeof line,
                     "warning: the copy of the checkpoint of step %ld could not be written "
                     "(%s); %s holds %s",
                     S->W.step, why.msg, R->of.ckpt,
                     R->w.copy_step >= 0 ? "the older copy" : "no copy yet");
            engine_say_result(&R->notes, line);
        }
    }
    return comm_agree(s, err);
}

/* The state the run starts from (restored, or the engine's at t = 0) as row 0 of the series
 * and the first snapshot; a run of no steps still leaves a checkpoint. */
static status begin(run_state *R, diag *err)
{
    run_setup *S = &R->S;
    world *W = &S->W;
    const run_hooks *hk = R->hk;
    status s = CDLAB_OK;
    R->rec = (engine_record){.converged = 1};
    if (hk && hk->restart && S->has_restart_row)
        R->rec = S->restart_row;
    if (hk && hk->restart) {
        engine_say(&R->notes, "restart: continuing from step %ld of %s", W->step, hk->restart);
        if (S->restart_skipped[0]) { /* printed with --quiet too */
            char line[sizeof S->restart_skipped + 120];
            snprintf(line, sizeof line,
                     "restart: warning: later checkpoints passed over, as they do not hold what "
                     "was written to them: %s",
                     S->restart_skipped);
            engine_say_result(&R->notes, line);
        }
        if (S->restart_unchecked[0])
            engine_say(&R->notes,
                       "restart: note: its checkpoint (an older cdlab's) does not record %s: a "
                       "change of them is not refused",
                       S->restart_unchecked);
        if (comm_rank() == 0 && (s = h5out_group(R->w.h, "/restart", err)) == CDLAB_OK &&
            (s = h5out_attr_string(R->w.h, "/restart", "from_file", hk->restart, err)) == CDLAB_OK)
            s = h5out_attr_int(R->w.h, "/restart", "from_step", W->step, err);
        s = comm_agree(s, err);
    } else {
        s = S->E.ops->step.start(&S->E, W, &R->rec, err);
    }
    if (s == CDLAB_OK)
        s = output(R, 1, 1, R->first >= S->info.steps, err);
    if (R->w.h && !h5out_reserving(R->w.h)) { /* printed with --quiet too */
        char line[PATH_MAX + 400];
        snprintf(line, sizeof line,
                 "warning: the file system of %s cannot reserve room ahead of the writes "
                 "(fallocate): the free space is checked before each output instead, and a disk "
                 "that another program fills meanwhile may cut an output short, which HDF5 "
                 "cannot always survive with what came before it readable",
                 S->out.file);
        engine_say_result(&R->notes, line);
    }
    return s;
}

/* After a step: its row, snapshot and checkpoint when their cadence (or the last step) asks;
 * a failed step is still recorded, so the file shows the state that failed. */
static status record_step(run_state *R, status s, diag *err)
{
    run_setup *S = &R->S;
    const world *W = &S->W;
    const output_params *o = &S->out;
    long steps = S->info.steps;
    int row = s != CDLAB_OK || W->step % o->series_every == 0 || W->step == steps;
    int snap = s == CDLAB_OK && ((o->every > 0 && W->step % o->every == 0) || W->step == steps);
    int ckpt = s == CDLAB_OK && ((o->checkpoint_every > 0 && W->step % o->checkpoint_every == 0) ||
                                 W->step == steps);
    if (s != CDLAB_OK) { /* the failed state's row; the step's message is the one reported */
        output(R, row, 0, 0, &(diag){{0}});
        return s;
    }
    return output(R, row, snap, ckpt, err);
}

/* A signal during the run: the step's snapshot and checkpoint (unless the cadence has just
 * written them), then CDLAB_ERR_INTERRUPTED. A signal during the last step: the run is
 * complete, its checkpoint written. */
static status stop_if_signalled(run_state *R, diag *err)
{
    const run_hooks *hk = R->hk;
    run_setup *S = &R->S;
    const world *W = &S->W;
    /* a signal may reach the ranks at different steps: a distributed run stops at once on all
     * of them, at the signal the step's agreement gathered (comm_agree_flag) */
    int sig = comm_size() > 1 ? R->signal : hk && hk->stop ? *hk->stop : 0;
    if (sig == 0 || W->step >= S->info.steps)
        return CDLAB_OK;
    /* rank 0 knows whether this step's snapshot and checkpoint are written */
    int w0 = comm_rank() == 0;
    double due[2] = {w0 && R->w.snapshot_step != W->step, w0 && R->w.checkpoint_step != W->step};
    if (comm_size() > 1)
        comm_allreduce(due, 2, COMM_MAX);
    status s = output(R, 0, due[0] != 0, due[1] != 0, err);
    if (s == CDLAB_OK)
        s = diag_set(err, CDLAB_ERR_INTERRUPTED,
                     "interrupted by signal %d after step %ld of %ld; %s holds every frame so far",
                     sig, W->step, S->info.steps, S->out.file);
    return s;
}

/* A distributed step's agreement, with the signal any rank has seen and, where the engine
 * leaves them as each rank's, its record's counts and overlaps: one reduction. */
static status agree_step(run_state *R, status s, diag *err)
{
    if (comm_size() == 1 || !R->S.E.ops->step.record_by_rank)
        return comm_agree_flag(s, &R->signal, err);
    double v[ENGINE_RECORD_PARTS];
    comm_op ops[ENGINE_RECORD_PARTS];
    engine_record_parts(&R->rec, v, ops);
    s = comm_agree_values(s, &R->signal, v, ops, ENGINE_RECORD_PARTS, err);
    engine_record_merge(&R->rec, v);
    return s;
}

/* The step loop. Timing: the engine's step alone (no output) in step_seconds, and without the
 * first output.timing_warmup steps in timed_step_seconds. */
static status loop(run_state *R, run_summary *sum, diag *err)
{
    run_setup *S = &R->S;
    world *W = &S->W;
    const run_hooks *hk = R->hk;
    status s = CDLAB_OK;
    R->tuner = run_tuner(R->first, S->threads);
    comm_partners_afresh(); /* /parallel/ranks/exchange_partners: the steps' */
    for (long k = R->first; k < S->info.steps && s == CDLAB_OK; k++) {
        double ts = run_now_seconds();
        comm_stats c0 = comm_stats_now();
        s = S->E.ops->step.step(&S->E, W, &R->rec, err);
        R->signal = hk && hk->stop ? *hk->stop : 0;
        s = agree_step(R, s, err);
        comm_stats c1 = comm_stats_now();
        double spent = run_now_seconds() - ts;
        sum->step_comm_seconds += c1.seconds - c0.seconds;
        sum->step_messages += c1.messages - c0.messages;
        sum->step_bytes += c1.bytes - c0.bytes;
        sum->step_calls += c1.calls - c0.calls;
        sum->step_ordered += c1.ordered - c0.ordered;
        if (S->tune) /* a trial: one thread, then every core; results do not depend on it */
            run_tune_threads(&R->tuner, k, spent, &R->notes);
        sum->step_seconds += spent;
        sum->solve_seconds += R->rec.solve_seconds;
        sum->contact_updates += (double)R->rec.n_contacts * R->rec.sweeps;
        if (k - R->first >= S->out.timing_warmup) {
            sum->timed_step_seconds += spent;
            sum->timed_steps++;
        }
        R->sweeps_total += R->rec.sweeps;
        if (!R->rec.converged) {
            /* said once, with --quiet too: its forces are not the solver's tolerance's */
            if (sum->unconverged_steps == 0)
                warn(R, ENGINE_WARN_UNCONVERGED, W, W->step);
            sum->unconverged_steps++;
        }
        if (R->rec.missed > 0) {
            /* said once, with --quiet too: the run goes on, its file counts them all */
            if (sum->missed_contacts ==
                0) /* found at this step's detection: they met in the step before */
                warn(R, ENGINE_WARN_MISSED, W, W->step - 1);
            sum->missed_contacts += R->rec.missed;
            sum->missed_overlap = fmax(sum->missed_overlap, R->rec.missed_overlap);
        }
        sum->steps_done = W->step;
        sum->last_step = R->S.info.steps;
        s = record_step(R, s, err);
        if (s == CDLAB_OK)
            s = stop_if_signalled(R, err);
        if (hk && hk->progress) {
            run_progress p = {.step = W->step,
                              .steps = S->info.steps,
                              .t = W->t,
                              .sweeps = S->E.ops->iterative ? R->rec.sweeps : -1,
                              .mean_overlap = R->rec.mean_overlap,
                              .elapsed = run_now_seconds() - R->t0};
            hk->progress(hk->user, &p);
        }
    }
    return s;
}

/* A distributed run: every rank's step time and communication (run_summary), gathered in rank
 * order; the summary's figures over the ranks on every rank; rank 0 keeps the table (rows of
 * RANK_FIGURES) for /parallel. */
enum { RANK_FIGURES = 9 };
static double *rank_figures(run_summary *sum, long steps)
{
    double mine[RANK_FIGURES] = {sum->step_seconds,
                                 sum->step_comm_seconds,
                                 sum->step_messages,
                                 sum->step_bytes,
                                 sum->step_calls,
                                 (double)steps,
                                 (double)run_peak_rss_kib(),
                                 sum->step_ordered,
                                 comm_stats_now().partners};
    double *all = NULL;
    int total = 0;
    diag tmp;
    if (comm_allgather(mine, RANK_FIGURES, &all, &total, &tmp) != CDLAB_OK)
        return NULL; /* the figures are missing from the file; the run is not lost over them */
    int P = total / RANK_FIGURES;
    sum->ranks = P;
    sum->rank_peak_rss_kib = -1.0;
    for (int r = 0; r < P; r++) {
        const double *f = &all[RANK_FIGURES * r];
        double share = f[0] > 0.0 ? f[1] / f[0] : 0.0, n = f[5] > 0.0 ? f[5] : 1.0;
        sum->comm_share_mean += share / P;
        sum->comm_share_max = fmax(sum->comm_share_max, share);
        sum->messages_per_step += f[2] / n / P;
        sum->bytes_per_step += f[3] / n / P;
        sum->rank_peak_rss_kib = fmax(sum->rank_peak_rss_kib, f[6]);
    }
    return all;
}

/* /parallel/ranks: rank 0's table of rank_figures. */
static void write_rank_figures(run_writer *w, const double *all, int P, diag *err)
{
    const char *names[RANK_FIGURES] = {"step_seconds",     "step_comm_seconds",
                                       "step_messages",    "step_bytes",
                                       "step_calls",       "steps",
                                       "peak_rss_kib",     "step_ordered_reductions",
                                       "exchange_partners"};
    double *col = malloc((size_t)P * sizeof *col);
    if (!col || h5out_group(w->h, "/parallel/ranks", err) != CDLAB_OK) {
        free(col);
        return;
    }
    long n = P;
    for (int k = 0; k < RANK_FIGURES; k++) {
        char path[64];
        for (int r = 0; r < P; r++)
            col[r] = all[RANK_FIGURES * r + k];
        snprintf(path, sizeof path, "/parallel/ranks/%s", names[k]);
        h5out_array(w->h, path, H5IO_DOUBLE, 1, &n, col, err);
    }
    h5out_attr_string(w->h, "/parallel/ranks", "definition",
                      "per rank, in rank order, totals over the steps of this run: the engine's "
                      "step time, the part of it inside MPI calls (waiting for slower ranks "
                      "included), the messages and bytes the rank sent in the steps (logical "
                      "pattern: docs/parallel.md) and the MPI calls, of which "
                      "step_ordered_reductions were reductions in rank order through rank 0; "
                      "outputs not included; peak_rss_kib: the rank's peak resident memory up to "
                      "the run's end (set-up included, -1 where unknown); exchange_partners: the "
                      "most ranks the rank sent to in one point-to-point exchange of the steps "
                      "(its neighbouring boxes)",
                      err);
    free(col);
}

/* The step of the last series row the closed file was proven to hold (its time over dt);
 * -1 where none. */
static long proven_row_step(const char *path, long long rows, double dt)
{
    double *t = NULL;
    long n = 0;
    diag tmp;
    long step = -1;
    if (rows > 0 && dt > 0.0 && h5in_read_doubles(path, "/series/t", &t, &n, &tmp) == CDLAB_OK &&
        n >= rows)
        step = lround(t[rows - 1] / dt);
    free(t);
    return step;
}

/* A file that a failed write, or its reading back after the close, did not leave whole: its
 * /summary written again (the file opened anew) with how the run ended and what the file was
 * proven to hold, from the ledger of the close. The caller's message (err) gains what
 * happened to the summary. */
static void mark_unwhole(run_state *R, const h5ledger *L, run_summary *sum, diag *err)
{
    const run_setup *S = &R->S;
    long long rows = h5ledger_rows_ok(L, "/series/t");
    sum->verified = L != NULL;
    sum->rows_held = rows;
    sum->snapshot_step = (long)h5ledger_last_whole_step(L, "/snapshots", NULL);
    sum->checkpoint_step = (long)h5ledger_last_whole_step(L, "/checkpoints", "complete");
    sum->row_step = proven_row_step(R->fd_path, rows, S->W.dt);
    char holds[400], text[DIAG_MSG_MAX + 512], snap[64], ckpt[64];
    snprintf(snap, sizeof snap,
             sum->snapshot_step >= 0 ? "its snapshots to step %ld" : "no snapshot",
             sum->snapshot_step);
    snprintf(ckpt, sizeof ckpt,
             sum->checkpoint_step >= 0 ? "its checkpoints to step %ld" : "no checkpoint",
             sum->checkpoint_step);
    snprintf(holds, sizeof holds,
             "read back after its close, the file holds %lld series row%s (to step %ld), %s and %s",
             rows > 0 ? rows : 0, rows == 1 ? "" : "s", sum->row_step, snap, ckpt);
    snprintf(text, sizeof text, "failed: %s; %s", err->msg, holds);
    run_writer w = R->w;
    diag e2;
    status s = outfile_present(&R->of, &e2);
    if (s == CDLAB_OK && (s = h5out_open(&w.h, R->fd_path, &e2)) == CDLAB_OK)
        h5out_read_back_as(w.h, R->fd_path);
    if (s == CDLAB_OK && w.h) {
        run_output_summary(&w, text, sum, R->rec.rebuilds, &e2);
        h5out_attr_int(w.h, "/summary", "rows_held", rows, &e2);
        h5out_attr_int(w.h, "/summary", "snapshot_held", sum->snapshot_step, &e2);
        h5out_attr_int(w.h, "/summary", "checkpoint_held", sum->checkpoint_step, &e2);
        s = h5out_close(w.h, &e2);
    }
    size_t used = strlen(err->msg);
    if (s == CDLAB_OK)
        snprintf(err->msg + used, sizeof err->msg - used, " (%s; its /summary says so)", holds);
    else
        snprintf(err->msg + used, sizeof err->msg - used,
                 " (%s; its /summary could not be written: %s)", holds, e2.msg);
}

/* /summary, the file closed and read back, OUT.h5.partial renamed (or kept beside an older
 * OUT.h5). The first error's message is kept. A run calls itself completed in /summary
 * before the close; where the close or the reading back then fails, the summary is written
 * again to say so (mark_unwhole). */
static status finish(run_state *R, status s, run_summary *sum, diag *err)
{
    sum->wall_seconds = run_now_seconds() - R->t0;
    /* over this run's steps (a restart's mean was divided by the steps from the original
     * start: half the true one for a run continued from its middle) */
    sum->first_step = R->first;
    long ran = sum->steps_done - R->first;
    sum->mean_sweeps = ran > 0 ? R->sweeps_total / (double)ran : 0.0;
    double *ranks = comm_size() > 1 ? rank_figures(sum, ran) : NULL;
    if (ranks && comm_rank() == 0) {
        diag tmp;
        write_rank_figures(&R->w, ranks, sum->ranks, &tmp);
    }
    free(ranks);
    if (comm_rank() != 0) /* the files are rank 0's; its status is everyone's */
        return comm_agree(s, err);
    diag tmp;
    /* the sidecar first: a failure there is the run's, and /summary says so */
    status s2 = xdmf_close(R->w.xmf, s == CDLAB_OK ? err : &tmp);
    R->w.xmf = NULL;
    if (s == CDLAB_OK)
        s = s2;
    diag *e2 = s == CDLAB_OK ? err : &tmp;
    run_output_summary(&R->w, s == CDLAB_OK ? "completed" : err->msg, sum, R->rec.rebuilds, e2);
    h5ledger *L = NULL;
    s2 = h5out_close_checked(R->w.h, &L, e2);
    R->w.h = NULL;
    /* closed whole: the file holds its checkpoints, and their copy goes once the file is on
     * disk (outfile_commit); otherwise the copy stays, the restart that cannot be lost */
    int closed_whole = s2 == CDLAB_OK;
    if (s == CDLAB_OK)
        s = s2;
    /* what the file holds for sure, for the caller's message */
    sum->snapshot_step = R->w.snapshot_step;
    sum->checkpoint_step = R->w.checkpoint_step;
    sum->row_step = R->w.row_step;
    sum->rows_held = -1;
    sum->verified = closed_whole;
    if (!closed_whole)
        mark_unwhole(R, L, sum, err);
    h5ledger_free(L);
    int kept = 0;
    s2 = outfile_commit(&R->of, s == CDLAB_OK, &kept, s == CDLAB_OK ? err : &tmp);
    sum->closed_whole = closed_whole && s2 == CDLAB_OK;
    if (sum->closed_whole)
        outfile_drop_checkpoint(&R->of);
    else if (R->w.copy_step >= 0) { /* not closed whole, or maybe not on the device */
        sum->copy_step = R->w.copy_step;
        snprintf(sum->copy_file, sizeof sum->copy_file, "%s", R->of.ckpt);
    }
    if (s == CDLAB_OK)
        s = s2;
    sum->kept_partial = kept;
    snprintf(sum->out_file, sizeof sum->out_file, "%s",
             kept || s2 != CDLAB_OK ? R->of.partial : R->of.final);
    return comm_size() > 1 ? comm_agree(s, err) : s;
}

status run_simulation(config *c, const char *out_path, const run_hooks *hk, run_summary *sum,
                      diag *err)
{
    memset(sum, 0, sizeof *sum);
    run_state *R = calloc(1, sizeof *R);
    if (!R)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    R->c = c;
    R->hk = hk;
    R->notes = run_notes(hk);
    R->of.fd = -1;
    R->w.snapshot_step = R->w.checkpoint_step = R->w.copy_step = R->w.row_step = -1;
    sum->copy_step = -1;
    sum->balance_max = -1.0;
    R->sum = sum;
    run_setup *S = &R->S;
    status s = run_setup_read(c, S, hk, err);
    if (s != CDLAB_OK) {
        run_setup_free(S);
        free(R);
        return s;
    }
    if (out_path) {
        /* refused where it would not fit: cut short, it named another file (written at 511
         * characters, its sidecar at the cut name's) */
        if (strlen(out_path) >= sizeof S->out.file) {
            run_setup_free(S);
            free(R);
            return diag_set(err, CDLAB_ERR_ARG,
                            "-o %.200s...: output file name too long (over %zu "
                            "characters)",
                            out_path, sizeof S->out.file - 1);
        }
        snprintf(S->out.file, sizeof S->out.file, "%s", out_path);
        config_record(c, "output", "file", "%s", out_path);
    }
    int threads_before = cdlab_threads(); /* restored at the end: the library leaves no trace */
    cdlab_set_threads(S->threads);
    long step, contacts; /* a restart: the banner's counts from its checkpoint (prepare reads
                            and checks it all) */
    if (hk && hk->restart && run_checkpoint_peek(hk->restart, &step, &contacts)) {
        S->W.step = step;
        S->info.start_pairs = contacts;
    }
    /* an output that cannot be written is refused before the banner (the claim in prepare
     * checks again); rank 0 writes it */
    s = comm_rank() == 0 ? outfile_check(S->out.file, hk && hk->overwrite, err) : CDLAB_OK;
    if (comm_size() > 1)
        s = comm_agree(s, err);
    if (s != CDLAB_OK) {
        cdlab_set_threads(threads_before);
        run_setup_free(S);
        free(R);
        return s;
    }
    run_announce(S, hk);
    R->sdef = run_state_def(S);
    /* from here on a signal ends the run cleanly, with its file: armed before the file is
     * made, so that a signal while prepare makes it is kept for the loop (a scan's rows killed
     * as they started left a .partial) */
    if (hk && hk->armed)
        *hk->armed = 1;
    if ((s = prepare(R, err)) == CDLAB_OK) { /* refused: no file was left behind */
        s = begin(R, err);
        R->t0 = run_now_seconds();
        sum->started = 1; /* the output exists and says what happened */
        sum->iterative = S->E.ops->iterative;
        snprintf(sum->out_file, sizeof sum->out_file, "%s", S->out.file);
        if (s == CDLAB_OK)
            s = loop(R, sum, err);
        s = finish(R, s, sum, err);
    }
    cdlab_set_threads(threads_before);
    run_output_free(&R->w);
    run_setup_free(S);
    free(R);
    return s;
}

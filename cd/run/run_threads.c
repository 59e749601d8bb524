#include "run/run_threads.h"

#include "parallel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* OMP_NUM_THREADS's first count ("4" or "4,2": the outer level), 0 where it is unset or no
 * count: libgomp then warns and takes its default, and the run chose automatically. */
static long omp_num_threads(const char **text)
{
    *text = getenv("OMP_NUM_THREADS");
    if (!*text)
        return 0;
    char *end;
    long v = strtol(*text, &end, 10);
    while (*end == ' ')
        end++;
    return end != *text && (*end == '\0' || *end == ',') && v >= 1 && v <= 4096 ? v : 0;
}

/* The threads of a run: system.threads (or --threads) when given; else OMP_NUM_THREADS when it
 * is a count; else automatic. Whether threads pay cannot be told from the particle count (a
 * dense packing gains where a loose one of the same size loses: bench/PROFILE.md), so an
 * automatic run measures. An engine whose step is serial (engine_ops.serial_reason) runs on
 * one thread. The others start at one thread and time a few steps at one and at every core
 * (thread_tuner), then keep the faster, and measure again every TUNE_EVERY steps (the machine's
 * load changes). Results do not depend on the thread count (tested bit for bit), so this
 * changes only time. */
void run_choose_threads(run_setup *S, long requested)
{
    int cores = cdlab_cores();
    const char *env;
    long from_env = omp_num_threads(&env);
    char reason[96];
    const char *serial = S->E.ops->setup.serial_reason
                             ? S->E.ops->setup.serial_reason(&S->E, reason, sizeof reason)
                             : NULL;
    S->tune = 0;
    if (requested > 0) {
        S->threads = (int)requested;
        snprintf(S->threads_why, sizeof S->threads_why, "system.threads");
    } else if (from_env > 0) {
        S->threads = (int)from_env;
        snprintf(S->threads_why, sizeof S->threads_why, "OMP_NUM_THREADS");
    } else if (!serial && cores > 1) {
        S->threads = 1;
        S->tune = 1;
        snprintf(S->threads_why, sizeof S->threads_why,
                 "automatic: 1 or %d, whichever the run measures faster", cores);
    } else {
        S->threads = 1;
        snprintf(S->threads_why, sizeof S->threads_why, "automatic: %s",
                 cores > 1 ? serial : "one core");
    }
    if (S->threads < 1)
        S->threads = 1;
    /* OMP_THREAD_LIMIT caps every parallel region: the count said and recorded is the one that
     * runs */
    int limit = cdlab_thread_limit();
    if (limit > 0 && S->threads > limit) {
        size_t used = strlen(S->threads_why);
        snprintf(S->threads_why + used, sizeof S->threads_why - used,
                 "; %d asked, OMP_THREAD_LIMIT = %d allows %d", S->threads, limit, limit);
        S->threads = limit;
    }
    if (env && from_env == 0) { /* a value that is no count (libgomp said so too) */
        size_t used = strlen(S->threads_why);
        snprintf(S->threads_why + used, sizeof S->threads_why - used,
                 "; OMP_NUM_THREADS='%.20s' is no thread count: not used", env);
    }
}

/* Measured thread choice: after TUNE_SKIP steps, TUNE_STEPS steps at one thread, TUNE_STEPS at
 * every core; the faster wins until the next trial, TUNE_EVERY steps or about
 * TUNE_EVERY_SECONDS later, whichever comes first, the interval doubling while the choice
 * stays the same. */
#define TUNE_SKIP 3
#define TUNE_STEPS 8
#define TUNE_EVERY 2000
#define TUNE_EVERY_SECONDS 5.0
/* A step shorter than this at one thread is not tried at more: the threads' start and
 * synchronisation cost more than they share (the measurements behind it: bench/PROFILE.md). */
#define TUNE_MIN_STEP_SECONDS 3e-4

thread_tuner run_tuner(long first, int threads)
{
    return (thread_tuner){.cores = cdlab_cores(), .chosen = threads, .trial_at = first + TUNE_SKIP};
}

/* The trial is over: keep the faster and plan the next trial. */
static void decide(thread_tuner *T, long k, const engine_notes *notes)
{
    int best = T->sum[1] < T->sum[0] ? T->cores : 1;
    cdlab_set_threads(best);
    if (best != T->chosen)
        engine_say(
            notes, "threads: %d from step %ld (measured: %.3g ms per step at 1 thread, %.3g at %d)",
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

void run_tune_threads(thread_tuner *T, long k, double spent, const engine_notes *notes)
{
    if (k + 1 == T->trial_at) /* the trial's first steps: one thread */
        cdlab_set_threads(1);
    long i = k - T->trial_at; /* [0, TUNE_STEPS): one thread; then every core */
    if (i < 0 || i >= 2 * TUNE_STEPS)
        return;
    T->sum[i >= TUNE_STEPS] += spent;
    int done = i == 2 * TUNE_STEPS - 1;
    if (i == TUNE_STEPS - 1) {
        if (T->sum[0] / TUNE_STEPS < TUNE_MIN_STEP_SECONDS) { /* too short to share */
            T->sum[1] = INFINITY;
            done = 1;
        } else {
            cdlab_set_threads(T->cores);
        }
    }
    if (done)
        decide(T, k, notes);
}

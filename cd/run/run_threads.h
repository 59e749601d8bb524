/* How many threads a run uses (run_threads.c): the rule, and the measured choice of an
 * automatic run. Internal to the run pipeline. */
#ifndef CDLAB_RUN_THREADS_H
#define CDLAB_RUN_THREADS_H

#include "run/run_setup.h"

/* Sets S->threads, S->tune and S->threads_why from system.threads (requested, 0: none) and
 * the engine (its serial_reason). */
void run_choose_threads(run_setup *S, long requested);

/* Measured thread choice (see run_threads.c): one trial at a time. */
typedef struct thread_tuner {
    int cores, chosen;
    long trial_at; /* step index of the next trial's start */
    long interval; /* steps between trials (doubles while the choice stays) */
    double sum[2]; /* seconds of the trial's steps at 1 thread and at every core */
} thread_tuner;

/* A tuner for a run whose first step is index first, starting at threads. */
thread_tuner run_tuner(long first, int threads);
/* Called after step index k (its duration: spent); sets the threads of the next step and says
 * when the choice changes. */
void run_tune_threads(thread_tuner *T, long k, double spent, const engine_notes *notes);

#endif

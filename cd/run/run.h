/* A whole run of any engine: config -> world -> engine -> steps -> HDF5 file
 * (docs/output.md). The run pipeline: run.c (the loop, signals, progress), run_setup.c (the
 * config read, the engine chosen, the banner, the files checked), run_threads.c, run_output.c
 * (header, series rows, snapshots, XDMF), run_checkpoint.c (write, read, validate). The
 * engines are behind engine.h. The caller receives progress through a callback; nothing here
 * prints. */
#ifndef CDLAB_RUN_H
#define CDLAB_RUN_H

#include "config.h"
#include "status.h"

#include <limits.h>

typedef struct run_progress {
    long step, steps;
    double t;
    int sweeps; /* -1 for an engine without an iterative solver */
    double mean_overlap;
    double elapsed; /* wall seconds since the first step */
} run_progress;

typedef struct run_hooks {
    /* Called after every step (the callee decides how often to show it); may be NULL. */
    void (*progress)(void *user, const run_progress *p);
    /* Called once before the first step with lines to show the user (parameters, warnings). */
    void (*message)(void *user, const char *line);
    /* Lines that are results (the FCLIB export's residual), shown even when messages are not;
     * may be NULL (then they go to message). */
    void (*result)(void *user, const char *line);
    void *user;
    /* Set (by a signal handler) to the signal number to end the run after the current step:
     * the state is written as a snapshot and a checkpoint and the file closed. May be NULL. */
    volatile int *stop;
    /* Continue from the last checkpoint of this cdlab output file (NULL: a new run). */
    const char *restart;
    /* Engines with a contact problem only: write the contact problem of this step (1 = the
     * first step; 0: none) as an FCLIB local problem with cdlab's solution, to fclib_path (NULL:
     * OUTPUT-stepN.fclib.h5 next to the output file). */
    long fclib_step;
    const char *fclib_path;
    /* The command as typed (stored in the output's root attribute command_line); may be NULL. */
    const char *command_line;
    /* Replace an existing output file (only once the new run has completed). */
    int overwrite;
    /* Set to 1 just before the output file is made (the set-up done): from then on a signal
     * should end the run cleanly (stop) rather than kill the process. May be NULL. */
    volatile int *armed;
    /* Refuse a run whose memory estimate exceeds this many bytes (0: this machine's memory).
     * The fuzzers use it: a valid config may ask for a run as large as the machine. */
    double memory_limit;
} run_hooks;

/* The size of an energy balance's relative residual (engine_record.balance) past which a run
 * warns: more than half the energy it was given is unaccounted for. Runs that are stable keep
 * it far below (the studies' stable runs: experiments/ddem). */
#define RUN_BALANCE_WARN 0.5

typedef struct run_summary {
    int started;     /* 0: failed during set-up (config, input files, output file) */
    long steps_done; /* the last step done, counted from the original start */
    long last_step;  /* the run's last step (system.steps) */
    long first_step; /* the step this run started from: 0, or a restart's checkpoint step; the
                        figures below are this run's, over its steps_done - first_step steps */
    double wall_seconds;
    double step_seconds;  /* of which in the engine's step (detection, solver, update): no output */
    double solve_seconds; /* of which in the engine's iterative solver */
    double timed_step_seconds; /* step_seconds without the first output.timing_warmup steps */
    long timed_steps;
    char out_file[PATH_MAX + 32]; /* where the output is: OUT.h5, or OUT.h5.partial when the run did
                           not complete and an older OUT.h5 was kept (kept_partial) */
    int kept_partial;
    long snapshot_step;   /* the last snapshot flushed to the file (-1: none) */
    long checkpoint_step; /* the last complete checkpoint in the file (-1: none) */
    long row_step;        /* the last series row written (-1: none) */
    int closed_whole;     /* the file closed whole and in place: it holds every row written */
    /* the file was read back after its close: snapshot_step, checkpoint_step and row_step are
     * what it was proven to hold (docs/output.md, "Verified files") */
    int verified;
    long rows_held; /* the series rows proven (-1: not known) */
    /* the file was not closed whole, or not confirmed on the device: the copy of its last
     * checkpoint that stays beside it (OUT.h5.checkpoint) and its step (-1: none) */
    long copy_step;
    char copy_file[PATH_MAX + 32];
    double contact_updates; /* sum over steps of contacts x sweeps (an iterative solver's) */
    double mean_sweeps;
    long unconverged_steps;
    /* contacts the detection missed (engine_record.missed, summed over the steps: pairs that met
     * within a step with no force), and the largest overlap they reached */
    long missed_contacts;
    double missed_overlap;
    /* the largest |residual| of the rows whose record is an energy balance (an engine's
     * ledger, relative to the initial energy plus the work put in); -1: no such row */
    double balance_max;
    int iterative; /* the engine has an iterative solver: sweeps and convergence */
    /* a distributed run: this rank's communication inside the steps (comm_stats: seconds in MPI,
     * messages, bytes sent, calls), and over the ranks (filled on every rank at the end): the
     * share of the step time spent in communication (mean and largest over the ranks) and the
     * messages and bytes a rank sends per step (mean over the ranks); the largest peak resident
     * memory of a rank (KiB, -1 where unknown) */
    double step_comm_seconds, step_messages, step_bytes, step_calls, step_ordered;
    int ranks;
    double comm_share_mean, comm_share_max, messages_per_step, bytes_per_step;
    double rank_peak_rss_kib;
} run_summary;

/* Reads every section of the config, checks that no key is left unknown, and runs.
 * out_path overrides output.file when not NULL. */
status run_simulation(config *c, const char *out_path, const run_hooks *hooks, run_summary *sum,
                      diag *err);

/* Only validates the config and builds the world (no output): used by `cdlab check`. Notices
 * (another engine's sections left unused) go to hooks->message when hooks is not NULL. */
status run_validate(config *c, const run_hooks *hooks, diag *err);

#endif

/* The run pipeline's shared state and set-up (run_setup.c): the config read into a world, an
 * engine and the output's parameters; the banner; the files checked before any is created.
 * Internal to the run pipeline (run*.c). */
#ifndef CDLAB_RUN_SETUP_H
#define CDLAB_RUN_SETUP_H

#include "engine/engine.h"
#include "outfile.h"
#include "run/run.h"

typedef struct output_params {
    char file[OUTFILE_PATH_MAX];
    long every;
    long series_every;     /* a series row every this many steps (and the last step) */
    long timing_warmup;    /* steps left out of /summary timed_step_seconds */
    long checkpoint_every; /* a restart checkpoint every this many steps (0: only the last step) */
    int *probes;           /* storage indices */
    int n_probes;
} output_params;

typedef struct run_setup {
    world W;
    scene_info info;
    engine E; /* E.ops: the engine of system.mode */
    output_params out;
    char notice[512]; /* the other engines' sections left unused, for the user ("" if none) */
    int threads;      /* the threads the run starts with */
    int tune;         /* automatic: measure 1 thread against every core (run_threads.c) */
    char threads_why[160];
    /* a twin (engine/equiv.h): the steps and cadences scaled to the physical time of the run its
     * config describes ("" if none) */
    char scaled[320];
    double series_row_bytes; /* a row of all the series (run_series_row_bytes) */
    engine_memory mem;       /* the engine's memory figures for this config (run_memory_estimate) */
    char memory_warning[768]; /* system.memory_check = false and the estimate over: said */
    /* a restart from a checkpoint that does not record these (an older cdlab's): not compared */
    char restart_unchecked[200];
    /* a restart: the record of the checkpoint's step (its row's contacts, overlaps, sweeps and
     * residual: the continued run's first row is the uninterrupted run's), and whether the
     * checkpoint had one (an older cdlab's did not) */
    engine_record restart_row;
    int has_restart_row;
    /* the later checkpoints a restart passed over: they do not hold what was written */
    char restart_skipped[600];
} run_setup;

/* Reads every section of the config (the engine's through its table) and checks that no key
 * is left unknown or undocumented; a run larger than the memory (hk->memory_limit, or this
 * machine's; hk may be NULL) is refused before the scene is built (from the count), or
 * before the engine allocates (from the pairs within contact.detect_gap). S->series_row_bytes
 * is found from the series the output will have (run_series_row_bytes). S is cleared first;
 * free it with run_setup_free whatever the result. */
status run_setup_read(config *c, run_setup *S, const run_hooks *hk, diag *err);
void run_setup_free(run_setup *S);

/* hooks as the engines' notes */
engine_notes run_notes(const run_hooks *hk);

/* What a run is about to do, for the user (`cdlab run` and `cdlab check` print it). */
void run_announce(const run_setup *S, const run_hooks *hk);
/* Memory the run is estimated to need, in bytes (S->mem: the engine's figures), with the pairs
 * listed at the start (dense = 0), or with at least a dense packing's (dense = 1: a run that
 * starts loose may reach them). The dense figure is announced with the run beside the start's,
 * and a run whose dense figure exceeds the memory is refused. */
double run_memory_estimate(const run_setup *S, int dense);

/* The output's bytes, from the first step (W->step: a restart's) to the last: the snapshots'
 * datasets and the checkpoints', each with the start's contacts (they change as the run goes;
 * an engine without contacts_at_start has none at a new run's first snapshot), the last
 * checkpoint's copy (OUT.h5.checkpoint, while the run goes), and the series' (whole chunks).
 * Exact for those contact counts, the groups' and attributes' metadata apart. */
typedef struct output_bytes {
    long snapshots, checkpoints;
    double snapshot, checkpoint; /* one, with the start's contacts */
    double series, all;
} output_bytes;
output_bytes run_output_bytes(const run_setup *S);

/* The files of a run, checked before any is created (see run_setup.c); computes the FCLIB
 * export's file name into fclib_path. */
status run_check_paths(const config *c, const run_setup *S, const run_hooks *hk, char *fclib_path,
                       size_t n, diag *err);

#endif

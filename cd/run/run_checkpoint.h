/* Restart checkpoints (docs/output.md, /checkpoints): the world's state written by the
 * pipeline, the engine's by its table; read back with every value checked. Internal to the run
 * pipeline. */
#ifndef CDLAB_RUN_CHECKPOINT_H
#define CDLAB_RUN_CHECKPOINT_H

#include "run/run_output.h"

/* What defines the simulated system, stored with every checkpoint and compared on restart: a
 * checkpoint continues the same simulation or none. */
typedef struct state_def {
    double dt, dimension, friction;
    engine_constant k[ENGINE_CONSTANTS_MAX]; /* the engine's constants (engine_ops.constants) */
    int nk;
    uint64_t bodies, walls, box;
    uint64_t seed; /* system.seed: a restart continues the checkpoint's random stream */
} state_def;

state_def run_state_def(const run_setup *S);

/* The bytes of a checkpoint's datasets with pairs contact records (write_checkpoint's exactly,
 * the attributes' few kB apart; the engine says what its records take: checkpoint_bytes). */
double run_checkpoint_bytes(const run_setup *S, long pairs);
/* /checkpoints/NNNNNNNN of the current step, marked complete once on disk. */
status run_checkpoint_write(run_writer *w, const run_setup *S, const state_def *sd,
                            const engine_record *row, diag *err);
/* The same checkpoint written whole into a file of its own and renamed over OUT.h5.checkpoint
 * (outfile.h: the restart a kill inside HDF5's flush of the run's file cannot take). On failure
 * the older copy stays and nothing of the run's file has changed. */
status run_checkpoint_copy(run_writer *w, const run_setup *S, const state_def *sd,
                           const engine_record *row, diag *err);
/* Restores the last complete checkpoint of file into S (a world built from the same config)
 * after checking that the config describes the same system (sd): a corrupt or hostile file is
 * refused, never run. */
status run_checkpoint_read(const char *file, run_setup *S, const state_def *sd, diag *err);
/* The step and contact records of file's last complete checkpoint (for the banner, before
 * run_checkpoint_read reads and checks it all); 0 where they cannot be read. */
int run_checkpoint_peek(const char *file, long *step, long *contacts);

#endif

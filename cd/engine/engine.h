/* The engine interface: everything the run pipeline (run*.c) asks of an engine, as one table
 * of operations over the engine's own state, after SUNDIALS' {content, ops}. A registry
 * (cd/engines.c) maps system.mode to the table, as LAMMPS maps a style's name to its
 * class; the pipeline knows no engine by name. Adding an engine means one table and its files
 * (README, Layout).
 *
 * The world (common/world.h: particles, walls, time) belongs to the pipeline; an engine moves
 * it one step at a time and keeps what else it needs (solver state, contact history) in
 * content. Every sum over particles or contacts that a decision or the output uses (overlaps,
 * residuals, energies, stress) is taken inside the engine's step, row or contact operations,
 * so that a distributed run can replace those in one place per engine (the step's record may
 * be left as each rank's, for the run's agreement of the step to merge: record_by_rank).
 *
 * Order of the calls in a run (run.c):
 *   read -> [plan_export] -> header -> start, or checkpoint_read (restart) -> row ->
 *   { step -> row (every series_every steps) -> contact_count/contact (snapshots) ->
 *     checkpoint_write } -> free */
#ifndef CDLAB_ENGINE_H
#define CDLAB_ENGINE_H

#include "comm.h"
#include "config.h"
#include "engine/equiv.h"
#include "h5io.h"
#include "scene.h"
#include "world.h"
#include "xdmf.h"

/* One row of the per-step diagnostics that every engine gives (docs/output.md, /series). */
typedef struct engine_record {
    int sweeps;    /* solver sweeps in the step (0: no iterative solver) */
    int converged; /* the solver's criterion met (1 without an iterative solver) */
    int n_contacts, n_active, n_sliding;
    double residual; /* the solver's residual, or the engine's own measure (DEM: the energy
                        ledger's relative residual) */
    /* residual is an energy balance that should close (DEM's ledger, not under a kinematic
     * drive): the run warns once where its size passes RUN_BALANCE_WARN, and /summary keeps
     * the largest (energy_residual_max) */
    int balance;
    double mean_overlap, max_overlap;
    double solve_seconds; /* wall time in the iterative solver */
    long rebuilds;        /* neighbour-list rebuilds so far (0: no neighbour list) */
    /* contacts the engine's detection missed in the last step (pairs that met with no force:
     * CD's count_missed; 0 where none can be), and their largest overlap */
    long missed;
    double missed_overlap;
} engine_record;

/* A distributed record's parts over the ranks: n_contacts, n_active, the overlap summed over
 * the active pairs and n_sliding (sums), max_overlap (the maximum), into v with their
 * reduction's ops; and the record made from their reduction. */
#define ENGINE_RECORD_PARTS 5
void engine_record_parts(const engine_record *rec, double *v, comm_op *ops);
void engine_record_merge(engine_record *rec, const double *v);

/* Lines for the user: message (banner, notices), result (shown even when messages are off). */
typedef struct engine_notes {
    void (*message)(void *user, const char *line);
    void (*result)(void *user, const char *line);
    void *user;
} engine_notes;
void engine_say(const engine_notes *n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void engine_say_result(const engine_notes *n, const char *line);

/* A constant of an engine's that defines the simulated system (its contact law's stiffness,
 * say): every checkpoint records it as attribute `attr` and a restart compares it, naming
 * `keys` (the config keys that set it) where it differs. */
#define ENGINE_CONSTANTS_MAX 16
typedef struct engine_constant {
    const char *attr, *keys;
    double value;
    /* an older checkpoint may lack it: continued without comparing it, and the restart's
     * banner names it */
    int optional;
} engine_constant;

typedef struct engine engine;

/* The warnings a run gives once (with --quiet too) about what its steps' records say: a step
 * whose iterative solver did not converge (engine_record.converged), pairs the detection
 * missed (missed), an energy balance that does not close (balance, residual). */
typedef enum engine_warning {
    ENGINE_WARN_UNCONVERGED,
    ENGINE_WARN_MISSED,
    ENGINE_WARN_BALANCE
} engine_warning;

/* An engine's peak memory (measured on lattices of 10^5 and 10^6 particles and rounded up):
 * base bytes whatever the size (the program, its libraries, HDF5's caches), per_particle bytes
 * per particle with pairs_per_particle listed pairs each (a dense packing's contacts and
 * neighbours: a run that starts loose may reach them), and per_pair bytes for each listed pair
 * beyond those (a large contact.detect_gap lists many more). */
typedef struct engine_memory {
    double base, per_particle, pairs_per_particle, per_pair;
} engine_memory;

/* An engine's table: its identity, and its operations in four groups by what asks for them
 * (SUNDIALS groups its N_Vector ops so): setting a run up, stepping it, reporting it (the
 * output file), and persisting it (checkpoints). [required]: the pipeline calls it
 * unconditionally; [optional]: NULL says the engine has none, and the pipeline does without. */
typedef struct engine_ops {
    const char *name;    /* system.mode */
    const char *title;   /* in messages: "contact dynamics", "DEM" */
    const char *program; /* the output's root attribute program */
    int iterative;       /* an iterative solver: its sweeps are shown in the progress line */
    /* its start lists the contacts (a neighbour list); 0: a new run's first snapshot has none
     * (an engine that detects its contacts in the steps; a restart's come with its
     * checkpoint) */
    int contacts_at_start;
    /* bytes from which the C library maps a buffer and gives it back when it is freed (glibc's
     * M_MMAP_THRESHOLD, set before the run allocates; 0: the library's default, which rises
     * to each mapped buffer freed, up to 32 MiB, and then keeps up to twice that of freed heap;
     * the setting is the process's: a later run in it keeps it) */
    long mmap_threshold;
    /* its config sections (NULL-terminated); a run of another engine skips them, checking
     * their keys against docs/config.md */
    const char *const *sections;

    struct engine_setup_ops {
        /* [required] peak memory (rough, from the benchmarks), for refusing a run that cannot
         * fit: before the scene is built from the particle count, after it with the pairs it
         * lists. c: the config, for the options that change it (its values unchecked yet: a
         * bad one counts as its default here and is refused by read) */
        engine_memory (*memory)(config *c, int dimension);
        /* [required] reads its sections for a run on world W: *e->content set; note: appended
         * to the notice about another engine's sections when this config also describes that
         * engine's run (twin: its description, from that engine's read_other; the engine may
         * set its time_ratio) */
        status (*read)(engine *e, config *c, const world *W, const scene_info *info,
                       equiv_twin *twin, char *note, size_t note_n, diag *err);
        /* [optional] its sections in a run of another engine: their values checked, nothing
         * kept but what the equivalence needs (twin). NULL: only their key names are checked */
        status (*read_other)(config *c, equiv_twin *twin, diag *err);
        /* [optional] why the engine's step is serial ("the random sweep is serial"); NULL (or
         * a NULL answer) when threads may pay (the run then measures, run_threads.c) */
        const char *(*serial_reason)(const engine *e, char *buf, size_t n);
        /* [required] the banner's lines about the engine (solver or contact law, figures to
         * check) */
        void (*announce)(const engine *e, const world *W, const scene_info *info,
                         const engine_notes *notes);
        /* [required] "about 2 s" on one thread for steps steps (benchmark rates; rough) of the
         * system W with pairs pairs listed at the start (scene_info.start_pairs) */
        void (*estimate)(const engine *e, const world *W, long steps, long pairs, char *buf,
                         size_t n);
        /* [required] frees e->content (safe on an engine whose read failed) */
        void (*free)(engine *e);
    } setup;

    struct engine_step_ops {
        /* [required] a new run: the state at t = 0 (forces of the initial contacts) and its
         * record */
        status (*start)(engine *e, world *W, engine_record *rec, diag *err);
        /* [required] one step: W->step and W->t advance by one */
        status (*step)(engine *e, world *W, engine_record *rec, diag *err);
        /* a distributed step leaves rec's counts and overlaps (ENGINE_RECORD_PARTS) as this
         * rank's own, for the run's agreement of the step to merge in the same reduction
         * (engine_record_parts, engine_record_merge); 0: the step merges them itself */
        int record_by_rank;
        /* [optional] write this step's contact problem (FCLIB) to path between solve and
         * update, with the residual as a result line; NULL: no contact problem to export */
        status (*plan_export)(engine *e, long step, const char *path, const char *config_file,
                              const engine_notes *notes, diag *err);
    } step;

    struct engine_report_ops {
        /* [required] its groups, attributes and series in the output's header */
        status (*header)(engine *e, h5out *h, const world *W, const scene_info *info, diag *err);
        /* [required] its series' values of this row (after its header's series) */
        status (*row)(engine *e, h5out *h, const world *W, diag *err);
        /* [required] the contacts of a snapshot: how many, and contact k with the geometry of
         * now and its force on body 1 in c->R */
        int (*contact_count)(const engine *e, const world *W);
        void (*contact)(const engine *e, const world *W, int k, contact *c);
        /* [optional] per-particle arrays of its own in a snapshot, in group g (after the
         * pipeline's), and the list of them for the XDMF sidecar (name = "" ends it) */
        status (*snapshot)(const engine *e, h5out *h, const char *g, const world *W, diag *err);
        const xdmf_field *(*snapshot_fields)(const engine *e);
        /* [optional] before every output (a row, snapshot or checkpoint; collective): what
         * only outputs need (an energy ledger and rec's residual), and the world the output
         * reports: this process's W, or in a distributed run the state gathered on rank 0
         * (*view NULL on the other ranks), with rec's figures made as one process makes them
         * where the gathered state allows; NULL: nothing to make, and one process only */
        status (*gather)(engine *e, world *W, world **view, engine_record *rec, diag *err);
        /* [optional] the text of warning kind (after "warning: ") for the record rec of step
         * `step` (the engine says what its keys and figures mean); NULL: its records never
         * ask for one */
        void (*warning)(const engine *e, engine_warning kind, const world *W, long step,
                        const engine_record *rec, char *buf, size_t n);
    } report;

    struct engine_persist_ops {
        /* [optional] its constants that define the system, into k (at most
         * ENGINE_CONSTANTS_MAX): how many; NULL: none */
        int (*constants)(const engine *e, engine_constant *k);
        /* [optional] constant k packs options (a restart changed it from there to here): the
         * key of the option that differs, with its two values, into buf; 0 where it cannot
         * say */
        int (*constant_change)(const engine *e, int k, double there, double here, char *buf,
                               size_t n);
        /* [required] its state in checkpoint group g (the pipeline writes the world's), and
         * back: the world is restored first (its step included); a corrupt or hostile file is
         * refused, never run */
        status (*checkpoint_write)(const engine *e, h5out *h, const char *g, const world *W,
                                   diag *err);
        status (*checkpoint_read)(engine *e, h5in *h, const char *g, const char *file, world *W,
                                  diag *err);
        /* [required] the bytes checkpoint_write stores with pairs contact records (for the
         * output's size announced before the run: the start's pairs stand in for the run's) */
        double (*checkpoint_bytes)(const engine *e, const world *W, long pairs);
    } persist;
} engine_ops;

struct engine {
    const engine_ops *ops;
    void *content;
};

/* The registered engines (NULL-terminated): cd/engines.c, one line per engine. */
extern const engine_ops *const engine_registry[];
/* Their names (system.mode's values), in registry order, NULL-terminated in names[max]. */
#define ENGINE_MAX 16
int engine_list_names(const char **names, int max);
/* The engine of system.mode = name, or NULL. */
const engine_ops *engine_find(const char *name);

/* The stress series every engine writes (docs/output.md): /series/stress, the Love-Weber sum
 * over the particle-particle contacts, and /series/stress_walls, the contacts with walls,
 * pistons and cylinders (f on the particle, l from its centre to the contact point), both
 * (steps+1) x 3 x 3 with the attribute volume (0: the particles' bounding box). force_note ends
 * the definition of /series/stress (NULL: none). ser[0], ser[1]: their handles. */
status engine_stress_series(h5out *h, const char *force_note, double volume, int ser[2], diag *err);
/* One row of both: sigma[0] the particles', sigma[1] the walls'. */
status engine_stress_row(h5out *h, const int ser[2], double sigma[2][3][3], diag *err);

#endif

/* Check suites of cdlab, one per module, and shared helpers. */
#ifndef CDLAB_SUITES_H
#define CDLAB_SUITES_H

#include <check.h>

#include "nscd/cd.h"
#include "run/run.h"
#include "config.h"
#include "dem/dem_config.h"
#include "scene.h"

/* The time Check gives each test before it calls it hung: far above any test's time on a busy
 * machine (the quick suite's slowest tests take about 20 s alone, and a few times that beside
 * two CPU-bound jobs on the 2-core machine; a suite that failed for lack of speed taught its
 * users to ignore it), so that only a hang reaches it. The test cases that set a time set this
 * one, and it is CK_DEFAULT_TIMEOUT for the others; CK_DEFAULT_TIMEOUT and
 * CK_TIMEOUT_MULTIPLIER set by the caller still win. */
#define TEST_TIMEOUT_SECONDS 1800

/* Defined in the sanitizers' builds (make check-asan, make check-tsan), whose programs reserve
 * shadow memory and hold freed blocks in quarantine: resident-memory bounds are wider there. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CDLAB_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define CDLAB_SANITIZED 1
#endif
#endif

Suite *pcg32_suite(void);
Suite *shock_law_suite(void);
Suite *config_suite(void);
Suite *cd_suite(void);
Suite *solvers_suite(void);
Suite *io_suite(void);
Suite *dem_contact_suite(void);
Suite *dem_suite(void);
Suite *experiments_suite(void);
Suite *periodic_suite(void);
Suite *restart_suite(void);
Suite *fclib_suite(void);
Suite *fuzz_regress_suite(void);
Suite *safety_suite(void);
Suite *python_suite(void);
Suite *engine_suite(void);
Suite *dem_deform_suite(void);
Suite *dem_bond_suite(void);
Suite *ddem_suite(void);
Suite *mpi_suite(void);
Suite *decomp_suite(void);
Suite *xsum_suite(void);
Suite *exchange_suite(void);

/* Builds a world and solver parameters (p NULL: the world alone) from INI text; fails the test
 * on error. */
void build_from_string(const char *ini, world *W, scene_info *info, cd_params *p);
/* A world with its solver, built from INI text, for tests that step it themselves. */
typedef struct sim {
    world W;
    scene_info info;
    cd_params p;
    cd_solver S;
    cd_stats st;
} sim;
void sim_open(sim *s, const char *ini, uint64_t seed);
void sim_close(sim *s);
/* n steps; fails the test on any error. */
void sim_steps(sim *s, long n);

/* Reads INI text (named name in messages) as a run would: the scene, and with dem the [dem]
 * section; everything freed; returns the status (err: its message). */
status read_config_text(const char *ini, const char *name, int dem, diag *err);

/* The same for DEM mode. */
typedef struct dsim {
    world W;
    scene_info info;
    dem_setup d;
    dem_solver S;
    dem_stats st;
} dsim;
void dsim_open(dsim *s, const char *ini);
/* Contacts and forces at t = 0 (dem_step does it itself when not called). */
void dsim_start(dsim *s);
/* n steps, then the energy ledger of the state reached (s->S.E). */
void dsim_steps(dsim *s, long n);
void dsim_close(dsim *s);

/* Runs INI text (named name in messages) through run_simulation into a fresh temporary file whose
 * path (32 bytes) is returned in path; the caller unlinks it. */
status run_to_temp(const char *ini, const char *name, char *path, run_summary *sum, diag *err);
/* The same, the run required to succeed (the config's name and the message on failure). */
void run_ok(const char *ini, const char *name, char *path);
/* The same, continuing from the last checkpoint of restart (NULL: a new run). */
status run_to_temp_from(const char *ini, const char *name, const char *restart, char *path,
                        run_summary *sum, diag *err);

/* Removes an output file and its XDMF sidecar (or any file: a missing sidecar is fine). */
void remove_output(const char *path);
/* A run that stopped at a failed step: its file holds a series row for every step up to and
 * including that one, and its summary's status says why (status_part); the file is removed. */
void assert_stopped_file(const char *path, const run_summary *sum, const char *status_part);

/* What particles.order decided for the scene of config text ini (built, then freed): auto's
 * choice (scene_info.order_auto), whether the particles were renumbered (input_index set),
 * the input's storage_spread and the resolved particles.order. */
typedef struct order_taken {
    int automatic, renumbered;
    double spread;
    char resolved[256];
} order_taken;
order_taken scene_order_taken(const char *ini);

/* The datasets named in names (NULL-ended) of HDF5 file b equal a's, bit for bit, and none is
 * empty. */
void same_data(const char *a, const char *b, const char *const *names);

/* The two worlds' particles have the same count and the same positions, velocities and angular
 * velocities, bit for bit. */
void same_particles(const world *a, const world *b);

/* The value config c records for NAME ("section.key") in /parameters; "" when none. */
const char *resolved_value(const config *c, const char *name);

/* Makes a fresh file from the mkstemp template path (its XXXXXX replaced) holding text; fails
 * the test if it cannot. The caller unlinks it. */
void temp_text_file(char *path, const char *text);

/* Path of the cdlab binary for command-line tests (env CDLAB_BIN, default ../build/cdlab). */
const char *cdlab_bin(void);

/* Runs cmd through the shell: the first n - 1 bytes of its standard output into buf (a string;
 * the rest is read and dropped), its exit status returned (-1 when it did not exit). */
int run_capture(const char *cmd, char *buf, size_t n);

#endif

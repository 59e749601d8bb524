/* The run's output file (docs/output.md): header, series rows, snapshots and the summary, with
 * the XDMF sidecar for ParaView. The engine adds its own groups and series through its table
 * (header, row) and its contacts to snapshots (contact_count, contact). Internal to the run
 * pipeline. */
#ifndef CDLAB_RUN_OUTPUT_H
#define CDLAB_RUN_OUTPUT_H

#include "outfile.h"
#include "run/run_setup.h"
#include "xdmf.h"

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
    SER_PIMG,
    SER_PIST_X,
    SER_PIST_V,
    SER_PIST_F,
    SER_COUNT
};

typedef struct run_writer {
    h5out *h;
    int ser[SER_COUNT];
    int n_pistons;
    int *piston_idx;
    int probe_images; /* a periodic box with probes: /series/probe_image is written */
    double *row;      /* scratch for one row of the widest series */
    xdmf *xmf;        /* the ParaView sidecar */
    /* what the file holds for sure: the steps of its last flushed snapshot and of its last
     * complete checkpoint (-1: none); the step of its last series row (-1: none) */
    long snapshot_step, checkpoint_step, row_step;
    /* the checkpoint's copy (outfile.h: OUT.h5.checkpoint) and the step it holds (-1: none);
     * of NULL: no copy written (ranks other than 0) */
    const outfile *of;
    long copy_step;
} run_writer;

/* The process's peak resident memory so far in KiB (VmHWM: its own address space), -1 where
 * unknown. */
long run_peak_rss_kib(void);
/* Provenance, parameters, the engine's groups and series, the common series, the walls. */
status run_output_header(run_writer *w, config *c, run_setup *S, const run_hooks *hk, diag *err);
/* One row of every series: the engine's, then the common ones from rec. A kinetic energy that
 * is not finite stops the run (CDLAB_ERR_NUMERIC) after its row is written. */
status run_output_row(run_writer *w, run_setup *S, const engine_record *rec, diag *err);
/* /snapshots/NNNNNNNN: the particles and the engine's contacts; flushed. */
status run_output_snapshot(run_writer *w, const run_setup *S, diag *err);
/* The bytes of a snapshot's datasets with this many contacts (run_output_snapshot's, exactly:
 * they are stored uncompressed; the groups' and attributes' few kB not counted). */
double run_snapshot_bytes(const run_setup *S, long contacts);
/* The bytes of a row of all the series (run_output_header's, the engine's among them: its
 * header is called with a writer that writes nothing, h5out_create_counter, and its series
 * indices are set again by the run's). */
status run_series_row_bytes(run_setup *S, double *bytes, diag *err);
/* /summary: how the run ended (status: "completed" or the error message) and its figures. */
status run_output_summary(run_writer *w, const char *status_text, const run_summary *sum,
                          long rebuilds, diag *err);
void run_output_free(run_writer *w);

double run_now_seconds(void);

#endif

/* The run's output file: docs/output.md describes every group, series and attribute. */
#include "run/run_output.h"

#include "grow.h"

#include "comm.h"

#include "build_info.h"
#include "parallel.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

double run_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The root's attributes: the program, the config, the overrides and command as given. */
static status write_root(h5out *h, const config *c, const run_setup *S, const run_hooks *hk,
                         const char *overrides, diag *err)
{
    status s;
    if ((s = h5out_attr_string(h, "/", "program", S->E.ops->program, err)) ||
        (s = h5out_attr_string(h, "/", "config_file", c->file, err)) ||
        (s = h5out_attr_string(h, "/", "config_text", c->text ? c->text : "", err)) ||
        (s = h5out_attr_string(h, "/", "overrides", overrides, err)) ||
        (s = h5out_attr_string(h, "/", "command_line",
                               hk && hk->command_line ? hk->command_line : "", err)) ||
        (s = h5out_attr_uint(h, "/", "seed", S->info.seed, err)))
        return s;
    return h5out_attr_string(h, "/", "units", "consistent user units (none implied)", err);
}

/* The root's attributes, /parameters (every key as resolved) and /build. */
static status write_provenance(h5out *h, config *c, const run_setup *S, const run_hooks *hk,
                               diag *err)
{
    status s;
    char buf[128];
    /* the --set overrides, as given ("section.key=value", one a line) */
    char *overrides = config_overrides(c);
    if (!overrides || c->res_lost) {
        free(overrides);
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory recording the run's parameters");
    }
    s = write_root(h, c, S, hk, overrides, err);
    free(overrides);
    if (s || (s = h5out_group(h, "/parameters", err)) || (s = h5out_group(h, "/build", err)))
        return s;
    /* particles.order = spatial: the input index of each particle id */
    if (S->info.input_index &&
        (s = h5out_array(h, "/input_index", H5IO_INT32, 1, (long[]){S->info.n_input},
                         S->info.input_index, err)))
        return s;
    for (int k = 0; k < c->nres; k++)
        if ((s = h5out_attr_string(h, "/parameters", c->res[k].name, c->res[k].value, err)))
            return s;
    char hdf5[32];
    h5io_library_version(hdf5, sizeof hdf5);
    time_t tt = time(NULL);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", gmtime(&tt));
    if ((s = h5out_attr_string(h, "/build", "version", cdlab_version, err)) ||
        (s = h5out_attr_string(h, "/build", "hdf5", hdf5, err)) ||
        (s = h5out_attr_string(h, "/build", "git_commit", cdlab_git_commit, err)) ||
        (s = h5out_attr_string(h, "/build", "compiler", cdlab_compiler, err)) ||
        (s = h5out_attr_string(h, "/build", "cflags", cdlab_cflags, err)) ||
        (s = h5out_attr_int(h, "/build", "threads", cdlab_threads(), err)) ||
        (s = h5out_attr_string(h, "/build", "threads_chosen_by", S->threads_why, err)) ||
        (s = h5out_attr_int(h, "/build", "results_epoch", CDLAB_RESULTS_EPOCH, err)))
        return s;
    return h5out_attr_string(h, "/build", "run_started", buf, err);
}

/* The series every engine has: time, solver figures, contacts, kinetic energy, probes. */
static status define_series(run_writer *w, const run_setup *S, diag *err)
{
    long np = S->out.n_probes, tail3[2] = {np, 3};
    struct {
        int id;
        const char *path;
        h5type t;
        int rank;
        const long *tail;
    } defs[] = {
        {SER_T, "/series/t", H5IO_DOUBLE, 0, NULL},
        {SER_SWEEPS, "/series/sweeps", H5IO_INT32, 0, NULL},
        {SER_CONV, "/series/converged", H5IO_INT32, 0, NULL},
        {SER_RES, "/series/residual", H5IO_DOUBLE, 0, NULL},
        {SER_MEANOV, "/series/mean_overlap", H5IO_DOUBLE, 0, NULL},
        {SER_MAXOV, "/series/max_overlap", H5IO_DOUBLE, 0, NULL},
        {SER_KE, "/series/kinetic_energy", H5IO_DOUBLE, 0, NULL},
        {SER_NC, "/series/contacts", H5IO_INT32, 0, NULL},
        {SER_NA, "/series/active_contacts", H5IO_INT32, 0, NULL},
        {SER_NS, "/series/sliding_contacts", H5IO_INT32, 0, NULL},
        {SER_PPOS, "/series/probe_position", H5IO_DOUBLE, 2, tail3},
        {SER_PVEL, "/series/probe_velocity", H5IO_DOUBLE, 2, tail3},
    };
    status s;
    for (size_t k = 0; k < sizeof defs / sizeof defs[0]; k++)
        if ((s = h5out_series(w->h, defs[k].path, defs[k].t, defs[k].rank, defs[k].tail,
                              &w->ser[defs[k].id], err)))
            return s;
    /* in a periodic box the probes' positions are wrapped: their crossings, so that a probe's
     * path can be unwrapped (position + image x period), as the snapshots' image */
    const int *per = S->W.P.box.periodic;
    w->probe_images = np > 0 && (per[0] || per[1] || per[2]);
    if (w->probe_images && (s = h5out_series(w->h, "/series/probe_image", H5IO_INT32, 2, tail3,
                                             &w->ser[SER_PIMG], err)))
        return s;
    return h5out_array(w->h, "/series/probe_ids", H5IO_INT32, 1, (long[]){np > 0 ? np : 0},
                       S->out.probes, err);
}

/* The pistons' series (position, velocity, contact force), one column per piston. */
static status define_piston_series(run_writer *w, const world *W, diag *err)
{
    w->piston_idx = malloc((size_t)(W->n_walls > 0 ? W->n_walls : 1) * sizeof *w->piston_idx);
    if (!w->piston_idx)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    for (int k = 0; k < W->n_walls; k++)
        if (W->walls[k].kind == WALL_PISTON)
            w->piston_idx[w->n_pistons++] = k;
    if (w->n_pistons == 0)
        return CDLAB_OK;
    long tp[1] = {w->n_pistons};
    status s;
    if ((s = h5out_series(w->h, "/series/piston_position", H5IO_DOUBLE, 1, tp, &w->ser[SER_PIST_X],
                          err)) ||
        (s = h5out_series(w->h, "/series/piston_velocity", H5IO_DOUBLE, 1, tp, &w->ser[SER_PIST_V],
                          err)) ||
        (s = h5out_series(w->h, "/series/piston_force", H5IO_DOUBLE, 1, tp, &w->ser[SER_PIST_F],
                          err)))
        return s;
    char names[4096] = "";
    for (int k = 0; k < w->n_pistons; k++) {
        strncat(names, k ? "," : "", sizeof names - strlen(names) - 1);
        strncat(names, W->walls[w->piston_idx[k]].name, sizeof names - strlen(names) - 1);
    }
    return h5out_attr_string(w->h, "/series/piston_position", "pistons", names, err);
}

/* /walls/K: each wall's kind, point, direction and radius, for plotting and analysis. */
static status write_walls(h5out *h, const world *W, diag *err)
{
    static const char *kinds[] = {"plane", "piston", "cylinder"};
    status s;
    for (int k = 0; k < W->n_walls; k++) {
        const wall *wl = &W->walls[k];
        char path[64], point[80], dir[80];
        snprintf(path, sizeof path, "/walls/%d", k);
        snprintf(point, sizeof point, "%s/point", path);
        snprintf(dir, sizeof dir, "%s/direction", path);
        long three = 3;
        if ((s = h5out_group(h, path, err)) ||
            (s = h5out_attr_string(h, path, "name", wl->name, err)) ||
            (s = h5out_attr_string(h, path, "kind", kinds[wl->kind], err)) ||
            (s = h5out_array(h, point, H5IO_DOUBLE, 1, &three, &wl->p, err)) ||
            (s = h5out_array(h, dir, H5IO_DOUBLE, 1, &three, &wl->n, err)) ||
            (s = h5out_attr_double(h, path, "radius", wl->radius, err)))
            return s;
    }
    return CDLAB_OK;
}

/* A distributed run's ranks and [parallel] settings (one process: nothing). */
static status write_parallel(h5out *h, const run_setup *S, diag *err)
{
    if (comm_size() == 1)
        return CDLAB_OK;
    status s;
    if ((s = h5out_group(h, "/parallel", err)) ||
        (s = h5out_attr_int(h, "/parallel", "ranks", comm_size(), err)) ||
        (s = h5out_attr_double(h, "/parallel", "rebalance", S->info.par.rebalance, err)))
        return s;
    return h5out_attr_int(h, "/parallel", "rebalance_every", S->info.par.rebalance_every, err);
}

status run_output_header(run_writer *w, config *c, run_setup *S, const run_hooks *hk, diag *err)
{
    status s;
    if ((s = write_provenance(w->h, c, S, hk, err)) || (s = write_parallel(w->h, S, err)) ||
        (s = S->E.ops->report.header(&S->E, w->h, &S->W, &S->info, err)) ||
        (s = define_series(w, S, err)) || (s = define_piston_series(w, &S->W, err)))
        return s;
    size_t widest = (size_t)(3 * S->out.n_probes + w->n_pistons + 1);
    w->row = malloc(widest * sizeof *w->row);
    if (!w->row)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    return write_walls(w->h, &S->W, err);
}

status run_series_row_bytes(run_setup *S, double *bytes, diag *err)
{
    run_writer w = {0};
    status s = h5out_create_counter(&w.h, err);
    if (s == CDLAB_OK && (s = write_parallel(w.h, S, err)) == CDLAB_OK &&
        (s = S->E.ops->report.header(&S->E, w.h, &S->W, &S->info, err)) == CDLAB_OK &&
        (s = define_series(&w, S, err)) == CDLAB_OK &&
        (s = define_piston_series(&w, &S->W, err)) == CDLAB_OK)
        *bytes = h5out_series_row_bytes(w.h);
    diag ignored;
    h5out_close(w.h, &ignored);
    run_output_free(&w);
    return s;
}

/* The probes' positions and velocities, the pistons' position, velocity and force. */
static status append_probes_pistons(run_writer *w, const world *W, const output_params *o,
                                    diag *err)
{
    h5out *h = w->h;
    status s;
    for (int pass = 0; pass < 2; pass++) {
        for (int k = 0; k < o->n_probes; k++) {
            vec3 x = pass == 0 ? W->P.x[o->probes[k]] : W->P.v[o->probes[k]];
            w->row[3 * k] = x.x, w->row[3 * k + 1] = x.y, w->row[3 * k + 2] = x.z;
        }
        if ((s = h5out_series_append(h, w->ser[pass == 0 ? SER_PPOS : SER_PVEL], w->row, err)))
            return s;
    }
    if (w->probe_images) {
        int32_t *img = (int32_t *)w->row; /* room for 3 doubles per probe */
        for (int k = 0; k < o->n_probes; k++)
            for (int a = 0; a < 3; a++)
                img[3 * k + a] = W->P.image[3 * o->probes[k] + a];
        if ((s = h5out_series_append(h, w->ser[SER_PIMG], img, err)))
            return s;
    }
    if (w->n_pistons == 0)
        return CDLAB_OK;
    for (int pass = 0; pass < 3; pass++) {
        for (int k = 0; k < w->n_pistons; k++) {
            const wall *wl = &W->walls[w->piston_idx[k]];
            w->row[k] = pass == 0 ? wl->s : pass == 1 ? wl->u : wl->contact_force;
        }
        if ((s = h5out_series_append(h, w->ser[SER_PIST_X + pass], w->row, err)))
            return s;
    }
    return CDLAB_OK;
}

status run_output_row(run_writer *w, run_setup *S, const engine_record *rec, diag *err)
{
    h5out *h = w->h;
    const world *W = &S->W;
    status s;
    int32_t sw = rec->sweeps, cv = rec->converged, nc = rec->n_contacts, na = rec->n_active,
            ns = rec->n_sliding;
    double ke = world_kinetic_energy(W);
    status bad = isfinite(ke) ? CDLAB_OK : world_energy_error(W, err);
    if ((s = S->E.ops->report.row(&S->E, h, W, err)) ||
        (s = h5out_series_append(h, w->ser[SER_T], &W->t, err)) ||
        (s = h5out_series_append(h, w->ser[SER_SWEEPS], &sw, err)) ||
        (s = h5out_series_append(h, w->ser[SER_CONV], &cv, err)) ||
        (s = h5out_series_append(h, w->ser[SER_RES], &rec->residual, err)) ||
        (s = h5out_series_append(h, w->ser[SER_MEANOV], &rec->mean_overlap, err)) ||
        (s = h5out_series_append(h, w->ser[SER_MAXOV], &rec->max_overlap, err)) ||
        (s = h5out_series_append(h, w->ser[SER_KE], &ke, err)) ||
        (s = h5out_series_append(h, w->ser[SER_NC], &nc, err)) ||
        (s = h5out_series_append(h, w->ser[SER_NA], &na, err)) ||
        (s = h5out_series_append(h, w->ser[SER_NS], &ns, err)) ||
        (s = append_probes_pistons(w, W, &S->out, err)))
        return s;
    w->row_step = W->step;
    return bad; /* a non-finite kinetic energy stops the run, its row written */
}

/* bytes of a value of type t */
static size_t type_bytes(h5type t)
{
    return t == H5IO_INT32 ? 4 : t == H5IO_UINT8 ? 1 : 8;
}

/* The particles' arrays of a snapshot: name, type, values per particle (run_snapshot_bytes
 * counts them); the data in snapshot_particles, in this order. */
static const struct {
    const char *name;
    h5type type;
    int width;
} snap_particle_ds[] = {
    {"position", H5IO_DOUBLE, 3},
    {"velocity", H5IO_DOUBLE, 3},
    {"angular_velocity", H5IO_DOUBLE, 3},
    {"orientation", H5IO_DOUBLE, 4},
    {"radius", H5IO_DOUBLE, 1},
    {"mass", H5IO_DOUBLE, 1},
    {"id", H5IO_INT32, 1},
    /* periodic image counts: unwrapped position = position + image * period */
    {"image", H5IO_INT32, 3},
};
#define SNAP_PARTICLE_DS (sizeof snap_particle_ds / sizeof snap_particle_ds[0])

/* 1 where some particle is frozen: its snapshots have `frozen` too (so that a run started from
 * one keeps them; without frozen particles the snapshots are as they were before it) */
static int any_frozen(const particles *P)
{
    for (int i = 0; i < P->n; i++)
        if (P->frozen[i])
            return 1;
    return 0;
}

static status snapshot_particles(h5out *h, const char *g, const particles *P, diag *err)
{
    const void *data[SNAP_PARTICLE_DS] = {P->x, P->v, P->w, P->q, P->r, P->m, P->id, P->image};
    char path[128];
    status s;
    for (size_t k = 0; k < SNAP_PARTICLE_DS; k++) {
        long dims[2] = {P->n, snap_particle_ds[k].width};
        snprintf(path, sizeof path, "%s/%s", g, snap_particle_ds[k].name);
        if ((s = h5out_array(h, path, snap_particle_ds[k].type, dims[1] > 1 ? 2 : 1, dims, data[k],
                             err)))
            return s;
    }
    if (!any_frozen(P))
        return CDLAB_OK;
    snprintf(path, sizeof path, "%s/frozen", g);
    return h5out_array(h, path, H5IO_UINT8, 1, (long[]){P->n}, P->frozen, err);
}

/* The contacts of a snapshot made and written at a time: 4,096 are 0.5 MB of records and 0.2 MB
 * of rows, small beside a large run's own memory (the slab's size and its measured peaks are in
 * bench/PROFILE.md) */
#define SNAP_ROWS 4096
enum { SC_PAIR, SC_NORMAL, SC_FORCE, SC_GAP, SC_MAG, SC_ENDS, SC_LINE, SC_N };

/* Row of dataset d for contact c (ends: two rows of 3, line: the pair of endpoint rows of
 * contact k). */
static void contact_row(const world *W, int d, long k, const contact *c, void *out)
{
    const particles *P = &W->P;
    double *o = out;
    switch (d) {
    case SC_PAIR:
        ((int32_t *)out)[0] = c->i, ((int32_t *)out)[1] = c->j;
        break;
    case SC_NORMAL:
        o[0] = c->n.x, o[1] = c->n.y, o[2] = c->n.z;
        break;
    case SC_FORCE:
        o[0] = c->R.x, o[1] = c->R.y, o[2] = c->R.z;
        break;
    case SC_GAP:
        o[0] = c->gap;
        break;
    case SC_MAG:
        o[0] = v3_norm(c->R);
        break;
    case SC_ENDS: {
        /* body 0's end: the image of its centre nearest body 1 (x_j minus the minimum-image
         * separation), or the point of the wall's surface nearest body 1 (x_j - (r_j + g) n),
         * whatever the lever arms */
        vec3 xj = P->x[c->j];
        vec3 x0 = c->i >= 0 ? v3_sub(xj, pbox_delta(&P->box, P->x[c->i], xj))
                            : v3_axpy(-(P->r[c->j] + c->gap), c->n, xj);
        o[0] = x0.x, o[1] = x0.y, o[2] = x0.z, o[3] = xj.x, o[4] = xj.y, o[5] = xj.z;
        break;
    }
    case SC_LINE:
        ((int32_t *)out)[0] = (int32_t)(2 * k), ((int32_t *)out)[1] = (int32_t)(2 * k + 1);
        break;
    }
}

/* The contacts' datasets of a snapshot (run_snapshot_bytes counts them). */
static const struct {
    const char *name;
    h5type type;
    int rank, width; /* values per contact */
} snap_contact_ds[SC_N] = {{"pair", H5IO_INT32, 2, 2},
                           {"normal", H5IO_DOUBLE, 2, 3},
                           {"force", H5IO_DOUBLE, 2, 3},
                           {"gap", H5IO_DOUBLE, 1, 1},
                           {"force_magnitude", H5IO_DOUBLE, 1, 1},
                           {"endpoints", H5IO_DOUBLE, 2, 6},
                           {"line", H5IO_INT32, 2, 2}};

/* The contacts of a snapshot, from the engine: the geometry of now, once per contact (an
 * engine may not keep the normal of pairs that are apart up to date), the force on body 1, and the
 * lines for viewers: body 0's end of the contact (its centre's nearest periodic image, or the
 * contact point on a wall) and body 1's centre, line k joining rows 2k, 2k+1. Each dataset is
 * written whole before the next is made, as whole arrays were (made all at once, the datasets'
 * metadata, half written when a disk filled up, left the file unreadable back to its last
 * snapshot: tests/check_safety.c), in slabs of SNAP_ROWS contacts (the whole arrays, 120 bytes
 * per contact, made a large run's peak memory).
 * Up to SNAP_ROWS contacts the records are made once; beyond, once per dataset and slab (the
 * memory bound costs a larger snapshot some time). */
static status snapshot_contacts(h5out *h, const char *g, const run_setup *S, diag *err)
{
    const world *W = &S->W;
    long nc = S->E.ops->report.contact_count(&S->E, W);
    size_t m = (size_t)(nc < SNAP_ROWS ? (nc > 0 ? nc : 1) : SNAP_ROWS);
    int one_slab = nc <= SNAP_ROWS;
    double *buf = malloc(m * 6 * sizeof *buf); /* the widest row: 6 doubles */
    contact *cs = big_alloc(m * sizeof *cs);   /* contact records are 64-byte aligned */
    status st =
        buf && cs ? CDLAB_OK : diag_set(err, CDLAB_ERR_NOMEM, "out of memory writing a snapshot");
    for (long q = 0; q < nc && one_slab && st == CDLAB_OK; q++)
        S->E.ops->report.contact(&S->E, W, (int)q, &cs[q]);
    char path[128];
    for (int d = 0; d < SC_N && st == CDLAB_OK; d++) {
        long dims[2] = {d == SC_ENDS ? 2 * nc : nc, d == SC_ENDS ? 3 : snap_contact_ds[d].width};
        size_t row = (size_t)snap_contact_ds[d].width * type_bytes(snap_contact_ds[d].type);
        h5out_rows *r = NULL;
        snprintf(path, sizeof path, "%s/contacts/%s", g, snap_contact_ds[d].name);
        st = h5out_rows_begin(h, path, snap_contact_ds[d].type, snap_contact_ds[d].rank, dims, &r,
                              err);
        for (long k0 = 0; k0 < nc && st == CDLAB_OK; k0 += (long)m) {
            long n = nc - k0 < (long)m ? nc - k0 : (long)m;
            for (long q = 0; q < n; q++) {
                if (!one_slab && d != SC_LINE)
                    S->E.ops->report.contact(&S->E, W, (int)(k0 + q), &cs[q]);
                contact_row(W, d, k0 + q, &cs[q], (char *)buf + (size_t)q * row);
            }
            st = d == SC_ENDS ? h5out_rows_write(r, 2 * k0, 2 * n, buf, err)
                              : h5out_rows_write(r, k0, n, buf, err);
        }
        diag tmp;
        status s2 = h5out_rows_end(r, st == CDLAB_OK ? err : &tmp);
        if (st == CDLAB_OK)
            st = s2;
    }
    free(buf);
    free(cs);
    return st;
}

double run_snapshot_bytes(const run_setup *S, long contacts)
{
    double per_particle = 0.0, per_contact = 0.0;
    for (size_t k = 0; k < SNAP_PARTICLE_DS; k++)
        per_particle += (double)snap_particle_ds[k].width * type_bytes(snap_particle_ds[k].type);
    for (int d = 0; d < SC_N; d++)
        per_contact += (double)snap_contact_ds[d].width * type_bytes(snap_contact_ds[d].type);
    const xdmf_field *f =
        S->E.ops->report.snapshot_fields ? S->E.ops->report.snapshot_fields(&S->E) : NULL;
    for (int k = 0; f && f[k].name[0]; k++) { /* the engine's: doubles, dims "3 3", "3" or "" */
        double values = 1.0;
        for (const char *c = f[k].dims; *c; c++)
            if (*c >= '1' && *c <= '9')
                values *= *c - '0';
        per_particle += 8.0 * values;
    }
    if (any_frozen(&S->W.P))
        per_particle += type_bytes(H5IO_UINT8);
    return per_particle * S->W.P.n + per_contact * (double)contacts;
}

status run_output_snapshot(run_writer *w, const run_setup *S, diag *err)
{
    const world *W = &S->W;
    char g[64];
    snprintf(g, sizeof g, "/snapshots/%08ld", W->step);
    status s;
    if ((s = h5out_group(w->h, g, err)) || (s = h5out_attr_int(w->h, g, "step", W->step, err)) ||
        (s = h5out_attr_double(w->h, g, "time", W->t, err)) ||
        (s = snapshot_particles(w->h, g, &W->P, err)) || (s = snapshot_contacts(w->h, g, S, err)) ||
        (S->E.ops->report.snapshot && (s = S->E.ops->report.snapshot(&S->E, w->h, g, W, err))))
        return s;
    /* every frame reaches the file: a killed run leaves a readable file up to here */
    if ((s = h5out_flush(w->h, err)))
        return s;
    w->snapshot_step = W->step;
    return w->xmf ? xdmf_add_snapshot(
                        w->xmf, g, W->t, W->P.n, S->E.ops->report.contact_count(&S->E, W),
                        S->E.ops->report.snapshot_fields ? S->E.ops->report.snapshot_fields(&S->E)
                                                         : NULL,
                        S->info.input_index && S->info.n_input == W->P.n, any_frozen(&W->P), err)
                  : CDLAB_OK;
}

/* The process's peak resident memory in KiB: VmHWM of /proc/self/status, the high-water mark of
 * this program's own address space. getrusage's ru_maxrss also counts the memory of the process
 * that started it, up to its exec (Linux keeps the larger of the two): under a Python driver
 * holding 58 MB, `make bench` read 58 MB for every chute run at 65,600 spheres, whatever the run
 * used (913 B per particle for about 850). ru_maxrss where /proc is not there; -1 if neither.
 * run_output.h declares it. */
long run_peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0 && sscanf(line + 6, "%ld", &kib) == 1)
            break;
    if (f)
        fclose(f);
    struct rusage ru;
    if (kib < 0 && getrusage(RUSAGE_SELF, &ru) == 0)
        kib = ru.ru_maxrss;
    return kib;
}

status run_output_summary(run_writer *w, const char *status_text, const run_summary *sum,
                          long rebuilds, diag *err)
{
    h5out *h = w->h;
    const char *g = "/summary";
    status s = h5out_group(h, g, err);
    if (s != CDLAB_OK)
        return s;
    /* the figures are written whatever their own status: the file closes next either way */
    h5out_attr_string(h, g, "status", status_text, err);
    h5out_attr_int(h, g, "steps_done", sum->steps_done, err);
    h5out_attr_double(h, g, "wall_seconds", sum->wall_seconds, err);
    h5out_attr_double(h, g, "step_seconds", sum->step_seconds, err);
    h5out_attr_double(h, g, "solve_seconds", sum->solve_seconds, err);
    h5out_attr_double(h, g, "timed_step_seconds", sum->timed_step_seconds, err);
    h5out_attr_int(h, g, "timed_steps", sum->timed_steps, err);
    h5out_attr_int(h, g, "neighbour_rebuilds", rebuilds, err);
    long peak = run_peak_rss_kib();
    if (peak >= 0)
        h5out_attr_int(h, g, "peak_rss_kib", peak, err);
    h5out_attr_double(h, g, "contact_updates", sum->contact_updates, err);
    h5out_attr_double(h, g, "mean_sweeps", sum->mean_sweeps, err);
    h5out_attr_int(h, g, "unconverged_steps", sum->unconverged_steps, err);
    h5out_attr_int(h, g, "missed_contacts", sum->missed_contacts, err);
    h5out_attr_double(h, g, "missed_overlap", sum->missed_overlap, err);
    if (sum->balance_max >= 0.0) /* an engine whose records are an energy balance */
        h5out_attr_double(h, g, "energy_residual_max", sum->balance_max, err);
    /* the thread count at the end (an automatic run may have changed it) */
    h5out_attr_int(h, g, "threads", cdlab_threads(), err);
    return CDLAB_OK;
}

void run_output_free(run_writer *w)
{
    free(w->piston_idx);
    free(w->row);
}

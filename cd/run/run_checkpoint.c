/* Checkpoints: /checkpoints/NNNNNNNN holds everything the next step reads: the particles' state
 * and the walls' (written here), and the engine's state (its contact records, random stream and
 * whatever else its next step reads: engine_ops.checkpoint_write).
 * A run continued from it gives bit-identical results to an uninterrupted one (same build).
 * Format 3: the system's definition (state_def) is stored and compared on restart. */
#include "run/run_checkpoint.h"

#include "engine/engine_checkpoint.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECKPOINT_FORMAT "cdlab-checkpoint-3"

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t k = 0; k < n; k++)
        h = (h ^ p[k]) * 0x100000001b3ULL;
    return h;
}
#define FNV_START 0xcbf29ce484222325ULL

/* The values of a checkpoint's row_record (write_row_record). */
enum { ROW_RECORD = 9 };

/* Loads (gravity, [load], piston forces and their step), the number of steps, output cadence,
 * solver settings, detection gap and thread count may change on restart; docs/output.md lists
 * them. */
state_def run_state_def(const run_setup *S)
{
    const world *W = &S->W;
    const particles *P = &W->P;
    state_def d = {
        .dt = W->dt, .dimension = P->dimension, .friction = W->detect.mu, .seed = S->info.seed};
    d.bodies = fnv1a(fnv1a(fnv1a(FNV_START, P->r, (size_t)P->n * sizeof *P->r), P->m,
                           (size_t)P->n * sizeof *P->m),
                     P->frozen, (size_t)P->n);
    /* particles.order = spatial: the renumbering too (a restart that changed the order, or an
     * input that orders otherwise, would put the checkpoint's states on other ids) */
    if (S->info.input_index)
        d.bodies = fnv1a(d.bodies, S->info.input_index,
                         (size_t)S->info.n_input * sizeof *S->info.input_index);
    d.walls = FNV_START;
    for (int k = 0; k < W->n_walls; k++) {
        const wall *w = &W->walls[k];
        double def[10] = {w->kind, w->p.x, w->p.y,    w->p.z,    w->n.x,
                          w->n.y,  w->n.z, w->radius, w->inside, w->mu};
        d.walls = fnv1a(fnv1a(d.walls, def, sizeof def), &w->mass, sizeof w->mass);
    }
    double box[9] = {P->box.periodic[0], P->box.periodic[1], P->box.periodic[2],
                     P->box.lo.x,        P->box.lo.y,        P->box.lo.z,
                     P->box.L.x,         P->box.L.y,         P->box.L.z};
    d.box = fnv1a(FNV_START, box, sizeof box);
    d.nk = S->E.ops->persist.constants ? S->E.ops->persist.constants(&S->E, d.k) : 0;
    return d;
}

/* The attributes of state_def that the pipeline defines (the engine's constants come between
 * its first three and the rest: engine_ops.constants), with the config keys a user would
 * change to make them differ. */
typedef struct state_attr {
    const char *attr, *keys;
    size_t off;
    int is_hash;
    int optional; /* written since 2026-11-28: an older checkpoint lacks it */
} state_attr;
static const state_attr before_engine[] = {
    {"dt", "system.dt", offsetof(state_def, dt), 0, 0},
    {"dimension", "system.dimension", offsetof(state_def, dimension), 0, 0},
    {"friction", "contact.friction", offsetof(state_def, friction), 0, 0},
};
static const state_attr after_engine[] = {
    /* the seed acts only at the start (a random packing, the seeding of the engine's random
     * stream): the restart takes the checkpoint's stream, so another seed would be recorded
     * and not used; before the bodies, whose radii a random packing's seed changes */
    {"seed", "system.seed", offsetof(state_def, seed), 1, 1},
    {"bodies_checksum", "the particles' radii, masses, frozen flags or order ([particles])",
     offsetof(state_def, bodies), 1, 0},
    {"walls_checksum", "the walls (their kind, position, normal, radius, friction or mass)",
     offsetof(state_def, walls), 1, 0},
    {"box_checksum", "the periodic box (system.periodic, box_min, box_max)",
     offsetof(state_def, box), 1, 0},
};
#define N_BEFORE (sizeof before_engine / sizeof before_engine[0])
#define N_AFTER (sizeof after_engine / sizeof after_engine[0])

static status write_state_attrs(h5out *h, const char *g, const state_def *d, const state_attr *t,
                                size_t n, diag *err)
{
    status s = CDLAB_OK;
    for (size_t k = 0; k < n && s == CDLAB_OK; k++) {
        const char *p = (const char *)d + t[k].off;
        if (t[k].is_hash)
            s = h5out_attr_int(h, g, t[k].attr, (long long)*(const uint64_t *)p, err);
        else
            s = h5out_attr_double(h, g, t[k].attr, *(const double *)p, err);
    }
    return s;
}

static status write_state_def(h5out *h, const char *g, const state_def *d, diag *err)
{
    status s = write_state_attrs(h, g, d, before_engine, N_BEFORE, err);
    for (int k = 0; k < d->nk && s == CDLAB_OK; k++)
        s = h5out_attr_double(h, g, d->k[k].attr, d->k[k].value, err);
    if (s == CDLAB_OK)
        s = write_state_attrs(h, g, d, after_engine, N_AFTER, err);
    return s;
}

/* An optional constant the checkpoint lacks: named in unchecked where this run has it (not
 * 0). */
static void not_recorded(char *unchecked, size_t n, const char *keys, int nonzero)
{
    size_t used = strlen(unchecked);
    if (nonzero)
        snprintf(unchecked + used, n - used, "%s%s", used ? ", " : "", keys);
}

/* The pipeline's attributes t of the checkpoint against this run's (state_def d). */
static status check_state_attrs(h5in *h, const char *file, const char *g, const state_def *d,
                                const state_attr *t, size_t nt, int renumbered_auto,
                                char *unchecked, size_t n, diag *err)
{
    status s;
    for (size_t k = 0; k < nt; k++) {
        const char *p = (const char *)d + t[k].off;
        if (t[k].optional && !h5in_has_attr(h, g, t[k].attr)) {
            not_recorded(unchecked, n, t[k].keys,
                         t[k].is_hash ? *(const uint64_t *)p != 0 : *(const double *)p != 0.0);
            continue;
        }
        if (t[k].is_hash) {
            long long v;
            if ((s = h5in_attr_int(h, g, t[k].attr, &v, err)))
                return s;
            if ((uint64_t)v != *(const uint64_t *)p)
                return diag_set(err, CDLAB_ERR_CONFIG,
                                "--restart %s: this config changes %s: a restart continues the "
                                "same system (docs/output.md: what may change on restart)%s%s",
                                file, t[k].keys,
                                p == (const char *)&d->seed
                                    ? "; the seed acts at the start: a restart continues the "
                                      "checkpoint's random stream, which another seed would not "
                                      "change"
                                    : "",
                                renumbered_auto && p == (const char *)&d->bodies
                                    ? "; particles.order = auto renumbered this input (50,000 "
                                      "particles or more in no spatial order): a run that kept "
                                      "the order given (with particles.order = given, or made by "
                                      "a cdlab before auto was the default) continues with "
                                      "--set particles.order=given"
                                    : "");
            continue;
        }
        double v;
        if ((s = h5in_attr_double(h, g, t[k].attr, &v, err)))
            return s;
        if (v != *(const double *)p) {
            char here[32], there[32];
            config_fmt_double(here, sizeof here, *(const double *)p);
            config_fmt_double(there, sizeof there, v);
            return diag_set(err, CDLAB_ERR_CONFIG,
                            "--restart %s: %s = %s here, %s in the checkpoint: a restart "
                            "continues the same system (docs/output.md: what may change on "
                            "restart)",
                            file, t[k].keys, here, there);
        }
    }
    return CDLAB_OK;
}

/* The engine's constants of the checkpoint against this run's: a difference named by its keys,
 * or by the option the engine says it packs (engine_ops.constant_change). */
static status check_engine_constants(h5in *h, const char *file, const char *g, const run_setup *S,
                                     const state_def *d, char *unchecked, size_t n, diag *err)
{
    status s;
    for (int k = 0; k < d->nk; k++) {
        const engine_constant *c = &d->k[k];
        if (c->optional && !h5in_has_attr(h, g, c->attr)) {
            not_recorded(unchecked, n, c->keys, c->value != 0.0);
            continue;
        }
        double v;
        if ((s = h5in_attr_double(h, g, c->attr, &v, err)))
            return s;
        if (v == c->value)
            continue;
        char what[256];
        if (S->E.ops->persist.constant_change &&
            S->E.ops->persist.constant_change(&S->E, k, v, c->value, what, sizeof what))
            return diag_set(err, CDLAB_ERR_CONFIG,
                            "--restart %s: this config changes %s: a restart continues the same "
                            "system (docs/output.md: what may change on restart)",
                            file, what);
        char here[32], there[32];
        config_fmt_double(here, sizeof here, c->value);
        config_fmt_double(there, sizeof there, v);
        return diag_set(err, CDLAB_ERR_CONFIG,
                        "--restart %s: %s = %s here, %s in the checkpoint: a restart continues "
                        "the same system (docs/output.md: what may change on restart)",
                        file, c->keys, here, there);
    }
    return CDLAB_OK;
}

/* The first difference between the checkpoint's system and this run's, named by its keys.
 * renumbered_auto: this run's particles.order = auto renumbered its input (the refusal of a
 * checkpoint whose run kept the order given says how to continue it). */
static status check_state_def(h5in *h, const char *file, const char *g, const run_setup *S,
                              const state_def *d, int renumbered_auto, char *unchecked, size_t n,
                              diag *err)
{
    unchecked[0] = '\0';
    status s = check_state_attrs(h, file, g, d, before_engine, N_BEFORE, renumbered_auto, unchecked,
                                 n, err);
    if (s == CDLAB_OK)
        s = check_engine_constants(h, file, g, S, d, unchecked, n, err);
    if (s == CDLAB_OK)
        s = check_state_attrs(h, file, g, d, after_engine, N_AFTER, renumbered_auto, unchecked, n,
                              err);
    return s;
}

/* The world's state: the particles' x, v, w, q and image counts, and per wall its position,
 * velocity and contact force (s, u, contact_force). */
static status write_world(h5out *h, const char *g, const world *W, diag *err)
{
    const particles *P = &W->P;
    long n = P->n, n3[2] = {n, 3}, n4[2] = {n, 4}, nw = W->n_walls, nw3[2] = {nw, 3};
    char path[128];
    status s;
#define CK(name, type, rank, dims, data)                                                           \
    do {                                                                                           \
        snprintf(path, sizeof path, "%s/%s", g, name);                                             \
        if ((s = h5out_array(h, path, type, rank, dims, data, err)))                               \
            return s;                                                                              \
    } while (0)
    CK("x", H5IO_DOUBLE, 2, n3, P->x);
    CK("v", H5IO_DOUBLE, 2, n3, P->v);
    CK("w", H5IO_DOUBLE, 2, n3, P->w);
    CK("q", H5IO_DOUBLE, 2, n4, P->q);
    CK("image", H5IO_INT32, 2, n3, P->image);
#undef CK
    double *wb = malloc((size_t)(nw > 0 ? nw : 1) * 3 * sizeof *wb);
    if (!wb)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory writing a checkpoint");
    for (int k = 0; k < nw; k++) {
        wb[3 * k] = W->walls[k].s;
        wb[3 * k + 1] = W->walls[k].u;
        wb[3 * k + 2] = W->walls[k].contact_force;
    }
    snprintf(path, sizeof path, "%s/walls", g);
    s = h5out_array(h, path, H5IO_DOUBLE, 2, nw3, wb, err);
    free(wb);
    return s;
}

double run_checkpoint_bytes(const run_setup *S, long pairs)
{
    const world *W = &S->W;
    double n = W->P.n, world_bytes = n * (13 * sizeof(double) + 3 * sizeof(int32_t)) +
                                     (double)W->n_walls * 3 * sizeof(double) +
                                     ROW_RECORD * sizeof(double);
    return world_bytes + S->E.ops->persist.checkpoint_bytes(&S->E, W, pairs);
}

/* The record of the checkpoint's step that its series row shows (engine_record: sweeps,
 * convergence, contact counts, residual, overlaps), as one dataset row_record of doubles in
 * this order; a restart's first row is written from it, so that it is the uninterrupted run's
 * (it was zeros). */
static status write_row_record(h5out *h, const char *g, const engine_record *r, diag *err)
{
    double v[ROW_RECORD] = {r->sweeps,   r->converged,    r->n_contacts,  r->n_active, r->n_sliding,
                            r->residual, r->mean_overlap, r->max_overlap, r->balance};
    char path[128];
    snprintf(path, sizeof path, "%s/row_record", g);
    long n = ROW_RECORD;
    return h5out_array(h, path, H5IO_DOUBLE, 1, &n, v, err);
}

/* The row record into S (has_restart_row), where the checkpoint has one (since 2026-12-01);
 * its counts must be counts. */
static status read_row_record(h5in *h, const char *file, const char *g, run_setup *S, diag *err)
{
    char path[400];
    snprintf(path, sizeof path, "%s/row_record", g);
    S->has_restart_row = 0;
    if (!h5in_exists(h, path))
        return CDLAB_OK;
    double v[ROW_RECORD];
    status s = h5in_read(h, path, H5IO_DOUBLE, v, ROW_RECORD, err);
    if (s != CDLAB_OK)
        return s;
    for (int k = 0; k < ROW_RECORD; k++) {
        int count = k < 5 || k == 8;
        if (!isfinite(v[k]) || (count && (v[k] < 0.0 || v[k] > INT32_MAX || v[k] != floor(v[k]))))
            return diag_set(err, CDLAB_ERR_IO, "%s: corrupt checkpoint %s: row_record[%d] = %g",
                            file, g, k, v[k]);
    }
    engine_record *r = &S->restart_row;
    *r = (engine_record){.sweeps = (int)v[0],
                         .converged = (int)v[1],
                         .n_contacts = (int)v[2],
                         .n_active = (int)v[3],
                         .n_sliding = (int)v[4],
                         .residual = v[5],
                         .mean_overlap = v[6],
                         .max_overlap = v[7],
                         .balance = (int)v[8]};
    S->has_restart_row = 1;
    return CDLAB_OK;
}

/* Checkpoint g of the current step into h, then its mark of completeness, written once
 * everything else is on disk: a restart takes the last checkpoint that has it (a disk that
 * fills up mid-checkpoint leaves one without it). */
static status write_checkpoint(h5out *h, const char *g, const run_setup *S, const state_def *sd,
                               const engine_record *row, diag *err)
{
    const world *W = &S->W;
    status s;
    if ((s = h5out_group(h, g, err)) ||
        (s = h5out_attr_string(h, g, "format", CHECKPOINT_FORMAT, err)) ||
        (s = h5out_attr_int(h, g, "step", W->step, err)) ||
        (s = h5out_attr_int(h, g, "particles", W->P.n, err)) ||
        (s = h5out_attr_int(h, g, "walls", W->n_walls, err)) ||
        (s = h5out_attr_string(h, g, "mode", S->E.ops->name, err)) ||
        (s = write_state_def(h, g, sd, err)) || (s = write_world(h, g, W, err)) ||
        (s = write_row_record(h, g, row, err)) ||
        (s = S->E.ops->persist.checkpoint_write(&S->E, h, g, W, err)))
        return s;
    if ((s = h5out_flush(h, err)) || (s = h5out_attr_int(h, g, "complete", 1, err)) ||
        (s = h5out_flush(h, err)))
        return s;
    return CDLAB_OK;
}

/* The group of the checkpoint of this step, in the run's file and in its copy. */
static void checkpoint_group(const run_setup *S, char *g, size_t n)
{
    snprintf(g, n, "/checkpoints/%08ld", S->W.step);
}

status run_checkpoint_write(run_writer *w, const run_setup *S, const state_def *sd,
                            const engine_record *row, diag *err)
{
    char g[64];
    checkpoint_group(S, g, sizeof g);
    status s = write_checkpoint(w->h, g, S, sd, row, err);
    if (s == CDLAB_OK)
        w->checkpoint_step = S->W.step;
    return s;
}

status run_checkpoint_copy(run_writer *w, const run_setup *S, const state_def *sd,
                           const engine_record *row, diag *err)
{
    const outfile *o = w->of;
    char g[64];
    checkpoint_group(S, g, sizeof g);
    h5out *c;
    /* made anew, never through a link or over a file planted under its name */
    int fd = outfile_create_new(o->ckpt_partial, "the checkpoint's copy", err);
    if (fd < 0)
        return CDLAB_ERR_IO;
    char by_fd[64];
    outfile_fd_path(fd, by_fd, sizeof by_fd);
    status s = h5out_create(&c, by_fd, err);
    if (s != CDLAB_OK) {
        close(fd);
        unlink(o->ckpt_partial);
        return s;
    }
    /* what cdlab info shows of a run (its parameters and build), what it is a copy of, and
     * the checkpoint */
    if ((s = h5out_attr_string(c, "/", "program", "cdlab run: the copy of a run's last checkpoint",
                               err)) == CDLAB_OK &&
        (s = h5out_attr_string(c, "/", "checkpoint_of", o->final, err)) == CDLAB_OK &&
        (s = h5out_copy(c, w->h, "/parameters", err)) == CDLAB_OK &&
        (s = h5out_copy(c, w->h, "/build", err)) == CDLAB_OK)
        s = write_checkpoint(c, g, S, sd, row, err);
    status s2 = h5out_close(c, s == CDLAB_OK ? err : &(diag){{0}});
    if (s == CDLAB_OK)
        s = s2;
    int ours = outfile_names_fd(o->ckpt_partial, fd);
    close(fd);
    if (s == CDLAB_OK && !ours)
        s = diag_set(err, CDLAB_ERR_IO, "%s was replaced while it was written: not renamed to %s",
                     o->ckpt_partial, o->ckpt);
    else if (s == CDLAB_OK)
        s = outfile_put_checkpoint(o, err); /* removes the partial copy when it fails */
    else if (ours)
        unlink(o->ckpt_partial);
    if (s == CDLAB_OK)
        w->copy_step = S->W.step;
    return s;
}

/* The group of the last checkpoint with the mark of completeness whose datasets hold their
 * checksums (a write lost under a run that then failed); the ones passed over for that into
 * skipped (NULL: not said). */
static status last_complete(h5in *h, const char *file, char *g, size_t n, char *skipped, size_t ns,
                            diag *err)
{
    char last[256], prev[256];
    const char *before = NULL;
    if (skipped && ns)
        skipped[0] = '\0';
    for (;;) {
        status s = h5in_last_child(h, "/checkpoints", before, last, err);
        if (s != CDLAB_OK)
            return before
                       ? diag_set(err, CDLAB_ERR_IO,
                                  "%s: no complete checkpoint that holds what was written (the "
                                  "last ones were cut short or damaged%s%s)",
                                  file, skipped && skipped[0] ? ": " : "", skipped ? skipped : "")
                       : s;
        snprintf(g, n, "/checkpoints/%s", last);
        long long complete = 0;
        diag ignore;
        char bad[300];
        if (h5in_attr_int(h, g, "complete", &complete, &ignore) == CDLAB_OK && complete == 1) {
            if (h5in_group_verifies(h, g, bad, sizeof bad))
                return CDLAB_OK;
            if (skipped) {
                size_t used = strlen(skipped);
                snprintf(skipped + used, ns - used, "%s%s (its %s differs from its checksum)",
                         used ? "; " : "", g, bad);
            }
        }
        snprintf(prev, sizeof prev, "%s", last);
        before = prev;
    }
}

/* Format, engine, step and size of checkpoint g against this run's. */
static status check_header(h5in *h, const char *file, const char *g, const run_setup *S,
                           long long *step, diag *err)
{
    char *fmt = NULL, *fmode = NULL;
    long long n = 0, nw = 0;
    status s;
    if ((s = h5in_attr_str(h, g, "format", &fmt, err)) == CDLAB_OK &&
        strcmp(fmt, CHECKPOINT_FORMAT) != 0)
        s = diag_set(err, CDLAB_ERR_IO, "%s: checkpoint format '%s', this cdlab reads '%s'", file,
                     fmt, CHECKPOINT_FORMAT);
    if (s == CDLAB_OK && (s = h5in_attr_str(h, g, "mode", &fmode, err)) == CDLAB_OK &&
        strcmp(fmode, S->E.ops->name) != 0)
        s = diag_set(err, CDLAB_ERR_CONFIG,
                     "--restart %s: its checkpoint is of a system.mode = %s run, this is a "
                     "system.mode = %s run",
                     file, fmode, S->E.ops->name);
    free(fmt);
    free(fmode);
    if (s != CDLAB_OK || (s = h5in_attr_int(h, g, "step", step, err)) ||
        (s = h5in_attr_int(h, g, "particles", &n, err)) ||
        (s = h5in_attr_int(h, g, "walls", &nw, err)))
        return s;
    if (*step < 0 || *step > LONG_MAX / 2)
        return diag_set(err, CDLAB_ERR_IO, "%s: corrupt checkpoint %s (step %lld)", file, g, *step);
    if (n != S->W.P.n || nw != S->W.n_walls)
        return diag_set(err, CDLAB_ERR_CONFIG,
                        "--restart %s: its checkpoint has %lld particles and %lld walls, this "
                        "config %d particles and %d walls: a restart continues the same system",
                        file, n, nw, S->W.P.n, S->W.n_walls);
    return CDLAB_OK;
}

/* A restored orientation's |q|^2 may differ from 1 by this much: rotations keep it unit to a
 * few ulps (quat_integrate renormalises), so anything more is a damaged or hostile file. */
#define RESTORE_QUAT_TOLERANCE 1e-6

/* The particles' state and the walls', every value finite and within the loader's bounds. */
static status read_world(h5in *h, const char *file, const char *g, world *W, diag *err)
{
    long n = W->P.n, n3 = 3 * n, nw = W->n_walls, nw3 = 3 * nw;
    double *wb = malloc((size_t)(nw3 > 0 ? nw3 : 1) * sizeof *wb);
    char path[400];
    status s = wb ? CDLAB_OK : diag_set(err, CDLAB_ERR_NOMEM, "out of memory reading a checkpoint");
#define RD(name, type, data, count)                                                                \
    if (s == CDLAB_OK) {                                                                           \
        snprintf(path, sizeof path, "%s/%s", g, name);                                             \
        s = h5in_read(h, path, type, data, count, err);                                            \
    }
    RD("x", H5IO_DOUBLE, W->P.x, n3);
    RD("v", H5IO_DOUBLE, W->P.v, n3);
    RD("w", H5IO_DOUBLE, W->P.w, n3);
    RD("q", H5IO_DOUBLE, W->P.q, 4 * n);
    RD("image", H5IO_INT32, W->P.image, n3);
    RD("walls", H5IO_DOUBLE, wb, nw3);
#undef RD
    if (s == CDLAB_OK) {
        for (int k = 0; k < nw; k++) {
            W->walls[k].s = wb[3 * k];
            W->walls[k].u = wb[3 * k + 1];
            W->walls[k].contact_force = wb[3 * k + 2];
        }
        const double B = SCENE_MAX_MAGNITUDE;
        const char *bad = !engine_all_bounded(&W->P.x[0].x, n3, B)   ? "x"
                          : !engine_all_bounded(&W->P.v[0].x, n3, B) ? "v"
                          : !engine_all_bounded(&W->P.w[0].x, n3, B) ? "w"
                          : !engine_all_bounded(wb, nw3, B)          ? "walls"
                                                                     : NULL;
        /* orientations are unit quaternions (renormalised at every rotation) */
        for (long i = 0; i < n && !bad; i++) {
            const double *q = &W->P.q[4 * i];
            double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
            if (!(fabs(n2 - 1.0) <= RESTORE_QUAT_TOLERANCE))
                bad = "q";
        }
        if (bad)
            s = diag_set(err, CDLAB_ERR_IO,
                         "%s: corrupt checkpoint %s: %s holds a value that is not finite, of a "
                         "magnitude beyond %g, or (q) an orientation that is not a unit "
                         "quaternion",
                         file, g, bad, SCENE_MAX_MAGNITUDE);
    }
    free(wb);
    return s;
}

int run_checkpoint_peek(const char *file, long *step, long *contacts)
{
    h5in *h;
    diag ignore;
    char g[300];
    long long st = -1, nc = -1;
    if (h5in_open(&h, file, &ignore) != CDLAB_OK)
        return 0;
    int ok = last_complete(h, file, g, sizeof g, NULL, 0, &ignore) == CDLAB_OK &&
             h5in_attr_int(h, g, "step", &st, &ignore) == CDLAB_OK &&
             h5in_attr_int(h, g, "contacts", &nc, &ignore) == CDLAB_OK && st >= 0 &&
             st <= LONG_MAX / 2 && nc >= 0 && nc <= INT32_MAX;
    h5in_close(h);
    if (ok)
        *step = (long)st, *contacts = (long)nc;
    return ok;
}

status run_checkpoint_read(const char *file, run_setup *S, const state_def *sd, diag *err)
{
    h5in *h;
    status s = h5in_open(&h, file, err);
    if (s)
        return s;
    char g[300];
    long long step = 0;
    world *W = &S->W;
    if ((s = last_complete(h, file, g, sizeof g, S->restart_skipped, sizeof S->restart_skipped,
                           err)) == CDLAB_OK &&
        (s = check_header(h, file, g, S, &step, err)) == CDLAB_OK &&
        (s = check_state_def(h, file, g, S, sd, S->info.order_auto, S->restart_unchecked,
                             sizeof S->restart_unchecked, err)) == CDLAB_OK &&
        (s = read_world(h, file, g, W, err)) == CDLAB_OK &&
        (s = read_row_record(h, file, g, S, err)) == CDLAB_OK) {
        W->step = (long)step; /* the engine's part checks its counts against it */
        W->t = (double)step * W->dt;
        s = S->E.ops->persist.checkpoint_read(&S->E, h, g, file, W, err);
    }
    h5in_close(h);
    return s;
}

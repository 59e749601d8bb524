#include "cd_run.h"
#include "contact_problem.h"

#include "build_info.h"
#include "cd_config.h"
#include "dem_config.h"
#include "h5io.h"
#include "parallel.h"
#include "xdmf.h"

#include <errno.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>
#include <time.h>

static const char *const known_sections[] = {"system",    "solver",  "dem",       "drive",
                                             "particles", "contact", "load",      "output",
                                             "plane.",    "piston.", "cylinder.", NULL};

typedef enum run_mode { MODE_CD, MODE_DEM } run_mode;
static const char *const mode_names[] = {"cd", "dem", NULL};

typedef struct output_params {
    char file[512];
    long every;
    long series_every;     /* a series row every this many steps (and the last step) */
    long timing_warmup;    /* steps left out of /summary timed_step_seconds */
    long checkpoint_every; /* a restart checkpoint every this many steps (0: only the last step) */
    int *probes;           /* storage indices */
    int n_probes;
} output_params;

static status read_output(config *c, const world *W, output_params *o, diag *err)
{
    memset(o, 0, sizeof *o);
    status s;
    if ((s = config_string(c, "output", "file", 0, "cdlab.h5", o->file, sizeof o->file, err)) ||
        (s = config_int(c, "output", "every", 0, 100, 0, __LONG_MAX__, &o->every, err)) ||
        (s = config_int(c, "output", "series_every", 0, 1, 1, __LONG_MAX__, &o->series_every,
                        err)) ||
        (s = config_int(c, "output", "timing_warmup", 0, 0, 0, __LONG_MAX__, &o->timing_warmup,
                        err)) ||
        (s = config_int(c, "output", "checkpoint_every", 0, 0, 0, __LONG_MAX__,
                        &o->checkpoint_every, err)))
        return s;
    long *ids;
    int n;
    if ((s = config_int_list(c, "output", "probes", &ids, &n, err)))
        return s;
    o->probes = malloc((size_t)(n > 0 ? n : 1) * sizeof *o->probes);
    if (!o->probes) {
        free(ids);
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    }
    for (int k = 0; k < n; k++) {
        long id = ids[k] < 0 ? W->P.n + ids[k] : ids[k]; /* -1 = last particle */
        if (id < 0 || id >= W->P.n) {
            long bad = ids[k];
            free(ids);
            return config_error(c, "output", "probes", err,
                                "particle %ld does not exist (there are %d)", bad, W->P.n);
        }
        o->probes[k] = (int)id;
    }
    o->n_probes = n;
    free(ids);
    return CDLAB_OK;
}

typedef struct setup {
    world W;
    scene_info info;
    run_mode mode;
    cd_params prm; /* mode cd */
    dem_setup dem; /* mode dem */
    output_params out;
    char notice[512]; /* the other engine's sections left unused, for the user ("" if none) */
} setup;

static void setup_free(setup *S)
{
    world_free(&S->W);
    free(S->out.probes);
}

static status read_all(config *c, setup *S, diag *err)
{
    memset(S, 0, sizeof *S);
    status s;
    int mode;
    if ((s = config_enum(c, "system", "mode", 0, MODE_CD, mode_names, &mode, err)))
        return s;
    S->mode = (run_mode)mode;
    if ((s = scene_build(c, &S->W, &S->info, err)))
        return s;
    /* The other engine's sections are not used, so that one config serves a CD run and its
     * DEM twin (--set system.mode=dem); their key names are still checked. A CD config run in
     * DEM mode gives the twin its N_I, sweep and dt as defaults (dem_config_read). */
    if (S->mode == MODE_CD) {
        int nd, nr;
        if ((s = config_skip_section(c, "dem", dem_config_keys, &nd, err)) ||
            (s = config_skip_section(c, "drive", drive_config_keys, &nr, err)))
            return s;
        if (nd + nr > 0)
            snprintf(S->notice, sizeof S->notice,
                     "notice: %s%s%s not used with system.mode = cd (ignored)",
                     nd ? "[dem]" : "", nd && nr ? " and " : "", nr ? "[drive]" : "");
        s = cd_config_read(c, &S->prm, err);
    } else {
        const cd_params *twin = NULL;
        if (config_section_line(c, "solver") >= 0) {
            if ((s = cd_config_read(c, &S->prm, err)))
                return s;
            twin = &S->prm;
        }
        if ((s = dem_config_read(c, &S->W, &S->info, twin, &S->dem, err)))
            return s;
        if (twin && S->dem.from_cd > 0)
            snprintf(S->notice, sizeof S->notice,
                     "notice: [solver] not used with system.mode = dem; this is the DEM twin of "
                     "its CD run (dem.stiffness_from_cd = %d, cd_sweep = %s, cd_dt = %g)",
                     S->dem.from_cd, cd_sweep_names[S->dem.cd_sweep], S->dem.cd_dt);
        else if (twin)
            snprintf(S->notice, sizeof S->notice,
                     "notice: [solver] not used with system.mode = dem (ignored)");
    }
    if (s || (s = read_output(c, &S->W, &S->out, err)) ||
        (s = config_check_unused(c, known_sections, err)))
        return s;
    return CDLAB_OK;
}

status cd_run_validate(config *c, const run_hooks *hk, diag *err)
{
    setup S;
    status s = read_all(c, &S, err);
    if (s == CDLAB_OK && S.notice[0] && hk && hk->message)
        hk->message(hk->user, S.notice);
    setup_free(&S);
    return s;
}

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
    SER_PIST_X,
    SER_PIST_V,
    SER_PIST_F,
    /* DEM energy ledger */
    SER_E_KT,
    SER_E_KR,
    SER_E_KP,
    SER_E_EN,
    SER_E_ET,
    SER_E_FR,
    SER_E_DA,
    SER_E_WX,
    SER_E_WP,
    SER_E_RES,
    SER_STRESS,
    SER_COUNT
};
static const char *const energy_paths[] = {
    "/series/energy/kinetic_translational", "/series/energy/kinetic_rotational",
    "/series/energy/kinetic_piston",        "/series/energy/elastic_normal",
    "/series/energy/elastic_tangential",    "/series/energy/friction_dissipation",
    "/series/energy/damping_dissipation",   "/series/energy/work_external",
    "/series/energy/work_piston",           "/series/energy/balance_residual"};

/* One row of per-step diagnostics, whichever engine made it. */
typedef struct step_record {
    int sweeps, converged, n_contacts, n_active, n_sliding;
    double residual, mean_overlap, max_overlap;
    const dem_energy *energy; /* DEM only */
    const double *stress;     /* DEM only: Love-Weber stress, 3 x 3 row-major */
} step_record;

typedef struct writer {
    h5out *h;
    int ser[SER_COUNT];
    int n_pistons;
    int *piston_idx;
    double *row; /* scratch for one row of the widest series */
    xdmf *xmf;   /* the ParaView sidecar */
} writer;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static status write_header(writer *w, config *c, const setup *S, diag *err)
{
    h5out *h = w->h;
    status s;
    char buf[128];
    const char *program =
        S->mode == MODE_DEM ? "cdlab run (linear-frictional DEM)" : "cdlab run (contact dynamics)";
    if ((s = h5out_attr_string(h, "/", "program", program, err)) ||
        (s = h5out_attr_string(h, "/", "config_file", c->file, err)) ||
        (s = h5out_attr_string(h, "/", "config_text", c->text ? c->text : "", err)) ||
        (s = h5out_attr_int(h, "/", "seed", (long long)S->info.seed, err)) ||
        (s = h5out_attr_string(h, "/", "units", "consistent user units (none implied)", err)) ||
        (s = h5out_group(h, "/parameters", err)) || (s = h5out_group(h, "/build", err)))
        return s;
    for (int k = 0; k < c->nres; k++)
        if ((s = h5out_attr_string(h, "/parameters", c->res[k].name, c->res[k].value, err)))
            return s;
    time_t tt = time(NULL);
    strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", gmtime(&tt));
    if ((s = h5out_attr_string(h, "/build", "version", cdlab_version, err)) ||
        (s = h5out_attr_string(h, "/build", "git_commit", cdlab_git_commit, err)) ||
        (s = h5out_attr_string(h, "/build", "compiler", cdlab_compiler, err)) ||
        (s = h5out_attr_string(h, "/build", "cflags", cdlab_cflags, err)) ||
        (s = h5out_attr_int(h, "/build", "threads", cdlab_threads(), err)) ||
        (s = h5out_attr_int(h, "/build", "results_epoch", CDLAB_RESULTS_EPOCH, err)) ||
        (s = h5out_attr_string(h, "/build", "run_started", buf, err)))
        return s;
    if (S->mode == MODE_DEM) {
        const dem_params *p = &S->dem.p;
        if ((s = h5out_group(h, "/dem", err)) ||
            (s = h5out_attr_double(h, "/dem", "k_n", p->law.k_n, err)) ||
            (s = h5out_attr_double(h, "/dem", "k_t", p->law.k_t, err)) ||
            (s = h5out_attr_double(h, "/dem", "critical_dt", S->dem.dt_crit, err)) ||
            (s = h5out_attr_double(h, "/dem", "damping_normal", p->damp_n, err)) ||
            (s = h5out_attr_double(h, "/dem", "damping_tangential", p->damp_t, err)) ||
            (s = h5out_attr_string(h, "/dem", "damping",
                                   p->damp_rate       ? "rate"
                                   : p->damp_absolute ? "absolute"
                                                      : "fraction",
                                   err)))
            return s;
    }
    /* spurious elasticity figures (Unger & Kertesz sec. 3) for the fixed iteration count */
    cd_elasticity e =
        cd_elasticity_of(S->prm.sweep, S->prm.iterations, S->W.dt, S->info.d_mean, S->info.m_mean);
    if (S->mode == MODE_CD &&
        ((s = h5out_group(h, "/elasticity", err)) ||
         (s = h5out_attr_double(h, "/elasticity", "q", e.q, err)) ||
         (s = h5out_attr_double(h, "/elasticity", "D", e.D, err)) ||
         (s = h5out_attr_double(h, "/elasticity", "c", e.c, err)) ||
         (s = h5out_attr_double(h, "/elasticity", "l_diff", e.l_diff, err)) ||
         (s = h5out_attr_double(h, "/elasticity", "kappa_eff", e.kappa, err)) ||
         (s = h5out_attr_double(h, "/elasticity", "gamma_eff", e.gamma, err)) ||
         (s = h5out_attr_double(h, "/elasticity", "L", S->info.length, err)) ||
         (s = h5out_attr_double(h, "/elasticity", "d_mean", S->info.d_mean, err)) ||
         (s = h5out_attr_double(h, "/elasticity", "m_mean", S->info.m_mean, err))))
        return s;
    if (S->mode == MODE_DEM) {
        for (int k = 0; k < SER_E_RES - SER_E_KT + 1; k++)
            if ((s = h5out_series(h, energy_paths[k], H5IO_DOUBLE, 0, NULL, &w->ser[SER_E_KT + k],
                                  err)))
                return s;
        long t33[2] = {3, 3};
        if ((s = h5out_series(h, "/series/stress", H5IO_DOUBLE, 2, t33, &w->ser[SER_STRESS],
                              err)) ||
            (s = h5out_attr_string(h, "/series/stress", "definition",
                                   "Love-Weber sigma_ab = (1/V) sum f_a l_b over particle-particle "
                                   "contacts, f on p, l from p to q (tension positive)",
                                   err)) ||
            (s = h5out_attr_double(h, "/series/stress", "volume", S->dem.stress_volume, err)))
            return s;
    }

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
    for (size_t k = 0; k < sizeof defs / sizeof defs[0]; k++)
        if ((s = h5out_series(h, defs[k].path, defs[k].t, defs[k].rank, defs[k].tail,
                              &w->ser[defs[k].id], err)))
            return s;
    if ((s = h5out_array(h, "/series/probe_ids", H5IO_INT32, 1, (long[]){np > 0 ? np : 0},
                         S->out.probes, err)))
        return s;
    w->piston_idx = malloc((size_t)(S->W.n_walls > 0 ? S->W.n_walls : 1) * sizeof *w->piston_idx);
    if (!w->piston_idx)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    for (int k = 0; k < S->W.n_walls; k++)
        if (S->W.walls[k].kind == WALL_PISTON)
            w->piston_idx[w->n_pistons++] = k;
    if (w->n_pistons > 0) {
        long tp[1] = {w->n_pistons};
        if ((s = h5out_series(h, "/series/piston_position", H5IO_DOUBLE, 1, tp, &w->ser[SER_PIST_X],
                              err)) ||
            (s = h5out_series(h, "/series/piston_velocity", H5IO_DOUBLE, 1, tp, &w->ser[SER_PIST_V],
                              err)) ||
            (s = h5out_series(h, "/series/piston_force", H5IO_DOUBLE, 1, tp, &w->ser[SER_PIST_F],
                              err)))
            return s;
        char names[4096] = "";
        for (int k = 0; k < w->n_pistons; k++) {
            strncat(names, k ? "," : "", sizeof names - strlen(names) - 1);
            strncat(names, S->W.walls[w->piston_idx[k]].name, sizeof names - strlen(names) - 1);
        }
        if ((s = h5out_attr_string(h, "/series/piston_position", "pistons", names, err)))
            return s;
    }
    size_t widest = (size_t)(3 * np + w->n_pistons + 1);
    w->row = malloc(widest * sizeof *w->row);
    if (!w->row)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    /* walls, for plotting and analysis */
    for (int k = 0; k < S->W.n_walls; k++) {
        const wall *wl = &S->W.walls[k];
        char path[64], point[80], dir[80];
        snprintf(path, sizeof path, "/walls/%d", k);
        snprintf(point, sizeof point, "%s/point", path);
        snprintf(dir, sizeof dir, "%s/direction", path);
        static const char *kinds[] = {"plane", "piston", "cylinder"};
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

static status write_row(writer *w, const world *W, const output_params *o, const step_record *st,
                        diag *err)
{
    h5out *h = w->h;
    status s;
    int32_t sw = st->sweeps, cv = st->converged, nc = st->n_contacts, na = st->n_active,
            ns = st->n_sliding;
    double ke = world_kinetic_energy(W);
    if (st->energy) {
        const dem_energy *E = st->energy;
        double v[10] = {
            E->kin_trans, E->kin_rot, E->kin_piston,    E->elastic_n,   E->elastic_t,
            E->friction,  E->damping, E->work_external, E->work_piston, dem_energy_residual(E)};
        for (int k = 0; k < 10; k++)
            if ((s = h5out_series_append(h, w->ser[SER_E_KT + k], &v[k], err)))
                return s;
        if ((s = h5out_series_append(h, w->ser[SER_STRESS], st->stress, err)))
            return s;
    }
    if ((s = h5out_series_append(h, w->ser[SER_T], &W->t, err)) ||
        (s = h5out_series_append(h, w->ser[SER_SWEEPS], &sw, err)) ||
        (s = h5out_series_append(h, w->ser[SER_CONV], &cv, err)) ||
        (s = h5out_series_append(h, w->ser[SER_RES], &st->residual, err)) ||
        (s = h5out_series_append(h, w->ser[SER_MEANOV], &st->mean_overlap, err)) ||
        (s = h5out_series_append(h, w->ser[SER_MAXOV], &st->max_overlap, err)) ||
        (s = h5out_series_append(h, w->ser[SER_KE], &ke, err)) ||
        (s = h5out_series_append(h, w->ser[SER_NC], &nc, err)) ||
        (s = h5out_series_append(h, w->ser[SER_NA], &na, err)) ||
        (s = h5out_series_append(h, w->ser[SER_NS], &ns, err)))
        return s;
    for (int k = 0; k < o->n_probes; k++) {
        vec3 x = W->P.x[o->probes[k]];
        w->row[3 * k] = x.x, w->row[3 * k + 1] = x.y, w->row[3 * k + 2] = x.z;
    }
    if ((s = h5out_series_append(h, w->ser[SER_PPOS], w->row, err)))
        return s;
    for (int k = 0; k < o->n_probes; k++) {
        vec3 v = W->P.v[o->probes[k]];
        w->row[3 * k] = v.x, w->row[3 * k + 1] = v.y, w->row[3 * k + 2] = v.z;
    }
    if ((s = h5out_series_append(h, w->ser[SER_PVEL], w->row, err)))
        return s;
    if (w->n_pistons > 0) {
        for (int k = 0; k < w->n_pistons; k++)
            w->row[k] = W->walls[w->piston_idx[k]].s;
        if ((s = h5out_series_append(h, w->ser[SER_PIST_X], w->row, err)))
            return s;
        for (int k = 0; k < w->n_pistons; k++)
            w->row[k] = W->walls[w->piston_idx[k]].u;
        if ((s = h5out_series_append(h, w->ser[SER_PIST_V], w->row, err)))
            return s;
        for (int k = 0; k < w->n_pistons; k++)
            w->row[k] = W->walls[w->piston_idx[k]].contact_force;
        if ((s = h5out_series_append(h, w->ser[SER_PIST_F], w->row, err)))
            return s;
    }
    return CDLAB_OK;
}

/* Contact k of the run's list with the geometry of now: the CD contact list, or the DEM pair
 * store (ds not NULL). */
static void snapshot_contact(const world *W, const dem_solver *ds, int k, contact *c)
{
    if (ds) {
        dem_contact_record(W, ds, k, c);
        return;
    }
    *c = W->C.c[k];
    contact_geometry(c, &W->P, W->walls);
}

/* Its force on body 1 alone. */
static vec3 snapshot_force(const world *W, const dem_solver *ds, int k)
{
    return ds ? dem_pair_force(ds, k) : W->C.c[k].R;
}

static status write_snapshot(writer *w, const world *W, const dem_solver *ds, diag *err)
{
    const particles *P = &W->P;
    char g[64], path[128];
    snprintf(g, sizeof g, "/snapshots/%08ld", W->step);
    status s;
    if ((s = h5out_group(w->h, g, err)) || (s = h5out_attr_int(w->h, g, "step", W->step, err)) ||
        (s = h5out_attr_double(w->h, g, "time", W->t, err)))
        return s;
    long n = P->n, n3[2] = {n, 3}, n4[2] = {n, 4};
#define SNAP(name, type, rank, dims, data)                                                         \
    do {                                                                                           \
        snprintf(path, sizeof path, "%s/%s", g, name);                                             \
        if ((s = h5out_array(w->h, path, type, rank, dims, data, err)))                            \
            return s;                                                                              \
    } while (0)
    SNAP("position", H5IO_DOUBLE, 2, n3, P->x);
    SNAP("velocity", H5IO_DOUBLE, 2, n3, P->v);
    SNAP("angular_velocity", H5IO_DOUBLE, 2, n3, P->w);
    SNAP("orientation", H5IO_DOUBLE, 2, n4, P->q);
    SNAP("radius", H5IO_DOUBLE, 1, &n, P->r);
    SNAP("mass", H5IO_DOUBLE, 1, &n, P->m);
    SNAP("id", H5IO_INT32, 1, &n, P->id);
    /* periodic image counts: unwrapped position = position + image * period */
    SNAP("image", H5IO_INT32, 2, n3, P->image);
    long nc = ds ? ds->npair : W->C.n, nc2[2] = {nc, 2}, nc3[2] = {nc, 3};
    int32_t *pair = malloc((size_t)(nc > 0 ? nc : 1) * 2 * sizeof *pair);
    double *buf = malloc((size_t)(nc > 0 ? nc : 1) * 3 * sizeof *buf);
    double *gap = malloc((size_t)(nc > 0 ? nc : 1) * sizeof *gap);
    double *ends = malloc((size_t)(nc > 0 ? nc : 1) * 6 * sizeof *ends);
    if (!pair || !buf || !gap || !ends) {
        free(pair);
        free(buf);
        free(gap);
        free(ends);
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory writing a snapshot");
    }
    /* the geometry of now, once per contact (the DEM engine does not update the normal of
     * pairs that are apart); with it the lines for viewers: body 0's end of the contact (its
     * centre's nearest periodic image, or the contact point on a wall) and body 1's centre,
     * line k joining rows 2k, 2k+1 */
    for (int k = 0; k < nc; k++) {
        contact c;
        snapshot_contact(W, ds, k, &c);
        pair[2 * k] = c.i;
        pair[2 * k + 1] = c.j;
        buf[3 * k] = c.n.x, buf[3 * k + 1] = c.n.y, buf[3 * k + 2] = c.n.z;
        gap[k] = c.gap;
        /* body 0's end: the image of its centre nearest body 1 (x_j minus the minimum-image
         * separation), or the point of the wall's surface nearest body 1 (x_j - (r_j + g) n),
         * whatever the lever arms */
        vec3 xj = P->x[c.j];
        vec3 x0 = c.i >= 0 ? v3_sub(xj, pbox_delta(&P->box, P->x[c.i], xj))
                           : v3_axpy(-(P->r[c.j] + c.gap), c.n, xj);
        ends[6 * k] = x0.x, ends[6 * k + 1] = x0.y, ends[6 * k + 2] = x0.z;
        ends[6 * k + 3] = xj.x, ends[6 * k + 4] = xj.y, ends[6 * k + 5] = xj.z;
    }
    status st = CDLAB_OK;
#define SNAPC(name, type, rank, dims, data)                                                        \
    if (st == CDLAB_OK) {                                                                          \
        snprintf(path, sizeof path, "%s/contacts/%s", g, name);                                    \
        st = h5out_array(w->h, path, type, rank, dims, data, err);                                 \
    }
    SNAPC("pair", H5IO_INT32, 2, nc2, pair);
    SNAPC("normal", H5IO_DOUBLE, 2, nc3, buf);
    for (int k = 0; k < nc; k++) {
        vec3 R = snapshot_force(W, ds, k);
        buf[3 * k] = R.x, buf[3 * k + 1] = R.y, buf[3 * k + 2] = R.z;
    }
    SNAPC("force", H5IO_DOUBLE, 2, nc3, buf);
    SNAPC("gap", H5IO_DOUBLE, 1, &nc, gap);
    for (int k = 0; k < nc; k++)
        buf[k] = v3_norm(snapshot_force(W, ds, k));
    SNAPC("force_magnitude", H5IO_DOUBLE, 1, &nc, buf);
    long e3[2] = {2 * nc, 3};
    SNAPC("endpoints", H5IO_DOUBLE, 2, e3, ends);
    for (int k = 0; k < 2 * nc; k++)
        pair[k] = k;
    SNAPC("line", H5IO_INT32, 2, nc2, pair);
    free(ends);
    free(pair);
    free(gap);
    free(buf);
    /* every frame reaches the file: a killed run leaves a readable file up to here */
    if (st == CDLAB_OK)
        st = h5out_flush(w->h, err);
    if (st == CDLAB_OK && w->xmf)
        st = xdmf_add_snapshot(w->xmf, g, W->t, n, nc, err);
    return st;
#undef SNAP
#undef SNAPC
}

/* The volume of the Love-Weber stress: as given, or the current bounding box of the particles
 * (area in dimension 2, length in dimension 1). */
static double stress_volume(const world *W, double given)
{
    if (given > 0.0)
        return given;
    vec3 lo = v3(INFINITY, INFINITY, INFINITY), hi = v3(-INFINITY, -INFINITY, -INFINITY);
    for (int i = 0; i < W->P.n; i++) {
        double r = W->P.r[i];
        vec3 x = W->P.x[i];
        lo = v3(fmin(lo.x, x.x - r), fmin(lo.y, x.y - r), fmin(lo.z, x.z - r));
        hi = v3(fmax(hi.x, x.x + r), fmax(hi.y, x.y + r), fmax(hi.z, x.z + r));
    }
    if (W->P.n == 0)
        return 1.0;
    double V = hi.x - lo.x;
    if (W->P.dimension >= 2)
        V *= hi.y - lo.y;
    if (W->P.dimension == 3)
        V *= hi.z - lo.z;
    return V;
}

static void say(const run_hooks *hk, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void say(const run_hooks *hk, const char *fmt, ...)
{
    if (!hk || !hk->message)
        return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    hk->message(hk->user, line);
}

/* ---- checkpoints (restart) ----
 * /checkpoints/NNNNNNNN holds everything the next step reads: the particles' state, the walls,
 * the contact list (raw records: CD contact records with their forces, or the DEM pair store
 * with its history), the random stream, and the DEM solver's forces, neighbour-list paths and
 * energy ledger. A run continued from it gives bit-identical results to an uninterrupted one
 * (same build). Format 2: the DEM pairs are 64-byte dem_pair records (format 1 stored full
 * contact records in DEM runs too). */
#define CHECKPOINT_FORMAT "cdlab-checkpoint-2"
#define CONTACT_WORDS ((long)(sizeof(contact) / sizeof(int64_t)))
#define PAIR_WORDS ((long)(sizeof(dem_pair) / sizeof(int64_t)))

static status write_checkpoint(writer *w, const world *W, const cd_solver *cs, const dem_solver *ds,
                               diag *err)
{
    char g[64], path[128];
    snprintf(g, sizeof g, "/checkpoints/%08ld", W->step);
    const particles *P = &W->P;
    long n = P->n, n3[2] = {n, 3}, n4[2] = {n, 4}, nw = W->n_walls, nw3[2] = {nw, 3};
    int dem = ds->started;
    long words = dem ? PAIR_WORDS : CONTACT_WORDS;
    long nc = dem ? ds->npair : W->C.n, ncw[2] = {nc, words}, two = 2;
    status s;
    if ((s = h5out_group(w->h, g, err)) ||
        (s = h5out_attr_string(w->h, g, "format", CHECKPOINT_FORMAT, err)) ||
        (s = h5out_attr_int(w->h, g, "step", W->step, err)) ||
        (s = h5out_attr_int(w->h, g, "particles", n, err)) ||
        (s = h5out_attr_int(w->h, g, "walls", nw, err)) ||
        (s = h5out_attr_int(w->h, g, "contacts", nc, err)) ||
        (s = h5out_attr_string(w->h, g, "contact_record", dem ? "dem_pair" : "contact", err)) ||
        (s = h5out_attr_int(w->h, g, "contact_bytes", words * 8, err)) ||
        (s = h5out_attr_int(w->h, g, "dem_rebuilds", ds->rebuilds, err)))
        return s;
#define CK(name, type, rank, dims, data)                                                           \
    do {                                                                                           \
        snprintf(path, sizeof path, "%s/%s", g, name);                                             \
        if ((s = h5out_array(w->h, path, type, rank, dims, data, err)))                            \
            return s;                                                                              \
    } while (0)
    CK("x", H5IO_DOUBLE, 2, n3, P->x);
    CK("v", H5IO_DOUBLE, 2, n3, P->v);
    CK("w", H5IO_DOUBLE, 2, n3, P->w);
    CK("q", H5IO_DOUBLE, 2, n4, P->q);
    CK("image", H5IO_INT32, 2, n3, P->image);
    double *wb = malloc((size_t)(nw > 0 ? nw : 1) * 3 * sizeof *wb);
    if (!wb)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory writing a checkpoint");
    for (int k = 0; k < nw; k++) {
        wb[3 * k] = W->walls[k].s;
        wb[3 * k + 1] = W->walls[k].u;
        wb[3 * k + 2] = W->walls[k].contact_force;
    }
    s = h5out_array(w->h, (snprintf(path, sizeof path, "%s/walls", g), path), H5IO_DOUBLE, 2, nw3,
                    wb, err);
    free(wb);
    if (s)
        return s;
    int64_t rng[2] = {(int64_t)cs->rng.state, (int64_t)cs->rng.inc};
    CK("rng", H5IO_INT64, 1, &two, rng);
    CK("contacts", H5IO_INT64, 2, ncw, dem ? (const void *)ds->pair : (const void *)W->C.c);
    if (ds->started) {
        long ne = (long)(sizeof ds->E / sizeof(double)), nwp = nw;
        CK("dem_F", H5IO_DOUBLE, 2, n3, ds->F);
        CK("dem_T", H5IO_DOUBLE, 2, n3, ds->T);
        CK("dem_path", H5IO_DOUBLE, 1, &n, ds->path);
        CK("dem_piston_F", H5IO_DOUBLE, 1, &nwp, ds->piston_F);
        CK("dem_energy", H5IO_DOUBLE, 1, &ne, &ds->E);
        long one = 1;
        CK("dem_wall_path", H5IO_DOUBLE, 1, &one, &ds->wall_path);
    }
#undef CK
    return h5out_flush(w->h, err);
}

/* Restores the state of the last checkpoint of file into a world built from the same config. */
static status read_checkpoint(const char *file, run_mode mode, world *W, cd_solver *cs,
                              dem_solver *ds, const dem_params *dp, diag *err)
{
    h5in *h;
    status s = h5in_open(&h, file, err);
    if (s)
        return s;
    char last[256], g[300], path[400];
    long long step = 0, n = 0, nw = 0, nc = 0, cb = 0, rb = 0;
    char *fmt = NULL;
    if ((s = h5in_last_child(h, "/checkpoints", last, err)))
        goto done;
    snprintf(g, sizeof g, "/checkpoints/%s", last);
    if ((s = h5in_attr_str(h, g, "format", &fmt, err)))
        goto done;
    if (strcmp(fmt, CHECKPOINT_FORMAT) != 0) {
        s = diag_set(err, CDLAB_ERR_IO, "%s: checkpoint format '%s', this cdlab reads '%s'", file,
                     fmt, CHECKPOINT_FORMAT);
        goto done;
    }
    if ((s = h5in_attr_int(h, g, "step", &step, err)) ||
        (s = h5in_attr_int(h, g, "particles", &n, err)) ||
        (s = h5in_attr_int(h, g, "walls", &nw, err)) ||
        (s = h5in_attr_int(h, g, "contacts", &nc, err)) ||
        (s = h5in_attr_int(h, g, "contact_bytes", &cb, err)) ||
        (s = h5in_attr_int(h, g, "dem_rebuilds", &rb, err)))
        goto done;
    int dem = mode == MODE_DEM;
    long words = dem ? PAIR_WORDS : CONTACT_WORDS;
    if (n != W->P.n || nw != W->n_walls || cb != words * 8 || nc < 0 || nc > INT32_MAX / 2 ||
        step < 0) {
        s = diag_set(err, CDLAB_ERR_IO,
                     "%s: checkpoint of %lld particles, %lld walls, %lld-byte contacts does not "
                     "match this config and build (%d particles, %d walls, %ld-byte %s records)",
                     file, n, nw, cb, W->P.n, W->n_walls, words * 8, dem ? "DEM pair" : "contact");
        goto done;
    }
    {
        contact_list *L = &W->C;
        void *cbuf;
        if (dem) {
            if ((s = dem_reserve_pairs(ds, (int)nc, err)) != CDLAB_OK)
                goto done;
            ds->npair = (int)nc;
            cbuf = ds->pair;
        } else {
            contact *buf = NULL;
            if (nc > 0 && posix_memalign((void **)&buf, 64, (size_t)nc * sizeof *buf) != 0) {
                s = diag_set(err, CDLAB_ERR_NOMEM, "out of memory reading a checkpoint");
                goto done;
            }
            free(L->c);
            L->c = buf;
            L->n = L->cap = (int)nc;
            cbuf = buf;
        }
        long n3 = 3 * n, nn = n, nw3 = 3 * nw;
        double *wb = malloc((size_t)(nw3 > 0 ? nw3 : 1) * sizeof *wb);
        int64_t rng[2];
#define RD(name, type, data, count)                                                                \
    if (s == CDLAB_OK) {                                                                           \
        snprintf(path, sizeof path, "%s/%s", g, name);                                             \
        s = h5in_read(h, path, type, data, count, err);                                            \
    }
        if (!wb)
            s = diag_set(err, CDLAB_ERR_NOMEM, "out of memory reading a checkpoint");
        RD("x", H5IO_DOUBLE, W->P.x, n3);
        RD("v", H5IO_DOUBLE, W->P.v, n3);
        RD("w", H5IO_DOUBLE, W->P.w, n3);
        RD("q", H5IO_DOUBLE, W->P.q, 4 * nn);
        RD("image", H5IO_INT32, W->P.image, n3);
        RD("walls", H5IO_DOUBLE, wb, nw3);
        RD("rng", H5IO_INT64, rng, 2);
        RD("contacts", H5IO_INT64, cbuf, nc * words);
        if (s == CDLAB_OK) {
            for (int k = 0; k < nw; k++) {
                W->walls[k].s = wb[3 * k];
                W->walls[k].u = wb[3 * k + 1];
                W->walls[k].contact_force = wb[3 * k + 2];
            }
            cs->rng.state = (uint64_t)rng[0];
            cs->rng.inc = (uint64_t)rng[1];
            for (long k = 0; k < nc; k++) {
                int ci = dem ? ds->pair[k].i : L->c[k].i, cj = dem ? ds->pair[k].j : L->c[k].j;
                if (cj < 0 || cj >= n || ci >= n || ci < -nw) {
                    s = diag_set(err, CDLAB_ERR_IO, "%s: corrupt checkpoint (contact %ld)", file,
                                 k);
                    break;
                }
            }
        }
        free(wb);
        if (s == CDLAB_OK && mode == MODE_DEM) {
            if ((s = dem_resume(W, ds, dp, err)) == CDLAB_OK) {
                long ne = (long)(sizeof ds->E / sizeof(double));
                RD("dem_F", H5IO_DOUBLE, ds->F, n3);
                RD("dem_T", H5IO_DOUBLE, ds->T, n3);
                RD("dem_path", H5IO_DOUBLE, ds->path, nn);
                RD("dem_piston_F", H5IO_DOUBLE, ds->piston_F, (long)nw);
                RD("dem_energy", H5IO_DOUBLE, &ds->E, ne);
                RD("dem_wall_path", H5IO_DOUBLE, &ds->wall_path, 1);
            }
            ds->rebuilds = rb;
        }
#undef RD
    }
    if (s == CDLAB_OK) {
        W->step = (long)step;
        W->t = (double)step * W->dt;
    }
done:
    free(fmt);
    h5in_close(h);
    return s;
}

/* Right after the sweeps of a step: the problem, its residual, the file. */
static status export_fclib(world *W, const cd_params *p, const cd_stats *st, const char *cfg,
                           const char *path, const run_hooks *hk, diag *err)
{
    contact_problem cp;
    status s = contact_problem_build(W, &cp, err);
    if (s != CDLAB_OK)
        return s;
    double res_abs;
    double res =
        natural_map_residual(cp.nc, cp.d, cp.colptr, cp.row, cp.val, cp.q, cp.mu, cp.r, &res_abs);
    long step = W->step + 1; /* the step being solved */
    double t = (double)step * W->dt;
    char title[700], desc[1024];
    snprintf(title, sizeof title, "cdlab %s, step %ld", cfg, step);
    snprintf(desc, sizeof desc,
             "Contact dynamics step %ld (t = %.17g, dt = %.17g) of %s: %d contacts, dimension %d; "
             "cdlab solution after %d sweeps (%s sweep, %s criterion, epsilon %g, converged %d)",
             step, t, W->dt, cfg, cp.nc, W->P.dimension, st->sweeps, cd_sweep_names[p->sweep],
             cd_criterion_names[p->crit], p->epsilon, st->converged);
    fclib_meta meta = {.title = title,
                       .description = desc,
                       .step = step,
                       .t = t,
                       .dt = W->dt,
                       .sweeps = st->sweeps,
                       .converged = st->converged,
                       .solver_residual = st->residual,
                       .criterion = cd_criterion_names[p->crit],
                       .sweep = cd_sweep_names[p->sweep],
                       .epsilon = p->epsilon,
                       .natural_map = res};
    s = contact_problem_write_fclib(&cp, path, &meta, err);
    if (s == CDLAB_OK)
        say(hk,
            "fclib: step %ld written to %s: %d contacts, local dimension %d, W %d x %d with %d "
            "entries; natural-map residual of cdlab's solution %.3g (relative), %.3g (absolute)",
            step, path, cp.nc, cp.d, cp.m, cp.m, cp.nnz, res, res_abs);
    contact_problem_free(&cp);
    return s;
}

status cd_run(config *c, const char *out_path, const run_hooks *hk, run_summary *sum, diag *err)
{
    memset(sum, 0, sizeof *sum);
    setup S;
    status s = read_all(c, &S, err);
    if (s != CDLAB_OK) {
        setup_free(&S);
        return s;
    }
    if (out_path) {
        snprintf(S.out.file, sizeof S.out.file, "%s", out_path);
        config_record(c, "output", "file", "%s", out_path);
    }
    world *W = &S.W;
    if (S.notice[0])
        say(hk, "%s", S.notice);
    say(hk, "cdlab %s (%s): %s mode, %d particles, dimension %d, %d walls, %ld steps of dt = %g",
        cdlab_version, cdlab_git_commit, mode_names[S.mode], W->P.n, W->P.dimension, W->n_walls,
        S.info.steps, W->dt);
    if (S.mode == MODE_CD) {
        cd_elasticity e =
            cd_elasticity_of(S.prm.sweep, S.prm.iterations, W->dt, S.info.d_mean, S.info.m_mean);
        say(hk,
            "solver: sweep %s, criterion %s, iterations %d, epsilon %g, delta %g, warm start %s",
            cd_sweep_names[S.prm.sweep], cd_criterion_names[S.prm.crit], S.prm.iterations,
            S.prm.epsilon, S.prm.delta, S.prm.warm_start ? "on" : "off");
        if (S.prm.crit == CRIT_FIXED && isfinite(e.q)) {
            say(hk,
                "spurious elasticity (Unger & Kertesz eqs. 54-68, N_I = %d, q = %.4f): c = %.4g, "
                "D = %.4g, l_diff = %.4g, L = %.4g, L/l_diff = %.3g, kappa_eff = %.4g, "
                "gamma_eff = %.4g",
                S.prm.iterations, e.q, e.c, e.D, e.l_diff, S.info.length, S.info.length / e.l_diff,
                e.kappa, e.gamma);
            if (e.l_diff < S.info.length)
                say(hk,
                    "warning: l_diff = %.4g < L = %.4g: the packing is in the spuriously soft "
                    "regime (N_I = %d too small for rigid behaviour, eq. 48)",
                    e.l_diff, S.info.length, S.prm.iterations);
        }
    } else {
        const dem_params *p = &S.dem.p;
        say(hk,
            "DEM: k_n = %.6g, k_t = %.6g, tangential law %s (projection %s, twirl %s), "
            "dashpots %s n = %g, t = %g%s",
            p->law.k_n, p->law.k_t, p->law.tangential == DEM_KUHN ? "kuhn" : "conventional",
            p->law.projection ? "on" : "off", p->law.twirl ? "on" : "off",
            p->damp_rate       ? "rate (c = m_eff gamma)"
            : p->damp_absolute ? "absolute"
                               : "fraction of critical",
            p->damp_n, p->damp_t, S.dem.from_cd ? " (from the CD equivalence, eqs. 67-68)" : "");
        if (S.dem.drive == DRIVE_NONE)
            say(hk, "DEM: critical time step %.6g, dt = %g (%.3g of it)%s", S.dem.dt_crit, W->dt,
                W->dt / S.dem.dt_crit,
                W->dt > S.dem.dt_crit ? "  WARNING: above it (dem.allow_unstable_dt)" : "");
        else if (S.dem.drive == DRIVE_ROTATION)
            say(hk,
                "DEM: kinematic drive, rigid rotation by (%g, %g, %g) per step about "
                "(%g, %g, %g); no dynamics",
                S.dem.rotation.x, S.dem.rotation.y, S.dem.rotation.z, S.dem.centre.x,
                S.dem.centre.y, S.dem.centre.z);
        else
            say(hk,
                "DEM: kinematic drive, affine displacement gradient per step about "
                "(%g, %g, %g); no dynamics",
                S.dem.centre.x, S.dem.centre.y, S.dem.centre.z);
    }
    say(hk, "output: %s (snapshots every %ld steps, %d probes)", S.out.file, S.out.every,
        S.out.n_probes);

    writer w;
    memset(&w, 0, sizeof w);
    if (hk && hk->restart) {
        /* the output would be truncated before the checkpoint is read */
        struct stat a, b;
        if (stat(hk->restart, &a) != 0) {
            setup_free(&S);
            return diag_set(err, CDLAB_ERR_IO, "%s: cannot open restart file: %s", hk->restart,
                            strerror(errno));
        }
        if (stat(S.out.file, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
            setup_free(&S);
            return diag_set(err, CDLAB_ERR_ARG,
                            "the output file %s is the restart file; give another one with -o",
                            S.out.file);
        }
    }
    if ((s = h5out_create(&w.h, S.out.file, err)) || (s = write_header(&w, c, &S, err)) ||
        (s = xdmf_create(&w.xmf, S.out.file, err))) {
        diag tmp;
        h5out_close(w.h, &tmp);
        xdmf_close(w.xmf, &tmp);
        free(w.piston_idx);
        free(w.row);
        setup_free(&S);
        return s;
    }
    cd_solver solver;
    cd_solver_init(&solver, S.info.seed);
    dem_solver dsolver;
    dem_solver_init(&dsolver);
    cd_stats st = {.converged = 1};
    dem_stats dst;
    memset(&dst, 0, sizeof dst);
    step_record rec = {.converged = 1};
    double sigma[3][3];
    vec3 *du = NULL, *dth = NULL;
    if (S.mode == MODE_DEM && S.dem.drive != DRIVE_NONE) {
        du = malloc((size_t)(W->P.n > 0 ? W->P.n : 1) * sizeof *du);
        dth = malloc((size_t)(W->P.n > 0 ? W->P.n : 1) * sizeof *dth);
        if (!du || !dth)
            s = diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    }
    if (s == CDLAB_OK && hk && hk->restart) {
        s = read_checkpoint(hk->restart, S.mode, W, &solver, &dsolver, &S.dem.p, err);
        if (s == CDLAB_OK && W->step >= S.info.steps)
            s = diag_set(err, CDLAB_ERR_CONFIG,
                         "%s: its checkpoint is at step %ld, system.steps = %ld: nothing to do "
                         "(raise system.steps, e.g. --set system.steps=N)",
                         hk->restart, W->step, S.info.steps);
        if (s == CDLAB_OK) {
            say(hk, "restart: continuing from step %ld of %s", W->step, hk->restart);
            h5out_group(w.h, "/restart", err);
            h5out_attr_string(w.h, "/restart", "from_file", hk->restart, err);
            h5out_attr_int(w.h, "/restart", "from_step", W->step, err);
        }
        if (s == CDLAB_OK && S.mode == MODE_DEM) {
            rec.energy = &dsolver.E;
            dem_stress(W, &dsolver, stress_volume(W, S.dem.stress_volume), sigma);
            rec.stress = &sigma[0][0];
        }
    } else if (S.mode == MODE_DEM && s == CDLAB_OK) {
        s = dem_start(W, &dsolver, &S.dem.p, &dst, err);
        rec.energy = &dsolver.E;
        dem_stress(W, &dsolver, stress_volume(W, S.dem.stress_volume), sigma);
        rec.stress = &sigma[0][0];
        rec.n_contacts = dst.n_contacts;
        rec.n_active = dst.n_active;
        rec.n_sliding = dst.n_sliding;
        rec.mean_overlap = dst.mean_overlap;
        rec.max_overlap = dst.max_overlap;
    }
    /* the initial state is row 0 of the series and the first snapshot */
    if (s == CDLAB_OK)
        s = write_row(&w, W, &S.out, &rec, err);
    if (s == CDLAB_OK)
        s = write_snapshot(&w, W, S.mode == MODE_DEM ? &dsolver : NULL, err);
    long first = W->step;
    long fclib_step = hk ? hk->fclib_step : 0;
    char fclib_path[600];
    if (hk && hk->fclib_path)
        snprintf(fclib_path, sizeof fclib_path, "%s", hk->fclib_path);
    else { /* OUT.h5 -> OUT-stepN.fclib.h5 */
        char suffix[64];
        snprintf(suffix, sizeof suffix, "-step%ld.fclib.h5", fclib_step);
        h5_sibling_path(S.out.file, suffix, fclib_path, sizeof fclib_path);
    }
    if (s == CDLAB_OK && fclib_step != 0) {
        if (S.mode != MODE_CD)
            s = diag_set(err, CDLAB_ERR_ARG,
                         "--export-fclib: only contact dynamics runs have a contact problem to "
                         "export (this is a DEM run)");
        else if (fclib_step <= first || fclib_step > S.info.steps)
            s = diag_set(err, CDLAB_ERR_ARG,
                         "--export-fclib %ld: the run does steps %ld to %ld; give a step in "
                         "that range",
                         fclib_step, first + 1, S.info.steps);
    }
    double t0 = now_seconds(), sweeps_total = 0.0;
    sum->started = s == CDLAB_OK; /* a bad --export-fclib step is a command-line error */
    snprintf(sum->out_file, sizeof sum->out_file, "%s", S.out.file);
    for (long k = first; k < S.info.steps && s == CDLAB_OK; k++) {
        double ts = now_seconds();
        if (S.mode == MODE_CD) {
            s = cd_step_solve(W, &solver, &S.prm, &st, err);
            if (s == CDLAB_OK && fclib_step == W->step + 1)
                s = export_fclib(W, &S.prm, &st, c->file, fclib_path, hk, err);
            if (s == CDLAB_OK)
                s = cd_step_finish(W, &S.prm, &st, err);
            sum->solve_seconds += st.solve_seconds;
            sum->contact_updates += (double)st.n_contacts * st.sweeps;
            rec = (step_record){.sweeps = st.sweeps,
                                .converged = st.converged,
                                .n_contacts = st.n_contacts,
                                .n_active = st.n_active,
                                .n_sliding = st.n_sliding,
                                .residual = st.residual,
                                .mean_overlap = st.mean_overlap,
                                .max_overlap = st.max_overlap};
        } else {
            if (S.dem.drive == DRIVE_NONE) {
                s = dem_step(W, &dsolver, &S.dem.p, &dst, err);
            } else {
                if (S.dem.drive == DRIVE_ROTATION)
                    dem_rigid_rotation(W, S.dem.centre, S.dem.rotation, du, dth);
                else
                    dem_affine(W, S.dem.centre, S.dem.G, du, dth);
                s = dem_kinematic_step(W, &dsolver, &S.dem.p, du, dth, &dst, err);
            }
            double scale = fabs(dsolver.E.initial) + fabs(dsolver.E.work_external) +
                           fabs(dsolver.E.work_piston);
            rec = (step_record){.sweeps = 0,
                                .converged = 1,
                                .n_contacts = dst.n_contacts,
                                .n_active = dst.n_active,
                                .n_sliding = dst.n_sliding,
                                .residual =
                                    scale > 0.0 ? dem_energy_residual(&dsolver.E) / scale : 0.0,
                                .mean_overlap = dst.mean_overlap,
                                .max_overlap = dst.max_overlap,
                                .energy = &dsolver.E,
                                .stress = &sigma[0][0]};
        }
        double spent = now_seconds() - ts;
        sum->step_seconds += spent;
        if (k - first >= S.out.timing_warmup) {
            sum->timed_step_seconds += spent;
            sum->timed_steps++;
        }
        sweeps_total += rec.sweeps;
        if (!rec.converged)
            sum->unconverged_steps++;
        sum->steps_done = W->step;
        /* a failed step is still recorded, so the file shows the state that failed */
        if (s != CDLAB_OK || W->step % S.out.series_every == 0 || W->step == S.info.steps) {
            if (S.mode == MODE_DEM) /* a pass over the contacts: only for the rows written */
                dem_stress(W, &dsolver, stress_volume(W, S.dem.stress_volume), sigma);
            status sw = write_row(&w, W, &S.out, &rec, s == CDLAB_OK ? err : &(diag){{0}});
            if (s == CDLAB_OK)
                s = sw;
        }
        if (s == CDLAB_OK &&
            ((S.out.every > 0 && W->step % S.out.every == 0) || W->step == S.info.steps))
            s = write_snapshot(&w, W, S.mode == MODE_DEM ? &dsolver : NULL, err);
        if (s == CDLAB_OK &&
            ((S.out.checkpoint_every > 0 && W->step % S.out.checkpoint_every == 0) ||
             W->step == S.info.steps))
            s = write_checkpoint(&w, W, &solver, &dsolver, err);
        /* a signal during the last step: the run is complete, its checkpoint written */
        if (s == CDLAB_OK && hk && hk->stop && *hk->stop && W->step < S.info.steps) {
            int sig = *hk->stop;
            if (S.out.every == 0 || W->step % S.out.every != 0)
                s = write_snapshot(&w, W, S.mode == MODE_DEM ? &dsolver : NULL, err);
            if (s == CDLAB_OK)
                s = write_checkpoint(&w, W, &solver, &dsolver, err);
            if (s == CDLAB_OK)
                s = diag_set(err, CDLAB_ERR_INTERRUPTED,
                             "interrupted by signal %d after step %ld of %ld; %s holds every frame "
                             "so far",
                             sig, W->step, S.info.steps, S.out.file);
        }
        if (hk && hk->progress) {
            run_progress p = {.step = W->step,
                              .steps = S.info.steps,
                              .t = W->t,
                              .sweeps = rec.sweeps,
                              .mean_overlap = rec.mean_overlap,
                              .elapsed = now_seconds() - t0};
            hk->progress(hk->user, &p);
        }
    }
    sum->wall_seconds = now_seconds() - t0;
    sum->mean_sweeps = sum->steps_done > 0 ? sweeps_total / (double)sum->steps_done : 0.0;
    diag tmp;
    diag *e2 = s == CDLAB_OK ? err : &tmp; /* keep the first error's message */
    status s2 = h5out_group(w.h, "/summary", e2);
    if (s2 == CDLAB_OK) {
        h5out_attr_string(w.h, "/summary", "status", s == CDLAB_OK ? "completed" : err->msg, e2);
        h5out_attr_int(w.h, "/summary", "steps_done", sum->steps_done, e2);
        h5out_attr_double(w.h, "/summary", "wall_seconds", sum->wall_seconds, e2);
        h5out_attr_double(w.h, "/summary", "step_seconds", sum->step_seconds, e2);
        h5out_attr_double(w.h, "/summary", "solve_seconds", sum->solve_seconds, e2);
        h5out_attr_double(w.h, "/summary", "timed_step_seconds", sum->timed_step_seconds, e2);
        h5out_attr_int(w.h, "/summary", "timed_steps", sum->timed_steps, e2);
        h5out_attr_int(w.h, "/summary", "neighbour_rebuilds", dsolver.rebuilds, e2);
        struct rusage ru;
        if (getrusage(RUSAGE_SELF, &ru) == 0)
            h5out_attr_int(w.h, "/summary", "peak_rss_kib", ru.ru_maxrss, e2);
        h5out_attr_double(w.h, "/summary", "contact_updates", sum->contact_updates, e2);
        h5out_attr_double(w.h, "/summary", "mean_sweeps", sum->mean_sweeps, e2);
        h5out_attr_int(w.h, "/summary", "unconverged_steps", sum->unconverged_steps, e2);
    }
    s2 = h5out_close(w.h, e2);
    if (s == CDLAB_OK)
        s = s2;
    s2 = xdmf_close(w.xmf, s == CDLAB_OK ? err : &tmp);
    if (s == CDLAB_OK)
        s = s2;
    cd_solver_free(&solver);
    dem_solver_free(&dsolver);
    free(du);
    free(dth);
    free(w.piston_idx);
    free(w.row);
    setup_free(&S);
    return s;
}

/* Contact dynamics across MPI ranks: see cd_dist.h. */
#include "nscd/cd_dist.h"

#include "comm.h"
#include "grow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* a contact between ranks: body 0 (its id, or the wall code < 0), body 1 (id), R (3), mu */
#define CONTACT_REC 6
/* what a halo copy needs during the sweeps: v, w */
#define VW 6
/* pistons shared per reduction */
#define CD_MAX_PISTON_SHARE 8

static void contact_pack(const world *W, const contact *c, double *o)
{
    o[0] = c->i >= 0 ? W->P.id[c->i] : c->i;
    o[1] = W->P.id[c->j];
    o[2] = c->R.x, o[3] = c->R.y, o[4] = c->R.z;
    o[5] = c->mu;
}

/* Replaces the contact list L by the n records rec (bodies by id; those whose bodies are not
 * both in W are left out), in key order, with their geometry from W's current positions. */
static status install_contacts(id_map *map, const world *W, contact_list *L, const double *rec,
                               int n, diag *err)
{
    keyed_ref *kr = malloc((size_t)(n > 0 ? n : 1) * sizeof *kr);
    contact *c = grow_big(L->c, 0, &L->cap, n > 0 ? n : 1, sizeof *c);
    if (c)
        L->c = c;
    status s = CDLAB_OK;
    if (!kr || !c)
        s = diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate %d contacts", n);
    int m = 0;
    if (s == CDLAB_OK)
        s = exchange_id_map(map, &W->P, err);
    if (s == CDLAB_OK) {
        for (int k = 0; k < n; k++) {
            const double *r = rec + (size_t)k * CONTACT_REC;
            int j = exchange_local_of(map, (long)r[1]);
            int i = r[0] >= 0 ? exchange_local_of(map, (long)r[0]) : (int)r[0];
            if (j < 0 || (r[0] >= 0 && i < 0))
                continue;
            kr[m] = (keyed_ref){contact_key_of_ids((long)r[0], (long)r[1], W->n_walls), k};
            m++;
        }
        keyed_sort(kr, m);
        for (int k = 0; k < m; k++) {
            const double *r = rec + (size_t)kr[k].rec * CONTACT_REC;
            contact *ct = &L->c[k];
            memset(ct, 0, sizeof *ct); /* padding included: checkpoints store whole records */
            ct->i = r[0] >= 0 ? exchange_local_of(map, (long)r[0]) : (int)r[0];
            ct->j = exchange_local_of(map, (long)r[1]);
            ct->key = kr[k].key;
            ct->R = v3(r[2], r[3], r[4]);
            ct->mu = r[5];
            contact_geometry(ct, &W->P, W->walls);
        }
    }
    L->n = m;
    free(kr);
    return s;
}

/* Cuts the boxes afresh from everyone's own particles (weights: 1 + the contacts counted), each
 * rank giving its own (decomp_build_shared: no gather of every position). */
static status rebuild(cd_mpi *M, const world *W, int own, int full, diag *err)
{
    const particles *P = &W->P;
    double *w = malloc((size_t)(own > 0 ? own : 1) * sizeof *w);
    status s = w ? CDLAB_OK : diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the weights");
    for (int i = 0; i < own && s == CDLAB_OK; i++)
        w[i] = 1.0;
    for (int k = 0; k < M->L->n && s == CDLAB_OK && !full; k++)
        if (M->L->c[k].j < own)
            w[M->L->c[k].j] += 1.0;
    if (!full)
        s = comm_agree(s, err);
    if (s == CDLAB_OK) {
        if (M->have_decomp)
            decomp_free(&M->D);
        M->have_decomp = 0;
        /* every rank holds every particle already (the start): the cuts of them all */
        s = full
                ? decomp_build(&M->D, comm_size(), P->x, w, own, P->dimension, &P->box, err)
                : decomp_build_shared(&M->D, comm_size(), P->x, w, own, P->dimension, &P->box, err);
        M->have_decomp = s == CDLAB_OK;
        M->rebalances++;
    }
    free(w);
    return s;
}

/* The particles to the ranks whose boxes hold them, the warm-start forces to the ranks owning
 * one of their bodies, the halo copies. full: every rank holds the whole world (the start, a
 * restart) and keeps its share.
 * Long: the distributed detection's protocol (migration, halo, contacts and their records to their
 * ranks) in the order every rank follows. */
static status distribute(cd_mpi *M, world *W, const cd_params *p, int full, diag *err)
{
    particles *P = &W->P;
    contact_list *L = M->L;
    int R = comm_size(), me = comm_rank();
    int own = M->have_halo ? M->H.n_owned : P->n;
    status s = CDLAB_OK;
    /* the cuts: afresh at the start and when the load is out of balance */
    double load = own;
    for (int k = 0; k < L->n && !full; k++)
        load += L->c[k].j < own;
    if (full || !M->have_decomp || parallel_rebalance_due(&M->par, load, M->redistributions))
        s = rebuild(M, W, own, full, err);
    s = comm_agree(s, err);
    /* the forces the next detection starts from: to the new owners of the contacts' bodies */
    double *send = NULL, *recv = NULL;
    int *sc = calloc((size_t)R, sizeof *sc), *rc = malloc((size_t)R * sizeof *rc), nrec = 0;
    int ns = 0;
    for (int k = 0; k < L->n; k++)
        ns += p->warm_start && (full || L->c[k].j < own);
    if (s == CDLAB_OK &&
        (!sc || !rc || !(send = malloc((size_t)(2 * ns + 1) * CONTACT_REC * sizeof *send))))
        s = diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the contacts' exchange");
    if (s == CDLAB_OK && full) { /* keep those with a body in this rank's box */
        for (int k = 0; k < L->n && ns > 0; k++) {
            const contact *c = &L->c[k];
            if (decomp_owner(&M->D, P->x[c->j]) == me ||
                (c->i >= 0 && decomp_owner(&M->D, P->x[c->i]) == me))
                contact_pack(W, c, send + (size_t)nrec++ * CONTACT_REC);
        }
        recv = send, send = NULL;
    } else if (s == CDLAB_OK) { /* each counted contact to its bodies' owners, by rank */
        int *dest = malloc((size_t)(2 * ns + 1) * sizeof *dest), m = 0;
        double *buf = malloc((size_t)(2 * ns + 1) * CONTACT_REC * sizeof *buf);
        if (!dest || !buf)
            s = diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the contacts' exchange");
        for (int k = 0; k < L->n && s == CDLAB_OK && ns > 0; k++) {
            const contact *c = &L->c[k];
            if (c->j >= own || (c->R.x == 0.0 && c->R.y == 0.0 && c->R.z == 0.0))
                continue;
            int a = decomp_owner(&M->D, P->x[c->j]);
            int b = c->i >= 0 ? decomp_owner(&M->D, P->x[c->i]) : a;
            contact_pack(W, c, buf + (size_t)m * CONTACT_REC);
            dest[m++] = a;
            if (b != a) {
                memcpy(buf + (size_t)m * CONTACT_REC, buf + (size_t)(m - 1) * CONTACT_REC,
                       CONTACT_REC * sizeof *buf);
                dest[m++] = b;
            }
        }
        int *at = malloc((size_t)R * sizeof *at);
        if (s == CDLAB_OK && !at)
            s = diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the contacts' exchange");
        for (int k = 0; k < m && s == CDLAB_OK; k++)
            sc[dest[k]] += CONTACT_REC;
        for (int r = 0, a = 0; r < R && s == CDLAB_OK; r++)
            at[r] = a, a += sc[r];
        for (int k = 0; k < m && s == CDLAB_OK; k++) {
            memcpy(send + at[dest[k]], buf + (size_t)k * CONTACT_REC, CONTACT_REC * sizeof *buf);
            at[dest[k]] += CONTACT_REC;
        }
        int total = 0;
        if (s == CDLAB_OK)
            s = comm_exchange(send, sc, &recv, rc, &total, err);
        nrec = total / CONTACT_REC;
        free(at);
        free(dest);
        free(buf);
    }
    free(send);
    free(sc);
    free(rc);
    /* own particles to their owners (or the share kept), then the halo copies */
    if (M->have_halo) {
        exchange_halo_drop(P, &M->H);
        M->have_halo = 0;
    }
    if (s == CDLAB_OK && full) {
        unsigned char *keep = malloc((size_t)(P->n > 0 ? P->n : 1));
        if (!keep)
            s = diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
        for (int i = 0; i < P->n && s == CDLAB_OK; i++)
            keep[i] = decomp_owner(&M->D, P->x[i]) == me;
        if (s == CDLAB_OK)
            s = exchange_keep(P, keep, NULL, 0, err);
        free(keep);
    } else if (s == CDLAB_OK) {
        for (int i = 0; i < P->n; i++)
            M->migrated += decomp_owner(&M->D, P->x[i]) != me;
        s = exchange_migrate(P, &M->D, NULL, 0, err);
    }
    s = comm_agree(s, err);
    if (s == CDLAB_OK && (s = exchange_halo(P, &M->D, M->range, NULL, 0, &M->H, err)) == CDLAB_OK)
        M->have_halo = 1;
    if (s == CDLAB_OK)
        s = install_contacts(&M->ids, W, L, recv, nrec, err);
    free(recv);
    M->redistributions++;
    return comm_agree(s, err);
}

/* jacobi: the Jacobi sweep's new forces too (no other sweep has them) */
static status grow_buffers(cd_mpi *M, int n_contacts, int n_particles, int jacobi, diag *err)
{
    unsigned char *c = grow_array(M->count, &M->count_cap, n_contacts + 1, sizeof *c);
    if (c)
        M->count = c;
    int *idx = grow_array(M->idx, &M->idx_cap, n_contacts + CD_PERM_PAD, sizeof *idx);
    if (idx)
        M->idx = idx;
    vec3 *R = jacobi ? grow_array(M->R_next, &M->R_next_cap, n_contacts + 1, sizeof *R) : M->R_next;
    if (R)
        M->R_next = R;
    double *v = grow_array(M->vals, &M->vals_cap, VW * (n_particles + 1), sizeof *v);
    if (v)
        M->vals = v;
    if (!c || !idx || (jacobi && !R) || !v)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot grow the distributed solver's buffers");
    return CDLAB_OK;
}

/* After detection: the contacts with one of this rank's particles, the counted ones, the
 * colouring or this rank's sweep list and random stream. */
static status detected(cd_dist *d, world *W, cd_solver *S, const cd_params *p, status s, diag *err)
{
    cd_mpi *M = (cd_mpi *)d;
    if ((s = comm_agree(s, err)) != CDLAB_OK)
        return s;
    contact_list *L = &S->C;
    int own = M->H.n_owned, m = 0;
    for (int k = 0; k < L->n; k++) {
        const contact *c = &L->c[k];
        if (c->j < own || (c->i >= 0 && c->i < own))
            L->c[m++] = *c;
    }
    L->n = m;
    s = grow_buffers(M, m, W->P.n, p->sweep == SWEEP_JACOBI, err);
    int nidx = 0;
    for (int k = 0; k < m && s == CDLAB_OK; k++)
        if ((M->count[k] = L->c[k].j < own))
            M->idx[nidx++] = k;
    for (int k = nidx; k < nidx + CD_PERM_PAD && s == CDLAB_OK; k++)
        M->idx[k] = 0;
    d->contacts = nidx;
    d->n_owned = own;
    comm_allreduce_exact_sum(&d->contacts, 1); /* a count */
    for (int k = 0; k < W->n_walls && s == CDLAB_OK; k++)
        M->piston_u[k] = W->walls[k].u;
    if (s == CDLAB_OK && p->sweep == SWEEP_COLORED)
        s = cd_mpi_color(M, W, S, p->color_hashed, d->contacts, err);
    /* domain-wise random sweeps: a stream of this rank and step (a restart on as many ranks
     * continues it) */
    uint64_t mix = M->seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(W->step + 1));
    pcg32_seed(&M->rng, mix, PCG32_STREAM_SWEEP + ((uint64_t)(comm_rank() + 1) << 32));
    return comm_agree(s, err);
}

/* The halo copies' velocities from their owners. */
static status velocities(cd_dist *d, world *W, diag *err)
{
    cd_mpi *M = (cd_mpi *)d;
    particles *P = &W->P;
    /* the velocities where the sweeps keep them: the solver's records while gathered (the
     * colored sweep), else the particles' arrays */
    cd_body *B = M->S && M->S->bodies_on ? M->S->body : NULL;
    /* the owned particles other ranks hold copies of (not every owned one: this runs after
     * every colour; packing all of them took 6% of the step, 97,336 spheres on 2 ranks) */
    for (int k = 0; k < M->H.nsend; k++) {
        int i = M->H.send[k];
        double *r = M->vals + (size_t)i * VW;
        vec3 v = B ? B[i].v : P->v[i], w = B ? B[i].w : P->w[i];
        r[0] = v.x, r[1] = v.y, r[2] = v.z;
        r[3] = w.x, r[4] = w.y, r[5] = w.z;
    }
    status s = exchange_halo_values(&M->H, M->vals, VW, err);
    for (int i = M->H.n_owned; i < P->n && s == CDLAB_OK; i++) {
        const double *r = M->vals + (size_t)i * VW;
        if (B) {
            B[i].v = v3(r[0], r[1], r[2]);
            B[i].w = v3(r[3], r[4], r[5]);
        } else {
            P->v[i] = v3(r[0], r[1], r[2]);
            P->w[i] = v3(r[3], r[4], r[5]);
        }
    }
    return s;
}

/* The changes this rank made to its halo copies' velocities go to their owners (added there),
 * then the copies are refreshed. before: the copies' velocities before the sweep. */
static status return_changes(cd_mpi *M, world *W, const double *before, diag *err)
{
    particles *P = &W->P;
    int own = M->H.n_owned;
    for (int i = 0; i < own; i++)
        memset(M->vals + (size_t)i * VW, 0, VW * sizeof *M->vals);
    for (int i = own; i < P->n; i++) {
        double *r = M->vals + (size_t)i * VW;
        const double *b = before + (size_t)(i - own) * VW;
        r[0] = P->v[i].x - b[0], r[1] = P->v[i].y - b[1], r[2] = P->v[i].z - b[2];
        r[3] = P->w[i].x - b[3], r[4] = P->w[i].y - b[4], r[5] = P->w[i].z - b[5];
    }
    status s = exchange_halo_return(&M->H, M->vals, VW, err);
    for (int i = 0; i < own && s == CDLAB_OK; i++) {
        const double *r = M->vals + (size_t)i * VW;
        if (r[0] != 0.0 || r[1] != 0.0 || r[2] != 0.0 || r[3] != 0.0 || r[4] != 0.0 ||
            r[5] != 0.0) {
            P->v[i] = v3_add(P->v[i], v3(r[0], r[1], r[2]));
            P->w[i] = v3_add(P->w[i], v3(r[3], r[4], r[5]));
        }
    }
    return s == CDLAB_OK ? velocities(&M->ops, W, err) : s;
}

static int has_pistons(const world *W)
{
    for (int k = 0; k < W->n_walls; k++)
        if (W->walls[k].kind == WALL_PISTON)
            return 1;
    return 0;
}

/* The pistons' contacts of all ranks in key order (what one process sums a piston's warm start
 * and contact force over): *rec (malloc'ed) holds wall code, particle id, R (3) each. */
static status piston_contacts(const world *W, const contact_list *L, double **all, int *n,
                              diag *err)
{
    int m = 0;
    for (int k = 0; k < L->n; k++)
        m += L->c[k].i < 0 && W->walls[-1 - L->c[k].i].kind == WALL_PISTON;
    double *rec = malloc((size_t)(m > 0 ? m : 1) * 5 * sizeof *rec), *got = NULL, *sorted = NULL;
    status s = rec ? CDLAB_OK : diag_set(err, CDLAB_ERR_NOMEM, "cannot gather the pistons");
    for (int k = 0, a = 0; k < L->n && s == CDLAB_OK; k++) {
        const contact *c = &L->c[k];
        if (c->i >= 0 || W->walls[-1 - c->i].kind != WALL_PISTON)
            continue;
        double *r = rec + (size_t)5 * a++;
        r[0] = c->i, r[1] = W->P.id[c->j], r[2] = c->R.x, r[3] = c->R.y, r[4] = c->R.z;
    }
    int total = 0;
    if (s == CDLAB_OK)
        s = comm_allgather(rec, 5 * m, &got, &total, err);
    free(rec);
    int g = total / 5;
    keyed_ref *kr = malloc((size_t)(g > 0 ? g : 1) * sizeof *kr);
    sorted = malloc((size_t)(g > 0 ? g : 1) * 5 * sizeof *sorted);
    if (s == CDLAB_OK && (!kr || !sorted))
        s = diag_set(err, CDLAB_ERR_NOMEM, "cannot gather the pistons");
    for (int k = 0; k < g && s == CDLAB_OK; k++)
        kr[k] =
            (keyed_ref){contact_key_of_ids((long)got[5 * k], (long)got[5 * k + 1], W->n_walls), k};
    keyed_sort(kr, s == CDLAB_OK ? g : 0);
    for (int k = 0; k < g && s == CDLAB_OK; k++)
        memcpy(sorted + (size_t)5 * k, got + (size_t)5 * kr[k].rec, 5 * sizeof *sorted);
    free(got);
    free(kr);
    *all = sorted;
    *n = g;
    return s;
}

/* After the warm start: each piston's velocity made again as one process makes it (its free
 * velocity, then its contacts' carried-over impulses in key order), then the halo copies'. */
static status warm_started(cd_dist *d, world *W, diag *err)
{
    cd_mpi *M = (cd_mpi *)d;
    status s = CDLAB_OK;
    if (has_pistons(W)) {
        double *pc = NULL, dt = W->dt, t_new = (double)(W->step + 1) * dt;
        int n = 0;
        s = piston_contacts(W, M->L, &pc, &n, err);
        for (int k = 0; k < W->n_walls && s == CDLAB_OK; k++) {
            wall *w = &W->walls[k];
            if (w->kind == WALL_PISTON) {
                w->u = M->piston_u[k];
                w->u += dt * w->inv_mass * wall_piston_force(w, t_new);
            }
        }
        for (int k = 0; k < n && s == CDLAB_OK; k++) {
            const double *r = pc + (size_t)5 * k;
            vec3 R = v3(r[2], r[3], r[4]);
            wall *w = &W->walls[-1 - (int)r[0]];
            if (R.x != 0.0 || R.y != 0.0 || R.z != 0.0)
                w->u -= w->inv_mass * v3_dot(v3_scale(R, dt), w->n);
        }
        free(pc);
    }
    s = comm_agree(s, err);
    return s == CDLAB_OK ? velocities(d, W, err) : s;
}

/* The pistons' velocities after a colour (changed by one rank at most: its value) or a
 * domain-wise sweep (every rank's change added). before: the velocities before it. */
static void share_pistons(world *W, const double *before, int colored)
{
    int nw = W->n_walls;
    double v[2 * CD_MAX_PISTON_SHARE];
    for (int k0 = 0; k0 < nw; k0 += CD_MAX_PISTON_SHARE) {
        int m = nw - k0 < CD_MAX_PISTON_SHARE ? nw - k0 : CD_MAX_PISTON_SHARE;
        for (int k = 0; k < m; k++) {
            double u = W->walls[k0 + k].u, b = before[k0 + k];
            int changed = memcmp(&u, &b, sizeof u) != 0;
            v[2 * k] = changed;
            v[2 * k + 1] = colored ? (changed ? u : 0.0) : u - b;
        }
        if (colored) /* counts of changes, and the one changed value: exact sums */
            comm_allreduce_exact_sum(v, 2 * m);
        else
            comm_allreduce(v, 2 * m, COMM_SUM);
        for (int k = 0; k < m; k++) {
            wall *w = &W->walls[k0 + k];
            if (w->kind != WALL_PISTON)
                continue;
            if (colored)
                w->u = v[2 * k] > 0.0 ? v[2 * k + 1] : before[k0 + k];
            else
                w->u = before[k0 + k] + v[2 * k + 1];
        }
    }
}

static status sweep(cd_dist *d, world *W, cd_solver *S, const cd_params *p, int measure,
                    sweep_result *r, diag *err)
{
    cd_mpi *M = (cd_mpi *)d;
    contact_list *L = &S->C;
    status s = CDLAB_OK;
    sweep_result_init(r);
    int pistons = has_pistons(W);
    double *before_u = M->piston_u + W->n_walls; /* the second half of the buffer */
    if (p->sweep == SWEEP_COLORED) {
        /* the sweeps on the solver's one-line records, as in one process (gathered before the
         * step's first sweep, after the warm start's refresh; written back by the step after
         * its last); the halo refreshes read and write them there */
        if (M->gathered_step != W->step) { /* every rank at its first sweep of the step */
            if (!S->bodies_on && W->P.n > 0)
                s = cd_bodies_gather(W, S, err);
            s = comm_agree(s, err);
            M->gathered_step = W->step;
            M->S = S;
        }
        /* the draws of one process: the colours' order, then each colour's shuffle (the order
         * within a colour changes nothing but the measures' rounding: not applied) */
        int nc = S->n_colors;
        for (int c = 0; c < nc; c++)
            S->color_order[c] = c;
        cd_shuffle(&S->rng, S->color_order, nc);
        for (int c = 0; c < nc && s == CDLAB_OK; c++)
            s = cd_shuffle_skip(S, M->gsize[c], err);
        for (int q = 0; q < nc && s == CDLAB_OK; q++) {
            int c = S->color_order[q], lo = S->color_start[c], hi = S->color_start[c + 1];
            for (int k = 0; k < W->n_walls && pistons; k++)
                before_u[k] = W->walls[k].u;
            if (S->bodies_on)
                cd_sweep_records(W, S, p, S->perm + lo, hi - lo, M->count, measure, r);
            else
                sweep_contacts(W, L, p, S->perm + lo, hi - lo, 0, NULL, M->count, measure, r);
            if (pistons)
                share_pistons(W, before_u, 1);
            s = comm_agree(velocities(d, W, err), err);
        }
    } else {
        int n = 0, own = M->H.n_owned, ghosts = W->P.n - own;
        for (int k = 0; k < L->n; k++)
            n += M->count[k];
        double *before = malloc((size_t)(ghosts > 0 ? ghosts : 1) * VW * sizeof *before);
        int *perm = grow_array(S->perm, &S->perm_cap, n + CD_PERM_PAD, sizeof *perm);
        if (perm)
            S->perm = perm;
        if (!perm || !before)
            s = diag_set(err, CDLAB_ERR_NOMEM, "cannot grow the sweep's buffers");
        /* every rank learns of a failed allocation before the exchanges below */
        s = comm_agree(s, err);
        for (int k = 0; k < n + CD_PERM_PAD && s == CDLAB_OK; k++)
            perm[k] = k < n && p->sweep == SWEEP_BACKWARD ? M->idx[n - 1 - k] : M->idx[k];
        if (s == CDLAB_OK && p->sweep == SWEEP_RANDOM)
            cd_shuffle(&M->rng, perm, n);
        for (int i = 0; i < ghosts && s == CDLAB_OK; i++) {
            double *b = before + (size_t)i * VW;
            vec3 v = W->P.v[own + i], w = W->P.w[own + i];
            b[0] = v.x, b[1] = v.y, b[2] = v.z, b[3] = w.x, b[4] = w.y, b[5] = w.z;
        }
        for (int k = 0; k < W->n_walls && pistons; k++)
            before_u[k] = W->walls[k].u;
        if (s == CDLAB_OK)
            sweep_contacts(W, L, p, perm, n, p->sweep == SWEEP_JACOBI, M->R_next, NULL, measure, r);
        if (pistons && s == CDLAB_OK)
            share_pistons(W, before_u, 0);
        if (s == CDLAB_OK)
            s = return_changes(M, W, before, err);
        free(before);
        s = comm_agree(s, err);
    }
    if (s == CDLAB_OK && measure) { /* maxima and exact sums: the same bits on every rank */
        double mx[2] = {r->max_rel_change, r->local_ok ? 0.0 : 1.0};
        comm_allreduce(mx, 2, COMM_MAX);
        r->max_rel_change = mx[0];
        r->local_ok = mx[1] == 0.0;
        if (p->crit == CRIT_GLOBAL) {
            xsum sums[2] = {r->abs_before, r->abs_after};
            s = comm_agree(exchange_merge_sums(sums, 2, err), err);
            r->abs_before = sums[0];
            r->abs_after = sums[1];
        }
    }
    return s;
}

status cd_mpi_init(cd_mpi *M, world *W, cd_solver *S, const cd_params *p,
                   const parallel_params *par, uint64_t seed, diag *err)
{
    memset(M, 0, sizeof *M);
    M->ops = (cd_dist){.detected = detected,
                       .velocities = velocities,
                       .warm_started = warm_started,
                       .sweep = sweep};
    M->L = &S->C;
    M->par = *par;
    M->seed = seed;
    M->gathered_step = -1;
    status s = CDLAB_OK;
    if (!(M->piston_u = calloc((size_t)(2 * W->n_walls + 1), sizeof *M->piston_u)))
        s = diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    if (s == CDLAB_OK)
        s = exchange_halo_range(&W->P, W->detect.gap, "distributed CD", &M->range, err);
    s = comm_agree(s, err);
    if (s == CDLAB_OK)
        s = distribute(M, W, p, 1, err);
    S->dist = &M->ops;
    return s;
}

status cd_mpi_solve(cd_mpi *M, world *W, cd_solver *S, const cd_params *p, cd_stats *st, diag *err)
{
    status s = distribute(M, W, p, 0, err);
    if (s == CDLAB_OK)
        s = cd_step_solve(W, S, p, st, err);
    return comm_agree(s, err);
}

status cd_mpi_finish(cd_mpi *M, world *W, const cd_params *p, cd_stats *st, diag *err)
{
    /* a particle that could not be wrapped is its owner's to report (owned ones come first),
     * after the collective diagnostics that every rank joins */
    int far = cd_step_move(W, M->L);
    status s =
        far >= 0 && far < M->H.n_owned ? particles_wrap_error(&W->P, far, W->step, err) : CDLAB_OK;
    double sum = 0.0;
    cd_diagnostics(W, M->L, M->H.n_owned, st, &sum);
    double across = 0.0;
    for (int k = 0; k < M->L->n; k++) {
        const contact *c = &M->L->c[k];
        across += c->j < M->H.n_owned && c->i >= M->H.n_owned;
    }
    double v[8] = {st->n_contacts, st->n_active,    st->n_sliding, sum,
                   across,         st->max_overlap, st->missed,    st->missed_overlap};
    const comm_op ops[8] = {COMM_SUM, COMM_SUM, COMM_SUM, COMM_SUM,
                            COMM_SUM, COMM_MAX, COMM_SUM, COMM_MAX};
    comm_allreduce_ops(v, ops, 8);
    st->max_overlap = v[5];
    st->missed = (int)v[6];
    st->missed_overlap = v[7];
    st->n_contacts = (int)v[0], st->n_active = (int)v[1], st->n_sliding = (int)v[2];
    st->mean_overlap = st->n_active > 0 ? v[3] / st->n_active : 0.0;
    M->counted = v[0];
    M->across = v[4];
    if (s == CDLAB_OK)
        s = cd_check_state(W, M->L, p, err);
    return comm_agree(s, err);
}

/* The gathered contacts on rank 0 (exchange_gather_world's consumer): the room, then each
 * slice's, in key order, appended to L with their geometry from W's positions (one process:
 * index = id; every body is in W). */
typedef struct gathered_contacts {
    const world *W;
    contact_list *L;
    int room; /* the contacts counted */
} gathered_contacts;

static status take_contacts(const double *rec, int n, void *user, diag *err)
{
    gathered_contacts *g = user;
    contact_list *L = g->L;
    if (!rec) {
        contact *c = grow_big(L->c, 0, &L->cap, n > 0 ? n : 1, sizeof *c);
        if (!c)
            return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate %d contacts", n);
        L->c = c;
        L->n = 0;
        g->room = n;
        return CDLAB_OK;
    }
    if (L->n + n > g->room)
        return diag_set(err, CDLAB_ERR_NUMERIC, "gather: more than the %d contacts counted",
                        g->room);
    for (int k = 0; k < n; k++) {
        const double *r = rec + (size_t)k * CONTACT_REC;
        contact *ct = &L->c[L->n++];
        memset(ct, 0, sizeof *ct); /* padding included: checkpoints store whole records */
        ct->i = (int)r[0];         /* an id, or a wall's code */
        ct->j = (int)r[1];
        ct->key = contact_key_of_ids((long)r[0], (long)r[1], g->W->n_walls);
        ct->R = v3(r[2], r[3], r[4]);
        ct->mu = r[5];
        contact_geometry(ct, &g->W->P, g->W->walls);
    }
    return CDLAB_OK;
}

status cd_mpi_gather(cd_mpi *M, const world *W, world *Wg, contact_list *Lg, cd_stats *st,
                     diag *err)
{
    int own = M->H.n_owned, np = 0;
    const contact_list *L = M->L;
    for (int k = 0; k < L->n; k++)
        np += L->c[k].j < own;
    double *cr = malloc((size_t)(np > 0 ? np : 1) * CONTACT_REC * sizeof *cr);
    status s = cr ? CDLAB_OK : diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate a gather");
    for (int k = 0, m = 0; k < L->n && s == CDLAB_OK; k++)
        if (L->c[k].j < own)
            contact_pack(W, &L->c[k], cr + (size_t)m++ * CONTACT_REC);
    /* every rank in the gather's collectives: one that could not allocate sends nothing */
    int ok = s == CDLAB_OK;
    gathered_contacts gc = {.W = Wg, .L = Lg};
    status g = exchange_gather_world(W, ok ? own : 0, NULL, 0, cr, ok ? np : 0, CONTACT_REC, Wg,
                                     NULL, take_contacts, &gc, err);
    if (s == CDLAB_OK)
        s = g;
    free(cr);
    if (s == CDLAB_OK && comm_rank() == 0) {
        /* one process: index = id, the list in key order (take_contacts), geometry and figures
         * as it makes them */
        /* the pistons' contact forces as one process sums them (the walls are shared with W) */
        for (int k = 0; k < Wg->n_walls && s == CDLAB_OK; k++) {
            wall *w = &Wg->walls[k];
            if (w->kind != WALL_PISTON)
                continue;
            w->contact_force = 0.0;
            for (int m = 0; m < Lg->n; m++)
                if (Lg->c[m].i == -1 - k)
                    w->contact_force -= v3_dot(Lg->c[m].R, w->n);
        }
        double sum = 0.0;
        if (s == CDLAB_OK) {
            cd_diagnostics(Wg, Lg, Wg->P.n, st, &sum);
            st->mean_overlap = st->n_active > 0 ? sum / st->n_active : 0.0;
        }
    }
    return comm_agree(s, err);
}

void cd_mpi_free(cd_mpi *M)
{
    if (M->have_decomp)
        decomp_free(&M->D);
    if (M->have_halo)
        exchange_halo_free(&M->H);
    exchange_id_map_free(&M->ids);
    free(M->count);
    free(M->idx);
    free(M->gsize);
    free(M->R_next);
    free(M->vals);
    free(M->piston_u);
    memset(M, 0, sizeof *M);
}

/* Particles between ranks: see exchange.h. */
#include "exchange.h"

#include "comm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void particles_pack(const particles *P, int i, double *r)
{
    vec3 a[4] = {P->x[i], P->v[i], P->w[i], P->f_ext[i]};
    for (int k = 0; k < 3; k++) {
        r[3 * k] = a[k].x;
        r[3 * k + 1] = a[k].y;
        r[3 * k + 2] = a[k].z;
    }
    memcpy(r + 9, &P->q[4 * i], 4 * sizeof *r);
    r[13] = a[3].x, r[14] = a[3].y, r[15] = a[3].z;
    r[16] = P->r[i], r[17] = P->m[i], r[18] = P->inv_m[i], r[19] = P->inv_I[i];
    r[20] = P->id[i];
    for (int k = 0; k < 3; k++)
        r[21 + k] = P->image[3 * i + k];
    r[24] = P->frozen[i];
}

void particles_unpack(particles *P, int i, const double *r)
{
    P->x[i] = v3(r[0], r[1], r[2]);
    P->v[i] = v3(r[3], r[4], r[5]);
    P->w[i] = v3(r[6], r[7], r[8]);
    memcpy(&P->q[4 * i], r + 9, 4 * sizeof *r);
    P->f_ext[i] = v3(r[13], r[14], r[15]);
    P->r[i] = r[16], P->m[i] = r[17], P->inv_m[i] = r[18], P->inv_I[i] = r[19];
    P->id[i] = (int)r[20];
    for (int k = 0; k < 3; k++)
        P->image[3 * i + k] = (int)r[21 + k];
    P->frozen[i] = (unsigned char)r[24];
}

/* P rebuilt from n records of PARTICLE_RECORD + width doubles (its dimension and box kept);
 * the extra doubles of each into *extra (malloc'ed, the old array freed). */
static status from_records(particles *P, const double *rec, int n, double **extra, int width,
                           diag *err)
{
    particles Q;
    status s = particles_init(&Q, n, P->dimension, err);
    if (s != CDLAB_OK)
        return s;
    double *ex = NULL;
    if (width > 0 && !(ex = malloc((size_t)(n > 0 ? n : 1) * (size_t)width * sizeof *ex))) {
        particles_free(&Q);
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate %d particles' data", n);
    }
    Q.box = P->box;
    size_t rw = PARTICLE_RECORD + (size_t)width;
    for (int i = 0; i < n; i++) {
        particles_unpack(&Q, i, rec + (size_t)i * rw);
        if (width > 0)
            memcpy(ex + (size_t)i * (size_t)width, rec + (size_t)i * rw + PARTICLE_RECORD,
                   (size_t)width * sizeof *ex);
    }
    particles_free(P);
    *P = Q;
    if (width > 0) {
        free(*extra);
        *extra = ex;
    }
    return CDLAB_OK;
}

status exchange_keep(particles *P, const unsigned char *keep, double **extra, int width, diag *err)
{
    int m = 0;
    for (int i = 0; i < P->n; i++)
        m += keep[i] != 0;
    size_t rw = PARTICLE_RECORD + (size_t)width;
    double *rec = malloc((size_t)(m > 0 ? m : 1) * rw * sizeof *rec);
    if (!rec)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate %d particles", m);
    for (int i = 0, k = 0; i < P->n; i++)
        if (keep[i]) {
            particles_pack(P, i, rec + (size_t)k * rw);
            if (width > 0)
                memcpy(rec + (size_t)k * rw + PARTICLE_RECORD, *extra + (size_t)i * (size_t)width,
                       (size_t)width * sizeof *rec);
            k++;
        }
    status s = from_records(P, rec, m, extra, width, err);
    free(rec);
    return s;
}

static int by_id(const void *a, const void *b)
{
    double x = ((const double *)a)[20], y = ((const double *)b)[20];
    return (x > y) - (x < y);
}

/* Packs the particles list[0..n-1] (grouped by destination, count per rank in pcount), each
 * with its width doubles of extra, and exchanges them. */
/* rcount (NULL: not wanted): how many records came from each rank */
static status send_records(const particles *P, const double *extra, int width, const int *list,
                           int n, const int *pcount, double **recv, int *nrecv, int *rcount,
                           diag *err)
{
    int R = comm_size();
    size_t rw = PARTICLE_RECORD + (size_t)width;
    double *buf = malloc((size_t)(n > 0 ? n : 1) * rw * sizeof *buf);
    int *sc = malloc((size_t)R * sizeof *sc), *rc = malloc((size_t)R * sizeof *rc);
    status s = CDLAB_OK;
    if (!buf || !sc || !rc)
        s = diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the exchange of %d particles", n);
    for (int k = 0; k < n && s == CDLAB_OK; k++) {
        particles_pack(P, list[k], buf + (size_t)k * rw);
        if (width > 0)
            memcpy(buf + (size_t)k * rw + PARTICLE_RECORD, extra + (size_t)list[k] * (size_t)width,
                   (size_t)width * sizeof *buf);
    }
    for (int r = 0; r < R && s == CDLAB_OK; r++)
        sc[r] = pcount[r] * (int)rw;
    int total = 0;
    if (s == CDLAB_OK)
        s = comm_exchange(buf, sc, recv, rc, &total, err);
    *nrecv = total / (int)rw;
    for (int r = 0; r < R && rcount && s == CDLAB_OK; r++)
        rcount[r] = rc[r] / (int)rw;
    free(buf);
    free(sc);
    free(rc);
    return s;
}

status exchange_migrate(particles *P, const decomp *D, double **extra, int width, diag *err)
{
    int R = comm_size(), n = P->n;
    int *owner = malloc((size_t)(n > 0 ? n : 1) * sizeof *owner);
    int *count = calloc((size_t)R, sizeof *count),
        *list = malloc((size_t)(n > 0 ? n : 1) * sizeof *list);
    int *at = malloc((size_t)R * sizeof *at);
    status s = CDLAB_OK;
    if (!owner || !count || !list || !at)
        s = diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the migration of %d particles", n);
    for (int i = 0; i < n && s == CDLAB_OK; i++)
        count[owner[i] = decomp_owner(D, P->x[i])]++;
    /* every particle goes into the exchange, this rank's to itself: one code path */
    for (int r = 0, a = 0; r < R && s == CDLAB_OK; r++) {
        at[r] = a;
        a += count[r];
    }
    for (int i = 0; i < n && s == CDLAB_OK; i++)
        list[at[owner[i]]++] = i;
    double *recv = NULL;
    int m = 0;
    if (s == CDLAB_OK)
        s = send_records(P, extra ? *extra : NULL, width, list, n, count, &recv, &m, NULL, err);
    if (s == CDLAB_OK) {
        qsort(recv, (size_t)m, (PARTICLE_RECORD + (size_t)width) * sizeof *recv, by_id);
        s = from_records(P, recv, m, extra, width, err);
    }
    free(recv);
    free(owner);
    free(count);
    free(list);
    free(at);
    return s;
}

status exchange_halo(particles *P, const decomp *D, double range, double **extra, int width,
                     halo *H, diag *err)
{
    memset(H, 0, sizeof *H);
    int R = comm_size(), me = comm_rank(), n = P->n;
    H->n_owned = n;
    H->scount = calloc((size_t)R, sizeof *H->scount);
    H->rcount = calloc((size_t)R, sizeof *H->rcount);
    int *near = malloc((size_t)D->parts * sizeof *near);
    int *pairs = NULL, np = 0, cap = 0; /* (rank, particle) */
    status s = CDLAB_OK;
    if (!H->scount || !H->rcount || !near)
        s = diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the halo");
    for (int i = 0; i < n && s == CDLAB_OK; i++) {
        int m = decomp_near(D, P->x[i], range, near);
        for (int k = 0; k < m && s == CDLAB_OK; k++) {
            if (near[k] == me)
                continue;
            if (np == cap) {
                cap = cap ? 2 * cap : 256;
                int *g = realloc(pairs, (size_t)cap * 2 * sizeof *g);
                if (!g) {
                    s = diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the halo");
                    break;
                }
                pairs = g;
            }
            pairs[2 * np] = near[k];
            pairs[2 * np + 1] = i;
            np++;
            H->scount[near[k]]++;
        }
    }
    H->send = malloc((size_t)(np > 0 ? np : 1) * sizeof *H->send);
    int *at = malloc((size_t)R * sizeof *at);
    if (s == CDLAB_OK && (!H->send || !at))
        s = diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the halo");
    for (int r = 0, a = 0; r < R && s == CDLAB_OK; r++) {
        at[r] = a;
        a += H->scount[r];
    }
    for (int k = 0; k < np && s == CDLAB_OK; k++) /* by rank, in particle order */
        H->send[at[pairs[2 * k]]++] = pairs[2 * k + 1];
    H->nsend = np;
    free(pairs);
    free(near);
    free(at);
    double *recv = NULL;
    int m = 0;
    if (s == CDLAB_OK)
        s = send_records(P, extra ? *extra : NULL, width, H->send, np, H->scount, &recv, &m,
                         H->rcount, err);
    H->width = width;
    size_t rw = PARTICLE_RECORD + (size_t)width;
    if (s == CDLAB_OK) { /* own particles, then the copies */
        double *all = malloc((size_t)(n + m > 0 ? n + m : 1) * rw * sizeof *all);
        if (!all) {
            s = diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the halo");
        } else {
            for (int i = 0; i < n; i++) {
                particles_pack(P, i, all + (size_t)i * rw);
                if (width > 0)
                    memcpy(all + (size_t)i * rw + PARTICLE_RECORD,
                           *extra + (size_t)i * (size_t)width, (size_t)width * sizeof *all);
            }
            memcpy(all + (size_t)n * rw, recv, (size_t)m * rw * sizeof *all);
            s = from_records(P, all, n + m, extra, width, err);
            free(all);
        }
    }
    H->n_ghost = m;
    free(recv);
    return s;
}

status exchange_halo_update(particles *P, double *extra, const halo *H, diag *err)
{
    double *recv = NULL;
    int m = 0, width = H->width;
    size_t rw = PARTICLE_RECORD + (size_t)width;
    status s = send_records(P, extra, width, H->send, H->nsend, H->scount, &recv, &m, NULL, err);
    if (s == CDLAB_OK && m != H->n_ghost)
        s = diag_set(err, CDLAB_ERR_IO, "halo update: %d copies received, %d expected", m,
                     H->n_ghost);
    for (int k = 0; k < m && s == CDLAB_OK; k++) {
        particles_unpack(P, H->n_owned + k, recv + (size_t)k * rw);
        if (width > 0)
            memcpy(extra + (size_t)(H->n_owned + k) * (size_t)width,
                   recv + (size_t)k * rw + PARTICLE_RECORD, (size_t)width * sizeof *extra);
    }
    free(recv);
    return s;
}

status exchange_halo_values(const halo *H, double *vals, int width, diag *err)
{
    int R = comm_size(), n = H->nsend;
    double *buf = malloc((size_t)(n > 0 ? n : 1) * (size_t)width * sizeof *buf);
    int *sc = malloc((size_t)R * sizeof *sc), *rc = malloc((size_t)R * sizeof *rc);
    status s = CDLAB_OK;
    if (!buf || !sc || !rc)
        s = diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate a halo exchange");
    for (int k = 0; k < n && s == CDLAB_OK; k++)
        memcpy(buf + (size_t)k * (size_t)width, vals + (size_t)H->send[k] * (size_t)width,
               (size_t)width * sizeof *buf);
    for (int r = 0; r < R && s == CDLAB_OK; r++) {
        sc[r] = H->scount[r] * width;
        rc[r] = H->rcount[r] * width;
    }
    /* the copies lie after the owned particles, in rank order: received in place */
    if (s == CDLAB_OK)
        s = comm_exchange_known(buf, sc, vals + (size_t)H->n_owned * (size_t)width, rc, err);
    free(buf);
    free(sc);
    free(rc);
    return s;
}

status exchange_halo_return(const halo *H, double *vals, int width, diag *err)
{
    int R = comm_size(), n = H->nsend;
    int *sc = malloc((size_t)R * sizeof *sc), *rc = malloc((size_t)R * sizeof *rc);
    double *recv = malloc((size_t)(n > 0 ? n : 1) * (size_t)width * sizeof *recv);
    status s = sc && rc && recv ? CDLAB_OK
                                : diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate a halo return");
    for (int r = 0; r < R && s == CDLAB_OK; r++) {
        sc[r] = H->rcount[r] * width;
        rc[r] = H->scount[r] * width;
    }
    if (s == CDLAB_OK)
        s = comm_exchange_known(vals + (size_t)H->n_owned * (size_t)width, sc, recv, rc, err);
    /* the segments arrive in rank order, each in the order of the send list to that rank */
    for (int k = 0; k < n && s == CDLAB_OK; k++)
        for (int a = 0; a < width; a++)
            vals[(size_t)H->send[k] * (size_t)width + a] += recv[(size_t)k * width + a];
    free(recv);
    free(sc);
    free(rc);
    return s;
}

/* The slices of ids in which a gather reaches rank 0 (a slice's records at a time there, not
 * the run's). */
#define GATHER_SLICE_IDS 65536

/* The run's particles (ids 0 .. n - 1): the largest id over the ranks' own ones, plus one. */
static long run_ids(const particles *P, int own)
{
    double top = -1.0;
    for (int i = 0; i < own; i++)
        top = fmax(top, (double)P->id[i]);
    comm_allreduce(&top, 1, COMM_MAX);
    return (long)top + 1;
}

/* Collective: rank 0 receives every rank's first own particles, each with width doubles of extra
 * (NULL when width is 0), into G (grown as needed) in id order (index = id: the ids of a run are
 * 0 .. n-1) and, with width > 0, their extras into *gextra (malloc'ed, id order), in slices of
 * ids (rank 0 holds one slice's records at a time beside G); *ids: n, on every rank. Other ranks
 * only send. */
static status gather_particles(const particles *P, int own, const double *extra, int width,
                               particles *G, double **gextra, long *ids, diag *err)
{
    size_t rw = PARTICLE_RECORD + (size_t)width;
    long n = *ids = run_ids(P, own);
    int slices = (int)((n + GATHER_SLICE_IDS - 1) / GATHER_SLICE_IDS);
    /* this rank's own particles in id order, and a slice's records at a time */
    keyed_ref *kr = malloc((size_t)(own > 0 ? own : 1) * sizeof *kr);
    double *buf = malloc((size_t)(own < GATHER_SLICE_IDS ? (own > 0 ? own : 1) : GATHER_SLICE_IDS) *
                         rw * sizeof *buf);
    double *ge = NULL;
    status s = kr && buf ? CDLAB_OK : diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate a gather");
    for (int i = 0; i < own && s == CDLAB_OK; i++)
        kr[i] = (keyed_ref){(uint64_t)P->id[i], i};
    if (s == CDLAB_OK)
        keyed_sort(kr, own);
    if (s == CDLAB_OK && comm_rank() == 0) {
        if (G->cap < n || G->dimension != P->dimension) {
            particles_free(G);
            s = particles_init(G, (int)n, P->dimension, err);
        }
        G->n = (int)n;
        G->box = P->box;
        if (s == CDLAB_OK && width > 0 &&
            !(ge = malloc((size_t)(n > 0 ? n : 1) * (size_t)width * sizeof *ge)))
            s = diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate a gather");
    }
    /* every rank in every slice's exchange, whatever its status (one that failed sends none) */
    int got = 0;
    for (int sl = 0, at = 0; sl < slices; sl++) {
        long hi = (long)(sl + 1) * GATHER_SLICE_IDS;
        int m = 0;
        for (; s == CDLAB_OK && at < own && P->id[kr[at].rec] < hi; at++, m++) {
            int i = kr[at].rec;
            particles_pack(P, i, buf + (size_t)m * rw);
            if (width > 0)
                memcpy(buf + (size_t)m * rw + PARTICLE_RECORD, extra + (size_t)i * (size_t)width,
                       (size_t)width * sizeof *buf);
        }
        double *recv = NULL;
        int k = 0;
        status x = exchange_to_rank0(buf, s == CDLAB_OK ? m : 0, (int)rw, &recv, &k, err);
        if (s == CDLAB_OK)
            s = x;
        for (int q = 0; q < k && s == CDLAB_OK && comm_rank() == 0; q++) {
            const double *r = recv + (size_t)q * rw;
            int id = (int)r[20];
            if (id < 0 || id >= n) {
                s = diag_set(err, CDLAB_ERR_NUMERIC, "gather: particle id %d of %ld", id, n);
                break;
            }
            particles_unpack(G, id, r); /* one process: index = id */
            if (ge)
                memcpy(ge + (size_t)id * (size_t)width, r + PARTICLE_RECORD,
                       (size_t)width * sizeof *ge);
        }
        got += k;
        free(recv);
    }
    if (s == CDLAB_OK && comm_rank() == 0 && got != n)
        s = diag_set(err, CDLAB_ERR_NUMERIC, "gather: %d particles of %ld", got, n);
    if (gextra)
        *gextra = ge;
    else
        free(ge);
    free(kr);
    free(buf);
    return s;
}

status exchange_to_rank0(const double *rec, int n, int w, double **recv, int *nrecv, diag *err)
{
    int R = comm_size(), *sc = calloc((size_t)R, sizeof *sc), *rc = malloc((size_t)R * sizeof *rc);
    if (!sc || !rc) {
        free(sc);
        free(rc);
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate a gather");
    }
    sc[0] = n * w;
    int total = 0;
    status s = comm_exchange(rec, sc, recv, rc, &total, err);
    *nrecv = total / w;
    free(sc);
    free(rc);
    return s;
}

/* Record k of rec (w doubles each) becomes the one at kr[k].rec, in place: each cycle of the
 * permutation followed once with one record aside (tmp); kr's recs are used up. */
static void permute_records(double *rec, int w, keyed_ref *kr, int m, double *tmp)
{
    size_t bytes = (size_t)w * sizeof *rec;
    for (int i = 0; i < m; i++) {
        if (kr[i].rec == i)
            continue; /* in place already, or placed by an earlier cycle */
        memcpy(tmp, rec + (size_t)i * (size_t)w, bytes);
        int j = i;
        for (;;) {
            int from = kr[j].rec;
            kr[j].rec = j;
            if (from == i) {
                memcpy(rec + (size_t)j * (size_t)w, tmp, bytes);
                break;
            }
            memcpy(rec + (size_t)j * (size_t)w, rec + (size_t)from * (size_t)w, bytes);
            j = from;
        }
    }
}

/* rec's n records (w doubles, bodies' ids first) in key order, in place. */
static status sort_records(double *rec, int n, int w, int n_walls, diag *err)
{
    keyed_ref *kr = malloc((size_t)(n > 0 ? n : 1) * sizeof *kr);
    double *tmp = malloc((size_t)w * sizeof *tmp);
    status s = kr && tmp ? CDLAB_OK : diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate a gather");
    for (int k = 0; k < n && s == CDLAB_OK; k++) {
        const double *r = rec + (size_t)k * (size_t)w;
        kr[k] = (keyed_ref){contact_key_of_ids((long)r[0], (long)r[1], n_walls), k};
    }
    if (s == CDLAB_OK) {
        keyed_sort(kr, n);
        permute_records(rec, w, kr, n, tmp);
    }
    free(kr);
    free(tmp);
    return s;
}

status exchange_gather_world(const world *W, int own, const double *extra, int width, double *rec,
                             int n, int rw, world *Wg, double **gextra, records_consumer consume,
                             void *user, diag *err)
{
    if (comm_rank() == 0) { /* walls, time, settings: shared, not owned */
        particles keep = Wg->P;
        *Wg = *W;
        Wg->P = keep;
    }
    long ids = 0;
    status s = gather_particles(&W->P, own, extra, width, &Wg->P, gextra, &ids, err);
    /* the records in key order, a slice of body 0's ids at a time (the walls' with the first):
     * this rank's sorted first (in place), so that a slice is a run of them; every rank the same
     * slices (the run's ids) */
    if (s == CDLAB_OK && n > 0)
        s = sort_records(rec, n, rw, W->n_walls, err);
    double total = s == CDLAB_OK ? n : 0.0;
    comm_allreduce_exact_sum(&total, 1); /* a count: the consumer's room */
    int slices = (int)((ids + GATHER_SLICE_IDS - 1) / GATHER_SLICE_IDS);
    if (slices < 1)
        slices = 1;
    if (s == CDLAB_OK && comm_rank() == 0)
        s = consume(NULL, (int)total, user, err); /* the room */
    for (int sl = 0, at = 0; sl < slices; sl++) {
        long hi = (long)(sl + 1) * GATHER_SLICE_IDS;
        int from = at;
        while (s == CDLAB_OK && at < n &&
               (sl == slices - 1 || (long)rec[(size_t)at * (size_t)rw] < hi))
            at++;
        double *recv = NULL;
        int k = 0;
        status x = exchange_to_rank0(rec + (size_t)from * (size_t)rw, s == CDLAB_OK ? at - from : 0,
                                     rw, &recv, &k, err);
        if (s == CDLAB_OK)
            s = x;
        if (s == CDLAB_OK && comm_rank() == 0)
            s = sort_records(recv, k, rw, W->n_walls, err);
        if (s == CDLAB_OK && comm_rank() == 0)
            s = consume(recv, k, user, err);
        free(recv);
    }
    return s;
}

status exchange_halo_range(const particles *P, double gap, const char *who, double *range,
                           diag *err)
{
    double rmax = 0.0;
    for (int i = 0; i < P->n; i++)
        rmax = fmax(rmax, P->r[i]);
    comm_allreduce(&rmax, 1, COMM_MAX);
    *range = gap + 2.0 * rmax;
    for (int a = 0; a < 3; a++) {
        double L = a == 0 ? P->box.L.x : a == 1 ? P->box.L.y : P->box.L.z;
        if (P->box.periodic[a] && !(*range < 0.5 * L))
            return diag_set(err, CDLAB_ERR_CONFIG,
                            "%s: the halo range %g is not below half the period %g", who, *range,
                            L);
    }
    return CDLAB_OK;
}

void exchange_halo_free(halo *H)
{
    free(H->send);
    free(H->scount);
    free(H->rcount);
    memset(H, 0, sizeof *H);
}

void exchange_halo_drop(particles *P, halo *H)
{
    P->n = H->n_owned;
    exchange_halo_free(H);
}

status exchange_id_map(id_map *m, const particles *P, diag *err)
{
    int top = -1;
    for (int i = 0; i < P->n; i++)
        top = P->id[i] > top ? P->id[i] : top;
    if (top >= m->cap) {
        int cap = top + 1 > 2 * m->cap ? top + 1 : 2 * m->cap;
        int *local = realloc(m->local, (size_t)cap * sizeof *local);
        if (local)
            m->local = local;
        unsigned *stamp = local ? realloc(m->stamp, (size_t)cap * sizeof *stamp) : NULL;
        if (!local || !stamp)
            return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the id table (%d ids)", cap);
        m->stamp = stamp;
        memset(stamp + m->cap, 0, (size_t)(cap - m->cap) * sizeof *stamp);
        m->cap = cap;
    }
    if (++m->current == 0) { /* the stamps wrapped (after 2^32 builds): start afresh */
        memset(m->stamp, 0, (size_t)m->cap * sizeof *m->stamp);
        m->current = 1;
    }
    for (int i = 0; i < P->n; i++) {
        m->local[P->id[i]] = i;
        m->stamp[P->id[i]] = m->current;
    }
    return CDLAB_OK;
}

void exchange_id_map_free(id_map *m)
{
    free(m->local);
    free(m->stamp);
    memset(m, 0, sizeof *m);
}

/* qsort's order: by key, equal keys in their input order (rec), as the merge leaves them;
 * qsort itself promises no order for ties (glibc's happens to be a stable merge sort) */
static int by_key(const void *a, const void *b)
{
    uint64_t x = ((const keyed_ref *)a)->key, y = ((const keyed_ref *)b)->key;
    int r = ((const keyed_ref *)a)->rec, s = ((const keyed_ref *)b)->rec;
    return x != y ? (x > y) - (x < y) : (r > s) - (r < s);
}

/* Merges the sorted runs src[start[r] .. start[r + 1]) pairwise into dst, then back, until one
 * run is left; the result ends in kr (which is src or dst). */
static void merge_runs(keyed_ref *kr, keyed_ref *tmp, int *start, int runs)
{
    keyed_ref *src = kr, *dst = tmp;
    while (runs > 1) {
        int m = 0;
        for (int r = 0; r < runs; r += 2) {
            int a = start[r], am = start[r + 1], b = am, bm = r + 1 < runs ? start[r + 2] : am;
            int o = a;
            while (a < am && b < bm) /* stable: the left run first on equal keys */
                dst[o++] = src[b].key < src[a].key ? src[b++] : src[a++];
            while (a < am)
                dst[o++] = src[a++];
            while (b < bm)
                dst[o++] = src[b++];
            start[m++] = start[r];
        }
        start[m] = start[runs];
        runs = m;
        keyed_ref *t = src;
        src = dst;
        dst = t;
    }
    if (src != kr)
        memcpy(kr, src, (size_t)start[1] * sizeof *kr);
}

/* The records a gather or an exchange brings are a few sorted runs (one per sending rank):
 * merged in O(n log runs) instead of sorted (the colouring of the distributed colored sweep
 * sorted every contact of the run on every rank, every step: 5% of its step on 2 ranks);
 * anything with many runs, or without memory for the merge, goes to qsort. */
void keyed_sort(keyed_ref *kr, int n)
{
    if (n < 2)
        return;
    enum { MAX_RUNS = 64 };
    int start[MAX_RUNS + 2], runs = 1;
    start[0] = 0;
    for (int k = 1; k < n && runs <= MAX_RUNS; k++)
        if (kr[k].key < kr[k - 1].key)
            start[runs++] = k;
    if (runs == 1)
        return;
    keyed_ref *tmp = runs <= MAX_RUNS ? malloc((size_t)n * sizeof *tmp) : NULL;
    if (!tmp) {
        qsort(kr, (size_t)n, sizeof *kr, by_key);
        return;
    }
    start[runs] = n;
    merge_runs(kr, tmp, start, runs);
    free(tmp);
}

status exchange_merge_sums(xsum *sums, int n, diag *err)
{
    int P = comm_size();
    if (P == 1 || n <= 0)
        return CDLAB_OK;
    double *mine = malloc((size_t)n * XSUM_PACKED * sizeof *mine), *all = NULL;
    int total = 0;
    status s = mine ? CDLAB_OK : diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate a sum");
    for (int k = 0; k < n && s == CDLAB_OK; k++)
        xsum_pack(&sums[k], mine + (size_t)k * XSUM_PACKED);
    /* every rank takes part in the gather, also one that could not allocate (it sends nothing,
     * and all learn of it below) */
    status g = comm_allgather(mine, s == CDLAB_OK ? n * XSUM_PACKED : 0, &all, &total, err);
    if (s == CDLAB_OK)
        s = g;
    if (s == CDLAB_OK && total != P * n * XSUM_PACKED)
        s = diag_set(err, CDLAB_ERR_NOMEM, "a rank could not take part in an exact sum");
    for (int k = 0; k < n && s == CDLAB_OK; k++) {
        xsum_init(&sums[k]);
        for (int r = 0; r < P; r++) {
            xsum t;
            xsum_unpack(&t, all + ((size_t)r * n + k) * XSUM_PACKED);
            xsum_merge(&sums[k], &t);
        }
    }
    free(mine);
    free(all);
    return s;
}

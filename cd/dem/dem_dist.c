/* DEM across MPI ranks: see dem_dist.h. */
#include "dem/dem_dist.h"

#include "comm.h"
#include "grow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MOVES 6 /* per particle: a kinematic step's translation and rotation (du, dth) */
#define STRESS                                                                                     \
    3 /* deformable discs: the disc's stress (xx, yy, xy), from which its shape comes              \
       */
/* a bond (dem.bond): body 0, body 1 (ids), the bonded gap, u_t (3), intact; the key is rebuilt
 * from the ids (the layout of a checkpoint's dem_bonds rows) */
#define BOND_REC 7
/* a pair history: body 0 (its id, or the wall code < 0), body 1 (id), zeta, f_t (3), dashpot
 * force (3); the key is rebuilt from the ids */
#define PAIR_REC 9

static void pair_pack(const world *W, const dem_pair *c, double *o)
{
    o[0] = c->i >= 0 ? W->P.id[c->i] : c->i;
    o[1] = W->P.id[c->j];
    o[2] = c->zeta;
    o[3] = c->ft.x, o[4] = c->ft.y, o[5] = c->ft.z;
    o[6] = c->fd.x, o[7] = c->fd.y, o[8] = c->fd.z;
}

/* The history of record r for bodies i, j (indices of the receiving side). */
static dem_pair pair_unpack(const double *r, int i, int j)
{
    return (dem_pair){i, j, r[2], v3(r[3], r[4], r[5]), v3(r[6], r[7], r[8])};
}

/* What travels with a particle between rebuilds beside its record: a kinematic step's
 * movements (a dynamic step's are made from the velocities, which travel with the particle)
 * and, for deformable discs, its stress. The same on every rank (all in the same kind of
 * step). */
static int moves_given(const dem_solver *S)
{
    return S->moves == DEM_MOVES_GIVEN ? MOVES : 0;
}

static int moves_width(const dem_mpi *M, const dem_solver *S)
{
    return moves_given(S) + (M->deformable ? STRESS : 0);
}

static void moves_pack(const dem_mpi *M, const dem_solver *S, int n, double *e)
{
    int w = moves_width(M, S), g = moves_given(S);
    for (int i = 0; i < n; i++) {
        double *r = e + (size_t)i * w;
        if (g) {
            r[0] = S->du[i].x, r[1] = S->du[i].y, r[2] = S->du[i].z;
            r[3] = S->dth[i].x, r[4] = S->dth[i].y, r[5] = S->dth[i].z;
        }
        if (M->deformable)
            memcpy(r + g, &S->sig[3 * i], STRESS * sizeof *r);
    }
}

/* After dem_prepare (and dem_reserve_moves in a kinematic step) made room for n particles. */
static void moves_unpack(const dem_mpi *M, dem_solver *S, int n, const double *e)
{
    int w = moves_width(M, S), g = moves_given(S);
    for (int i = 0; i < n; i++) {
        const double *r = e + (size_t)i * w;
        if (g) {
            S->du[i] = v3(r[0], r[1], r[2]);
            S->dth[i] = v3(r[3], r[4], r[5]);
        }
        if (M->deformable)
            memcpy(&S->sig[3 * i], r + g, STRESS * sizeof *r);
    }
}

static void bond_pack(const world *W, const dem_bond_state *b, double *o)
{
    o[0] = W->P.id[b->i];
    o[1] = W->P.id[b->j];
    o[2] = b->gap0;
    o[3] = b->u_t.x, o[4] = b->u_t.y, o[5] = b->u_t.z;
    o[6] = b->intact;
}

/* Bond records (ids) in key order, each key once (a bond across a boundary comes from both
 * holders, the same bits), into *out (malloc'ed) as bonds whose bodies are given by map_id (NULL:
 * index = id, one process); a record whose bodies are not both here: dropped (drop_missing), or
 * an error naming it. */
static status bonds_install(const world *W, const double *rec, int n, const id_map *map,
                            int drop_missing, dem_bond_state **out, int *nout, diag *err)
{
    keyed_ref *kr = malloc((size_t)(n > 0 ? n : 1) * sizeof *kr);
    dem_bond_state *b = malloc((size_t)(n > 0 ? n : 1) * sizeof *b);
    status s = kr && b ? CDLAB_OK : diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate %d bonds", n);
    int m = 0;
    for (int k = 0; k < n && s == CDLAB_OK; k++) {
        const double *r = rec + (size_t)k * BOND_REC;
        kr[m++] = (keyed_ref){contact_key_of_ids((long)r[0], (long)r[1], W->n_walls), k};
    }
    if (s == CDLAB_OK)
        keyed_sort(kr, m);
    int u = 0;
    for (int k = 0; k < m && s == CDLAB_OK; k++) {
        if (k > 0 && kr[k].key == kr[k - 1].key)
            continue;
        const double *r = rec + (size_t)kr[k].rec * BOND_REC;
        int i = map ? exchange_local_of(map, (long)r[0]) : (int)r[0];
        int j = map ? exchange_local_of(map, (long)r[1]) : (int)r[1];
        if (i < 0 || j < 0) {
            if (!drop_missing)
                s = diag_set(err, CDLAB_ERR_NUMERIC,
                             "step %ld: the bond of particles %.0f and %.0f is stretched beyond "
                             "the range within which a rank holds copies of its neighbours' "
                             "particles (contact.detect_gap plus the largest diameter): a "
                             "distributed run cannot follow it; run it in one process",
                             W->step, r[0], r[1]);
            continue;
        }
        b[u++] = (dem_bond_state){kr[k].key, i, j, r[2], v3(r[3], r[4], r[5]), (int)r[6]};
    }
    free(kr);
    if (s != CDLAB_OK) {
        free(b);
        return s;
    }
    *out = b;
    *nout = u;
    return CDLAB_OK;
}

/* The rank's bond table becomes out[0..n-1] (key order, local indices). */
static status bonds_set(dem_solver *S, dem_bond_state *b, int n, diag *err)
{
    status s = dem_reserve_bonds(S, n, err);
    if (s == CDLAB_OK) {
        if (n > 0)
            memcpy(S->bond, b, (size_t)n * sizeof *b);
        S->nbond = n;
    }
    free(b);
    return s;
}

/* Bonds broken since the last redistribution leave the table for M->broken (ids: their records
 * are only reported, by whichever rank holds them; rank 0 drops the duplicates). */
static status bonds_retire(dem_mpi *M, const world *W, dem_solver *S, diag *err)
{
    int u = 0;
    for (int k = 0; k < S->nbond; k++) {
        if (S->bond[k].intact) {
            S->bond[u++] = S->bond[k];
            continue;
        }
        double *g = grow_array(M->broken, &M->broken_cap, (M->nbroken + 1) * BOND_REC, sizeof *g);
        if (!g)
            return diag_set(err, CDLAB_ERR_NOMEM, "cannot keep the broken bonds");
        M->broken = g;
        bond_pack(W, &S->bond[k], g + (size_t)M->nbroken++ * BOND_REC);
    }
    S->nbond = u;
    return CDLAB_OK;
}

/* What the pair pass reads of a halo copy that changes in a step: its position and the step's
 * movements (the rest of its record does not change between rebuilds). */
#define REFRESH 9

static status refresh(dem_dist *d, world *W, dem_solver *S, diag *err)
{
    dem_mpi *M = (dem_mpi *)d;
    if (!M->have_halo)
        return CDLAB_OK;
    int n = W->P.n;
    /* kept between steps (a fresh 2 MB buffer every step cost page faults) */
    double *v = grow_array(M->refresh, &M->refresh_cap, (n + 1) * REFRESH, sizeof *v);
    if (!v)
        return comm_agree(diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the halo refresh"), err);
    M->refresh = v;
    /* a kinematic step's movements; in a dynamic step the velocities, from which the copies'
     * movements are made */
    int given = S->moves == DEM_MOVES_GIVEN;
    vec3 *mu = given ? S->du : W->P.v, *mth = given ? S->dth : W->P.w;
    for (int q = 0; q < M->H.nsend; q++) { /* the owned particles others hold copies of */
        int i = M->H.send[q];
        double *r = v + (size_t)i * REFRESH;
        vec3 a[3] = {W->P.x[i], mu[i], mth[i]};
        for (int k = 0; k < 3; k++)
            r[3 * k] = a[k].x, r[3 * k + 1] = a[k].y, r[3 * k + 2] = a[k].z;
    }
    status s = exchange_halo_values(&M->H, v, REFRESH, err);
    for (int i = M->H.n_owned; i < n && s == CDLAB_OK; i++) {
        const double *r = v + (size_t)i * REFRESH;
        W->P.x[i] = v3(r[0], r[1], r[2]);
        mu[i] = v3(r[3], r[4], r[5]);
        mth[i] = v3(r[6], r[7], r[8]);
    }
    return comm_agree(s, err);
}

static status agree(dem_dist *d, status s, diag *err)
{
    (void)d;
    return comm_agree(s, err);
}

static status halo_values(dem_dist *d, double *vals, int width, diag *err)
{
    dem_mpi *M = (dem_mpi *)d;
    status s = M->have_halo ? exchange_halo_values(&M->H, vals, width, err) : CDLAB_OK;
    return comm_agree(s, err);
}

/* Every rank's pairs with a piston (held by the owner of the particle), in key order: each
 * piston's contact force summed as one process sums it. */
static void pistons(dem_dist *d, world *W, dem_solver *S)
{
    (void)d;
    int has = 0, own = S->n_owned, m = 0;
    for (int k = 0; k < W->n_walls; k++)
        has |= W->walls[k].kind == WALL_PISTON;
    if (!has)
        return;
    for (int k = 0; k < S->npair; k++)
        m += S->pair[k].i < 0 && S->pair[k].j < own;
    double *rec = malloc((size_t)(m > 0 ? m : 1) * 3 * sizeof *rec), *all = NULL;
    int total = 0;
    diag err; /* not zeroed: 16 kB (status.h) at every step */
    err.msg[0] = '\0';
    for (int k = 0, a = 0; k < S->npair && rec; k++) {
        const dem_pair *c = &S->pair[k];
        if (c->i >= 0 || c->j >= own)
            continue;
        double *r = rec + (size_t)3 * a++;
        r[0] = c->i, r[1] = W->P.id[c->j],
        r[2] = v3_dot(dem_pair_force(W, S, k), W->walls[-1 - c->i].n);
    }
    if (!rec || comm_allgather(rec, 3 * m, &all, &total, &err) != CDLAB_OK) {
        fprintf(stderr, "cdlab: %s\n", rec ? err.msg : "cannot gather the pistons' forces");
        comm_abort(1);
    }
    free(rec);
    int g = total / 3;
    keyed_ref *kr = malloc((size_t)(g > 0 ? g : 1) * sizeof *kr);
    if (!kr) {
        fprintf(stderr, "cdlab: cannot gather the pistons' forces\n");
        comm_abort(1);
    }
    for (int k = 0; k < g; k++)
        kr[k] =
            (keyed_ref){contact_key_of_ids((long)all[3 * k], (long)all[3 * k + 1], W->n_walls), k};
    keyed_sort(kr, g);
    memset(S->piston_F, 0, (size_t)W->n_walls * sizeof *S->piston_F);
    for (int k = 0; k < g; k++) {
        const double *r = all + (size_t)3 * kr[k].rec;
        S->piston_F[-1 - (int)r[0]] -= r[2];
    }
    free(kr);
    free(all);
}

static double max_over_ranks(dem_dist *d, double v)
{
    (void)d;
    comm_allreduce(&v, 1, COMM_MAX);
    return v;
}

/* The pairs' histories to the new owners of their particles (decomposition M->D, the current
 * local positions): *rec, rcount as received. */
static status send_pairs(dem_mpi *M, const world *W, const dem_solver *S, double **recv, int *nrecv,
                         diag *err)
{
    int R = comm_size(), np = S->npair;
    int *dest = malloc((size_t)(2 * np + 1) * sizeof *dest), *cnt = calloc((size_t)R, sizeof *cnt);
    double *buf = malloc((size_t)(2 * np + 1) * PAIR_REC * sizeof *buf);
    int *sc = malloc((size_t)R * sizeof *sc), *rc = malloc((size_t)R * sizeof *rc),
        *at = malloc((size_t)R * sizeof *at);
    status s = CDLAB_OK;
    if (!dest || !cnt || !buf || !sc || !rc || !at)
        s = diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the exchange of %d pairs", np);
    for (int k = 0; k < np && s == CDLAB_OK; k++) {
        const dem_pair *c = &S->pair[k];
        int oj = decomp_owner(&M->D, W->P.x[c->j]);
        int oi = c->i >= 0 ? decomp_owner(&M->D, W->P.x[c->i]) : oj;
        dest[2 * k] = oj;
        dest[2 * k + 1] = oi != oj ? oi : -1;
        cnt[oj]++;
        if (oi != oj)
            cnt[oi]++;
    }
    for (int r = 0, a = 0; r < R && s == CDLAB_OK; r++) {
        at[r] = a;
        a += cnt[r];
        sc[r] = cnt[r] * PAIR_REC;
    }
    for (int k = 0; k < np && s == CDLAB_OK; k++)
        for (int h = 0; h < 2; h++) {
            int r = dest[2 * k + h];
            if (r < 0)
                continue;
            pair_pack(W, &S->pair[k], buf + (size_t)at[r]++ * PAIR_REC);
        }
    int total = 0;
    if (s == CDLAB_OK)
        s = comm_exchange(buf, sc, recv, rc, &total, err);
    *nrecv = total / PAIR_REC;
    free(dest);
    free(cnt);
    free(buf);
    free(sc);
    free(rc);
    free(at);
    return s;
}

/* The intact bonds to the new owners of their particles (as send_pairs sends the pairs). */
static status send_bonds(dem_mpi *M, const world *W, const dem_solver *S, double **recv, int *nrecv,
                         diag *err)
{
    int R = comm_size(), nb = S->nbond;
    int *cnt = calloc((size_t)R, sizeof *cnt), *sc = malloc((size_t)R * sizeof *sc),
        *rc = malloc((size_t)R * sizeof *rc), *at = malloc((size_t)R * sizeof *at);
    double *buf = malloc((size_t)(2 * nb + 1) * BOND_REC * sizeof *buf);
    status s = cnt && sc && rc && at && buf
                   ? CDLAB_OK
                   : diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the exchange of %d bonds", nb);
    for (int pass = 0; pass < 2 && s == CDLAB_OK; pass++) {
        for (int r = 0, a = 0; r < R && pass == 1; r++) {
            at[r] = a;
            a += cnt[r];
            sc[r] = cnt[r] * BOND_REC;
        }
        for (int k = 0; k < nb; k++) {
            const dem_bond_state *b = &S->bond[k];
            int oj = decomp_owner(&M->D, W->P.x[b->j]), oi = decomp_owner(&M->D, W->P.x[b->i]);
            int to[2] = {oj, oi != oj ? oi : -1};
            for (int h = 0; h < 2; h++)
                if (to[h] >= 0 && pass == 0)
                    cnt[to[h]]++;
                else if (to[h] >= 0)
                    bond_pack(W, b, buf + (size_t)at[to[h]]++ * BOND_REC);
        }
    }
    int total = 0;
    if (s == CDLAB_OK)
        s = comm_exchange(buf, sc, recv, rc, &total, err);
    *nrecv = total / BOND_REC;
    free(cnt);
    free(sc);
    free(rc);
    free(at);
    free(buf);
    return s;
}

/* The received pair histories as the old neighbour list (local indices, key order, each pair
 * once; pairs of particles this rank does not hold are dropped). */
static status install_pairs(id_map *map, const world *W, dem_solver *S, const double *rec, int n,
                            diag *err)
{
    dem_pair *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof *tmp);
    keyed_ref *kr = malloc((size_t)(n > 0 ? n : 1) * sizeof *kr);
    status s = tmp && kr ? exchange_id_map(map, &W->P, err)
                         : diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate %d pairs", n);
    if (s != CDLAB_OK) {
        free(tmp);
        free(kr);
        return s;
    }
    int m = 0;
    for (int k = 0; k < n; k++) {
        const double *r = rec + (size_t)k * PAIR_REC;
        int j = exchange_local_of(map, (long)r[1]);
        int i = r[0] >= 0 ? exchange_local_of(map, (long)r[0]) : (int)r[0];
        if (j < 0 || (r[0] >= 0 && i < 0))
            continue;
        tmp[m] = pair_unpack(r, i, j);
        kr[m] = (keyed_ref){contact_pair_key(i, j, &W->P, W->n_walls), m};
        m++;
    }
    keyed_sort(kr, m);
    s = dem_reserve_pairs(S, m, err);
    int u = 0;
    for (int k = 0; k < m && s == CDLAB_OK; k++)
        if (k == 0 || kr[k].key != kr[k - 1].key) /* both holders sent the same record */
            S->pair[u++] = tmp[kr[k].rec];
    S->npair = u;
    S->indexed = S->bonds_linked = 0; /* a new list: indexed by the rebuild that follows */
    free(tmp);
    free(kr);
    return s;
}

/* The received intact bonds as the rank's bond table (local indices, key order; map: the
 * particles by id, as install_pairs left it). */
static status install_bonds(const id_map *map, const world *W, dem_solver *S, const double *rec,
                            int n, diag *err)
{
    dem_bond_state *b = NULL;
    int m = 0;
    status s = bonds_install(W, rec, n, map, 0, &b, &m, err);
    return s == CDLAB_OK ? bonds_set(S, b, m, err) : s;
}

/* Own particles, with their pairs' histories and step's movements, to the owners of the current
 * decomposition; then the halo copies. */
static status move_particles(dem_mpi *M, world *W, dem_solver *S, const dem_params *p, diag *err)
{
    particles *P = &W->P;
    status s = CDLAB_OK;
    /* the pairs' histories and the intact bonds, while the halo copies they name are still
     * here */
    double *prec = NULL, *brec = NULL, *e = NULL;
    int npr = 0, nbr = 0, w = moves_width(M, S);
    if (s == CDLAB_OK)
        s = send_pairs(M, W, S, &prec, &npr, err);
    if (s == CDLAB_OK && M->bonds && (s = bonds_retire(M, W, S, err)) == CDLAB_OK)
        s = send_bonds(M, W, S, &brec, &nbr, err);
    if (M->have_halo) {
        exchange_halo_drop(P, &M->H);
        M->have_halo = 0;
    }
    /* own particles to their owners, with their step's movements; then the halo copies */
    if (s == CDLAB_OK && !(e = malloc((size_t)(P->n > 0 ? P->n : 1) * w * sizeof *e)))
        s = diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the migration");
    if (s == CDLAB_OK) {
        moves_pack(M, S, P->n, e);
        for (int i = 0; i < P->n; i++)
            M->migrated += decomp_owner(&M->D, P->x[i]) != comm_rank();
        s = exchange_migrate(P, &M->D, &e, w, err);
    }
    if (s == CDLAB_OK && (s = exchange_halo(P, &M->D, M->range, &e, w, &M->H, err)) == CDLAB_OK)
        M->have_halo = 1;
    if (s == CDLAB_OK && (s = dem_prepare(W, S, p, err)) == CDLAB_OK &&
        (!moves_given(S) || (s = dem_reserve_moves(S, err)) == CDLAB_OK)) {
        moves_unpack(M, S, P->n, e);
        S->n_owned = M->H.n_owned;
        s = install_pairs(&M->ids, W, S, prec, npr, err);
    }
    if (s == CDLAB_OK && M->bonds) /* every bond of an own particle needs both bodies here */
        s = install_bonds(&M->ids, W, S, brec, nbr, err);
    M->redistributions++;
    free(e);
    free(prec);
    free(brec);
    s = comm_agree(s, err);
    if (s == CDLAB_OK && M->deformable) /* the shapes of the particles now here */
        dem_deform_shapes(W, S, p);
    return s;
}

static status redistribute(dem_dist *d, world *W, dem_solver *S, const dem_params *p, diag *err)
{
    dem_mpi *M = (dem_mpi *)d;
    particles *P = &W->P;
    int own = M->have_halo ? M->H.n_owned : P->n;
    /* the cuts: afresh at the start and when the load is out of balance */
    if (M->have_decomp && !parallel_rebalance_due(&M->par, own, M->redistributions))
        return comm_agree(move_particles(M, W, S, p, err), err);
    /* each rank gives its own particles (decomp_build_shared: no gather of every position) */
    if (M->have_decomp)
        decomp_free(&M->D);
    M->have_decomp = 0;
    status s = decomp_build_shared(&M->D, comm_size(), P->x, NULL, own, P->dimension, &P->box, err);
    M->have_decomp = s == CDLAB_OK;
    M->rebalances++;
    return comm_agree(s == CDLAB_OK ? move_particles(M, W, S, p, err) : s, err);
}

#define GATHER_EXTRA 7             /* F, T, path (deformable discs: and the stress) */
#define GATHER_PAIR (PAIR_REC + 3) /* a pair history and its force on body 1 */

/* To rank 0: the intact bonds of the pairs this rank counts (body 1 its own) and every broken
 * bond it holds (those broken since the last redistribution, and M->broken). */
static status gather_bonds(const dem_mpi *M, const world *W, const dem_solver *S, double **recv,
                           int *nrecv, diag *err)
{
    int n = M->nbroken;
    double *rec = malloc((size_t)(S->nbond + n + 1) * BOND_REC * sizeof *rec);
    if (!rec) { /* still takes part in the collective exchange, then says why it failed */
        exchange_to_rank0(NULL, 0, BOND_REC, recv, nrecv, err);
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot gather the bonds");
    }
    if (n > 0)
        memcpy(rec, M->broken, (size_t)n * BOND_REC * sizeof *rec);
    for (int k = 0; k < S->nbond; k++) {
        const dem_bond_state *b = &S->bond[k];
        if (!b->intact || b->j < S->n_owned)
            bond_pack(W, b, rec + (size_t)n++ * BOND_REC);
    }
    status s = exchange_to_rank0(rec, n, BOND_REC, recv, nrecv, err);
    free(rec);
    return s;
}

/* The gathered pairs on rank 0 (exchange_gather_world's consumer): the room for all of them in
 * the view, then each slice's, in key order, each with its record (one process: index = id). */
typedef struct gathered_pairs {
    world *W;
    dem_solver *S;
    const dem_params *p;
    int m, room; /* taken so far, and made room for */
} gathered_pairs;

static status take_pairs(const double *rec, int n, void *user, diag *err)
{
    gathered_pairs *g = user;
    if (!rec) {
        g->room = n;
        return dem_reserve_view(g->W, g->S, g->p, n, err);
    }
    if (g->m + n > g->room)
        return diag_set(err, CDLAB_ERR_NUMERIC, "gather: more than the %d pairs counted", g->room);
    for (int q = 0; q < n; q++, g->m++) {
        const double *r = rec + (size_t)q * GATHER_PAIR;
        g->S->pair[g->m] = pair_unpack(r, (int)r[0], (int)r[1]);
        g->S->side[g->m] = v3(r[PAIR_REC], r[PAIR_REC + 1], r[PAIR_REC + 2]); /* a view */
    }
    return CDLAB_OK;
}

/* Long: rank 0 gathers the particles, the pairs, the bonds and the ledger's sums in one sequence of
 * collectives that every rank must follow in the same order; the steps are one protocol. */
status dem_mpi_gather(const dem_mpi *M, const world *W, const dem_solver *S, const dem_params *p,
                      world *Wg, dem_solver *Sg, diag *err)
{
    int own = S->n_owned, np = 0, gw = GATHER_EXTRA + (p->deformable ? STRESS : 0);
    for (int k = 0; k < S->npair; k++)
        np += S->pair[k].j < own;
    double *ex = malloc((size_t)(own > 0 ? own : 1) * gw * sizeof *ex), *gex = NULL;
    double *cr = malloc((size_t)(np > 0 ? np : 1) * GATHER_PAIR * sizeof *cr);
    status s = ex && cr ? CDLAB_OK : diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate a gather");
    for (int i = 0; i < own && s == CDLAB_OK; i++) {
        double *e = ex + (size_t)i * gw;
        e[0] = S->F[i].x, e[1] = S->F[i].y, e[2] = S->F[i].z;
        e[3] = S->T[i].x, e[4] = S->T[i].y, e[5] = S->T[i].z;
        e[6] = S->path[i];
        if (p->deformable)
            memcpy(e + GATHER_EXTRA, &S->sig[3 * i], STRESS * sizeof *e);
    }
    for (int k = 0, m = 0; k < S->npair && s == CDLAB_OK; k++) {
        const dem_pair *c = &S->pair[k];
        if (c->j >= own)
            continue;
        double *o = cr + (size_t)m++ * GATHER_PAIR;
        pair_pack(W, c, o);
        vec3 R = dem_pair_force(W, S, k);
        o[PAIR_REC] = R.x, o[PAIR_REC + 1] = R.y, o[PAIR_REC + 2] = R.z;
    }
    gathered_pairs gp = {.W = Wg, .S = Sg, .p = p};
    /* every rank in the gather's collectives: one that could not allocate sends nothing */
    int ok = s == CDLAB_OK;
    status g = exchange_gather_world(W, ok ? own : 0, ex, gw, cr, ok ? np : 0, GATHER_PAIR, Wg,
                                     &gex, take_pairs, &gp, err);
    if (s == CDLAB_OK)
        s = g;
    free(ex);
    free(cr);
    int m = gp.m;
    /* bonds: the intact ones of the pairs this rank counts, and the broken ones it holds */
    double *brec = NULL, broken = (double)S->bonds_broken;
    int nb = 0;
    if (p->bond) {
        comm_allreduce_exact_sum(&broken, 1); /* a count */
        if (s == CDLAB_OK)
            s = gather_bonds(M, W, S, &brec, &nb, err);
    }
    if (s == CDLAB_OK && comm_rank() == 0) {
        int n = Wg->P.n;
        for (int id = 0; id < n && s == CDLAB_OK; id++) {
            const double *e = gex + (size_t)id * gw;
            Sg->F[id] = v3(e[0], e[1], e[2]);
            Sg->T[id] = v3(e[3], e[4], e[5]);
            Sg->path[id] = e[6];
            if (p->deformable)
                memcpy(&Sg->sig[3 * id], e + GATHER_EXTRA, STRESS * sizeof *e);
        }
        if (s == CDLAB_OK && p->deformable) /* the shapes of the stresses (one process) */
            dem_deform_shapes(Wg, Sg, p);
        if (s == CDLAB_OK && p->bond) { /* one process: index = id */
            dem_bond_state *b = NULL;
            int u = 0;
            if ((s = bonds_install(Wg, brec, nb, NULL, 0, &b, &u, err)) == CDLAB_OK)
                s = bonds_set(Sg, b, u, err);
            Sg->bonds_broken = (long)broken;
        }
        Sg->npair = m; /* the pairs in key order (the one-process list): take_pairs */
        Sg->indexed = s == CDLAB_OK ? m : 0; /* every pair a side row (dem_reserve_view) */
        if (s == CDLAB_OK && p->bond)        /* for the mean overlap: bonded pairs count */
            s = dem_link_bonds(Wg, Sg, err);
        Sg->rebuilds = S->rebuilds;
        Sg->started = 1;
        /* the walls' contact forces as one process sums them: over the wall pairs in key order */
        for (int w = 0; w < W->n_walls && s == CDLAB_OK; w++)
            Sg->piston_F[w] = 0.0;
        for (int k = 0; k < m && s == CDLAB_OK; k++)
            if (Sg->pair[k].i < 0) {
                int w = -1 - Sg->pair[k].i;
                Sg->piston_F[w] -= v3_dot(Sg->side[k], W->walls[w].n); /* a view */
            }
        for (int w = 0; w < W->n_walls && s == CDLAB_OK; w++)
            Wg->walls[w].contact_force = Sg->piston_F[w];
        Sg->wall_path = S->wall_path; /* the pistons move alike on every rank */
        Sg->list_skin = S->list_skin; /* every rank rebuilds alike */
    }
    free(gex);
    free(brec);
    return comm_agree(s, err);
}

static status merge_sums(dem_dist *d, xsum *sums, int n, diag *err)
{
    (void)d;
    return exchange_merge_sums(sums, n, err);
}

/* The operations, the halo range, and the refusals (collective: the largest radius). */
static status setup(dem_mpi *M, const world *W, const dem_params *p, const parallel_params *par,
                    diag *err)
{
    memset(M, 0, sizeof *M);
    M->par = *par;
    M->ops = (dem_dist){.refresh = refresh,
                        .redistribute = redistribute,
                        .max = max_over_ranks,
                        .pistons = pistons,
                        .merge = merge_sums,
                        .halo_values = halo_values,
                        .agree = agree};
    M->bonds = p->bond;
    M->deformable = p->deformable;
    return exchange_halo_range(&W->P, W->detect.gap, "distributed DEM", &M->range, err);
}

status dem_mpi_init(dem_mpi *M, world *W, dem_solver *S, const dem_params *p,
                    const parallel_params *par, diag *err)
{
    status s = setup(M, W, p, par, err);
    if (s != CDLAB_OK)
        return s;
    unsigned char *keep = malloc((size_t)(W->P.n > 0 ? W->P.n : 1));
    if (!keep)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    for (int i = 0; i < W->P.n; i++)
        keep[i] = W->P.id[i] % comm_size() == comm_rank();
    s = exchange_keep(&W->P, keep, NULL, 0, err);
    free(keep);
    S->dist = &M->ops;
    S->n_owned = W->P.n;
    return s;
}

#define RESTORED 7 /* F, T, path (deformable discs: and the stress) */

/* A restart's bonds (whole table, index = id, every rank): this rank keeps the intact ones of
 * its pairs (as records, installed once its particles are known), rank 0 also every broken one
 * (reported only), the others none of them and no count of breaks (the count adds the ranks'). */
static status restored_bonds(dem_mpi *M, const world *W, dem_solver *S, double **keep, int *nkeep,
                             diag *err)
{
    int me = comm_rank(), nb = S->nbond, m = 0;
    double *rec = malloc((size_t)(nb + 1) * BOND_REC * sizeof *rec);
    if (!rec)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the bonds of a restart");
    for (int k = 0; k < nb; k++) {
        const dem_bond_state *b = &S->bond[k];
        int mine =
            decomp_owner(&M->D, W->P.x[b->j]) == me || decomp_owner(&M->D, W->P.x[b->i]) == me;
        if (b->intact && mine)
            bond_pack(W, b, rec + (size_t)m++ * BOND_REC);
        else if (!b->intact && me == 0) {
            double *g =
                grow_array(M->broken, &M->broken_cap, (M->nbroken + 1) * BOND_REC, sizeof *g);
            if (!g) {
                free(rec);
                return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the bonds of a restart");
            }
            M->broken = g;
            bond_pack(W, b, g + (size_t)M->nbroken++ * BOND_REC);
        }
    }
    S->nbond = 0;
    if (me != 0)
        S->bonds_broken = 0;
    *keep = rec;
    *nkeep = m;
    return CDLAB_OK;
}

status dem_mpi_init_restored(dem_mpi *M, world *W, dem_solver *S, const dem_params *p,
                             const parallel_params *par, diag *err)
{
    status s = setup(M, W, p, par, err);
    particles *P = &W->P;
    int n = P->n, me = comm_rank(), np = S->npair, rw = RESTORED + (p->deformable ? STRESS : 0);
    double *brec = NULL;
    int nbr = 0;
    if (s == CDLAB_OK && (s = decomp_build(&M->D, comm_size(), P->x, NULL, n, P->dimension, &P->box,
                                           err)) == CDLAB_OK)
        M->have_decomp = 1;
    if (s == CDLAB_OK && p->bond)
        s = restored_bonds(M, W, S, &brec, &nbr, err);
    /* this rank's pairs as histories (ids), its particles with their forces and paths */
    double *pr = malloc((size_t)(np > 0 ? np : 1) * PAIR_REC * sizeof *pr);
    double *ex = malloc((size_t)(n > 0 ? n : 1) * rw * sizeof *ex), *e = NULL;
    unsigned char *keep = malloc((size_t)(n > 0 ? n : 1));
    if (s == CDLAB_OK && (!pr || !ex || !keep))
        s = diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the distribution of a restart");
    int m = 0;
    for (int k = 0; k < np && s == CDLAB_OK; k++) {
        const dem_pair *c = &S->pair[k];
        if (decomp_owner(&M->D, P->x[c->j]) != me &&
            !(c->i >= 0 && decomp_owner(&M->D, P->x[c->i]) == me))
            continue;
        pair_pack(W, c, pr + (size_t)m++ * PAIR_REC);
    }
    for (int i = 0; i < n && s == CDLAB_OK; i++) {
        double *r = ex + (size_t)i * rw;
        r[0] = S->F[i].x, r[1] = S->F[i].y, r[2] = S->F[i].z;
        r[3] = S->T[i].x, r[4] = S->T[i].y, r[5] = S->T[i].z;
        r[6] = S->path[i];
        if (p->deformable)
            memcpy(r + RESTORED, &S->sig[3 * i], STRESS * sizeof *r);
        keep[i] = decomp_owner(&M->D, P->x[i]) == me;
    }
    if (s == CDLAB_OK)
        s = exchange_keep(P, keep, &ex, rw, err);
    int own = P->n, w = moves_width(M, S); /* a restart: no kinematic movements */
    if (s == CDLAB_OK && !(e = calloc((size_t)(own > 0 ? own : 1) * w, sizeof *e)))
        s = diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the distribution of a restart");
    for (int i = 0; i < own && s == CDLAB_OK && p->deformable; i++) /* the stress travels */
        memcpy(e + (size_t)i * w + moves_given(S), ex + (size_t)i * rw + RESTORED,
               STRESS * sizeof *e);
    s = comm_agree(s, err);
    if (s == CDLAB_OK && (s = exchange_halo(P, &M->D, M->range, &e, w, &M->H, err)) == CDLAB_OK)
        M->have_halo = 1;
    if (s == CDLAB_OK && (s = dem_prepare(W, S, p, err)) == CDLAB_OK) {
        moves_unpack(M, S, P->n, e);
        for (int i = 0; i < own; i++) {
            const double *r = ex + (size_t)i * rw;
            S->F[i] = v3(r[0], r[1], r[2]);
            S->T[i] = v3(r[3], r[4], r[5]);
            S->path[i] = r[6];
        }
        S->n_owned = own;
        S->dist = &M->ops;
        s = install_pairs(&M->ids, W, S, pr, m, err);
    }
    if (s == CDLAB_OK && p->bond)
        s = install_bonds(&M->ids, W, S, brec, nbr, err);
    free(brec);
    /* the ledger's cumulative sums add the ranks' contributions: rank 0 carries the restored
     * totals */
    if (me != 0)
        for (int k = 0; k < DEM_CUMULATIVE; k++)
            xsum_init(&S->acc[k]);
    s = comm_agree(s, err);
    if (s == CDLAB_OK)
        s = dem_resume(W, S, p, err);
    free(pr);
    free(ex);
    free(e);
    free(keep);
    return comm_agree(s, err);
}

void dem_mpi_free(dem_mpi *M)
{
    free(M->broken);
    free(M->refresh);
    exchange_id_map_free(&M->ids);
    if (M->have_decomp)
        decomp_free(&M->D);
    if (M->have_halo)
        exchange_halo_free(&M->H);
    memset(M, 0, sizeof *M);
}

/* The neighbour list: rebuilt when the particles' paths could have closed the skin, its pairs'
 * histories carried over by key, and the side rows remade for the pairs' forces. */
#include "dem/dem_stage.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

status dem_rebuild(world *W, dem_solver *S, const dem_params *p, diag *err)
{
    status s;
    if (S->dist && (s = S->dist->redistribute(S->dist, W, S, p, err)) != CDLAB_OK)
        return s;
    s = dem_rebuild_list(W, S, err);
    /* a distributed run: the list is this rank's alone, the forces that follow exchange */
    return S->dist ? S->dist->agree(S->dist, s, err) : s;
}

/* Keeps the pairs of list[0..n) that carry a history (ever touched since they were listed, or a
 * tangential or dashpot force), in order; returns how many. A pair without one is, bit for bit,
 * the entry a new pair gets: {i, j, -INFINITY, 0, 0}. */
static int compact_history(dem_pair *list, int n)
{
    static const vec3 zero; /* all bits zero: -0.0 is a history */
    int m = 0;
    for (int k = 0; k < n; k++) {
        const dem_pair *c = &list[k];
        if (c->zeta != -INFINITY || memcmp(&c->ft, &zero, sizeof zero) != 0 ||
            memcmp(&c->fd, &zero, sizeof zero) != 0)
            list[m++] = *c;
    }
    return m;
}

/* Moves list[0..n) to list[to..to + n) (to >= 0), in slabs from the end, giving back the pages
 * of the old place below the new one as they are read (written again from the start, they are
 * not held twice meanwhile: at 1,049,600 spheres one memmove of the 144 MB of histories held
 * 100 MB more for a moment). */
static void shift_histories(dem_pair *list, int n, int to, size_t cap_bytes)
{
    const int slab = 16384;
    for (int hi = n; hi > 0; hi -= slab) {
        int lo = hi > slab ? hi - slab : 0;
        memmove(list + to + lo, list + lo, (size_t)(hi - lo) * sizeof *list);
        int top = hi < to ? hi : to; /* the part of the old place the new one does not cover */
        if (top > lo)
            discard_range(list, (size_t)lo * sizeof *list, (size_t)top * sizeof *list, cap_bytes);
    }
}

/* The keys of a new list, each once and in key order: the candidates and the intact bonds (a
 * bonded pair stays listed however far apart). */
typedef struct list_keys {
    const pair_ref *ref;
    int nref, b;
    const dem_bond_state *bond;
    int nbond, q;
} list_keys;

static int next_key(list_keys *u, uint64_t *key, int *i, int *j)
{
    while (u->q < u->nbond && !u->bond[u->q].intact)
        u->q++;
    if (u->b >= u->nref && u->q >= u->nbond)
        return 0;
    uint64_t kr = u->b < u->nref ? u->ref[u->b].key : UINT64_MAX,
             kb = u->q < u->nbond ? u->bond[u->q].key : UINT64_MAX;
    *key = kr < kb ? kr : kb;
    *i = kr <= kb ? u->ref[u->b].i : u->bond[u->q].i;
    *j = kr <= kb ? u->ref[u->b].j : u->bond[u->q].j;
    u->b += kr == *key;
    u->q += kb == *key;
    return 1;
}

/* Gives back the pages of what a rebuild makes afresh, before the new list is written (their
 * contents are dead there): the write-back's index (build_writeback), the paths (zeroed at the
 * rebuild's end), the particles' contact forces and torques (every rebuild is followed by
 * compute_forces, which zeroes them first; a distributed run moved them with their particles
 * before). At 1,049,600 spheres 73 MB, held beside the whole new list and the candidates not
 * yet read. */
static void discard_dead(const world *W, dem_solver *S)
{
    size_t sp = (size_t)S->side_pair_cap * sizeof *S->side_pair,
           pc = (size_t)S->cap * sizeof *S->path, vc = (size_t)S->cap * sizeof *S->F;
    discard_range(S->side_pair, 0, sp, sp);
    discard_range(S->path, 0, (size_t)W->P.n * sizeof *S->path, pc);
    discard_range(S->F, 0, (size_t)W->P.n * sizeof *S->F, vc);
    discard_range(S->T, 0, (size_t)W->P.n * sizeof *S->T, vc);
}

/* Long: the new candidates merged with the old list by key so that surviving pairs keep their
 * history, in one pass with the write-back's renewal; the merge's cursors are shared. */
status dem_rebuild_list(world *W, dem_solver *S, diag *err)
{
    status s;
    int nref;
    /* The old list keeps only its pairs that carry a history (the others equal a new pair, bit
     * for bit), at its start, and gives back the pages of the rest before the candidates are
     * found: the whole list and the candidates alive together made the peak of the process
     * (issue 19: 1,049,600 spheres, 642 MB against 563 MB between rebuilds). */
    dem_pair *B = S->pair;
    S->indexed = S->bonds_linked = 0; /* the list changes from here on */
    S->list_skin = W->detect.gap;
    int nold = compact_history(B, S->npair);
    S->npair = nold;
    big_release(B, (size_t)nold * sizeof *B, (size_t)S->pair_cap * sizeof *B);
    if ((s = contacts_find_pairs(&S->grid, &W->P, W->walls, W->n_walls, W->detect.gap, &S->refs,
                                 &nref, &S->ref_cap, err)) != CDLAB_OK) {
        /* the shorter list indexed again, its side rows' forces remade from the pairs' state
         * (as a restart does), so that the failed state's row reads each pair's own force */
        if (dem_index_list(S, W, &(diag){{0}}) == CDLAB_OK)
            dem_remake_side_rows(W, S);
        return s;
    }
    cells_free(&S->grid); /* made afresh at every rebuild: not kept in between */
    if (S->dist) {        /* the pairs of this rank's particles (not two halo copies, not a wall and
                             a copy) */
        int m = 0;
        for (int b = 0; b < nref; b++) {
            const pair_ref *r = &S->refs[b];
            if (r->j < S->n_owned || (r->i >= 0 && r->i < S->n_owned))
                S->refs[m++] = *r;
        }
        nref = m;
    }
    /* The new list is merged in the old one's buffer (issue 19: no second pair buffer). Of the
     * old list's pairs with a history, those listed again stay, in key order at its start;
     * counting the new list's n keys on the way. They are moved to the buffer's end, and the
     * list is written from the start: the k-th history still to place lies at or after the k-th
     * key still to write, so nothing is overwritten before it is read. A list that outgrows the
     * buffer takes a new one. The candidates' pages are given back as they are read, and those
     * of what the rebuild makes afresh (discard_dead) before the list is written. */
    int ns = 0, n = 0, a = 0, i, j;
    uint64_t key;
    list_keys u = {S->refs, nref, 0, S->bond, S->nbond, 0};
    while (next_key(&u, &key, &i, &j)) {
        n++;
        while (a < nold && contact_pair_key(B[a].i, B[a].j, &W->P, W->n_walls) < key)
            a++;
        if (a < nold && B[a].i == i && B[a].j == j)
            B[ns++] = B[a++];
    }
    S->npair = ns; /* a valid list (key order) whatever fails next */
    int in_place = B && n <= S->pair_cap;
    if (!in_place) {
        int cap = 0;
        dem_pair *grown = NULL;
        if ((s = dem_grow_pairs(&grown, &cap, n, err)) != CDLAB_OK)
            return s;
        if (ns > 0)
            memcpy(grown + (n - ns), B, (size_t)ns * sizeof *B);
        free(B);
        S->pair = B = grown;
        S->pair_cap = cap;
    }
    /* what the rebuild makes afresh is given back before the histories' move touches the pages
     * above the compacted list (at 65,600 spheres the move with them still held made the run's
     * peak, 3.5 MB above its steps) */
    discard_dead(W, S);
    if (in_place && ns > 0)
        shift_histories(B, ns, n - ns, (size_t)S->pair_cap * sizeof *B);
    size_t ref_bytes = (size_t)S->ref_cap * sizeof *S->refs;
    u = (list_keys){S->refs, nref, 0, S->bond, S->nbond, 0};
    a = n - ns;
    for (int m = 0; next_key(&u, &key, &i, &j); m++) {
        B[m] = a < n && B[a].i == i && B[a].j == j
                   ? B[a++]
                   : (dem_pair){i, j, -INFINITY, v3_zero(), v3_zero()};
        if ((m & 0xffff) == 0xffff) /* the candidates read so far (next_key reads u.b on) */
            discard_range(S->refs, 0, (size_t)u.b * sizeof *S->refs, ref_bytes);
    }
    S->npair = n;
    /* a list that shrank gives back the pages it no longer uses */
    big_release(B, (size_t)n * sizeof *B, (size_t)S->pair_cap * sizeof *B);
    free(S->refs); /* made afresh at every rebuild */
    S->refs = NULL;
    S->ref_cap = 0;
    if ((s = dem_index_list(S, W, err)) != CDLAB_OK)
        return s;
    memset(S->path, 0, (size_t)W->P.n * sizeof *S->path);
    S->wall_path = 0.0;
    S->rebuilds++;
    return CDLAB_OK;
}

/* After the particles moved (pmax: the longest path since the last rebuild): could a pair
 * outside the list have come within reach? */
static int needs_rebuild(const world *W, dem_solver *S, double pmax)
{
    double skin = W->detect.gap;
    if (S->dist) /* every rank decides alike */
        pmax = S->dist->max(S->dist, pmax);
    /* deformable discs reach up to ext_max beyond their radii (0 for rigid ones) */
    return 2.0 * (pmax + S->ext_max) >= skin || pmax + S->ext_max + S->wall_path >= skin ||
           !(skin > 0.0) || skin > S->list_skin;
}

/* Contacts and forces after a movement to time t: a rebuild (booking the old list's dashpot
 * work first), or the fused geometry update and force computation; then the deformable discs'
 * stresses and shapes. */
status dem_contacts_and_forces(world *W, dem_solver *S, const dem_params *p, double pmax, double t,
                               dem_stats *st, diag *err)
{
    if (needs_rebuild(W, S, pmax)) {
        status s;
        dem_damping_work_before(W, S);
        if ((s = dem_rebuild(W, S, p, err)) != CDLAB_OK)
            return s;
        dem_compute_forces(W, S, p, 0, st);
    } else {
        dem_compute_forces(W, S, p, 1, st);
    }
    return S->ell ? dem_deform_update(W, S, p, t, err) : CDLAB_OK;
}

/* Pair k's force on body 1 from its state at the end of the last step, as the law made it:
 * R = -f with f = -(k_n zeta) n + f_t (a bond: k_n h n + f_t, h = gap - gap0 with the step's gap
 * -zeta), plus the dashpot's force; +0 for a frictional pair apart. The normal of now is the
 * step's (it depends on the centres only, also for deformable discs). */
vec3 dem_remade_force(const world *W, const dem_solver *S, int k)
{
    const dem_pair *c = &S->pair[k];
    const dem_bond_state *b = bond_of_pair(S, k);
    if (!(c->zeta >= 0.0) && !b)
        return v3_zero();
    contact_frame f1 = frame_now(W, S, c->i, c->j, pair_separation(W, c->i, c->j));
    vec3 f = b ? v3_axpy(S->k_n * (-c->zeta - b->gap0), f1.n, c->ft)
               : v3_axpy(-(S->k_n * c->zeta), f1.n, c->ft);
    if (S->dashpots)
        f = v3_add(f, c->fd);
    return v3_scale(f, -1.0);
}

/* Each side row's force from its pair's state (remade_force), after the list was indexed anew. */
void dem_remake_side_rows(const world *W, dem_solver *S)
{
    for (int r = 0; r < S->nside; r++)
        S->side[3 * r] = dem_remade_force(W, S, S->side_pair[r]);
}

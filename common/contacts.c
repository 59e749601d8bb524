#include "contacts.h"
#include "parallel.h"

#include "grow.h"
#include "prefetch.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Key: body 0 encoded as n_walls + id (particle) or n_walls - 1 - w (wall), then body 1's id. */
uint64_t contact_key_of_ids(long b0, long b1, int n_walls)
{
    return ((uint64_t)(b0 + n_walls) << 32) | (uint64_t)(uint32_t)b1;
}

uint64_t contact_pair_key(int i, int j, const particles *P, int n_walls)
{
    return contact_key_of_ids(i >= 0 ? P->id[i] : i, P->id[j], n_walls);
}

/* Normal, gap and lever arms of a particle pair. */
static inline void pair_frame(contact *c, const particles *P)
{
    contact_frame f = contact_frame_particles(pbox_delta(&P->box, P->x[c->i], P->x[c->j]),
                                              P->r[c->i], P->r[c->j]);
    c->n = f.n;
    c->gap = f.gap;
    c->a0 = f.a0;
    c->a1 = f.a1;
}

contact_frame contact_frame_wall(const wall *W, double s, vec3 xj, double rj)
{
    contact_frame f;
    if (W->kind == WALL_CYLINDER) {
        vec3 rel = v3_sub(xj, W->p);
        vec3 radial = v3_reject(rel, W->n);
        double rho = v3_norm(radial);
        vec3 u = rho > 0.0 ? v3_scale(radial, 1.0 / rho) : v3(1.0, 0.0, 0.0);
        if (W->inside) {
            f.n = v3_scale(u, -1.0);
            f.gap = W->radius - rho - rj;
        } else {
            f.n = u;
            f.gap = rho - W->radius - rj;
        }
    } else {
        vec3 pp = v3_axpy(s, W->n, W->p);
        f.n = W->n;
        f.gap = v3_dot(v3_sub(xj, pp), W->n) - rj;
    }
    /* contact point on the wall's surface (inside the particle when overlapping) */
    f.a0 = 0.0;
    f.a1 = rj + (f.gap < 0.0 ? f.gap : 0.0);
    f.l0 = v3_zero();
    f.l1 = v3_scale(f.n, -f.a1);
    return f;
}

void contact_geometry(contact *c, const particles *P, const wall *walls)
{
    int dim = P->dimension, j = c->j;
    double rj = P->r[j];
    /* inverse effective masses; the normal one split into the particles' part (subject to the
     * DOF locks) and the piston's (it moves along its own normal, unlocked) */
    double w_part = 0.0, w_wall = 0.0, w_t = 0.0;
    if (c->i >= 0) {
        int i = c->i;
        pair_frame(c, P);
        w_part = P->inv_m[i] + P->inv_m[j];
        w_t = w_part + c->a0 * c->a0 * P->inv_I[i] + c->a1 * c->a1 * P->inv_I[j];
    } else {
        const wall *W = &walls[-1 - c->i];
        contact_frame f = contact_frame_wall(W, W->s, P->x[j], rj);
        c->n = f.n;
        c->gap = f.gap;
        c->a0 = f.a0;
        c->a1 = f.a1;
        double a1 = f.a1;
        /* A piston moves only along its normal (= the contact normal): it adds to the normal
         * inverse mass only. Fixed walls add nothing (Unger & Kertesz, end of sec. 2.4). */
        w_part = P->inv_m[j];
        w_wall = W->kind == WALL_PISTON ? W->inv_mass : 0.0;
        w_t = P->inv_m[j] + a1 * a1 * P->inv_I[j];
    }
    if (dim == 1) {
        /* Only x translation is free: the particles' normal response is weighted by n_x^2 and
         * there is no tangential response at all. */
        w_part *= c->n.x * c->n.x;
        w_t = 0.0;
    }
    double w_n = w_part + w_wall;
    c->m_n = w_n > 0.0 ? 1.0 / w_n : 0.0;
    c->m_t = w_t > 0.0 ? 1.0 / w_t : 0.0;
}

/* Sorting the candidates by key, in place (issue 19: qsort's merge sort took a second array of
 * the list's size, 62 MB at 10^6 spheres): an introsort (quicksort on the median of three,
 * heapsort past a depth of 2 log2 n, insertion sort below 16). The keys are distinct, so the
 * order is the one any sort gives (equal keys are sorted too, in no particular order). */
static inline void swap_ref(pair_ref *a, pair_ref *b)
{
    pair_ref t = *a;
    *a = *b;
    *b = t;
}

static void sift_refs(pair_ref *a, int root, int n)
{
    for (int c = 2 * root + 1; c < n; root = c, c = 2 * root + 1) {
        if (c + 1 < n && a[c + 1].key > a[c].key)
            c++;
        if (a[root].key >= a[c].key)
            return;
        swap_ref(&a[root], &a[c]);
    }
}

/* Insertion sort by key: the end of the introsort's short runs, and a particle's few pairs. */
static inline void sort_few_refs(pair_ref *a, int n)
{
    for (int k = 1; k < n; k++) {
        pair_ref v = a[k];
        int m = k;
        for (; m > 0 && a[m - 1].key > v.key; m--)
            a[m] = a[m - 1];
        a[m] = v;
    }
}

void contacts_sort_refs_depth(pair_ref *a, int n, int depth)
{
    while (n > 16) {
        if (depth-- == 0) { /* heapsort */
            for (int r = n / 2 - 1; r >= 0; r--)
                sift_refs(a, r, n);
            for (int e = n - 1; e > 0; e--) {
                swap_ref(&a[0], &a[e]);
                sift_refs(a, 0, e);
            }
            return;
        }
        int mid = n / 2; /* the median of the first, middle and last keys at mid */
        if (a[mid].key < a[0].key)
            swap_ref(&a[mid], &a[0]);
        if (a[n - 1].key < a[0].key)
            swap_ref(&a[n - 1], &a[0]);
        if (a[n - 1].key < a[mid].key)
            swap_ref(&a[n - 1], &a[mid]);
        uint64_t p = a[mid].key;
        int i = -1, j = n; /* Hoare: [0, j] <= p <= [j + 1, n), 0 <= j < n - 1 */
        for (;;) {
            do
                i++;
            while (a[i].key < p);
            do
                j--;
            while (a[j].key > p);
            if (i >= j)
                break;
            swap_ref(&a[i], &a[j]);
        }
        if (j + 1 < n - j - 1) { /* the smaller side by recursion: depth O(log n) */
            contacts_sort_refs_depth(a, j + 1, depth);
            a += j + 1;
            n -= j + 1;
        } else {
            contacts_sort_refs_depth(a + j + 1, n - j - 1, depth);
            n = j + 1;
        }
    }
    sort_few_refs(a, n);
}

static int refs_sorted(const pair_ref *a, int n)
{
    for (int k = 1; k < n; k++)
        if (a[k].key <= a[k - 1].key)
            return 0;
    return 1;
}

void contacts_sort_refs(pair_ref *a, int n)
{
    int depth = 0;
    for (int m = n; m > 1; m >>= 1)
        depth += 2;
    contacts_sort_refs_depth(a, n, depth);
}

static status add_ref(pair_ref **refs, int *n, int *cap, uint64_t key, int i, int j, diag *err)
{
    if (*n >= *cap) {
        pair_ref *r = grow_array(*refs, cap, *n + 1, sizeof *r);
        if (!r)
            return diag_set(err, CDLAB_ERR_NOMEM, "cannot grow the contact list beyond %d", *n);
        *refs = r;
    }
    (*refs)[(*n)++] = (pair_ref){key, i, j};
    return CDLAB_OK;
}

/* The pairs of the particles at positions [k0, k1) of the cell order (G->order) with the
 * particles of their own and adjacent cells (id_j > id_i: each pair once, oriented by the ids)
 * into *refs (n, cap), a particle's pairs one after the other; G->found[i] = their number. It
 * stops after the first particle that takes *n past limit (INT_MAX: never); *k_end = the next
 * position (k1 when all were searched). In cell
 * order, the particles whose neighbours are searched are neighbours themselves: in a packing
 * stored in random order, the positions, radii and ids of a few rows of cells stay in cache.
 * With the grid's copy of them in cell order (G->cx, cell_copy) it reads that instead: the rows
 * then lie together in memory.
 * Long: the cell search's inner loop over a cell's neighbours with its prefetches; split, the
 * compiler lost the loop's registers (the detection's hot path). */
static status find_particle_pairs(cells *G, const particles *P, int n_walls, double gap, int k0,
                                  int k1, int limit, pair_ref **refs, int *n, int *cap, int *k_end,
                                  diag *err)
{
    /* Neighbour cell offsets per axis: -1, 0, +1, wrapped along periodic axes, each distinct
     * cell once (a periodic axis of one or two cells has fewer distinct neighbours). */
    int dims[3] = {G->nx, G->ny, G->nz};
    int offs[3][3], noff[3];
    for (int a = 0; a < 3; a++) {
        if (G->periodic[a] && dims[a] <= 2) {
            noff[a] = dims[a];
            offs[a][0] = 0;
            offs[a][1] = 1;
        } else {
            noff[a] = 3;
            offs[a][0] = -1;
            offs[a][1] = 0;
            offs[a][2] = 1;
        }
    }
    status s;
    /* the cell of position k0: the last cell starting at or before it */
    int c = 0, hi = G->nx * G->ny * G->nz;
    while (c + 1 < hi) {
        int mid = c + (hi - c) / 2;
        if (G->start[mid] <= k0)
            c = mid;
        else
            hi = mid;
    }
    /* The cell whose particles are touched first when the search reaches cell c is c + lead
     * (one further along every axis); its particles are prefetched two cells ahead. */
    int ncell = G->nx * G->ny * G->nz,
        lead = 1 + (G->ny > 1 ? G->nx : 0) + (G->nz > 1 ? G->nx * G->ny : 0) + 2;
    /* particle data at index a: a = k (position in cell order) in the copy, else order[k] */
    const int copied = G->keep_shares && G->cx != NULL;
    const vec3 *X = copied ? G->cx : P->x;
    const double *R = copied ? G->cr : P->r;
    const int *ID = copied ? G->cid : P->id;
    const unsigned char *FR = copied ? G->cfrozen : P->frozen;
    int k = k0;
    while (k < k1) {
        if (G->start[c + 1] <= k) {
            while (G->start[c + 1] <= k)
                c++;
            if (!copied && c + lead < ncell)
                for (int m = G->start[c + lead]; m < G->start[c + lead + 1]; m++) {
                    int j = G->order[m];
                    prefetch_line(&P->x[j]);
                    prefetch_line(&P->r[j]);
                    prefetch_line(&P->id[j]);
                    prefetch_line(&P->frozen[j]);
                }
        }
        int i = G->order[k], a = copied ? k : i, before = *n;
        int ic[3] = {c % G->nx, (c / G->nx) % G->ny, c / (G->nx * G->ny)};
        for (int oz = 0; oz < noff[2]; oz++) {
            int z = ic[2] + offs[2][oz];
            if (G->periodic[2])
                z = (z + dims[2]) % dims[2];
            else if (z < 0 || z >= dims[2])
                continue;
            for (int oy = 0; oy < noff[1]; oy++) {
                int y = ic[1] + offs[1][oy];
                if (G->periodic[1])
                    y = (y + dims[1]) % dims[1];
                else if (y < 0 || y >= dims[1])
                    continue;
                for (int ox = 0; ox < noff[0]; ox++) {
                    int x = ic[0] + offs[0][ox];
                    if (G->periodic[0])
                        x = (x + dims[0]) % dims[0];
                    else if (x < 0 || x >= dims[0])
                        continue;
                    int cc = (z * G->ny + y) * G->nx + x;
                    for (int m = G->start[cc]; m < G->start[cc + 1]; m++) {
                        int j = G->order[m], b = copied ? m : j;
                        if (ID[b] <= ID[a] || (FR[a] && FR[b]))
                            continue;
                        vec3 d = pbox_delta(&P->box, X[a], X[b]);
                        double reach = R[a] + R[b] + gap;
                        if (v3_norm2(d) >= reach * reach)
                            continue;
                        if (!(contact_frame_particles(d, R[a], R[b]).gap < gap))
                            continue;
                        if ((s = add_ref(refs, n, cap, contact_key_of_ids(ID[a], ID[b], n_walls), i,
                                         j, err)) != CDLAB_OK)
                            return s;
                    }
                }
            }
        }
        G->found[i] = *n - before;
        k++;
        if (*n > limit)
            break;
    }
    *k_end = k;
    return CDLAB_OK;
}

/* Moves the pairs a[0..) of particles 0..np-1 (found[i] of them with body 0 = i) to the places
 * of their body 0 in storage order, in place, each pair once (cycles of swaps: an American flag
 * sort), and sorts each particle's pairs by key. found (np + 1 entries) receives the places;
 * next (np) is scratch. */
static void place_by_particle(pair_ref *a, int np, int *found, int *next)
{
    int at = 0;
    for (int i = 0; i < np; i++) {
        int f = found[i];
        found[i] = next[i] = at;
        at += f;
    }
    found[np] = at;
    for (int b = 0; b < np; b++) {
        while (next[b] < found[b + 1]) {
            pair_ref r = a[next[b]];
            if (r.i == b) {
                next[b]++;
            } else { /* to its own place; what was there comes here */
                a[next[b]] = a[next[r.i]];
                a[next[r.i]++] = r;
            }
        }
        sort_few_refs(a + found[b], found[b + 1] - found[b]);
    }
}

/* The grid's copy of the positions, radii, ids and frozen flags in cell order, for a grid
 * searched every step (CD): made on threads (independent reads of the particles' arrays, as many
 * in flight as the cores allow), after which the search reads rows of cells that lie together
 * (a packing stored in random order: bench/PROFILE.md, "Measured choices": cell copy). */
static status cell_copy(cells *G, const particles *P, diag *err)
{
    int n = P->n;
    vec3 *cx = grow_array(G->cx, &G->cx_cap, n, sizeof *cx);
    if (cx)
        G->cx = cx;
    double *cr = grow_array(G->cr, &G->cr_cap, n, sizeof *cr);
    if (cr)
        G->cr = cr;
    int *cid = grow_array(G->cid, &G->cid_cap, n, sizeof *cid);
    if (cid)
        G->cid = cid;
    unsigned char *cf = grow_array(G->cfrozen, &G->cfrozen_cap, n, 1);
    if (cf)
        G->cfrozen = cf;
    if (!cx || !cr || !cid || !cf)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot copy %d particles for the pair search", n);
    const int *order = G->order;
#pragma omp parallel for schedule(static) if (n > CDLAB_PARALLEL_MIN)
    for (int k = 0; k < n; k++) {
        int i = order[k];
        cx[k] = P->x[i];
        cr[k] = P->r[i];
        cid[k] = P->id[i];
        cf[k] = P->frozen[i];
    }
    return CDLAB_OK;
}

/* Particles per share of the search (fixed: the result does not depend on the shares). */
#define FIND_SHARE 16384

/* Shares of FIND_SHARE particles of the cell order, each into a list of its own (on threads;
 * the lists kept in G for the next search when G->keep_shares); then each particle's pairs
 * (found together) are copied to the place of its storage index after the *n already in *refs
 * and sorted there, share by share in parallel. */
static status find_in_shares(cells *G, const particles *P, int n_walls, double gap, pair_ref **refs,
                             int *n, int *cap, diag *err)
{
    int *found = G->found;
    int nshare = (P->n + FIND_SHARE - 1) / FIND_SHARE;
    if (nshare > G->n_share) {
        pair_ref **part = realloc(G->part, (size_t)nshare * sizeof *part);
        if (part)
            G->part = part;
        int *pn = realloc(G->part_n, (size_t)nshare * sizeof *pn);
        if (pn)
            G->part_n = pn;
        int *pc = realloc(G->part_cap, (size_t)nshare * sizeof *pc);
        if (pc)
            G->part_cap = pc;
        if (!part || !pn || !pc)
            return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the pair search");
        for (int q = G->n_share; q < nshare; q++) {
            part[q] = NULL;
            pc[q] = 0;
        }
        G->n_share = nshare;
    }
    pair_ref **part = G->part;
    int *pn = G->part_n, *pc = G->part_cap;
    int failed = 0;
    diag perr; /* not zeroed: 16 kB (status.h) at every rebuild */
    perr.msg[0] = '\0';
#pragma omp parallel for schedule(dynamic, 1) reduction(max : failed) if (nshare > 1)
    for (int q = 0; q < nshare; q++) {
        int k0 = q * FIND_SHARE, k1 = k0 + FIND_SHARE < P->n ? k0 + FIND_SHARE : P->n;
        diag e;
        /* the share's list and counts in the thread's own variables while it grows: pn and pc
         * are neighbours in memory, and every pair written through them moved their line
         * between the cores */
        pair_ref *list = part[q];
        int ln = 0, lc = pc[q], k_end;
        status sq =
            find_particle_pairs(G, P, n_walls, gap, k0, k1, INT_MAX, &list, &ln, &lc, &k_end, &e);
        part[q] = list;
        pn[q] = ln;
        pc[q] = lc;
        if (sq != CDLAB_OK) {
            failed = 1;
#pragma omp critical(cdlab_find_pairs)
            perr = e;
        }
    }
    if (failed)
        return diag_set(err, CDLAB_ERR_NOMEM, "%s", perr.msg);
    long total = *n; /* the walls' pairs */
    for (int q = 0; q < nshare; q++)
        total += pn[q];
    if (total > 0x7fffffffL - 1)
        return diag_set(err, CDLAB_ERR_NOMEM, "too many contact candidates (%ld)", total);
    pair_ref *all = grow_array(*refs, cap, (int)total + 1, sizeof *all);
    if (!all)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot grow the contact list to %ld", total);
    *refs = all;
    int at = *n;
    for (int i = 0; i < P->n; i++) {
        int f = found[i];
        found[i] = at;
        at += f;
    }
    *n = at;
#pragma omp parallel for schedule(dynamic, 1) if (nshare > 1)
    for (int q = 0; q < nshare; q++) {
        const pair_ref *r = part[q];
        for (int k = 0; k < pn[q];) {
            int i = r[k].i, m = k;
            while (m < pn[q] && r[m].i == i)
                m++;
            memcpy(all + found[i], r + k, (size_t)(m - k) * sizeof *all);
            sort_few_refs(all + found[i], m - k);
            k = m;
        }
        if (!G->keep_shares) { /* the copy grows as the shares shrink */
            free_discard(part[q], (size_t)pn[q] * sizeof *part[q]);
            part[q] = NULL;
            pc[q] = 0;
        }
    }
    return CDLAB_OK;
}

/* Walls are few: every particle against every wall, first (their keys are the smallest), the
 * last wall first (its key is the smallest of the walls'), each wall's particles in storage
 * order. The tests on threads, each over a range of the particles that it lists in hit[] (at
 * least P->n entries) in place; the ranges' lists are then joined in order. */
static status find_wall_pairs(const particles *P, const wall *walls, int n_walls, double gap,
                              int *hit, pair_ref **refs, int *n, int *cap, diag *err)
{
    int np = P->n, nt = np > CDLAB_PARALLEL_MIN ? cdlab_threads() : 1, team = 1;
    int cnt[nt];
    for (int w = n_walls - 1; w >= 0; w--) {
#pragma omp parallel num_threads(nt) if (nt > 1)
        {
            int t = 0, m = 1;
#ifdef _OPENMP
            t = omp_get_thread_num();
            m = omp_get_num_threads();
#endif
            if (t == 0)
                team = m;
            int j0 = (int)((long)np * t / m), j1 = (int)((long)np * (t + 1) / m), k = j0;
            for (int j = j0; j < j1; j++)
                if (!P->frozen[j] &&
                    contact_frame_wall(&walls[w], walls[w].s, P->x[j], P->r[j]).gap < gap)
                    hit[k++] = j;
            cnt[t] = k - j0;
        }
        for (int t = 0; t < team; t++)
            for (int k = (int)((long)np * t / team), e = k + cnt[t]; k < e; k++) {
                status s = add_ref(refs, n, cap, contact_pair_key(-1 - w, hit[k], P, n_walls),
                                   -1 - w, hit[k], err);
                if (s != CDLAB_OK)
                    return s;
            }
    }
    return CDLAB_OK;
}

/* What every search starts with: the grid for the largest radius and gap, G->found for rows
 * rows of P->n (+ 1) entries, and the walls' pairs into *refs (*n of them). */
static status search_start(cells *G, const particles *P, const wall *walls, int n_walls, double gap,
                           int rows, pair_ref **refs, int *n, int *cap, diag *err)
{
    status s;
    *n = 0;
    double rmax = 0.0; /* (a NaN radius is passed over, as fmax would) */
#pragma omp parallel for schedule(static) if (P->n > CDLAB_PARALLEL_MIN) reduction(max : rmax)
    for (int i = 0; i < P->n; i++)
        rmax = P->r[i] > rmax ? P->r[i] : rmax;
    if ((s = cells_build(G, P, 2.0 * rmax + gap, err)) != CDLAB_OK)
        return s;
    int *found = grow_array(G->found, &G->found_cap, rows * P->n + 1, sizeof *found);
    if (!found)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the pair search");
    G->found = found;
    return find_wall_pairs(P, walls, n_walls, gap, found, refs, n, cap, err);
}

status contacts_find_pairs(cells *G, const particles *P, const wall *walls, int n_walls, double gap,
                           pair_ref **refs, int *n, int *cap, diag *err)
{
    status s;
    /* the in-place move (one thread, !keep_shares) needs a second row of G->found: next */
    int in_place = !G->keep_shares && cdlab_threads() <= 1;
    /* Particle pairs: each particle against its own and the 26 (or fewer) adjacent cells,
     * keeping id_j > id_i so that each pair is found once, oriented by the ids (in one process
     * the ids are the storage order; a rank of a distributed run holds its particles and the
     * halo copies in another order, and must orient its pairs as one process would). Two frozen
     * particles never interact. The search goes in cell order (find_particle_pairs); then every
     * particle's pairs are moved to the place of its storage index and sorted there (a few pairs
     * each): in one process the list is then in key order (body 0's id is the storage index) and
     * the final sort is skipped. The search runs in shares, on threads (find_in_shares), except
     * for a list rebuilt now and then on one thread (DEM), which moves its pairs in place: that
     * saves the shares' lists (16 bytes per pair at the rebuild's peak) but took 0.2 s more per
     * search of 10^6 disks, too much for a search every step (CD). */
    if ((s = search_start(G, P, walls, n_walls, gap, in_place ? 2 : 1, refs, n, cap, err)) !=
        CDLAB_OK)
        return s;
    int *found = G->found;
    if (G->keep_shares && (s = cell_copy(G, P, err)) != CDLAB_OK)
        return s;
    if (in_place) {
        /* a list rebuilt now and then (DEM), one thread: straight into the list, then moved in
         * place: no second copy of the pairs at the rebuild's peak */
        int n0 = *n, k_end;
        if ((s = find_particle_pairs(G, P, n_walls, gap, 0, P->n, INT_MAX, refs, n, cap, &k_end,
                                     err)) != CDLAB_OK)
            return s;
        place_by_particle(*refs + n0, P->n, found, found + P->n + 1);
    } else if ((s = find_in_shares(G, P, n_walls, gap, refs, n, cap, err)) != CDLAB_OK) {
        return s;
    }
    /* one process: the walls' pairs, then the particles' in storage order, are in key order */
    if (!refs_sorted(*refs, *n))
        contacts_sort_refs(*refs, *n);
    return CDLAB_OK;
}

status contacts_search_start(cells *G, const particles *P, const wall *walls, int n_walls,
                             double gap, pair_ref **refs, int *n, int *cap, diag *err)
{
    return search_start(G, P, walls, n_walls, gap, 1, refs, n, cap, err);
}

status contacts_search_range(cells *G, const particles *P, int n_walls, double gap, int k0,
                             int limit, pair_ref **refs, int *n, int *cap, int *next, diag *err)
{
    return find_particle_pairs(G, P, n_walls, gap, k0, P->n, limit, refs, n, cap, next, err);
}

double contact_ref_gap(const pair_ref *r, const particles *P, const wall *walls)
{
    if (r->i >= 0)
        return contact_frame_particles(pbox_delta(&P->box, P->x[r->i], P->x[r->j]), P->r[r->i],
                                       P->r[r->j])
            .gap;
    const wall *W = &walls[-1 - r->i];
    return contact_frame_wall(W, W->s, P->x[r->j], P->r[r->j]).gap;
}

/* Keeps the forces of list L whose bits are not all zero (an exact zero is what a new record
 * starts with), in list (key) order, in L->carry; in blocks, counted then copied, in parallel. */
static status carry_forces(contact_list *L, diag *err)
{
    enum { CARRY_BLOCK = 65536 };
    int nb = (L->n + CARRY_BLOCK - 1) / CARRY_BLOCK;
    int *start = malloc((size_t)(nb + 1) * sizeof *start);
    if (!start)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot carry %d forces over", L->n);
    static const vec3 zero;
    start[0] = 0;
#pragma omp parallel for schedule(static) if (nb > 1)
    for (int q = 0; q < nb; q++) {
        int k1 = (q + 1) * CARRY_BLOCK < L->n ? (q + 1) * CARRY_BLOCK : L->n, m = 0;
        for (int k = q * CARRY_BLOCK; k < k1; k++)
            m += memcmp(&L->c[k].R, &zero, sizeof zero) != 0;
        start[q + 1] = m;
    }
    for (int q = 0; q < nb; q++)
        start[q + 1] += start[q];
    contact_carry *cr =
        grow_array(L->carry, &L->carrycap, start[nb] > 0 ? start[nb] : 1, sizeof *cr);
    if (!cr) {
        int m = start[nb];
        free(start);
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot carry %d forces over", m);
    }
    L->carry = cr;
#pragma omp parallel for schedule(static) if (nb > 1)
    for (int q = 0; q < nb; q++) {
        int k1 = (q + 1) * CARRY_BLOCK < L->n ? (q + 1) * CARRY_BLOCK : L->n, m = start[q];
        for (int k = q * CARRY_BLOCK; k < k1; k++)
            if (memcmp(&L->c[k].R, &zero, sizeof zero) != 0)
                cr[m++] = (contact_carry){L->c[k].key, L->c[k].R};
    }
    L->ncarry = start[nb];
    free(start);
    return CDLAB_OK;
}

status contacts_detect(contact_list *L, const particles *P, const wall *walls, int n_walls,
                       const detect_params *dp, diag *err)
{
    status s;
    /* The forces to carry over, then the list's buffer is reused for the new list. */
    L->ncarry = 0;
    if (dp->warm_start && L->n > 0 && (s = carry_forces(L, err)) != CDLAB_OK)
        return s;
    L->n = 0;

    int nref;
    L->grid.keep_shares = 1; /* searched every step */
    if ((s = contacts_find_pairs(&L->grid, P, walls, n_walls, dp->gap, &L->refs, &nref, &L->refcap,
                                 err)) != CDLAB_OK)
        return s;
    /* the records are rebuilt from the refs: nothing to keep (64-byte aligned, cache lines) */
    contact *grown = grow_big(L->c, 0, &L->cap, nref, sizeof *grown);
    if (!grown)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot grow the contact list to %d", nref);
    L->c = grown;
#pragma omp parallel for schedule(static) if (nref > CDLAB_PARALLEL_MIN)
    for (int k = 0; k < nref; k++) {
        const pair_ref *r = &L->refs[k];
        contact *c = &L->c[k];
        if (k + CONTACT_GEOMETRY_AHEAD < nref)
            contact_geometry_prefetch(L->refs[k + CONTACT_GEOMETRY_AHEAD].j, P);
        memset(c, 0, sizeof *c); /* padding included: checkpoints store whole records */
        c->i = r->i;
        c->j = r->j;
        contact_geometry(c, P, walls);
        c->key = r->key;
        c->mu = r->i >= 0 ? dp->mu : walls[-1 - r->i].mu;
        c->R = v3_zero();
    }
    L->n = nref;

    /* Merge with the carried forces (sorted): surviving pairs keep their force. In shares of the
     * new list, each starting where a binary search puts its first key among the carried. */
    if (L->ncarry > 0) {
        enum { MERGE_SHARE = 65536 };
        int nm = (L->n + MERGE_SHARE - 1) / MERGE_SHARE;
        const contact_carry *cr = L->carry;
#pragma omp parallel for schedule(static) if (nm > 1)
        for (int q = 0; q < nm; q++) {
            int b0 = q * MERGE_SHARE, b1 = b0 + MERGE_SHARE < L->n ? b0 + MERGE_SHARE : L->n;
            int lo = 0, hi = L->ncarry; /* the first carried key >= the share's first key */
            while (lo < hi) {
                int mid = lo + (hi - lo) / 2;
                if (cr[mid].key < L->c[b0].key)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            int a = lo;
            for (int b = b0; b < b1 && a < L->ncarry; b++) {
                while (a < L->ncarry && cr[a].key < L->c[b].key)
                    a++;
                if (a < L->ncarry && cr[a].key == L->c[b].key)
                    L->c[b].R = cr[a].R;
            }
        }
    }
    return CDLAB_OK;
}

void contacts_free(contact_list *L)
{
    free(L->c);
    free(L->carry);
    free(L->refs);
    free(L->ov);
    cells_free(&L->grid);
    memset(L, 0, sizeof *L);
}

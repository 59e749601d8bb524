#include "cells.h"

#include "grow.h"
#include "parallel.h"

#include <stdlib.h>
#include <string.h>

/* The grid is capped at this many cells per particle (plus a constant): a sparse system in a
 * large box then gets bigger cells rather than a huge empty grid. */
#define CELLS_MAX_PER_PARTICLE 4

/* Stable counting sort of the particles by cell: order[] lists them cell by cell, in index
 * order within a cell (so detection is deterministic); start[c] is cell c's first place,
 * start[ncell] = n. On one thread, or two: the counts are random accesses over the whole grid.
 * With more (bin_by_ranges), each thread takes a range of the cells and reads every particle's
 * cell twice, counting and then placing only its own: the random accesses stay in its range of
 * the counts (at 10^6 disks on 2 threads of this project's VM that took longer than one
 * thread, bench/PROFILE.md; on 16 it takes the serial bin off the step). The same order
 * either way. */
static void bin_stable(cells *G, int n, int ncell)
{
    const int *cell_of = G->cell_of;
    int *start = G->start, *order = G->order;
    memset(start, 0, (size_t)(ncell + 1) * sizeof *start);
    for (int i = 0; i < n; i++)
        start[cell_of[i] + 1]++;
    for (int c = 0; c < ncell; c++)
        start[c + 1] += start[c];
    for (int i = 0; i < n; i++)
        order[start[cell_of[i]]++] = i;
    for (int c = ncell; c > 0; c--)
        start[c] = start[c - 1];
    start[0] = 0;
}

#ifdef _OPENMP
/* The fewest threads for bin_by_ranges. */
#define BIN_RANGES_MIN_THREADS 4

static void bin_by_ranges(cells *G, int n, int ncell, int nt)
{
    const int *cell_of = G->cell_of;
    int *start = G->start, *order = G->order;
    int total[nt + 1];
#pragma omp parallel num_threads(nt)
    {
        int t = omp_get_thread_num(), m = omp_get_num_threads();
        int c0 = (int)((long)ncell * t / m), c1 = (int)((long)ncell * (t + 1) / m);
        /* start[c + 1] counts cell c for c in [c0, c1): this thread's counts only */
        for (int c = c0; c < c1; c++)
            start[c + 1] = 0;
        for (int i = 0; i < n; i++) {
            int c = cell_of[i];
            if (c >= c0 && c < c1)
                start[c + 1]++;
        }
        int sum = 0;
        for (int c = c0; c < c1; c++) {
            int k = start[c + 1];
            start[c + 1] = sum; /* the place within the range, then offset */
            sum += k;
        }
        total[t + 1] = sum;
#pragma omp barrier
#pragma omp single
        {
            total[0] = 0;
            for (int q = 0; q < m; q++)
                total[q + 1] += total[q];
            start[0] = 0;
        }
        /* start[c + 1] is now cell c's first place within the range: the place counter */
        int off = total[t];
        for (int i = 0; i < n; i++) {
            int c = cell_of[i];
            if (c >= c0 && c < c1)
                order[off + start[c + 1]++] = i;
        }
        /* start[c + 1] = the end of cell c within the range: cell c + 1's start */
        for (int c = c0; c < c1; c++)
            start[c + 1] += off;
    }
}
#endif

/* Long: the counting sort of the particles into cells (counts, prefix sums, placement) over the
 * shared arrays, on threads; its phases are one algorithm. */
status cells_build(cells *G, const particles *P, double h_min, diag *err)
{
    int n = P->n;
    /* the bounding box and the first particle (in storage order) with a non-finite position,
     * on threads: min and max are exact in any order */
    double lx = INFINITY, ly = INFINITY, lz = INFINITY, hx = -INFINITY, hy = -INFINITY,
           hz = -INFINITY;
    int bad = n;
#pragma omp parallel for schedule(static) if (n > CDLAB_PARALLEL_MIN) reduction(min                \
                                                                                : lx, ly, lz, bad) \
    reduction(max                                                                                  \
              : hx, hy, hz)
    for (int i = 0; i < n; i++) {
        vec3 x = P->x[i];
        if (!(isfinite(x.x) && isfinite(x.y) && isfinite(x.z))) {
            bad = i < bad ? i : bad;
            continue;
        }
        /* finite here: comparisons, not fmin/fmax calls (the box serves the cell index only,
         * where the sign of a zero corner makes no difference) */
        lx = x.x < lx ? x.x : lx;
        ly = x.y < ly ? x.y : ly;
        lz = x.z < lz ? x.z : lz;
        hx = x.x > hx ? x.x : hx;
        hy = x.y > hy ? x.y : hy;
        hz = x.z > hz ? x.z : hz;
    }
    if (bad < n)
        return diag_set(err, CDLAB_ERR_NUMERIC, "particle %d has a non-finite position",
                        P->id[bad]);
    vec3 lo = v3(lx, ly, lz), hi = v3(hx, hy, hz);
    if (n == 0)
        lo = hi = v3_zero();
    const pbox *B = &P->box;
    double blo[3] = {B->lo.x, B->lo.y, B->lo.z}, bL[3] = {B->L.x, B->L.y, B->L.z};
    double *plo = &lo.x, *phi = &hi.x;
    for (int a = 0; a < 3; a++) {
        G->periodic[a] = B->any && B->periodic[a];
        if (G->periodic[a]) {
            plo[a] = blo[a];
            phi[a] = blo[a] + bL[a];
        }
    }
    double h = h_min > 0.0 ? h_min : 1.0;
    double max_cells = (double)CELLS_MAX_PER_PARTICLE * n + 64.0;
    double cnt[3], side[3];
    for (;;) {
        for (int a = 0; a < 3; a++) {
            double ext = phi[a] - plo[a];
            if (G->periodic[a]) {
                /* whole cells only; at least one */
                cnt[a] = fmax(1.0, floor(ext / h));
                side[a] = ext / cnt[a];
            } else {
                cnt[a] = floor(ext / h) + 1;
                side[a] = h;
            }
        }
        if (cnt[0] * cnt[1] * cnt[2] <= max_cells) {
            G->nx = (int)cnt[0];
            G->ny = (int)cnt[1];
            G->nz = (int)cnt[2];
            break;
        }
        h *= 1.5;
    }
    G->h = v3(side[0], side[1], side[2]);
    G->lo = lo;
    int ncell = G->nx * G->ny * G->nz;
    int *start = grow_array(G->start, &G->ncell_cap, ncell + 1, sizeof *start);
    if (start)
        G->start = start;
    int *order = grow_array(G->order, &G->order_cap, n, sizeof *order);
    if (order)
        G->order = order;
    int *cell_of = grow_array(G->cell_of, &G->cell_of_cap, n, sizeof *cell_of);
    if (cell_of)
        G->cell_of = cell_of;
    if (!start || !order || !cell_of)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot grow the cell list (%d cells, %d particles)",
                        ncell, n);
#pragma omp parallel for schedule(static) if (n > CDLAB_PARALLEL_MIN)
    for (int i = 0; i < n; i++) {
        /* positions are wrapped along periodic axes; the clamps only catch rounding */
        int ix = (int)((P->x[i].x - lo.x) / G->h.x), iy = (int)((P->x[i].y - lo.y) / G->h.y),
            iz = (int)((P->x[i].z - lo.z) / G->h.z);
        ix = ix < 0 ? 0 : (ix >= G->nx ? G->nx - 1 : ix);
        iy = iy < 0 ? 0 : (iy >= G->ny ? G->ny - 1 : iy);
        iz = iz < 0 ? 0 : (iz >= G->nz ? G->nz - 1 : iz);
        G->cell_of[i] = (iz * G->ny + iy) * G->nx + ix;
    }
#ifdef _OPENMP
    int nt = cdlab_threads();
    if (nt >= BIN_RANGES_MIN_THREADS && n > CDLAB_PARALLEL_MIN) {
        bin_by_ranges(G, n, ncell, nt);
        return CDLAB_OK;
    }
#endif
    bin_stable(G, n, ncell);
    return CDLAB_OK;
}

void cells_free(cells *G)
{
    free(G->start);
    free(G->order);
    free(G->cell_of);
    free(G->found);
    free(G->cx);
    free(G->cr);
    free(G->cid);
    free(G->cfrozen);
    for (int q = 0; q < G->n_share; q++)
        free(G->part[q]);
    free(G->part);
    free(G->part_n);
    free(G->part_cap);
    memset(G, 0, sizeof *G);
}

#include "cells.h"

#include "grow.h"
#include "parallel.h"

#include <stdlib.h>
#include <string.h>

/* The grid is capped at this many cells per particle (plus a constant): a sparse system in a
 * large box then gets bigger cells rather than a huge empty grid. */
#define CELLS_MAX_PER_PARTICLE 4

status cells_build(cells *G, const particles *P, double h_min, diag *err)
{
    int n = P->n;
    vec3 lo = v3(INFINITY, INFINITY, INFINITY), hi = v3(-INFINITY, -INFINITY, -INFINITY);
    for (int i = 0; i < n; i++) {
        vec3 x = P->x[i];
        if (!(isfinite(x.x) && isfinite(x.y) && isfinite(x.z)))
            return diag_set(err, CDLAB_ERR_NUMERIC, "particle %d has a non-finite position",
                            P->id[i]);
        lo = v3(fmin(lo.x, x.x), fmin(lo.y, x.y), fmin(lo.z, x.z));
        hi = v3(fmax(hi.x, x.x), fmax(hi.y, x.y), fmax(hi.z, x.z));
    }
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
    memset(G->start, 0, (size_t)(ncell + 1) * sizeof *G->start);
    CDLAB_PARALLEL_FOR
    for (int i = 0; i < n; i++) {
        /* positions are wrapped along periodic axes; the clamps only catch rounding */
        int ix = (int)((P->x[i].x - lo.x) / G->h.x), iy = (int)((P->x[i].y - lo.y) / G->h.y),
            iz = (int)((P->x[i].z - lo.z) / G->h.z);
        ix = ix < 0 ? 0 : (ix >= G->nx ? G->nx - 1 : ix);
        iy = iy < 0 ? 0 : (iy >= G->ny ? G->ny - 1 : iy);
        iz = iz < 0 ? 0 : (iz >= G->nz ? G->nz - 1 : iz);
        G->cell_of[i] = (iz * G->ny + iy) * G->nx + ix;
    }
    for (int i = 0; i < n; i++)
        G->start[G->cell_of[i] + 1]++;
    for (int c = 0; c < ncell; c++)
        G->start[c + 1] += G->start[c];
    /* Stable fill: cells keep particles in index order, so detection is deterministic. */
    for (int i = 0; i < n; i++)
        G->order[G->start[G->cell_of[i]]++] = i;
    for (int c = ncell; c > 0; c--)
        G->start[c] = G->start[c - 1];
    G->start[0] = 0;
    return CDLAB_OK;
}

void cells_free(cells *G)
{
    free(G->start);
    free(G->order);
    free(G->cell_of);
    free(G->found);
    for (int q = 0; q < G->n_share; q++)
        free(G->part[q]);
    free(G->part);
    free(G->part_n);
    free(G->part_cap);
    memset(G, 0, sizeof *G);
}

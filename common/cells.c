#include "cells.h"

#include "grow.h"

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
    double h = h_min > 0.0 ? h_min : 1.0;
    double max_cells = (double)CELLS_MAX_PER_PARTICLE * n + 64.0;
    for (;;) {
        double cx = floor((hi.x - lo.x) / h) + 1, cy = floor((hi.y - lo.y) / h) + 1,
               cz = floor((hi.z - lo.z) / h) + 1;
        if (cx * cy * cz <= max_cells) {
            G->nx = (int)cx;
            G->ny = (int)cy;
            G->nz = (int)cz;
            break;
        }
        h *= 1.5;
    }
    G->h = h;
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
    for (int i = 0; i < n; i++) {
        int ix = (int)((P->x[i].x - lo.x) / h), iy = (int)((P->x[i].y - lo.y) / h),
            iz = (int)((P->x[i].z - lo.z) / h);
        if (ix >= G->nx) ix = G->nx - 1;
        if (iy >= G->ny) iy = G->ny - 1;
        if (iz >= G->nz) iz = G->nz - 1;
        int c = (iz * G->ny + iy) * G->nx + ix;
        G->cell_of[i] = c;
        G->start[c + 1]++;
    }
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
    memset(G, 0, sizeof *G);
}

/* Uniform cell list (linked cells) for contact detection: particles are binned by a counting
 * sort into cells of side >= (largest diameter + detection gap), so that every candidate
 * pair lies in the same or an adjacent cell. Along a periodic axis the grid spans the box
 * exactly (an integer number of cells) and neighbouring cells wrap around. */
#ifndef CDLAB_CELLS_H
#define CDLAB_CELLS_H

#include "particles.h"

typedef struct cells {
    int nx, ny, nz;  /* cell counts per axis */
    vec3 h;          /* cell sides */
    int periodic[3]; /* wrap neighbours along this axis */
    vec3 lo;         /* lower corner of the grid */
    int *start;      /* start[c] .. start[c+1]-1 index into order[] for cell c; size ncell+1 */
    int *order;      /* particle indices sorted by cell */
    int *cell_of;    /* cell of each particle */
    int *found;      /* contacts_find_pairs' scratch: pairs found per particle, then offsets */
    /* contacts_find_pairs' shares' lists of pairs (n_share of them; part_n pairs in each, room
     * for part_cap); with keep_shares (a grid searched every step: CD) kept from one search to
     * the next so that they are not grown and faulted in again every time, else given back as
     * they are copied (the DEM list's rebuild: a lower peak) */
    struct pair_ref **part;
    int *part_n, *part_cap, n_share, keep_shares;
    /* with keep_shares: the positions, radii, ids and frozen flags in cell order (copy[k] of
     * particle order[k]), which contacts_find_pairs reads instead of the particles' arrays */
    vec3 *cx;
    double *cr;
    int *cid;
    unsigned char *cfrozen;
    int ncell_cap, order_cap, cell_of_cap, found_cap, cx_cap, cr_cap, cid_cap, cfrozen_cap;
} cells;

/* Bins the particles; h_min is the smallest admissible cell side. Grows storage
 * geometrically, so it allocates nothing once the sizes have settled. */
status cells_build(cells *G, const particles *P, double h_min, diag *err);
void cells_free(cells *G);

#endif

/* Domain decomposition by recursive coordinate bisection (RCB), for distributed runs: the
 * simulation box is cut into P boxes, one per rank, balanced by the particles' weights (DEM: one
 * per particle; CD: its contacts). Any P: a node with p parts gives floor(p/2) to its lower side.
 * Each cut is perpendicular to the longest extent of its points and lies half-way between two
 * distinct coordinates, so no particle sits on a cut (on a lattice the balance is then the best
 * the lattice planes allow). Periodic axes: the boxes tile the period; open axes: the outer boxes
 * extend to infinity, so every position has an owner.
 *
 * A pure function of the positions and weights (ties broken by index): every rank computes the
 * same decomposition from the same data. */
#ifndef CDLAB_DECOMP_H
#define CDLAB_DECOMP_H

#include "particles.h"
#include "status.h"

typedef struct decomp {
    int parts;
    /* the tree, node 0 the root: node k cuts along axis[k] at cut[k]; its children child[2k]
     * (coordinate < cut) and child[2k+1] are nodes (>= 0) or parts (-1 - part) */
    int nodes;
    int *axis, *child;
    double *cut;
    vec3 *lo, *hi; /* each part's box */
    pbox box;      /* the periodic axes and their period */
} decomp;

/* Cuts the n positions x (weights w, NULL: 1 each; dimension dim: the axes that may be cut) into
 * parts boxes. Positions must lie in the periodic box along its periodic axes (wrapped). */
status decomp_build(decomp *D, int parts, const vec3 *x, const double *w, int n, int dim,
                    const pbox *box, diag *err);
/* The decomposition decomp_build makes of every rank's points together (collective: each rank
 * gives its own points; any order, any share), without gathering them: counts, weights and
 * extents reduced node by node, each cut found by bisection over the key values (about 70
 * reductions a node). The weights must be integers >= 1 (NULL: 1 each), so that every sum is
 * exact; the same tree, bit for bit, on every rank. */
status decomp_build_shared(decomp *D, int parts, const vec3 *x, const double *w, int n, int dim,
                           const pbox *box, diag *err);
void decomp_free(decomp *D);
/* The part whose box holds x (x wrapped along the periodic axes). */
int decomp_owner(const decomp *D, vec3 x);
/* The parts whose boxes come within range of x along every axis (the cube of half-width range
 * about x or one of its periodic images overlaps the box), each once, in increasing order, into
 * out (room for D->parts); returns their number. range must be below half of every period. */
int decomp_near(const decomp *D, vec3 x, double range, int *out);

/* [parallel] (docs/config.md): when the boxes are cut afresh. */
typedef struct parallel_params {
    double rebalance;     /* largest load / mean load above which the cuts are remade */
    long rebalance_every; /* remake them every this many redistributions (0: never forced) */
} parallel_params;
struct config;
status parallel_read(struct config *c, parallel_params *par, diag *err);
/* Remake the cuts now? Collective (the loads are reduced over the ranks): this rank's load, the
 * count of redistributions done so far. */
int parallel_rebalance_due(const parallel_params *par, double load, long redistributions);
#endif

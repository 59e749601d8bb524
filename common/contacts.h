/* Contact candidates and their geometry, shared by every engine.
 *
 * A candidate is a pair (body 0, body 1) whose gap is below the detection threshold; body 1 is
 * always a particle, body 0 a particle or a wall. Conventions of Unger & Kertesz sec. 2.4:
 * the normal n points from body 0 to body 1, the gap g is negative for an overlap, l0 and l1 are
 * the lever arms from the centres to the contact point, and the force R acts on body 1 (its
 * reaction -R on body 0).
 *
 * Persistence: the list is kept sorted by a pair key built from stable particle ids (and wall
 * indices). After each detection the new list is merged with the previous one, so a pair that
 * stays a candidate keeps its force R into the next step (the warm start). */
#ifndef CDLAB_CONTACTS_H
#define CDLAB_CONTACTS_H

#include "cells.h"
#include "particles.h"
#include "prefetch.h"
#include "walls.h"

#include <stdint.h>

/* 128 bytes, two cache lines (the list is allocated 64-byte aligned): everything a sweep update
 * reads. The lever arms lie along the normal (spheres and disks; a wall's contact point is on
 * its surface), so only their lengths are stored: l0 = a0 n, l1 = -a1 n (contact_l0/l1). The
 * DEM engine keeps its own pair store (cd/dem/dem.h). */
typedef struct contact {
    int i;        /* body 0: particle index (>= 0), or wall w encoded as -1 - w */
    int j;        /* body 1: particle index */
    double gap;   /* gap, negative = overlap */
    vec3 R;       /* contact force acting on body 1 */
    double mu;    /* friction coefficient */
    uint64_t key; /* pair key from stable ids, the sort order of the list */
    /* -- 56 bytes -- */
    vec3 n;     /* unit normal from body 0 to body 1 */
    double a0;  /* lever arm length of body 0 (centre -> contact point along n); 0 for walls */
    double a1;  /* lever arm length of body 1 (along -n) */
    double m_n; /* effective normal mass, eq. (17) */
    double m_t; /* effective tangential mass, eq. (18); 0 in dimension 1 (no tangential force) */
} __attribute__((aligned(64))) contact;

/* A candidate pair found by contacts_find_pairs, in key order. */
typedef struct pair_ref {
    uint64_t key;
    int i, j; /* body 0 (particle, or wall w as -1 - w), body 1 */
} pair_ref;
/* Sorts a[0..n) by key, in place (no second array). */
void contacts_sort_refs(pair_ref *a, int n);
/* The same with a limit on the quicksort's depth, past which it sorts by heapsort (the sort
 * above: 2 log2 n; tests: 0 and 1 reach the heapsort). */
void contacts_sort_refs_depth(pair_ref *a, int n, int depth);

/* A force carried over to the next detection (warm start): the pair's key and its force. */
typedef struct contact_carry {
    uint64_t key;
    vec3 R;
} contact_carry;

typedef struct contact_list {
    contact *c;
    int n, cap;
    /* the previous list's forces that are not zero, in key order (warm start): one list
     * buffer, not two, and 32 bytes per carried force instead of a 128-byte record per pair */
    contact_carry *carry;
    int ncarry, carrycap;
    pair_ref *refs; /* the candidates of the last detection */
    int refcap;
    double *ov; /* scratch of the diagnostics: a row of the contacts' overlaps */
    int ovcap;
    cells grid;
} contact_list;

typedef struct detect_params {
    double gap;     /* candidate when gap < this threshold (>= 0) */
    double mu;      /* friction of particle-particle contacts */
    int warm_start; /* carry forces over from the previous step */
} detect_params;

/* Every pair whose gap is below dp->gap (two frozen particles excepted), sorted by key, into
 * *refs (grown geometrically: *cap). The candidates of contacts_detect, without their
 * records: the DEM neighbour list keeps its own compact pair store. */
status contacts_find_pairs(cells *G, const particles *P, const wall *walls, int n_walls, double gap,
                           pair_ref **refs, int *n, int *cap, diag *err);

/* The same in parts, on one thread, for a check of a start (scene.c) that must not list all
 * N^2 / 2 pairs of a system piled up on itself: contacts_search_start builds the grid and lists
 * the walls' pairs into *refs (*n of them); then each contacts_search_range appends the pairs of
 * the particles at positions k0, k0 + 1, ... of the grid's cell order, each particle's together,
 * unsorted, and stops after the particle that takes *n past limit, or at the last: *next = the
 * position to go on from (P->n at the end). */
status contacts_search_start(cells *G, const particles *P, const wall *walls, int n_walls,
                             double gap, pair_ref **refs, int *n, int *cap, diag *err);
status contacts_search_range(cells *G, const particles *P, int n_walls, double gap, int k0,
                             int limit, pair_ref **refs, int *n, int *cap, int *next, diag *err);
/* The gap of a listed pair, as contact_geometry computes it. */
double contact_ref_gap(const pair_ref *r, const particles *P, const wall *walls);

status contacts_detect(contact_list *L, const particles *P, const wall *walls, int n_walls,
                       const detect_params *dp, diag *err);
/* Recomputes n, gap, lever arms and effective masses of contact c from current positions. */
void contact_geometry(contact *c, const particles *P, const wall *walls);
/* Prefetches what contact_geometry reads of a contact's body 1 (j >= 0). In list (key) order
 * body 0 goes through the storage order while body 1 is anywhere: loops over the list call it a
 * few contacts ahead (CONTACT_GEOMETRY_AHEAD). */
#define CONTACT_GEOMETRY_AHEAD 8
static inline void contact_geometry_prefetch(int j, const particles *P)
{
    prefetch_line(&P->x[j]);
    prefetch_line(&P->r[j]);
    prefetch_line(&P->inv_m[j]);
    prefetch_line(&P->inv_I[j]);
}
void contacts_free(contact_list *L);
/* Sort key of a pair (stable ids; see contacts_detect). */
uint64_t contact_pair_key(int i, int j, const particles *P, int n_walls);
/* The same key from the bodies' ids (body 0: a particle id, or a wall code -1 - w), for
 * records that travel between ranks. */
uint64_t contact_key_of_ids(long b0, long b1, int n_walls);

/* Normal from body 0 to body 1, gap and lever arms of a contact: l0 = a0 n, l1 = -a1 n. */
typedef struct contact_frame {
    vec3 n, l0, l1;
    double gap, a0, a1;
} contact_frame;

/* Frame of two particles of radii ri, rj at separation d = x_j - x_i (minimum image). */
static inline contact_frame contact_frame_particles(vec3 d, double ri, double rj)
{
    contact_frame f;
    double dist = v3_norm(d);
    /* Coincident centres have no normal; pick x so that the contact stays defined. */
    f.n = dist > 0.0 ? v3_scale(d, 1.0 / dist) : v3(1.0, 0.0, 0.0);
    f.gap = dist - ri - rj;
    /* The contact point: the middle of the gap, open or overlapping, so that l0 - l1 =
     * x_j - x_i exactly (a0 + a1 = |x_j - x_i|). Then a tangential impulse dP at the contact
     * gives the pair the torques l0 x (-dP) + l1 x dP = -(x_j - x_i) x dP, which cancel the
     * moment (x_j - x_i) x dP of the two forces about any point: the pair's angular momentum
     * is conserved. Lever arms at the two surfaces (a0 = ri, a1 = rj) while the gap is open
     * left a net torque g n x dP for every tangential impulse on an open contact (measured:
     * 0.59% of the angular momentum of a frictional glancing collision lost at dt = 0.05), and
     * in an overlapping pair in rigid rotation they saw a false relative movement
     * (phi x overlap n), which broke the objectivity test (37% stress error after a 90 deg
     * rotation). The gap g itself (hence the shock law's g_pos) does not depend on this
     * choice. */
    double half = 0.5 * f.gap;
    f.a0 = ri + half;
    f.a1 = rj + half;
    f.l0 = v3_scale(f.n, f.a0);
    f.l1 = v3_scale(f.n, -f.a1);
    return f;
}

/* Frame of wall W (a piston at position s) and a particle at xj of radius rj; l0 = 0. */
contact_frame contact_frame_wall(const wall *W, double s, vec3 xj, double rj);

static inline int contact_wall_index(const contact *c)
{
    return -1 - c->i;
}

/* Lever arms: from body 0's centre (0 for a wall) and body 1's centre to the contact point. */
static inline vec3 contact_l0(const contact *c)
{
    return v3_scale(c->n, c->a0);
}
static inline vec3 contact_l1(const contact *c)
{
    return v3_scale(c->n, -c->a1);
}

#endif

/* The stages of the DEM step and what they share (internal to cd/dem): the blocks of the pass,
 * a pair's kinematics and frames, the delivery of its force to the particles, the dashpots,
 * and the functions one stage's file calls in another's. Each stage is a file named for what
 * it does: dem_solver.c (buffers), dem_writeback.c (the write-back plan), dem_list.c (the
 * neighbour list), dem_pass.c (the pair pass, with dem_pass4.h), dem_integrate.c (velocity
 * Verlet), dem_drive.c (the kinematic drive), dem_ledger.c (energies, stress), dem_start.c
 * (start and resume). */
#ifndef CDLAB_DEM_STAGE_H
#define CDLAB_DEM_STAGE_H

#include "dem/dem.h"
#include "dem/dem_bond.h"
#include "dem/dem_contact_law.h"
#include "engine/equiv.h"

#include "grow.h"
#include "parallel.h"
#include "prefetch.h"
#include "xsum.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Block size of the deterministic reductions (fixed: never derived from the thread count). The
 * blocks carry the step's statistics (counts, the overlap sum, maxima), which are the same bits
 * for any thread count; the energy ledger's sums are exact (xsum) and carried apart. */
#define DEM_BLOCK 1024

enum { BLK_ACTIVE, BLK_OVERLAP, BLK_SLIDING, BLK_MAX_OVERLAP, BLK_BROKEN, DEM_NSUM };

static inline int n_blocks(int n)
{
    return (n + DEM_BLOCK - 1) / DEM_BLOCK;
}

/* Sums column q of the block results in block order. */
static inline double block_sum(const dem_solver *S, int nb, int q)
{
    double t = 0.0;
    for (int b = 0; b < nb; b++)
        t += S->blk[DEM_NSUM * b + q];
    return t;
}

/* The particles this process integrates: all of them, or in a distributed run its own
 * [0, n_owned) (the rest are halo copies, moved by their owners). */
static inline int n_own(const world *W, const dem_solver *S)
{
    return S->dist ? S->n_owned : W->P.n;
}

/* Particle i's translation and rotation in the step (see dem_solver: moves). v3_scale is the
 * product kick_drift moved the particle by, bit for bit. */
static inline vec3 move_du(const world *W, const dem_solver *S, int i)
{
    return S->moves == DEM_MOVES_VELOCITY ? v3_scale(W->P.v[i], W->dt)
           : S->moves == DEM_MOVES_GIVEN  ? S->du[i]
                                          : v3_zero();
}

static inline vec3 move_dth(const world *W, const dem_solver *S, int i)
{
    return S->moves == DEM_MOVES_VELOCITY ? v3_scale(W->P.w[i], W->dt)
           : S->moves == DEM_MOVES_GIVEN  ? S->dth[i]
                                          : v3_zero();
}

/* Movement of body 0 (a particle, a piston, or a fixed wall) in the step. */
static inline void body0_move(const world *W, const dem_solver *S, int i, vec3 *du, vec3 *dth)
{
    if (i >= 0) {
        *du = move_du(W, S, i);
        *dth = move_dth(W, S, i);
        return;
    }
    const wall *w = &W->walls[-1 - i];
    *du = w->kind == WALL_PISTON ? v3_scale(w->n, S->piston_ds[-1 - i]) : v3_zero();
    *dth = v3_zero();
}

/* Relative movement of q with respect to p at the contact (Kuhn et al. eq. 5) from their
 * translations and rotations, with the lever arms l0 (of p) and l1 (of q). */
static inline vec3 movement_at_contact(vec3 du_p, vec3 dth_p, vec3 du_q, vec3 dth_q, vec3 l0,
                                       vec3 l1)
{
    return v3_add(v3_sub(du_q, du_p), v3_sub(v3_cross(dth_q, l1), v3_cross(dth_p, l0)));
}

/* The same for the step's movements of the pair (i, j). */
static inline vec3 relative_movement(const world *W, const dem_solver *S, int i, int j, vec3 l0,
                                     vec3 l1)
{
    vec3 du_p, dth_p;
    body0_move(W, S, i, &du_p, &dth_p);
    return movement_at_contact(du_p, dth_p, move_du(W, S, j), move_dth(W, S, j), l0, l1);
}

/* The lever arms of LAMMPS's granular pair styles and walls: the radii along the normal (the
 * contact point on each body's surface), not the middle of the overlap. a0 = 0 for a wall. */
static inline contact_frame radius_arms(contact_frame f, double a0, double a1)
{
    f.a0 = a0;
    f.a1 = a1;
    f.l0 = v3_scale(f.n, a0);
    f.l1 = v3_scale(f.n, -a1);
    return f;
}

/* Frame of two particles at separation d: with their radii, or for deformable discs with
 * their ellipses' reaches along the line of centres (a law whose lever arms are the radii:
 * LAMMPS's). */
static inline contact_frame frame_particles(const world *W, const dem_solver *S, int i, int j,
                                            vec3 d)
{
    const particles *P = &W->P;
    if (S->radius_arms)
        return radius_arms(contact_frame_particles(d, P->r[i], P->r[j]), P->r[i], P->r[j]);
    if (!S->ell)
        return contact_frame_particles(d, P->r[i], P->r[j]);
    double dist = v3_norm(d);
    vec3 n = dist > 0.0 ? v3_scale(d, 1.0 / dist) : v3(1.0, 0.0, 0.0);
    return contact_frame_particles(d, dem_deform_reach(&S->ell[i], n),
                                   dem_deform_reach(&S->ell[j], n));
}

/* Frame of wall w (at position s) and particle j at x: with its radius, or for a deformable
 * disc with its reach along the wall's normal there (a law whose lever arms are the radii: the
 * radius). */
static inline contact_frame frame_wall(const dem_solver *S, const wall *w, double s, int j, vec3 x,
                                       double r)
{
    contact_frame f = contact_frame_wall(w, s, x, r);
    if (S->radius_arms)
        return radius_arms(f, 0.0, r);
    return S->ell ? contact_frame_wall(w, s, x, dem_deform_reach(&S->ell[j], f.n)) : f;
}

/* Frame of pair (i, j) now; for a particle pair d is the minimum-image separation of now. */
static inline contact_frame frame_now(const world *W, const dem_solver *S, int i, int j, vec3 d)
{
    const particles *P = &W->P;
    if (i >= 0)
        return frame_particles(W, S, i, j, d);
    const wall *w = &W->walls[-1 - i];
    return frame_wall(S, w, w->s, j, P->x[j], P->r[j]);
}

/* Frame of pair (i, j) at the start of the step just moved: positions (and piston) minus the
 * step's movements (deformable discs: with the same shapes, those of the step's start). */
static inline contact_frame frame_start(const world *W, const dem_solver *S, int i, int j, vec3 d)
{
    const particles *P = &W->P;
    if (i >= 0)
        return frame_particles(W, S, i, j, v3_sub(d, v3_sub(move_du(W, S, j), move_du(W, S, i))));
    const wall *w = &W->walls[-1 - i];
    double ds = w->kind == WALL_PISTON ? S->piston_ds[-1 - i] : 0.0;
    return frame_wall(S, w, w->s - ds, j, v3_sub(P->x[j], move_du(W, S, j)), P->r[j]);
}

static inline vec3 pair_separation(const world *W, int i, int j)
{
    return i >= 0 ? pbox_delta(&W->P.box, W->P.x[i], W->P.x[j]) : v3_zero();
}

/* Effective mass m_eff of a contact for the dashpots: m_i m_j/(m_i + m_j), with a fixed wall
 * or a frozen particle infinitely heavy and a piston of its own mass. */
static inline double dashpot_mass(const world *W, int i, int j)
{
    const particles *P = &W->P;
    double wj = P->inv_m[j], wi = 0.0;
    if (i >= 0)
        wi = P->inv_m[i];
    else if (W->walls[-1 - i].kind == WALL_PISTON)
        wi = W->walls[-1 - i].inv_mass;
    double w = wi + wj;
    return w > 0.0 ? 1.0 / w : 0.0;
}

static inline int nonzero(vec3 a)
{
    return a.x != 0.0 || a.y != 0.0 || a.z != 0.0;
}

/* A pair's statistics of the step into acc: active (its force is not zero) with its overlap,
 * sliding, and the largest overlap. */
static inline void tally_pair(double *acc, int active, double zeta, int sliding)
{
    if (active) {
        acc[BLK_ACTIVE] += 1.0;
        acc[BLK_OVERLAP] += num_max(zeta, 0.0);
    }
    acc[BLK_SLIDING] += sliding;
    acc[BLK_MAX_OVERLAP] = num_max(acc[BLK_MAX_OVERLAP], zeta);
}

/* Does this process count pair c in the sums of energies and statistics? In a distributed run
 * a pair across a boundary is computed by both ranks and counted by the owner of body 1. */
static inline int counted(const dem_solver *S, const dem_pair *c)
{
    return !S->dist || c->j < S->n_owned;
}

/* The intact bond of pair k, or NULL. */
static inline dem_bond_state *bond_of_pair(const dem_solver *S, int k)
{
    if (!S->bond_of || k >= S->bonds_linked || S->bond_of[k] < 0)
        return NULL;
    dem_bond_state *b = &S->bond[S->bond_of[k]];
    return b->intact ? b : NULL;
}

/* The second half of the work of pair c's last dashpot force (see damping_work_before), with
 * the frame f0 of the step's start. */
static inline double dashpot_second_half(const world *W, const dem_solver *S, const dem_pair *c,
                                         contact_frame f0)
{
    return 0.5 * v3_dot(c->fd, relative_movement(W, S, c->i, c->j, f0.l0, f0.l1));
}

/* The first side row whose pair is k or after it (nside: none). */
static inline int side_row_from(const dem_solver *S, int k)
{
    int lo = 0, hi = S->nside;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (S->side_pair[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Pair k's side row, or -1 (its list indexed). */
static inline int side_row(const dem_solver *S, int k)
{
    if (k < S->nside && S->side_pair[k] == k) /* every pair up to k has one (a gathered view) */
        return k;
    int r = side_row_from(S, k);
    return S->side_pair[r] == k ? r : -1;
}

/* Pair k's contact force on body 1 (R = -f, f the force on body 0) and its torques on both
 * bodies (frame f1 of now), and for deformable discs its terms of both particles' stresses
 * (eq. 12, lever arms to the contact point): added to the particles that sum in this pair's
 * block (dem_solver, write-back), and kept in the pair's side row for the others, the pistons
 * and the output. Bit for bit the former gather's sums: body 1 receives R and l1 x R, body 0
 * -R and -(l0 x R), in the pairs' key order. *cur: the pass's cursor over the side rows (the
 * first row whose pair is not before the last pair delivered; pairs come in list order). */
static inline __attribute__((always_inline)) void deliver_terms(dem_solver *S, int *cur, int nown,
                                                                int k, int i, int j, vec3 R,
                                                                vec3 t1, vec3 t0, const double *g)
{
    while (S->side_pair[*cur] < k) /* INT_MAX after the last row */
        (*cur)++;
    /* a particle of pair k with a block has it in k's block (all its pairs are there) */
    int row = S->side_pair[*cur] == k ? *cur : -1;
    if (row >= 0) {
        S->side[3 * row] = R;
        S->side[3 * row + 1] = t1;
        S->side[3 * row + 2] = t0;
        if (S->ell)
            memcpy(&S->side_sig[6 * row], g, 6 * sizeof *g);
    }
    if (j < nown && S->home[j] >= 0) {
        S->F[j] = v3_add(S->F[j], R);
        S->T[j] = v3_add(S->T[j], t1);
        if (S->ell)
            for (int q = 0; q < 3; q++)
                S->sig[3 * j + q] += g[q];
    }
    if (i >= 0 && i < nown && S->home[i] >= 0) {
        S->F[i] = v3_sub(S->F[i], R);
        S->T[i] = v3_sub(S->T[i], t0);
        if (S->ell)
            for (int q = 0; q < 3; q++)
                S->sig[3 * i + q] += g[3 + q];
    }
}

static inline __attribute__((always_inline)) void deliver(dem_solver *S, int *cur, int nown, int k,
                                                          int i, int j, vec3 f, contact_frame f1)
{
    vec3 R = v3_scale(f, -1.0), t1 = v3_cross(f1.l1, R), t0 = v3_cross(f1.l0, R);
    double g[6];
    if (S->ell) {
        dem_deform_term(f1.l1, R, g);
        dem_deform_term(f1.l0, f, g + 3);
    }
    deliver_terms(S, cur, nown, k, i, j, R, t1, t0, g);
}

/* The dashpot constants c_n, c_t of pair (i, j) from dem.damping (a fraction of
 * c_cr = 2 sqrt(m_eff k) is Rojek et al.'s eq. 11). sliding: the pair slides in the step
 * (dem.damping_tangential_sliding = false then drops c_t). */
static inline void dashpot_constants(const world *W, const dem_params *p, int i, int j, int sliding,
                                     double *cn, double *ct)
{
    *cn = p->damp_n;
    *ct = sliding && p->damp_t_stick_only ? 0.0 : p->damp_t;
    if (p->damp_rate) {
        double m = dashpot_mass(W, i, j);
        *cn *= m;
        *ct *= m;
    } else if (!p->damp_absolute) {
        double m = dashpot_mass(W, i, j);
        *cn *= 2.0 * sqrt(m * p->law.k_n);
        *ct *= 2.0 * sqrt(m * p->law.k_t);
    }
}

/* Dashpot force on body 0 of pair (i, j) in frame f1 (Kuhn et al. end of sec. 2, Cundall &
 * Strack contact damping): (c_n du_n n + c_t du_t)/dt from the step's relative movement, c
 * from dashpot_constants; the first half of its work is added to *work (see
 * damping_work_before for the second). */
static inline vec3 dashpot_force(const world *W, const dem_solver *S, const dem_params *p, int i,
                                 int j, contact_frame f1, int sliding, double *work)
{
    double cn, ct;
    dashpot_constants(W, p, i, j, sliding, &cn, &ct);
    vec3 du_rel = relative_movement(W, S, i, j, f1.l0, f1.l1);
    double dun = v3_dot(du_rel, f1.n);
    vec3 dut = v3_axpy(-dun, f1.n, du_rel);
    vec3 fd = v3_scale(v3_axpy(cn * dun, f1.n, v3_scale(dut, ct)), 1.0 / W->dt);
    *work += 0.5 * v3_dot(fd, du_rel);
    return fd;
}

/* Total non-contact force on particle i at a time when the fraction `loaded` of the loads acts
 * (world_load_factor: gravity and loads). */
static inline vec3 dem_external_force(const world *W, int i, double loaded)
{
    vec3 f = v3_scale(W->gravity, W->P.m[i]);
    if (loaded > 0.0)
        f = v3_axpy(loaded, W->P.f_ext[i], f);
    return dof_project_lin(W->P.dimension, f);
}

/* Each thread's bins for the step's exact sums (the pass: friction and dashpots; the kick:
 * the external work), defined in dem_pass.c: zero from the thread's start and left zero by
 * every flush, so that no step zeroes their 33 kB. */
extern _Thread_local xsum_bins dem_step_bins[2];

/* ---- the stages' functions, by file ---- */
status dem_ensure(dem_solver *S, const world *W, const dem_params *p, diag *err);
status dem_ensure_blocks(dem_solver *S, int n, diag *err);
status dem_link_list_bonds(dem_solver *S, const world *W, diag *err);
status dem_index_list(dem_solver *S, const world *W, diag *err);
status dem_grow_pairs(dem_pair **p, int *cap, int need, diag *err);
status dem_build_writeback(dem_solver *S, const world *W, diag *err);
void dem_damping_work_before(world *W, dem_solver *S);
status dem_deform_update(world *W, dem_solver *S, const dem_params *p, double t, diag *err);
void dem_compute_forces(world *W, dem_solver *S, const dem_params *p, int book, dem_stats *st);
status dem_rebuild(world *W, dem_solver *S, const dem_params *p, diag *err);
status dem_rebuild_list(world *W, dem_solver *S, diag *err);
status dem_contacts_and_forces(world *W, dem_solver *S, const dem_params *p, double pmax, double t,
                               dem_stats *st, diag *err);
vec3 dem_remade_force(const world *W, const dem_solver *S, int k);
void dem_remake_side_rows(const world *W, dem_solver *S);
status dem_make_bonds(world *W, dem_solver *S, const dem_params *p, diag *err);
status dem_check_overlaps(const world *W, dem_solver *S, const dem_params *p, const dem_stats *st,
                          diag *err);

#endif

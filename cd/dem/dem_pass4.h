/* Four pairs at a time (included by dem_pass.c alone): the lanes of vec3x4.h through the
 * common case of the pair pass, each lane with the scalar law's operations in their order (the
 * same bits: tools/identity.py and unit_pair_lanes_match_one_by_one guard them). */
#ifndef CDLAB_DEM_PASS4_H
#define CDLAB_DEM_PASS4_H

#include "dem/dem_contact_law4.h"
#include "dem/dem_stage.h"
#include "vec3x4.h"

/* Four pairs at once (issue 19): the common case of contact_force, a pair of rigid particles
 * touching before and after the step and twirled by less than 1e-2 rad, made for four pairs in
 * the lanes of vec3x4.h, each lane with contact_force's operations in their order (the same
 * bits: tools/identity.py); the conventional law's sliding pairs in the same lanes, the Kuhn
 * law's with the chunk's other sliding pairs, four at a time (slides4). A lane
 * outside that case (apart now, new, a larger twirl) is marked and its pair goes through
 * contact_force after all; nothing is written here. What contact_force would have written and
 * added, for the pass to apply in list order: */
/* live pairs per round of pairs4, slides4 and the in-order apply. Chute, the pass timed step by
 * step with the two sizes on alternate steps: 128 against 64, 1 thread -1.2 to -1.8%, 2 threads
 * -0.9 to -1.4% (more sliding pairs per round fill slides4's groups); 256 against 128 -0.6%,
 * with twice the stack (94 kB of records). */
#define QUAD_CHUNK 128

typedef struct quad_out {
    vec3 R, t1, t0; /* force on body 1, its torques on body 1 and body 0 */
    vec3 fd, ft;    /* the pair's new dashpot and tangential forces */
    double zeta;    /* its new overlap */
    double diss[2]; /* friction and dashpot work of the step */
    int ok;         /* this lane is the common case */
    int sliding;    /* it reached the friction limit in the step */
    int active;     /* its force is not zero */
    int slide;      /* a sliding pair of the Kuhn law, left to slides4 (R, t1, t0, ft, diss[0],
                       sliding and active not made yet; its slide_in beside it) */
} quad_out;

/* contact_frame_particles, four at a time: the normal, the lever arms l0, l1 and the gap;
 * radius: the lever arms of radius_arms (the radii) instead of the middle of the gap */
static inline __attribute__((always_inline)) void frame4(vv3 d, v4d ri, v4d rj, int radius, vv3 *n,
                                                         vv3 *l0, vv3 *l1, v4d *gap)
{
    const v4d zero = {0.0, 0.0, 0.0, 0.0}, one = zero + 1.0;
    v4d dist = v4_sqrt(vv3_dot(d, d));
    v4m pos = dist > 0.0;
    *n = VV3_SELECT(pos, vv3_scale(d, one / dist), ((vv3){one, zero, zero}));
    *gap = dist - ri - rj;
    if (radius) {
        *l0 = vv3_scale(*n, ri);
        *l1 = vv3_scale(*n, -rj);
        return;
    }
    v4d half = 0.5 * *gap;
    *l0 = vv3_scale(*n, ri + half);
    *l1 = vv3_scale(*n, -(rj + half));
}

/* relative_movement for particles: du_j - du_i + dth_j x l1 - dth_i x l0 */
static inline __attribute__((always_inline)) vv3 relmove4(vv3 dui, vv3 duj, vv3 dthi, vv3 dthj,
                                                          vv3 l0, vv3 l1)
{
    return vv3_add(vv3_sub(duj, dui), vv3_sub(vv3_cross(dthj, l1), vv3_cross(dthi, l0)));
}

/* move_du and move_dth of four particles (the products lane by lane: the same bits). */
static inline __attribute__((always_inline)) vv3
moves4(const world *W, const dem_solver *S, const vec3 *vel, const vec3 *given, const int *idx)
{
    if (S->moves == DEM_MOVES_GIVEN)
        return vv3_gather(given, idx);
    if (S->moves == DEM_MOVES_ZERO)
        return (vv3){{0.0, 0.0, 0.0, 0.0}, {0.0, 0.0, 0.0, 0.0}, {0.0, 0.0, 0.0, 0.0}};
    v4d dt = {W->dt, W->dt, W->dt, W->dt};
    return vv3_scale(vv3_gather(vel, idx), dt);
}

/* What pairs4 and lammps4 start from for the four pairs kk[0..3]: their bodies, last dashpot
 * and tangential forces and overlaps, radii and movements, and their frames of now and of the
 * step's start (frame4: contact_frame_particles; radius: the lever arms of radius_arms) from
 * the minimum-image separations. */
typedef struct quad_lanes {
    int ii[4], jj[4];
    vv3 fdo, fto;
    v4d zeta_old, ri, rj;
    vv3 dui, duj, dthi, dthj;
    vv3 n, l0, l1;    /* now */
    vv3 n0, l00, l01; /* at the step's start */
    v4d gap;
} quad_lanes;

static inline __attribute__((always_inline)) void
quad_begin(const world *W, const dem_solver *S, const int *kk, int radius, quad_lanes *q)
{
    const particles *P = &W->P;
    vv3 d;
    for (int l = 0; l < 4; l++) {
        const dem_pair *c = &S->pair[kk[l]];
        q->ii[l] = c->i;
        q->jj[l] = c->j;
        vec3 dl = pbox_delta(&P->box, P->x[c->i], P->x[c->j]);
        d.x[l] = dl.x;
        d.y[l] = dl.y;
        d.z[l] = dl.z;
        q->fdo.x[l] = c->fd.x;
        q->fdo.y[l] = c->fd.y;
        q->fdo.z[l] = c->fd.z;
        q->fto.x[l] = c->ft.x;
        q->fto.y[l] = c->ft.y;
        q->fto.z[l] = c->ft.z;
        q->zeta_old[l] = c->zeta;
    }
    q->ri = v4_gather(P->r, q->ii);
    q->rj = v4_gather(P->r, q->jj);
    q->dui = moves4(W, S, P->v, S->du, q->ii);
    q->duj = moves4(W, S, P->v, S->du, q->jj);
    q->dthi = moves4(W, S, P->w, S->dth, q->ii);
    q->dthj = moves4(W, S, P->w, S->dth, q->jj);
    v4d gap0;
    frame4(d, q->ri, q->rj, radius, &q->n, &q->l0, &q->l1, &q->gap);
    frame4(vv3_sub(d, vv3_sub(q->duj, q->dui)), q->ri, q->rj, radius, &q->n0, &q->l00, &q->l01,
           &gap0);
    (void)gap0;
}

/* dashpot_constants of four particle pairs (ii, jj), not sliding */
static inline __attribute__((always_inline)) void dashpot_constants4(const world *W,
                                                                     const dem_params *p,
                                                                     const int *ii, const int *jj,
                                                                     v4d *cn, v4d *ct)
{
    const v4d zero = {0.0, 0.0, 0.0, 0.0};
    *cn = zero + p->damp_n;
    *ct = zero + p->damp_t;
    if (p->damp_rate || !p->damp_absolute) {
        v4d w = v4_gather(W->P.inv_m, ii) + v4_gather(W->P.inv_m, jj);
        v4d m = V4_SELECT(w > 0.0, 1.0 / w, zero);
        if (p->damp_rate) {
            *cn *= m;
            *ct *= m;
        } else {
            *cn *= 2.0 * v4_sqrt(m * p->law.k_n);
            *ct *= 2.0 * v4_sqrt(m * p->law.k_t);
        }
    }
}

/* dashpot_second_half of four pairs (zero where the last dashpot force was zero), as the
 * dashpot work's first term of the step */
static inline __attribute__((always_inline)) v4d dashpot_second_half4(const quad_lanes *q)
{
    const v4d zero = {0.0, 0.0, 0.0, 0.0};
    v4m has = (q->fdo.x != 0.0) | (q->fdo.y != 0.0) | (q->fdo.z != 0.0);
    v4d sh = 0.5 * vv3_dot(q->fdo, relmove4(q->dui, q->duj, q->dthi, q->dthj, q->l00, q->l01));
    return V4_SELECT(has, zero + sh, zero);
}

/* Four pairs' results into o (quad_out): whether each lane is the pass's case (ok), the force f
 * on body 0 as the force on body 1 with its torques at the lever arms l0, l1, the dashpot and
 * tangential forces, the overlap, the step's friction and dashpot work, sliding. */
static inline __attribute__((always_inline)) void quad_store(quad_out *o, v4m ok, vv3 f, vv3 l0,
                                                             vv3 l1, vv3 fd, vv3 ft, v4d zeta,
                                                             v4d diss0, v4d diss1,
                                                             const int *sliding)
{
    const v4d zero = {0.0, 0.0, 0.0, 0.0};
    vv3 R = vv3_scale(f, zero - 1.0);
    vv3 t1 = vv3_cross(l1, R), t0 = vv3_cross(l0, R);
    v4m active = vv3_dot(f, f) > 0.0;
    for (int l = 0; l < 4; l++) {
        quad_out *q = &o[l];
        q->ok = ok[l] != 0;
        q->active = active[l] != 0;
        q->R = vv3_lane(R, l);
        q->t1 = vv3_lane(t1, l);
        q->t0 = vv3_lane(t0, l);
        q->fd = vv3_lane(fd, l);
        q->ft = vv3_lane(ft, l);
        q->zeta = zeta[l];
        q->diss[0] = diss0[l];
        q->diss[1] = diss1[l];
        q->sliding = sliding[l];
    }
}

/* What contact_force does after the law for a pair of pairs4 (lane q): its history, the
 * delivery, the statistics, the dissipation into diss. */
static inline __attribute__((always_inline)) void
apply4(dem_solver *S, int *cur, int nown, int k, const quad_out *q, double *acc, double diss[2])
{
    dem_pair *c = &S->pair[k];
    c->fd = q->fd;
    c->ft = q->ft;
    c->zeta = q->zeta;
    static const double no_stress[6]; /* rigid particles: no stress terms */
    deliver_terms(S, cur, nown, k, c->i, c->j, q->R, q->t1, q->t0, no_stress);
    diss[0] = q->diss[0];
    diss[1] = q->diss[1];
    tally_pair(acc, q->active, q->zeta, q->sliding);
}

#endif

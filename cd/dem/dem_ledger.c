/* The energy ledger (exact sums: the same bits for any thread and rank count) and the
 * Love-Weber stress of the pairs. */
#include "dem/dem_stage.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The pistons' kinetic energy (every rank of a distributed run moves every piston alike). */
static double piston_kinetic(const world *W)
{
    double kp = 0.0;
    for (int k = 0; k < W->n_walls; k++)
        if (W->walls[k].kind == WALL_PISTON)
            kp += 0.5 * W->walls[k].mass * W->walls[k].u * W->walls[k].u;
    return kp;
}

/* The elastic energy stored in pair k now, normal and tangential (what the step's law gave it:
 * Kuhn et al. line 51, f_t^2 / 2 k_t; a bond's springs from its bonded gap and displacement). */
static inline void pair_elastic(const dem_solver *S, const dem_params *p, int k, double *e_n,
                                double *e_t)
{
    const dem_pair *c = &S->pair[k];
    const dem_bond_state *b = bond_of_pair(S, k);
    const double k_n = p->law.k_n, k_t = p->law.k_t;
    *e_n = *e_t = 0.0;
    if (b) { /* the bond's h = gap - gap0, with the gap of the step (zeta = -gap exactly) */
        double h = -c->zeta - b->gap0;
        *e_n = 0.5 * k_n * h * h;
        *e_t = 0.5 * k_t * v3_norm2(b->u_t);
    } else if (c->zeta >= 0.0) {
        double fn = k_n * c->zeta;
        *e_n = fn * fn / (2.0 * k_n);
        *e_t = k_t > 0.0 ? v3_norm2(c->ft) / (2.0 * k_t) : 0.0;
    }
}

status dem_ledger(const world *W, dem_solver *S, const dem_params *p, diag *err)
{
    const particles *P = &W->P;
    int n = n_own(W, S), np = S->npair;
    xsum kt, kr, ep, en, et;
    xsum_init(&kt);
    xsum_init(&kr);
    xsum_init(&ep);
    xsum_init(&en);
    xsum_init(&et);
#pragma omp parallel for schedule(static) reduction(xsum_merge : kt, kr, ep)
    for (int i = 0; i < n; i++) {
        xsum_add(&kt, 0.5 * P->m[i] * v3_norm2(P->v[i]));
        if (P->inv_I[i] > 0.0)
            xsum_add(&kr, 0.5 / P->inv_I[i] * v3_norm2(P->w[i]));
        if (S->ell) { /* 1/2 sigma : eps V (plane strain: eps_zz = 0) */
            const double *sg = &S->sig[3 * i];
            double eps[3];
            dem_deform_strain(p->young, p->poisson, sg, eps);
            xsum_add(&ep, 0.5 * (sg[0] * eps[0] + sg[1] * eps[1] + 2.0 * sg[2] * eps[2]) *
                              CDLAB_PI * P->r[i] * P->r[i] * p->thickness);
        }
    }
#pragma omp parallel for schedule(static) reduction(xsum_merge : en, et)
    for (int k = 0; k < np; k++) {
        if (!counted(S, &S->pair[k]))
            continue;
        double e_n, e_t;
        pair_elastic(S, p, k, &e_n, &e_t);
        xsum_add(&en, e_n);
        xsum_add(&et, e_t);
    }
    xsum sum[DEM_LEDGER_SUMS] = {kt, kr, ep, en, et};
    for (int k = 0; k < DEM_CUMULATIVE; k++)
        sum[DEM_LEDGER_STATE + k] = S->acc[k];
    status s = S->dist ? S->dist->merge(S->dist, sum, DEM_LEDGER_SUMS, err) : CDLAB_OK;
    if (s != CDLAB_OK)
        return s;
    dem_energy *E = &S->E;
    E->kin_trans = xsum_round(&sum[0]);
    E->kin_rot = xsum_round(&sum[1]);
    E->kin_piston = piston_kinetic(W);
    E->elastic_particles = xsum_round(&sum[2]);
    E->elastic_n = xsum_round(&sum[3]);
    E->elastic_t = xsum_round(&sum[4]);
    for (int k = 0; k < DEM_CUMULATIVE; k++)
        S->acc_total[k] = sum[DEM_LEDGER_STATE + k];
    E->friction = xsum_round(&S->acc_total[DEM_ACC_FRICTION]);
    E->damping = xsum_round(&S->acc_total[DEM_ACC_DAMPING]);
    E->work_external = xsum_round(&S->acc_total[DEM_ACC_WORK_EXTERNAL]);
    return CDLAB_OK;
}

status dem_ledger_start(const world *W, dem_solver *S, const dem_params *p, diag *err)
{
    for (int k = 0; k < DEM_CUMULATIVE; k++) /* nothing dissipated or done before the first step */
        xsum_init(&S->acc[k]);
    S->E.work_piston = 0.0;
    status s = dem_ledger(W, S, p, err);
    const dem_energy *E = &S->E;
    S->E.initial = E->kin_trans + E->kin_rot + E->kin_piston + E->elastic_n + E->elastic_t +
                   E->elastic_particles;
    return s;
}

void dem_stress(const world *W, const dem_solver *S, double V, double sigma[3][3],
                double walls[3][3])
{
    memset(sigma, 0, 9 * sizeof(double));
    if (walls)
        memset(walls, 0, 9 * sizeof(double));
    for (int k = 0; k < S->npair; k++) {
        const dem_pair *c = &S->pair[k];
        if (c->i < 0 && !walls)
            continue;
        const vec3 R = dem_pair_force(W, S, k);
        if (!nonzero(R))
            continue;
        if (c->i >= 0) {
            vec3 f = v3_scale(R, -1.0); /* force on p */
            world_stress_add(sigma, f, pbox_delta(&W->P.box, W->P.x[c->i], W->P.x[c->j]), V);
        } else { /* the contact point of the pair's record (deformable discs: the ellipse's;
                    its force is the side row's again, a cheap lookup: testing it first spares
                    the record's geometry for the wall pairs apart) */
            contact rec;
            dem_contact_record(W, S, k, &rec);
            world_stress_add(walls, R, contact_l1(&rec), V);
        }
    }
}

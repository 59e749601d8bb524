/* The kinematic drive: particles moved by prescribed increments (a rigid rotation, an affine
 * deformation) and the contact forces recomputed with the law (Kuhn et al. Fig. 6). */
#include "dem/dem_stage.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

status dem_kinematic_step(world *W, dem_solver *S, const dem_params *p, const vec3 *du,
                          const vec3 *dth, dem_stats *st, diag *err)
{
    status s;
    if (!S->started && (s = dem_start(W, S, p, st, err)) != CDLAB_OK)
        return s;
    particles *P = &W->P;
    int n = n_own(W, S); /* a distributed run: its own particles; the copies from their owners */
    if ((s = dem_reserve_moves(S, err)) != CDLAB_OK)
        return s;
    S->moves = DEM_MOVES_GIVEN;
    double pmax = 0.0;
    int far = -1;
    for (int i = 0; i < n; i++) {
        S->du[i] = du[i];
        S->dth[i] = dth[i];
        P->x[i] = v3_add(P->x[i], du[i]);
        quat_integrate(&P->q[4 * i], dth[i]);
        P->v[i] = v3_scale(du[i], 1.0 / W->dt);
        P->w[i] = v3_scale(dth[i], 1.0 / W->dt);
        if (P->box.any && particles_wrap_one(P, i) && far < 0)
            far = i;
        S->path[i] += v3_norm(du[i]);
        pmax = fmax(pmax, S->path[i]);
    }
    if (far >= 0) {
        S->moves = DEM_MOVES_VELOCITY;
        return particles_wrap_error(P, far, W->step + 1, err);
    }
    for (int k = 0; k < W->n_walls; k++)
        S->piston_ds[k] = 0.0;
    s = S->dist ? S->dist->refresh(S->dist, W, S, err) : CDLAB_OK;
    if (s == CDLAB_OK)
        s = dem_contacts_and_forces(W, S, p, pmax, (double)(W->step + 1) * W->dt, st, err);
    S->moves = DEM_MOVES_VELOCITY; /* whatever happened: a dynamic step makes its own */
    if (s != CDLAB_OK)
        return s;
    for (int k = 0; k < W->n_walls; k++) /* what the walls feel now (as dem_step reports it) */
        W->walls[k].contact_force = S->piston_F[k];
    W->step++;
    W->t = (double)W->step * W->dt;
    return CDLAB_OK;
}

/* Rotation matrix of the rotation vector phi (Rodrigues). */
static void rotation_matrix(vec3 phi, double Q[3][3])
{
    double a = v3_norm(phi);
    vec3 e = a > 0.0 ? v3_scale(phi, 1.0 / a) : v3(1, 0, 0);
    double c = cos(a), s = sin(a), C = 1.0 - c, u[3] = {e.x, e.y, e.z};
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++)
            Q[r][k] = C * u[r] * u[k] + (r == k ? c : 0.0);
    Q[0][1] -= s * u[2];
    Q[1][0] += s * u[2];
    Q[0][2] += s * u[1];
    Q[2][0] -= s * u[1];
    Q[1][2] -= s * u[0];
    Q[2][1] += s * u[0];
}

void dem_rigid_rotation(const world *W, vec3 centre, vec3 phi, vec3 *du, vec3 *dth)
{
    double Q[3][3];
    rotation_matrix(phi, Q);
    for (int i = 0; i < W->P.n; i++) {
        vec3 r = v3_sub(W->P.x[i], centre);
        vec3 rq = v3(Q[0][0] * r.x + Q[0][1] * r.y + Q[0][2] * r.z,
                     Q[1][0] * r.x + Q[1][1] * r.y + Q[1][2] * r.z,
                     Q[2][0] * r.x + Q[2][1] * r.y + Q[2][2] * r.z);
        du[i] = v3_sub(rq, r);
        dth[i] = phi;
    }
}

void dem_affine(const world *W, vec3 centre, double G[3][3], vec3 *du, vec3 *dth)
{
    /* spin of the antisymmetric part: w = (G32 - G23, G13 - G31, G21 - G12) / 2 */
    vec3 spin = v3(0.5 * (G[2][1] - G[1][2]), 0.5 * (G[0][2] - G[2][0]), 0.5 * (G[1][0] - G[0][1]));
    for (int i = 0; i < W->P.n; i++) {
        vec3 r = v3_sub(W->P.x[i], centre);
        du[i] = v3(G[0][0] * r.x + G[0][1] * r.y + G[0][2] * r.z,
                   G[1][0] * r.x + G[1][1] * r.y + G[1][2] * r.z,
                   G[2][0] * r.x + G[2][1] * r.y + G[2][2] * r.z);
        dth[i] = spin;
    }
}

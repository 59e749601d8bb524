/* The dynamic step: velocity Verlet (half kick, drift, forces, half kick) for the particles and
 * the pistons, the overlap check and the step's statistics. */
#include "dem/dem_stage.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The first half of a velocity-Verlet step, one pass over the particles: half kick with the
 * forces at t, then the drift (the step's movements, positions, orientations, wrapping, path
 * since the last rebuild); the external forces are constant in the step: trapezoid of their
 * values at t and t_new. Returns the longest path since the last rebuild; *far: the first
 * particle that could not be wrapped into the periodic box (particles_wrap), n_own if none. */
static double kick_drift(world *W, dem_solver *S, double t, double t_new, int *far)
{
    particles *P = &W->P;
    int n = n_own(W, S), dim = P->dimension, nb = n_blocks(n), bad = n;
    double dt = W->dt, h = 0.5 * dt;
    double load0 = world_load_factor(W, t), load1 = world_load_factor(W, t_new);
    xsum work;
    xsum_init(&work);
#pragma omp parallel reduction(xsum_merge : work) reduction(min : bad)
    {
        xsum_bins *work_bins = &dem_step_bins[0];
#pragma omp for schedule(static)
        for (int b = 0; b < nb; b++) {
            double pmax = 0.0;
            int end = (b + 1) * DEM_BLOCK < n ? (b + 1) * DEM_BLOCK : n;
            vec3 dth[DEM_BLOCK]; /* the block's rotations, for the quaternions */
            for (int i = b * DEM_BLOCK; i < end; i++) {
                vec3 fe0 = dem_external_force(W, i, load0);
                vec3 f = v3_add(dof_project_lin(dim, S->F[i]), fe0);
                vec3 v = v3_axpy(h * P->inv_m[i], f, P->v[i]);
                vec3 w = v3_axpy(h * P->inv_I[i], dof_project_ang(dim, S->T[i]), P->w[i]);
                P->v[i] = v;
                P->w[i] = w;
                vec3 du = v3_scale(v, dt); /* = move_du(W, S, i) in the forces that follow */
                dth[i - b * DEM_BLOCK] = v3_scale(w, dt);
                /* with the loads unchanged, fe0 itself ((a + a) / 2 = a) */
                vec3 fe = load1 == load0
                              ? fe0
                              : v3_scale(v3_add(fe0, dem_external_force(W, i, load1)), 0.5);
                xsum_bins_add(work_bins, &work, v3_dot(fe, du));
                P->x[i] = v3_add(P->x[i], du);
                if (P->box.any && particles_wrap_one(P, i) && i < bad)
                    bad = i;
                S->path[i] += v3_norm(du);
                pmax = num_max(pmax, S->path[i]);
            }
            quat_integrate_n(&P->q[4 * b * DEM_BLOCK], dth, end - b * DEM_BLOCK);
            S->blk[DEM_NSUM * b] = pmax;
        }
        xsum_bins_flush(work_bins, &work);
    }
    xsum_merge(&S->acc[DEM_ACC_WORK_EXTERNAL], &work);
    double pmax = 0.0;
    for (int b = 0; b < nb; b++)
        pmax = fmax(pmax, S->blk[DEM_NSUM * b]);
    *far = bad;
    return pmax;
}

/* The pistons' half kick and drift, their work (trapezoid of the applied force). */
static void pistons_kick_drift(world *W, dem_solver *S, double t, double t_new)
{
    double dt = W->dt, h = 0.5 * dt, wall_step = 0.0;
    for (int k = 0; k < W->n_walls; k++) {
        wall *w = &W->walls[k];
        if (w->kind == WALL_PISTON)
            w->u += h * w->inv_mass * (wall_piston_force(w, t) + S->piston_F[k]);
        S->piston_ds[k] = 0.0;
        if (w->kind != WALL_PISTON)
            continue;
        S->piston_ds[k] = w->u * dt;
        w->s += S->piston_ds[k];
        wall_step = fmax(wall_step, fabs(S->piston_ds[k]));
        S->E.work_piston +=
            0.5 * (wall_piston_force(w, t) + wall_piston_force(w, t_new)) * S->piston_ds[k];
    }
    S->wall_path += wall_step;
}

/* The second half kick with the forces at t_new (particles, then pistons); returns the first
 * particle whose position or velocity is not finite (n_own: none). */
static int kick(world *W, dem_solver *S, double t_new)
{
    particles *P = &W->P;
    int n = n_own(W, S), dim = P->dimension;
    double h = 0.5 * W->dt, load = world_load_factor(W, t_new);
    int bad = n;
#pragma omp parallel for schedule(static) reduction(min : bad)
    for (int i = 0; i < n; i++) {
        vec3 f = v3_add(dof_project_lin(dim, S->F[i]), dem_external_force(W, i, load));
        vec3 v = v3_axpy(h * P->inv_m[i], f, P->v[i]);
        vec3 w = v3_axpy(h * P->inv_I[i], dof_project_ang(dim, S->T[i]), P->w[i]);
        P->v[i] = v;
        P->w[i] = w;
        vec3 x = P->x[i];
        if (!isfinite(v.x + v.y + v.z + x.x + x.y + x.z) && i < bad)
            bad = i;
    }
    for (int k = 0; k < W->n_walls; k++) {
        wall *w = &W->walls[k];
        if (w->kind == WALL_PISTON)
            w->u += h * w->inv_mass * (wall_piston_force(w, t_new) + S->piston_F[k]);
        w->contact_force = S->piston_F[k];
    }
    return bad;
}

/* dem.abort_overlap: the first pair overlapping by more than its fraction of the smaller
 * radius stops the run. */
status dem_check_overlaps(const world *W, dem_solver *S, const dem_params *p, const dem_stats *st,
                          diag *err)
{
    /* the cheap test first: the largest overlap against the smallest radius allowed (kept from
     * step to step: a pass over every radius was 0.6% of the chute's step) */
    double rmin = INFINITY;
    if (st->max_overlap > 0.0) {
        if (S->rmin_r != W->P.r || S->rmin_n != W->P.n) {
            S->rmin = particles_min_radius(&W->P);
            S->rmin_n = W->P.n;
            S->rmin_r = W->P.r;
        }
        rmin = S->rmin;
    }
    for (int k = 0; k < S->npair && st->max_overlap > p->abort_overlap * rmin; k++) {
        const dem_pair *c = &S->pair[k];
        status s;
        if (c->zeta >= 0.0 &&
            (s = world_overlap_error(W, c->i, c->j, -c->zeta, p->abort_overlap, "dem.abort_overlap",
                                     " (time step too large for the stiffness, or a "
                                     "collision too fast?)",
                                     err)) != CDLAB_OK)
            return s;
    }
    return CDLAB_OK;
}

status dem_step(world *W, dem_solver *S, const dem_params *p, dem_stats *st, diag *err)
{
    status s;
    if (!S->started && (s = dem_start(W, S, p, st, err)) != CDLAB_OK)
        return s;
    if ((s = dem_ensure(S, W, p, err)) != CDLAB_OK)
        return s;
    double t = W->t, t_new = (double)(W->step + 1) * W->dt;
    int far;
    double pmax = kick_drift(W, S, t, t_new, &far);
    if (far < n_own(W, S)) /* before the detection, which needs every particle in the box */
        return particles_wrap_error(&W->P, far, W->step + 1, err);
    pistons_kick_drift(W, S, t, t_new);
    if (S->dist && (s = S->dist->refresh(S->dist, W, S, err)) != CDLAB_OK)
        return s;
    if ((s = dem_contacts_and_forces(W, S, p, pmax, t_new, st, err)) != CDLAB_OK)
        return s;
    W->t = t_new;
    W->step++;
    int bad = kick(W, S, t_new), nown = n_own(W, S);
    if (p->abort_overlap > 0.0 && bad == nown &&
        (s = dem_check_overlaps(W, S, p, st, err)) != CDLAB_OK)
        return s;
    if (bad < nown)
        return diag_set(err, CDLAB_ERR_NUMERIC,
                        "step %ld: particle %d has a non-finite position or velocity "
                        "(time step above the critical one?)",
                        W->step, W->P.id[bad]);
    return CDLAB_OK;
}

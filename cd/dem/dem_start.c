/* Starting and resuming a DEM run: the forces of t = 0, the bonds made at the start, a
 * checkpoint's state taken up again, and the pairs as contact records for output. */
#include "dem/dem_stage.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

status dem_prepare(world *W, dem_solver *S, const dem_params *p, diag *err)
{
    return dem_ensure(S, W, p, err);
}

status dem_resume(world *W, dem_solver *S, const dem_params *p, diag *err)
{
    status s;
    if ((s = dem_ensure(S, W, p, err)) != CDLAB_OK)
        return s;
    if ((s = dem_index_list(S, W, err)) != CDLAB_OK)
        return s;
    if (S->ell)
        dem_deform_shapes(W, S, p);
    /* the side rows' forces of the end of the last step, for the output (the particles' sums
     * are the checkpoint's; the next step makes everything afresh) */
    dem_remake_side_rows(W, S);
    S->started = 1;
    return CDLAB_OK;
}

vec3 dem_pair_force(const world *W, const dem_solver *S, int k)
{
    int row = k < S->indexed ? side_row(S, k) : -1;
    return row >= 0 ? S->side[(S->view ? 1 : 3) * row] : dem_remade_force(W, S, k);
}

void dem_contact_record(const world *W, const dem_solver *S, int k, contact *c)
{
    const dem_pair *pr = &S->pair[k];
    memset(c, 0, sizeof *c);
    c->i = pr->i;
    c->j = pr->j;
    contact_geometry(c, &W->P, W->walls);
    c->key = contact_pair_key(pr->i, pr->j, &W->P, W->n_walls);
    c->mu = pr->i >= 0 ? W->detect.mu : W->walls[-1 - pr->i].mu;
    c->R = dem_pair_force(W, S, k);
    if (S->ell || S->radius_arms) { /* deformable discs: the gap between the ellipses; lammps: the
                                   lever arms of the radii */
        contact_frame f = frame_now(W, S, pr->i, pr->j, pair_separation(W, pr->i, pr->j));
        c->gap = f.gap;
        c->a0 = f.a0;
        c->a1 = f.a1;
    }
}

/* dem.bond: every particle pair of the list closer than bond_gap is bonded (at the start). */
status dem_make_bonds(world *W, dem_solver *S, const dem_params *p, diag *err)
{
    status s;
    if ((s = dem_reserve_bonds(S, S->npair, err)) != CDLAB_OK)
        return s;
    S->nbond = 0;
    for (int k = 0; k < S->npair; k++) {
        const dem_pair *c = &S->pair[k];
        if (c->i < 0)
            continue;
        contact_frame f = frame_now(W, S, c->i, c->j, pair_separation(W, c->i, c->j));
        if (f.gap < p->bond_gap)
            S->bond[S->nbond++] = (dem_bond_state){
                contact_pair_key(c->i, c->j, &W->P, W->n_walls), c->i, c->j, f.gap, v3_zero(), 1};
    }
    return dem_index_list(S, W, err); /* the bonds linked, bonded pairs given side rows */
}

status dem_start(world *W, dem_solver *S, const dem_params *p, dem_stats *st, diag *err)
{
    status s = dem_ensure(S, W, p, err);
    if (s != CDLAB_OK)
        return s;
    memset(S->piston_ds, 0, (size_t)W->n_walls * sizeof *S->piston_ds);
    int far = particles_wrap(&W->P);
    if (far >= 0)
        return particles_wrap_error(&W->P, far, W->step, err);
    if ((s = dem_rebuild(W, S, p, err)) != CDLAB_OK)
        return s;
    if (S->ell) { /* unstressed discs to begin with */
        memset(S->sig, 0, (size_t)W->P.n * 3 * sizeof *S->sig);
        memset(S->eload, 0, (size_t)W->P.n * sizeof *S->eload);
        dem_deform_shapes(W, S, p);
    }
    if (p->bond && (s = dem_make_bonds(W, S, p, err)) != CDLAB_OK)
        return s;
    S->moves = DEM_MOVES_ZERO; /* the forces of the initial state: nothing moved */
    dem_compute_forces(W, S, p, 0, st);
    S->moves = DEM_MOVES_VELOCITY;
    if (S->ell && (s = dem_deform_update(W, S, p, W->t, err)) != CDLAB_OK)
        return s;
    S->started = 1;
    /* a distributed run's ledger merges over the ranks: its engine starts it once every rank
     * got here */
    return S->dist ? CDLAB_OK : dem_ledger_start(W, S, p, err);
}

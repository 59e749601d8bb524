/* The DEM solver's parameters, buffers and bookkeeping: defaults, the per-particle and
 * per-wall buffers (grown geometrically: the step allocates nothing once sizes settle), the
 * pair store, the bonds' table and the critical time step. */
#include "dem/dem_stage.h"
#include "dem/dem_tangential.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

dem_params dem_params_default(void)
{
    dem_params p;
    memset(&p, 0, sizeof p);
    p.law.k_n = 1.0;
    p.law.k_t = 1.0;
    p.law.eps = 1e-12;
    p.law.tangential = DEM_KUHN;
    p.law.projection = 1;
    p.law.twirl = 1;
    p.abort_overlap = 0.5;
    return p;
}

double dem_energy_residual(const dem_energy *E)
{
    return E->kin_trans + E->kin_rot + E->kin_piston + E->elastic_n + E->elastic_t +
           E->elastic_particles + E->friction + E->damping - E->work_external - E->work_piston -
           E->initial;
}

void dem_solver_init(dem_solver *S)
{
    memset(S, 0, sizeof *S);
}

void dem_solver_free(dem_solver *S)
{
    free(S->F);
    free(S->T);
    free(S->du);
    free(S->dth);
    free(S->path);
    free(S->piston_F);
    free(S->piston_ds);
    free(S->home);
    free(S->wbs);
    free(S->side_pair);
    free(S->side);
    free(S->strad);
    free(S->sadj_start);
    free(S->sadj);
    free(S->wall_rows);
    free(S->blk);
    free(S->pair);
    free(S->refs);
    free(S->bond);
    free(S->bond_of);
    free(S->sig);
    free(S->ell);
    free(S->eload);
    free(S->side_sig);
    cells_free(&S->grid);
    memset(S, 0, sizeof *S);
}

/* The per-particle buffers share one capacity, the per-wall ones another; both grow
 * geometrically, so the step allocates nothing once the sizes have settled. */
status dem_ensure(dem_solver *S, const world *W, const dem_params *p, diag *err)
{
    S->k_n = p->law.k_n;
    S->dashpots = p->damp_n > 0.0 || p->damp_t > 0.0;
    S->law = dem_tangential_registry[p->law.tangential];
    S->radius_arms = S->law->radius_arms;
    if (W->P.n > S->cap || !S->F || (p->deformable && !S->ell)) {
        int cap = W->P.n > 32 ? 2 * W->P.n : 64;
        vec3 **arrays[] = {&S->F, &S->T};
        for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) {
            vec3 *grown = realloc(*arrays[k], (size_t)cap * sizeof *grown);
            if (!grown)
                return diag_set(err, CDLAB_ERR_NOMEM,
                                "cannot allocate DEM buffers for %d particles", W->P.n);
            *arrays[k] = grown;
        }
        double *path = realloc(S->path, (size_t)cap * sizeof *path);
        if (!path)
            return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate DEM buffers for %d particles",
                            W->P.n);
        S->path = path;
        if (p->deformable) {
            double *sig = realloc(S->sig, (size_t)cap * 3 * sizeof *sig);
            if (sig)
                S->sig = sig;
            dem_ellipse *ell = realloc(S->ell, (size_t)cap * sizeof *ell);
            if (ell)
                S->ell = ell;
            double *eload = realloc(S->eload, (size_t)cap * sizeof *eload);
            if (!sig || !ell || !eload)
                return diag_set(err, CDLAB_ERR_NOMEM,
                                "cannot allocate the deformable discs' state for %d particles",
                                W->P.n);
            S->eload = eload;
        }
        S->cap = cap;
    }
    if (W->n_walls > S->wcap || !S->piston_F) {
        int cap = W->n_walls > 4 ? 2 * W->n_walls : 8;
        double **arrays[] = {&S->piston_F, &S->piston_ds};
        for (size_t k = 0; k < sizeof arrays / sizeof arrays[0]; k++) {
            double *grown = realloc(*arrays[k], (size_t)cap * sizeof *grown);
            if (!grown)
                return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate DEM wall buffers");
            *arrays[k] = grown;
        }
        S->wcap = cap;
    }
    return CDLAB_OK;
}

status dem_ensure_blocks(dem_solver *S, int n, diag *err)
{
    double *b = grow_array(S->blk, &S->blk_cap, DEM_NSUM * (n_blocks(n) + 1), sizeof *b);
    if (!b)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate DEM reduction blocks");
    S->blk = b;
    return CDLAB_OK;
}

double dem_critical_dt(const world *W, const dem_params *p)
{
    const particles *P = &W->P;
    double m_min = INFINITY, rot = 1.0;
    for (int i = 0; i < P->n; i++) {
        m_min = fmin(m_min, P->m[i]);
        /* tangential stiffness acting on translation and rolling: 1 + m r^2 / I */
        if (P->dimension > 1)
            rot = fmax(rot, 1.0 + P->m[i] * P->r[i] * P->r[i] * P->inv_I[i]);
    }
    for (int k = 0; k < W->n_walls; k++)
        if (W->walls[k].kind == WALL_PISTON)
            m_min = fmin(m_min, W->walls[k].mass);
    double k_max = fmax(p->law.k_n, p->law.k_t * rot);
    if (!(k_max > 0.0) || !isfinite(m_min))
        return INFINITY;
    double c = fmax(p->damp_n, p->damp_t);
    if (p->damp_rate) /* c = m_eff gamma */
        c *= m_min;
    else if (!p->damp_absolute) /* fraction of the critical damping of the lightest pair */
        c *= 2.0 * sqrt(m_min * k_max);
    return equiv_critical_dt(k_max, c, m_min);
}

/* Each pair's intact bond (bond_of[k], or -1): both lists are in key order. */
status dem_link_list_bonds(dem_solver *S, const world *W, diag *err)
{
    S->bonds_linked = 0;
    int *of = grow_array(S->bond_of, &S->bond_of_cap, S->npair + 1, sizeof *of);
    if (!of)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the bond index");
    S->bond_of = of;
    int b = 0;
    for (int k = 0; k < S->npair; k++) {
        uint64_t key = contact_pair_key(S->pair[k].i, S->pair[k].j, &W->P, W->n_walls);
        while (b < S->nbond && S->bond[b].key < key)
            b++;
        of[k] = b < S->nbond && S->bond[b].key == key && S->bond[b].intact ? b : -1;
    }
    S->bonds_linked = S->npair;
    return CDLAB_OK;
}

/* Everything derived from a new pair list (a rebuild, or a list restored from a
 * checkpoint): the per-contact force buffer (zeroed: a pair that stays apart never writes
 * it) and stress terms, the bonds of the pairs, the adjacency and the reduction blocks. */
status dem_index_list(dem_solver *S, const world *W, diag *err)
{
    status s;
    S->indexed = 0; /* until every part is made: build_writeback fills side_pair before it
                       grows the side rows, and a failure in between leaves rows they cannot
                       hold */
    if (S->nbond > 0 && (s = dem_link_list_bonds(S, W, err)) != CDLAB_OK)
        return s;
    S->rmin_r = NULL; /* the particles may have changed: the smallest radius made again */
    if ((s = dem_build_writeback(S, W, err)) != CDLAB_OK)
        return s;
    memset(S->side, 0, (size_t)(3 * S->nside) * sizeof *S->side);
    if ((s = dem_ensure_blocks(S, S->npair > W->P.n ? S->npair : W->P.n, err)) != CDLAB_OK)
        return s;
    S->indexed = S->npair;
    return CDLAB_OK;
}

/* A pair buffer of at least need entries (contents not kept), 64-byte aligned. */
status dem_grow_pairs(dem_pair **p, int *cap, int need, diag *err)
{
    dem_pair *grown = grow_big(*p, 0, cap, need, sizeof *grown);
    if (!grown)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the DEM neighbour list (%d pairs)",
                        need);
    *p = grown;
    return CDLAB_OK;
}

status dem_reserve_pairs(dem_solver *S, int n, diag *err)
{
    return dem_grow_pairs(&S->pair, &S->pair_cap, n, err);
}

status dem_reserve_view(world *W, dem_solver *S, const dem_params *p, int npair, diag *err)
{
    status s = dem_ensure(S, W, p, err);
    if (s == CDLAB_OK)
        s = dem_grow_pairs(&S->pair, &S->pair_cap, npair, err);
    if (s != CDLAB_OK)
        return s;
    /* every pair a side row of its force alone: the view's forces, as gathered */
    vec3 *side = grow_array(S->side, &S->side_cap, npair + 1, sizeof *side);
    if (side)
        S->side = side;
    int *sp = grow_array(S->side_pair, &S->side_pair_cap, npair + 1, sizeof *sp);
    if (sp)
        S->side_pair = sp;
    if (!side || !sp)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate DEM force buffers");
    for (int k = 0; k < npair; k++)
        sp[k] = k;
    sp[npair] = INT_MAX;
    S->nside = npair;
    S->indexed = npair;
    S->view = 1;
    return CDLAB_OK;
}

double dem_mean_overlap(const world *W, const dem_solver *S)
{
    /* as compute_forces sums it: over the pairs with a force or an intact bond, in blocks of
     * DEM_BLOCK pairs in list order, the blocks' sums added in block order */
    double total = 0.0;
    int active = 0;
    for (int b = 0; b < n_blocks(S->npair); b++) {
        double part = 0.0;
        int end = (b + 1) * DEM_BLOCK < S->npair ? (b + 1) * DEM_BLOCK : S->npair;
        for (int k = b * DEM_BLOCK; k < end; k++)
            if (v3_norm2(dem_pair_force(W, S, k)) > 0.0 || bond_of_pair(S, k)) {
                part += num_max(S->pair[k].zeta, 0.0);
                active++;
            }
        total += part;
    }
    return active > 0 ? total / active : 0.0;
}

status dem_link_bonds(const world *W, dem_solver *S, diag *err)
{
    return dem_link_list_bonds(S, W, err);
}

status dem_reserve_bonds(dem_solver *S, int n, diag *err)
{
    dem_bond_state *b = grow_array(S->bond, &S->bond_cap, n + 1, sizeof *b);
    if (!b)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate %d bonds", n);
    S->bond = b;
    return CDLAB_OK;
}

int dem_bonds_intact(const dem_solver *S)
{
    int n = 0;
    for (int b = 0; b < S->nbond; b++)
        n += S->bond[b].intact;
    return n;
}

status dem_reserve_moves(dem_solver *S, diag *err)
{
    if (S->moves_cap >= S->cap)
        return CDLAB_OK;
    vec3 *a = realloc(S->du, (size_t)S->cap * sizeof *a);
    if (a)
        S->du = a;
    vec3 *b = realloc(S->dth, (size_t)S->cap * sizeof *b);
    if (b)
        S->dth = b;
    if (!a || !b)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the prescribed movements");
    S->moves_cap = S->cap;
    return CDLAB_OK;
}

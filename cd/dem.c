/* DEM time step and kinematic driver. */
#include "dem.h"
#include "dem_bond.h"
#include "dem_contact_law.h"
#include "dem_contact_law4.h"
#include "equiv.h"

#include "grow.h"
#include "parallel.h"
#include "prefetch.h"
#include "xsum.h"
#include "vec3x4.h"

#include <limits.h>
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
static status ensure(dem_solver *S, const world *W, const dem_params *p, diag *err)
{
    S->k_n = p->law.k_n;
    S->dashpots = p->damp_n > 0.0 || p->damp_t > 0.0;
    S->lammps = p->law.tangential == DEM_LAMMPS;
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

/* Block size of the deterministic reductions (fixed: never derived from the thread count). The
 * blocks carry the step's statistics (counts, the overlap sum, maxima), which are the same bits
 * for any thread count; the energy ledger's sums are exact (xsum) and carried apart. */
#define DEM_BLOCK 1024
enum { BLK_ACTIVE, BLK_OVERLAP, BLK_SLIDING, BLK_MAX_OVERLAP, BLK_BROKEN, DEM_NSUM };

static int n_blocks(int n)
{
    return (n + DEM_BLOCK - 1) / DEM_BLOCK;
}

static status ensure_blocks(dem_solver *S, int n, diag *err)
{
    double *b = grow_array(S->blk, &S->blk_cap, DEM_NSUM * (n_blocks(n) + 1), sizeof *b);
    if (!b)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate DEM reduction blocks");
    S->blk = b;
    return CDLAB_OK;
}

/* Sums column q of the block results in block order. */
static double block_sum(const dem_solver *S, int nb, int q)
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

/* The blocks of the force write-back: nwb runs of whole DEM_BLOCKs of the list (S->wbs, made at
 * each rebuild). The results do not depend on them (a particle's sum runs in key order whether
 * it is made in the pass or gathered), so they may follow the list and the thread count: one
 * block on one thread, else wb_per_thread blocks per thread to share (dynamically), and no
 * more blocks than DEM_WB_MIN pairs fill. Larger blocks leave fewer straddlers (chute, 65,600
 * spheres: 48% of the particles at 1,024 pairs, 23% at 4,096, 16% at 16,384, 9% at 60,000, 4%
 * at 120,000, none but the wall pairs' in one block), hence fewer side rows and less of the
 * gather (7% of the chute's step on one thread with 4,096-pair blocks).
 * The blocks hold equal shares of the pairs' weights: DEM_WB_TOUCH_WEIGHT for a pair that
 * touches at the rebuild (its force is made every step until it parts), 1 for one apart (a
 * distance test), so that a block of a packing's dense part is not the one the others wait for.
 * Measured on 2 threads (ms per step, whole runs alternating): the chute, 2 blocks per thread
 * 4.56-4.95, 4 4.77-5.17, 8 5.26-5.42 (2026-11-24, equal pair counts); 1 block per thread
 * 13.41-13.95 against 2 per thread 14.09-14.46 (2026-11-29, a slower VM; the gather 0.13
 * against 0.33 ms). The chute's 64,000 mobile spheres with those of y > 20 shrunk by 3% (listed
 * pairs apart there): 1 block per thread 6.79-7.26 with equal pair counts, 5.78-6.28 with the
 * weights, 2 per thread with equal counts 5.88-6.48. On 16 threads (a lent machine,
 * 2026-11-26, equal counts) 1 block per thread was the slower: step 2,048 against 1,980 us. */
#define DEM_WB_MIN (4 * DEM_BLOCK)
#define DEM_WB_TOUCH_WEIGHT 8
static int wb_per_thread(int threads)
{
    return threads <= 2 ? 1 : 2;
}
static inline int wb_weight(const world *W, const dem_pair *c)
{
    if (c->zeta >= 0.0)
        return DEM_WB_TOUCH_WEIGHT;
    if (c->i < 0)
        return 1;
    double reach = W->P.r[c->i] + W->P.r[c->j];
    vec3 d = pbox_delta(&W->P.box, W->P.x[c->i], W->P.x[c->j]);
    return v3_norm2(d) < reach * reach ? DEM_WB_TOUCH_WEIGHT : 1;
}

/* Whether pair k writes a side row: a pair with a wall, a straddler (home -1) or a bond. */
static inline int needs_side_row(const dem_solver *S, const int *home, int nown, int k)
{
    int i = S->pair[k].i, j = S->pair[k].j;
    int strad = (j < nown && home[j] == -1) || (i >= 0 && i < nown && home[i] == -1);
    return i < 0 || strad || (S->nbond > 0 && S->bond_of[k] >= 0);
}

/* The write-back of a new pair list (see dem_solver): each own particle's block or -1 (a
 * straddler: pairs in several blocks, or with a wall), the side rows (pairs with a wall, a
 * straddler or a bond), the straddlers' contact sides in contact order, the wall pairs' rows. */
static status build_writeback(dem_solver *S, const world *W, diag *err)
{
    int n = W->P.n, np = S->npair, nown = n_own(W, S);
    const dem_pair *pr = S->pair;
    int threads = cdlab_threads(), nwb = threads == 1 ? 1 : wb_per_thread(threads) * threads;
    if (nwb > (np + DEM_WB_MIN - 1) / DEM_WB_MIN)
        nwb = np > DEM_WB_MIN ? (np + DEM_WB_MIN - 1) / DEM_WB_MIN : 1;
    int *home = grow_array(S->home, &S->home_cap, n + 1, sizeof *home);
    if (home)
        S->home = home;
    int *wbs = grow_array(S->wbs, &S->wbs_cap, nwb + 1, sizeof *wbs);
    if (wbs)
        S->wbs = wbs;
    if (!home || !wbs)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the DEM write-back (%d pairs)", np);
    /* the blocks' starts: block m starts at the first DEM_BLOCK before which the weights reach
     * m / nwb of their sum */
    long long total = 0, sum = 0;
    for (int k = 0; k < np && nwb > 1; k++) /* one block needs no weights */
        total += wb_weight(W, &pr[k]);
    wbs[0] = 0;
    for (int c = 0, m = 1; m < nwb; c++) {
        while (m < nwb && sum * nwb >= total * m)
            wbs[m++] = c * DEM_BLOCK < np ? c * DEM_BLOCK : np;
        for (int k = c * DEM_BLOCK; k < (c + 1) * DEM_BLOCK && k < np; k++)
            sum += wb_weight(W, &pr[k]);
    }
    wbs[nwb] = np;
    S->nwb = nwb;
    /* home: -2 (no pair yet), the block of the particle's pairs, or -1 */
    for (int i = 0; i < n; i++)
        home[i] = -2;
    int nwall = 0;
    for (int k = 0, b = 0; k < np; k++) {
        while (k >= wbs[b + 1])
            b++;
        int body[2] = {pr[k].i, pr[k].j};
        nwall += pr[k].i < 0;
        for (int e = 0; e < 2; e++) {
            int q = body[e];
            if (q < 0 || q >= nown) /* a wall, or a halo copy: nothing to sum */
                continue;
            home[q] = home[q] == -2 && pr[k].i >= 0 ? b : home[q] == b && pr[k].i >= 0 ? b : -1;
        }
    }
    /* side rows: counted, then their pairs in list order and the wall pairs' rows */
    int nside = 0, nstrad = 0, nsides = 0;
    for (int k = 0; k < np; k++)
        nside += needs_side_row(S, home, nown, k);
    int *sp = grow_array(S->side_pair, &S->side_pair_cap, nside + 1, sizeof *sp);
    if (sp)
        S->side_pair = sp;
    int *wr = grow_array(S->wall_rows, &S->wall_rows_cap, nwall + 1, sizeof *wr);
    if (wr)
        S->wall_rows = wr;
    if (!sp || !wr)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the DEM side rows (%d)", nside);
    for (int k = 0, r = 0, w = 0; k < np; k++)
        if (needs_side_row(S, home, nown, k)) {
            if (pr[k].i < 0)
                wr[w++] = r;
            sp[r++] = k;
        }
    sp[nside] = INT_MAX;
    S->n_wall_pairs = nwall;
    for (int i = 0; i < nown; i++)
        nstrad += home[i] == -1;
    int *st = grow_array(S->strad, &S->strad_cap, nstrad + 1, sizeof *st);
    if (st)
        S->strad = st;
    int *ss = grow_array(S->sadj_start, &S->sadj_start_cap, nstrad + 1, sizeof *ss);
    if (ss)
        S->sadj_start = ss;
    if (!st || !ss)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the DEM write-back");
    /* the straddlers' ranks in strad: home of a straddler temporarily -3 - rank */
    for (int i = 0, r = 0; i < nown; i++)
        if (home[i] == -1) {
            st[r] = i;
            home[i] = -3 - r++;
        }
    memset(ss, 0, (size_t)(nstrad + 1) * sizeof *ss);
    for (int k = 0; k < np; k++) {
        int body[2] = {pr[k].i, pr[k].j};
        for (int e = 0; e < 2; e++)
            if (body[e] >= 0 && body[e] < nown && home[body[e]] <= -3) {
                ss[-3 - home[body[e]] + 1]++;
                nsides++;
            }
    }
    for (int r = 0; r < nstrad; r++)
        ss[r + 1] += ss[r];
    int *sa = grow_array(S->sadj, &S->sadj_cap, nsides + 1, sizeof *sa);
    if (!sa)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the DEM write-back");
    S->sadj = sa;
    /* fill in contact order (the list is in key order), ss[r] as the cursor, then shift back;
     * a straddler's pair has a side row (row: the cursor over the rows' pairs) */
    for (int k = 0, row = 0; k < np; k++) {
        int body[2] = {pr[k].i, pr[k].j};
        for (int e = 0; e < 2; e++)
            if (body[e] >= 0 && body[e] < nown && home[body[e]] <= -3)
                sa[ss[-3 - home[body[e]]]++] = 2 * row + e;
        row += S->side_pair[row] == k;
    }
    for (int r = nstrad; r > 0; r--)
        ss[r] = ss[r - 1];
    ss[0] = 0;
    for (int r = 0; r < nstrad; r++)
        home[st[r]] = -1;
    S->nstrad = nstrad;
    /* the side rows themselves (zeroed every step in the pass: a pair that stays apart writes
     * nothing) */
    vec3 *side = grow_array(S->side, &S->side_cap, 3 * nside + 3, sizeof *side);
    if (!side)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the DEM side rows (%d)", nside);
    S->side = side;
    if (S->ell) {
        int cap = S->side_sig_cap;
        double *sg = grow_array(S->side_sig, &cap, 6 * nside + 6, sizeof *sg);
        if (!sg)
            return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the DEM side rows (%d)", nside);
        S->side_sig = sg;
        S->side_sig_cap = cap;
    }
    S->nside = nside;
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
static status link_bonds(dem_solver *S, const world *W, diag *err)
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
static status index_contact_list(dem_solver *S, const world *W, diag *err)
{
    status s;
    S->indexed = 0; /* until every part is made: build_writeback fills side_pair before it
                       grows the side rows, and a failure in between leaves rows they cannot
                       hold */
    if (S->nbond > 0 && (s = link_bonds(S, W, err)) != CDLAB_OK)
        return s;
    S->rmin_r = NULL; /* the particles may have changed: the smallest radius made again */
    if ((s = build_writeback(S, W, err)) != CDLAB_OK)
        return s;
    memset(S->side, 0, (size_t)(3 * S->nside) * sizeof *S->side);
    if ((s = ensure_blocks(S, S->npair > W->P.n ? S->npair : W->P.n, err)) != CDLAB_OK)
        return s;
    S->indexed = S->npair;
    return CDLAB_OK;
}

/* A pair buffer of at least need entries (contents not kept), 64-byte aligned. */
static status grow_pairs(dem_pair **p, int *cap, int need, diag *err)
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
    return grow_pairs(&S->pair, &S->pair_cap, n, err);
}

status dem_reserve_view(world *W, dem_solver *S, const dem_params *p, int npair, diag *err)
{
    status s = ensure(S, W, p, err);
    if (s == CDLAB_OK)
        s = grow_pairs(&S->pair, &S->pair_cap, npair, err);
    if (s != CDLAB_OK)
        return s;
    /* every pair a side row: the view's forces, as gathered */
    vec3 *side = grow_array(S->side, &S->side_cap, 3 * npair + 3, sizeof *side);
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
    return CDLAB_OK;
}

static inline dem_bond_state *bond_of_pair(const dem_solver *S, int k);

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
    return link_bonds(S, W, err);
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
 * their ellipses' reaches along the line of centres (dem.tangential = lammps: lever arms the
 * radii). */
static inline contact_frame frame_particles(const world *W, const dem_solver *S, int i, int j,
                                            vec3 d)
{
    const particles *P = &W->P;
    if (S->lammps)
        return radius_arms(contact_frame_particles(d, P->r[i], P->r[j]), P->r[i], P->r[j]);
    if (!S->ell)
        return contact_frame_particles(d, P->r[i], P->r[j]);
    double dist = v3_norm(d);
    vec3 n = dist > 0.0 ? v3_scale(d, 1.0 / dist) : v3(1.0, 0.0, 0.0);
    return contact_frame_particles(d, dem_deform_reach(&S->ell[i], n),
                                   dem_deform_reach(&S->ell[j], n));
}

/* Frame of wall w (at position s) and particle j at x: with its radius, or for a deformable
 * disc with its reach along the wall's normal there (dem.tangential = lammps: lever arm the
 * radius). */
static inline contact_frame frame_wall(const dem_solver *S, const wall *w, double s, int j, vec3 x,
                                       double r)
{
    contact_frame f = contact_frame_wall(w, s, x, r);
    if (S->lammps)
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
static double dashpot_mass(const world *W, int i, int j)
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
static int side_row_from(const dem_solver *S, int k)
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
static int side_row(const dem_solver *S, int k)
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

/* Work of the dashpot forces as velocity Verlet applies them: a force F_n acts with half its
 * impulse on each side of t_n, so its work is F_n . (dx_{n-1/2} + dx_{n+1/2}) / 2. This is the
 * half over the step just moved, for the forces of its start, with the lever arms of the start
 * (called before a rebuild replaces the list). Booking c du^2/dt instead leaves a residual of
 * first order in dt in the ledger (measured: 7.6e-5 relative for a colliding pair at
 * omega dt = 1e-3). */
static void damping_work_before(world *W, dem_solver *S)
{
    int np = S->npair;
    xsum d;
    xsum_init(&d);
#pragma omp parallel for schedule(static) reduction(xsum_merge : d)
    for (int k = 0; k < np; k++) {
        const dem_pair *c = &S->pair[k];
        if (counted(S, c) && (c->zeta >= 0.0 || bond_of_pair(S, k)) && nonzero(c->fd))
            xsum_add(&d,
                     dashpot_second_half(
                         W, S, c, frame_start(W, S, c->i, c->j, pair_separation(W, c->i, c->j))));
    }
    xsum_merge(&S->acc[DEM_ACC_DAMPING], &d);
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

/* Force of bonded pair c (bond b) at the end of a step, as contact_force for a frictional one:
 * the bond's springs (dem_bond_force) from the change of the gap since the bond was made and
 * the tangential displacement since then (last step's turned into the new tangent plane with
 * its length kept, plus the step's tangential movement at mid-step lever arms), and the
 * dashpots. A bond whose elastic force passes its strength breaks: the pair goes on as a
 * frictional contact with the bond's tangential force (if touching), and the elastic energy
 * the break releases is booked as dissipated (diss[0]; the dashpots' work into diss[1]);
 * acc[BLK_BROKEN] counts the breaks. */
static inline void bond_force(world *W, dem_solver *S, int *cur, const dem_params *p, int k,
                              dem_pair *c, dem_bond_state *b, int book, double *acc, double *diss)
{
    int i = c->i, j = c->j;
    vec3 d = pair_separation(W, i, j);
    contact_frame f1 = frame_now(W, S, i, j, d), f0 = frame_start(W, S, i, j, d);
    if (book && nonzero(c->fd))
        diss[1] += dashpot_second_half(W, S, c, f0);
    vec3 du_rel = relative_movement(W, S, i, j, v3_scale(v3_add(f1.l0, f0.l0), 0.5),
                                    v3_scale(v3_add(f1.l1, f0.l1), 0.5));
    vec3 ut = v3_reject(b->u_t, f1.n);
    double len = v3_norm(b->u_t), plen = v3_norm(ut);
    if (plen > 0.0)
        ut = v3_scale(ut, len / plen);
    ut = v3_add(ut, v3_reject(du_rel, f1.n));
    const double k_n = p->law.k_n, k_t = p->law.k_t;
    dem_bond_law L = {k_n, k_t, 0.0, 0.0, p->bond_strength_n, p->bond_strength_t};
    dem_bond_in in = {.h = f1.gap - b->gap0, .u_t = ut, .m_0 = 1.0, .m_1 = 1.0};
    dem_bond_out out;
    dem_bond_force(&L, &in, &out);
    vec3 f = v3_axpy(out.f_n, f1.n, out.f_t), fd = v3_zero(); /* on body 0 */
    if (p->damp_n > 0.0 || p->damp_t > 0.0) {
        fd = dashpot_force(W, S, p, i, j, f1, 0, &diss[1]);
        f = v3_add(f, fd);
    }
    double zeta = -f1.gap, e_n = 0.5 * k_n * in.h * in.h, e_t = 0.5 * k_t * v3_norm2(ut);
    c->fd = fd;
    c->zeta = zeta;
    c->ft = out.f_t;
    b->u_t = ut;
    if (out.broken) {
        b->intact = 0;
        acc[BLK_BROKEN] += 1.0;
        double released = e_n + e_t;
        if (zeta >= 0.0) {
            e_n = 0.5 * k_n * zeta * zeta;
            e_t = k_t > 0.0 ? v3_norm2(out.f_t) / (2.0 * k_t) : 0.0;
        } else {
            /* apart: marked as just touching, so that the next step passes the law (which
             * writes the pair's zero force over the bond's last) instead of skipping it */
            c->zeta = 0.0;
            c->ft = v3_zero();
            e_n = e_t = 0.0;
        }
        diss[0] += released - e_n - e_t;
    }
    deliver(S, cur, n_own(W, S), k, i, j, f, f1);
    tally_pair(acc, 1, zeta, 0);
}

/* The relative movement v dt of body 1 against body 0 at the contact from the velocities of
 * now (dem.tangential = lammps at the start, where the step has no movement). */
static inline vec3 velocity_movement(const world *W, int i, int j, vec3 l0, vec3 l1)
{
    const particles *P = &W->P;
    double dt = W->dt;
    vec3 du_p = v3_zero(), dth_p = v3_zero();
    if (i >= 0) {
        du_p = v3_scale(P->v[i], dt);
        dth_p = v3_scale(P->w[i], dt);
    } else if (W->walls[-1 - i].kind == WALL_PISTON) {
        du_p = v3_scale(W->walls[-1 - i].n, W->walls[-1 - i].u * dt);
    }
    return movement_at_contact(du_p, dth_p, v3_scale(P->v[j], dt), v3_scale(P->w[j], dt), l0, l1);
}

/* dem.tangential = lammps: LAMMPS's pair gran/hooke/history (and fix wall/gran's
 * hooke/history) as its source computes them, in cdlab's conventions (forces on body 0,
 * movements of body 1 against it, n from body 0 to body 1; LAMMPS's shear history is
 * -f_spring/k_t), for pair k (c) touching now in frame f1 (radius_arms):
 * - the step's relative movement at lever arms of the radii along the normal of now (LAMMPS:
 *   the half-step velocities times dt), no mid-step arms, no twirl;
 * - the spring: the last spring force plus k_t times the tangential movement, turned into the
 *   tangent plane of now (its normal part removed, its length not restored);
 * - the dashpots' constants as dashpot_constants makes them, on the same movement;
 * - the friction limit mu |f_n| is taken on the normal force with its dashpot,
 *   k_n zeta - c_n du_n/dt, and caps the spring and the tangential dashpot together: their
 *   sum is scaled back onto the limit and the spring takes the difference (LAMMPS:
 *   shear = (fn/fs)(shear + m gamma_t v_t/k_t) - m gamma_t v_t/k_t); with no history at all,
 *   no tangential force;
 * - at the start (S->moves = DEM_MOVES_ZERO: dem_start) the dashpots act on the initial
 *   velocities and the history does not move, as LAMMPS's setup makes a run's first forces.
 * The ledger: the dashpots' work as dashpot_force books it (fd, half now, half after the next
 * step); the spring's as the conventional law's (the trapezoid over the tangential movement,
 * what the elastic energy |f_t|^2/(2 k_t) does not keep is friction's). A pair apart now ends
 * as contact_force ends it. Not inlined: inlined into the pass (where contact_force is, twice)
 * it made the default law's chute step 3-7% slower (release build, one thread). */
static __attribute__((noinline)) void lammps_force(world *W, dem_solver *S, int *cur,
                                                   const dem_params *p, int k, dem_pair *c,
                                                   contact_frame f1, int was_touching, double *acc,
                                                   double diss[2])
{
    int i = c->i, j = c->j;
    double zeta = -f1.gap, k_t = p->law.k_t, dt = W->dt;
    double mu = i >= 0 ? W->detect.mu : W->walls[-1 - i].mu;
    vec3 n = f1.n, ft_old = was_touching ? c->ft : v3_zero();
    c->zeta = zeta;
    if (zeta < 0.0) { /* apart now: no force; the spring's energy is friction's */
        c->ft = v3_zero();
        c->fd = v3_zero();
        if (k_t > 0.0)
            diss[0] += v3_norm2(ft_old) / (2.0 * k_t);
        tally_pair(acc, 0, zeta, 0);
        return;
    }
    vec3 du = relative_movement(W, S, i, j, f1.l0, f1.l1); /* zero at the start */
    vec3 dv = S->moves == DEM_MOVES_ZERO ? velocity_movement(W, i, j, f1.l0, f1.l1) : du;
    double cn = 0.0, ct = 0.0;
    if (p->damp_n > 0.0 || p->damp_t > 0.0)
        dashpot_constants(W, p, i, j, 0, &cn, &ct);
    double dvn = v3_dot(dv, n), dun = v3_dot(du, n);
    vec3 fdn = v3_scale(n, cn * dvn / dt), fdt = v3_scale(v3_axpy(-dvn, n, dv), ct / dt);
    double fn = p->law.k_n * zeta - cn * dvn / dt; /* compressive, with the dashpot */
    vec3 dxi = v3_axpy(-dun, n, du);
    vec3 grown = v3_axpy(k_t, dxi, ft_old);
    vec3 spring = v3_reject(grown, n);
    vec3 fs = v3_add(spring, fdt);
    double limit = mu * fabs(fn), fs_len = v3_norm(fs);
    int sliding = fs_len > limit;
    if (sliding && v3_norm2(grown) > 0.0) {
        spring = v3_sub(v3_scale(fs, limit / fs_len), fdt);
    } else if (sliding) {
        spring = v3_zero();
        fdt = v3_zero();
    }
    if (!(k_t > 0.0)) /* no spring (frictionless): nothing stored */
        spring = v3_zero();
    vec3 fd = v3_add(fdn, fdt);
    vec3 f = v3_add(v3_axpy(-(p->law.k_n * zeta), n, spring), fd);
    diss[1] += 0.5 * v3_dot(fd, du);
    if (k_t > 0.0)
        diss[0] += v3_dot(dxi, v3_scale(v3_add(ft_old, spring), 0.5)) -
                   (v3_norm2(spring) - v3_norm2(ft_old)) / (2.0 * k_t);
    c->ft = spring;
    c->fd = fd;
    deliver(S, cur, n_own(W, S), k, i, j, f, f1);
    tally_pair(acc, v3_norm2(f) > 0.0, zeta, sliding);
}

/* Force of pair k (c) at the end of a step from the step's movements: the contact force on
 * body 1 and its torques on both bodies (deformable discs: the stress terms) delivered to the
 * particles (deliver), the history into c, the statistics into acc[] and the energy dissipated
 * in the step into diss (friction, dashpots). With book set, first the second half of the work
 * of its last dashpot force (see damping_work_before) with the lever arms of the step's start.
 * A pair apart at the end of the step delivers nothing (its force is zero). */
static inline __attribute__((always_inline)) void contact_force(world *W, dem_solver *S, int *cur,
                                                                const dem_params *p, int k,
                                                                int book, double *acc,
                                                                double diss[2])
{
    dem_pair *c = &S->pair[k];
    dem_bond_state *bond = bond_of_pair(S, k);
    if (bond) {
        bond_force(W, S, cur, p, k, c, bond, book, acc, diss);
        return;
    }
    const particles *P = &W->P;
    int i = c->i, j = c->j;
    int was_touching = c->zeta >= 0.0;
    vec3 d = pair_separation(W, i, j);
    if (!was_touching && i >= 0) { /* the common case first: apart before and now */
        double reach = P->r[i] + P->r[j] + 2.0 * S->ext_max;
        if (v3_norm2(d) > reach * reach)
            return;
    }
    contact_frame f1 = frame_now(W, S, i, j, d);
    double zeta_new = -f1.gap;
    if (!was_touching && zeta_new < 0.0)
        return;
    /* the start of the step: lever arms of then, or of now for a pair touching for the first
     * time since it was apart (or a new pair) */
    contact_frame f0 = was_touching ? frame_start(W, S, i, j, d) : f1;
    if (book && was_touching && nonzero(c->fd))
        diss[1] += dashpot_second_half(W, S, c, f0);
    if (S->lammps) {
        lammps_force(W, S, cur, p, k, c, f1, was_touching, acc, diss);
        return;
    }
    dem_law law = p->law;
    law.mu = i >= 0 ? W->detect.mu : W->walls[-1 - i].mu;
    dem_contact_in in;
    in.zeta_new = zeta_new;
    in.zeta_old = was_touching ? c->zeta : -INFINITY;
    in.ft_old = was_touching ? c->ft : v3_zero();
    in.n = f1.n;
    in.du_q = move_du(W, S, j);
    in.dth_q = move_dth(W, S, j);
    body0_move(W, S, i, &in.du_p, &in.dth_p);
    /* lever arms at mid-step: with the end-of-step ones, a rigid rotation by phi per step
     * leaves a false tangential movement ~ phi^2 l / 2 that the spring integrates
     * (objectivity test: 0.59% stress error instead of 0.1%) */
    in.r_p = v3_scale(v3_add(f1.l0, f0.l0), 0.5);
    in.r_q = v3_scale(v3_add(f1.l1, f0.l1), 0.5);
    dem_contact_out out;
    dem_contact_law(&law, &in, &out);
    vec3 f = out.f, fd = v3_zero();
    if (zeta_new >= 0.0 && (p->damp_n > 0.0 || p->damp_t > 0.0)) {
        fd = dashpot_force(W, S, p, i, j, f1, out.sliding, &diss[1]);
        f = v3_add(f, fd);
    }
    c->fd = fd;
    c->ft = out.ft;
    c->zeta = zeta_new;
    if (zeta_new >= 0.0) /* apart: the law's force is zero (its sign bits are not kept) */
        deliver(S, cur, n_own(W, S), k, i, j, f, f1);
    diss[0] += out.dW_t_irrev;
    tally_pair(acc, v3_norm2(f) > 0.0, zeta_new, out.sliding);
}

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
static inline __attribute__((always_inline)) vv3 moves4(const world *W, const dem_solver *S,
                                                        const vec3 *vel, const vec3 *given,
                                                        const int *idx)
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

/* The chunk's sliding pairs that pairs4 left (qo[dl[0..nd-1]], their slide_in in sl beside
 * them), four at a time through slide4, then what pairs4 does after the law: the dashpot's
 * force added, the force on body 1 and its torques. A lane slide4 did not make goes through
 * contact_force after all (ok cleared). */
static void slides4(const dem_params *p, double mu, const slide_in *sl, const int *dl, int nd,
                    quad_out *qo)
{
    const int dashpots = p->damp_n > 0.0 || p->damp_t > 0.0;
    for (int g = 0; g < nd; g += 4) {
        const slide_in *s[4];
        for (int l = 0; l < 4; l++)
            s[l] = &sl[dl[g + l < nd ? g + l : nd - 1]];
        v4m ok;
        vv3 ft, f;
        v4d irrev;
        slide4(&p->law, mu, s, &ok, &ft, &f, &irrev);
        for (int l = 0; l < 4 && g + l < nd; l++) {
            quad_out *q = &qo[dl[g + l]];
            if (!ok[l]) {
                q->ok = 0;
                continue;
            }
            vec3 fl = vv3_lane(f, l);
            if (dashpots)
                fl = v3_add(fl, s[l]->fd);
            vec3 R = v3_scale(fl, -1.0);
            q->R = R;
            q->t1 = v3_cross(s[l]->l1, R);
            q->t0 = v3_cross(s[l]->l0, R);
            q->ft = vv3_lane(ft, l);
            q->diss[0] = 0.0 + irrev[l];
            q->sliding = 1;
            q->active = v3_dot(fl, fl) > 0.0;
        }
    }
}

static void pairs4(const world *W, const dem_solver *S, const dem_params *p, const int *kk,
                   int book, quad_out *o, slide_in *sl)
{
    const dem_law *L = &p->law;
    const v4d zero = {0.0, 0.0, 0.0, 0.0};
    quad_lanes q;
    quad_begin(W, S, kk, 0, &q);
    v4d zeta_new = -q.gap;
    v4d diss1 = book ? dashpot_second_half4(&q) : zero;
    /* the law (dem_contact_law): touching before, lines 19-21 and 45 without slip, then
     * lines 48-53 */
    const double k_n = L->k_n, k_t = L->k_t, mu = W->detect.mu;
    vv3 r_p = vv3_scale(vv3_add(q.l0, q.l00), zero + 0.5),
        r_q = vv3_scale(vv3_add(q.l1, q.l01), zero + 0.5);
    vv3 du =
        vv3_add(vv3_sub(q.duj, q.dui), vv3_sub(vv3_cross(q.dthj, r_q), vv3_cross(q.dthi, r_p)));
    v4d dzeta = -vv3_dot(du, q.n);
    vv3 dxi = vv3_axpy(dzeta, q.n, du);
    v4d fn_new = k_n * zeta_new;
    vv3 ft = vv3_axpy(zero + k_t, dxi, q.fto);
    v4d limit = mu * fn_new;
    v4m ok = (zeta_new >= 0.0) & (q.zeta_old > 0.0) & (k_n * q.zeta_old > 0.0);
    v4m slide = v4_sqrt(vv3_dot(ft, ft)) > limit;
    v4d dW_t = zero + 0.5 * vv3_dot(dxi, vv3_add(q.fto, ft));
    if (!sl) { /* the conventional law's sliding lanes: the trial force scaled onto the limit */
        vv3 onto = vv3_scale(ft, limit / v4_sqrt(vv3_dot(ft, ft)));
        v4d dW_slid = vv3_dot(dxi, vv3_scale(vv3_add(q.fto, onto), zero + 0.5));
        ft = VV3_SELECT(slide, onto, ft);
        dW_t = V4_SELECT(slide, dW_slid, dW_t);
    }
    if (L->projection)
        ft = vv3_axpy(-vv3_dot(ft, q.n), q.n, ft);
    v4d spin = zero;
    if (L->twirl) {
        spin = 0.5 * vv3_dot(vv3_add(q.dthi, q.dthj), q.n);
        ok &= (spin < 1e-2) & (spin > -1e-2);
        ft = twirl4(ft, q.n, spin);
    }
    vv3 f = vv3_axpy(-fn_new, q.n, ft);
    v4d rev = k_t > 0.0 ? (vv3_dot(ft, ft) - vv3_dot(q.fto, q.fto)) / (2.0 * k_t) : zero;
    v4d diss0 = zero + (dW_t - rev);
    /* a sliding lane (a third of the chute's touching pairs): under the Kuhn law left to
     * slides4 (sl; the rest of the pair's lane made here is not used), under the conventional
     * law made above; the dashpot and the delivery in lanes */
    int sliding[4] = {0, 0, 0, 0}, later[4] = {0, 0, 0, 0};
    for (int l = 0; l < 4; l++) {
        if (!(ok[l] && slide[l]))
            continue;
        if (sl)
            later[l] = 1;
        else
            sliding[l] = 1;
    }
    /* the dashpot (dashpot_force) */
    vv3 fd = {zero, zero, zero};
    if (p->damp_n > 0.0 || p->damp_t > 0.0) {
        v4d cn, ct;
        dashpot_constants4(W, p, q.ii, q.jj, &cn, &ct);
        vv3 du_rel = relmove4(q.dui, q.duj, q.dthi, q.dthj, q.l0, q.l1);
        v4d dun = vv3_dot(du_rel, q.n);
        vv3 dut = vv3_axpy(-dun, q.n, du_rel);
        fd = vv3_scale(vv3_axpy(cn * dun, q.n, vv3_scale(dut, ct)), zero + 1.0 / W->dt);
        diss1 += 0.5 * vv3_dot(fd, du_rel);
        f = vv3_add(f, fd);
    }
    quad_store(o, ok, f, q.l0, q.l1, fd, ft, zeta_new, diss0, diss1, sliding);
    for (int l = 0; l < 4; l++) {
        o[l].slide = later[l];
        if (later[l])
            sl[l] = (slide_in){.n = vv3_lane(q.n, l),
                               .dxi = vv3_lane(dxi, l),
                               .ft_old = vv3_lane(q.fto, l),
                               .fd = vv3_lane(fd, l),
                               .l0 = vv3_lane(q.l0, l),
                               .l1 = vv3_lane(q.l1, l),
                               .dzeta = dzeta[l],
                               .zeta_old = q.zeta_old[l],
                               .zeta_new = zeta_new[l],
                               .spin = spin[l]};
    }
}

/* dem.tangential = lammps, four pairs at once: contact_force's common case (rigid particles
 * touching before and after the step, their movements those of the velocities) through
 * lammps_force, each lane with its operations in their order (the same bits:
 * unit_pair_lanes_match_one_by_one). A lane apart now is marked and its pair goes through
 * contact_force after all; nothing is written here. */
static void lammps4(const world *W, const dem_solver *S, const dem_params *p, const int *kk,
                    int book, quad_out *o)
{
    const v4d zero = {0.0, 0.0, 0.0, 0.0};
    quad_lanes q;
    quad_begin(W, S, kk, 1, &q); /* the radii as lever arms (radius_arms) */
    v4d zeta = -q.gap;
    v4d diss1 = book ? dashpot_second_half4(&q) : zero;
    const double k_n = p->law.k_n, k_t = p->law.k_t, dt = W->dt, mu = W->detect.mu;
    vv3 du = relmove4(q.dui, q.duj, q.dthi, q.dthj, q.l0, q.l1);
    v4d cn = zero, ct = zero;
    if (p->damp_n > 0.0 || p->damp_t > 0.0)
        dashpot_constants4(W, p, q.ii, q.jj, &cn, &ct);
    v4d dun = vv3_dot(du, q.n);
    vv3 fdn = vv3_scale(q.n, cn * dun / dt), fdt = vv3_scale(vv3_axpy(-dun, q.n, du), ct / dt);
    v4d fn = k_n * zeta - cn * dun / dt;
    vv3 dxi = vv3_axpy(-dun, q.n, du);
    vv3 grown = vv3_axpy(zero + k_t, dxi, q.fto);
    vv3 spring = vv3_axpy(-vv3_dot(grown, q.n), q.n, grown);
    vv3 fs = vv3_add(spring, fdt);
    v4d limit = mu * v4_abs(fn), fs_len = v4_sqrt(vv3_dot(fs, fs));
    v4m sliding = fs_len > limit, grew = vv3_dot(grown, grown) > 0.0;
    vv3 capped = vv3_sub(vv3_scale(fs, limit / fs_len), fdt), none = {zero, zero, zero};
    spring = VV3_SELECT(sliding, VV3_SELECT(grew, capped, none), spring);
    fdt = VV3_SELECT(sliding & ~grew, none, fdt);
    if (!(k_t > 0.0))
        spring = none;
    vv3 fd = vv3_add(fdn, fdt);
    vv3 f = vv3_add(vv3_axpy(-(k_n * zeta), q.n, spring), fd);
    diss1 += 0.5 * vv3_dot(fd, du);
    v4d diss0 = zero;
    if (k_t > 0.0)
        diss0 = zero + (vv3_dot(dxi, vv3_scale(vv3_add(q.fto, spring), zero + 0.5)) -
                        (vv3_dot(spring, spring) - vv3_dot(q.fto, q.fto)) / (2.0 * k_t));
    int slid[4];
    for (int l = 0; l < 4; l++) {
        slid[l] = sliding[l] != 0;
        o[l].slide = 0;
    }
    quad_store(o, zeta >= 0.0, f, q.l0, q.l1, fd, spring, zeta, diss0, diss1, slid);
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

/* Deformable discs: the shapes (ellipses) of the stresses in S->sig, the largest reach beyond a
 * radius, and the strain along each load's direction. With t finite, the work of the loads in
 * the step that ended at t on the movement of their points of action by the strain (the point
 * s = -r u of a load F = |F| u moves by eps s: work -r |F| u . d eps . u, trapezoid of |F|
 * over the step) is added to work_external (this process's own particles). */
static void shapes(const world *W, dem_solver *S, const dem_params *p, double t)
{
    const particles *P = &W->P;
    int nown = n_own(W, S);
    double ext = 0.0, f_mean = 0.0;
    if (isfinite(t))
        f_mean = 0.5 * (world_load_factor(W, t - W->dt) + world_load_factor(W, t));
    xsum work;
    xsum_init(&work);
#pragma omp parallel for schedule(static) reduction(max : ext) reduction(xsum_merge : work)
    for (int i = 0; i < P->n; i++) {
        double eps[3];
        dem_deform_strain(p->young, p->poisson, &S->sig[3 * i], eps);
        S->ell[i] = dem_deform_ellipse(P->r[i], eps);
        ext = fmax(ext, S->ell[i].a - P->r[i]);
        double fm = v3_norm(P->f_ext[i]), e = 0.0;
        if (fm > 0.0) {
            vec3 u = v3_scale(P->f_ext[i], 1.0 / fm);
            e = eps[0] * u.x * u.x + eps[1] * u.y * u.y + 2.0 * eps[2] * u.x * u.y;
            if (i < nown && isfinite(t))
                xsum_add(&work, -(P->r[i] * fm * f_mean * (e - S->eload[i])));
        }
        S->eload[i] = e;
    }
    xsum_merge(&S->acc[DEM_ACC_WORK_EXTERNAL], &work);
    S->ext_max = S->dist ? S->dist->max(S->dist, ext) : ext;
}

void dem_deform_shapes(const world *W, dem_solver *S, const dem_params *p)
{
    shapes(W, S, p, NAN);
}

/* Deformable discs: each particle's stress from its contacts' terms (gathered into S->sig) and
 * its load at time t (acting at the surface point it pushes on, s = -r F/|F|), divided by
 * V = pi r^2 thickness (a distributed run: its own particles, then the halo copies' stresses
 * from their owners); then the shapes. */
static status deform_update(world *W, dem_solver *S, const dem_params *p, double t, diag *err)
{
    const particles *P = &W->P;
    double loaded = world_load_factor(W, t);
    int nown = n_own(W, S);
#pragma omp parallel for schedule(static)
    for (int i = 0; i < nown; i++) {
        double *s = &S->sig[3 * i];
        vec3 F = v3_scale(P->f_ext[i], loaded);
        double fm = v3_norm(F);
        if (fm > 0.0) {
            double term[3];
            dem_deform_term(v3_scale(F, -P->r[i] / fm), F, term);
            for (int k = 0; k < 3; k++)
                s[k] += term[k];
        }
        double V = CDLAB_PI * P->r[i] * P->r[i] * p->thickness;
        for (int k = 0; k < 3; k++)
            s[k] /= V;
    }
    status st = S->dist ? S->dist->halo_values(S->dist, S->sig, 3, err) : CDLAB_OK;
    if (st == CDLAB_OK)
        shapes(W, S, p, t);
    return st;
}

/* The pairs of list[k0..k1) that contact_force must see, in list order, into live[]; returns
 * how many. The others were apart at the end of the last step and are out of reach now (two
 * particles farther apart than their radii and reaches): contact_force would leave them
 * untouched and deliver nothing, by the same test. Made without branches (apart or not is a
 * coin toss pair by pair: a branch mispredicted; 56-60% of the chute's listed pairs are apart,
 * 2026-11-26). common[e]: live[e] is of pairs4's case as far as its record tells (read here
 * already rather than again after the block's scan: the pass 1% faster). */
/* live_pairs streams the pair records (64 bytes each) to test three fields; the hardware did not
 * keep them coming: the load of a record's j was 18% of the pass outside pairs4 (perf). A prefetch
 * 32 records (2 kB) ahead: chute, 1 thread, 15.0-15.3 -> 14.2-14.8 ms per step on this VM (8
 * ahead: 14.6-14.9; 16: 14.3-14.5; 64 as 32).
 * It also prefetches body 1's data that the block's pass reads after it: the position and
 * radius of the pair 16 ahead (read here), and the velocities, 1/m (pairs4), force, torque and
 * block (the delivery) of this pair's body 1, which lie up to a few hundred particles away from
 * body 0's (body 0's are read in order). For every listed pair, apart or not: a prefetch whose
 * address waits for the test (or for the record's overlap) was slower than the lines wasted on
 * the pairs found apart. Chute, the pass (compute_forces) timed step by step, prefetching on
 * every other step of one run (this VM's speed drifts by 10% between runs): 1 thread 20% less
 * time (13.9 -> 11.1 ms), 2 threads 7-11% less (5.7-6.4 -> 5.3-5.7 ms). */
#define LIVE_AHEAD 32
#define LIVE_BODY_AHEAD 16
static int live_pairs(const world *W, const dem_solver *S, int k0, int k1, int *live,
                      unsigned char *common)
{
    const particles *P = &W->P;
    const dem_pair *pr = S->pair;
    const int bonds = S->bond_of != NULL;
    const double ext2 = 2.0 * S->ext_max;
    const int last = S->npair - 1;
    int n = 0;
    for (int k = k0; k < k1; k++) {
        prefetch_line(&pr[k + LIVE_AHEAD < last ? k + LIVE_AHEAD : last]);
        int i = pr[k].i, j = pr[k].j;
        int ii = i >= 0 ? i : j; /* a wall pair is always live */
        vec3 d = pbox_delta(&P->box, P->x[ii], P->x[j]);
        double reach = P->r[ii] + P->r[j] + ext2;
        int out = (i >= 0) & !(pr[k].zeta >= 0.0) & (v3_norm2(d) > reach * reach);
        if (bonds)
            out &= S->bond_of[k] < 0;
        const int ka = k + LIVE_BODY_AHEAD < last ? k + LIVE_BODY_AHEAD : last;
        prefetch_line(&P->x[pr[ka].j]);
        prefetch_line(&P->r[pr[ka].j]);
        prefetch_line(&P->v[j]);
        prefetch_line(&P->w[j]);
        prefetch_line(&P->inv_m[j]);
        prefetch_line(&S->F[j]);
        prefetch_line(&S->T[j]);
        prefetch_line(&S->home[j]);
        live[n] = k;
        /* pairs4's case (for rigid particles: the pass asks that too): not a wall pair,
         * touching at the step's start, no bond, counted by this process */
        common[n] =
            (i >= 0) & (pr[k].zeta >= 0.0) & (!bonds || S->bond_of[k] < 0) & counted(S, &pr[k]);
        n += !out;
    }
    return n;
}

/* Each thread's bins for the step's exact sums (compute_forces: friction and dashpots;
 * kick_drift: the external work): zero from the thread's start and left zero by every flush, so
 * that no step zeroes their 33 kB (a small run's whole step takes a few microseconds). */
static _Thread_local xsum_bins step_bins[2];

/* Contact forces at the end of a step from the step's movements (all zero at t = 0), then
 * each particle's total force and torque (and, for deformable discs, the contact part of its
 * stress). */
static void compute_forces(world *W, dem_solver *S, const dem_params *p, int book, dem_stats *st)
{
    int np = S->npair, nb = n_blocks(np), nown = n_own(W, S), nwb = S->nwb;
    const int *wbs = S->wbs;
    /* pairs4 covers rigid particles (not the ellipses of deformable discs), and dashpots that
     * do not depend on the law's sliding flag (their force is made before slides4's law), with
     * cdlab's laws; lammps4 the lammps law's (rigid particles: its only case) after the start
     * (whose dashpots act on the velocities) */
    const int quad =
        !S->ell && !S->one_by_one &&
        (S->lammps ? S->moves != DEM_MOVES_ZERO : !(p->damp_t > 0.0 && p->damp_t_stick_only));
    /* the Kuhn law's sliding pairs of each chunk four at a time (slides4) */
    const int kuhn = p->law.tangential == DEM_KUHN;
    /* the sums start at +0: those of the particles that sum in the pass here (all bits zero,
     * as memset would make them, on the threads), the side rows in the pass (a pair apart
     * delivers nothing) */
    int nside = S->nside;
#pragma omp parallel for schedule(static) if (nown > CDLAB_PARALLEL_MIN)
    for (int i = 0; i < nown; i++) {
        S->F[i] = S->T[i] = v3_zero();
        if (S->ell)
            S->sig[3 * i] = S->sig[3 * i + 1] = S->sig[3 * i + 2] = 0.0;
    }
    /* the energy dissipated in the step, summed exactly pair by pair: the same bits for any
     * thread count and, as each pair is counted by one rank, for any number of ranks */
    xsum fric, damp;
    xsum_init(&fric);
    xsum_init(&damp);
    /* one write-back block per task: its pairs in list order on one thread (deliver); the
     * energies through each thread's bins (xsum_bins: an integer addition per value) */
#pragma omp parallel reduction(xsum_merge : fric, damp)
    {
        xsum_bins *fric_bins = &step_bins[0], *damp_bins = &step_bins[1];
#pragma omp for schedule(dynamic, 1)
        for (int w = 0; w < nwb; w++) {
            int b_end = n_blocks(wbs[w + 1]), cur = side_row_from(S, wbs[w]);
            /* the block's side rows zeroed by the thread that writes them next: they grow with
             * the write-back blocks (chute, 2 threads: 35,500 rows, 2.6 MB), and zeroed with the
             * particles' sums before the pass they took 0.35-0.43 ms of its 14 ms step, now
             * 0.16-0.17 with the pass 0.1-0.35 ms shorter all the same (2026-11-29) */
            int row_end = wbs[w + 1] < np ? side_row_from(S, wbs[w + 1]) : nside;
            if (row_end > cur) {
                memset(&S->side[3 * cur], 0, (size_t)(row_end - cur) * 3 * sizeof *S->side);
                if (S->ell)
                    memset(&S->side_sig[6 * cur], 0,
                           (size_t)(row_end - cur) * 6 * sizeof *S->side_sig);
            }
            for (int b = wbs[w] / DEM_BLOCK; b < b_end; b++) {
                double acc[DEM_NSUM] = {0, 0, 0, -INFINITY, 0};
                int end = (b + 1) * DEM_BLOCK < np ? (b + 1) * DEM_BLOCK : np;
                int live[DEM_BLOCK];
                unsigned char common[DEM_BLOCK];
                int nlive = live_pairs(W, S, b * DEM_BLOCK, end, live, common);
                for (int e0 = 0; e0 < nlive; e0 += QUAD_CHUNK) {
                    int e1 = e0 + QUAD_CHUNK < nlive ? e0 + QUAD_CHUNK : nlive;
                    /* the chunk's pairs of the common case, four at a time (pairs4), then every
                     * pair in list order: applied, or through contact_force */
                    quad_out qo[QUAD_CHUNK + 3];
                    slide_in sl[QUAD_CHUNK + 3];
                    int lane[QUAD_CHUNK], cand[QUAD_CHUNK], nc = 0;
                    for (int e = e0; e < e1; e++) {
                        lane[e - e0] = quad && common[e] ? nc : -1;
                        if (quad && common[e])
                            cand[nc++] = live[e];
                    }
                    for (int q = 0; q < nc; q += 4) {
                        int kk[4];
                        for (int l = 0; l < 4; l++)
                            kk[l] = cand[q + l < nc ? q + l : nc - 1];
                        if (S->lammps)
                            lammps4(W, S, p, kk, book, &qo[q]);
                        else
                            pairs4(W, S, p, kk, book, &qo[q], kuhn ? &sl[q] : NULL);
                    }
                    if (kuhn) {
                        int dl[QUAD_CHUNK], nd = 0;
                        for (int q = 0; q < nc; q++)
                            if (qo[q].slide)
                                dl[nd++] = q;
                        slides4(p, W->detect.mu, sl, dl, nd, qo);
                    }
                    for (int e = e0; e < e1; e++) {
                        int k = live[e];
                        double diss[2] = {0.0, 0.0};
                        if (lane[e - e0] >= 0 && qo[lane[e - e0]].ok) {
                            apply4(S, &cur, nown, k, &qo[lane[e - e0]], acc, diss);
                        } else if (counted(S, &S->pair[k])) {
                            contact_force(W, S, &cur, p, k, book, acc, diss);
                        } else { /* its energies and statistics are another rank's */
                            double other[DEM_NSUM] = {0, 0, 0, -INFINITY, 0};
                            contact_force(W, S, &cur, p, k, book, other, diss);
                            acc[BLK_MAX_OVERLAP] =
                                fmax(acc[BLK_MAX_OVERLAP], other[BLK_MAX_OVERLAP]);
                            continue;
                        }
                        xsum_bins_add(fric_bins, &fric, diss[0]);
                        xsum_bins_add(damp_bins, &damp, diss[1]);
                    }
                }
                memcpy(&S->blk[DEM_NSUM * b], acc, sizeof acc);
            }
        }
        xsum_bins_flush(fric_bins, &fric);
        xsum_bins_flush(damp_bins, &damp);
    }
    xsum_merge(&S->acc[DEM_ACC_FRICTION], &fric);
    xsum_merge(&S->acc[DEM_ACC_DAMPING], &damp);
    /* the straddlers: their pairs' side rows in contact order. Without branches (they
     * mispredicted: body 0 or 1 at random): body 1 receives R and l1 x R, body 0 -R and
     * -(l0 x R), as sign * R and b1 t1 - b0 t0 (exact: products by 0 and +-1). */
    const int *ss = S->sadj_start, *sa = S->sadj;
    const int last_side = S->nstrad > 0 ? ss[S->nstrad] - 1 : 0;
#pragma omp parallel for schedule(static)
    for (int r = 0; r < S->nstrad; r++) {
        int i = S->strad[r];
        vec3 F = v3_zero(), T = v3_zero();
        double sig[3] = {0.0, 0.0, 0.0};
        for (int e = ss[r]; e < ss[r + 1]; e++) {
            /* the row 16 sides ahead (two lines: 72 bytes), written in the pass by any thread:
             * chute, 2 threads (6,100 straddlers, 45,000 sides), 0.33-0.35 -> 0.27 ms */
            const char *ahead =
                (const char *)&S->side[3 * (sa[e + 16 < last_side ? e + 16 : last_side] >> 1)];
            prefetch_line(ahead);
            prefetch_line(ahead + 64);
            int row = sa[e] >> 1;
            const vec3 *g = &S->side[3 * row];
            double b1 = (double)(sa[e] & 1), b0 = 1.0 - b1, sign = b1 - b0;
            F = v3_axpy(sign, g[0], F);
            T = v3_add(T, v3_sub(v3_scale(g[1], b1), v3_scale(g[2], b0)));
            if (S->ell)
                for (int q = 0; q < 3; q++)
                    sig[q] += S->side_sig[6 * row + 3 * !(sa[e] & 1) + q];
        }
        S->F[i] = F;
        S->T[i] = T;
        if (S->ell)
            memcpy(&S->sig[3 * i], sig, sizeof sig);
    }
    memset(S->piston_F, 0, (size_t)W->n_walls * sizeof *S->piston_F);
    for (int e = 0; e < S->n_wall_pairs; e++) {
        int row = S->wall_rows[e], w = -1 - S->pair[S->side_pair[row]].i;
        S->piston_F[w] -= v3_dot(S->side[3 * row], W->walls[w].n);
    }
    if (S->dist)
        S->dist->pistons(S->dist, W, S);
    double max_ov = 0.0;
    for (int b = 0; b < nb; b++)
        max_ov = fmax(max_ov, S->blk[DEM_NSUM * b + BLK_MAX_OVERLAP]);
    S->bonds_broken += (long)block_sum(S, nb, BLK_BROKEN);
    st->n_contacts = np;
    if (S->dist) {
        st->n_contacts = 0;
        for (int k = 0; k < np; k++)
            st->n_contacts += counted(S, &S->pair[k]);
    }
    st->n_active = (int)block_sum(S, nb, BLK_ACTIVE);
    st->mean_overlap = st->n_active > 0 ? block_sum(S, nb, BLK_OVERLAP) / st->n_active : 0.0;
    st->n_sliding = (int)block_sum(S, nb, BLK_SLIDING);
    st->max_overlap = max_ov;
}

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

/* Total non-contact force on particle i at a time when the fraction `loaded` of the loads acts
 * (world_load_factor: gravity and loads). */
static inline vec3 external_force(const world *W, int i, double loaded)
{
    vec3 f = v3_scale(W->gravity, W->P.m[i]);
    if (loaded > 0.0)
        f = v3_axpy(loaded, W->P.f_ext[i], f);
    return dof_project_lin(W->P.dimension, f);
}

/* A full rebuild of the neighbour list (pairs within the skin detect.gap): the candidates in
 * key order, merged with the previous list so that surviving pairs keep their history. */
static status rebuild_list(world *W, dem_solver *S, diag *err);
static status rebuild(world *W, dem_solver *S, const dem_params *p, diag *err)
{
    status s;
    if (S->dist && (s = S->dist->redistribute(S->dist, W, S, p, err)) != CDLAB_OK)
        return s;
    s = rebuild_list(W, S, err);
    /* a distributed run: the list is this rank's alone, the forces that follow exchange */
    return S->dist ? S->dist->agree(S->dist, s, err) : s;
}

/* Keeps the pairs of list[0..n) that carry a history (ever touched since they were listed, or a
 * tangential or dashpot force), in order; returns how many. A pair without one is, bit for bit,
 * the entry a new pair gets: {i, j, -INFINITY, 0, 0}. */
static int compact_history(dem_pair *list, int n)
{
    static const vec3 zero; /* all bits zero: -0.0 is a history */
    int m = 0;
    for (int k = 0; k < n; k++) {
        const dem_pair *c = &list[k];
        if (c->zeta != -INFINITY || memcmp(&c->ft, &zero, sizeof zero) != 0 ||
            memcmp(&c->fd, &zero, sizeof zero) != 0)
            list[m++] = *c;
    }
    return m;
}

/* Moves list[0..n) to list[to..to + n) (to >= 0), in slabs from the end, giving back the pages
 * of the old place below the new one as they are read (written again from the start, they are
 * not held twice meanwhile: at 1,049,600 spheres one memmove of the 144 MB of histories held
 * 100 MB more for a moment). */
static void shift_histories(dem_pair *list, int n, int to, size_t cap_bytes)
{
    const int slab = 16384;
    for (int hi = n; hi > 0; hi -= slab) {
        int lo = hi > slab ? hi - slab : 0;
        memmove(list + to + lo, list + lo, (size_t)(hi - lo) * sizeof *list);
        int top = hi < to ? hi : to; /* the part of the old place the new one does not cover */
        if (top > lo)
            discard_range(list, (size_t)lo * sizeof *list, (size_t)top * sizeof *list, cap_bytes);
    }
}

/* The keys of a new list, each once and in key order: the candidates and the intact bonds (a
 * bonded pair stays listed however far apart). */
typedef struct list_keys {
    const pair_ref *ref;
    int nref, b;
    const dem_bond_state *bond;
    int nbond, q;
} list_keys;

static int next_key(list_keys *u, uint64_t *key, int *i, int *j)
{
    while (u->q < u->nbond && !u->bond[u->q].intact)
        u->q++;
    if (u->b >= u->nref && u->q >= u->nbond)
        return 0;
    uint64_t kr = u->b < u->nref ? u->ref[u->b].key : UINT64_MAX,
             kb = u->q < u->nbond ? u->bond[u->q].key : UINT64_MAX;
    *key = kr < kb ? kr : kb;
    *i = kr <= kb ? u->ref[u->b].i : u->bond[u->q].i;
    *j = kr <= kb ? u->ref[u->b].j : u->bond[u->q].j;
    u->b += kr == *key;
    u->q += kb == *key;
    return 1;
}

/* Gives back the pages of what a rebuild makes afresh, before the new list is written (their
 * contents are dead there): the write-back's index (build_writeback), the paths (zeroed at the
 * rebuild's end), the particles' contact forces and torques (every rebuild is followed by
 * compute_forces, which zeroes them first; a distributed run moved them with their particles
 * before). At 1,049,600 spheres 73 MB, held beside the whole new list and the candidates not
 * yet read. */
static void discard_dead(const world *W, dem_solver *S)
{
    size_t sp = (size_t)S->side_pair_cap * sizeof *S->side_pair,
           pc = (size_t)S->cap * sizeof *S->path, vc = (size_t)S->cap * sizeof *S->F;
    discard_range(S->side_pair, 0, sp, sp);
    discard_range(S->path, 0, (size_t)W->P.n * sizeof *S->path, pc);
    discard_range(S->F, 0, (size_t)W->P.n * sizeof *S->F, vc);
    discard_range(S->T, 0, (size_t)W->P.n * sizeof *S->T, vc);
}

static void remake_side_rows(const world *W, dem_solver *S);
static status rebuild_list(world *W, dem_solver *S, diag *err)
{
    status s;
    int nref;
    /* The old list keeps only its pairs that carry a history (the others equal a new pair, bit
     * for bit), at its start, and gives back the pages of the rest before the candidates are
     * found: the whole list and the candidates alive together made the peak of the process
     * (issue 19: 1,049,600 spheres, 642 MB against 563 MB between rebuilds). */
    dem_pair *B = S->pair;
    S->indexed = S->bonds_linked = 0; /* the list changes from here on */
    S->list_skin = W->detect.gap;
    int nold = compact_history(B, S->npair);
    S->npair = nold;
    big_release(B, (size_t)nold * sizeof *B, (size_t)S->pair_cap * sizeof *B);
    if ((s = contacts_find_pairs(&S->grid, &W->P, W->walls, W->n_walls, W->detect.gap, &S->refs,
                                 &nref, &S->ref_cap, err)) != CDLAB_OK) {
        /* the shorter list indexed again, its side rows' forces remade from the pairs' state
         * (as a restart does), so that the failed state's row reads each pair's own force */
        if (index_contact_list(S, W, &(diag){{0}}) == CDLAB_OK)
            remake_side_rows(W, S);
        return s;
    }
    cells_free(&S->grid); /* made afresh at every rebuild: not kept in between */
    if (S->dist) { /* the pairs of this rank's particles (not two halo copies, not a wall and
                      a copy) */
        int m = 0;
        for (int b = 0; b < nref; b++) {
            const pair_ref *r = &S->refs[b];
            if (r->j < S->n_owned || (r->i >= 0 && r->i < S->n_owned))
                S->refs[m++] = *r;
        }
        nref = m;
    }
    /* The new list is merged in the old one's buffer (issue 19: no second pair buffer). Of the
     * old list's pairs with a history, those listed again stay, in key order at its start;
     * counting the new list's n keys on the way. They are moved to the buffer's end, and the
     * list is written from the start: the k-th history still to place lies at or after the k-th
     * key still to write, so nothing is overwritten before it is read. A list that outgrows the
     * buffer takes a new one. The candidates' pages are given back as they are read, and those
     * of what the rebuild makes afresh (discard_dead) before the list is written. */
    int ns = 0, n = 0, a = 0, i, j;
    uint64_t key;
    list_keys u = {S->refs, nref, 0, S->bond, S->nbond, 0};
    while (next_key(&u, &key, &i, &j)) {
        n++;
        while (a < nold && contact_pair_key(B[a].i, B[a].j, &W->P, W->n_walls) < key)
            a++;
        if (a < nold && B[a].i == i && B[a].j == j)
            B[ns++] = B[a++];
    }
    S->npair = ns; /* a valid list (key order) whatever fails next */
    int in_place = B && n <= S->pair_cap;
    if (!in_place) {
        int cap = 0;
        dem_pair *grown = NULL;
        if ((s = grow_pairs(&grown, &cap, n, err)) != CDLAB_OK)
            return s;
        if (ns > 0)
            memcpy(grown + (n - ns), B, (size_t)ns * sizeof *B);
        free(B);
        S->pair = B = grown;
        S->pair_cap = cap;
    }
    /* what the rebuild makes afresh is given back before the histories' move touches the pages
     * above the compacted list (at 65,600 spheres the move with them still held made the run's
     * peak, 3.5 MB above its steps) */
    discard_dead(W, S);
    if (in_place && ns > 0)
        shift_histories(B, ns, n - ns, (size_t)S->pair_cap * sizeof *B);
    size_t ref_bytes = (size_t)S->ref_cap * sizeof *S->refs;
    u = (list_keys){S->refs, nref, 0, S->bond, S->nbond, 0};
    a = n - ns;
    for (int m = 0; next_key(&u, &key, &i, &j); m++) {
        B[m] = a < n && B[a].i == i && B[a].j == j ? B[a++]
                                                   : (dem_pair){i, j, -INFINITY, v3_zero(), v3_zero()};
        if ((m & 0xffff) == 0xffff) /* the candidates read so far (next_key reads u.b on) */
            discard_range(S->refs, 0, (size_t)u.b * sizeof *S->refs, ref_bytes);
    }
    S->npair = n;
    /* a list that shrank gives back the pages it no longer uses */
    big_release(B, (size_t)n * sizeof *B, (size_t)S->pair_cap * sizeof *B);
    free(S->refs); /* made afresh at every rebuild */
    S->refs = NULL;
    S->ref_cap = 0;
    if ((s = index_contact_list(S, W, err)) != CDLAB_OK)
        return s;
    memset(S->path, 0, (size_t)W->P.n * sizeof *S->path);
    S->wall_path = 0.0;
    S->rebuilds++;
    return CDLAB_OK;
}

/* After the particles moved (pmax: the longest path since the last rebuild): could a pair
 * outside the list have come within reach? */
static int needs_rebuild(const world *W, dem_solver *S, double pmax)
{
    double skin = W->detect.gap;
    if (S->dist) /* every rank decides alike */
        pmax = S->dist->max(S->dist, pmax);
    /* deformable discs reach up to ext_max beyond their radii (0 for rigid ones) */
    return 2.0 * (pmax + S->ext_max) >= skin || pmax + S->ext_max + S->wall_path >= skin ||
           !(skin > 0.0) || skin > S->list_skin;
}

/* Contacts and forces after a movement to time t: a rebuild (booking the old list's dashpot
 * work first), or the fused geometry update and force computation; then the deformable discs'
 * stresses and shapes. */
static status contacts_and_forces(world *W, dem_solver *S, const dem_params *p, double pmax,
                                  double t, dem_stats *st, diag *err)
{
    if (needs_rebuild(W, S, pmax)) {
        status s;
        damping_work_before(W, S);
        if ((s = rebuild(W, S, p, err)) != CDLAB_OK)
            return s;
        compute_forces(W, S, p, 0, st);
    } else {
        compute_forces(W, S, p, 1, st);
    }
    return S->ell ? deform_update(W, S, p, t, err) : CDLAB_OK;
}

status dem_prepare(world *W, dem_solver *S, const dem_params *p, diag *err)
{
    return ensure(S, W, p, err);
}

/* Pair k's force on body 1 from its state at the end of the last step, as the law made it:
 * R = -f with f = -(k_n zeta) n + f_t (a bond: k_n h n + f_t, h = gap - gap0 with the step's gap
 * -zeta), plus the dashpot's force; +0 for a frictional pair apart. The normal of now is the
 * step's (it depends on the centres only, also for deformable discs). */
static vec3 remade_force(const world *W, const dem_solver *S, int k)
{
    const dem_pair *c = &S->pair[k];
    const dem_bond_state *b = bond_of_pair(S, k);
    if (!(c->zeta >= 0.0) && !b)
        return v3_zero();
    contact_frame f1 = frame_now(W, S, c->i, c->j, pair_separation(W, c->i, c->j));
    vec3 f = b ? v3_axpy(S->k_n * (-c->zeta - b->gap0), f1.n, c->ft)
               : v3_axpy(-(S->k_n * c->zeta), f1.n, c->ft);
    if (S->dashpots)
        f = v3_add(f, c->fd);
    return v3_scale(f, -1.0);
}

/* Each side row's force from its pair's state (remade_force), after the list was indexed anew. */
static void remake_side_rows(const world *W, dem_solver *S)
{
    for (int r = 0; r < S->nside; r++)
        S->side[3 * r] = remade_force(W, S, S->side_pair[r]);
}

status dem_resume(world *W, dem_solver *S, const dem_params *p, diag *err)
{
    status s;
    if ((s = ensure(S, W, p, err)) != CDLAB_OK)
        return s;
    if ((s = index_contact_list(S, W, err)) != CDLAB_OK)
        return s;
    if (S->ell)
        dem_deform_shapes(W, S, p);
    /* the side rows' forces of the end of the last step, for the output (the particles' sums
     * are the checkpoint's; the next step makes everything afresh) */
    remake_side_rows(W, S);
    S->started = 1;
    return CDLAB_OK;
}

vec3 dem_pair_force(const world *W, const dem_solver *S, int k)
{
    int row = k < S->indexed ? side_row(S, k) : -1;
    return row >= 0 ? S->side[3 * row] : remade_force(W, S, k);
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
    if (S->ell || S->lammps) { /* deformable discs: the gap between the ellipses; lammps: the
                                   lever arms of the radii */
        contact_frame f = frame_now(W, S, pr->i, pr->j, pair_separation(W, pr->i, pr->j));
        c->gap = f.gap;
        c->a0 = f.a0;
        c->a1 = f.a1;
    }
}

/* dem.bond: every particle pair of the list closer than bond_gap is bonded (at the start). */
static status make_bonds(world *W, dem_solver *S, const dem_params *p, diag *err)
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
    return index_contact_list(S, W, err); /* the bonds linked, bonded pairs given side rows */
}

status dem_start(world *W, dem_solver *S, const dem_params *p, dem_stats *st, diag *err)
{
    status s = ensure(S, W, p, err);
    if (s != CDLAB_OK)
        return s;
    memset(S->piston_ds, 0, (size_t)W->n_walls * sizeof *S->piston_ds);
    int far = particles_wrap(&W->P);
    if (far >= 0)
        return particles_wrap_error(&W->P, far, W->step, err);
    if ((s = rebuild(W, S, p, err)) != CDLAB_OK)
        return s;
    if (S->ell) { /* unstressed discs to begin with */
        memset(S->sig, 0, (size_t)W->P.n * 3 * sizeof *S->sig);
        memset(S->eload, 0, (size_t)W->P.n * sizeof *S->eload);
        dem_deform_shapes(W, S, p);
    }
    if (p->bond && (s = make_bonds(W, S, p, err)) != CDLAB_OK)
        return s;
    S->moves = DEM_MOVES_ZERO; /* the forces of the initial state: nothing moved */
    compute_forces(W, S, p, 0, st);
    S->moves = DEM_MOVES_VELOCITY;
    if (S->ell && (s = deform_update(W, S, p, W->t, err)) != CDLAB_OK)
        return s;
    S->started = 1;
    /* a distributed run's ledger merges over the ranks: its engine starts it once every rank
     * got here */
    return S->dist ? CDLAB_OK : dem_ledger_start(W, S, p, err);
}

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
        xsum_bins *work_bins = &step_bins[0];
#pragma omp for schedule(static)
        for (int b = 0; b < nb; b++) {
            double pmax = 0.0;
            int end = (b + 1) * DEM_BLOCK < n ? (b + 1) * DEM_BLOCK : n;
            vec3 dth[DEM_BLOCK]; /* the block's rotations, for the quaternions */
            for (int i = b * DEM_BLOCK; i < end; i++) {
                vec3 fe0 = external_force(W, i, load0);
                vec3 f = v3_add(dof_project_lin(dim, S->F[i]), fe0);
                vec3 v = v3_axpy(h * P->inv_m[i], f, P->v[i]);
                vec3 w = v3_axpy(h * P->inv_I[i], dof_project_ang(dim, S->T[i]), P->w[i]);
                P->v[i] = v;
                P->w[i] = w;
                vec3 du = v3_scale(v, dt); /* = move_du(W, S, i) in the forces that follow */
                dth[i - b * DEM_BLOCK] = v3_scale(w, dt);
                /* with the loads unchanged, fe0 itself ((a + a) / 2 = a) */
                vec3 fe =
                    load1 == load0 ? fe0 : v3_scale(v3_add(fe0, external_force(W, i, load1)), 0.5);
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
        vec3 f = v3_add(dof_project_lin(dim, S->F[i]), external_force(W, i, load));
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
static status check_overlaps(const world *W, dem_solver *S, const dem_params *p,
                             const dem_stats *st, diag *err)
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
    if ((s = ensure(S, W, p, err)) != CDLAB_OK)
        return s;
    double t = W->t, t_new = (double)(W->step + 1) * W->dt;
    int far;
    double pmax = kick_drift(W, S, t, t_new, &far);
    if (far < n_own(W, S)) /* before the detection, which needs every particle in the box */
        return particles_wrap_error(&W->P, far, W->step + 1, err);
    pistons_kick_drift(W, S, t, t_new);
    if (S->dist && (s = S->dist->refresh(S->dist, W, S, err)) != CDLAB_OK)
        return s;
    if ((s = contacts_and_forces(W, S, p, pmax, t_new, st, err)) != CDLAB_OK)
        return s;
    W->t = t_new;
    W->step++;
    int bad = kick(W, S, t_new), nown = n_own(W, S);
    if (p->abort_overlap > 0.0 && bad == nown && (s = check_overlaps(W, S, p, st, err)) != CDLAB_OK)
        return s;
    if (bad < nown)
        return diag_set(err, CDLAB_ERR_NUMERIC,
                        "step %ld: particle %d has a non-finite position or velocity "
                        "(time step above the critical one?)",
                        W->step, W->P.id[bad]);
    return CDLAB_OK;
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
        s = contacts_and_forces(W, S, p, pmax, (double)(W->step + 1) * W->dt, st, err);
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

/* The write-back plan of the pair pass (dem_solver: the blocks, each particle's home block
 * or its side rows): made at each rebuild so that every particle's force is summed in its
 * pairs' key order, whatever the number of threads. */
#include "dem/dem_stage.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
 * The block counts per thread and the weights were chosen by timing the chute (bench/PROFILE.md,
 * "Measured choices": write-back blocks). */
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
 * straddler or a bond), the straddlers' contact sides in contact order, the wall pairs' rows.
 * Long: a counting pass and a filling pass over the same blocks and particles, sharing their
 * cursors and per-block tallies; split, each half needs the other's arrays. */
status dem_build_writeback(dem_solver *S, const world *W, diag *err)
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

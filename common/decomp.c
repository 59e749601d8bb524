/* Recursive coordinate bisection: see decomp.h. */
#include "decomp.h"

#include "comm.h"
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct item {
    double key, w;
    int idx;
} item;

static int by_key(const void *a, const void *b)
{
    const item *p = a, *q = b;
    if (p->key != q->key)
        return p->key < q->key ? -1 : 1;
    return (p->idx > q->idx) - (p->idx < q->idx);
}

static double comp(vec3 v, int a)
{
    return a == 0 ? v.x : a == 1 ? v.y : v.z;
}

static void set_comp(vec3 *v, int a, double c)
{
    if (a == 0)
        v->x = c;
    else if (a == 1)
        v->y = c;
    else
        v->z = c;
}

/* The axes by extent, longest first (ties: the lower axis first). */
static void axis_order(const double *ext, int dim, int *order)
{
    order[0] = 0, order[1] = 1, order[2] = 2;
    for (int i = 0; i < dim; i++)
        for (int j = i + 1; j < dim; j++)
            if (ext[order[j]] > ext[order[i]]) {
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
}

/* The cut of a node with no two distinct positions along any axis: the middle of its box where
 * that is finite, else the items' common coordinate (c; n: how many), else 0. */
static double middle_cut(vec3 lo, vec3 hi, int axis, int n, double c)
{
    double a = comp(lo, axis), b = comp(hi, axis);
    return isfinite(a) && isfinite(b) ? 0.5 * (a + b) : n > 0 ? c : 0.0;
}

/* The whole box: the period along periodic axes, unbounded along the others. */
static void root_box(const pbox *box, vec3 *lo, vec3 *hi)
{
    *lo = v3(-INFINITY, -INFINITY, -INFINITY), *hi = v3(INFINITY, INFINITY, INFINITY);
    for (int a = 0; a < 3; a++)
        if (box->periodic[a]) {
            set_comp(lo, a, comp(box->lo, a));
            set_comp(hi, a, comp(box->lo, a) + comp(box->L, a));
        }
}

typedef struct builder {
    decomp *D;
    const vec3 *x;
    const double *w;
    int dim;
    item *tmp;
} builder;

/* The index k (0 < k < n) of the cut between items k-1 and k of the sorted items, at distinct
 * keys, whose lower weight is nearest to target; 0 when all keys are equal. */
static int cut_index(const item *it, int n, double target)
{
    double below = 0.0;
    int best = 0;
    double best_err = INFINITY;
    for (int k = 1; k < n; k++) {
        below += it[k - 1].w;
        if (it[k].key == it[k - 1].key)
            continue;
        double e = fabs(below - target);
        if (e < best_err) {
            best_err = e;
            best = k;
        }
    }
    return best;
}

/* Node for parts [first, first + p) and the items idx[0..n-1] inside box [lo, hi); returns
 * the child code (node index, or -1 - part). */
static int build(builder *B, int first, int p, int *idx, int n, vec3 lo, vec3 hi)
{
    decomp *D = B->D;
    if (p == 1) {
        D->lo[first] = lo;
        D->hi[first] = hi;
        return -1 - first;
    }
    int pl = p / 2, node = D->nodes++;
    /* the axes by the extent of the items (the box's where it is finite and they are none) */
    double ext[3] = {0, 0, 0};
    for (int a = 0; a < B->dim; a++) {
        double mn = INFINITY, mx = -INFINITY;
        for (int k = 0; k < n; k++) {
            double c = comp(B->x[idx[k]], a);
            mn = fmin(mn, c);
            mx = fmax(mx, c);
        }
        ext[a] =
            n > 0 ? mx - mn : (isfinite(comp(hi, a) - comp(lo, a)) ? comp(hi, a) - comp(lo, a) : 0);
    }
    int order[3];
    axis_order(ext, B->dim, order);
    double total = 0.0;
    for (int k = 0; k < n; k++)
        total += B->w ? B->w[idx[k]] : 1.0;
    double target = total * pl / p;
    int axis = order[0], k = 0;
    for (int t = 0; t < B->dim; t++) { /* the longest axis that has two distinct keys */
        axis = order[t];
        for (int m = 0; m < n; m++)
            B->tmp[m] = (item){comp(B->x[idx[m]], axis), B->w ? B->w[idx[m]] : 1.0, idx[m]};
        qsort(B->tmp, (size_t)n, sizeof *B->tmp, by_key);
        if ((k = cut_index(B->tmp, n, target)) > 0)
            break;
    }
    double cut;
    if (k > 0) {
        cut = 0.5 * (B->tmp[k - 1].key + B->tmp[k].key);
    } else { /* no two distinct positions: the middle of the box, or of the items */
        axis = order[0];
        cut = middle_cut(lo, hi, axis, n, n > 0 ? comp(B->x[idx[0]], axis) : 0.0);
        for (int m = 0; m < n; m++)
            B->tmp[m] = (item){comp(B->x[idx[m]], axis), 0.0, idx[m]};
        qsort(B->tmp, (size_t)n, sizeof *B->tmp, by_key);
        while (k < n && B->tmp[k].key < cut)
            k++;
    }
    for (int m = 0; m < n; m++)
        idx[m] = B->tmp[m].idx;
    D->axis[node] = axis;
    D->cut[node] = cut;
    vec3 hl = hi, lu = lo;
    set_comp(&hl, axis, cut);
    set_comp(&lu, axis, cut);
    int left = build(B, first, pl, idx, k, lo, hl);
    int right = build(B, first + pl, p - pl, idx + k, n - k, lu, hi);
    D->child[2 * node] = left;
    D->child[2 * node + 1] = right;
    return node;
}

static status decomp_alloc(decomp *D, int parts, const pbox *box, diag *err)
{
    memset(D, 0, sizeof *D);
    D->parts = parts;
    D->box = *box;
    size_t np = (size_t)parts;
    D->axis = malloc(np * sizeof *D->axis);
    D->cut = malloc(np * sizeof *D->cut);
    D->child = malloc(2 * np * sizeof *D->child);
    D->lo = malloc(np * sizeof *D->lo);
    D->hi = malloc(np * sizeof *D->hi);
    if (!D->axis || !D->cut || !D->child || !D->lo || !D->hi) {
        decomp_free(D);
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the decomposition");
    }
    return CDLAB_OK;
}

status decomp_build(decomp *D, int parts, const vec3 *x, const double *w, int n, int dim,
                    const pbox *box, diag *err)
{
    memset(D, 0, sizeof *D);
    if (parts < 1 || dim < 1 || dim > 3 || n < 0)
        return diag_set(err, CDLAB_ERR_ARG, "decomposition of %d points into %d parts", n, parts);
    int *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
    item *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof *tmp);
    status s = idx && tmp ? decomp_alloc(D, parts, box, err)
                          : diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the decomposition");
    if (s != CDLAB_OK) {
        free(idx);
        free(tmp);
        return s;
    }
    for (int k = 0; k < n; k++)
        idx[k] = k;
    vec3 lo, hi;
    root_box(box, &lo, &hi);
    builder B = {D, x, w, dim, tmp};
    int root = build(&B, 0, parts, idx, n, lo, hi);
    if (parts == 1) { /* a single part: a root that sends everything to part 0 */
        D->nodes = 1;
        D->axis[0] = 0;
        D->cut[0] = INFINITY;
        D->child[0] = D->child[1] = root;
    }
    free(idx);
    free(tmp);
    return CDLAB_OK;
}

/* --- The same cuts from every rank's own points (decomp_build_shared) ------------------------
 * Level by level, the nodes of a level together (one reduction per round for all of them), each
 * rank holding the points of the nodes it has: a node's count, weight and extents reduced;
 * along its cut axis the key v at which the weight up to it first reaches the target, found by
 * a search over the doubles in order (the weights up to 15 keys reduced each round: 16-fold
 * narrower a round), then the keys on either side of it. The weights are integers (counts), so
 * every sum is exact in any order (the library's tree reductions: comm_allreduce_exact), and the
 * cut is the one decomp_build's scan of the sorted keys finds: its boundaries' errors fall up to v
 * and rise after it, and of two equal ones the lower wins. Nodes are numbered as decomp_build
 * numbers them, in pre-order: a node's left child is the next node, its right child pl nodes on. */

/* Doubles in their order as unsigned integers (no NaN). */
static uint64_t key_bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u >> 63 ? ~u : u | 0x8000000000000000ULL;
}

static double key_value(uint64_t u)
{
    u = u >> 63 ? u & 0x7fffffffffffffffULL : ~u;
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* A node of the level being cut: its parts, box, this rank's points idx[off, off + n). */
typedef struct snode {
    int first, p, node, off, n, axis, found;
    vec3 lo, hi;
    double r[8]; /* count, weight, min x y z, max x y z (over every rank) */
    uint64_t blo, bhi;
    double cut, bound;
} snode;

typedef struct shared_builder {
    decomp *D;
    const vec3 *x;
    const double *w;
    int dim, *idx;
    double *buf; /* room for CUT_SLOTS (>= 8) values a node */
    comm_op *ops;
} shared_builder;

static double weight_of(const shared_builder *B, int i)
{
    return B->w ? B->w[i] : 1.0;
}

static double key_of(const shared_builder *B, int m, int axis)
{
    return comp(B->x[B->idx[m]], axis);
}

/* Count, weight and extents of every node of the level; their axes. */
static void level_stats(shared_builder *B, snode *L, int m)
{
    for (int j = 0; j < m; j++) {
        snode *S = &L[j];
        double *r = S->r;
        r[0] = S->n, r[1] = 0.0;
        for (int a = 0; a < 3; a++)
            r[2 + a] = INFINITY, r[5 + a] = -INFINITY;
        for (int q = S->off; q < S->off + S->n; q++) {
            r[1] += weight_of(B, B->idx[q]);
            for (int a = 0; a < B->dim; a++) {
                r[2 + a] = fmin(r[2 + a], key_of(B, q, a));
                r[5 + a] = fmax(r[5 + a], key_of(B, q, a));
            }
        }
        for (int k = 0; k < 8; k++) {
            B->buf[8 * j + k] = r[k];
            B->ops[8 * j + k] = k < 2 ? COMM_SUM : k < 5 ? COMM_MIN : COMM_MAX;
        }
    }
    comm_allreduce_exact(B->buf, B->ops, 8 * m);
    for (int j = 0; j < m; j++) {
        snode *S = &L[j];
        memcpy(S->r, B->buf + 8 * j, sizeof S->r);
        double ext[3] = {0, 0, 0};
        for (int a = 0; a < B->dim; a++)
            ext[a] = S->r[0] > 0 ? S->r[5 + a] - S->r[2 + a]
                                 : (isfinite(comp(S->hi, a) - comp(S->lo, a))
                                        ? comp(S->hi, a) - comp(S->lo, a)
                                        : 0);
        int order[3];
        axis_order(ext, B->dim, order);
        S->axis = order[0], S->found = 0;
        for (int t = 0; t < B->dim && S->r[0] > 0 && !S->found; t++) /* two distinct keys */
            if (S->r[5 + order[t]] > S->r[2 + order[t]])
                S->axis = order[t], S->found = 1;
        if (S->found)
            S->blo = key_bits(S->r[2 + S->axis]), S->bhi = key_bits(S->r[5 + S->axis]);
        else
            S->cut = S->bound = middle_cut(S->lo, S->hi, S->axis, S->r[0] > 0, S->r[2 + S->axis]);
    }
}

static double target_of(const snode *S)
{
    return S->r[1] * (S->p / 2) / S->p;
}

/* The search for the smallest key with weight(<=) >= target narrows [blo, bhi] CUT_PIVOTS + 1
 * fold a round (the weight at CUT_PIVOTS keys between them reduced at once), so 17 rounds
 * where a bisection over the 64-bit keys took 64, to the key it finds: the weight up to a key
 * only grows with it. A node's slots in the builder's buffer: CUT_SLOTS. */
enum { CUT_PIVOTS = 15, CUT_SLOTS = 16 };

/* The keys of the node's next round, in order, all in [blo, bhi): returns their count. */
static int round_pivots(const snode *S, uint64_t *p)
{
    uint64_t step = (S->bhi - S->blo) / (CUT_PIVOTS + 1);
    int k = 0;
    if (step == 0)
        for (uint64_t u = S->blo; u < S->bhi; u++)
            p[k++] = u;
    else
        for (int i = 1; i <= CUT_PIVOTS; i++)
            p[k++] = S->blo + step * (uint64_t)i;
    return k;
}

/* This rank's weight at the node's pivots: w[i] the weight of its keys in (p[i-1], p[i]]
 * (compared as doubles, as the cut is). */
static void pivot_weights(const shared_builder *B, const snode *S, const uint64_t *p, int np,
                          double *w)
{
    double t[CUT_PIVOTS];
    for (int i = 0; i < np; i++)
        t[i] = key_value(p[i]), w[i] = 0.0;
    for (int q = S->off; q < S->off + S->n; q++) {
        double c = key_of(B, q, S->axis);
        int lo = 0, hi = np; /* the first pivot at or above c */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (c <= t[mid])
                hi = mid;
            else
                lo = mid + 1;
        }
        if (lo < np)
            w[lo] += weight_of(B, B->idx[q]);
    }
}

/* The cuts of the level's nodes with an axis: the searches together, then the keys beside. */
static void level_cuts(shared_builder *B, snode *L, int m)
{
    for (;;) { /* a round for every node at once */
        int open = 0;
        for (int j = 0; j < m; j++) {
            snode *S = &L[j];
            double *w = B->buf + CUT_SLOTS * j;
            for (int i = 0; i < CUT_SLOTS; i++)
                w[i] = 0.0, B->ops[CUT_SLOTS * j + i] = COMM_SUM;
            if (!S->found || S->blo >= S->bhi)
                continue;
            open = 1;
            uint64_t p[CUT_PIVOTS];
            pivot_weights(B, S, p, round_pivots(S, p), w);
        }
        if (!open) /* the same on every rank: the bounds are */
            break;
        comm_allreduce_exact(B->buf, B->ops, CUT_SLOTS * m);
        for (int j = 0; j < m; j++) {
            snode *S = &L[j];
            if (!S->found || S->blo >= S->bhi)
                continue;
            uint64_t p[CUT_PIVOTS];
            int np = round_pivots(S, p), i = 0;
            double sum = 0.0, target = target_of(S);
            while (i < np && (sum += B->buf[CUT_SLOTS * j + i]) < target)
                i++;
            if (i < np) /* the first pivot that reaches the target, after one that does not */
                S->blo = i > 0 ? p[i - 1] + 1 : S->blo, S->bhi = p[i];
            else
                S->blo = p[np - 1] + 1;
        }
    }
    for (int j = 0; j < m; j++) { /* weight below and up to v, the keys beside it */
        snode *S = &L[j];
        double v = key_value(S->blo), *r = B->buf + 4 * j;
        r[0] = r[1] = 0.0, r[2] = INFINITY, r[3] = -INFINITY;
        for (int q = S->off; q < S->off + S->n && S->found; q++) {
            double c = key_of(B, q, S->axis), wt = weight_of(B, B->idx[q]);
            r[0] += c < v ? wt : 0.0;
            r[1] += c <= v ? wt : 0.0;
            if (c > v)
                r[2] = fmin(r[2], c);
            if (c < v)
                r[3] = fmax(r[3], c);
        }
        B->ops[4 * j] = B->ops[4 * j + 1] = COMM_SUM;
        B->ops[4 * j + 2] = COMM_MIN, B->ops[4 * j + 3] = COMM_MAX;
    }
    comm_allreduce_exact(B->buf, B->ops, 4 * m);
    for (int j = 0; j < m; j++) {
        snode *S = &L[j];
        if (!S->found)
            continue;
        double v = key_value(S->blo), *r = B->buf + 4 * j, target = target_of(S);
        /* the boundary at v (below it r[0] < target), or at the next key (r[1] >= target) */
        int lower =
            r[3] > -INFINITY && (!(r[2] < INFINITY) || fabs(r[0] - target) <= fabs(r[1] - target));
        S->bound = lower ? v : r[2];
        S->cut = lower ? 0.5 * (r[3] + v) : 0.5 * (v + r[2]);
    }
}

/* The level's nodes cut: recorded in the tree, their points split, the next level's nodes in
 * next (returns how many). */
static int level_split(shared_builder *B, const snode *L, int m, snode *next)
{
    decomp *D = B->D;
    int k = 0;
    for (int j = 0; j < m; j++) {
        const snode *S = &L[j];
        int below = S->off; /* this rank's points below the boundary first */
        for (int q = S->off; q < S->off + S->n; q++)
            if (key_of(B, q, S->axis) < S->bound) {
                int t = B->idx[below];
                B->idx[below++] = B->idx[q];
                B->idx[q] = t;
            }
        D->axis[S->node] = S->axis;
        D->cut[S->node] = S->cut;
        int pl = S->p / 2;
        vec3 hl = S->hi, lu = S->lo;
        set_comp(&hl, S->axis, S->cut);
        set_comp(&lu, S->axis, S->cut);
        snode kid[2] = {{.first = S->first,
                         .p = pl,
                         .node = S->node + 1,
                         .off = S->off,
                         .n = below - S->off,
                         .lo = S->lo,
                         .hi = hl},
                        {.first = S->first + pl,
                         .p = S->p - pl,
                         .node = S->node + pl,
                         .off = below,
                         .n = S->off + S->n - below,
                         .lo = lu,
                         .hi = S->hi}};
        for (int c = 0; c < 2; c++) {
            if (kid[c].p == 1) {
                D->lo[kid[c].first] = kid[c].lo;
                D->hi[kid[c].first] = kid[c].hi;
                D->child[2 * S->node + c] = -1 - kid[c].first;
            } else {
                D->child[2 * S->node + c] = kid[c].node;
                next[k++] = kid[c];
            }
        }
    }
    return k;
}

status decomp_build_shared(decomp *D, int parts, const vec3 *x, const double *w, int n, int dim,
                           const pbox *box, diag *err)
{
    memset(D, 0, sizeof *D);
    if (parts < 1 || dim < 1 || dim > 3 || n < 0)
        return diag_set(err, CDLAB_ERR_ARG, "decomposition of %d points into %d parts", n, parts);
    size_t half = (size_t)parts / 2 + 1; /* the most nodes a level has */
    int *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
    snode *L = malloc(half * sizeof *L), *next = malloc(half * sizeof *next);
    double *buf = malloc(CUT_SLOTS * half * sizeof *buf);
    comm_op *ops = malloc(CUT_SLOTS * half * sizeof *ops);
    status s = idx && L && next && buf && ops
                   ? decomp_alloc(D, parts, box, err)
                   : diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the decomposition");
    /* every rank builds the tree or none (a failed allocation would leave the others waiting) */
    if ((s = comm_agree(s, err)) == CDLAB_OK) {
        for (int k = 0; k < n; k++)
            idx[k] = k;
        shared_builder B = {D, x, w, dim, idx, buf, ops};
        vec3 lo, hi;
        root_box(box, &lo, &hi);
        if (parts == 1) { /* a single part: a root that sends everything to part 0 */
            D->nodes = 1;
            D->axis[0] = 0;
            D->cut[0] = INFINITY;
            D->child[0] = D->child[1] = -1;
            D->lo[0] = lo;
            D->hi[0] = hi;
        } else {
            D->nodes = parts - 1;
            int m = 1;
            L[0] = (snode){.first = 0, .p = parts, .node = 0, .off = 0, .n = n, .lo = lo, .hi = hi};
            while (m > 0) {
                level_stats(&B, L, m);
                level_cuts(&B, L, m);
                m = level_split(&B, L, m, next);
                snode *t = L;
                L = next, next = t;
            }
        }
    } else
        decomp_free(D);
    free(idx);
    free(L);
    free(next);
    free(buf);
    free(ops);
    return s;
}

void decomp_free(decomp *D)
{
    free(D->axis);
    free(D->cut);
    free(D->child);
    free(D->lo);
    free(D->hi);
    memset(D, 0, sizeof *D);
}

int decomp_owner(const decomp *D, vec3 x)
{
    int c = 0;
    while (c >= 0)
        c = D->child[2 * c + (comp(x, D->axis[c]) < D->cut[c] ? 0 : 1)];
    return -1 - c;
}

static void near_from(const decomp *D, int c, vec3 x, double range, unsigned char *hit)
{
    if (c < 0) {
        hit[-1 - c] = 1;
        return;
    }
    double v = comp(x, D->axis[c]);
    if (v - range < D->cut[c])
        near_from(D, D->child[2 * c], x, range, hit);
    if (v + range >= D->cut[c])
        near_from(D, D->child[2 * c + 1], x, range, hit);
}

int decomp_near(const decomp *D, vec3 x, double range, int *out)
{
    unsigned char stack_hit[256], *hit = D->parts <= 256 ? stack_hit : calloc((size_t)D->parts, 1);
    if (!hit)
        return -1;
    memset(hit, 0, (size_t)D->parts);
    /* x and its periodic images within range of the periodic box */
    for (int sx = -1; sx <= 1; sx++)
        for (int sy = -1; sy <= 1; sy++)
            for (int sz = -1; sz <= 1; sz++) {
                int s[3] = {sx, sy, sz};
                vec3 y = x;
                int skip = 0;
                for (int a = 0; a < 3 && !skip; a++) {
                    if (s[a] == 0)
                        continue;
                    if (!D->box.periodic[a]) {
                        skip = 1;
                        break;
                    }
                    double L = comp(D->box.L, a), lo = comp(D->box.lo, a);
                    double c = comp(x, a) + s[a] * L;
                    if (c + range < lo || c - range >= lo + L)
                        skip = 1;
                    set_comp(&y, a, c);
                }
                if (!skip)
                    near_from(D, 0, y, range, hit);
            }
    int m = 0;
    for (int p = 0; p < D->parts; p++)
        if (hit[p])
            out[m++] = p;
    if (hit != stack_hit)
        free(hit);
    return m;
}

status parallel_read(struct config *c, parallel_params *par, diag *err)
{
    status s =
        config_double(c, "parallel", "rebalance", 0, 1.2, 1.0, 0, INFINITY, &par->rebalance, err);
    if (s == CDLAB_OK)
        s = config_int(c, "parallel", "rebalance_every", 0, 0, 0, __LONG_MAX__,
                       &par->rebalance_every, err);
    return s;
}

int parallel_rebalance_due(const parallel_params *par, double load, long redistributions)
{
    double v[2] = {load, load};
    comm_allreduce(v, 1, COMM_MAX);
    comm_allreduce(v + 1, 1, COMM_SUM);
    double mean = v[1] / comm_size();
    if (par->rebalance_every > 0 && redistributions % par->rebalance_every == 0)
        return 1;
    return mean > 0.0 && v[0] > par->rebalance * mean;
}

/* Recursive coordinate bisection: see decomp.h. */
#include "decomp.h"

#include "comm.h"
#include "config.h"

#include <math.h>
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
    int order[3] = {0, 1, 2};
    for (int i = 0; i < B->dim; i++)
        for (int j = i + 1; j < B->dim; j++)
            if (ext[order[j]] > ext[order[i]]) {
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
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
        double a = comp(lo, axis), b = comp(hi, axis);
        cut = isfinite(a) && isfinite(b) ? 0.5 * (a + b) : n > 0 ? comp(B->x[idx[0]], axis) : 0.0;
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

status decomp_build(decomp *D, int parts, const vec3 *x, const double *w, int n, int dim,
                    const pbox *box, diag *err)
{
    memset(D, 0, sizeof *D);
    if (parts < 1 || dim < 1 || dim > 3 || n < 0)
        return diag_set(err, CDLAB_ERR_ARG, "decomposition of %d points into %d parts", n, parts);
    D->parts = parts;
    D->box = *box;
    size_t np = (size_t)parts;
    D->axis = malloc(np * sizeof *D->axis);
    D->cut = malloc(np * sizeof *D->cut);
    D->child = malloc(2 * np * sizeof *D->child);
    D->lo = malloc(np * sizeof *D->lo);
    D->hi = malloc(np * sizeof *D->hi);
    int *idx = malloc((size_t)(n > 0 ? n : 1) * sizeof *idx);
    item *tmp = malloc((size_t)(n > 0 ? n : 1) * sizeof *tmp);
    if (!D->axis || !D->cut || !D->child || !D->lo || !D->hi || !idx || !tmp) {
        free(idx);
        free(tmp);
        decomp_free(D);
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate the decomposition");
    }
    for (int k = 0; k < n; k++)
        idx[k] = k;
    vec3 lo = v3(-INFINITY, -INFINITY, -INFINITY), hi = v3(INFINITY, INFINITY, INFINITY);
    for (int a = 0; a < 3; a++)
        if (box->periodic[a]) {
            set_comp(&lo, a, comp(box->lo, a));
            set_comp(&hi, a, comp(box->lo, a) + comp(box->L, a));
        }
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

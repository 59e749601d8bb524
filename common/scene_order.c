/* The particles' storage order (particles.order): renumbered along a Z-order curve where the
 * input lies in no spatial order, so that neighbours in space are neighbours in memory. */
#include "scene.h"
#include "scene_parts.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bits of c spread over every dim-th bit of the result (bit b to bit dim b). */
static uint64_t spread_bits(uint64_t c, int dim, int bits)
{
    uint64_t z = 0;
    for (int b = 0; b < bits; b++)
        z |= ((c >> b) & 1u) << (dim * b);
    return z;
}

typedef struct order_key {
    uint64_t z;
    int i;
} order_key;

static int cmp_order_key(const void *a, const void *b)
{
    const order_key *p = a, *q = b;
    return p->z < q->z ? -1 : p->z > q->z ? 1 : p->i - q->i;
}

/* Element size bytes of the array base rearranged so that element k is what was element
 * from[k]; tmp holds n elements. */
static void permute(void *base, size_t size, const int *from, int n, void *tmp)
{
    char *b = base, *t = tmp;
    for (int k = 0; k < n; k++)
        memcpy(t + (size_t)k * size, b + (size_t)from[k] * size, size);
    memcpy(b, t, (size_t)n * size);
}

/* The mean distance between particles next to each other in storage, in mean diameters
 * (scene_info.storage_spread). */
static double storage_spread(const particles *P)
{
    int n = P->n;
    if (n < 2)
        return 0.0;
    double dist = 0.0, diam = 0.0;
    for (int i = 0; i < n; i++) {
        diam += 2.0 * P->r[i];
        if (i > 0)
            dist += v3_norm(v3_sub(P->x[i], P->x[i - 1]));
    }
    return diam > 0.0 ? dist / (double)(n - 1) / (diam / (double)n) : 0.0;
}

/* particles.order = spatial: the particles renumbered along a Z-order (Morton) curve through
 * cells of the largest diameter, ties in input order; every per-particle array follows, the ids
 * become the new indices and info->input_index keeps the input index of each. Particles near
 * in space are then near in memory and in the contact lists' key order (which follows the
 * ids): a DEM chute of 1,049,600 spheres stored in random order took 2.3x as long per step as
 * the same spheres in the tiled file's order (bench/PROFILE.md, session 30). The results are
 * those of a run whose input lists the particles in the new order. auto (the default): spatial
 * for SCENE_ORDER_AUTO_N particles or more stored in no spatial order (storage_spread above
 * SCENE_ORDER_AUTO_SPREAD), given otherwise; a function of the input alone (not of
 * contact.detect_gap, which a restart may change), so that a restart decides as its run did.
 * The resolved parameter records the order taken. */
status scene_order_particles(config *c, world *W, scene_info *info, diag *err)
{
    const char *orders[] = {"given", "spatial", "auto", NULL};
    enum { ORDER_GIVEN, ORDER_SPATIAL, ORDER_AUTO };
    int order;
    status s;
    if ((s = config_enum(c, "particles", "order", 0, ORDER_AUTO, orders, &order, err)))
        return s;
    if (W->P.n >= SCENE_ORDER_AUTO_N) /* auto's test, and the given order's hint (run_setup.c) */
        info->storage_spread = storage_spread(&W->P);
    if (order == ORDER_AUTO) {
        info->order_auto = info->storage_spread > SCENE_ORDER_AUTO_SPREAD;
        order = info->order_auto ? ORDER_SPATIAL : ORDER_GIVEN;
        config_record(c, "particles", "order", "%s", orders[order]);
    }
    if (order == ORDER_GIVEN)
        return CDLAB_OK;
    particles *P = &W->P;
    int n = P->n, dim = P->dimension, bits = 63 / dim;
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    double dmax = 0.0;
    for (int i = 0; i < n; i++) {
        const double x[3] = {P->x[i].x, P->x[i].y, P->x[i].z};
        for (int a = 0; a < dim; a++) {
            lo[a] = fmin(lo[a], x[a]);
            hi[a] = fmax(hi[a], x[a]);
        }
        dmax = fmax(dmax, 2.0 * P->r[i]);
    }
    /* cells of the largest diameter, fewer where an axis would need more than 2^bits */
    double h = dmax;
    const double cmax = (double)((1ull << bits) - 1);
    for (int a = 0; a < dim; a++)
        h = fmax(h, (hi[a] - lo[a]) / cmax);
    order_key *key = malloc((size_t)(n > 0 ? n : 1) * sizeof *key);
    int *from = malloc((size_t)(n > 0 ? n : 1) * sizeof *from);
    void *tmp = malloc((size_t)(n > 0 ? n : 1) * 4 * sizeof(double));
    if (!key || !from || !tmp) {
        free(key);
        free(from);
        free(tmp);
        return diag_set(err, CDLAB_ERR_NOMEM, "particles.order: out of memory (%d particles)", n);
    }
    for (int i = 0; i < n; i++) {
        const double x[3] = {P->x[i].x, P->x[i].y, P->x[i].z};
        uint64_t z = 0;
        for (int a = 0; a < dim; a++) {
            double cell = h > 0.0 ? floor((x[a] - lo[a]) / h) : 0.0;
            z |= spread_bits((uint64_t)fmin(fmax(cell, 0.0), cmax), dim, bits) << a;
        }
        key[i] = (order_key){z, i};
    }
    qsort(key, (size_t)n, sizeof *key, cmp_order_key);
    for (int k = 0; k < n; k++)
        from[k] = key[k].i;
    free(key);
    permute(P->x, sizeof *P->x, from, n, tmp);
    permute(P->v, sizeof *P->v, from, n, tmp);
    permute(P->w, sizeof *P->w, from, n, tmp);
    permute(P->q, 4 * sizeof *P->q, from, n, tmp);
    /* the loads only where there are some: a zero array was never written (calloc), and its
     * pages are not the process's until they are (1,049,600 particles: 25 MB) */
    int loads = 0;
    const vec3 none = {0.0, 0.0, 0.0};
    for (int i = 0; i < n && !loads; i++)
        loads = memcmp(&P->f_ext[i], &none, sizeof none) != 0; /* -0.0 too */
    if (loads)
        permute(P->f_ext, sizeof *P->f_ext, from, n, tmp);
    permute(P->r, sizeof *P->r, from, n, tmp);
    permute(P->m, sizeof *P->m, from, n, tmp);
    permute(P->inv_m, sizeof *P->inv_m, from, n, tmp);
    permute(P->inv_I, sizeof *P->inv_I, from, n, tmp);
    permute(P->image, 3 * sizeof *P->image, from, n, tmp);
    permute(P->frozen, sizeof *P->frozen, from, n, tmp);
    free(tmp);
    for (int k = 0; k < n; k++)
        P->id[k] = k;
    info->input_index = from;
    info->n_input = n;
    return CDLAB_OK;
}

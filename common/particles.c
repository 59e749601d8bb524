#include "particles.h"
#include "vec3x4.h"

#include "grow.h"
#include "parallel.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

status particles_init(particles *P, int n, int dimension, diag *err)
{
    memset(P, 0, sizeof *P);
    if (n < 0)
        return diag_set(err, CDLAB_ERR_ARG, "particle count must be >= 0 (got %d)", n);
    int cap = n > 0 ? n : 1;
    P->n = n;
    P->cap = cap;
    P->dimension = dimension;
    P->x = big_alloc((size_t)cap * sizeof *P->x);
    if (P->x)
        memset(P->x, 0, (size_t)cap * sizeof *P->x);
    P->v = big_alloc((size_t)cap * sizeof *P->v);
    if (P->v)
        memset(P->v, 0, (size_t)cap * sizeof *P->v);
    P->w = big_alloc((size_t)cap * sizeof *P->w);
    if (P->w)
        memset(P->w, 0, (size_t)cap * sizeof *P->w);
    P->q = calloc((size_t)cap * 4, sizeof *P->q);
    P->f_ext = calloc((size_t)cap, sizeof *P->f_ext);
    P->r = calloc((size_t)cap, sizeof *P->r);
    P->m = calloc((size_t)cap, sizeof *P->m);
    P->inv_m = calloc((size_t)cap, sizeof *P->inv_m);
    P->inv_I = calloc((size_t)cap, sizeof *P->inv_I);
    P->id = calloc((size_t)cap, sizeof *P->id);
    P->image = calloc((size_t)cap * 3, sizeof *P->image);
    P->frozen = calloc((size_t)cap, sizeof *P->frozen);
    if (!P->image || !P->frozen || !P->x || !P->v || !P->w || !P->q || !P->f_ext || !P->r ||
        !P->m || !P->inv_m || !P->inv_I || !P->id) {
        particles_free(P);
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot allocate %d particles", n);
    }
    for (int i = 0; i < cap; i++) {
        P->q[4 * i] = 1.0;
        P->id[i] = i;
    }
    return CDLAB_OK;
}

void particles_free(particles *P)
{
    free(P->x);
    free(P->v);
    free(P->w);
    free(P->q);
    free(P->f_ext);
    free(P->r);
    free(P->m);
    free(P->inv_m);
    free(P->inv_I);
    free(P->id);
    free(P->image);
    free(P->frozen);
    memset(P, 0, sizeof *P);
}

double particles_mass_from_density(int dimension, double radius, double density)
{
    if (dimension == 3)
        return density * 4.0 / 3.0 * CDLAB_PI * radius * radius * radius;
    return density * CDLAB_PI * radius * radius;
}

void particles_set_body(particles *P, int i, double radius, double mass)
{
    P->r[i] = radius;
    P->m[i] = mass;
    P->inv_m[i] = 1.0 / mass;
    double I = (P->dimension == 3 ? 0.4 : 0.5) * mass * radius * radius;
    P->inv_I[i] = 1.0 / I;
}

/* Not SLP-vectorised: GCC 12 at -O3 -march=native turned the product below into a fused
 * vfmaddsub despite -ffp-contract=off (measured: the release build's orientations differed
 * from the -O2 build's in the last bits; no other fused operation in the binary). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-slp-vectorize")))
#endif
void quat_integrate(double *q, vec3 phi)
{
    double a2 = v3_norm2(phi);
    if (a2 == 0.0)
        return;
    double s, c;
    if (a2 < 1e-4) {
        /* |phi| < 1e-2: sin(a/2)/a and cos(a/2) by their series, exact to double precision
         * (the next terms are below 1e-18) */
        double h2 = 0.25 * a2; /* constants as reciprocals: no division */
        s = 0.5 * (1.0 - h2 * (1.0 / 6.0) * (1.0 - h2 * (1.0 / 20.0) * (1.0 - h2 * (1.0 / 42.0))));
        c = 1.0 - h2 * 0.5 * (1.0 - h2 * (1.0 / 12.0) * (1.0 - h2 * (1.0 / 30.0)));
    } else {
        double angle = sqrt(a2);
        s = sin(0.5 * angle) / angle;
        c = cos(0.5 * angle);
    }
    double dw = c, dx = s * phi.x, dy = s * phi.y, dz = s * phi.z;
    double w = q[0], x = q[1], y = q[2], z = q[3];
    /* q' = dq * q (rotation in the space frame) */
    q[0] = dw * w - dx * x - dy * y - dz * z;
    q[1] = dw * x + dx * w + dy * z - dz * y;
    q[2] = dw * y - dx * z + dy * w + dz * x;
    q[3] = dw * z + dx * y - dy * x + dz * w;
    /* renormalise: dq is a unit quaternion to rounding, so |q|^2 = 1 + e with e of a few ulps
     * and one Newton step for 1/sqrt, (3 - |q|^2)/2, is exact to double precision (error
     * e^2); a quaternion further from unit (given so) takes the square root */
    double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    double f = fabs(n2 - 1.0) < 1e-6 ? 0.5 * (3.0 - n2) : 1.0 / sqrt(n2);
    for (int k = 0; k < 4; k++)
        q[k] *= f;
}

void quat_integrate_n(double *restrict q, const vec3 *restrict phi, int n)
{
    /* quat_integrate's series branch, four quaternions at a time, line by line: the same
     * operations in the same order on each (no contraction: -std=c11 sets -ffp-contract=off), so
     * the same bits. The quaternions it does not apply to (phi = 0: unchanged; |phi| >= 1e-2; a
     * quaternion that the renormalisation's Newton step does not cover; NaN) are left as they
     * are and done by quat_integrate, as is the tail. Measured: quat_integrate was 7.8% of the
     * DEM chute's step as a call per particle. */
    int k = 0;
    for (; k + 4 <= n; k += 4) {
        const vec3 *p = phi + k;
        double *qq = q + 4 * (size_t)k;
        v4d px = {p[0].x, p[1].x, p[2].x, p[3].x}, py = {p[0].y, p[1].y, p[2].y, p[3].y},
            pz = {p[0].z, p[1].z, p[2].z, p[3].z};
        v4d w = {qq[0], qq[4], qq[8], qq[12]}, x = {qq[1], qq[5], qq[9], qq[13]},
            y = {qq[2], qq[6], qq[10], qq[14]}, z = {qq[3], qq[7], qq[11], qq[15]};
        v4d a2 = px * px + py * py + pz * pz;
        v4d h2 = 0.25 * a2;
        v4d s = 0.5 * (1.0 - h2 * (1.0 / 6.0) * (1.0 - h2 * (1.0 / 20.0) * (1.0 - h2 * (1.0 / 42.0))));
        v4d c = 1.0 - h2 * 0.5 * (1.0 - h2 * (1.0 / 12.0) * (1.0 - h2 * (1.0 / 30.0)));
        v4d dw = c, dx = s * px, dy = s * py, dz = s * pz;
        v4d q0 = dw * w - dx * x - dy * y - dz * z;
        v4d q1 = dw * x + dx * w + dy * z - dz * y;
        v4d q2 = dw * y - dx * z + dy * w + dz * x;
        v4d q3 = dw * z + dx * y - dy * x + dz * w;
        v4d n2 = q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3;
        v4d f = 0.5 * (3.0 - n2), e = n2 - 1.0;
        v4m series = (a2 < 1e-4) & (a2 != 0.0) & (e < 1e-6) & (e > -1e-6);
        q0 *= f;
        q1 *= f;
        q2 *= f;
        q3 *= f;
        for (int l = 0; l < 4; l++) {
            if (series[l]) {
                qq[4 * l] = q0[l];
                qq[4 * l + 1] = q1[l];
                qq[4 * l + 2] = q2[l];
                qq[4 * l + 3] = q3[l];
            } else {
                quat_integrate(&qq[4 * l], p[l]);
            }
        }
    }
    for (; k < n; k++)
        quat_integrate(&q[4 * (size_t)k], phi[k]);
}

double particles_min_radius(const particles *P)
{
    const double *r = P->r;
    double rmin = INFINITY;
    /* a comparison, not a call of fmin (called every step by the overlap checks) */
#pragma omp parallel for schedule(static) if (P->n > CDLAB_PARALLEL_MIN) reduction(min : rmin)
    for (int i = 0; i < P->n; i++)
        rmin = r[i] < rmin ? r[i] : rmin;
    return rmin;
}

int particles_loaded(const particles *P)
{
    for (int i = 0; i < P->n; i++)
        if (P->f_ext[i].x != 0.0 || P->f_ext[i].y != 0.0 || P->f_ext[i].z != 0.0)
            return 1;
    return 0;
}

void particles_apply_frozen(particles *P)
{
    for (int i = 0; i < P->n; i++)
        if (P->frozen[i]) {
            P->inv_m[i] = 0.0;
            P->inv_I[i] = 0.0;
            P->v[i] = v3_zero();
            P->w[i] = v3_zero();
        }
}

int particles_wrap_across(particles *P, int i)
{
    double *x = &P->x[i].x;
    const double lo[3] = {P->box.lo.x, P->box.lo.y, P->box.lo.z};
    const double L[3] = {P->box.L.x, P->box.L.y, P->box.L.z};
    double k[3] = {0.0, 0.0, 0.0};
    int out[3] = {0, 0, 0};
    for (int a = 0; a < 3; a++) {
        if (!P->box.periodic[a] || (x[a] >= lo[a] && x[a] < lo[a] + L[a]) || !isfinite(x[a]))
            continue;
        k[a] = floor((x[a] - lo[a]) / L[a]);
        out[a] = 1;
        /* the image count must hold it (rounding may add one below) */
        double image = (double)P->image[3 * i + a] + k[a];
        if (!(fabs(image) < (double)INT_MAX - 1.0))
            return 1;
    }
    for (int a = 0; a < 3; a++) {
        if (!out[a])
            continue;
        x[a] -= k[a] * L[a];
        /* rounding can land exactly on lo + L */
        if (x[a] >= lo[a] + L[a]) {
            x[a] -= L[a];
            k[a] += 1.0;
        }
        P->image[3 * i + a] += (int)k[a];
    }
    return 0;
}

int particles_wrap(particles *P)
{
    int bad = P->n;
    if (!P->box.any)
        return -1;
#pragma omp parallel for schedule(static) reduction(min : bad) if (P->n > CDLAB_PARALLEL_MIN)
    for (int i = 0; i < P->n; i++)
        if (particles_wrap_one(P, i) && i < bad)
            bad = i;
    return bad < P->n ? bad : -1;
}

status particles_wrap_error(const particles *P, int i, long step, diag *err)
{
    vec3 x = P->x[i], v = P->v[i];
    return diag_set(err, CDLAB_ERR_NUMERIC,
                    "step %ld: particle %d at (%g, %g, %g) with velocity (%g, %g, %g) lies more "
                    "than 2^31 lengths of the periodic box away from it: its image count cannot "
                    "hold that (a velocity blown up? time step above the critical one?)",
                    step, P->id[i], x.x, x.y, x.z, v.x, v.y, v.z);
}

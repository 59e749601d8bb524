#include "particles.h"

#include "grow.h"

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

void particles_wrap_one(particles *P, int i)
{
    double *x = &P->x[i].x;
    const double lo[3] = {P->box.lo.x, P->box.lo.y, P->box.lo.z};
    const double L[3] = {P->box.L.x, P->box.L.y, P->box.L.z};
    for (int a = 0; a < 3; a++) {
        if (!P->box.periodic[a] || (x[a] >= lo[a] && x[a] < lo[a] + L[a]))
            continue;
        double k = floor((x[a] - lo[a]) / L[a]);
        x[a] -= k * L[a];
        /* rounding can land exactly on lo + L */
        if (x[a] >= lo[a] + L[a]) {
            x[a] -= L[a];
            k += 1.0;
        }
        P->image[3 * i + a] += (int)k;
    }
}

void particles_wrap(particles *P)
{
    if (!P->box.any)
        return;
    for (int i = 0; i < P->n; i++)
        particles_wrap_one(P, i);
}

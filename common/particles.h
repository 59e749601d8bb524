/* Particles: spheres (3D) and disks (2D, and the 1D chain), stored as arrays of fields.
 *
 * Units are whatever the user's config uses, consistently (cdlab has no built-in unit system);
 * the 1D wave test uses d = m = dt = 1.
 *
 * Degrees of freedom (dimension):
 *   1  translation along x only, no rotation
 *   2  translation in the xy plane, rotation about z only
 *   3  free
 * The locks are applied by projecting every velocity change (dof_project_*). */
#ifndef CDLAB_PARTICLES_H
#define CDLAB_PARTICLES_H

#include "status.h"
#include "vec3.h"

/* Periodic box: along every axis with periodic[a] set, positions are kept wrapped into
 * [lo, lo + L) and pairs interact through the minimum image. The unwrapped position is
 * x + image * L (per axis), kept for analysis (displacements, diffusion). */
typedef struct pbox {
    int periodic[3]; /* x, y, z */
    int any;         /* any axis periodic */
    vec3 lo, L;      /* lower corner and period (only the periodic components are used) */
    vec3 inv_L;      /* 1/L along the periodic axes (set with L: pbox_set_period) */
} pbox;

static inline void pbox_set_period(pbox *B, vec3 L)
{
    B->L = L;
    B->inv_L = v3(B->periodic[0] ? 1.0 / L.x : 0.0, B->periodic[1] ? 1.0 / L.y : 0.0,
                  B->periodic[2] ? 1.0 / L.z : 0.0);
}

typedef struct particles {
    int n;                 /* number of particles */
    int cap;               /* allocated capacity */
    int dimension;         /* 1, 2 or 3 (see above) */
    vec3 *x;               /* position of the centre */
    vec3 *v;               /* velocity */
    vec3 *w;               /* angular velocity */
    double *q;             /* orientation quaternion, 4 per particle (w, x, y, z) */
    vec3 *f_ext;           /* constant external force (loads), excluding gravity */
    double *r;             /* radius */
    double *m;             /* mass */
    double *inv_m;         /* 1/m */
    double *inv_I;         /* 1/I with I = 2/5 m r^2 (sphere) or 1/2 m r^2 (disk, dimension <= 2) */
    int *id;               /* stable id, kept apart from the storage index */
    int *image;            /* periodic image counts, 3 per particle (unwrapped = x + image L) */
    unsigned char *frozen; /* 1: never moves (inv_m = inv_I = 0), e.g. a rough base */
    pbox box;
} particles;

status particles_init(particles *P, int n, int dimension, diag *err);
void particles_free(particles *P);
/* Sets radius and mass of particle i and derives inv_m and the moment of inertia. */
void particles_set_body(particles *P, int i, double radius, double mass);
/* Mass of a particle of this radius from a density: sphere volume (3D) or disk area (1D, 2D). */
double particles_mass_from_density(int dimension, double radius, double density);

/* The smallest radius (INFINITY with no particles; NaN radii passed over, as fmin would), on
 * threads for many particles. */
double particles_min_radius(const particles *P);
/* 1 when some particle carries a non-zero external force (f_ext: [load]), else 0. */
int particles_loaded(const particles *P);
/* Sets inv_m = inv_I = 0 for frozen particles (after the bodies are set). */
void particles_apply_frozen(particles *P);
/* Wraps every position into the periodic box, counting the crossings in image. A particle so
 * far out that its image count would leave the int range (2^31 periods: a velocity blown up)
 * is left as it is and reported: particles_wrap_one returns 1 (else 0), particles_wrap the
 * first such particle (-1: none). Non-finite positions are left to the caller's checks. */
int particles_wrap(particles *P);
/* particles_wrap_one for a particle outside the box along a periodic axis (or not finite) */
int particles_wrap_across(particles *P, int i);
/* Inline: the step's drift asks it of every particle, and few cross (the test below is the
 * first one particles_wrap_across makes, axis by axis). */
static inline int particles_wrap_one(particles *P, int i)
{
    const pbox *B = &P->box;
    vec3 x = P->x[i];
    if ((!B->periodic[0] || (x.x >= B->lo.x && x.x < B->lo.x + B->L.x)) &&
        (!B->periodic[1] || (x.y >= B->lo.y && x.y < B->lo.y + B->L.y)) &&
        (!B->periodic[2] || (x.z >= B->lo.z && x.z < B->lo.z + B->L.z)))
        return 0;
    return particles_wrap_across(P, i);
}
/* The error for particle i that particles_wrap could not wrap (the step it was found in). */
status particles_wrap_error(const particles *P, int i, long step, diag *err);
/* Minimum-image separation x_j - x_i. */
static inline vec3 pbox_delta(const pbox *B, vec3 xi, vec3 xj)
{
    vec3 d = v3_sub(xj, xi);
    if (B->any) {
        if (B->periodic[0])
            d.x -= B->L.x * nearbyint(d.x * B->inv_L.x);
        if (B->periodic[1])
            d.y -= B->L.y * nearbyint(d.y * B->inv_L.y);
        if (B->periodic[2])
            d.z -= B->L.z * nearbyint(d.z * B->inv_L.z);
    }
    return d;
}
/* Unwrapped position of particle i. */
static inline vec3 particles_unwrapped(const particles *P, int i)
{
    const int *im = &P->image[3 * i];
    return v3(P->x[i].x + im[0] * P->box.L.x, P->x[i].y + im[1] * P->box.L.y,
              P->x[i].z + im[2] * P->box.L.z);
}

/* DOF projections for a velocity change (linear and angular). */
static inline vec3 dof_project_lin(int dimension, vec3 a)
{
    if (dimension == 1)
        return v3(a.x, 0.0, 0.0);
    if (dimension == 2)
        return v3(a.x, a.y, 0.0);
    return a;
}
static inline vec3 dof_project_ang(int dimension, vec3 a)
{
    if (dimension == 1)
        return v3_zero();
    if (dimension == 2)
        return v3(0.0, 0.0, a.z);
    return a;
}

/* Rotates quaternion q (w,x,y,z) by the rotation vector phi (angle |phi| about phi/|phi|). */
void quat_integrate(double *q, vec3 phi);
/* quat_integrate(&q[4 k], phi[k]) for k in [0, n), bit for bit: its series branch four
 * quaternions at a time in vector lanes (vec3x4.h); the others (no rotation, more than 1e-2 rad
 * a step, off unit) by quat_integrate. */
void quat_integrate_n(double *q, const vec3 *phi, int n);

#endif

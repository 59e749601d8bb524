/* Linear-frictional contact law of Kuhn, Suzuki & Daouadji, "Linear-frictional contact model
 * for 3D discrete element simulations of granular systems", Fig. 1, with the four refinements
 * (fresh contact within a step, onset of slip within a step, rotation of the sliding force
 * direction, projection and twirl), the work increments, and the conventional law beside it.
 *
 * Conventions are the paper's: particles p (body 0) and q (body 1); n is the unit normal at the
 * end of the step, directed outward from p; zeta is the overlap (> 0 touching); the returned
 * force f = -f_n n + f_t acts on p, and -f on q. */
#ifndef CDLAB_DEM_CONTACT_H
#define CDLAB_DEM_CONTACT_H

#include "vec3.h"

/* DEM_LAMMPS: LAMMPS's pair gran/hooke/history, computed in cd/dem/law_lammps.c (lammps_pair), not
 * by dem_contact_law */
typedef enum dem_tangential { DEM_KUHN, DEM_CONVENTIONAL, DEM_LAMMPS } dem_tangential;

typedef struct dem_law {
    double k_n, k_t, mu;
    double eps; /* tolerance of the C ~ 0, A ~ 0 and theta ~ 0 tests (Fig. 1 lines 25, 26, 33) */
    dem_tangential tangential;
    int projection; /* eq. (22) */
    int twirl;      /* eq. (23) */
} dem_law;

typedef struct dem_contact_in {
    double zeta_new;   /* overlap at t + dt */
    double zeta_old;   /* overlap at t; <= 0 or -INFINITY when not touching at t */
    vec3 ft_old;       /* tangential force at t (on p) */
    vec3 n;            /* unit normal at t + dt, from p to q */
    vec3 du_p, du_q;   /* translations of p and q during the step */
    vec3 dth_p, dth_q; /* rotation vectors of p and q during the step */
    vec3 r_p, r_q;     /* contact vectors from the centres to the contact point (at t + dt) */
} dem_contact_in;

typedef struct dem_contact_out {
    double fn;         /* normal force f^n (compressive > 0) */
    vec3 ft;           /* tangential force on p */
    vec3 f;            /* total force on p: -f_n n + f_t (eq. 3) */
    double W_n;        /* stored normal energy f_n^2 / (2 k_n) (line 51) */
    double dW_t;       /* tangential work increment (lines 18, 28, 44) */
    double dW_t_rev;   /* reversible part (line 52) */
    double dW_t_irrev; /* irreversible (friction) part (line 53) */
    double dzeta;      /* normal movement of the step (eq. 6) */
    vec3 dxi;          /* tangential movement of the step (eq. 6) */
    int sliding;       /* the friction limit was reached in the step */
} dem_contact_out;

void dem_contact_force(const dem_law *law, const dem_contact_in *in, dem_contact_out *out);

/* The rotation of the sliding direction in closed form (Kuhn et al. eqs. 18-19): from the
 * angle theta given by its cosine c and sine sn (normalised), the final angle theta' with
 * |tan(theta'/2)| = |tan(theta/2)| exp(-E) and the sign of theta, as its cosine and sine,
 * without trigonometric functions (E = INFINITY: theta' = 0). */
void dem_sliding_angle_end(double c, double sn, double E, double *cos_end, double *sin_end);

#endif

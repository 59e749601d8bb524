/* Bonded contacts (Rojek et al. eqs. 1-11): a linear spring and a dashpot in parallel, in the
 * normal and the tangential direction, measured from the state in which the bond was made;
 * tension is allowed. The law of one bond, for the DEM engine's bonded mode (dem.bond,
 * cd/dem/dem_pass.c). */
#ifndef CDLAB_DEM_BOND_H
#define CDLAB_DEM_BOND_H

#include "vec3.h"

typedef struct dem_bond_law {
    double k_n, k_t;   /* stiffnesses (force / length) */
    double xi_n, xi_t; /* dashpots as fractions of the critical damping c_cr (eqs. 9-11) */
    double strength_n; /* the bond breaks when its elastic tension k_n h exceeds this (0: never) */
    double strength_t; /* ... or its elastic shear |k_t u_t| exceeds this (0: never) */
} dem_bond_law;

typedef struct dem_bond_in {
    double h;        /* eq. (5): the distance between the particles' surfaces minus that when the
                        bond was made (> 0: stretched) */
    double v_n;      /* the rate of h (> 0: separating) */
    vec3 u_t, v_t;   /* body 1's tangential displacement since the bond was made, and velocity,
                        relative to body 0 at the contact point */
    double m_0, m_1; /* the masses (a wall or frozen particle: INFINITY) */
} dem_bond_in;

typedef struct dem_bond_out {
    double f_n; /* eqs. (2), (4), (7): k_n h + c_n v_n; tension positive (the bond pulls body 1
                   toward body 0); the force on body 1 is -f_n n with n from body 0 to 1 */
    vec3 f_t;   /* eqs. (3), (6), (8): k_t u_t + c_t v_t; the force on body 1 is -f_t */
    int broken; /* the elastic tension or shear is beyond its strength: the bond breaks (this
                   step's forces are still the bond's) */
} dem_bond_out;

/* Eq. (11): the critical damping of two masses joined by a spring k, 2 sqrt(m_0 m_1 k /
 * (m_0 + m_1)) = 2 sqrt(mu k) with mu the reduced mass (one infinite mass: 2 sqrt(m k)). */
double dem_bond_critical_damping(double k, double m_0, double m_1);

void dem_bond_force(const dem_bond_law *L, const dem_bond_in *in, dem_bond_out *out);

#endif

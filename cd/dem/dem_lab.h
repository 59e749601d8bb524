/* Reproducible numerical experiments of the DEM contact law, shared by the Check tests and the
 * cdlab-lab tool (experiments/kuhn, experiments/sliding_pair). */
#ifndef CDLAB_DEM_LAB_H
#define CDLAB_DEM_LAB_H

#include "dem/dem.h"

/* The contact law of Kuhn et al.'s Fig. 4 (k_n = 1e6, k_t = 8e5, mu = 0.5, projection and twirl
 * on) with the given tangential rule. */
dem_law lab_fig4_law(dem_tangential t);
/* One step of law L for a contact with normal z: overlap zeta_old -> zeta_new, tangential force
 * ft, q moved by dxi relative to p (no rotations). */
dem_contact_out lab_law_step(const dem_law *L, double zeta_old, double zeta_new, vec3 ft, vec3 dxi);

/* Elastic-plastic reference: the tangential force integrated in N increments (trial force,
 * then return to the friction circle) with the normal force linear from k_n z0 to k_n z1.
 * Returns the final force; *dissipated gets the frictional work. */
vec3 lab_substepped(double k_n, double k_t, double mu, double z0, double z1, vec3 ft, vec3 dxi,
                    long N, double *dissipated);

/* Kuhn et al. Fig. 4: contact with normal z at the friction limit (force along +x), moved along
 * +y by |dxi| = ratio mu f_n / k_t while the overlap goes z0 -> z1 (k_n = 1e6, k_t = 8e5,
 * mu = 0.5). Final force angles (degrees, from the movement direction) of the sub-stepped
 * reference, the refined law and the conventional law. */
typedef struct lab_fig4 {
    double ratio, angle_ref, angle_kuhn, angle_conv, mag_ref, mag_kuhn, mag_conv;
} lab_fig4;
lab_fig4 lab_kuhn_fig4(double ratio, double z0, double z1, long substeps);

/* Kuhn et al. Fig. 6: 300 spheres (RSA in a 9^3 box) compressed by an affine drive, then
 * rotated rigidly by 90 deg about x in 1000 increments; stresses before, and after rotated
 * back, and the largest component error relative to the largest stress component. */
typedef struct lab_fig6 {
    double sigma0[3][3], sigma_back[3][3], error;
    int contacts;
} lab_fig6;
/* The 90 deg rotation in `increments` equal rigid increments (the paper's 1000: 1.6e-3 rad
 * each). */
status lab_kuhn_fig6(int projection, int twirl, int increments, lab_fig6 *out, diag *err);

/* The sliding pair of docs/physics.md: d = 1 mm spheres, overlap 0.1 d, mu = 0.3, k_n = k_t = 1e9,
 * upper sphere at 1 mm/s right 0.5 s, left 0.5 s, right 0.5 s; dt = 5 ms, 300 rows. */
typedef struct lab_pair_row {
    double t, x;   /* time, horizontal offset of the upper sphere */
    double delta;  /* overlap (negative: apart) */
    double fn, fs; /* normal force magnitude, shear force (signed along x) on the upper sphere */
    int sliding;
} lab_pair_row;
enum { LAB_PAIR_ROWS = 300 };
status lab_sliding_pair(lab_pair_row rows[LAB_PAIR_ROWS], diag *err);

#endif

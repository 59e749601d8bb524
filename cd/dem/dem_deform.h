/* Deformable discs (Rojek et al., "New formulation of the DEM", DDEM): the mechanics of one
 * disc, for the DEM engine's deformable mode (dem.deformable: cd/dem/dem_pass.c and the DEM
 * stages).
 *
 * A disc carries a uniform stress, the Love-Weber average of its contact forces (eq. 12); its
 * strain follows from the plane-strain compliance (eq. 13); under that strain the circle
 * becomes an ellipse with its axes along the principal strains, and contact is measured between
 * the ellipses along the line of centres. Everything here is 2D, in the xy plane; symmetric 2x2
 * tensors are stored as {xx, yy, xy}; tension is positive. */
#ifndef CDLAB_DEM_DEFORM_H
#define CDLAB_DEM_DEFORM_H

#include "vec3.h"

/* Eq. (12): sigma = (1/V) sum_c 1/2 (s_c (x) F_c + F_c (x) s_c), with s_c from the disc's centre
 * to contact point c and F_c the force on the disc there; V = pi r^2 times the thickness the
 * masses use. Only x and y components are used. */
void dem_deform_stress(int n, const vec3 *s, const vec3 *F, double V, double sigma[3]);
/* One contact's term of that sum, 1/2 (s (x) F + F (x) s) as {xx, yy, xy} (not divided by V). */
void dem_deform_term(vec3 s, vec3 F, double term[3]);

/* Eq. (13), plane strain (eps_zz = 0): eps = D : sigma with
 *   eps_xx = (1 + nu)/E ((1 - nu) s_xx - nu s_yy), eps_yy likewise, eps_xy = (1 + nu)/E s_xy
 * (tensor shear strain, half the engineering one). E > 0, -1 < nu < 0.5. */
void dem_deform_strain(double E, double nu, const double sigma[3], double eps[3]);

/* The disc of radius r under strain eps: an ellipse with semi-axes a = r (1 + eps_1) along the
 * unit vector e1 and b = r (1 + eps_2) along e2 = z x e1, eps_1 >= eps_2 the principal strains
 * (linear strain: the stretch of a line along a principal axis is 1 + eps_i). */
typedef struct dem_ellipse {
    double a, b;
    vec3 e1;
} dem_ellipse;
dem_ellipse dem_deform_ellipse(double r, const double eps[3]);

/* The reach of the ellipse in the unit direction u (in the xy plane): the distance from its
 * centre to its boundary along u,
 *   rho(u) = 1 / sqrt((u.e1)^2 / a^2 + (u.e2)^2 / b^2).
 * The overlap of two deformed discs i, j with unit normal n from i to j (the line of centres)
 * is rho_i(n) + rho_j(-n) - |x_j - x_i| (docs/physics.md). Small strain: rho(u) = r (1 + u.eps.u)
 * + O(eps^2), the same to first order as the support distance max_p p.u. */
double dem_deform_reach(const dem_ellipse *el, vec3 u);

#endif

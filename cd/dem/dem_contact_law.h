/* Kuhn, Suzuki & Daouadji, Fig. 1: the linear-frictional contact law, line by line (line
 * numbers in comments are those of the paper's Fig. 1), as inline functions: the DEM pair pass
 * (cd/dem/dem_pass.c) calls dem_contact_law in its loop (as a call it was a third of the chute's
 * step with its argument and result records through memory, and the energies the pass does not use
 * made anyway); dem_contact_force (cd/dem/dem_contact.c) is the same law as a function. */
#ifndef CDLAB_DEM_CONTACT_LAW_H
#define CDLAB_DEM_CONTACT_LAW_H

#include "dem/dem_contact.h"

/* Where the paper's tests scale eps with (mu k_n dzeta)^2 alone, that scale vanishes for a
 * purely tangential movement (dzeta = 0, the paper's own Fig. 4 case), so that C = 0 exactly
 * would never be recognised. C is compared with (mu f_n)^2 (its own scale) and A with
 * (mu k_n dzeta)^2 + |k_t dxi|^2 (the scale of its two terms) instead. */

static inline void rotate_sliding_direction(const dem_law *L, double fn_s, double dzeta, vec3 n,
                                            vec3 ft_s, vec3 dxi, double fn_end, vec3 *ft_end)
{
    double dxi_len = v3_norm(dxi), ft_len = v3_norm(ft_s);
    if (dxi_len == 0.0 || ft_len == 0.0 || fn_s <= 0.0) {
        /* no remaining movement, or no force direction to rotate: the force lies on the
         * friction limit along its current direction, or along the movement if it has none */
        vec3 m = ft_len > 0.0 ? v3_scale(ft_s, 1.0 / ft_len)
                              : (dxi_len > 0.0 ? v3_scale(dxi, 1.0 / dxi_len) : v3_zero());
        *ft_end = v3_scale(m, L->mu * fn_end);
        return;
    }
    vec3 m_f = v3_scale(ft_s, 1.0 / ft_len); /* line 31 */
    vec3 m_dxi = v3_scale(dxi, 1.0 / dxi_len);
    vec3 m_perp = v3_cross(n, m_dxi);
    /* line 32: theta^t = asin(m_f . m_perp), taken as the angle of (c, s) = (m_f . m_dxi,
     * m_f . m_perp) normalised (the same for |theta| <= 90 deg, and right beyond, possible when
     * the friction circle shrinks onto the force). No trigonometric function below: the
     * rotation needs only tan(theta/2) and the sine and cosine of the final angle from
     * tan(theta'/2) (measured: atan2, tan, atan and sincos were 8-9% of the DEM chute's step). */
    double c = v3_dot(m_f, m_dxi), sn = v3_dot(m_f, m_perp), rho = sqrt(c * c + sn * sn);
    if (rho > 0.0) {
        c /= rho;
        sn /= rho;
    } else { /* m_f along the normal: no angle; atan2(0, 0) = 0 */
        c = 1.0;
        sn = 0.0;
    }
    double sin_end = sn, cos_end = c; /* line 34: theta' = theta */
    /* |theta| >= eps (line 35), without the angle: |theta| < eps exactly when c > 0 and
     * |sin theta| < sin(eps) (eps tiny: sin eps = eps to double precision) */
    if (!(c > 0.0 && fabs(sn) < L->eps)) {
        double c1 = L->mu * fn_s / (L->k_t * dxi_len); /* line 36 */
        double c2 = L->k_n * dzeta / fn_s;
        double E;
        if (fabs(c2) < L->eps) /* line 38 */
            E = 1.0 / c1;
        else if (1.0 + c2 > 0.0) /* line 39 */
            E = log(fabs(1.0 + c2)) / (c1 * c2);
        else
            E = INFINITY; /* the normal force vanishes within the step: fully aligned */
        dem_sliding_angle_end(c, sn, E, &cos_end, &sin_end);
    }
    /* line 42 (eq. 20 as printed in the markdown conversion is misprinted; line 42 is right) */
    vec3 m_end = v3_add(v3_scale(m_perp, sin_end), v3_scale(m_dxi, cos_end));
    *ft_end = v3_scale(m_end, L->mu * fn_end); /* line 43, eq. (21) */
}

/* Lines 22-27: the fraction alpha_s of the step's movement before the tangential force
 * reaches the friction circle (eqs. 10-14), for a contact that was touching (normal force
 * fn_old, tangential ft_old) and moves by dzeta, dxi. In [0, 1]. */
static inline double onset_of_slip(const dem_law *L, double fn_old, double dzeta, vec3 ft_old,
                                   vec3 dxi)
{
    double kdz = L->mu * L->k_n * dzeta;
    vec3 kdxi = v3_scale(dxi, L->k_t);
    double A = kdz * kdz - v3_norm2(kdxi); /* eq. (11) */
    double B =
        L->mu * L->mu * L->k_n * fn_old * dzeta - L->k_t * v3_dot(ft_old, dxi); /* eq. (12) */
    double C = L->mu * L->mu * fn_old * fn_old - v3_norm2(ft_old);              /* eq. (13) */
    double muf = L->mu * fn_old;
    double alpha_s;
    if (fabs(C) < L->eps * muf * muf) { /* line 25 */
        /* At the limit, g(a) = A a^2 + 2 B a (limit^2 - |f|^2) has roots 0
         * and -2B/A. Line 25 takes max(0, -2B/A); but when B < 0 the force
         * leaves the circle at once, whatever the sign of A. With a shrinking
         * circle (dzeta < 0, A > 0) line 25 would take the far root and treat
         * the whole step as elastic (measured: 1.1 deg error against sub-steps,
         * test unit_kuhn_rotation_with_normal_change). */
        alpha_s = B < 0.0 ? 0.0 : fmax(0.0, -2.0 * B / A);
    } else if (fabs(A) < L->eps * (kdz * kdz + v3_norm2(kdxi))) { /* line 26 */
        alpha_s = -C / (2.0 * B);                                 /* eq. (14) */
    } else {
        double disc = fmax(0.0, B * B - A * C);
        alpha_s = (-B - sqrt(disc)) / A; /* eq. (10) */
    }
    if (!(alpha_s >= 0.0))
        alpha_s = 0.0; /* round-off (or NaN from 0/0) at the limit */
    if (alpha_s > 1.0)
        alpha_s = 1.0;
    return alpha_s;
}

/* Line 49, eq. (23): the tangential force turned by the angle spin about n. Eq. (23),
 * f - s (f x n), is the first-order form of the rotation by s about n; the rotation itself
 * keeps |f_t| (the linear form grows it by sqrt(1 + s^2) a step). */
static inline vec3 twirl(vec3 ft, vec3 n, double spin)
{
    vec3 along = v3_scale(n, v3_dot(ft, n));
    vec3 perp = v3_sub(ft, along);
    double cs, sn;
    if (fabs(spin) < 1e-2) {
        /* series to double precision (next terms below 1e-17 relative) */
        double s2 = spin * spin;
        sn =
            spin * (1.0 - s2 * (1.0 / 6.0) * (1.0 - s2 * (1.0 / 20.0) * (1.0 - s2 * (1.0 / 42.0))));
        cs = 1.0 - s2 * 0.5 * (1.0 - s2 * (1.0 / 12.0) * (1.0 - s2 * (1.0 / 30.0)));
    } else {
        cs = cos(spin);
        sn = sin(spin);
    }
    return v3_add(along, v3_add(v3_scale(perp, cs), v3_scale(v3_cross(n, perp), sn)));
}

static inline __attribute__((always_inline)) void
dem_contact_law(const dem_law *L, const dem_contact_in *in, dem_contact_out *out)
{
    vec3 n = in->n;
    vec3 ft_start = in->ft_old; /* kept for line 52 */
    /* line 8, eq. (5): relative movement of q with respect to p at the contact */
    vec3 du = v3_add(v3_sub(in->du_q, in->du_p),
                     v3_sub(v3_cross(in->dth_q, in->r_q), v3_cross(in->dth_p, in->r_p)));
    double dzeta = -v3_dot(du, n); /* line 9, eq. (6) */
    vec3 dxi = v3_axpy(dzeta, n, du);
    out->dzeta = dzeta;
    out->dxi = dxi;
    out->sliding = 0;
    double dW_t = 0.0; /* line 3 */
    double fn_new;
    vec3 ft_new;
    if (in->zeta_new < 0.0) { /* lines 4-5: not touching */
        fn_new = 0.0;
        ft_new = v3_zero();
        ft_start = in->zeta_old > 0.0 ? in->ft_old : v3_zero();
    } else {
        double fn_old = in->zeta_old > 0.0 ? L->k_n * in->zeta_old : 0.0; /* line 7 */
        if (fn_old <= 0.0) {
            /* lines 10-18: not previously touching. Eq. (7), clamped to [0, 1]: an overlap
             * larger than the step's approach (e.g. particles created overlapping) means
             * the whole movement counts. */
            double alpha_0 = 0.0;
            if (L->tangential == DEM_KUHN && dzeta > in->zeta_new)
                alpha_0 = 1.0 - in->zeta_new / dzeta;
            dzeta *= 1.0 - alpha_0; /* line 12, eq. (8) */
            dxi = v3_scale(dxi, 1.0 - alpha_0);
            fn_new = L->k_n * in->zeta_new; /* lines 13-14, eq. (1) */
            ft_new = v3_scale(dxi, L->k_t);
            double ft_len = v3_norm(ft_new);
            if (ft_len > L->mu * fn_new) { /* lines 15-16: friction limit */
                ft_new = v3_scale(ft_new, L->mu * fn_new / ft_len);
                out->sliding = 1;
            }
            dW_t = 0.5 * v3_dot(dxi, ft_new); /* line 18 */
            ft_start = v3_zero();
        } else {
            /* lines 19-45: previously touching */
            vec3 ft_old = in->ft_old;
            fn_new = L->k_n * in->zeta_new; /* line 20, eqs. (1)-(2) */
            ft_new = v3_axpy(L->k_t, dxi, ft_old);
            double limit = L->mu * fn_new;
            if (v3_norm(ft_new) > limit) { /* line 21 */
                out->sliding = 1;
                if (L->tangential == DEM_CONVENTIONAL) {
                    /* the common shortcut: scale the trial force back onto the circle */
                    ft_new = v3_scale(ft_new, limit / v3_norm(ft_new));
                    dW_t = v3_dot(dxi, v3_scale(v3_add(ft_old, ft_new), 0.5));
                } else {
                    double alpha_s = onset_of_slip(L, fn_old, dzeta, ft_old, dxi);
                    /* line 28: elastic work before slip */
                    dW_t = alpha_s * v3_dot(dxi, v3_axpy(0.5 * alpha_s * L->k_t, dxi, ft_old));
                    /* line 29, eq. (15): forces at the onset of slip */
                    double fn_s = fn_old + alpha_s * L->k_n * dzeta;
                    vec3 ft_s = v3_axpy(alpha_s * L->k_t, dxi, ft_old);
                    dzeta *= 1.0 - alpha_s; /* line 30 */
                    dxi = v3_scale(dxi, 1.0 - alpha_s);
                    rotate_sliding_direction(L, fn_s, dzeta, n, ft_s, dxi, fn_new, &ft_new);
                    ft_old = ft_s;
                }
            }
            if (L->tangential == DEM_KUHN || !out->sliding)
                dW_t += 0.5 * v3_dot(dxi, v3_add(ft_old, ft_new)); /* line 45 */
        }
    }
    if (L->projection) /* line 48, eq. (22): onto the new tangent plane */
        ft_new = v3_axpy(-v3_dot(ft_new, n), n, ft_new);
    if (L->twirl) /* line 49, eq. (23): mean spin of the pair about the normal */
        ft_new = twirl(ft_new, n, 0.5 * v3_dot(v3_add(in->dth_p, in->dth_q), n));
    out->fn = fn_new;
    out->ft = ft_new;
    out->f = v3_axpy(-fn_new, n, ft_new);        /* line 50, eq. (3) */
    out->W_n = fn_new * fn_new / (2.0 * L->k_n); /* line 51 */
    out->dW_t = dW_t;
    out->dW_t_rev =
        L->k_t > 0.0 ? (v3_norm2(ft_new) - v3_norm2(ft_start)) / (2.0 * L->k_t) : 0.0; /* line 52 */
    out->dW_t_irrev = dW_t - out->dW_t_rev;                                            /* line 53 */
}

#endif

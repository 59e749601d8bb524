/* Kuhn, Suzuki & Daouadji's law (cd/dem/dem_contact_law.h) for four pairs at once, in the lanes of
 * common/vec3x4.h: its sliding branch (slide4) and the twirl's series (twirl4), each lane with
 * the scalar law's operations in their order, so that every lane gives dem_contact_law's bits
 * (tests/check_dem.c: unit_slide4_matches_law). The DEM pair pass (cd/dem/dem_pass.c, dem_pass4.h)
 * runs the sticking branch of four pairs in pairs4 and gathers the sliding ones of a chunk for
 * slide4. */
#ifndef CDLAB_DEM_CONTACT_LAW4_H
#define CDLAB_DEM_CONTACT_LAW4_H

#include "dem/dem_contact.h"
#include "vec3x4.h"

/* A sliding lane of pairs4 under the Kuhn law, kept for slides4: what the law's sliding branch
 * reads, as pairs4 made it, and what the delivery needs after it. Sliding pairs are a third of
 * the chute's touching ones, so that most groups of four had one or two: their law ran alone,
 * at the latency of its dozen divisions, square roots, log and exp; gathered from a chunk's
 * groups, four of them run in lanes. */
typedef struct slide_in {
    vec3 n, dxi, ft_old; /* normal, the step's tangential movement (line 9), f_t at the start */
    vec3 fd, l0, l1;     /* the pair's new dashpot force, its lever arms at the step's end */
    double dzeta;        /* the step's normal movement (line 9) */
    double zeta_old, zeta_new;
    double spin; /* line 49's angle (|spin| < 1e-2; 0 without twirl) */
} slide_in;

/* twirl (line 49, eq. 23) in lanes, its series branch: |spin| < 1e-2 in every lane used */
static inline __attribute__((always_inline)) vv3 twirl4(vv3 ft, vv3 n, v4d spin)
{
    vv3 along = vv3_scale(n, vv3_dot(ft, n));
    vv3 perp = vv3_sub(ft, along);
    v4d s2 = spin * spin;
    v4d sn =
        spin * (1.0 - s2 * (1.0 / 6.0) * (1.0 - s2 * (1.0 / 20.0) * (1.0 - s2 * (1.0 / 42.0))));
    v4d cs = 1.0 - s2 * 0.5 * (1.0 - s2 * (1.0 / 12.0) * (1.0 - s2 * (1.0 / 30.0)));
    return vv3_add(along, vv3_add(vv3_scale(perp, cs), vv3_scale(vv3_cross(n, perp), sn)));
}

/* The Kuhn law's sliding branch for the four pairs s[0..3] (dem_contact_law for a pair touching
 * before and after the step whose trial force left the friction circle: lines 22-30, the
 * rotation of rotate_sliding_direction with dem_sliding_angle_end, line 45, then lines 48-53),
 * each lane with the scalar operations in their order (the same bits); log and exp lane by lane.
 * The law's tangential mode is Kuhn's, its friction coefficient mu (L->mu is not read: the pass
 * takes the particles' one). Out: the tangential force ft, the law's force f on body 0 (line
 * 50) and the friction work dW_t_irrev (line 53). A lane outside the common case comes back
 * cleared in *ok, for the caller to make by dem_contact_law: line
 * 26's root (A ~ 0), a rotation without a direction (no movement left, no force) or with the
 * normal force vanishing within the step, no angle (rho = 0), theta' next to pi. */
static inline __attribute__((always_inline)) void slide4(const dem_law *L, double mu,
                                                         const slide_in *const s[4], v4m *ok,
                                                         vv3 *ft_out, vv3 *f_out, v4d *irrev)
{
    const v4d zero = {0.0, 0.0, 0.0, 0.0}, one = zero + 1.0;
#define SL4(f) ((v4d){s[0]->f, s[1]->f, s[2]->f, s[3]->f})
#define SL4V(f) ((vv3){SL4(f.x), SL4(f.y), SL4(f.z)})
    vv3 n = SL4V(n), dxi = SL4V(dxi), fto = SL4V(ft_old);
    v4d dzeta = SL4(dzeta), zeta_old = SL4(zeta_old), zeta_new = SL4(zeta_new), spin = SL4(spin);
#undef SL4V
#undef SL4
    const double k_n = L->k_n, k_t = L->k_t, eps = L->eps;
    v4d fn_old = k_n * zeta_old, fn_new = k_n * zeta_new; /* lines 7, 20 */
    /* onset_of_slip (lines 22-27) */
    v4d kdz = mu * k_n * dzeta;
    vv3 kdxi = vv3_scale(dxi, zero + k_t);
    v4d A = kdz * kdz - vv3_dot(kdxi, kdxi);
    v4d B = mu * mu * k_n * fn_old * dzeta - k_t * vv3_dot(fto, dxi);
    v4d C = mu * mu * fn_old * fn_old - vv3_dot(fto, fto);
    v4d muf = mu * fn_old;
    v4m at_limit = v4_abs(C) < eps * muf * muf;
    v4m flat = v4_abs(A) < eps * (kdz * kdz + vv3_dot(kdxi, kdxi));
    v4m good = at_limit | ~flat;
    v4d alpha = V4_SELECT(at_limit, V4_SELECT(B < 0.0, zero, v4_fmax0(-2.0 * B / A)),
                          (-B - v4_sqrt(v4_fmax0(B * B - A * C))) / A);
    alpha = V4_SELECT(alpha >= 0.0, alpha, zero);
    alpha = V4_SELECT(alpha > 1.0, one, alpha);
    v4d dW_t = alpha * vv3_dot(dxi, vv3_axpy(0.5 * alpha * k_t, dxi, fto)); /* line 28 */
    v4d fn_s = fn_old + alpha * k_n * dzeta;                                /* line 29 */
    vv3 ft_s = vv3_axpy(alpha * k_t, dxi, fto);
    dzeta = dzeta * (1.0 - alpha); /* line 30 */
    dxi = vv3_scale(dxi, 1.0 - alpha);
    /* rotate_sliding_direction */
    v4d dxi_len = v4_sqrt(vv3_dot(dxi, dxi)), ft_len = v4_sqrt(vv3_dot(ft_s, ft_s));
    good &= (dxi_len != 0.0) & (ft_len != 0.0) & (fn_s > 0.0);
    vv3 m_f = vv3_scale(ft_s, 1.0 / ft_len);
    vv3 m_dxi = vv3_scale(dxi, 1.0 / dxi_len);
    vv3 m_perp = vv3_cross(n, m_dxi);
    v4d c = vv3_dot(m_f, m_dxi), sn = vv3_dot(m_f, m_perp), rho = v4_sqrt(c * c + sn * sn);
    good &= rho > 0.0;
    c = c / rho;
    sn = sn / rho;
    v4m turn = ~((c > 0.0) & (v4_abs(sn) < eps)); /* |theta| >= eps (line 35) */
    v4d c1 = mu * fn_s / (k_t * dxi_len);         /* line 36 */
    v4d c2 = k_n * dzeta / fn_s;
    v4m small = v4_abs(c2) < eps; /* line 38 */
    good &= ~turn | small | (1.0 + c2 > 0.0);
    v4d lg = zero, ex = zero;
    for (int l = 0; l < 4; l++)
        if (good[l] && turn[l] && !small[l])
            lg[l] = log(fabs(1.0 + c2[l]));
    v4d E = V4_SELECT(small, 1.0 / c1, lg / (c1 * c2));
    /* dem_sliding_angle_end */
    v4d asn = v4_abs(sn);
    v4d half = V4_SELECT(c >= 0.0, asn / (1.0 + c), (1.0 - c) / asn);
    v4m finite = E != INFINITY;
    for (int l = 0; l < 4; l++)
        if (good[l] && turn[l] && finite[l])
            ex[l] = exp(-E[l]);
    v4d t = V4_SELECT(finite, half * ex, zero);
    good &= ~(turn & (t > 1e100));
    v4d t2 = t * t;
    v4d sin_end = V4_SELECT(turn, v4_copysign(2.0 * t / (1.0 + t2), sn), sn);
    v4d cos_end = V4_SELECT(turn, (1.0 - t2) / (1.0 + t2), c);
    vv3 m_end = vv3_add(vv3_scale(m_perp, sin_end), vv3_scale(m_dxi, cos_end)); /* line 42 */
    vv3 ft = vv3_scale(m_end, mu * fn_new);                                     /* line 43 */
    dW_t = dW_t + 0.5 * vv3_dot(dxi, vv3_add(ft_s, ft));                        /* line 45 */
    if (L->projection)
        ft = vv3_axpy(-vv3_dot(ft, n), n, ft);
    if (L->twirl)
        ft = twirl4(ft, n, spin);
    *f_out = vv3_axpy(-fn_new, n, ft);
    v4d rev = k_t > 0.0 ? (vv3_dot(ft, ft) - vv3_dot(fto, fto)) / (2.0 * k_t) : zero;
    *irrev = dW_t - rev;
    *ft_out = ft;
    *ok = good;
}

#endif

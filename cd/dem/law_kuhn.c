/* Kuhn, Suzuki & Daouadji's refined law and the conventional law beside it (dem.tangential =
 * kuhn, conventional): the pair pass's kernels over dem_contact_law.h (one pair) and
 * dem_contact_law4.h (four pairs), the refined law's sliding pairs of a chunk four at a time. */
#include "dem/dem_stage.h"
#include "dem/dem_tangential.h"

/* One pair: the law of Fig. 1 with lever arms at mid-step, then the dashpots. */
static void kuhn_pair(world *W, dem_solver *S, int *cur, const dem_params *p, int k, dem_pair *c,
                      contact_frame f0, contact_frame f1, int was_touching, double *acc,
                      double diss[2])
{
    int i = c->i, j = c->j;
    double zeta_new = -f1.gap;
    dem_law law = p->law;
    law.mu = i >= 0 ? W->detect.mu : W->walls[-1 - i].mu;
    dem_contact_in in;
    in.zeta_new = zeta_new;
    in.zeta_old = was_touching ? c->zeta : -INFINITY;
    in.ft_old = was_touching ? c->ft : v3_zero();
    in.n = f1.n;
    in.du_q = move_du(W, S, j);
    in.dth_q = move_dth(W, S, j);
    body0_move(W, S, i, &in.du_p, &in.dth_p);
    /* lever arms at mid-step: with the end-of-step ones, a rigid rotation by phi per step
     * leaves a false tangential movement ~ phi^2 l / 2 that the spring integrates
     * (objectivity test: 0.59% stress error instead of 0.1%) */
    in.r_p = v3_scale(v3_add(f1.l0, f0.l0), 0.5);
    in.r_q = v3_scale(v3_add(f1.l1, f0.l1), 0.5);
    dem_contact_out out;
    dem_contact_law(&law, &in, &out);
    vec3 f = out.f, fd = v3_zero();
    if (zeta_new >= 0.0 && (p->damp_n > 0.0 || p->damp_t > 0.0)) {
        fd = dashpot_force(W, S, p, i, j, f1, out.sliding, &diss[1]);
        f = v3_add(f, fd);
    }
    c->fd = fd;
    c->ft = out.ft;
    c->zeta = zeta_new;
    if (zeta_new >= 0.0) /* apart: the law's force is zero (its sign bits are not kept) */
        deliver(S, cur, n_own(W, S), k, i, j, f, f1);
    diss[0] += out.dW_t_irrev;
    tally_pair(acc, v3_norm2(f) > 0.0, zeta_new, out.sliding);
}

/* The chunk's sliding pairs that pairs4 left (qo[dl[0..nd-1]], their slide_in in sl beside
 * them), four at a time through slide4, then what pairs4 does after the law: the dashpot's
 * force added, the force on body 1 and its torques. A lane slide4 did not make goes through
 * contact_force after all (ok cleared). */
static void kuhn_slides(const dem_params *p, double mu, const slide_in *sl, const int *dl, int nd,
                        quad_out *qo)
{
    const int dashpots = p->damp_n > 0.0 || p->damp_t > 0.0;
    for (int g = 0; g < nd; g += 4) {
        const slide_in *s[4];
        for (int l = 0; l < 4; l++)
            s[l] = &sl[dl[g + l < nd ? g + l : nd - 1]];
        v4m ok;
        vv3 ft, f;
        v4d irrev;
        slide4(&p->law, mu, s, &ok, &ft, &f, &irrev);
        for (int l = 0; l < 4 && g + l < nd; l++) {
            quad_out *q = &qo[dl[g + l]];
            if (!ok[l]) {
                q->ok = 0;
                continue;
            }
            vec3 fl = vv3_lane(f, l);
            if (dashpots)
                fl = v3_add(fl, s[l]->fd);
            vec3 R = v3_scale(fl, -1.0);
            q->R = R;
            q->t1 = v3_cross(s[l]->l1, R);
            q->t0 = v3_cross(s[l]->l0, R);
            q->ft = vv3_lane(ft, l);
            q->diss[0] = 0.0 + irrev[l];
            q->sliding = 1;
            q->active = v3_dot(fl, fl) > 0.0;
        }
    }
}

static void law_pairs4(const world *W, const dem_solver *S, const dem_params *p, const int *kk,
                       int book, quad_out *o, slide_in *sl)
{
    const dem_law *L = &p->law;
    const v4d zero = {0.0, 0.0, 0.0, 0.0};
    quad_lanes q;
    quad_begin(W, S, kk, 0, &q);
    v4d zeta_new = -q.gap;
    v4d diss1 = book ? dashpot_second_half4(&q) : zero;
    /* the law (dem_contact_law): touching before, lines 19-21 and 45 without slip, then
     * lines 48-53 */
    const double k_n = L->k_n, k_t = L->k_t, mu = W->detect.mu;
    vv3 r_p = vv3_scale(vv3_add(q.l0, q.l00), zero + 0.5),
        r_q = vv3_scale(vv3_add(q.l1, q.l01), zero + 0.5);
    vv3 du =
        vv3_add(vv3_sub(q.duj, q.dui), vv3_sub(vv3_cross(q.dthj, r_q), vv3_cross(q.dthi, r_p)));
    v4d dzeta = -vv3_dot(du, q.n);
    vv3 dxi = vv3_axpy(dzeta, q.n, du);
    v4d fn_new = k_n * zeta_new;
    vv3 ft = vv3_axpy(zero + k_t, dxi, q.fto);
    v4d limit = mu * fn_new;
    v4m ok = (zeta_new >= 0.0) & (q.zeta_old > 0.0) & (k_n * q.zeta_old > 0.0);
    v4m slide = v4_sqrt(vv3_dot(ft, ft)) > limit;
    v4d dW_t = zero + 0.5 * vv3_dot(dxi, vv3_add(q.fto, ft));
    if (!sl) { /* the conventional law's sliding lanes: the trial force scaled onto the limit */
        vv3 onto = vv3_scale(ft, limit / v4_sqrt(vv3_dot(ft, ft)));
        v4d dW_slid = vv3_dot(dxi, vv3_scale(vv3_add(q.fto, onto), zero + 0.5));
        ft = VV3_SELECT(slide, onto, ft);
        dW_t = V4_SELECT(slide, dW_slid, dW_t);
    }
    if (L->projection)
        ft = vv3_axpy(-vv3_dot(ft, q.n), q.n, ft);
    v4d spin = zero;
    if (L->twirl) {
        spin = 0.5 * vv3_dot(vv3_add(q.dthi, q.dthj), q.n);
        ok &= (spin < 1e-2) & (spin > -1e-2);
        ft = twirl4(ft, q.n, spin);
    }
    vv3 f = vv3_axpy(-fn_new, q.n, ft);
    v4d rev = k_t > 0.0 ? (vv3_dot(ft, ft) - vv3_dot(q.fto, q.fto)) / (2.0 * k_t) : zero;
    v4d diss0 = zero + (dW_t - rev);
    /* a sliding lane (a third of the chute's touching pairs): under the Kuhn law left to
     * slides4 (sl; the rest of the pair's lane made here is not used), under the conventional
     * law made above; the dashpot and the delivery in lanes */
    int sliding[4] = {0, 0, 0, 0}, later[4] = {0, 0, 0, 0};
    for (int l = 0; l < 4; l++) {
        if (!(ok[l] && slide[l]))
            continue;
        if (sl)
            later[l] = 1;
        else
            sliding[l] = 1;
    }
    /* the dashpot (dashpot_force) */
    vv3 fd = {zero, zero, zero};
    if (p->damp_n > 0.0 || p->damp_t > 0.0) {
        v4d cn, ct;
        dashpot_constants4(W, p, q.ii, q.jj, &cn, &ct);
        vv3 du_rel = relmove4(q.dui, q.duj, q.dthi, q.dthj, q.l0, q.l1);
        v4d dun = vv3_dot(du_rel, q.n);
        vv3 dut = vv3_axpy(-dun, q.n, du_rel);
        fd = vv3_scale(vv3_axpy(cn * dun, q.n, vv3_scale(dut, ct)), zero + 1.0 / W->dt);
        diss1 += 0.5 * vv3_dot(fd, du_rel);
        f = vv3_add(f, fd);
    }
    quad_store(o, ok, f, q.l0, q.l1, fd, ft, zeta_new, diss0, diss1, sliding);
    for (int l = 0; l < 4; l++) {
        o[l].slide = later[l];
        if (later[l])
            sl[l] = (slide_in){.n = vv3_lane(q.n, l),
                               .dxi = vv3_lane(dxi, l),
                               .ft_old = vv3_lane(q.fto, l),
                               .fd = vv3_lane(fd, l),
                               .l0 = vv3_lane(q.l0, l),
                               .l1 = vv3_lane(q.l1, l),
                               .dzeta = dzeta[l],
                               .zeta_old = q.zeta_old[l],
                               .zeta_new = zeta_new[l],
                               .spin = spin[l]};
    }
}

/* The refined law's four pairs, their sliding lanes left for kuhn_slides. */
static void kuhn_quad(const world *W, const dem_solver *S, const dem_params *p, const int *kk,
                      int book, quad_out *o, slide_in *sl)
{
    law_pairs4(W, S, p, kk, book, o, sl);
}

/* The conventional law's four pairs: its sliding pairs in the same lanes. */
static void conventional_quad(const world *W, const dem_solver *S, const dem_params *p,
                              const int *kk, int book, quad_out *o, slide_in *sl)
{
    (void)sl;
    law_pairs4(W, S, p, kk, book, o, NULL);
}

/* The lanes make the dashpots before the law's sliding flag: a tangential dashpot that acts on
 * sticking pairs only (damping_tangential_sliding = false) goes pair by pair. */
static int lanes_serve(const dem_solver *S, const dem_params *p)
{
    (void)S;
    return !(p->damp_t > 0.0 && p->damp_t_stick_only);
}

const dem_tangential_law dem_law_kuhn = {.name = "kuhn",
                                         .twirl_default = 1,
                                         .radius_arms = 0,
                                         .pair = kuhn_pair,
                                         .quad_serves = lanes_serve,
                                         .quad = kuhn_quad,
                                         .slides = kuhn_slides};

const dem_tangential_law dem_law_conventional = {.name = "conventional",
                                                 .twirl_default = 1,
                                                 .radius_arms = 0,
                                                 .pair = kuhn_pair,
                                                 .quad_serves = lanes_serve,
                                                 .quad = conventional_quad};

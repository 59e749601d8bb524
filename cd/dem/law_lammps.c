/* LAMMPS's pair gran/hooke/history (and fix wall/gran's hooke/history) as its source computes
 * them (dem.tangential = lammps, docs/physics.md): the pair pass's kernels, one pair and four
 * pairs, and the options this law does not take. */
#include "dem/dem_stage.h"
#include "dem/dem_tangential.h"

/* The relative movement v dt of body 1 against body 0 at the contact from the velocities of
 * now (dem.tangential = lammps at the start, where the step has no movement). */
static inline vec3 velocity_movement(const world *W, int i, int j, vec3 l0, vec3 l1)
{
    const particles *P = &W->P;
    double dt = W->dt;
    vec3 du_p = v3_zero(), dth_p = v3_zero();
    if (i >= 0) {
        du_p = v3_scale(P->v[i], dt);
        dth_p = v3_scale(P->w[i], dt);
    } else if (W->walls[-1 - i].kind == WALL_PISTON) {
        du_p = v3_scale(W->walls[-1 - i].n, W->walls[-1 - i].u * dt);
    }
    return movement_at_contact(du_p, dth_p, v3_scale(P->v[j], dt), v3_scale(P->w[j], dt), l0, l1);
}

/* dem.tangential = lammps: LAMMPS's pair gran/hooke/history (and fix wall/gran's
 * hooke/history) as its source computes them, in cdlab's conventions (forces on body 0,
 * movements of body 1 against it, n from body 0 to body 1; LAMMPS's shear history is
 * -f_spring/k_t), for pair k (c) touching now in frame f1 (radius_arms):
 * - the step's relative movement at lever arms of the radii along the normal of now (LAMMPS:
 *   the half-step velocities times dt), no mid-step arms, no twirl;
 * - the spring: the last spring force plus k_t times the tangential movement, turned into the
 *   tangent plane of now (its normal part removed, its length not restored);
 * - the dashpots' constants as dashpot_constants makes them, on the same movement;
 * - the friction limit mu |f_n| is taken on the normal force with its dashpot,
 *   k_n zeta - c_n du_n/dt, and caps the spring and the tangential dashpot together: their
 *   sum is scaled back onto the limit and the spring takes the difference (LAMMPS:
 *   shear = (fn/fs)(shear + m gamma_t v_t/k_t) - m gamma_t v_t/k_t); with no history at all,
 *   no tangential force;
 * - at the start (S->moves = DEM_MOVES_ZERO: dem_start) the dashpots act on the initial
 *   velocities and the history does not move, as LAMMPS's setup makes a run's first forces.
 * The ledger: the dashpots' work as dashpot_force books it (fd, half now, half after the next
 * step); the spring's as the conventional law's (the trapezoid over the tangential movement,
 * what the elastic energy |f_t|^2/(2 k_t) does not keep is friction's). A pair apart now ends
 * as contact_force ends it. Not inlined: inlined into the pass (where contact_force is, twice)
 * it made the default law's chute step slower (bench/PROFILE.md, "Measured choices"). */
static void lammps_pair(world *W, dem_solver *S, int *cur, const dem_params *p, int k, dem_pair *c,
                        contact_frame f0, contact_frame f1, int was_touching, double *acc,
                        double diss[2])
{
    (void)f0; /* LAMMPS's arms are those of now */
    int i = c->i, j = c->j;
    double zeta = -f1.gap, k_t = p->law.k_t, dt = W->dt;
    double mu = i >= 0 ? W->detect.mu : W->walls[-1 - i].mu;
    vec3 n = f1.n, ft_old = was_touching ? c->ft : v3_zero();
    c->zeta = zeta;
    if (zeta < 0.0) { /* apart now: no force; the spring's energy is friction's */
        c->ft = v3_zero();
        c->fd = v3_zero();
        if (k_t > 0.0)
            diss[0] += v3_norm2(ft_old) / (2.0 * k_t);
        tally_pair(acc, 0, zeta, 0);
        return;
    }
    vec3 du = relative_movement(W, S, i, j, f1.l0, f1.l1); /* zero at the start */
    vec3 dv = S->moves == DEM_MOVES_ZERO ? velocity_movement(W, i, j, f1.l0, f1.l1) : du;
    double cn = 0.0, ct = 0.0;
    if (p->damp_n > 0.0 || p->damp_t > 0.0)
        dashpot_constants(W, p, i, j, 0, &cn, &ct);
    double dvn = v3_dot(dv, n), dun = v3_dot(du, n);
    vec3 fdn = v3_scale(n, cn * dvn / dt), fdt = v3_scale(v3_axpy(-dvn, n, dv), ct / dt);
    double fn = p->law.k_n * zeta - cn * dvn / dt; /* compressive, with the dashpot */
    vec3 dxi = v3_axpy(-dun, n, du);
    vec3 grown = v3_axpy(k_t, dxi, ft_old);
    vec3 spring = v3_reject(grown, n);
    vec3 fs = v3_add(spring, fdt);
    double limit = mu * fabs(fn), fs_len = v3_norm(fs);
    int sliding = fs_len > limit;
    if (sliding && v3_norm2(grown) > 0.0) {
        spring = v3_sub(v3_scale(fs, limit / fs_len), fdt);
    } else if (sliding) {
        spring = v3_zero();
        fdt = v3_zero();
    }
    if (!(k_t > 0.0)) /* no spring (frictionless): nothing stored */
        spring = v3_zero();
    vec3 fd = v3_add(fdn, fdt);
    vec3 f = v3_add(v3_axpy(-(p->law.k_n * zeta), n, spring), fd);
    diss[1] += 0.5 * v3_dot(fd, du);
    if (k_t > 0.0)
        diss[0] += v3_dot(dxi, v3_scale(v3_add(ft_old, spring), 0.5)) -
                   (v3_norm2(spring) - v3_norm2(ft_old)) / (2.0 * k_t);
    c->ft = spring;
    c->fd = fd;
    deliver(S, cur, n_own(W, S), k, i, j, f, f1);
    tally_pair(acc, v3_norm2(f) > 0.0, zeta, sliding);
}

/* dem.tangential = lammps, four pairs at once: contact_force's common case (rigid particles
 * touching before and after the step, their movements those of the velocities) through
 * lammps_pair, each lane with its operations in their order (the same bits:
 * unit_pair_lanes_match_one_by_one). A lane apart now is marked and its pair goes through
 * contact_force after all; nothing is written here. */
static void lammps_quad4(const world *W, const dem_solver *S, const dem_params *p, const int *kk,
                         int book, quad_out *o)
{
    const v4d zero = {0.0, 0.0, 0.0, 0.0};
    quad_lanes q;
    quad_begin(W, S, kk, 1, &q); /* the radii as lever arms (radius_arms) */
    v4d zeta = -q.gap;
    v4d diss1 = book ? dashpot_second_half4(&q) : zero;
    const double k_n = p->law.k_n, k_t = p->law.k_t, dt = W->dt, mu = W->detect.mu;
    vv3 du = relmove4(q.dui, q.duj, q.dthi, q.dthj, q.l0, q.l1);
    v4d cn = zero, ct = zero;
    if (p->damp_n > 0.0 || p->damp_t > 0.0)
        dashpot_constants4(W, p, q.ii, q.jj, &cn, &ct);
    v4d dun = vv3_dot(du, q.n);
    vv3 fdn = vv3_scale(q.n, cn * dun / dt), fdt = vv3_scale(vv3_axpy(-dun, q.n, du), ct / dt);
    v4d fn = k_n * zeta - cn * dun / dt;
    vv3 dxi = vv3_axpy(-dun, q.n, du);
    vv3 grown = vv3_axpy(zero + k_t, dxi, q.fto);
    vv3 spring = vv3_axpy(-vv3_dot(grown, q.n), q.n, grown);
    vv3 fs = vv3_add(spring, fdt);
    v4d limit = mu * v4_abs(fn), fs_len = v4_sqrt(vv3_dot(fs, fs));
    v4m sliding = fs_len > limit, grew = vv3_dot(grown, grown) > 0.0;
    vv3 capped = vv3_sub(vv3_scale(fs, limit / fs_len), fdt), none = {zero, zero, zero};
    spring = VV3_SELECT(sliding, VV3_SELECT(grew, capped, none), spring);
    fdt = VV3_SELECT(sliding & ~grew, none, fdt);
    if (!(k_t > 0.0))
        spring = none;
    vv3 fd = vv3_add(fdn, fdt);
    vv3 f = vv3_add(vv3_axpy(-(k_n * zeta), q.n, spring), fd);
    diss1 += 0.5 * vv3_dot(fd, du);
    v4d diss0 = zero;
    if (k_t > 0.0)
        diss0 = zero + (vv3_dot(dxi, vv3_scale(vv3_add(q.fto, spring), zero + 0.5)) -
                        (vv3_dot(spring, spring) - vv3_dot(q.fto, q.fto)) / (2.0 * k_t));
    int slid[4];
    for (int l = 0; l < 4; l++) {
        slid[l] = sliding[l] != 0;
        o[l].slide = 0;
    }
    quad_store(o, zeta >= 0.0, f, q.l0, q.l1, fd, spring, zeta, diss0, diss1, slid);
}

static void lammps_quad(const world *W, const dem_solver *S, const dem_params *p, const int *kk,
                        int book, quad_out *o, slide_in *sl)
{
    (void)sl;
    lammps_quad4(W, S, p, kk, book, o);
}

/* The lanes after the start only: the start's dashpots act on the velocities (LAMMPS's setup). */
static int lammps_lanes_serve(const dem_solver *S, const dem_params *p)
{
    (void)p;
    return S->moves != DEM_MOVES_ZERO;
}

/* LAMMPS's law has its own tangential rules: the history turned into the new tangent plane
 * (the projection), no twirl, the dashpot inside the friction cap; it is for frictional rigid
 * spheres. */
static status lammps_check(config *c, const char *S, const dem_params *p, diag *err)
{
    if (!p->law.projection)
        return config_error(
            c, S, "projection", err,
            "tangential = lammps always turns the tangential history into the new "
            "tangent plane (LAMMPS's gran/hooke/history): leave dem.projection out");
    if (p->law.twirl)
        return config_error(c, S, "twirl", err,
                            "tangential = lammps has no twirl (LAMMPS's gran/hooke/history): "
                            "leave dem.twirl out");
    if (p->damp_t_stick_only)
        return config_error(c, S, "damping_tangential_sliding", err,
                            "with tangential = lammps the tangential dashpot acts on every "
                            "touching contact, inside the friction limit (LAMMPS's "
                            "gran/hooke/history): leave this key out");
    if (p->bond || p->deformable)
        return config_error(c, S, p->bond ? "bond" : "deformable", err,
                            "tangential = lammps is LAMMPS's law of frictional contacts between "
                            "rigid spheres; %s use cdlab's own laws (tangential = kuhn or "
                            "conventional)",
                            p->bond ? "bonds" : "deformable discs");
    return CDLAB_OK;
}

const dem_tangential_law dem_law_lammps = {
    .name = "lammps",
    .twirl_default = 0,
    .radius_arms = 1,
    .check = lammps_check,
    .summary = "tangential = lammps: LAMMPS's gran/hooke/history (lever arms of the radii, the "
               "history turned into the new tangent plane, the friction limit on the normal force "
               "with its dashpot, capping the tangential spring and dashpot together; the first "
               "forces with the initial velocities in the dashpots; docs/physics.md)",
    .pair = lammps_pair,
    .quad_serves = lammps_lanes_serve,
    .quad = lammps_quad};

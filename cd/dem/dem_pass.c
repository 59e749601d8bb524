/* The pair pass (issue 62: the step's stage that makes the contact forces): every listed pair's
 * force from the step's movements with the contact law (Kuhn et al., the conventional law or
 * LAMMPS's, bonds, deformable discs' shapes), four pairs at a time in the common case
 * (dem_pass4.h) and one by one otherwise, delivered to the particles in key order. */
#include "dem/dem_pass4.h"
#include "dem/dem_stage.h"
#include "dem/dem_tangential.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Work of the dashpot forces as velocity Verlet applies them: a force F_n acts with half its
 * impulse on each side of t_n, so its work is F_n . (dx_{n-1/2} + dx_{n+1/2}) / 2. This is the
 * half over the step just moved, for the forces of its start, with the lever arms of the start
 * (called before a rebuild replaces the list). Booking c du^2/dt instead leaves a residual of
 * first order in dt in the ledger (measured: 7.6e-5 relative for a colliding pair at
 * omega dt = 1e-3). */
void dem_damping_work_before(world *W, dem_solver *S)
{
    int np = S->npair;
    xsum d;
    xsum_init(&d);
#pragma omp parallel for schedule(static) reduction(xsum_merge : d)
    for (int k = 0; k < np; k++) {
        const dem_pair *c = &S->pair[k];
        if (counted(S, c) && (c->zeta >= 0.0 || bond_of_pair(S, k)) && nonzero(c->fd))
            xsum_add(&d,
                     dashpot_second_half(
                         W, S, c, frame_start(W, S, c->i, c->j, pair_separation(W, c->i, c->j))));
    }
    xsum_merge(&S->acc[DEM_ACC_DAMPING], &d);
}

/* Force of bonded pair c (bond b) at the end of a step, as contact_force for a frictional one:
 * the bond's springs (dem_bond_force) from the change of the gap since the bond was made and
 * the tangential displacement since then (last step's turned into the new tangent plane with
 * its length kept, plus the step's tangential movement at mid-step lever arms), and the
 * dashpots. A bond whose elastic force passes its strength breaks: the pair goes on as a
 * frictional contact with the bond's tangential force (if touching), and the elastic energy
 * the break releases is booked as dissipated (diss[0]; the dashpots' work into diss[1]);
 * acc[BLK_BROKEN] counts the breaks. */
static inline void bond_force(world *W, dem_solver *S, int *cur, const dem_params *p, int k,
                              dem_pair *c, dem_bond_state *b, int book, double *acc, double *diss)
{
    int i = c->i, j = c->j;
    vec3 d = pair_separation(W, i, j);
    contact_frame f1 = frame_now(W, S, i, j, d), f0 = frame_start(W, S, i, j, d);
    if (book && nonzero(c->fd))
        diss[1] += dashpot_second_half(W, S, c, f0);
    vec3 du_rel = relative_movement(W, S, i, j, v3_scale(v3_add(f1.l0, f0.l0), 0.5),
                                    v3_scale(v3_add(f1.l1, f0.l1), 0.5));
    vec3 ut = v3_reject(b->u_t, f1.n);
    double len = v3_norm(b->u_t), plen = v3_norm(ut);
    if (plen > 0.0)
        ut = v3_scale(ut, len / plen);
    ut = v3_add(ut, v3_reject(du_rel, f1.n));
    const double k_n = p->law.k_n, k_t = p->law.k_t;
    dem_bond_law L = {k_n, k_t, 0.0, 0.0, p->bond_strength_n, p->bond_strength_t};
    dem_bond_in in = {.h = f1.gap - b->gap0, .u_t = ut, .m_0 = 1.0, .m_1 = 1.0};
    dem_bond_out out;
    dem_bond_force(&L, &in, &out);
    vec3 f = v3_axpy(out.f_n, f1.n, out.f_t), fd = v3_zero(); /* on body 0 */
    if (p->damp_n > 0.0 || p->damp_t > 0.0) {
        fd = dashpot_force(W, S, p, i, j, f1, 0, &diss[1]);
        f = v3_add(f, fd);
    }
    double zeta = -f1.gap, e_n = 0.5 * k_n * in.h * in.h, e_t = 0.5 * k_t * v3_norm2(ut);
    c->fd = fd;
    c->zeta = zeta;
    c->ft = out.f_t;
    b->u_t = ut;
    if (out.broken) {
        b->intact = 0;
        acc[BLK_BROKEN] += 1.0;
        double released = e_n + e_t;
        if (zeta >= 0.0) {
            e_n = 0.5 * k_n * zeta * zeta;
            e_t = k_t > 0.0 ? v3_norm2(out.f_t) / (2.0 * k_t) : 0.0;
        } else {
            /* apart: marked as just touching, so that the next step passes the law (which
             * writes the pair's zero force over the bond's last) instead of skipping it */
            c->zeta = 0.0;
            c->ft = v3_zero();
            e_n = e_t = 0.0;
        }
        diss[0] += released - e_n - e_t;
    }
    deliver(S, cur, n_own(W, S), k, i, j, f, f1);
    tally_pair(acc, 1, zeta, 0);
}

/* Force of pair k (c) at the end of a step from the step's movements: the contact force on
 * body 1 and its torques on both bodies (deformable discs: the stress terms) delivered to the
 * particles (deliver), the history into c, the statistics into acc[] and the energy dissipated
 * in the step into diss (friction, dashpots). With book set, first the second half of the work
 * of its last dashpot force (see damping_work_before) with the lever arms of the step's start.
 * A pair apart at the end of the step delivers nothing (its force is zero). */
static inline __attribute__((always_inline)) void contact_force(world *W, dem_solver *S, int *cur,
                                                                const dem_params *p, int k,
                                                                int book, double *acc,
                                                                double diss[2])
{
    dem_pair *c = &S->pair[k];
    dem_bond_state *bond = bond_of_pair(S, k);
    if (bond) {
        bond_force(W, S, cur, p, k, c, bond, book, acc, diss);
        return;
    }
    const particles *P = &W->P;
    int i = c->i, j = c->j;
    int was_touching = c->zeta >= 0.0;
    vec3 d = pair_separation(W, i, j);
    if (!was_touching && i >= 0) { /* the common case first: apart before and now */
        double reach = P->r[i] + P->r[j] + 2.0 * S->ext_max;
        if (v3_norm2(d) > reach * reach)
            return;
    }
    contact_frame f1 = frame_now(W, S, i, j, d);
    double zeta_new = -f1.gap;
    if (!was_touching && zeta_new < 0.0)
        return;
    /* the start of the step: lever arms of then, or of now for a pair touching for the first
     * time since it was apart (or a new pair) */
    contact_frame f0 = was_touching ? frame_start(W, S, i, j, d) : f1;
    if (book && was_touching && nonzero(c->fd))
        diss[1] += dashpot_second_half(W, S, c, f0);
    /* the law of dem.tangential (dem_tangential.h): its kernel for one pair */
    S->law->pair(W, S, cur, p, k, c, f0, f1, was_touching, acc, diss);
}

/* Deformable discs: the shapes (ellipses) of the stresses in S->sig, the largest reach beyond a
 * radius, and the strain along each load's direction. With t finite, the work of the loads in
 * the step that ended at t on the movement of their points of action by the strain (the point
 * s = -r u of a load F = |F| u moves by eps s: work -r |F| u . d eps . u, trapezoid of |F|
 * over the step) is added to work_external (this process's own particles). */
static void shapes(const world *W, dem_solver *S, const dem_params *p, double t)
{
    const particles *P = &W->P;
    int nown = n_own(W, S);
    double ext = 0.0, f_mean = 0.0;
    if (isfinite(t))
        f_mean = 0.5 * (world_load_factor(W, t - W->dt) + world_load_factor(W, t));
    xsum work;
    xsum_init(&work);
#pragma omp parallel for schedule(static) reduction(max : ext) reduction(xsum_merge : work)
    for (int i = 0; i < P->n; i++) {
        double eps[3];
        dem_deform_strain(p->young, p->poisson, &S->sig[3 * i], eps);
        S->ell[i] = dem_deform_ellipse(P->r[i], eps);
        ext = fmax(ext, S->ell[i].a - P->r[i]);
        double fm = v3_norm(P->f_ext[i]), e = 0.0;
        if (fm > 0.0) {
            vec3 u = v3_scale(P->f_ext[i], 1.0 / fm);
            e = eps[0] * u.x * u.x + eps[1] * u.y * u.y + 2.0 * eps[2] * u.x * u.y;
            if (i < nown && isfinite(t))
                xsum_add(&work, -(P->r[i] * fm * f_mean * (e - S->eload[i])));
        }
        S->eload[i] = e;
    }
    xsum_merge(&S->acc[DEM_ACC_WORK_EXTERNAL], &work);
    S->ext_max = S->dist ? S->dist->max(S->dist, ext) : ext;
}

void dem_deform_shapes(const world *W, dem_solver *S, const dem_params *p)
{
    shapes(W, S, p, NAN);
}

/* Deformable discs: each particle's stress from its contacts' terms (gathered into S->sig) and
 * its load at time t (acting at the surface point it pushes on, s = -r F/|F|), divided by
 * V = pi r^2 thickness (a distributed run: its own particles, then the halo copies' stresses
 * from their owners); then the shapes. */
status dem_deform_update(world *W, dem_solver *S, const dem_params *p, double t, diag *err)
{
    const particles *P = &W->P;
    double loaded = world_load_factor(W, t);
    int nown = n_own(W, S);
#pragma omp parallel for schedule(static)
    for (int i = 0; i < nown; i++) {
        double *s = &S->sig[3 * i];
        vec3 F = v3_scale(P->f_ext[i], loaded);
        double fm = v3_norm(F);
        if (fm > 0.0) {
            double term[3];
            dem_deform_term(v3_scale(F, -P->r[i] / fm), F, term);
            for (int k = 0; k < 3; k++)
                s[k] += term[k];
        }
        double V = CDLAB_PI * P->r[i] * P->r[i] * p->thickness;
        for (int k = 0; k < 3; k++)
            s[k] /= V;
    }
    status st = S->dist ? S->dist->halo_values(S->dist, S->sig, 3, err) : CDLAB_OK;
    if (st == CDLAB_OK)
        shapes(W, S, p, t);
    return st;
}

/* The pairs of list[k0..k1) that contact_force must see, in list order, into live[]; returns
 * how many. The others were apart at the end of the last step and are out of reach now (two
 * particles farther apart than their radii and reaches): contact_force would leave them
 * untouched and deliver nothing, by the same test. Made without branches (apart or not is a
 * coin toss pair by pair: a branch mispredicted; more than half of the chute's listed pairs are
 * apart). common[e]: live[e] is of pairs4's case as far as its record tells (read here already
 * rather than again after the block's scan: bench/PROFILE.md, "Measured choices": live pairs). */
/* live_pairs streams the pair records (64 bytes each) to test three fields; the hardware did not
 * keep them coming (the load of a record's j stood out in perf): the records are prefetched
 * LIVE_AHEAD (2 kB) ahead. It also prefetches body 1's data that the block's pass reads after
 * it: the position and radius of the pair LIVE_BODY_AHEAD ahead (read here), and the
 * velocities, 1/m (pairs4), force, torque and block (the delivery) of this pair's body 1, which
 * lie up to a few hundred particles away from body 0's (body 0's are read in order). For every
 * listed pair, apart or not: a prefetch whose address waits for the test (or for the record's
 * overlap) was slower than the lines wasted on the pairs found apart. The distances and the
 * gains: bench/PROFILE.md, "Measured choices": pair-pass prefetches. */
#define LIVE_AHEAD 32

#define LIVE_BODY_AHEAD 16

static int live_pairs(const world *W, const dem_solver *S, int k0, int k1, int *live,
                      unsigned char *common)
{
    const particles *P = &W->P;
    const dem_pair *pr = S->pair;
    const int bonds = S->bond_of != NULL;
    const double ext2 = 2.0 * S->ext_max;
    const int last = S->npair - 1;
    int n = 0;
    for (int k = k0; k < k1; k++) {
        prefetch_line(&pr[k + LIVE_AHEAD < last ? k + LIVE_AHEAD : last]);
        int i = pr[k].i, j = pr[k].j;
        int ii = i >= 0 ? i : j; /* a wall pair is always live */
        vec3 d = pbox_delta(&P->box, P->x[ii], P->x[j]);
        double reach = P->r[ii] + P->r[j] + ext2;
        int out = (i >= 0) & !(pr[k].zeta >= 0.0) & (v3_norm2(d) > reach * reach);
        if (bonds)
            out &= S->bond_of[k] < 0;
        const int ka = k + LIVE_BODY_AHEAD < last ? k + LIVE_BODY_AHEAD : last;
        prefetch_line(&P->x[pr[ka].j]);
        prefetch_line(&P->r[pr[ka].j]);
        prefetch_line(&P->v[j]);
        prefetch_line(&P->w[j]);
        prefetch_line(&P->inv_m[j]);
        prefetch_line(&S->F[j]);
        prefetch_line(&S->T[j]);
        prefetch_line(&S->home[j]);
        live[n] = k;
        /* pairs4's case (for rigid particles: the pass asks that too): not a wall pair,
         * touching at the step's start, no bond, counted by this process */
        common[n] =
            (i >= 0) & (pr[k].zeta >= 0.0) & (!bonds || S->bond_of[k] < 0) & counted(S, &pr[k]);
        n += !out;
    }
    return n;
}

/* Each thread's bins for the step's exact sums (compute_forces: friction and dashpots;
 * kick_drift: the external work): zero from the thread's start and left zero by every flush, so
 * that no step zeroes their 33 kB (a small run's whole step takes a few microseconds). */
_Thread_local xsum_bins dem_step_bins[2];

/* Contact forces at the end of a step from the step's movements (all zero at t = 0), then
 * each particle's total force and torque (and, for deformable discs, the contact part of its
 * stress).
 * Long: one loop nest over the write-back blocks, their chunks and their quads, whose records (the
 * chunk's lanes, the thread's bins) live on its stack and stay in registers; split, they would
 * travel through pointers, and this is the step's hot path (bench/PROFILE.md). */
void dem_compute_forces(world *W, dem_solver *S, const dem_params *p, int book, dem_stats *st)
{
    int np = S->npair, nb = n_blocks(np), nown = n_own(W, S), nwb = S->nwb;
    const int *wbs = S->wbs;
    /* the law's four-pair kernel covers rigid particles (not the ellipses of deformable
     * discs), where the law says it serves (dem_tangential.h: quad_serves) */
    const int quad = !S->ell && !S->one_by_one && S->law->quad_serves(S, p);
    /* the sums start at +0: those of the particles that sum in the pass here (all bits zero,
     * as memset would make them, on the threads), the side rows in the pass (a pair apart
     * delivers nothing) */
    int nside = S->nside;
#pragma omp parallel for schedule(static) if (nown > CDLAB_PARALLEL_MIN)
    for (int i = 0; i < nown; i++) {
        S->F[i] = S->T[i] = v3_zero();
        if (S->ell)
            S->sig[3 * i] = S->sig[3 * i + 1] = S->sig[3 * i + 2] = 0.0;
    }
    /* the energy dissipated in the step, summed exactly pair by pair: the same bits for any
     * thread count and, as each pair is counted by one rank, for any number of ranks */
    xsum fric, damp;
    xsum_init(&fric);
    xsum_init(&damp);
    /* one write-back block per task: its pairs in list order on one thread (deliver); the
     * energies through each thread's bins (xsum_bins: an integer addition per value) */
#pragma omp parallel reduction(xsum_merge : fric, damp)
    {
        xsum_bins *fric_bins = &dem_step_bins[0], *damp_bins = &dem_step_bins[1];
#pragma omp for schedule(dynamic, 1)
        for (int w = 0; w < nwb; w++) {
            int b_end = n_blocks(wbs[w + 1]), cur = side_row_from(S, wbs[w]);
            /* the block's side rows zeroed by the thread that writes them next: they grow with
             * the write-back blocks (megabytes in the chute on 2 threads), and zeroed with the
             * particles' sums before the pass they cost more (bench/PROFILE.md, "Measured
             * choices": side rows) */
            int row_end = wbs[w + 1] < np ? side_row_from(S, wbs[w + 1]) : nside;
            if (row_end > cur) {
                memset(&S->side[3 * cur], 0, (size_t)(row_end - cur) * 3 * sizeof *S->side);
                if (S->ell)
                    memset(&S->side_sig[6 * cur], 0,
                           (size_t)(row_end - cur) * 6 * sizeof *S->side_sig);
            }
            for (int b = wbs[w] / DEM_BLOCK; b < b_end; b++) {
                double acc[DEM_NSUM] = {0, 0, 0, -INFINITY, 0};
                int end = (b + 1) * DEM_BLOCK < np ? (b + 1) * DEM_BLOCK : np;
                int live[DEM_BLOCK];
                unsigned char common[DEM_BLOCK];
                int nlive = live_pairs(W, S, b * DEM_BLOCK, end, live, common);
                for (int e0 = 0; e0 < nlive; e0 += QUAD_CHUNK) {
                    int e1 = e0 + QUAD_CHUNK < nlive ? e0 + QUAD_CHUNK : nlive;
                    /* the chunk's pairs of the common case, four at a time (pairs4), then every
                     * pair in list order: applied, or through contact_force */
                    quad_out qo[QUAD_CHUNK + 3];
                    slide_in sl[QUAD_CHUNK + 3];
                    int lane[QUAD_CHUNK], cand[QUAD_CHUNK], nc = 0;
                    for (int e = e0; e < e1; e++) {
                        lane[e - e0] = quad && common[e] ? nc : -1;
                        if (quad && common[e])
                            cand[nc++] = live[e];
                    }
                    for (int q = 0; q < nc; q += 4) {
                        int kk[4];
                        for (int l = 0; l < 4; l++)
                            kk[l] = cand[q + l < nc ? q + l : nc - 1];
                        S->law->quad(W, S, p, kk, book, &qo[q], &sl[q]);
                    }
                    if (S->law->slides) { /* its sliding pairs of the chunk, four at a time */
                        int dl[QUAD_CHUNK], nd = 0;
                        for (int q = 0; q < nc; q++)
                            if (qo[q].slide)
                                dl[nd++] = q;
                        S->law->slides(p, W->detect.mu, sl, dl, nd, qo);
                    }
                    for (int e = e0; e < e1; e++) {
                        int k = live[e];
                        double diss[2] = {0.0, 0.0};
                        if (lane[e - e0] >= 0 && qo[lane[e - e0]].ok) {
                            apply4(S, &cur, nown, k, &qo[lane[e - e0]], acc, diss);
                        } else if (counted(S, &S->pair[k])) {
                            contact_force(W, S, &cur, p, k, book, acc, diss);
                        } else { /* its energies and statistics are another rank's */
                            double other[DEM_NSUM] = {0, 0, 0, -INFINITY, 0};
                            contact_force(W, S, &cur, p, k, book, other, diss);
                            acc[BLK_MAX_OVERLAP] =
                                fmax(acc[BLK_MAX_OVERLAP], other[BLK_MAX_OVERLAP]);
                            continue;
                        }
                        xsum_bins_add(fric_bins, &fric, diss[0]);
                        xsum_bins_add(damp_bins, &damp, diss[1]);
                    }
                }
                memcpy(&S->blk[DEM_NSUM * b], acc, sizeof acc);
            }
        }
        xsum_bins_flush(fric_bins, &fric);
        xsum_bins_flush(damp_bins, &damp);
    }
    xsum_merge(&S->acc[DEM_ACC_FRICTION], &fric);
    xsum_merge(&S->acc[DEM_ACC_DAMPING], &damp);
    /* the straddlers: their pairs' side rows in contact order. Without branches (they
     * mispredicted: body 0 or 1 at random): body 1 receives R and l1 x R, body 0 -R and
     * -(l0 x R), as sign * R and b1 t1 - b0 t0 (exact: products by 0 and +-1). */
    const int *ss = S->sadj_start, *sa = S->sadj;
    const int last_side = S->nstrad > 0 ? ss[S->nstrad] - 1 : 0;
#pragma omp parallel for schedule(static)
    for (int r = 0; r < S->nstrad; r++) {
        int i = S->strad[r];
        vec3 F = v3_zero(), T = v3_zero();
        double sig[3] = {0.0, 0.0, 0.0};
        for (int e = ss[r]; e < ss[r + 1]; e++) {
            /* the row 16 sides ahead (two lines: 72 bytes), written in the pass by any thread
             * (bench/PROFILE.md, "Measured choices": straddlers' gather) */
            const char *ahead =
                (const char *)&S->side[3 * (sa[e + 16 < last_side ? e + 16 : last_side] >> 1)];
            prefetch_line(ahead);
            prefetch_line(ahead + 64);
            int row = sa[e] >> 1;
            const vec3 *g = &S->side[3 * row];
            double b1 = (double)(sa[e] & 1), b0 = 1.0 - b1, sign = b1 - b0;
            F = v3_axpy(sign, g[0], F);
            T = v3_add(T, v3_sub(v3_scale(g[1], b1), v3_scale(g[2], b0)));
            if (S->ell)
                for (int q = 0; q < 3; q++)
                    sig[q] += S->side_sig[6 * row + 3 * !(sa[e] & 1) + q];
        }
        S->F[i] = F;
        S->T[i] = T;
        if (S->ell)
            memcpy(&S->sig[3 * i], sig, sizeof sig);
    }
    memset(S->piston_F, 0, (size_t)W->n_walls * sizeof *S->piston_F);
    for (int e = 0; e < S->n_wall_pairs; e++) {
        int row = S->wall_rows[e], w = -1 - S->pair[S->side_pair[row]].i;
        S->piston_F[w] -= v3_dot(S->side[3 * row], W->walls[w].n);
    }
    if (S->dist)
        S->dist->pistons(S->dist, W, S);
    double max_ov = 0.0;
    for (int b = 0; b < nb; b++)
        max_ov = fmax(max_ov, S->blk[DEM_NSUM * b + BLK_MAX_OVERLAP]);
    S->bonds_broken += (long)block_sum(S, nb, BLK_BROKEN);
    st->n_contacts = np;
    if (S->dist) {
        st->n_contacts = 0;
        for (int k = 0; k < np; k++)
            st->n_contacts += counted(S, &S->pair[k]);
    }
    st->n_active = (int)block_sum(S, nb, BLK_ACTIVE);
    st->mean_overlap = st->n_active > 0 ? block_sum(S, nb, BLK_OVERLAP) / st->n_active : 0.0;
    st->n_sliding = (int)block_sum(S, nb, BLK_SLIDING);
    st->max_overlap = max_ov;
}

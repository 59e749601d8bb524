/* Gauss-Seidel sweeps of the shock law (Unger & Kertesz sec. 2.5) in five orders. */
#include "nscd/cd.h"
#include "nscd/cd_method.h"
#include "prefetch.h"
#include "nscd/cd_shock_law.h"
#include "nscd/cd_contact_problem.h"

#include "grow.h"
#include "parallel.h"

#include <stdlib.h>
#include <string.h>

/* Where a sweep finds the bodies' velocities and inverse masses: the particles' own arrays or
 * the solver's records (cd_body). Strides in bytes; built where it is used, so that the strides
 * are constants there. */
typedef struct body_view {
    char *v, *w;
    const char *inv_m, *inv_I;
    size_t vs, ss; /* stride of the vectors, of the scalars */
} body_view;

static inline body_view view_particles(const particles *P)
{
    return (body_view){(char *)P->v,           (char *)P->w, (const char *)P->inv_m,
                       (const char *)P->inv_I, sizeof(vec3), sizeof(double)};
}

static inline body_view view_bodies(cd_body *B)
{
    return (body_view){(char *)&B->v,           (char *)&B->w, (const char *)&B->inv_m,
                       (const char *)&B->inv_I, sizeof *B,     sizeof *B};
}

static inline vec3 *body_v(body_view b, int k)
{
    return (vec3 *)(b.v + (size_t)k * b.vs);
}
static inline vec3 *body_w(body_view b, int k)
{
    return (vec3 *)(b.w + (size_t)k * b.vs);
}
static inline double body_inv_m(body_view b, int k)
{
    return *(const double *)(b.inv_m + (size_t)k * b.ss);
}
static inline double body_inv_I(body_view b, int k)
{
    return *(const double *)(b.inv_I + (size_t)k * b.ss);
}

/* Inlined into the sweeps; cd_relative_velocity and cd_apply_impulse are the same for others. */
static inline vec3 relative_velocity(const world *W, body_view b, const contact *c)
{
    /* eq. (3): V = v1 + w1 x l1 - v0 - w0 x l0, with l0 = a0 n, l1 = -a1 n */
    vec3 V = v3_axpy(-c->a1, v3_cross(*body_w(b, c->j), c->n), *body_v(b, c->j));
    if (c->i >= 0) {
        V = v3_sub(V, v3_axpy(c->a0, v3_cross(*body_w(b, c->i), c->n), *body_v(b, c->i)));
    } else {
        const wall *w = &W->walls[contact_wall_index(c)];
        if (w->kind == WALL_PISTON)
            V = v3_axpy(-w->u, w->n, V);
    }
    return V;
}

static inline void apply_impulse(world *W, body_view b, const contact *c, vec3 dP)
{
    const particles *P = &W->P;
    int dim = P->dimension;
    int j = c->j;
    /* the torques l x dP, with l0 = a0 n, l1 = -a1 n */
    vec3 nxdP = v3_cross(c->n, dP);
    /* frozen particles are never written (the colored sweep updates their contacts in parallel) */
    if (!P->frozen[j]) {
        vec3 *v = body_v(b, j), *w = body_w(b, j);
        *v = v3_add(*v, dof_project_lin(dim, v3_scale(dP, body_inv_m(b, j))));
        *w = v3_add(*w, dof_project_ang(dim, v3_scale(nxdP, -c->a1 * body_inv_I(b, j))));
    }
    if (c->i >= 0 && !P->frozen[c->i]) {
        int i = c->i;
        vec3 *v = body_v(b, i), *w = body_w(b, i);
        *v = v3_sub(*v, dof_project_lin(dim, v3_scale(dP, body_inv_m(b, i))));
        *w = v3_sub(*w, dof_project_ang(dim, v3_scale(nxdP, c->a0 * body_inv_I(b, i))));
    } else if (c->i < 0) {
        wall *w = &W->walls[contact_wall_index(c)];
        if (w->kind == WALL_PISTON) /* the reaction -dP, along the piston normal only */
            w->u -= w->inv_mass * v3_dot(dP, w->n);
    }
}

vec3 cd_relative_velocity(const world *W, const contact *c)
{
    return relative_velocity(W, view_particles(&W->P), c);
}

void cd_apply_impulse(world *W, const contact *c, vec3 dP)
{
    apply_impulse(W, view_particles(&W->P), c, dP);
}

/* The warm start: the carried-over forces' impulses R dt on their bodies, in list order, on the
 * sweeps' records while they are gathered (else on the particles' arrays); the bodies of the
 * contact WARM_AHEAD places on are prefetched (in a packing stored in random order each body is
 * a miss). */
void cd_warm_start(world *W, cd_solver *S)
{
    enum { WARM_AHEAD = 16 };
    body_view b = S->bodies_on ? view_bodies(S->body) : view_particles(&W->P);
    const contact *c = S->C.c;
    int n = S->C.n;
    double dt = W->dt;
    for (int k = 0; k < n; k++) {
        if (k + WARM_AHEAD < n) {
            const contact *g = &c[k + WARM_AHEAD];
            prefetch_line(body_v(b, g->j));
            if (g->i >= 0)
                prefetch_line(body_v(b, g->i));
        }
        if (c[k].R.x != 0.0 || c[k].R.y != 0.0 || c[k].R.z != 0.0)
            apply_impulse(W, b, &c[k], v3_scale(c[k].R, dt));
    }
}

status cd_bodies_gather(world *W, cd_solver *S, diag *err)
{
    const particles *P = &W->P;
    /* 64-byte aligned (one line per record) on huge pages: the sweeps reach them anywhere */
    cd_body *B = grow_big(S->body, 0, &S->body_cap, P->n, sizeof *B);
    if (!B)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot grow the sweep's records to %d bodies", P->n);
    S->body = B;
    CDLAB_PARALLEL_FOR
    for (int i = 0; i < P->n; i++)
        B[i] = (cd_body){.v = P->v[i], .w = P->w[i], .inv_m = P->inv_m[i], .inv_I = P->inv_I[i]};
    S->n_body = P->n;
    S->bodies_on = 1;
    return CDLAB_OK;
}

void cd_bodies_scatter(world *W, cd_solver *S)
{
    particles *P = &W->P;
    const cd_body *B = S->body;
    CDLAB_PARALLEL_FOR
    for (int i = 0; i < S->n_body; i++) {
        P->v[i] = B[i].v;
        P->w[i] = B[i].w;
    }
    S->bodies_on = 0;
}

/* One Gauss-Seidel update in incremental form, without a division. V, the contact velocity of
 * now, includes this contact's own current force R: U = V - dt M^-1 R (eq. 23, with M^-1 R =
 * R_n n / m_n + R_t / m_t, eq. 19), so that on each axis -(m/dt) U = R - (m/dt) V and the shock
 * law (eq. 34 with g_pos) becomes
 *     R_n' = R_n - (m_n/dt) (g_pos/dt + V_n),  open (R' = 0) when R_n' < 0,
 *     R_t' = R_t - (m_t/dt) V_t,  scaled onto the cone when |R_t'| > mu R_n'.
 * Mathematically identical to shock_law(U, ...); the same up to rounding (tested against it).
 * Over-relaxed (projected SOR, solver.relaxation = omega): the steps -(m/dt) U above are taken
 * omega times, R' = R + omega (R_gs - R) on each axis before the projections (k_dt = omega / dt;
 * with omega = 1 it is 1/dt exactly, and the update the Gauss-Seidel one bit for bit). */
static inline vec3 contact_update(const world *W, body_view b, const contact *c, double inv_dt,
                                  double k_dt)
{
    vec3 V = relative_velocity(W, b, c), n = c->n;
    double g_pos = c->gap > 0.0 ? c->gap : 0.0;
    double V_n = v3_dot(V, n), R_n_old = v3_dot(c->R, n);
    double R_n = R_n_old - c->m_n * k_dt * (g_pos * inv_dt + V_n);
    if (R_n < 0.0) /* the gap stays open */
        return v3_zero();
    vec3 R_t_old = v3_axpy(-R_n_old, n, c->R), V_t = v3_axpy(-V_n, n, V);
    vec3 R_t = v3_axpy(-c->m_t * k_dt, V_t, R_t_old);
    double rt2 = v3_norm2(R_t), limit = c->mu * R_n;
    if (rt2 > limit * limit) /* sliding: onto the friction cone */
        R_t = v3_scale(R_t, limit / sqrt(rt2));
    return v3_axpy(R_n, n, R_t);
}

vec3 cd_contact_update(const world *W, const contact *c)
{
    return contact_update(W, view_particles(&W->P), c, 1.0 / W->dt, 1.0 / W->dt);
}

vec3 cd_contact_update_reference(const world *W, const contact *c)
{
    double dt = W->dt;
    /* U (eq. 23): the contact velocity without this contact's own current force. The own
     * force changed the velocity by M^-1 R dt with M^-1 R = R_n n / m_n + R_t / m_t (eq. 19). */
    vec3 V = cd_relative_velocity(W, c);
    double R_n = v3_dot(c->R, c->n);
    vec3 R_t = v3_axpy(-R_n, c->n, c->R);
    double w_n = c->m_n > 0.0 ? 1.0 / c->m_n : 0.0;
    double w_t = c->m_t > 0.0 ? 1.0 / c->m_t : 0.0;
    vec3 own = v3_axpy(R_n * w_n, c->n, v3_scale(R_t, w_t));
    vec3 U = v3_axpy(-dt, own, V);
    return shock_law(U, c->n, c->gap, c->m_n, c->m_t, c->mu, dt, NULL);
}

/* perm holds this many entries past the contacts, for the prefetches (pad_perm) */
#define PERM_PAD CD_PERM_PAD

/* The sweeps' order for n contacts, and with jacobi the new forces' buffer (only the Jacobi
 * sweep has one: 24 bytes per contact of address space, which ulimit -v counts). */
static status ensure(cd_solver *S, int n, int jacobi, diag *err)
{
    int *perm = grow_array(S->perm, &S->perm_cap, n + PERM_PAD, sizeof *perm);
    if (perm)
        S->perm = perm;
    vec3 *R_next = jacobi ? grow_array(S->R_next, &S->R_next_cap, n, sizeof *R_next) : S->R_next;
    if (R_next)
        S->R_next = R_next;
    if (!perm || (jacobi && !R_next))
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot grow solver buffers to %d contacts", n);
    return CDLAB_OK;
}

void sweep_result_init(sweep_result *r)
{
    r->max_rel_change = 0.0;
    r->local_ok = 1;
    xsum_init(&r->abs_before);
    xsum_init(&r->abs_after);
}

static void note_change(const cd_params *p, vec3 R_old, vec3 R_new, sweep_result *r)
{
    double dR = v3_norm(v3_sub(R_new, R_old)), a_new = v3_norm(R_new);
    double denom = a_new + p->delta;
    double rel = denom > 0.0 ? dR / denom : (dR > 0.0 ? INFINITY : 0.0);
    if (rel > r->max_rel_change)
        r->max_rel_change = rel;
    if (dR > p->epsilon * a_new + p->delta)
        r->local_ok = 0;
    if (p->crit == CRIT_GLOBAL) {
        xsum_add(&r->abs_before, v3_norm(R_old));
        xsum_add(&r->abs_after, a_new);
    }
}

/* Gives contact c its new force: the change measures, the impulse of the change on its bodies. */
static inline void set_force(world *W, body_view b, const cd_params *p, contact *c, vec3 R_new,
                             int measure, sweep_result *r)
{
    if (measure)
        note_change(p, c->R, R_new, r);
    apply_impulse(W, b, c, v3_scale(v3_sub(R_new, c->R), W->dt));
    c->R = R_new;
}

/* Fills perm[n .. n + PERM_PAD) with a valid contact index for the prefetches. */
static void pad_perm(int *perm, int n)
{
    for (int k = n; k < n + PERM_PAD; k++)
        perm[k] = 0;
}

/* How many contacts ahead the greedy colouring prefetches its bodies' masks. */
#define COLOR_AHEAD 16

status cd_greedy_colors(int n, const int *a, const int *b, int nb, int *color, int *ncolors,
                        uint64_t **mask, int *mask_cap, int *mask_words, diag *err)
{
    for (;;) {
        int mw = *mask_words;
        uint64_t *m = grow_array(*mask, mask_cap, nb * mw, sizeof *m);
        if (!m)
            return diag_set(err, CDLAB_ERR_NOMEM, "cannot colour %d contacts", n);
        *mask = m;
        memset(m, 0, (size_t)nb * mw * sizeof *m);
        int ncol = 0, overflow = 0;
        for (int k = 0; k < n && !overflow; k++) {
            if (k + COLOR_AHEAD < n) { /* the bodies' masks: in random storage order, misses */
                if (a[k + COLOR_AHEAD] >= 0)
                    prefetch_line(&m[(size_t)a[k + COLOR_AHEAD] * mw]);
                if (b[k + COLOR_AHEAD] >= 0)
                    prefetch_line(&m[(size_t)b[k + COLOR_AHEAD] * mw]);
            }
            uint64_t *ra = a[k] >= 0 ? &m[(size_t)a[k] * mw] : NULL;
            uint64_t *rb = b[k] >= 0 ? &m[(size_t)b[k] * mw] : NULL;
            int col = -1;
            for (int w = 0; w < mw && col < 0; w++) {
                uint64_t used = (ra ? ra[w] : 0) | (rb ? rb[w] : 0);
                if (~used)
                    col = 64 * w + __builtin_ctzll(~used);
            }
            if (col < 0) {
                overflow = 1;
                break;
            }
            color[k] = col;
            if (ra)
                ra[col / 64] |= 1ull << (col % 64);
            if (rb)
                rb[col / 64] |= 1ull << (col % 64);
            if (col + 1 > ncol)
                ncol = col + 1;
        }
        if (!overflow) {
            *ncolors = ncol;
            return CDLAB_OK;
        }
        if (*mask_words >= 1 << 16)
            return diag_set(err, CDLAB_ERR_NOMEM, "contact graph needs more than %d colours",
                            64 << 16);
        *mask_words *= 2;
    }
}

/* Greedy colouring of the contact graph in list order (cd_greedy_colors): two contacts conflict
 * when they share a movable body (a particle that is not frozen, or a piston); fixed walls and
 * frozen particles do not count. Bodies are numbered particles, then walls. Deterministic:
 * depends only on the contact list. */
int *cd_contact_bodies(const world *W, const contact_list *L)
{
    const particles *P = &W->P;
    int n = L->n;
    int *ab = malloc((size_t)(2 * n + 1) * sizeof *ab);
    if (!ab)
        return NULL;
    CDLAB_PARALLEL_FOR
    for (int k = 0; k < n; k++) {
        const contact *c = &L->c[k];
        ab[k] = P->frozen[c->j] ? -1 : c->j;
        if (c->i >= 0)
            ab[n + k] = P->frozen[c->i] ? -1 : c->i;
        else
            ab[n + k] = W->walls[contact_wall_index(c)].kind == WALL_PISTON
                            ? P->n + contact_wall_index(c)
                            : -1;
    }
    return ab;
}

status cd_color_bodies(world *W, cd_solver *S, const int *ab, diag *err)
{
    int n = S->C.n, nb = W->P.n + W->n_walls;
    int *color_of = grow_array(S->color_of, &S->color_of_cap, n, sizeof *color_of);
    if (!color_of)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot colour %d contacts", n);
    S->color_of = color_of;
    status s = cd_greedy_colors(n, ab, ab + n, nb, color_of, &S->n_colors, &S->mask, &S->mask_cap,
                                &S->mask_words, err);
    if (s != CDLAB_OK)
        return s;
    S->colored_at_step = W->step;
    return cd_group_colors(S, n, err);
}

status cd_color_contacts(world *W, cd_solver *S, diag *err)
{
    int *ab = cd_contact_bodies(W, &S->C);
    if (!ab)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot colour %d contacts", S->C.n);
    status s = cd_color_bodies(W, S, ab, err);
    free(ab);
    return s;
}

status cd_group_colors(cd_solver *S, int n, diag *err)
{
    /* contacts grouped by colour, in list order within a colour (counting sort into perm) */
    int nc = S->n_colors;
    const int *color_of = S->color_of;
    status s = ensure(S, n, 0, err);
    if (s != CDLAB_OK)
        return s;
    int *cs = grow_array(S->color_start, &S->color_start_cap, nc + 1, sizeof *cs);
    int *co = grow_array(S->color_order, &S->color_order_cap, nc, sizeof *co);
    if (cs)
        S->color_start = cs;
    if (co)
        S->color_order = co;
    if (!cs || !co)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot colour %d contacts", n);
    memset(cs, 0, (size_t)(nc + 1) * sizeof *cs);
    for (int k = 0; k < n; k++)
        cs[color_of[k] + 1]++;
    for (int c = 0; c < nc; c++)
        cs[c + 1] += cs[c];
    for (int k = 0; k < n; k++)
        S->perm[cs[color_of[k]]++] = k;
    for (int c = nc; c > 0; c--)
        cs[c] = cs[c - 1];
    cs[0] = 0;
    pad_perm(S->perm, n);
    return CDLAB_OK;
}

/* The order is known ahead: prefetch the contact record PF_FAR updates ahead, and the
 * velocities of its bodies PF_NEAR ahead (by then its body indices are in cache). Measured on
 * 97,336 shuffled spheres: 3.3e6 -> 1.0e7 contact updates per second (common/prefetch.h). 2D
 * random sweep at 10^6 disks with the body records on huge pages (grow_big): 16/8 ahead 2.9e7,
 * 32/16 3.8e7, 48/24 4.5-4.7e7, 64/32 3.8-4.6e7 updates/s; in cache (10^4 disks) 48/24 costs
 * 3% against 16/8. With the records on 4 KB pages (realloc, 16-byte aligned: a record across two
 * lines) the far prefetches missed the TLB and 16/4 was best at 1.55e7 (bench/PROFILE.md). */

/* The velocities of contact g's bodies (in a packing stored in random order, each a miss). */
static inline void prefetch_bodies(body_view b, const contact *g)
{
    prefetch_line(body_v(b, g->j));
    if (b.vs != sizeof(cd_body)) /* the particles' arrays: w and the inverse masses elsewhere */
        prefetch_line(body_w(b, g->j));
    if (g->i >= 0) {
        prefetch_line(body_v(b, g->i));
        if (b.vs != sizeof(cd_body))
            prefetch_line(body_w(b, g->i));
    }
}

static inline void prefetch_ahead(const contact *c, body_view b, const int *perm, int k)
{
    /* perm is padded with valid indices past its end (pad_perm): no bounds tests here */
    enum { PF_FAR = 48, PF_NEAR = 24 };
    _Static_assert(PF_FAR <= CD_PERM_PAD, "perm is padded for the farthest prefetch");
    /* the record's two lines (sizeof(contact) = 128) */
    const char *f = (const char *)&c[perm[k + PF_FAR]];
    prefetch_line(f);
    prefetch_line(f + 64);
    prefetch_bodies(b, &c[perm[k + PF_NEAR]]);
}

/* Fisher-Yates: a uniform random permutation of a[0..n-1] in place. */
void cd_shuffle(pcg32 *rng, int *a, int n)
{
    for (int k = n - 1; k > 0; k--) {
        int m = (int)pcg32_bounded_fast(rng, (uint32_t)(k + 1));
        int t = a[k];
        a[k] = a[m];
        a[m] = t;
    }
}

/* The most outputs of the stream cd_shuffle_skip makes at a time (4 MB: a colour of 10^6
 * contacts in one go, each thread making a stretch of it), and the fewest it makes on threads
 * (a team started for less costs more than it saves: 32,768 outputs are about 30 us). */
#define SKIP_ROUND (1 << 20)
#define SKIP_THREADED 65536

status cd_shuffle_skip(cd_solver *S, int n, diag *err)
{
    if (n < 2)
        return CDLAB_OK;
    /* each draw takes at least one output: the count - done draws to go take no fewer */
    int count = n - 1, done = 0;
    int round = count < SKIP_ROUND ? count : SKIP_ROUND;
    uint32_t *raw = grow_array(S->draw, &S->draw_cap, round, sizeof *raw);
    if (!raw)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot grow solver buffers");
    S->draw = raw;
    int nt = cdlab_threads();
    while (done < count) {
        int want = count - done < round ? count - done : round;
        int per = (want + nt - 1) / nt;
        const pcg32 at = S->rng;
#pragma omp parallel for schedule(static) if (want >= SKIP_THREADED)
        for (int t = 0; t < nt; t++) {
            int lo = t * per, hi = lo + per < want ? lo + per : want;
            if (lo < hi) {
                pcg32 g = at;
                pcg32_advance(&g, (uint64_t)lo);
                pcg32_fill(&g, raw + lo, hi - lo);
            }
        }
        pcg32_advance(&S->rng,
                      (uint64_t)pcg32_bounded_down_scan((uint32_t)n, count, &done, raw, want));
    }
    return CDLAB_OK;
}

/* Change measures per block of a fixed size (so the sums do not depend on the thread count). */
#define SWEEP_BLOCK 512

static status colored_sweep(world *W, cd_solver *S, body_view bv, const cd_params *p, int measure,
                            sweep_result *r, diag *err)
{
    status s;
    contact_list *L = &S->C;
    double inv_dt = 1.0 / W->dt, k_dt = p->relaxation * inv_dt;
    if (S->colored_at_step != W->step && (s = cd_color_contacts(W, S, err)) != CDLAB_OK)
        return s;
    int nc = S->n_colors;
    double *blk = grow_array(S->blk, &S->blk_cap, 2 * (L->n / SWEEP_BLOCK + nc + 1), sizeof *blk);
    if (!blk)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot grow solver buffers");
    S->blk = blk;
    /* a fresh random order of the colours; then each colour's shuffle is drawn, as it always
     * was, and not applied: the contacts of a colour share no movable body, so their order
     * changes nothing (the measures are exact sums, maxima and conjunctions), and in list
     * order (by their first bodies) the records are read in turn. The draws keep the random
     * stream, and with it the colours' later orders, as they were. */
    for (int c = 0; c < nc; c++)
        S->color_order[c] = c;
    cd_shuffle(&S->rng, S->color_order, nc);
    for (int c = 0; c < nc; c++)
        if ((s = cd_shuffle_skip(S, S->color_start[c + 1] - S->color_start[c], err)) != CDLAB_OK)
            return s;
    for (int q = 0; q < nc; q++) {
        int c = S->color_order[q];
        int lo = S->color_start[c], hi = S->color_start[c + 1];
        int nblk = (hi - lo + SWEEP_BLOCK - 1) / SWEEP_BLOCK;
        /* the contacts of one colour share no movable body: any order, any thread gives the
         * same velocities (and, the sums being exact, the same measures) */
        xsum before, after;
        xsum_init(&before);
        xsum_init(&after);
#pragma omp parallel for schedule(static) if (hi - lo > 2 * SWEEP_BLOCK)                           \
    reduction(xsum_merge                                                                           \
              : before, after)
        for (int b = 0; b < nblk; b++) {
            sweep_result br;
            sweep_result_init(&br);
            br.abs_before = before;
            br.abs_after = after;
            int end = lo + (b + 1) * SWEEP_BLOCK < hi ? lo + (b + 1) * SWEEP_BLOCK : hi;
            for (int k = lo + b * SWEEP_BLOCK; k < end; k++) {
                prefetch_ahead(L->c, bv, S->perm, k);
                contact *ct = &L->c[S->perm[k]];
                set_force(W, bv, p, ct, contact_update(W, bv, ct, inv_dt, k_dt), measure, &br);
            }
            before = br.abs_before;
            after = br.abs_after;
            blk[2 * b] = br.max_rel_change;
            blk[2 * b + 1] = br.local_ok;
        }
        if (measure) {
            for (int b = 0; b < nblk; b++) {
                r->max_rel_change = fmax(r->max_rel_change, blk[2 * b]);
                r->local_ok = r->local_ok && blk[2 * b + 1] != 0.0;
            }
            xsum_merge(&r->abs_before, &before);
            xsum_merge(&r->abs_after, &after);
        }
    }
    return CDLAB_OK;
}

/* Gauss-Seidel updates of the contacts idx[0..n) on the bodies b (sweep_contacts,
 * cd_sweep_records); inlined, so that each caller's view keeps its constant strides. */
static inline __attribute__((always_inline)) void
gauss_seidel(world *W, contact_list *L, body_view b, const cd_params *p, const int *idx, int n,
             const unsigned char *count, int measure, sweep_result *r)
{
    double inv_dt = 1.0 / W->dt, k_dt = p->relaxation * inv_dt;
    for (int k = 0; k < n; k++) {
        prefetch_ahead(L->c, b, idx, k);
        contact *c = &L->c[idx[k]];
        set_force(W, b, p, c, contact_update(W, b, c, inv_dt, k_dt),
                  measure && (!count || count[idx[k]]), r);
    }
}

void cd_sweep_records(world *W, cd_solver *S, const cd_params *p, const int *idx, int n,
                      const unsigned char *count, int measure, sweep_result *r)
{
    gauss_seidel(W, &S->C, view_bodies(S->body), p, idx, n, count, measure, r);
}

/* The Jacobi sweep on the contacts idx[k] (all when idx is NULL), k < n: the new forces from
 * the velocities before the sweep, independent of each other, so on threads (the same bits);
 * then their impulses in list order, on one thread. The bodies of the contact JACOBI_AHEAD
 * places on are prefetched in both. */
enum { JACOBI_AHEAD = 24 };

static void jacobi_sweep(world *W, contact_list *L, body_view b, const cd_params *p, const int *idx,
                         int n, vec3 *R_next, const unsigned char *count, int measure,
                         sweep_result *r)
{
    contact *c = L->c;
    double inv_dt = 1.0 / W->dt, k_dt = p->relaxation * inv_dt;
#pragma omp parallel for schedule(static) if (n > CDLAB_PARALLEL_MIN)
    for (int k = 0; k < n; k++) {
        if (k + JACOBI_AHEAD < n)
            prefetch_bodies(b, &c[idx ? idx[k + JACOBI_AHEAD] : k + JACOBI_AHEAD]);
        R_next[k] = contact_update(W, b, &c[idx ? idx[k] : k], inv_dt, k_dt);
    }
    for (int k = 0; k < n; k++) {
        if (k + JACOBI_AHEAD < n)
            prefetch_bodies(b, &c[idx ? idx[k + JACOBI_AHEAD] : k + JACOBI_AHEAD]);
        int m = idx ? idx[k] : k;
        set_force(W, b, p, &c[m], R_next[k], measure && (!count || count[m]), r);
    }
}

void sweep_contacts(world *W, contact_list *L, const cd_params *p, const int *idx, int n,
                    int jacobi, vec3 *R_next, const unsigned char *count, int measure,
                    sweep_result *r)
{
    body_view b = view_particles(&W->P);
    if (jacobi)
        jacobi_sweep(W, L, b, p, idx, n, R_next, count, measure, r);
    else
        gauss_seidel(W, L, b, p, idx, n, count, measure, r);
}

static status sweep_bodies(world *W, cd_solver *S, body_view b, const cd_params *p, int measure,
                           sweep_result *r, diag *err)
{
    contact_list *L = &S->C;
    int n = L->n;
    double inv_dt = 1.0 / W->dt, k_dt = p->relaxation * inv_dt;
    status s = ensure(S, n, p->sweep == SWEEP_JACOBI, err);
    if (s != CDLAB_OK)
        return s;
    sweep_result_init(r);
    if (p->sweep == SWEEP_COLORED)
        return colored_sweep(W, S, b, p, measure, r, err);
    if (p->sweep == SWEEP_JACOBI) {
        jacobi_sweep(W, L, b, p, NULL, n, S->R_next, NULL, measure, r);
        return CDLAB_OK;
    }

    for (int k = 0; k < n; k++)
        S->perm[k] = p->sweep == SWEEP_BACKWARD ? n - 1 - k : k;
    if (p->sweep == SWEEP_RANDOM) /* a uniform permutation, fresh every sweep */
        cd_shuffle(&S->rng, S->perm, n);
    pad_perm(S->perm, n);
    for (int k = 0; k < n; k++) {
        prefetch_ahead(L->c, b, S->perm, k);
        contact *c = &L->c[S->perm[k]];
        set_force(W, b, p, c, contact_update(W, b, c, inv_dt, k_dt), measure, r);
    }
    return CDLAB_OK;
}

status sweep_run(world *W, cd_solver *S, const cd_params *p, int measure, sweep_result *r,
                 diag *err)
{
    int own = !S->bodies_on;
    status s = own ? cd_bodies_gather(W, S, err) : CDLAB_OK;
    if (s == CDLAB_OK)
        s = sweep_bodies(W, S, view_bodies(S->body), p, measure, r, err);
    if (own && S->bodies_on)
        cd_bodies_scatter(W, S);
    return s;
}

double cd_natural_map_now(const world *W, cd_solver *S)
{
    body_view b = S->bodies_on ? view_bodies(S->body) : view_particles(&W->P);
    const contact *c = S->C.c;
    int n = S->C.n;
    double dt = W->dt, inv_dt = 1.0 / dt;
    xsum res2, r2;
    xsum_init(&res2);
    xsum_init(&r2);
#pragma omp parallel for schedule(static) if (n > CDLAB_PARALLEL_MIN) reduction(xsum_merge         \
                                                                                : res2, r2)
    for (int k = 0; k < n; k++) {
        if (k + JACOBI_AHEAD < n)
            prefetch_bodies(b, &c[k + JACOBI_AHEAD]);
        vec3 V = relative_velocity(W, b, &c[k]), nn = c[k].n;
        double g_pos = c[k].gap > 0.0 ? c[k].gap : 0.0;
        double u_n = v3_dot(V, nn) + g_pos * inv_dt, r_n = v3_dot(c[k].R, nn) * dt;
        vec3 u_t = v3_axpy(-v3_dot(V, nn), nn, V), r_t = v3_axpy(-r_n, nn, v3_scale(c[k].R, dt));
        /* local axes (n, then the tangent's global components: the cone sees only |.|) */
        double r[4] = {r_n, r_t.x, r_t.y, r_t.z}, u[4] = {u_n, u_t.x, u_t.y, u_t.z}, a2;
        xsum_add(&res2, natural_map_term(r, u, 4, c[k].mu, 1.0, &a2));
        xsum_add(&r2, a2);
    }
    double res = sqrt(xsum_round(&res2)), rr = sqrt(xsum_round(&r2));
    return rr > 0.0 ? res / rr : res;
}

/* The sweeps as the step's solver: sweeps in p->sweep's order (across the ranks through
 * S->dist) until the criterion holds, at most budget of them. */
static status sweeps_solve(world *W, cd_solver *S, const cd_params *p, int budget,
                           cd_solve_stats *st, diag *err)
{
    status s = CDLAB_OK;
    st->iterations = 0;
    st->converged = 0;
    st->residual = 0.0;
    while (st->iterations < budget) {
        sweep_result r;
        /* the fixed criterion reports the residual of its last sweep only */
        int measure = p->crit != CRIT_FIXED || st->iterations + 1 >= budget;
        s = S->dist ? S->dist->sweep(S->dist, W, S, p, measure, &r, err)
                    : sweep_run(W, S, p, measure, &r, err);
        if (s != CDLAB_OK)
            break;
        st->iterations++;
        if (p->crit == CRIT_NATURAL_MAP)
            r.natural_map = cd_natural_map_now(W, S);
        if (criteria_met(p, &r, st->iterations, &st->residual)) {
            st->converged = 1;
            break;
        }
    }
    return s;
}

const cd_method cd_method_sweeps = {
    .name = "sweeps",
    .title = "Gauss-Seidel sweeps of the shock law",
    .solve = sweeps_solve,
};

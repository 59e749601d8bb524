/* Gauss-Seidel sweeps of the shock law (Unger & Kertesz sec. 2.5) in five orders. */
#include "nscd/cd.h"
#include "nscd/cd_method.h"
#include "prefetch.h"
#include "nscd/cd_shock_law.h"
#include "nscd/cd_contact_problem.h"

#include "grow.h"
#include "parallel.h"

#include <limits.h>
#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif
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

void sweep_note_change(const cd_params *p, vec3 R_old, vec3 R_new, sweep_result *r)
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
        sweep_note_change(p, c->R, R_new, r);
    apply_impulse(W, b, c, v3_scale(v3_sub(R_new, c->R), W->dt));
    c->R = R_new;
}

/* Fills perm[n .. n + PERM_PAD) with a valid contact index for the prefetches. */
static void pad_perm(int *perm, int n)
{
    for (int k = n; k < n + PERM_PAD; k++)
        perm[k] = 0;
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

/* Change measures per block of a fixed size (so the sums do not depend on the thread count). */
#define SWEEP_BLOCK 512

static status colored_sweep(world *W, cd_solver *S, body_view bv, const cd_params *p, int measure,
                            sweep_result *r, diag *err)
{
    status s;
    contact_list *L = &S->C;
    double inv_dt = 1.0 / W->dt, k_dt = p->relaxation * inv_dt;
    if (S->colored_at_step != W->step &&
        (s = cd_color_contacts(W, S, p->color_hashed, err)) != CDLAB_OK)
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

/* The random sweep on threads, the same bits as on one (Blelloch, Fineman, Gibbons & Shun's
 * deterministic reservations, PPoPP 2012). The sweep's contacts are taken in perm's order in
 * rounds over a window of it: the contacts left over from the last round, then the next ones of
 * perm. Each contact of the window writes its position q in perm into its movable bodies'
 * slots, keeping the smallest (reserve); those that hold both their slots are updated (commit):
 * no contact before them in perm that shares one of their bodies is still to do, so each reads
 * exactly the velocities the serial sweep would give it, and no two of them share a body. The
 * others go to the next round. Each thread takes the window's contacts of its own stretch of
 * the contact list (sorted by body, so mostly its own bodies and their slots: a slot or a body
 * written by both threads in turn would cross between their caches at every touch). The change
 * measures are maxima, conjunctions and exact sums: the same in any order. */

/* The window: a fiftieth of the sweep's contacts per round, and at least this many. */
#define DR_WINDOW_MIN 8192
/* Fewer contacts than this: the serial sweep (a round's barriers cost more than they save). */
#define DR_MIN_CONTACTS 32768
/* How far ahead the rounds prefetch the contact records (and half as far the bodies). */
#define DR_AHEAD 48

static inline int dr_thread(void)
{
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

static inline int dr_threads(void)
{
#ifdef _OPENMP
    return omp_get_num_threads();
#else
    return 1;
#endif
}

/* The movable body of each end of contact c (particles, then pistons as n + wall), -1 for a
 * fixed wall or a frozen particle. */
static inline void movable_bodies(const world *W, const contact *c, int *b0, int *b1)
{
    const particles *P = &W->P;
    *b1 = P->frozen[c->j] ? -1 : c->j;
    if (c->i >= 0)
        *b0 = P->frozen[c->i] ? -1 : c->i;
    else
        *b0 =
            W->walls[contact_wall_index(c)].kind == WALL_PISTON ? P->n + contact_wall_index(c) : -1;
}

/* The velocities of movable body k, as prefetch_bodies (none for -1 or a piston, k >= n). */
static inline void prefetch_body(body_view b, int k, int n)
{
    if (k < 0 || k >= n)
        return;
    prefetch_line(body_v(b, k));
    if (b.vs != sizeof(cd_body))
        prefetch_line(body_w(b, k));
}

static inline void reserve_slot(int *slot, int q)
{
    int cur = __atomic_load_n(slot, __ATOMIC_RELAXED);
    while (q < cur &&
           !__atomic_compare_exchange_n(slot, &cur, q, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static inline int holds(const int *resv, int b, int q)
{
    return b < 0 || __atomic_load_n(&resv[b], __ATOMIC_RELAXED) == q;
}

/* A contact whose bodies are not both its thread's (or that touches a piston): reserved in a
 * second pass, with atomic write-mins (ends[2k] carries the mark). */
#define DR_BOUNDARY (1 << 30)

/* The buffers of dr_sweep: nb slots, all free; per thread (nt) a window's entries and their
 * bodies; each contact's bodies; the threads' stretches. */
static status dr_ensure(cd_solver *S, int n, int nb, int nt, int window, diag *err)
{
    int old = S->resv_cap;
    int *resv = grow_array(S->resv, &S->resv_cap, nb, sizeof *resv);
    if (resv) {
        S->resv = resv;
        for (int k = old; k < S->resv_cap; k++)
            resv[k] = INT_MAX;
    }
    int *keep = grow_array(S->dr_keep, &S->dr_keep_cap, nt * window, sizeof *keep);
    if (keep)
        S->dr_keep = keep;
    int *bodies = grow_array(S->dr_bodies, &S->dr_bodies_cap, 2 * nt * window, sizeof *bodies);
    if (bodies)
        S->dr_bodies = bodies;
    int *ends = grow_array(S->dr_ends, &S->dr_ends_cap, 2 * n, sizeof *ends);
    if (ends)
        S->dr_ends = ends;
    if (!resv || !keep || !bodies || !ends)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot grow the sweep's reservations to %d contacts",
                        n);
    return CDLAB_OK;
}

/* The contact list's stretch of each of nt threads, first[0 .. nt] (each body's contacts as
 * body 0 in one stretch: the list is sorted by body 0), and each contact's movable bodies in
 * ends (the first as b0 + 1, marked DR_BOUNDARY where they are not both its thread's). */
static void dr_split(const world *W, const contact_list *L, int nt, int *first, int *ends)
{
    int n = L->n, np = W->P.n;
    int split[CD_DR_MAX_THREADS + 1]; /* thread t owns the particles split[t] .. split[t+1] - 1 */
    first[0] = 0;
    split[0] = 0;
    for (int t = 1; t < nt; t++) {
        int f = (int)((long)n * t / nt);
        while (f > first[t - 1] && f < n && L->c[f - 1].i == L->c[f].i)
            f--;
        first[t] = f > first[t - 1] ? f : first[t - 1];
        int i = first[t] < n ? L->c[first[t]].i : np;
        split[t] = i > split[t - 1] ? i : split[t - 1];
    }
    first[nt] = n;
    split[nt] = np;
    for (int t = 0; t < nt; t++) {
#pragma omp parallel for schedule(static) if (first[t + 1] - first[t] > CDLAB_PARALLEL_MIN)
        for (int k = first[t]; k < first[t + 1]; k++) {
            int b0, b1;
            movable_bodies(W, &L->c[k], &b0, &b1);
            int own0 = b0 < 0 || (b0 >= split[t] && b0 < split[t + 1]);
            int own1 = b1 < 0 || (b1 >= split[t] && b1 < split[t + 1]);
            ends[2 * k] = (b0 + 1) | (own0 && own1 ? 0 : DR_BOUNDARY); /* b0 + 1 >= 0 */
            ends[2 * k + 1] = b1;
        }
    }
}

/* One thread's part of a round: its entries (the kept ones first, then its own of the
 * window's new positions) and their bodies. */
typedef struct dr_part {
    int *keep, *bodies; /* keep: positions in perm; bodies: two per entry */
    int kept, entries;
} dr_part;

/* The first movable body of contact k from ends[2k] (there b0 + 1, with the mark). */
static inline int dr_body0(int e0)
{
    return (e0 & ~DR_BOUNDARY) - 1;
}

/* The bodies of contact k from ends; 1 if it is marked DR_BOUNDARY. */
static inline int dr_bodies_of(const int *ends, int k, int *bb)
{
    int e0 = ends[2 * k];
    bb[0] = dr_body0(e0);
    bb[1] = ends[2 * k + 1];
    return (e0 & DR_BOUNDARY) != 0;
}

/* Long: the rounds run in one parallel region, with its barriers, and read as one. */
static status dr_sweep(world *W, cd_solver *S, body_view b, const cd_params *p, int measure,
                       sweep_result *r, diag *err)
{
    contact_list *L = &S->C;
    int n = L->n, nt = cdlab_threads() < CD_DR_MAX_THREADS ? cdlab_threads() : CD_DR_MAX_THREADS;
    int window = n / 50 > DR_WINDOW_MIN ? n / 50 : DR_WINDOW_MIN;
    status s = dr_ensure(S, n, W->P.n + W->n_walls, nt, window, err);
    if (s != CDLAB_OK)
        return s;
    if (S->dr_ends_at_step != W->step || S->dr_ends_of != L->c || S->dr_threads != nt) {
        /* a new contact list (cd_step_solve's detection forgets the old), or thread count */
        dr_split(W, L, nt, S->dr_first, S->dr_ends);
        S->dr_ends_at_step = W->step;
        S->dr_ends_of = L->c;
        S->dr_threads = nt;
    }
    const int *ends = S->dr_ends, *firsts = S->dr_first;
    double inv_dt = 1.0 / W->dt, k_dt = p->relaxation * inv_dt;
    int *resv = S->resv, *perm = S->perm;
    int counts[CD_DR_MAX_THREADS];
#pragma omp parallel num_threads(nt)
    {
        int t = dr_thread(), nth = dr_threads();
        /* the team may be smaller than asked: its last thread takes the stretches left */
        int first = firsts[t], last = t + 1 < nth ? firsts[t + 1] : n;
        dr_part me = {.keep = S->dr_keep + (size_t)t * window,
                      .bodies = S->dr_bodies + (size_t)2 * t * window};
        sweep_result mine;
        sweep_result_init(&mine);
        int pos = 0, fresh = window < n ? window : n; /* round 1: perm[0 .. window) */
        for (;;) {
            /* the entries: the kept ones (keep[0 .. kept)), then the window's new positions
             * pos .. pos + fresh whose contacts are this thread's */
            int e = me.kept;
            unsigned span = (unsigned)(last - first);
            for (int q = pos; q < pos + fresh; q++) { /* branch-free: a share of them is mine */
                me.keep[e] = q;
                e += (unsigned)(perm[q] - first) < span;
            }
            me.entries = e;
            /* reserve, first the contacts of this thread's own bodies (their slots written by
             * this thread alone: plain write-mins), the bodies DR_AHEAD entries on prefetched
             * and their slots DR_AHEAD/2 on; the others marked (bodies[2x] <= -2) */
            int marked = 0;
            for (int x = 0; x < me.entries; x++) {
                if (x + DR_AHEAD < me.entries)
                    prefetch_line(&ends[2 * perm[me.keep[x + DR_AHEAD]]]);
                int y = x + DR_AHEAD / 2;
                if (y < me.entries) {
                    const int *ey = &ends[2 * perm[me.keep[y]]];
                    if (dr_body0(ey[0]) >= 0)
                        prefetch_line(&resv[dr_body0(ey[0])]);
                    if (ey[1] >= 0)
                        prefetch_line(&resv[ey[1]]);
                }
                int q = me.keep[x], *bb = &me.bodies[2 * x];
                if (dr_bodies_of(ends, perm[q], bb)) {
                    bb[0] = -3 - bb[0];
                    marked++;
                    continue;
                }
                for (int u = 0; u < 2; u++)
                    if (bb[u] >= 0 && q < resv[bb[u]])
                        resv[bb[u]] = q;
            }
#pragma omp barrier
            if (marked) /* then the others, with atomic write-mins */
                for (int x = 0; x < me.entries; x++) {
                    int *bb = &me.bodies[2 * x], q = me.keep[x];
                    if (bb[0] > -2)
                        continue;
                    bb[0] = -3 - bb[0];
                    if (bb[0] >= 0)
                        reserve_slot(&resv[bb[0]], q);
                    if (bb[1] >= 0)
                        reserve_slot(&resv[bb[1]], q);
                }
#pragma omp barrier
            int left = 0;
            for (int x = 0; x < me.entries; x++) { /* commit those that hold both bodies */
                if (x + DR_AHEAD < me.entries) {
                    const char *f = (const char *)&L->c[perm[me.keep[x + DR_AHEAD]]];
                    prefetch_line(f);
                    prefetch_line(f + 64);
                }
                if (x + DR_AHEAD / 2 < me.entries) {
                    const int *by = &me.bodies[2 * (x + DR_AHEAD / 2)];
                    prefetch_body(b, by[0], W->P.n);
                    prefetch_body(b, by[1], W->P.n);
                    if (by[0] >= 0)
                        prefetch_line(&resv[by[0]]);
                    if (by[1] >= 0)
                        prefetch_line(&resv[by[1]]);
                }
                int q = me.keep[x];
                if (holds(resv, me.bodies[2 * x], q) && holds(resv, me.bodies[2 * x + 1], q)) {
                    contact *c = &L->c[perm[q]];
                    set_force(W, b, p, c, contact_update(W, b, c, inv_dt, k_dt), measure, &mine);
                } else {
                    me.bodies[2 * x] = -3 - me.bodies[2 * x]; /* kept: marked, <= -2 */
                    left++;
                }
            }
            counts[t] = left;
#pragma omp barrier
            /* the slots free again; the entries left over, in order, to the front */
            int k = 0;
            for (int x = 0; x < me.entries; x++) {
                int b0 = me.bodies[2 * x], b1 = me.bodies[2 * x + 1];
                if (b0 <= -2) {
                    me.keep[k++] = me.keep[x];
                    b0 = -3 - b0;
                }
                if (b0 >= 0)
                    __atomic_store_n(&resv[b0], INT_MAX, __ATOMIC_RELAXED);
                if (b1 >= 0)
                    __atomic_store_n(&resv[b1], INT_MAX, __ATOMIC_RELAXED);
            }
            me.kept = k;
            /* the next window, made alike by every thread from the counts */
            int all = 0;
            for (int u = 0; u < nth; u++)
                all += counts[u];
            pos += fresh;
            fresh = n - pos < window - all ? n - pos : window - all;
#pragma omp barrier
            if (all == 0 && fresh == 0)
                break;
        }
        if (measure) {
#pragma omp critical(dr_measure)
            {
                r->max_rel_change = fmax(r->max_rel_change, mine.max_rel_change);
                r->local_ok = r->local_ok && mine.local_ok;
                xsum_merge(&r->abs_before, &mine.abs_before);
                xsum_merge(&r->abs_after, &mine.abs_after);
            }
        }
    }
    return CDLAB_OK;
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
    if (p->sweep == SWEEP_RANDOM && cdlab_threads() > 1 &&
        n >= (S->dr_min_contacts > 0 ? S->dr_min_contacts : DR_MIN_CONTACTS))
        return dr_sweep(W, S, b, p, measure, r, err);
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

/* The contact dynamics time step: implicit Euler (Unger & Kertesz eqs. 1-2, 20-24). */
#include "nscd/cd.h"
#include "nscd/cd_method.h"
#include "grow.h"
#include "parallel.h"

#include <stdlib.h>
#include <time.h>
#include <string.h>

/* A contact counts as sliding (cd_stats.n_sliding) when |R_t| >= mu R_n (1 - this): the shock
 * law scales R_t to length mu R_n, exact up to a few roundings of the scaling (~1e-16); a
 * sticking contact a relative 1e-9 inside the cone is indistinguishable at any N_I used here. */
#define SLIDING_ROUNDING 1e-9

cd_params cd_params_default(void)
{
    return (cd_params){.method = &cd_method_sweeps,
                       .sweep = SWEEP_RANDOM,
                       .crit = CRIT_FIXED,
                       .iterations = 40,
                       .epsilon = 1e-6,
                       .relaxation = 1.0,
                       .delta = 1e-12,
                       .warm_start = 1,
                       .abort_overlap = 0.5,
                       .desaxce = 1};
}

void cd_solver_init(cd_solver *S, uint64_t seed)
{
    memset(S, 0, sizeof *S);
    pcg32_seed(&S->rng, seed, PCG32_STREAM_SWEEP);
    S->colored_at_step = -1;
    S->dr_ends_at_step = -1;
    S->mask_words = 1;
}

void cd_solver_free(cd_solver *S)
{
    contacts_free(&S->C);
    free(S->perm);
    free(S->R_next);
    free(S->color_start);
    free(S->color_order);
    free(S->color_of);
    free(S->mask);
    free(S->blk);
    free(S->draw);
    free(S->resv);
    free(S->dr_keep);
    free(S->dr_bodies);
    free(S->dr_ends);
    free(S->body);
    memset(S, 0, sizeof *S);
}

/* The first contact in list order whose overlap is too large, found on threads (a min
 * reduction over the list), then reported as the serial loop would. A contact whose overlap is
 * within frac times the smallest radius of all is passed without loading its radii: the test
 * -gap > frac min(r_i, r_j) cannot hold for it (frac >= 0, and a rounded product is monotone). */
static status check_overlap(const world *W, const contact_list *L, double frac, diag *err)
{
    const particles *P = &W->P;
    const contact *c = L->c;
    int n = L->n, first = n;
    double bound = frac * particles_min_radius(P);
#pragma omp parallel for schedule(static) reduction(min : first)
    for (int k = 0; k < n; k++) {
        if (!(-c[k].gap > bound) || k >= first)
            continue;
        double r = c[k].i >= 0 ? fmin(P->r[c[k].i], P->r[c[k].j]) : P->r[c[k].j];
        if (-c[k].gap > frac * r)
            first = k;
    }
    if (first < n)
        return world_overlap_error(W, c[first].i, c[first].j, c[first].gap, frac,
                                   "solver.abort_overlap", "", err);
    return CDLAB_OK;
}

status cd_check_state(const world *W, const contact_list *L, const cd_params *p, diag *err)
{
    const particles *P = &W->P;
    int bad = P->n; /* the first particle (in storage order) that is not finite */
#pragma omp parallel for schedule(static) reduction(min : bad)
    for (int i = 0; i < P->n; i++) {
        vec3 v = P->v[i], w = P->w[i], x = P->x[i];
        if (!isfinite(v.x + v.y + v.z + w.x + w.y + w.z + x.x + x.y + x.z) && i < bad)
            bad = i;
    }
    if (bad < P->n)
        return diag_set(err, CDLAB_ERR_NUMERIC,
                        "step %ld: particle %d has a non-finite position or velocity", W->step,
                        P->id[bad]);
    status s;
    if (p->abort_overlap > 0.0 && (s = check_overlap(W, L, p->abort_overlap, err)) != CDLAB_OK)
        return s;
    for (int k = 0; k < W->n_walls; k++)
        if (!isfinite(W->walls[k].s + W->walls[k].u))
            return diag_set(err, CDLAB_ERR_NUMERIC, "step %ld: piston '%s' is non-finite", W->step,
                            W->walls[k].name);
    return CDLAB_OK;
}

/* Contacts the previous step's detection missed: pairs that overlap at this detection but were
 * at least that detection's gap apart there (their positions then: x - v dt, a piston's
 * s - u dt), so that they met during the step with no force between them, and the shock law's
 * g_pos = max(g, 0) keeps the overlap they reached. Such a pair closed more than the gap in one
 * step, so they are looked for only after a step that moved some particle or piston by more
 * than half the gap (W->step_path). Counted over the contacts whose body 1 is this rank's. */
static void count_missed(const world *W, const contact_list *L, double gap, int n_owned,
                         cd_stats *st)
{
    const particles *P = &W->P;
    double dt = W->dt, worst = 0.0;
    int missed = 0;
#pragma omp parallel for schedule(static) reduction(+ : missed) reduction(max : worst)            \
    if (L->n > CDLAB_PARALLEL_MIN)
    for (int k = 0; k < L->n; k++) {
        const contact *c = &L->c[k];
        if (!(c->gap < 0.0) || c->j >= n_owned)
            continue;
        int j = c->j;
        vec3 xj = v3_axpy(-dt, P->v[j], P->x[j]);
        double before, size = P->r[j];
        if (c->i >= 0) {
            int i = c->i;
            vec3 xi = v3_axpy(-dt, P->v[i], P->x[i]);
            before = contact_frame_particles(pbox_delta(&P->box, xi, xj), P->r[i], P->r[j]).gap;
            size += P->r[i];
        } else {
            const wall *w = &W->walls[-1 - c->i];
            double s = w->kind == WALL_PISTON ? w->s - dt * w->u : w->s;
            before = contact_frame_wall(w, s, xj, P->r[j]).gap;
        }
        /* candidates are the pairs with gap < detect_gap; x - v dt is the old position to
         * rounding. A pair that ends the step just touching (an overlap of rounding, 1.8e-15
         * for a disc pushed 0.48 onto another 0.48 away) lost nothing: the shock law, had it
         * seen the pair, would have let it close that far with no force. */
        if (before >= gap + 1e-9 * size && -c->gap > 1e-9 * size) {
            missed++;
            worst = -c->gap > worst ? -c->gap : worst;
        }
    }
    st->missed = missed;
    st->missed_overlap = worst;
}

/* Long: the solve's phases in their order (detection, the missed-contact count, free velocities,
 * warm start, the solver, the distributed exchanges), a few lines each, sharing the step's timers
 * and statistics. */
status cd_step_solve(world *W, cd_solver *S, const cd_params *p, cd_stats *st, diag *err)
{
    particles *P = &W->P;
    int dim = P->dimension;
    double dt = W->dt, t_new = (double)(W->step + 1) * dt;
    status s;

    /* 1. candidates, with the previous step's forces when warm-starting */
    W->detect.warm_start = p->warm_start;
    contact_list *L = &S->C;
    s = contacts_detect(L, P, W->walls, W->n_walls, &W->detect, err);
    if (S->dist)
        s = S->dist->detected(S->dist, W, S, p, s, err);
    if (s != CDLAB_OK)
        return s;
    S->colored_at_step = -1; /* a new contact list: colour it afresh */
    S->dr_ends_at_step = -1;
    st->missed = 0;
    st->missed_overlap = 0.0;
    double gap_before = W->step_gap;
    W->step_gap = W->detect.gap;
    if (2.0 * W->step_path > gap_before)
        count_missed(W, L, gap_before, S->dist ? S->dist->n_owned : P->n, st);

    /* 2. velocities without contact forces (external forces at t_new: implicit Euler) */
    double loaded = world_load_factor(W, t_new);
    CDLAB_PARALLEL_FOR
    for (int i = 0; i < P->n; i++) {
        vec3 f = v3_scale(W->gravity, P->m[i]);
        if (loaded > 0.0)
            f = v3_axpy(loaded, P->f_ext[i], f);
        P->v[i] = v3_add(P->v[i], dof_project_lin(dim, v3_scale(f, dt * P->inv_m[i])));
    }
    for (int k = 0; k < W->n_walls; k++) {
        wall *w = &W->walls[k];
        if (w->kind == WALL_PISTON)
            w->u += dt * w->inv_mass * wall_piston_force(w, t_new);
    }

    /* 3. warm start: the carried-over forces act on the velocities before the first sweep
     * (without it every force starts at zero: nothing to look at). In one process the sweeps
     * work on the solver's body records (cd_body), gathered first, so the warm start's
     * impulses land there too: the same bits as on the particles' arrays. The solve's time
     * counts from here. */
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (!S->dist && L->n > 0 && p->sweep == SWEEP_COLORED && cdlab_threads() > 1) {
        /* The colored sweep's colouring (greedy in list order) and the warm start (its
         * impulses in list order) are serial: side by side on two threads, after the parts of
         * both that run on all (the gather, the contacts' bodies). Neither reads what the
         * other writes (the colouring the contacts' bodies, the warm start the velocities and
         * the pistons'). */
        if ((s = cd_bodies_gather(W, S, err)) != CDLAB_OK)
            return s;
        int *ab = cd_contact_bodies(W, L);
        if (!ab)
            return diag_set(err, CDLAB_ERR_NOMEM, "cannot colour %d contacts", L->n);
        status sc = CDLAB_OK;
        diag ec; /* not zeroed: 16 kB (status.h) at every step */
        ec.msg[0] = '\0';
#pragma omp parallel sections num_threads(2)
        {
#pragma omp section
            sc = cd_color_bodies(W, S, ab, p->color_hashed, &ec);
#pragma omp section
            {
                if (p->warm_start)
                    cd_warm_start(W, S);
            }
        }
        free(ab);
        if (sc != CDLAB_OK) {
            *err = ec;
            return sc;
        }
    } else {
        if (!S->dist && L->n > 0 && (s = cd_bodies_gather(W, S, err)) != CDLAB_OK)
            return s;
        if (p->warm_start)
            cd_warm_start(W, S);
    }
    if (S->dist && (s = S->dist->warm_started(S->dist, W, err)) != CDLAB_OK)
        return s;

    /* 4. the solver, until the criterion holds (or the cap); a distributed run solves on every
     * rank while any has contacts (its iterations exchange) */
    cd_solve_stats ss = {.iterations = 0, .converged = 1};
    if ((S->dist ? S->dist->contacts : (double)L->n) > 0.0)
        s = p->method->solve(W, S, p, p->iterations, &ss, err);
    st->sweeps = ss.iterations;
    st->converged = ss.converged;
    st->residual = ss.residual;
    st->dilation_mean = ss.dilation_mean;
    st->dilation_max = ss.dilation_max;
    if (S->bodies_on)
        cd_bodies_scatter(W, S);
    if (s != CDLAB_OK)
        return s;

    clock_gettime(CLOCK_MONOTONIC, &t1);
    st->solve_seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    return CDLAB_OK;
}

status cd_step_finish(world *W, cd_solver *S, const cd_params *p, cd_stats *st, diag *err)
{
    int far = cd_step_move(W, &S->C);
    if (far >= 0)
        return particles_wrap_error(&W->P, far, W->step, err);
    /* 6. diagnostics on the new configuration */
    double sum;
    cd_diagnostics(W, &S->C, W->P.n, st, &sum);
    if (st->n_active > 0)
        st->mean_overlap = sum / st->n_active;
    return cd_check_state(W, &S->C, p, err);
}

int cd_step_move(world *W, const contact_list *L)
{
    particles *P = &W->P;
    /* t from the step count, not accumulated: no drift over long runs */
    double dt = W->dt, t_new = (double)(W->step + 1) * dt;

    /* 5. implicit Euler update of positions and orientations with the new velocities, and the
     * longest way moved (for count_missed) */
    double v2 = 0.0;
#pragma omp parallel for schedule(static) reduction(max : v2)
    for (int i = 0; i < P->n; i++) {
        P->x[i] = v3_axpy(dt, P->v[i], P->x[i]);
        quat_integrate(&P->q[4 * i], v3_scale(P->w[i], dt));
        double s = v3_norm2(P->v[i]);
        v2 = s > v2 ? s : v2;
    }
    W->step_path = sqrt(v2) * dt;
    int far = particles_wrap(P);
    for (int k = 0; k < W->n_walls; k++) {
        wall *w = &W->walls[k];
        if (w->kind != WALL_PISTON)
            continue;
        w->contact_force = 0.0;
        for (int m = 0; m < L->n; m++)
            if (L->c[m].i == -1 - k)
                w->contact_force -= v3_dot(L->c[m].R, w->n);
        w->s += dt * w->u;
        W->step_path = fmax(W->step_path, fabs(w->u) * dt);
    }
    W->t = t_new;
    W->step++;
    return far;
}

/* A contact's part in the diagnostics: whether body 1 is owned, active, sliding; its overlap. */
static inline double contact_overlap(const contact *c)
{
    return c->gap < 0.0 ? -c->gap : 0.0;
}

static inline int contact_active(const contact *c)
{
    return v3_norm2(c->R) > 0.0;
}

static inline int contact_sliding(const contact *c)
{
    /* the shock law scaled R_t to length mu R_n: equal up to its rounding */
    double Rn = v3_dot(c->R, c->n);
    return c->mu > 0.0 && Rn > 0.0 &&
           v3_norm(v3_axpy(-Rn, c->n, c->R)) >= c->mu * Rn * (1.0 - SLIDING_ROUNDING);
}

void cd_diagnostics(world *W, contact_list *L, int n_owned, cd_stats *st, double *sum_overlap)
{
    particles *P = &W->P;
    st->n_contacts = st->n_active = st->n_sliding = 0;
    st->mean_overlap = st->max_overlap = 0.0;
    double sum = 0.0;
    /* The geometry, the counts and the largest overlap on threads (each record its own; the
     * counts and the maximum are exact in any order); the sum of the active contacts' overlaps in
     * list order, one thread, from a row of them (zero for the others: adding +0 changes no
     * bit), 8 bytes per contact instead of the records' two lines. Without room for the row,
     * the sum reads the records. */
    double *ov = grow_array(L->ov, &L->ovcap, L->n, sizeof *ov);
    if (ov)
        L->ov = ov;
    int n_contacts = 0, n_active = 0, n_sliding = 0;
    double max_ov = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : n_contacts, n_active, n_sliding)          \
    reduction(max : max_ov)
    for (int k = 0; k < L->n; k++) {
        contact *c = &L->c[k];
        if (c->j >= n_owned) {
            if (ov)
                ov[k] = 0.0;
            continue;
        }
        if (k + CONTACT_GEOMETRY_AHEAD < L->n)
            contact_geometry_prefetch(L->c[k + CONTACT_GEOMETRY_AHEAD].j, P);
        contact_geometry(c, P, W->walls);
        double o = contact_overlap(c);
        int active = contact_active(c);
        n_contacts++;
        max_ov = o > max_ov ? o : max_ov;
        n_active += active;
        n_sliding += active && contact_sliding(c);
        if (ov)
            ov[k] = active ? o : 0.0;
    }
    st->n_contacts = n_contacts;
    st->n_active = n_active;
    st->n_sliding = n_sliding;
    st->max_overlap = max_ov;
    if (ov) {
        for (int k = 0; k < L->n; k++)
            sum += ov[k];
    } else {
        for (int k = 0; k < L->n; k++)
            if (L->c[k].j < n_owned && contact_active(&L->c[k]))
                sum += contact_overlap(&L->c[k]);
    }
    *sum_overlap = sum;
}

status cd_step(world *W, cd_solver *S, const cd_params *p, cd_stats *st, diag *err)
{
    status s = cd_step_solve(W, S, p, st, err);
    return s != CDLAB_OK ? s : cd_step_finish(W, S, p, st, err);
}

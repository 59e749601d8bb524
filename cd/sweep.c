/* Gauss-Seidel sweeps of the shock law (Unger & Kertesz sec. 2.5) in four orders. */
#include "cd.h"
#include "shock_law.h"

#include "grow.h"

#include <stdlib.h>

vec3 cd_relative_velocity(const world *W, const contact *c)
{
    const particles *P = &W->P;
    /* eq. (3): V = v1 + w1 x l1 - v0 - w0 x l0 */
    vec3 V = v3_add(P->v[c->j], v3_cross(P->w[c->j], c->l1));
    if (c->i >= 0) {
        V = v3_sub(V, v3_add(P->v[c->i], v3_cross(P->w[c->i], c->l0)));
    } else {
        const wall *w = &W->walls[contact_wall_index(c)];
        if (w->kind == WALL_PISTON)
            V = v3_axpy(-w->u, w->n, V);
    }
    return V;
}

void cd_apply_impulse(world *W, const contact *c, vec3 dP)
{
    particles *P = &W->P;
    int dim = P->dimension;
    int j = c->j;
    P->v[j] = v3_add(P->v[j], dof_project_lin(dim, v3_scale(dP, P->inv_m[j])));
    P->w[j] = v3_add(P->w[j], dof_project_ang(dim, v3_scale(v3_cross(c->l1, dP), P->inv_I[j])));
    if (c->i >= 0) {
        int i = c->i;
        P->v[i] = v3_sub(P->v[i], dof_project_lin(dim, v3_scale(dP, P->inv_m[i])));
        P->w[i] = v3_sub(P->w[i], dof_project_ang(dim, v3_scale(v3_cross(c->l0, dP), P->inv_I[i])));
    } else {
        wall *w = &W->walls[contact_wall_index(c)];
        if (w->kind == WALL_PISTON) /* the reaction -dP, along the piston normal only */
            w->u -= w->inv_mass * v3_dot(dP, w->n);
    }
}

vec3 cd_contact_update(const world *W, const contact *c)
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

static status ensure(cd_solver *S, int n, diag *err)
{
    int *perm = grow_array(S->perm, &S->perm_cap, n, sizeof *perm);
    if (perm)
        S->perm = perm;
    vec3 *R_next = grow_array(S->R_next, &S->R_next_cap, n, sizeof *R_next);
    if (R_next)
        S->R_next = R_next;
    if (!perm || !R_next)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot grow solver buffers to %d contacts", n);
    return CDLAB_OK;
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
    r->sum_abs_before += v3_norm(R_old);
    r->sum_abs_after += a_new;
}

status sweep_run(world *W, cd_solver *S, const cd_params *p, int measure, sweep_result *r,
                 diag *err)
{
    contact_list *L = &W->C;
    int n = L->n;
    status s = ensure(S, n, err);
    if (s != CDLAB_OK)
        return s;
    r->max_rel_change = 0.0;
    r->local_ok = 1;
    r->sum_abs_before = r->sum_abs_after = 0.0;
    double dt = W->dt;

    if (p->sweep == SWEEP_JACOBI) {
        for (int k = 0; k < n; k++)
            S->R_next[k] = cd_contact_update(W, &L->c[k]);
        for (int k = 0; k < n; k++) {
            contact *c = &L->c[k];
            if (measure)
                note_change(p, c->R, S->R_next[k], r);
            cd_apply_impulse(W, c, v3_scale(v3_sub(S->R_next[k], c->R), dt));
            c->R = S->R_next[k];
        }
        return CDLAB_OK;
    }

    for (int k = 0; k < n; k++)
        S->perm[k] = p->sweep == SWEEP_BACKWARD ? n - 1 - k : k;
    if (p->sweep == SWEEP_RANDOM) /* Fisher-Yates: a uniform permutation, fresh every sweep */
        for (int k = n - 1; k > 0; k--) {
            int m = (int)pcg32_bounded(&S->rng, (uint32_t)(k + 1));
            int t = S->perm[k];
            S->perm[k] = S->perm[m];
            S->perm[m] = t;
        }
    for (int k = 0; k < n; k++) {
        contact *c = &L->c[S->perm[k]];
        vec3 R_new = cd_contact_update(W, c);
        if (measure)
            note_change(p, c->R, R_new, r);
        cd_apply_impulse(W, c, v3_scale(v3_sub(R_new, c->R), dt));
        c->R = R_new;
    }
    return CDLAB_OK;
}

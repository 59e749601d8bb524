/* The local contact problem (W, q, mu) of a CD step and its natural-map residual. */
#include "nscd/cd_contact_problem.h"

#include "nscd/cd.h"
#include "parallel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Local axes of a contact: rows n, t1[, t2]. In dimensions 1 and 2 the tangent is n turned by
 * +90 degrees about z; in 3D t1 is perpendicular to n and to the axis least aligned with it. */
static void local_frame(vec3 n, int d, vec3 *ax)
{
    ax[0] = n;
    if (d == 2) {
        ax[1] = v3(-n.y, n.x, 0.0);
        return;
    }
    vec3 a = fabs(n.x) <= fabs(n.y) && fabs(n.x) <= fabs(n.z) ? v3(1, 0, 0)
             : fabs(n.y) <= fabs(n.z)                         ? v3(0, 1, 0)
                                                              : v3(0, 0, 1);
    vec3 t1 = v3_cross(n, a);
    ax[1] = v3_scale(t1, 1.0 / v3_norm(t1));
    ax[2] = v3_cross(n, ax[1]);
}

/* Movable body of one end of a contact: particle index, n + wall index for a piston, -1 for an
 * immobile wall or a frozen particle (no velocity to change). */
static int body_index(const world *W, int b)
{
    if (b >= 0)
        return W->P.frozen[b] ? -1 : b;
    int w = -1 - b;
    return W->walls[w].kind == WALL_PISTON ? W->P.n + w : -1;
}

static void zero_body(world *W, int b)
{
    if (b < 0)
        return;
    if (b < W->P.n) {
        W->P.v[b] = v3_zero();
        W->P.w[b] = v3_zero();
    } else {
        W->walls[b - W->P.n].u = 0.0;
    }
}

void contact_problem_free(contact_problem *cp)
{
    free(cp->colptr);
    free(cp->row);
    free(cp->val);
    free(cp->q);
    free(cp->mu);
    free(cp->r);
    free(cp->u);
    free(cp->frame);
    free(cp->body0);
    free(cp->body1);
    free(cp->gap);
    free(cp->rowptr);
    free(cp->rcol);
    free(cp->rval);
    memset(cp, 0, sizeof *cp);
}

/* Contact a's relative velocity of now in its local axes, plus g_pos/dt on the normal. */
static void local_velocity(const world *W, const contact *c, const vec3 *ax, int d, double *out)
{
    vec3 V = cd_relative_velocity(W, c);
    double g_pos = c->gap > 0.0 ? c->gap : 0.0;
    for (int k = 0; k < d; k++)
        out[k] = v3_dot(V, ax[k]) + (k == 0 ? g_pos / W->dt : 0.0);
}

void contact_problem_matvec(int m, const int *colptr, const int *row, const double *val,
                            const double *x, double *y)
{
    memset(y, 0, (size_t)m * sizeof *y);
    for (int k = 0; k < m; k++)
        for (int e = colptr[k]; e < colptr[k + 1]; e++)
            y[row[e]] += val[e] * x[k];
}

void contact_problem_product(const contact_problem *cp, const double *x, double *y)
{
    if (!cp->rowptr) {
        contact_problem_matvec(cp->m, cp->colptr, cp->row, cp->val, x, y);
        return;
    }
    const int *rp = cp->rowptr, *rc = cp->rcol;
    const double *rv = cp->rval;
#pragma omp parallel for schedule(static) if (cp->m > CDLAB_PARALLEL_MIN)
    for (int i = 0; i < cp->m; i++) {
        double s = 0.0;
        for (int e = rp[i]; e < rp[i + 1]; e++)
            s += rv[e] * x[rc[e]];
        y[i] = s;
    }
}

/* The scratch of contact_problem_build: the contacts of each movable body (CSR: list[start[b]
 * .. start[b+1]-1]), the movable body at each end of each contact, the neighbour rows of a
 * column, and the world's velocities, saved to be restored bit for bit. */
typedef struct cp_work {
    const contact_list *L; /* the step's contacts */
    int nb;                /* bodies: particles, then walls (pistons only used) */
    int *start, *fill, *body, *list, *mark, *nbr;
    vec3 *v_save, *w_save;
    double *u_save;
} cp_work;

static void cp_work_free(cp_work *k)
{
    free(k->start);
    free(k->fill);
    free(k->body);
    free(k->list);
    free(k->mark);
    free(k->nbr);
    free(k->v_save);
    free(k->w_save);
    free(k->u_save);
}

static status cp_alloc(const world *W, contact_problem *cp, cp_work *k, diag *err)
{
    int nc = cp->nc, m = cp->m, n = W->P.n;
    k->nb = n + W->n_walls;
    k->start = calloc((size_t)k->nb + 1, sizeof *k->start);
    k->fill = calloc((size_t)k->nb + 1, sizeof *k->fill);
    k->body = malloc((size_t)(2 * nc + 1) * sizeof *k->body);
    k->list = malloc((size_t)(2 * nc + 1) * sizeof *k->list);
    k->mark = malloc((size_t)(nc + 1) * sizeof *k->mark);
    k->nbr = malloc((size_t)(nc + 1) * sizeof *k->nbr);
    k->v_save = malloc((size_t)(n + 1) * sizeof *k->v_save);
    k->w_save = malloc((size_t)(n + 1) * sizeof *k->w_save);
    k->u_save = malloc((size_t)(W->n_walls + 1) * sizeof *k->u_save);
    cp->colptr = malloc((size_t)(m + 1) * sizeof *cp->colptr);
    cp->q = calloc((size_t)m + 1, sizeof *cp->q);
    cp->mu = malloc((size_t)(nc + 1) * sizeof *cp->mu);
    cp->r = calloc((size_t)m + 1, sizeof *cp->r);
    cp->u = calloc((size_t)m + 1, sizeof *cp->u);
    cp->frame = calloc((size_t)m + 1, sizeof *cp->frame);
    cp->body0 = malloc((size_t)(nc + 1) * sizeof *cp->body0);
    cp->body1 = malloc((size_t)(nc + 1) * sizeof *cp->body1);
    cp->gap = malloc((size_t)(nc + 1) * sizeof *cp->gap);
    if (!k->start || !k->fill || !k->body || !k->list || !k->mark || !k->nbr || !k->v_save ||
        !k->w_save || !k->u_save || !cp->colptr || !cp->q || !cp->mu || !cp->r || !cp->u ||
        !cp->frame || !cp->body0 || !cp->body1 || !cp->gap)
        return diag_set(err, CDLAB_ERR_NOMEM, "contact problem: out of memory (%d contacts)", nc);
    return CDLAB_OK;
}

/* Each contact's frame, friction, bodies (stable ids) and gap; the contacts of each body. */
static void index_contacts(const world *W, contact_problem *cp, cp_work *k)
{
    const contact_list *L = k->L;
    int nc = cp->nc, d = cp->d;
    for (int a = 0; a < nc; a++) {
        const contact *c = &L->c[a];
        k->body[2 * a] = body_index(W, c->i);
        k->body[2 * a + 1] = body_index(W, c->j);
        for (int e = 0; e < 2; e++)
            if (k->body[2 * a + e] >= 0)
                k->start[k->body[2 * a + e] + 1]++;
        local_frame(c->n, d, &cp->frame[a * d]);
        cp->mu[a] = c->mu;
        cp->body0[a] = c->i >= 0 ? W->P.id[c->i] : c->i;
        cp->body1[a] = W->P.id[c->j];
        cp->gap[a] = c->gap;
        k->mark[a] = -1;
    }
    for (int b = 0; b < k->nb; b++)
        k->start[b + 1] += k->start[b];
    for (int a = 0; a < nc; a++)
        for (int e = 0; e < 2; e++) {
            int b = k->body[2 * a + e];
            if (b >= 0)
                k->list[k->start[b] + k->fill[b]++] = a;
        }
}

/* The solution r and u, and the free velocities q, from the end-of-step velocities (saved);
 * then every velocity zeroed for the probing. */
static void solution_and_free_velocities(world *W, contact_problem *cp, cp_work *k)
{
    particles *P = &W->P;
    const contact_list *L = k->L;
    int nc = cp->nc, d = cp->d;
    double dt = W->dt;
    memcpy(k->v_save, P->v, (size_t)P->n * sizeof *k->v_save);
    memcpy(k->w_save, P->w, (size_t)P->n * sizeof *k->w_save);
    for (int w = 0; w < W->n_walls; w++)
        k->u_save[w] = W->walls[w].u;
    for (int a = 0; a < nc; a++) {
        for (int x = 0; x < d; x++)
            cp->r[a * d + x] = v3_dot(L->c[a].R, cp->frame[a * d + x]) * dt;
        local_velocity(W, &L->c[a], &cp->frame[a * d], d, &cp->u[a * d]);
    }
    for (int a = 0; a < nc; a++)
        cd_apply_impulse(W, &L->c[a], v3_scale(L->c[a].R, -dt));
    for (int a = 0; a < nc; a++)
        local_velocity(W, &L->c[a], &cp->frame[a * d], d, &cp->q[a * d]);
    memset(P->v, 0, (size_t)P->n * sizeof *P->v);
    memset(P->w, 0, (size_t)P->n * sizeof *P->w);
    for (int w = 0; w < W->n_walls; w++)
        W->walls[w].u = 0.0;
}

/* The contacts that share a movable body with contact b, in ascending order, into k->nbr. */
static int neighbours(const cp_work *k, int b)
{
    const int *ends = &k->body[2 * b];
    int nn = 0;
    for (int e = 0; e < 2; e++) {
        if (ends[e] < 0)
            continue;
        for (int x = k->start[ends[e]]; x < k->start[ends[e] + 1]; x++) {
            int a = k->list[x];
            if (k->mark[a] == b)
                continue;
            k->mark[a] = b;
            int y = nn++; /* insertion: rows in ascending order */
            while (y > 0 && k->nbr[y - 1] > a) {
                k->nbr[y] = k->nbr[y - 1];
                y--;
            }
            k->nbr[y] = a;
        }
    }
    return nn;
}

/* W column by column: a unit impulse along each local axis of contact b, the response of the
 * contacts sharing a body read back, the bodies zeroed again. */
static status assemble_W(world *W, contact_problem *cp, cp_work *k, diag *err)
{
    const contact_list *L = k->L;
    int nc = cp->nc, d = cp->d, m = cp->m;
    size_t cap = (size_t)m * (size_t)d * 4 + 16, nnz = 0;
    cp->row = malloc(cap * sizeof *cp->row);
    cp->val = malloc(cap * sizeof *cp->val);
    if (!cp->row || !cp->val)
        return diag_set(err, CDLAB_ERR_NOMEM, "contact problem: out of memory");
    for (int b = 0; b < nc; b++) {
        int nn = neighbours(k, b);
        for (int kb = 0; kb < d; kb++) {
            int col = b * d + kb;
            cp->colptr[col] = (int)nnz;
            cd_apply_impulse(W, &L->c[b], cp->frame[b * d + kb]);
            if (nnz + (size_t)nn * (size_t)d > cap) {
                cap = 2 * (nnz + (size_t)nn * (size_t)d);
                int *nr = realloc(cp->row, cap * sizeof *nr);
                if (nr)
                    cp->row = nr;
                double *nv = realloc(cp->val, cap * sizeof *nv);
                if (nv)
                    cp->val = nv;
                if (!nr || !nv)
                    return diag_set(err, CDLAB_ERR_NOMEM, "contact problem: out of memory");
            }
            for (int x = 0; x < nn; x++) {
                int a = k->nbr[x];
                vec3 V = cd_relative_velocity(W, &L->c[a]);
                for (int ka = 0; ka < d; ka++) {
                    double wv = v3_dot(V, cp->frame[a * d + ka]);
                    if (wv != 0.0 || a * d + ka == col) {
                        cp->row[nnz] = a * d + ka;
                        cp->val[nnz++] = wv;
                    }
                }
            }
            zero_body(W, k->body[2 * b]);
            zero_body(W, k->body[2 * b + 1]);
        }
    }
    cp->colptr[m] = (int)nnz;
    cp->nnz = (int)nnz;
    if (nnz > (size_t)0x7fffffff)
        return diag_set(err, CDLAB_ERR_ARG, "contact problem: W has too many entries for FCLIB");
    return CDLAB_OK;
}

status contact_problem_build(world *W, const contact_list *L, contact_problem *cp, diag *err)
{
    memset(cp, 0, sizeof *cp);
    cp->nc = L->n;
    cp->d = W->P.dimension == 3 ? 3 : 2;
    cp->m = cp->nc * cp->d;
    cp_work k;
    memset(&k, 0, sizeof k);
    k.L = L;
    status s = cp_alloc(W, cp, &k, err);
    if (s == CDLAB_OK) {
        index_contacts(W, cp, &k);
        solution_and_free_velocities(W, cp, &k);
        s = assemble_W(W, cp, &k, err);
        /* the world's velocities as they were, bit for bit */
        memcpy(W->P.v, k.v_save, (size_t)W->P.n * sizeof *k.v_save);
        memcpy(W->P.w, k.w_save, (size_t)W->P.n * sizeof *k.w_save);
        for (int w = 0; w < W->n_walls; w++)
            W->walls[w].u = k.u_save[w];
    }
    cp_work_free(&k);
    if (s != CDLAB_OK)
        contact_problem_free(cp);
    return s;
}

int cp_change_met(const contact_problem *cp, const cp_sweep_options *o, const double *before,
                  const double *after, double *measure)
{
    /* the engine's sweeps' measures and verdict (cd_sweep.c, cd_criteria.c), a contact's d
     * components as a force */
    cd_params p = {.crit = o->change == CP_CHANGE_LOCAL ? CRIT_LOCAL : CRIT_GLOBAL,
                   .epsilon = o->change_epsilon,
                   .delta = o->change_delta};
    sweep_result r;
    sweep_result_init(&r);
    for (int a = 0; a < cp->nc; a++) {
        double x[3] = {0.0, 0.0, 0.0}, y[3] = {0.0, 0.0, 0.0};
        for (int j = 0; j < cp->d; j++) {
            x[j] = after[a * cp->d + j];
            y[j] = before[a * cp->d + j];
        }
        sweep_note_change(&p, (vec3){y[0], y[1], y[2]}, (vec3){x[0], x[1], x[2]}, &r);
    }
    return criteria_met(&p, &r, 0, measure);
}

void project_cone(double *z, int d, double mu)
{
    double zn = z[0], zt = 0.0;
    for (int k = 1; k < d; k++)
        zt += z[k] * z[k];
    zt = sqrt(zt);
    /* in the cone; zn >= 0 too: with mu = 0 and zt = 0, "zt <= mu zn" held for a negative zn
     * (0 <= -0), which stayed unprojected */
    if (zn >= 0.0 && zt <= mu * zn)
        return;
    if (mu * zt <= -zn) {
        for (int k = 0; k < d; k++)
            z[k] = 0.0;
        return;
    }
    double a = (zn + mu * zt) / (1.0 + mu * mu);
    z[0] = a;
    for (int k = 1; k < d; k++)
        z[k] *= mu * a / zt;
}

double natural_map_term(const double *r, const double *u, int d, double mu, double rho, double *r2)
{
    double ut = 0.0, z[4] = {0.0, 0.0, 0.0, 0.0}, res2 = 0.0;
    for (int k = 1; k < d; k++)
        ut += u[k] * u[k];
    ut = sqrt(ut);
    for (int k = 0; k < d; k++)
        z[k] = r[k] - rho * (u[k] + (k == 0 ? mu * ut : 0.0));
    project_cone(z, d, mu);
    *r2 = 0.0;
    for (int k = 0; k < d; k++) {
        res2 += (r[k] - z[k]) * (r[k] - z[k]);
        *r2 += r[k] * r[k];
    }
    return res2;
}

double natural_map_residual(int nc, int d, const int *colptr, const int *row, const double *val,
                            const double *q, const double *mu, const double *r, int rho_mode,
                            double *abs_out)
{
    int m = nc * d;
    double *u = malloc((size_t)(m + 1) * sizeof *u);
    if (!u)
        return NAN;
    contact_problem_matvec(m, colptr, row, val, r, u);
    for (int k = 0; k < m; k++)
        u[k] += q[k];
    double res = natural_map_given_u(nc, d, colptr, row, val, mu, r, u, rho_mode, abs_out);
    free(u);
    return res;
}

double natural_map_given_u(int nc, int d, const int *colptr, const int *row, const double *val,
                           const double *mu, const double *r, const double *u, int rho_mode,
                           double *abs_out)
{
    double res2 = 0.0, r2 = 0.0;
    for (int a = 0; a < nc; a++) {
        const double *ua = &u[a * d], *ra = &r[a * d];
        double rho = 1.0, w_nn = 0.0, a2;
        if (rho_mode == NM_RHO_INV_W) {
            for (int e = colptr[a * d]; e < colptr[a * d + 1]; e++)
                if (row[e] == a * d)
                    w_nn = val[e];
            rho = w_nn > 0.0 ? 1.0 / w_nn : 1.0;
        }
        res2 += natural_map_term(ra, ua, d, mu[a], rho, &a2);
        r2 += a2;
    }
    double res = sqrt(res2);
    if (abs_out)
        *abs_out = res;
    return r2 > 0.0 ? res / sqrt(r2) : res;
}

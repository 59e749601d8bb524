/* APGD on a stored contact problem (cd_contact_problem.h, CP_APGD): Nesterov's accelerated
 * projected gradient on the cone complementarity problem
 *     min f(x) = 1/2 x.W x + (q + s e_N).x  over the Coulomb cones |x_T| <= mu x_N,
 * with the step 1/L found by backtracking (L doubled until f(x') lies under the quadratic model
 * of f at y, then let down by 0.9 each iteration), the momentum of Nesterov's theta sequence,
 * and a restart (y = x, theta = 1) when the step turned against the gradient (O'Donoghue and
 * Candes), as Mazhar, Heyn, Negrut and Tasora (ACM TOG 34(3), 2015) set it out. The answer is the
 * iterate of smallest Coulomb residual (stopped by eq. 35 or 36 on the change of one iteration,
 * o->change: the iterate that met it). With desaxce, s_a = mu_a |u_aT| of an outer iterate
 * (De Saxce's modified velocity), taken afresh when the inner residual has fallen below a tenth
 * of the Coulomb one. */
#include "nscd/cd_contact_problem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct apgd_work {
    double *x, *x_prev, *y, *wx, *wx_prev, *wy, *g, *xt, *wxt, *u, *best, *s;
} apgd_work;

static void work_free(apgd_work *w)
{
    double **p = (double **)w;
    for (size_t k = 0; k < sizeof *w / sizeof *p; k++)
        free(p[k]);
}

static int work_alloc(apgd_work *w, int m, int nc)
{
    memset(w, 0, sizeof *w);
    double **p = (double **)w;
    size_t n = sizeof *w / sizeof *p;
    for (size_t k = 0; k < n; k++)
        if (!(p[k] = calloc((size_t)(k + 1 == n ? nc : m) + 1, sizeof **p)))
            return 0;
    return 1;
}

/* f(x) given W x */
static double objective(const contact_problem *cp, const double *s, const double *x,
                        const double *wx)
{
    double f = 0.0;
    for (int k = 0; k < cp->m; k++)
        f += x[k] * (0.5 * wx[k] + cp->q[k] + (k % cp->d == 0 ? s[k / cp->d] : 0.0));
    return f;
}

/* u = W x + q, the Coulomb residual of x (rho = 1) */
static double coulomb_residual(const contact_problem *cp, const double *x, const double *wx,
                               double *u)
{
    for (int k = 0; k < cp->m; k++)
        u[k] = wx[k] + cp->q[k];
    return natural_map_given_u(cp->nc, cp->d, cp->colptr, cp->row, cp->val, cp->mu, x, u,
                               NM_RHO_ONE, NULL);
}

/* The inner problem's residual |x - P_K(x - (u + s e_N))| / |x| with u = W x + q given. */
static double inner_residual(const contact_problem *cp, const double *s, const double *x,
                             const double *u)
{
    int d = cp->d;
    double res2 = 0.0, x2 = 0.0;
    for (int a = 0; a < cp->nc; a++) {
        double z[4];
        for (int j = 0; j < d; j++)
            z[j] = x[a * d + j] - u[a * d + j] - (j == 0 ? s[a] : 0.0);
        project_cone(z, d, cp->mu[a]);
        for (int j = 0; j < d; j++) {
            res2 += (x[a * d + j] - z[j]) * (x[a * d + j] - z[j]);
            x2 += x[a * d + j] * x[a * d + j];
        }
    }
    return x2 > 0.0 ? sqrt(res2 / x2) : sqrt(res2);
}

/* s_a = mu_a |u_aT| */
static void desaxce_shift(const contact_problem *cp, const double *u, double *s)
{
    int d = cp->d;
    for (int a = 0; a < cp->nc; a++) {
        double t2 = 0.0;
        for (int j = 1; j < d; j++)
            t2 += u[a * d + j] * u[a * d + j];
        s[a] = cp->mu[a] * sqrt(t2);
    }
}

/* One accelerated step from y (W y in wy) into x, with L and theta carried; 0, or 1 when no
 * step satisfies the model (L overflows: a problem that is not convex, or not finite). */
static int accelerated_step(const contact_problem *cp, apgd_work *w, double *L, double *theta)
{
    int m = cp->m, d = cp->d;
    for (int k = 0; k < m; k++)
        w->g[k] = w->wy[k] + cp->q[k] + (k % d == 0 ? w->s[k / d] : 0.0);
    double fy = objective(cp, w->s, w->y, w->wy);
    for (;;) {
        double t = 1.0 / *L;
        for (int k = 0; k < m; k++)
            w->xt[k] = w->y[k] - t * w->g[k];
        for (int a = 0; a < cp->nc; a++)
            project_cone(&w->xt[a * d], d, cp->mu[a]);
        contact_problem_product(cp, w->xt, w->wxt);
        double f = objective(cp, w->s, w->xt, w->wxt), lin = 0.0, dist2 = 0.0;
        for (int k = 0; k < m; k++) {
            double dx = w->xt[k] - w->y[k];
            lin += w->g[k] * dx;
            dist2 += dx * dx;
        }
        double model = fy + lin + 0.5 * *L * dist2;
        /* rounding: f and the model agree to a few ulps of their size near the answer; a step
         * that leaves y where it is (dist2 = 0) fits whatever L: f(y) against f(y), which
         * differ only by the drift of W y carried through the momentum's updates */
        if (f <= model + 1e-13 * (fabs(f) + fabs(model)) || dist2 == 0.0)
            break;
        *L *= 2.0;
        if (!(*L < 1e300))
            return 1;
    }
    double th = *theta, th_next = 0.5 * (-th * th + th * sqrt(th * th + 4.0));
    double beta = th * (1.0 - th) / (th * th + th_next), turn = 0.0;
    for (int k = 0; k < m; k++)
        turn += w->g[k] * (w->xt[k] - w->x[k]);
    memcpy(w->x_prev, w->x, (size_t)m * sizeof *w->x);
    memcpy(w->wx_prev, w->wx, (size_t)m * sizeof *w->wx);
    memcpy(w->x, w->xt, (size_t)m * sizeof *w->x);
    memcpy(w->wx, w->wxt, (size_t)m * sizeof *w->wx);
    if (turn > 0.0) { /* restart */
        memcpy(w->y, w->x, (size_t)m * sizeof *w->y);
        memcpy(w->wy, w->wx, (size_t)m * sizeof *w->wy);
        *theta = 1.0;
    } else {
        for (int k = 0; k < m; k++) {
            w->y[k] = w->x[k] + beta * (w->x[k] - w->x_prev[k]);
            w->wy[k] = w->wx[k] + beta * (w->wx[k] - w->wx_prev[k]);
        }
        *theta = th_next;
    }
    *L *= 0.9;
    return 0;
}

status contact_problem_apgd(const contact_problem *cp, double *r, const cp_sweep_options *o,
                            cp_sweep_report report, void *ctx, cp_sweep_result *res, diag *err)
{
    int m = cp->m;
    memset(res, 0, sizeof *res);
    apgd_work w;
    if (!work_alloc(&w, m, cp->nc)) {
        work_free(&w);
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory for APGD on %d contacts", cp->nc);
    }
    status st = CDLAB_OK;
    memcpy(w.x, r, (size_t)m * sizeof *r);
    for (int a = 0; a < cp->nc; a++) /* a start outside the cones is projected */
        project_cone(&w.x[a * cp->d], cp->d, cp->mu[a]);
    contact_problem_product(cp, w.x, w.wx);
    double coul = coulomb_residual(cp, w.x, w.wx, w.u);
    if (o->desaxce)
        desaxce_shift(cp, w.u, w.s);
    memcpy(w.y, w.x, (size_t)m * sizeof *w.x);
    memcpy(w.wy, w.wx, (size_t)m * sizeof *w.wx);
    memcpy(w.best, w.x, (size_t)m * sizeof *w.x);
    /* L from W applied to a vector of ones: |W 1| / |1| (the paper's first estimate) */
    for (int k = 0; k < m; k++)
        w.xt[k] = 1.0;
    contact_problem_product(cp, w.xt, w.wxt);
    double L = 0.0, theta = 1.0;
    for (int k = 0; k < m; k++)
        L += w.wxt[k] * w.wxt[k];
    L = sqrt(L / m);
    if (!(L > 0.0))
        L = 1.0;
    double t0 = cp_seconds();
    /* the measure: Coulomb's residual, or without desaxce the convex problem's own */
    res->residual = o->desaxce ? coul : inner_residual(cp, w.s, w.x, w.u);
    if (report)
        report(ctx, 0, res->residual, 0.0);
    while (res->sweeps < o->max_sweeps && !(res->residual <= o->tolerance) && !res->change_met &&
           !(o->max_seconds > 0.0 && cp_seconds() - t0 > o->max_seconds)) {
        if (accelerated_step(cp, &w, &L, &theta)) {
            st = diag_set(err, CDLAB_ERR_NUMERIC,
                          "APGD iteration %d: no step fits the objective's quadratic model "
                          "(W not positive semidefinite, or values not finite)",
                          res->sweeps + 1);
            break;
        }
        res->sweeps++;
        if (o->change != CP_CHANGE_NONE)
            res->change_met = cp_change_met(cp, o, w.x_prev, w.x, &res->change);
        coul = coulomb_residual(cp, w.x, w.wx, w.u);
        if (!isfinite(coul)) {
            st = diag_set(err, CDLAB_ERR_NUMERIC, "APGD iteration %d: the residual is %g",
                          res->sweeps, coul);
            break;
        }
        double inner = inner_residual(cp, w.s, w.x, w.u), meas = o->desaxce ? coul : inner;
        if (res->change_met) /* the answer is this iterate: its residual */
            res->residual = meas;
        else if (meas < res->residual) {
            res->residual = meas;
            memcpy(w.best, w.x, (size_t)m * sizeof *w.x);
        }
        if (o->desaxce && inner <= 0.1 * coul) {
            desaxce_shift(cp, w.u, w.s);
            memcpy(w.y, w.x, (size_t)m * sizeof *w.x);
            memcpy(w.wy, w.wx, (size_t)m * sizeof *w.wx);
            theta = 1.0;
            res->outer++;
        }
        if (report && o->every > 0 && res->sweeps % o->every == 0)
            report(ctx, res->sweeps, meas, cp_seconds() - t0);
    }
    res->seconds = cp_seconds() - t0;
    res->converged = res->residual <= o->tolerance || res->change_met;
    if (report && st == CDLAB_OK && (o->every <= 0 || res->sweeps % o->every != 0))
        report(ctx, res->sweeps, res->residual, res->seconds);
    /* stopped by eq. 35 or 36: the iterate that met it (else the one of smallest residual) */
    memcpy(r, res->change_met ? w.x : w.best, (size_t)m * sizeof *r);
    contact_problem_product(cp, r, w.wx);
    for (int k = 0; k < m; k++)
        w.u[k] = w.wx[k] + cp->q[k];
    res->inner_residual = inner_residual(cp, w.s, r, w.u);
    work_free(&w);
    return st;
}

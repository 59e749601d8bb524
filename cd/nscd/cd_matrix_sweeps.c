/* The sweeps on a stored contact problem (W, q, mu) of FCLIB's form, for `cdlab solve`: the
 * engine's one-contact update (cd_sweep.c's contact_update) on impulses r with u = W r + q kept
 * up to date column by column, so that a step can be studied without re-running its
 * simulation, and against other codes' solvers on the same file. */
#include "nscd/cd_contact_problem.h"

#include "pcg32.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double cp_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The natural-map residual (rho = 1) of r with u = W r + q given. */
static double residual_of(const contact_problem *cp, const double *r, const double *u)
{
    return natural_map_given_u(cp->nc, cp->d, cp->colptr, cp->row, cp->val, cp->mu, r, u,
                               NM_RHO_ONE, NULL);
}

/* u += W[:, k] x for the columns k of contact a. */
static void add_columns(const contact_problem *cp, int a, const double *dx, double *u)
{
    for (int j = 0; j < cp->d; j++) {
        int k = a * cp->d + j;
        if (dx[j] != 0.0)
            for (int e = cp->colptr[k]; e < cp->colptr[k + 1]; e++)
                u[cp->row[e]] += cp->val[e] * dx[j];
    }
}

/* The one-contact update: the Gauss-Seidel step on each axis, r - u / W_kk, taken omega times,
 * then the shock law's projections: open when the normal is negative, the tangent scaled onto
 * the cone (as cd_sweep.c's contact_update, in impulses). */
static void update(const contact_problem *cp, int a, const double *w_diag, double omega, double *r,
                   double *u)
{
    int d = cp->d;
    double *ra = &r[a * d], *ua = &u[a * d], next[3] = {0.0, 0.0, 0.0}, dx[3];
    const double *wa = &w_diag[a * d];
    double rn = ra[0] - omega * ua[0] / wa[0];
    if (rn > 0.0) {
        next[0] = rn;
        double t2 = 0.0;
        for (int j = 1; j < d; j++) {
            next[j] = wa[j] > 0.0 ? ra[j] - omega * ua[j] / wa[j] : 0.0;
            t2 += next[j] * next[j];
        }
        double limit = cp->mu[a] * rn;
        if (t2 > limit * limit) {
            double scale = limit / sqrt(t2);
            for (int j = 1; j < d; j++)
                next[j] *= scale;
        }
    }
    for (int j = 0; j < d; j++) {
        dx[j] = next[j] - ra[j];
        ra[j] = next[j];
    }
    add_columns(cp, a, dx, u);
}

status contact_problem_diagonal(const contact_problem *cp, double *w_diag, diag *err)
{
    int d = cp->d;
    for (int k = 0; k < cp->m; k++) {
        w_diag[k] = 0.0;
        for (int e = cp->colptr[k]; e < cp->colptr[k + 1]; e++)
            if (cp->row[e] == k)
                w_diag[k] += cp->val[e];
        if (k % d == 0 && !(w_diag[k] > 0.0))
            return diag_set(err, CDLAB_ERR_ARG,
                            "contact %d's normal diagonal entry W(%d,%d) is %g: a contact whose "
                            "normal impulse moves nothing has no one-contact update",
                            k / d, k, k, w_diag[k]);
    }
    return CDLAB_OK;
}

status contact_problem_sweeps(const contact_problem *cp, double *r, const cp_sweep_options *o,
                              cp_sweep_report report, void *ctx, cp_sweep_result *res, diag *err)
{
    int m = cp->m, nc = cp->nc;
    memset(res, 0, sizeof *res);
    if (o->order != CP_FORWARD && o->order != CP_BACKWARD && o->order != CP_RANDOM)
        return diag_set(err, CDLAB_ERR_ARG,
                        "the stored problem's sweeps are forward, backward "
                        "or random");
    double *u = malloc((size_t)m * sizeof *u), *w_diag = malloc((size_t)m * sizeof *w_diag);
    double *before = o->change != CP_CHANGE_NONE ? malloc((size_t)m * sizeof *before + 1) : NULL;
    int *perm = malloc((size_t)(nc + 1) * sizeof *perm);
    if (!u || !w_diag || !perm || (o->change != CP_CHANGE_NONE && !before)) {
        free(u);
        free(w_diag);
        free(before);
        free(perm);
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory for a problem of %d contacts", nc);
    }
    status s = contact_problem_diagonal(cp, w_diag, err);
    if (s == CDLAB_OK) {
        /* u = W r + q */
        memcpy(u, cp->q, (size_t)m * sizeof *u);
        for (int k = 0; k < m; k++)
            if (r[k] != 0.0)
                for (int e = cp->colptr[k]; e < cp->colptr[k + 1]; e++)
                    u[cp->row[e]] += cp->val[e] * r[k];
        pcg32 rng;
        pcg32_seed(&rng, o->seed, 54u);
        for (int a = 0; a < nc; a++)
            perm[a] = o->order == CP_BACKWARD ? nc - 1 - a : a;
        double t0 = cp_seconds();
        res->residual = residual_of(cp, r, u);
        if (report)
            report(ctx, 0, res->residual, 0.0);
        while (res->sweeps < o->max_sweeps && !(res->residual <= o->tolerance) &&
               !res->change_met && !(o->max_seconds > 0.0 && cp_seconds() - t0 > o->max_seconds)) {
            if (before)
                memcpy(before, r, (size_t)m * sizeof *r);
            if (o->order == CP_RANDOM)
                for (int k = nc - 1; k > 0; k--) {
                    int j = (int)pcg32_bounded_fast(&rng, (uint32_t)(k + 1)), t = perm[k];
                    perm[k] = perm[j];
                    perm[j] = t;
                }
            for (int k = 0; k < nc; k++)
                update(cp, perm[k], w_diag, o->relaxation, r, u);
            res->sweeps++;
            res->residual = residual_of(cp, r, u);
            if (before)
                res->change_met = cp_change_met(cp, o, before, r, &res->change);
            if (!isfinite(res->residual)) {
                s = diag_set(err, CDLAB_ERR_NUMERIC,
                             "sweep %d: the residual is %g (the impulses diverge: relaxation %g "
                             "too large for this problem?)",
                             res->sweeps, res->residual, o->relaxation);
                break;
            }
            if (report && o->every > 0 && res->sweeps % o->every == 0)
                report(ctx, res->sweeps, res->residual, cp_seconds() - t0);
        }
        res->seconds = cp_seconds() - t0;
        res->converged = res->residual <= o->tolerance || res->change_met;
        if (report && s == CDLAB_OK && (o->every <= 0 || res->sweeps % o->every != 0))
            report(ctx, res->sweeps, res->residual, res->seconds);
    }
    free(u);
    free(w_diag);
    free(before);
    free(perm);
    return s;
}

/* The answer's dilation into res: u_N at the contacts with r_N > 0. */
static status dilation(const contact_problem *cp, const double *r, cp_sweep_result *res, diag *err)
{
    double *u = malloc((size_t)cp->m * sizeof *u + 1);
    if (!u)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory for %d velocities", cp->m);
    contact_problem_product(cp, r, u);
    for (int k = 0; k < cp->m; k++)
        u[k] += cp->q[k];
    double sum = 0.0;
    res->dilation_max = 0.0;
    res->closed = 0;
    for (int a = 0; a < cp->nc; a++) {
        int k = a * cp->d;
        if (r[k] > 0.0) {
            double un = u[k];
            sum += un;
            res->dilation_max = res->closed == 0 || un > res->dilation_max ? un : res->dilation_max;
            res->closed++;
        }
    }
    res->dilation_mean = res->closed > 0 ? sum / res->closed : 0.0;
    res->coulomb = natural_map_given_u(cp->nc, cp->d, cp->colptr, cp->row, cp->val, cp->mu, r, u,
                                       NM_RHO_ONE, NULL);
    free(u);
    return CDLAB_OK;
}

status contact_problem_with_rows(const contact_problem *cp, contact_problem *rows, diag *err)
{
    *rows = *cp;
    int m = cp->m, nnz = cp->colptr[m];
    rows->rowptr = calloc((size_t)m + 2, sizeof *rows->rowptr);
    rows->rcol = malloc((size_t)nnz * sizeof *rows->rcol + 1);
    rows->rval = malloc((size_t)nnz * sizeof *rows->rval + 1);
    int *fill = malloc((size_t)m * sizeof *fill + 1);
    if (!rows->rowptr || !rows->rcol || !rows->rval || !fill) {
        free(fill);
        contact_problem_rows_free(rows);
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory for W by rows (%d entries)", nnz);
    }
    for (int e = 0; e < nnz; e++)
        rows->rowptr[cp->row[e] + 1]++;
    for (int i = 0; i < m; i++) {
        rows->rowptr[i + 1] += rows->rowptr[i];
        fill[i] = rows->rowptr[i];
    }
    for (int k = 0; k < m; k++) /* column k's entries land in ascending k within each row */
        for (int e = cp->colptr[k]; e < cp->colptr[k + 1]; e++) {
            int at = fill[cp->row[e]]++;
            rows->rcol[at] = k;
            rows->rval[at] = cp->val[e];
        }
    free(fill);
    return CDLAB_OK;
}

void contact_problem_rows_free(contact_problem *rows)
{
    free(rows->rowptr);
    free(rows->rcol);
    free(rows->rval);
    rows->rowptr = rows->rcol = NULL;
    rows->rval = NULL;
}

status contact_problem_solve(const contact_problem *cp, double *r, const cp_sweep_options *o,
                             cp_sweep_report report, void *ctx, cp_sweep_result *res, diag *err)
{
    contact_problem rows;
    int own = !cp->rowptr && o->method != CP_SWEEPS; /* the sweeps take W by columns */
    if (own) {
        status sr = contact_problem_with_rows(cp, &rows, err);
        if (sr != CDLAB_OK)
            return sr;
    }
    const contact_problem *use = own ? &rows : cp;
    status s = o->method == CP_APGD     ? contact_problem_apgd(use, r, o, report, ctx, res, err)
               : o->method == CP_NEWTON ? contact_problem_newton(use, r, o, report, ctx, res, err)
                                        : contact_problem_sweeps(use, r, o, report, ctx, res, err);
    if (s == CDLAB_OK)
        s = dilation(use, r, res, err);
    if (own)
        contact_problem_rows_free(&rows);
    return s;
}

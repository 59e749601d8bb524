/* A semismooth Newton method on a stored contact problem (cd_contact_problem.h, CP_NEWTON), on
 * Alart and Curnier's function of the impulses r, with u = W r + q and rho_a = 1 / W_(aN,aN):
 *     z = r_a - rho_a u_a,
 *     F_a = r_a                                  when z_N <= 0 (open),
 *     F_a = rho_a u_a                            when |z_T| <= mu z_N (sticking),
 *     F_a = (rho_a u_N, r_T)                     when mu = 0 (frictionless),
 *     F_a = (rho_a u_N, r_T - mu z_N z_T / |z_T|)  otherwise (sliding),
 * zero exactly where the shock law holds (Signorini with Coulomb's law of maximal
 * dissipation). Its generalized Jacobian is J = P + Q W with P and Q block diagonal (one d x d
 * block per contact, from the case the contact is in). A dense packing's W is singular (more
 * contact directions than the bodies' freedoms), and so is J where contacts stick; each step is
 * therefore the Newton step of the proximal function F_eps (u + eps D (r' - r) in place of u, D
 * the diagonal of W), solved with UMFPACK's sparse LU (the symbolic analysis once, on W's pattern
 * by contact blocks): newton_iteration. A step whose line search fails gives way to one sweep.
 * Stopped by the natural-map residual (rho = 1), as every solver of cdlab solve. */
#include "nscd/cd_contact_problem.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <suitesparse/umfpack.h>

typedef struct newton_work {
    int m, nc, d, nnz;
    int *colptr, *row, *pos; /* J's pattern (compressed columns); pos: scratch per contact */
    int *wmap;               /* for each entry of W: its place in J's values */
    double *val, *rho, *w_diag;
    double *P, *Q; /* nc blocks of d x d, row-major */
    double *u, *F, *dr, *rt, *ut, *Ft;
    double *r_before; /* eqs. 35-36: the impulses before an iteration */
    void *symbolic;
} newton_work;

static void work_free(newton_work *w)
{
    free(w->colptr);
    free(w->row);
    free(w->pos);
    free(w->wmap);
    free(w->val);
    free(w->rho);
    free(w->w_diag);
    free(w->P);
    free(w->Q);
    free(w->u);
    free(w->F);
    free(w->dr);
    free(w->rt);
    free(w->ut);
    free(w->Ft);
    free(w->r_before);
    if (w->symbolic)
        umfpack_di_free_symbolic(&w->symbolic);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* J's pattern: column k holds every row of each contact block that W's column k touches, and
 * of k's own block, in ascending order; wmap sends W's entries into it. 0 when out of memory. */
static int build_pattern(const contact_problem *cp, newton_work *w)
{
    int m = cp->m, d = cp->d, nc = cp->nc;
    int *blocks = malloc((size_t)(nc + 1) * sizeof *blocks);
    w->colptr = malloc((size_t)(m + 1) * sizeof *w->colptr);
    w->pos = malloc((size_t)(nc + 1) * sizeof *w->pos);
    w->wmap = malloc((size_t)(cp->nnz + 1) * sizeof *w->wmap);
    if (!blocks || !w->colptr || !w->pos || !w->wmap) {
        free(blocks);
        return 0;
    }
    for (int a = 0; a < nc; a++)
        w->pos[a] = -1;
    for (int pass = 0; pass < 2; pass++) {
        int nnz = 0;
        for (int k = 0; k < m; k++) {
            int nb = 0;
            blocks[nb++] = k / d;
            w->pos[k / d] = 0;
            for (int e = cp->colptr[k]; e < cp->colptr[k + 1]; e++) {
                int a = cp->row[e] / d;
                if (w->pos[a] < 0) {
                    w->pos[a] = 0;
                    blocks[nb++] = a;
                }
            }
            qsort(blocks, (size_t)nb, sizeof *blocks, cmp_int);
            if (pass == 1) {
                w->colptr[k] = nnz;
                for (int b = 0; b < nb; b++) {
                    w->pos[blocks[b]] = nnz + b * d;
                    for (int i = 0; i < d; i++)
                        w->row[nnz + b * d + i] = blocks[b] * d + i;
                }
                for (int e = cp->colptr[k]; e < cp->colptr[k + 1]; e++)
                    w->wmap[e] = w->pos[cp->row[e] / d] + cp->row[e] % d;
            }
            nnz += nb * d;
            for (int b = 0; b < nb; b++)
                w->pos[blocks[b]] = -1;
        }
        if (pass == 0) {
            w->nnz = nnz;
            w->row = malloc((size_t)nnz * sizeof *w->row);
            w->val = malloc((size_t)nnz * sizeof *w->val);
            if (!w->row || !w->val) {
                free(blocks);
                return 0;
            }
        } else
            w->colptr[m] = nnz;
    }
    free(blocks);
    return 1;
}

/* F(r) into F with u = W r + q into u; |F|^2 / 2. With P and Q given (not NULL), also the
 * blocks of the generalized Jacobian. */
static double af_function(const contact_problem *cp, newton_work *w, const double *r, double *u,
                          double *F, double *P, double *Q, const double *center, double eps)
{
    int d = cp->d;
    contact_problem_product(cp, r, u);
    double psi = 0.0;
    for (int a = 0; a < cp->nc; a++) {
        const double *ra = &r[a * d];
        double *ua = &u[a * d], *Fa = &F[a * d], rho = w->rho[a], mu = cp->mu[a];
        double z[3] = {0.0, 0.0, 0.0}, zt = 0.0; /* z[2] unused in 2D */
        for (int j = 0; j < d; j++) {
            ua[j] += cp->q[a * d + j];
            if (center) /* the proximal term: u + eps D (r - center) */
                ua[j] += eps * w->w_diag[a * d + j] * (ra[j] - center[a * d + j]);
            z[j] = ra[j] - rho * ua[j];
            if (j > 0)
                zt += z[j] * z[j];
        }
        zt = sqrt(zt);
        double *Pa = P ? &P[a * d * d] : NULL, *Qa = Q ? &Q[a * d * d] : NULL;
        if (Pa) {
            memset(Pa, 0, (size_t)(d * d) * sizeof *Pa);
            memset(Qa, 0, (size_t)(d * d) * sizeof *Qa);
        }
        if (z[0] <= 0.0) { /* open */
            for (int j = 0; j < d; j++) {
                Fa[j] = ra[j];
                if (Pa)
                    Pa[j * d + j] = 1.0;
            }
        } else if (mu == 0.0 || zt <= mu * z[0]) {
            /* sticking, or frictionless (the sliding case's limit, taken here: z_T may be 0);
             * a tangent without friction or along which no body can move (W_jj = 0, a chain's)
             * has F_j = r_j, else J's row would be zero */
            for (int j = 0; j < d; j++) {
                int free_t = j > 0 && (mu == 0.0 || w->w_diag[a * d + j] == 0.0);
                Fa[j] = free_t ? ra[j] : rho * ua[j];
                if (Pa && free_t)
                    Pa[j * d + j] = 1.0;
                else if (Qa)
                    Qa[j * d + j] = rho;
            }
        } else { /* sliding: the normal as closed, the tangent on the disk of radius mu z_N */
            double radius = mu * z[0], e[3] = {0.0, z[1] / zt, d > 2 ? z[2] / zt : 0.0};
            Fa[0] = rho * ua[0];
            for (int j = 1; j < d; j++)
                Fa[j] = ra[j] - radius * e[j];
            if (Pa) {
                Qa[0] = rho;
                double g = radius / zt;
                for (int i = 1; i < d; i++) {
                    Pa[i * d] = -mu * e[i];
                    Qa[i * d] = mu * rho * e[i];
                    for (int j = 1; j < d; j++) {
                        double G = g * ((i == j ? 1.0 : 0.0) - e[i] * e[j]);
                        Pa[i * d + j] = (i == j ? 1.0 : 0.0) - G;
                        Qa[i * d + j] = rho * G;
                    }
                }
            }
        }
        for (int j = 0; j < d; j++)
            psi += 0.5 * Fa[j] * Fa[j];
    }
    return psi;
}

/* J's values: P + Q (W + eps D). */
static void jacobian_values(const contact_problem *cp, newton_work *w, double eps)
{
    int d = cp->d, m = cp->m;
    memset(w->val, 0, (size_t)w->nnz * sizeof *w->val);
    for (int k = 0; k < m; k++) {
        int a = k / d, c = k % d, own = -1;
        /* the own block's first row in column k */
        for (int e = w->colptr[k]; e < w->colptr[k + 1]; e += d)
            if (w->row[e] == a * d)
                own = e;
        for (int i = 0; i < d; i++)
            w->val[own + i] +=
                w->P[a * d * d + i * d + c] + w->Q[a * d * d + i * d + c] * eps * w->w_diag[k];
        for (int e = cp->colptr[k]; e < cp->colptr[k + 1]; e++) {
            int b = cp->row[e] / d, ci = cp->row[e] % d, base = w->wmap[e] - ci;
            for (int i = 0; i < d; i++)
                w->val[base + i] += w->Q[b * d * d + i * d + ci] * cp->val[e];
        }
    }
}

/* dr = -J^-1 F; 0, or 1 when the factorization fails or is singular */
static int newton_direction(const contact_problem *cp, newton_work *w, double eps)
{
    jacobian_values(cp, w, eps);
    double control[UMFPACK_CONTROL], info[UMFPACK_INFO];
    umfpack_di_defaults(control);
    if (!w->symbolic && umfpack_di_symbolic(cp->m, cp->m, w->colptr, w->row, w->val, &w->symbolic,
                                            control, info) != UMFPACK_OK) {
        w->symbolic = NULL;
        return 1;
    }
    void *numeric = NULL;
    int s = umfpack_di_numeric(w->colptr, w->row, w->val, w->symbolic, &numeric, control, info);
    if (s != UMFPACK_OK) {
        if (numeric)
            umfpack_di_free_numeric(&numeric);
        return 1;
    }
    for (int k = 0; k < cp->m; k++)
        w->Ft[k] = -w->F[k];
    s = umfpack_di_solve(UMFPACK_A, w->colptr, w->row, w->val, w->dr, w->Ft, numeric, control,
                         info);
    umfpack_di_free_numeric(&numeric);
    if (s != UMFPACK_OK)
        return 1;
    for (int k = 0; k < cp->m; k++)
        if (!isfinite(w->dr[k]))
            return 1;
    return 0;
}

static status setup(const contact_problem *cp, newton_work *w, diag *err)
{
    int m = cp->m, d = cp->d, nc = cp->nc;
    memset(w, 0, sizeof *w);
    w->m = m;
    w->nc = nc;
    w->d = d;
    size_t md = (size_t)m + 1, blk = (size_t)nc * (size_t)(d * d) + 1;
    w->rho = malloc(((size_t)nc + 1) * sizeof *w->rho);
    w->w_diag = malloc(md * sizeof *w->w_diag);
    w->P = malloc(blk * sizeof *w->P);
    w->Q = malloc(blk * sizeof *w->Q);
    w->u = malloc(md * sizeof *w->u);
    w->F = malloc(md * sizeof *w->F);
    w->dr = malloc(md * sizeof *w->dr);
    w->rt = malloc(md * sizeof *w->rt);
    w->ut = malloc(md * sizeof *w->ut);
    w->Ft = malloc(md * sizeof *w->Ft);
    w->r_before = malloc(md * sizeof *w->r_before);
    if (!w->rho || !w->w_diag || !w->P || !w->Q || !w->u || !w->F || !w->dr || !w->rt || !w->ut ||
        !w->Ft || !w->r_before || !build_pattern(cp, w))
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory for Newton's method on %d contacts",
                        nc);
    status s = contact_problem_diagonal(cp, w->w_diag, err);
    if (s != CDLAB_OK)
        return s;
    for (int a = 0; a < nc; a++)
        w->rho[a] = 1.0 / w->w_diag[a * d];
    return CDLAB_OK;
}

/* One proximal Newton iteration from r: the Newton step of F_eps, Alart and Curnier's function
 * with u + eps D (r' - r) in place of u (equal to F at r, its Jacobian P + Q (W + eps D)
 * nonsingular where W is not), damped by an Armijo line search on |F_eps|^2/2, which a descent
 * direction of F_eps always passes for a step small enough; r then moves, and the next
 * iteration's proximal centre with it (the inexact proximal point method with one Newton step
 * per centre). eps is let down by 10 after a full step that lowered |F| and raised by 10 after
 * one that did not (within [1e-10, 1]). 1 when the factorization fails or no step passes. psi:
 * |F(r)|^2/2 in and out. */
static int newton_iteration(const contact_problem *cp, newton_work *w, double *r, double *psi,
                            double *eps, int *factorizations)
{
    (*factorizations)++;
    if (newton_direction(cp, w, *eps))
        return 1;
    for (double alpha = 1.0; alpha >= 1.0 / 65536.0; alpha *= 0.5) {
        for (int k = 0; k < cp->m; k++)
            w->rt[k] = r[k] + alpha * w->dr[k];
        double p = af_function(cp, w, w->rt, w->ut, w->Ft, NULL, NULL, r, *eps);
        if (p <= (1.0 - 2e-4 * alpha) * *psi) {
            double p_true = af_function(cp, w, w->rt, w->ut, w->Ft, NULL, NULL, NULL, 0.0);
            *eps = alpha == 1.0 && p_true < *psi ? fmax(*eps * 0.1, 1e-10) : fmin(*eps * 10.0, 1.0);
            memcpy(r, w->rt, (size_t)cp->m * sizeof *r);
            *psi = p_true;
            return 0;
        }
    }
    *eps = fmin(*eps * 10.0, 1.0);
    return 1;
}

status contact_problem_newton(const contact_problem *cp, double *r, const cp_sweep_options *o,
                              cp_sweep_report report, void *ctx, cp_sweep_result *res, diag *err)
{
    newton_work w;
    status st = setup(cp, &w, err);
    memset(res, 0, sizeof *res);
    double t0 = cp_seconds();
    if (st == CDLAB_OK && o->presweeps > 0) {
        cp_sweep_options so = *o;
        so.method = CP_SWEEPS;
        so.max_sweeps = o->presweeps;
        so.every = 0;
        cp_sweep_result sr;
        st = contact_problem_sweeps(cp, r, &so, NULL, NULL, &sr, err);
        res->sweeps = sr.sweeps;
    }
    double eps = 1e-4; /* the proximal weight to start with */
    while (st == CDLAB_OK) {
        double psi = af_function(cp, &w, r, w.u, w.F, w.P, w.Q, NULL, 0.0);
        res->residual = natural_map_given_u(cp->nc, cp->d, cp->colptr, cp->row, cp->val, cp->mu, r,
                                            w.u, NM_RHO_ONE, NULL);
        if (!isfinite(res->residual)) {
            st = diag_set(err, CDLAB_ERR_NUMERIC, "Newton iteration %d: the residual is %g",
                          res->sweeps, res->residual);
            break;
        }
        if (report && (res->sweeps == 0 || (o->every > 0 && res->sweeps % o->every == 0)))
            report(ctx, res->sweeps, res->residual, cp_seconds() - t0);
        if (res->residual <= o->tolerance || res->change_met || res->sweeps >= o->max_sweeps ||
            (o->max_seconds > 0.0 && cp_seconds() - t0 > o->max_seconds))
            break;
        res->sweeps++;
        if (o->change != CP_CHANGE_NONE)
            memcpy(w.r_before, r, (size_t)cp->m * sizeof *r);
        if (newton_iteration(cp, &w, r, &psi, &eps, &res->factorizations)) {
            /* no Newton step helps here: one sweep of the shock law instead */
            cp_sweep_options so = *o;
            so.max_sweeps = 1;
            so.every = 0;
            so.seed = o->seed + (uint64_t)res->sweeps;
            cp_sweep_result sr;
            st = contact_problem_sweeps(cp, r, &so, NULL, NULL, &sr, err);
            res->fallbacks++;
        }
        if (o->change != CP_CHANGE_NONE)
            res->change_met = cp_change_met(cp, o, w.r_before, r, &res->change);
    }
    res->seconds = cp_seconds() - t0;
    res->converged = st == CDLAB_OK && (res->residual <= o->tolerance || res->change_met);
    if (report && st == CDLAB_OK && (o->every <= 0 || res->sweeps % o->every != 0))
        report(ctx, res->sweeps, res->residual, res->seconds);
    work_free(&w);
    return st;
}

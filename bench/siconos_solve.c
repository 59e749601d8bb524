/* Siconos's solvers on an FCLIB local problem, the peer of `cdlab solve` (issue 63; the solvers
 * study and make bench, tools/siconos_peer.py). A benchmark driver, not part of cdlab: Debian's
 * libsiconos-numerics-dev, built without its own FCLIB reader, so the file is read here with
 * libfclib and handed to Siconos as its sparse block matrix.
 *
 *   siconos_solve IN.fclib.h5 SOLVER TOLERANCE MAX_ITERATIONS OUT.fclib.h5 RELAXATION START
 *
 * SOLVER: nsgs (fc3d's NSGS, its local Alart-Curnier Newton; RELAXATION in (0, 2) its
 * over-relaxation, 1 without), prox, admm, nsn-ac (fc3d), or fc2d-nsgs, fc2d-lemke (2D problems
 * only, fc2d's own NSGS on a dense W and its lexicographic Lemke pivoting on the LCP made of the
 * problem: MAX_ITERATIONS its pivots, TOLERANCE unused by it). START: zero (impulses and
 * velocities) or stored (the file's /solution/r as the first guess: for cdlab's exports, the
 * engine's impulses of that step). A 2D problem given to an fc3d solver gets a decoupled second
 * tangent (its row and column zero but the diagonal, W_tt of the first, q = 0), whose impulse stays
 * zero.
 *
 * Prints one line: `solver S info I iterations N error E seconds T` (Siconos's own error, its
 * stopping test against TOLERANCE; T the driver call's wall time, set-up excluded), and writes
 * the problem with Siconos's impulses and velocities as its solution to OUT, so that
 * `cdlab solve OUT` measures the residual with cdlab's yardstick, alike for both codes.
 * Exit status: 0 the driver ran (reached or not: see info), 2 refused or failed. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <fclib.h>
#include <siconos/numerics/FrictionContactProblem.h>
#include <siconos/numerics/Friction_cst.h>
#include <siconos/numerics/NonSmoothDrivers.h>
#include <siconos/numerics/NumericsMatrix.h>
#include <siconos/numerics/SolverOptions.h>
#include <siconos/numerics/SparseBlockMatrix.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int fail(const char *what)
{
    fprintf(stderr, "siconos_solve: %s\n", what);
    return 2;
}

/* Calls fn(row, col, value) for every stored entry of an FCLIB matrix (compressed columns,
 * compressed rows or triplets). */
typedef void (*entry_fn)(void *ctx, int row, int col, double value);
static void for_entries(const struct fclib_matrix *w, entry_fn fn, void *ctx)
{
    if (w->nz >= 0) {
        for (int k = 0; k < w->nz; k++)
            fn(ctx, w->p[k], w->i[k], w->x[k]);
        return;
    }
    int outer = w->nz == -1 ? w->n : w->m;
    for (int o = 0; o < outer; o++)
        for (int k = w->p[o]; k < w->p[o + 1]; k++) {
            if (w->nz == -1)
                fn(ctx, w->i[k], o, w->x[k]);
            else
                fn(ctx, o, w->i[k], w->x[k]);
        }
}

typedef struct {
    NumericsMatrix *m;
    int dim_in, dim_out; /* the file's space dimension and the solver's */
    double *diag_t;      /* 2D into 3D: W_tt of each contact */
} fill_ctx;

static int map_index(const fill_ctx *c, int k)
{
    return c->dim_in == c->dim_out ? k : (k / 2) * 3 + k % 2;
}

static void fill_entry(void *vctx, int row, int col, double value)
{
    fill_ctx *c = vctx;
    NM_zentry(c->m, map_index(c, row), map_index(c, col), value, 0.0);
    if (c->diag_t && row == col && row % 2 == 1)
        c->diag_t[row / 2] = value;
}

/* The dense W of fc2d's NSGS. */
static void dense_entry(void *vctx, int row, int col, double value)
{
    fill_ctx *c = vctx;
    c->m->matrix0[row + (size_t)col * c->m->size0] = value;
}

static int solver_id(const char *name, int dim, int *fc2d)
{
    *fc2d = 0;
    if (strcmp(name, "nsgs") == 0)
        return SICONOS_FRICTION_3D_NSGS;
    if (strcmp(name, "prox") == 0)
        return SICONOS_FRICTION_3D_PROX;
    if (strcmp(name, "admm") == 0)
        return SICONOS_FRICTION_3D_ADMM;
    if (strcmp(name, "nsn-ac") == 0)
        return SICONOS_FRICTION_3D_NSN_AC;
    if (strcmp(name, "fc2d-nsgs") == 0 && dim == 2) {
        *fc2d = 1;
        return SICONOS_FRICTION_2D_NSGS;
    }
    if (strcmp(name, "fc2d-lemke") == 0 && dim == 2) {
        *fc2d = 1;
        return SICONOS_FRICTION_2D_LEMKE;
    }
    return -1;
}

/* The problem as Siconos takes it: a sparse block matrix of 3x3 blocks (fc3d) or a dense one
 * (fc2d), q and mu copied (2D into 3D: the decoupled tangent added). */
static FrictionContactProblem *siconos_problem(const struct fclib_local *p, int fc2d)
{
    int nc = p->W->m / p->spacedim, dim = fc2d ? 2 : 3, n = nc * dim;
    double *q = calloc((size_t)n, sizeof *q), *mu = malloc((size_t)nc * sizeof *mu);
    double *diag_t = p->spacedim == 2 && !fc2d ? calloc((size_t)nc, sizeof *diag_t) : NULL;
    if (!q || !mu || (p->spacedim == 2 && !fc2d && !diag_t))
        return NULL;
    fill_ctx c = {NULL, p->spacedim, dim, diag_t};
    for (int k = 0; k < p->W->m; k++)
        q[map_index(&c, k)] = p->q[k];
    memcpy(mu, p->mu, (size_t)nc * sizeof *mu);
    NumericsMatrix *m;
    if (fc2d) {
        m = NM_create(NM_DENSE, n, n);
        memset(m->matrix0, 0, (size_t)n * n * sizeof(double));
        c.m = m;
        for_entries(p->W, dense_entry, &c);
    } else {
        NumericsMatrix *t = NM_create(NM_SPARSE, n, n);
        NM_triplet_alloc(t, p->W->nz >= 0 ? p->W->nz : p->W->nzmax + nc);
        c.m = t;
        for_entries(p->W, fill_entry, &c);
        if (diag_t)
            for (int a = 0; a < nc; a++)
                NM_zentry(t, 3 * a + 2, 3 * a + 2, diag_t[a] > 0 ? diag_t[a] : 1.0, 0.0);
        SparseBlockStructuredMatrix *sbm = SBM_new();
        if (SBM_from_csparse(3, NM_csc(t), sbm) != 0)
            return NULL;
        m = NM_new_SBM(n, n, sbm);
        NM_clear(t);
        free(t);
    }
    free(diag_t);
    return frictionContactProblem_new_with_data(dim, nc, m, q, mu);
}

int main(int argc, char **argv)
{
    if (argc != 8)
        return fail("usage: siconos_solve IN.fclib.h5 SOLVER TOLERANCE MAX_ITERATIONS "
                    "OUT.fclib.h5 RELAXATION zero|stored");
    char *end;
    double tol = strtod(argv[3], &end);
    if (*end || !(tol > 0))
        return fail("TOLERANCE must be a number > 0");
    long max_iter = strtol(argv[4], &end, 10);
    if (*end || max_iter < 1)
        return fail("MAX_ITERATIONS must be an integer >= 1");
    double omega = strtod(argv[6], &end);
    if (*end || !(omega > 0 && omega < 2))
        return fail("RELAXATION must be in (0, 2)");
    int stored = strcmp(argv[7], "stored") == 0;
    if (!stored && strcmp(argv[7], "zero") != 0)
        return fail("START must be zero or stored");
    struct fclib_local *p = fclib_read_local(argv[1]);
    if (!p || !p->W || !p->q || !p->mu || (p->spacedim != 2 && p->spacedim != 3) ||
        p->W->m != p->W->n || p->W->m % p->spacedim)
        return fail("cannot read a local FCLIB problem (W, q, mu; space dimension 2 or 3)");
    int fc2d, id = solver_id(argv[2], p->spacedim, &fc2d);
    if (id < 0)
        return fail("SOLVER: nsgs, prox, admm, nsn-ac, or fc2d-nsgs, fc2d-lemke (2D problems)");
    if (omega != 1.0 && id != SICONOS_FRICTION_3D_NSGS)
        return fail("RELAXATION is NSGS's (fc3d)");
    FrictionContactProblem *fc = siconos_problem(p, fc2d);
    if (!fc)
        return fail("out of memory building the problem");
    int nc = fc->numberOfContacts, n = nc * fc->dimension;
    double *r = calloc((size_t)n, sizeof *r), *u = calloc((size_t)n, sizeof *u);
    SolverOptions *opt = solver_options_create(id);
    if (!r || !u || !opt)
        return fail("out of memory");
    fill_ctx c = {NULL, p->spacedim, fc->dimension, NULL};
    int m = p->W->m;
    if (stored) {
        struct fclib_solution *s = fclib_read_solution(argv[1]);
        if (!s || !s->r)
            return fail("START stored: the file has no /solution/r");
        for (int k = 0; k < m; k++)
            r[map_index(&c, k)] = s->r[k];
        fclib_delete_solutions(s, 1);
    }
    opt->dparam[SICONOS_DPARAM_TOL] = tol;
    opt->iparam[SICONOS_IPARAM_MAX_ITER] = (int)max_iter;
    if (omega != 1.0) {
        opt->iparam[SICONOS_FRICTION_3D_NSGS_RELAXATION] = SICONOS_FRICTION_3D_NSGS_RELAXATION_TRUE;
        opt->dparam[SICONOS_FRICTION_3D_NSGS_RELAXATION_VALUE] = omega;
    }
    double t0 = now();
    int info = fc2d ? fc2d_driver(fc, r, u, opt) : fc3d_driver(fc, r, u, opt);
    double seconds = now() - t0;
    printf("solver %s info %d iterations %d error %.6e seconds %.6f\n", argv[2], info,
           opt->iparam[SICONOS_IPARAM_ITER_DONE], opt->dparam[SICONOS_DPARAM_RESIDU], seconds);

    /* The solution in the file's own layout (2D: the decoupled tangent dropped). */
    double *rr = malloc((size_t)m * sizeof *rr), *uu = malloc((size_t)m * sizeof *uu);
    if (!rr || !uu)
        return fail("out of memory");
    for (int k = 0; k < m; k++) {
        rr[k] = r[map_index(&c, k)];
        uu[k] = u[map_index(&c, k)];
    }
    struct fclib_solution sol = {NULL, uu, rr, NULL};
    remove(argv[5]);
    if (!fclib_write_local(p, argv[5]) || !fclib_write_solution(&sol, argv[5]))
        return fail("cannot write OUT.fclib.h5");
    return 0;
}

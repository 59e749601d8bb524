/* Reading an FCLIB local problem (cdlab's exports and other codes' files) with cdlab's own
 * HDF5 reader: libfclib's reader ends the process at any HDF5 error (cd_fclib.c), and a
 * damaged or foreign file must be refused in a message instead. The layout is FCLIB's:
 * /fclib_local/W/{m, n, nz, nzmax, p, i, x} (nz = -1: compressed columns, p the column starts;
 * nz >= 0: nz triplets, p their columns), /fclib_local/spacedim, /fclib_local/vectors/{q, mu},
 * and the optional /solution/r. */
#include "nscd/cd_contact_problem.h"

#include "h5io.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static status read_int(h5in *h, const char *path, const char *file, long long *v, diag *err)
{
    long long n;
    status s = h5in_size(h, path, &n, err);
    if (s != CDLAB_OK)
        return s;
    if (n != 1)
        return diag_set(err, CDLAB_ERR_ARG, "%s: %s holds %lld numbers, not one", file, path, n);
    int x;
    if ((s = h5in_read(h, path, H5IO_INT32, &x, 1, err)) != CDLAB_OK)
        return s;
    *v = x;
    return CDLAB_OK;
}

/* A dataset of exactly count elements into a new array *out. */
static status read_array(h5in *h, const char *path, const char *file, h5type type, long count,
                         void **out, diag *err)
{
    long long n;
    status s = h5in_size(h, path, &n, err);
    if (s != CDLAB_OK)
        return s;
    if (n != count)
        return diag_set(err, CDLAB_ERR_ARG, "%s: %s holds %lld numbers where %ld are expected",
                        file, path, n, count);
    size_t size = type == H5IO_DOUBLE ? sizeof(double) : sizeof(int);
    if (!(*out = malloc((size_t)(count + 1) * size)))
        return diag_set(err, CDLAB_ERR_NOMEM, "%s: out of memory for %s", file, path);
    return count > 0 ? h5in_read(h, path, type, *out, count, err) : CDLAB_OK;
}

/* Triplets (i, p, x) into compressed columns; a duplicate stays an entry of its own (the
 * products add them). */
static status triplets_to_columns(contact_problem *cp, int nz, const char *file, diag *err)
{
    int m = cp->m;
    int *colptr = calloc((size_t)m + 1, sizeof *colptr), *row = malloc((size_t)nz * sizeof *row);
    double *val = malloc((size_t)nz * sizeof *val);
    if (!colptr || !row || !val) {
        free(colptr);
        free(row);
        free(val);
        return diag_set(err, CDLAB_ERR_NOMEM, "%s: out of memory for W", file);
    }
    for (int e = 0; e < nz; e++)
        colptr[cp->colptr[e] + 1]++;
    for (int k = 0; k < m; k++)
        colptr[k + 1] += colptr[k];
    int *fill = malloc((size_t)m * sizeof *fill);
    if (!fill) {
        free(colptr);
        free(row);
        free(val);
        return diag_set(err, CDLAB_ERR_NOMEM, "%s: out of memory for W", file);
    }
    memcpy(fill, colptr, (size_t)m * sizeof *fill);
    for (int e = 0; e < nz; e++) {
        int at = fill[cp->colptr[e]]++;
        row[at] = cp->row[e];
        val[at] = cp->val[e];
    }
    free(fill);
    free(cp->colptr);
    free(cp->row);
    free(cp->val);
    cp->colptr = colptr;
    cp->row = row;
    cp->val = val;
    return CDLAB_OK;
}

static status check_problem(const contact_problem *cp, const char *file, int triplets, diag *err)
{
    for (int e = 0; e < cp->nnz; e++) {
        if (cp->row[e] < 0 || cp->row[e] >= cp->m ||
            (triplets && (cp->colptr[e] < 0 || cp->colptr[e] >= cp->m)))
            return diag_set(err, CDLAB_ERR_ARG, "%s: W's entry %d lies outside the %d x %d matrix",
                            file, e, cp->m, cp->m);
        if (!isfinite(cp->val[e]))
            return diag_set(err, CDLAB_ERR_ARG, "%s: W's entry %d is %g", file, e, cp->val[e]);
    }
    if (!triplets) {
        if (cp->colptr[0] != 0 || cp->colptr[cp->m] != cp->nnz)
            return diag_set(err, CDLAB_ERR_ARG,
                            "%s: W's column starts run from %d to %d, not from 0 to its %d entries",
                            file, cp->colptr[0], cp->colptr[cp->m], cp->nnz);
        for (int k = 0; k < cp->m; k++)
            if (cp->colptr[k + 1] < cp->colptr[k])
                return diag_set(err, CDLAB_ERR_ARG, "%s: W's column %d ends before it starts", file,
                                k);
    }
    for (int k = 0; k < cp->m; k++)
        if (!isfinite(cp->q[k]))
            return diag_set(err, CDLAB_ERR_ARG, "%s: q[%d] is %g", file, k, cp->q[k]);
    for (int a = 0; a < cp->nc; a++)
        if (!(cp->mu[a] >= 0.0) || !isfinite(cp->mu[a]))
            return diag_set(err, CDLAB_ERR_ARG, "%s: contact %d's friction coefficient is %g", file,
                            a, cp->mu[a]);
    return CDLAB_OK;
}

status contact_problem_read_fclib(const char *path, contact_problem *cp, int *has_solution,
                                  diag *err)
{
    memset(cp, 0, sizeof *cp);
    *has_solution = 0;
    h5in *h;
    status s = h5in_open(&h, path, err);
    if (s != CDLAB_OK)
        return s;
    if (!h5in_exists(h, "/fclib_local") || !h5in_exists(h, "/fclib_local/W")) {
        h5in_close(h);
        return diag_set(err, CDLAB_ERR_ARG,
                        "%s: no /fclib_local/W: not an FCLIB local problem (a global one, "
                        "/fclib_global, is not read)",
                        path);
    }
    long long m, n, nz, nzmax, d;
    if ((s = read_int(h, "/fclib_local/W/m", path, &m, err)) ||
        (s = read_int(h, "/fclib_local/W/n", path, &n, err)) ||
        (s = read_int(h, "/fclib_local/W/nz", path, &nz, err)) ||
        (s = read_int(h, "/fclib_local/W/nzmax", path, &nzmax, err)) ||
        (s = read_int(h, "/fclib_local/spacedim", path, &d, err))) {
        h5in_close(h);
        return s;
    }
    if (d != 2 && d != 3)
        s = diag_set(err, CDLAB_ERR_ARG, "%s: spacedim is %lld: only 2 and 3 are contact problems",
                     path, d);
    else if (m != n || m <= 0 || m % d != 0 || m > INT_MAX / 4)
        s = diag_set(err, CDLAB_ERR_ARG,
                     "%s: W is %lld x %lld: a local problem's W is square, of a multiple of "
                     "spacedim = %lld rows",
                     path, m, n, d);
    else if (h5in_exists(h, "/fclib_local/V") || h5in_exists(h, "/fclib_local/R"))
        s = diag_set(err, CDLAB_ERR_ARG,
                     "%s: the problem has equality constraints (V, R): cdlab's solvers take the "
                     "frictional contact problem without them",
                     path);
    int triplets = nz >= 0;
    long entries = triplets ? (long)nz : 0;
    if (s == CDLAB_OK && !triplets) {
        long long np;
        if ((s = h5in_size(h, "/fclib_local/W/x", &np, err)) == CDLAB_OK)
            entries = (long)np;
    }
    if (s == CDLAB_OK && (entries < 0 || entries > nzmax || entries > INT_MAX))
        s = diag_set(err, CDLAB_ERR_ARG, "%s: W has %ld entries for room of %lld", path, entries,
                     nzmax);
    cp->d = (int)d;
    cp->m = (int)m;
    cp->nc = (int)(m / d);
    cp->nnz = (int)entries;
    void *p = NULL;
    if (s == CDLAB_OK && (s = read_array(h, "/fclib_local/W/p", path, H5IO_INT32,
                                         triplets ? entries : m + 1, &p, err)) == CDLAB_OK)
        cp->colptr = p;
    if (s == CDLAB_OK &&
        (s = read_array(h, "/fclib_local/W/i", path, H5IO_INT32, entries, &p, err)) == CDLAB_OK)
        cp->row = p;
    if (s == CDLAB_OK &&
        (s = read_array(h, "/fclib_local/W/x", path, H5IO_DOUBLE, entries, &p, err)) == CDLAB_OK)
        cp->val = p;
    if (s == CDLAB_OK &&
        (s = read_array(h, "/fclib_local/vectors/q", path, H5IO_DOUBLE, m, &p, err)) == CDLAB_OK)
        cp->q = p;
    if (s == CDLAB_OK && (s = read_array(h, "/fclib_local/vectors/mu", path, H5IO_DOUBLE, cp->nc,
                                         &p, err)) == CDLAB_OK)
        cp->mu = p;
    if (s == CDLAB_OK && (s = check_problem(cp, path, triplets, err)) == CDLAB_OK && triplets)
        s = triplets_to_columns(cp, cp->nnz, path, err);
    if (s == CDLAB_OK && h5in_exists(h, "/solution") && h5in_exists(h, "/solution/r")) {
        if ((s = read_array(h, "/solution/r", path, H5IO_DOUBLE, m, &p, err)) == CDLAB_OK) {
            cp->r = p;
            *has_solution = 1;
        }
    }
    h5in_close(h);
    if (s != CDLAB_OK)
        contact_problem_free(cp);
    return s;
}

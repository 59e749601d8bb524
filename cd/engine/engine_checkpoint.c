#include "engine/engine_checkpoint.h"
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

status engine_checkpoint_write_records(h5out *h, const char *g, const engine_records *r,
                                       const void *records, const pcg32 *rng, diag *err)
{
    char path[128];
    long words = r->bytes / 8, dims[2] = {r->n, words}, two = 2;
    int64_t st[2] = {(int64_t)rng->state, (int64_t)rng->inc};
    status s;
    if ((s = h5out_attr_int(h, g, "contacts", r->n, err)) ||
        (s = h5out_attr_string(h, g, "contact_record", r->kind, err)) ||
        (s = h5out_attr_int(h, g, "contact_bytes", r->bytes, err)) ||
        (s = h5out_attr_int(h, g, "dem_rebuilds", r->rebuilds, err)))
        return s;
    snprintf(path, sizeof path, "%s/rng", g);
    if ((s = h5out_array(h, path, H5IO_INT64, 1, &two, st, err)))
        return s;
    snprintf(path, sizeof path, "%s/contacts", g);
    return h5out_array(h, path, H5IO_INT64, 2, dims, records, err);
}

double engine_checkpoint_records_bytes(const engine_records *r)
{
    return (double)r->n * (double)r->bytes + 2.0 * sizeof(int64_t);
}

status engine_checkpoint_count_records(h5in *h, const char *g, const char *file, engine_records *r,
                                       diag *err)
{
    long long nc, cb, rb, held;
    char path[400];
    status s;
    if ((s = h5in_attr_int(h, g, "contacts", &nc, err)) ||
        (s = h5in_attr_int(h, g, "contact_bytes", &cb, err)) ||
        (s = h5in_attr_int(h, g, "dem_rebuilds", &rb, err)))
        return s;
    if (rb < 0 || nc < 0)
        return diag_set(err, CDLAB_ERR_IO,
                        "%s: corrupt checkpoint %s (%lld contacts, %lld rebuilds)", file, g, nc,
                        rb);
    if (cb != r->bytes || nc > INT32_MAX / 2)
        return diag_set(err, CDLAB_ERR_IO,
                        "%s: checkpoint of %lld %lld-byte contact records does not match this "
                        "build (%ld-byte %s records): restart with the build that wrote it",
                        file, nc, cb, r->bytes, r->kind);
    snprintf(path, sizeof path, "%s/contacts", g);
    if ((s = h5in_size(h, path, &held, err)))
        return s;
    if (held != nc * (r->bytes / 8))
        return diag_set(err, CDLAB_ERR_IO,
                        "%s: corrupt checkpoint %s: %lld contacts announced, %lld words stored",
                        file, g, nc, held);
    r->n = (long)nc;
    r->rebuilds = (long)rb;
    return CDLAB_OK;
}

status engine_checkpoint_read_records(h5in *h, const char *g, const char *file,
                                      const engine_records *r, void *records, pcg32 *rng, diag *err)
{
    char path[400];
    int64_t st[2];
    status s;
    snprintf(path, sizeof path, "%s/rng", g);
    if ((s = h5in_read(h, path, H5IO_INT64, st, 2, err)))
        return s;
    snprintf(path, sizeof path, "%s/contacts", g);
    if ((s = h5in_read(h, path, H5IO_INT64, records, r->n * (r->bytes / 8), err)))
        return s;
    rng->state = (uint64_t)st[0];
    rng->inc = (uint64_t)st[1];
    /* PCG32 needs an odd increment: with an even one (a zeroed state, say) the stream can be
     * constant and the sweep's bounded draws would never end */
    if (!(rng->inc & 1u))
        return diag_set(err, CDLAB_ERR_IO,
                        "%s: corrupt checkpoint %s: the random stream's increment is even", file,
                        g);
    return CDLAB_OK;
}

status engine_checkpoint_gap(h5in *h, const char *g, const char *attr, const char *file,
                             double dflt, double *gap, diag *err)
{
    if (h5in_has_attr(h, g, attr)) {
        status s = h5in_attr_double(h, g, attr, gap, err);
        if (s == CDLAB_OK && !(*gap >= 0.0 && isfinite(*gap)))
            s = diag_set(err, CDLAB_ERR_IO, "%s: corrupt checkpoint (%s)", file, attr);
        return s;
    }
    char *v = NULL;
    double d;
    *gap = dflt;
    if (h5in_exists(h, "/parameters") && h5in_has_attr(h, "/parameters", "contact.detect_gap") &&
        h5in_attr_str(h, "/parameters", "contact.detect_gap", &v, &(diag){{0}}) == CDLAB_OK &&
        config_parse_number(v, &d) && d >= 0.0 && isfinite(d))
        *gap = d;
    free(v);
    return CDLAB_OK;
}

int engine_all_finite(const double *v, long n)
{
    for (long k = 0; k < n; k++)
        if (!isfinite(v[k]))
            return 0;
    return 1;
}

int engine_all_bounded(const double *v, long n, double bound)
{
    for (long k = 0; k < n; k++)
        if (!(fabs(v[k]) <= bound))
            return 0;
    return 1;
}

/* HDF5 reading (common/h5io.h): checkpoints, particle sources, cdlab info; every attribute and
 * dataset checked for its shape and type before it is read, every whole array for its stored
 * checksum; and the closed file read back against the writer's ledger. */
#define _GNU_SOURCE
#include "h5io_hdf5.h"

#include "config.h"
#include "inputfile.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the closed file read back (h5ledger.h) ---- */

/* The most read at once when a dataset is checked: its rows in slabs of this many bytes (a
 * run's peak memory holds one: 16 MB added a quarter to the DEM chute's). */
#define VERIFY_SLAB_BYTES ((size_t)1 << 20)

/* The rows read at once from a dataset of `rows` rows of row_bytes each: a slab of at most
 * VERIFY_SLAB_BYTES, and no more rows than it has (at least one). */
static size_t slab_rows(size_t row_bytes, hsize_t rows)
{
    size_t most =
        row_bytes > 0 && row_bytes < VERIFY_SLAB_BYTES ? VERIFY_SLAB_BYTES / row_bytes : 1;
    return rows < 1 ? 1 : rows < (hsize_t)most ? (size_t)rows : most;
}

/* Rows [first, first + n) of dataset d (of rank rank, row_bytes each, file type ft), their
 * hash into *hash; 0 where they cannot be read. */
static int hash_dataset_rows(hid_t d, hid_t ft, int rank, const hsize_t *dims, size_t row_bytes,
                             long long first, long long n, char *buf, size_t buf_rows,
                             uint64_t *hash)
{
    hid_t fs = H5Dget_space(d);
    int ok = fs >= 0;
    *hash = 0;
    for (long long at = first; ok && at < first + n;) {
        long long k = first + n - at < (long long)buf_rows ? first + n - at : (long long)buf_rows;
        hsize_t start[3] = {(hsize_t)at, 0, 0}, count[3] = {(hsize_t)k, 0, 0};
        for (int j = 1; j < rank; j++)
            count[j] = dims[j];
        hid_t ms = H5Screate_simple(rank, count, NULL);
        ok = ms >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
             H5Dread(d, ft, ms, fs, H5P_DEFAULT, buf) >= 0;
        closed(ms);
        if (ok)
            *hash += h5ledger_hash_rows(buf, row_bytes, at, k);
        at += k;
    }
    closed(fs);
    return ok;
}

/* A dataset entry against the file: its shape, its element size, its rows' hash (a series:
 * segment by segment, rows_ok the verified rows from its start). */
static void verify_dataset(hid_t f, h5ledger_entry *e, char **buf, size_t *cap)
{
    e->ok = 0;
    e->rows_ok = 0;
    hid_t d = H5Dopen2(f, e->obj, H5P_DEFAULT);
    hid_t sp = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
    hid_t ft = d >= 0 ? H5Dget_type(d) : H5I_INVALID_HID;
    hsize_t dims[3] = {0, 1, 1};
    int rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    int ok = rank >= 1 && rank <= 3 && H5Sget_simple_extent_dims(sp, dims, NULL) == rank &&
             ft >= 0 && H5Tget_size(ft) == type_size((h5type)e->type);
    size_t row_bytes = ok ? H5Tget_size(ft) : 0;
    for (int j = 1; ok && j < rank; j++)
        row_bytes *= (size_t)dims[j];
    ok = ok && row_bytes == e->row_bytes && (long long)dims[0] >= e->rows;
    size_t rows = slab_rows(row_bytes, dims[0]);
    if (ok && *cap < rows * row_bytes) {
        char *m = realloc(*buf, rows * row_bytes);
        ok = m != NULL;
        if (m)
            *buf = m, *cap = rows * row_bytes;
    }
    uint64_t h;
    if (ok && e->series) {
        /* segment by segment, in row order (the flushes'), up to the first that differs */
        for (int k = 0; k < e->nseg; k++) {
            const h5ledger_segment *g = &e->seg[k];
            if (g->first != e->rows_ok ||
                !hash_dataset_rows(d, ft, rank, dims, row_bytes, g->first, g->n, *buf, rows, &h) ||
                h != g->hash)
                break;
            e->rows_ok += g->n;
        }
        e->ok = e->rows_ok == e->rows && (long long)dims[0] == e->rows;
    } else if (ok) {
        e->ok = (long long)dims[0] == e->rows &&
                hash_dataset_rows(d, ft, rank, dims, row_bytes, 0, e->rows, *buf, rows, &h) &&
                h == e->hash;
        e->rows_ok = e->ok ? e->rows : 0;
    }
    closed(ft);
    closed(sp);
    closed(d);
}

/* An attribute entry against the file: its value's bytes as stored. */
static void verify_attr(hid_t f, h5ledger_entry *e, char **buf, size_t *cap)
{
    e->ok = 0;
    hid_t a = H5Aopen_by_name(f, e->obj, e->name, H5P_DEFAULT, H5P_DEFAULT);
    hid_t t = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
    hid_t sp = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
    int ok = t >= 0 && sp >= 0 && H5Sget_simple_extent_npoints(sp) == 1 && !H5Tis_variable_str(t) &&
             H5Tget_size(t) == e->row_bytes;
    if (ok && *cap < e->row_bytes + 1) {
        char *m = realloc(*buf, e->row_bytes + 1);
        ok = m != NULL;
        if (m)
            *buf = m, *cap = e->row_bytes + 1;
    }
    if (ok && H5Aread(a, t, *buf) >= 0)
        e->ok = h5ledger_hash_rows(*buf, e->row_bytes, 0, 1) == e->hash;
    closed(sp);
    closed(t);
    closed(a);
}

/* Every entry of the ledger against the closed file at path: marked ok or not; an error
 * naming how many differ and the first where any does. */
status h5io_verify_file(const char *open_as, const char *path, h5ledger *l, int lost, diag *err)
{
    int n = h5ledger_count(l);
    for (int k = 0; k < n; k++)
        h5ledger_at(l, k)->ok = 0;
    if (!l || lost)
        return diag_set(err, CDLAB_ERR_NOMEM,
                        "%s: out of memory for the record of what was written to it: the file "
                        "cannot be proven whole after its close",
                        path);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0)
        H5Pset_file_locking(fapl, 0, 1);
    errno = 0;
    hid_t f = fapl >= 0 ? H5Fopen(open_as, H5F_ACC_RDONLY, fapl) : H5I_INVALID_HID;
    int e = errno;
    closed(fapl);
    if (f < 0)
        return diag_set(err, CDLAB_ERR_IO,
                        "%s: cannot be opened again after its close, to prove it holds what was "
                        "written%s%s",
                        path, e ? ": " : "", e ? strerror(e) : "");
    char *buf = NULL;
    size_t cap = 0;
    for (int k = 0; k < n; k++) {
        h5ledger_entry *x = h5ledger_at(l, k);
        if (x->kind == H5LEDGER_DATASET)
            verify_dataset(f, x, &buf, &cap);
        else
            verify_attr(f, x, &buf, &cap);
    }
    free(buf);
    H5Fclose(f);
    char first[600];
    int bad = h5ledger_failures(l, first, sizeof first);
    if (bad == 0)
        return CDLAB_OK;
    return diag_set(err, CDLAB_ERR_IO,
                    "%s: read back after its close, the file does not hold what was written to "
                    "it: %d of its %d datasets and attributes differ or are missing (the first: "
                    "%s); a write that failed without a report, or a device that lost it",
                    path, bad, n, first);
}

/* ---- reading ---- */

/* What a reader finds at an attribute or a dataset, checked before anything is read into a
 * buffer of the caller's: a hostile or damaged file may hold an array where one value
 * belongs, or a string where a number does (measured: an 8000-element `step` in a checkpoint
 * crashed a restart). */
typedef struct shape {
    H5T_class_t cls; /* H5T_NO_CLASS: unreadable */
    size_t size;     /* of one element as stored */
    int vlen_str;    /* a variable-length string */
    hssize_t count;  /* elements (1 for a scalar) */
} shape;

static shape shape_of(hid_t type, hid_t space)
{
    shape sh = {H5T_NO_CLASS, 0, 0, -1};
    if (type < 0 || space < 0)
        return sh;
    H5S_class_t sc = H5Sget_simple_extent_type(space);
    sh.count = sc == H5S_SCALAR ? 1 : sc == H5S_SIMPLE ? H5Sget_simple_extent_npoints(space) : 0;
    sh.cls = H5Tget_class(type);
    sh.size = H5Tget_size(type);
    sh.vlen_str = sh.cls == H5T_STRING && H5Tis_variable_str(type) > 0;
    return sh;
}

/* "a number", "an array of 8000 numbers", "a string", "an array of 3 strings", ... */
static const char *shape_text(shape sh, char *buf, size_t n)
{
    const char *what = sh.cls == H5T_INTEGER || sh.cls == H5T_FLOAT ? "number"
                       : sh.cls == H5T_STRING                       ? "string"
                                                                    : "value of another type";
    if (sh.count == 1)
        snprintf(buf, n, "a %s", what);
    else
        snprintf(buf, n, "an array of %lld %ss", (long long)sh.count, what);
    return buf;
}

/* A string attribute (fixed or variable length, one of them) into *value (malloc'ed):
 * CDLAB_OK; CDLAB_ERR_IO where it is missing or unreadable, CDLAB_ERR_ARG where it holds
 * something else (shape_text into what). */
static status read_attr_string(hid_t o, const char *name, char **value, char *what, size_t n)
{
    *value = NULL;
    if (what && n)
        what[0] = '\0';
    hid_t a = H5Aopen(o, name, H5P_DEFAULT);
    if (a < 0)
        return CDLAB_ERR_IO;
    hid_t t = H5Aget_type(a), sp = H5Aget_space(a);
    shape sh = shape_of(t, sp);
    status st = CDLAB_ERR_IO;
    if (sh.cls != H5T_STRING || sh.count != 1) {
        st = CDLAB_ERR_ARG;
        if (what)
            shape_text(sh, what, n);
    } else if (sh.vlen_str) {
        char *v = NULL;
        hid_t mt = H5Tcopy(H5T_C_S1);
        if (mt >= 0 && H5Tset_size(mt, H5T_VARIABLE) >= 0 && H5Aread(a, mt, &v) >= 0 && v) {
            *value = strdup(v);
            st = *value ? CDLAB_OK : CDLAB_ERR_NOMEM;
        }
        if (v)
            H5free_memory(v);
        closed(mt);
    } else if (sh.size < ((size_t)1 << 30)) {
        *value = calloc(sh.size + 1, 1);
        if (*value && H5Aread(a, t, *value) >= 0)
            st = CDLAB_OK;
        else {
            free(*value);
            *value = NULL;
        }
    }
    closed(sp);
    closed(t);
    closed(a);
    return st;
}

status h5in_read_attr_string(const char *path, const char *obj, const char *name, char **value,
                             diag *err)
{
    *value = NULL;
    h5in *h;
    status st = h5in_open(&h, path, err);
    if (st != CDLAB_OK)
        return st;
    st = h5in_attr_str(h, obj, name, value, err);
    h5in_close(h);
    return st;
}

/* The hash of a dataset's rows as stored (h5ledger.h), read in slabs; 0 where unreadable. */
static int stored_hash(hid_t d, uint64_t *hash)
{
    hid_t sp = H5Dget_space(d), ft = H5Dget_type(d);
    hsize_t dims[3] = {0, 1, 1};
    int rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
    int ok = rank >= 1 && rank <= 3 && ft >= 0 && H5Sget_simple_extent_dims(sp, dims, NULL) == rank;
    size_t row_bytes = ok ? H5Tget_size(ft) : 0;
    for (int j = 1; ok && j < rank; j++)
        row_bytes *= (size_t)dims[j];
    ok = ok && row_bytes > 0;
    size_t rows = slab_rows(row_bytes, dims[0]);
    char *buf = ok ? malloc(rows * row_bytes) : NULL;
    ok = ok && buf &&
         hash_dataset_rows(d, ft, rank, dims, row_bytes, 0, (long long)dims[0], buf, rows, hash);
    free(buf);
    closed(ft);
    closed(sp);
    return ok;
}

/* A dataset with a checksum attribute (H5IO_CHECKSUM_ATTR): 1 where its rows hash to it,
 * or where it has none (files of an older cdlab, other programs' files); 0 where they do not. */
static int checksum_holds(hid_t d)
{
    if (H5Aexists(d, H5IO_CHECKSUM_ATTR) <= 0)
        return 1;
    hid_t a = H5Aopen(d, H5IO_CHECKSUM_ATTR, H5P_DEFAULT);
    hid_t t = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID, sp = a >= 0 ? H5Aget_space(a) : -1;
    shape sh = shape_of(t, sp);
    int64_t want = 0;
    uint64_t got = 0;
    int ok = sh.cls == H5T_INTEGER && sh.count == 1 && H5Aread(a, H5T_NATIVE_INT64, &want) >= 0 &&
             stored_hash(d, &got) && got == (uint64_t)want;
    closed(sp);
    closed(t);
    closed(a);
    return ok;
}

status h5in_read_doubles(const char *path, const char *dset, double **data, long *n, diag *err)
{
    *data = NULL;
    *n = 0;
    h5in *h;
    long long count;
    status st = h5in_open(&h, path, err);
    if (st == CDLAB_OK && (st = h5in_size(h, dset, &count, err)) == CDLAB_OK) {
        *data = malloc((size_t)(count > 0 ? count : 1) * sizeof **data);
        st = !*data ? diag_set(err, CDLAB_ERR_NOMEM, "%s: out of memory reading %s", path, dset)
                    : h5in_read(h, dset, H5IO_DOUBLE, *data, (long)count, err);
        if (st == CDLAB_OK)
            *n = (long)count;
        else {
            free(*data);
            *data = NULL;
        }
    }
    h5in_close(h);
    return st;
}

typedef struct walk_ctx {
    FILE *out;
    hid_t file;
    int depth;
} walk_ctx;

static void print_string(FILE *out, const char *name, const char *v)
{
    if (!strchr(v, '\n')) {
        fprintf(out, "  @%s = %s\n", name, v);
        return;
    }
    fprintf(out, "  @%s:\n", name);
    for (const char *line = v, *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl) {
            fprintf(out, "    | %s\n", line);
            break;
        }
        fprintf(out, "    | %.*s\n", (int)(nl - line), line);
    }
}

/* The most values of one attribute cdlab info prints (a hostile file's array of 10^9 is not
 * read whole). */
#define DESCRIBE_MAX_VALUES 64

static herr_t print_attr(hid_t loc, const char *name, const H5A_info_t *info, void *op)
{
    (void)info;
    walk_ctx *w = op;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t t = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID;
    hid_t sp = a >= 0 ? H5Aget_space(a) : H5I_INVALID_HID;
    shape sh = shape_of(t, sp);
    char what[64];
    if (sh.cls == H5T_STRING && sh.count == 1) {
        char *v = NULL;
        if (read_attr_string(loc, name, &v, NULL, 0) == CDLAB_OK)
            print_string(w->out, name, v);
        else
            fprintf(w->out, "  @%s = (unreadable)\n", name);
        free(v);
    } else if ((sh.cls == H5T_FLOAT || sh.cls == H5T_INTEGER) && sh.count >= 1 &&
               sh.count <= DESCRIBE_MAX_VALUES) {
        /* every value, each double as the shortest text that reads back to it (%.10g cut
         * recorded figures such as /elasticity's to ten digits) */
        int is_float = sh.cls == H5T_FLOAT,
            is_unsigned = !is_float && H5Tget_sign(t) == H5T_SGN_NONE;
        double vd[DESCRIBE_MAX_VALUES];
        long long vi[DESCRIBE_MAX_VALUES];
        hid_t mt = is_float      ? H5T_NATIVE_DOUBLE
                   : is_unsigned ? H5T_NATIVE_ULLONG
                                 : H5T_NATIVE_LLONG;
        if (H5Aread(a, mt, is_float ? (void *)vd : (void *)vi) >= 0) {
            fprintf(w->out, "  @%s =", name);
            for (hssize_t k = 0; k < sh.count; k++) {
                char b[32];
                if (is_float)
                    config_fmt_double(b, sizeof b, vd[k]);
                else if (is_unsigned)
                    snprintf(b, sizeof b, "%llu", (unsigned long long)vi[k]);
                else
                    snprintf(b, sizeof b, "%lld", vi[k]);
                fprintf(w->out, " %s", b);
            }
            fputc('\n', w->out);
        } else
            fprintf(w->out, "  @%s = (unreadable)\n", name);
    } else {
        fprintf(w->out, "  @%s = (%s, not shown)\n", name, shape_text(sh, what, sizeof what));
    }
    closed(sp);
    closed(t);
    closed(a);
    return 0;
}

/* The attributes of group `name`, under a line naming it; nothing where it is missing or
 * has none. */
static void print_group_attrs(walk_ctx *w, const char *name)
{
    if (strcmp(name, "/") != 0 && H5Lexists(w->file, name, H5P_DEFAULT) <= 0)
        return;
    hid_t o = H5Oopen(w->file, name, H5P_DEFAULT);
    if (o < 0)
        return;
    H5O_info_t oi;
    if (H5Oget_info(o, &oi) >= 0 && oi.type == H5O_TYPE_GROUP && oi.num_attrs > 0) {
        fprintf(w->out, "%s\n", name);
        hsize_t idx = 0;
        H5Aiterate2(o, H5_INDEX_NAME, H5_ITER_INC, &idx, print_attr, w);
    }
    H5Oclose(o);
}

static herr_t print_other_group(hid_t loc, const char *name, const H5L_info_t *info, void *op)
{
    (void)loc;
    (void)info;
    const char *shown[] = {"parameters", "build", "summary", NULL};
    for (int k = 0; shown[k]; k++)
        if (strcmp(name, shown[k]) == 0)
            return 0;
    char path[300];
    snprintf(path, sizeof path, "/%s", name);
    print_group_attrs(op, path);
    return 0;
}

/* Long: cdlab info's report in the order it prints, each part a few lines. */
status h5in_describe(const char *path, FILE *out, diag *err)
{
    h5io_init();
    if (input_file_check(path, "HDF5 file", 0, err) != CDLAB_OK)
        return CDLAB_ERR_IO;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return h5io_open_failed(path, OPEN_FAILED, err);
    walk_ctx w = {.out = out, .file = f};
    /* cdlab's FCLIB export: the step, solver and residual it records (it was "not a cdlab
     * output") */
    if (H5Lexists(f, "/fclib_local", H5P_DEFAULT) > 0 && H5Lexists(f, "/cdlab", H5P_DEFAULT) > 0) {
        fprintf(out,
                "%s: an FCLIB local problem exported by cdlab (docs/output.md, FCLIB export)\n",
                path);
        hid_t o = H5Oopen(f, "/cdlab", H5P_DEFAULT);
        if (o >= 0) {
            fprintf(out, "/cdlab\n");
            hsize_t idx = 0;
            H5Aiterate2(o, H5_INDEX_NAME, H5_ITER_INC, &idx, print_attr, &w);
            H5Oclose(o);
        }
        H5Fclose(f);
        return CDLAB_OK;
    }
    /* a cdlab output has its resolved parameters and its build: anything else (a foreign
     * file) is not described as if it were one */
    if (H5Lexists(f, "/parameters", H5P_DEFAULT) <= 0 || H5Lexists(f, "/build", H5P_DEFAULT) <= 0) {
        H5Fclose(f);
        return diag_set(err, CDLAB_ERR_ARG,
                        "%s: an HDF5 file, but not a cdlab output (no /parameters and /build)",
                        path);
    }
    /* the provenance first, the run's summary last, and between them every other top-level
     * group's attributes in name order (/dem, /elasticity, /parallel, /restart: only the four
     * fixed groups were printed, so the spurious-elasticity figures and where a continued run
     * began were not shown) */
    print_group_attrs(&w, "/");
    print_group_attrs(&w, "/parameters");
    print_group_attrs(&w, "/build");
    hsize_t idx = 0;
    H5Literate(f, H5_INDEX_NAME, H5_ITER_INC, &idx, print_other_group, &w);
    print_group_attrs(&w, "/summary");
    if (H5Lexists(f, "/series", H5P_DEFAULT) > 0 && H5Lexists(f, "/series/t", H5P_DEFAULT) > 0) {
        hid_t d = H5Dopen2(f, "/series/t", H5P_DEFAULT);
        hid_t sp = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
        hssize_t n = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
        /* rows, not steps: output.series_every may keep one row per many steps */
        double t[2] = {0, 0};
        hsize_t at[2] = {0, n > 0 ? (hsize_t)n - 1 : 0}, two = 2;
        hid_t mem = H5Screate_simple(1, &two, NULL);
        if (n < 0)
            fprintf(out, "/series/t: not a dataset of times (unreadable)\n");
        else if (n > 0 && H5Sget_simple_extent_ndims(sp) == 1 &&
                 H5Sselect_elements(sp, H5S_SELECT_SET, 2, at) >= 0 &&
                 H5Dread(d, H5T_NATIVE_DOUBLE, mem, sp, H5P_DEFAULT, t) >= 0)
            fprintf(out, "/series: %lld row%s, t = %.6g to %.6g\n", (long long)n, n == 1 ? "" : "s",
                    t[0], t[1]);
        else
            fprintf(out, "/series: %lld row%s\n", (long long)n, n == 1 ? "" : "s");
        closed(mem);
        closed(sp);
        closed(d);
    }
    if (H5Lexists(f, "/input_index", H5P_DEFAULT) > 0) {
        hid_t d = H5Dopen2(f, "/input_index", H5P_DEFAULT);
        hid_t sp = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
        if (sp >= 0)
            fprintf(out,
                    "/input_index: %lld particles renumbered in spatial order (particles.order); "
                    "input_index[id] is a particle's input index\n",
                    (long long)H5Sget_simple_extent_npoints(sp));
        closed(sp);
        closed(d);
    }
    const char *lists[][2] = {
        {"/snapshots", "frame"}, {"/checkpoints", "checkpoint"}, {"/walls", "wall"}};
    for (int k = 0; k < 3; k++) {
        if (H5Lexists(f, lists[k][0], H5P_DEFAULT) <= 0)
            continue;
        hid_t g = H5Gopen2(f, lists[k][0], H5P_DEFAULT);
        H5G_info_t gi;
        if (g >= 0 && H5Gget_info(g, &gi) >= 0)
            fprintf(out, "%s: %llu %s%s\n", lists[k][0], (unsigned long long)gi.nlinks, lists[k][1],
                    gi.nlinks == 1 ? "" : "s");
        else
            fprintf(out, "%s: not a group (unreadable)\n", lists[k][0]);
        closed(g);
    }
    H5Fclose(f);
    return CDLAB_OK;
}

/* ---- reading a checkpoint ---- */

struct h5in {
    hid_t f;
    char path[PATH_MAX];
};

status h5in_open(h5in **out, const char *path, diag *err)
{
    h5io_init();
    *out = NULL;
    if (input_file_check(path, "HDF5 file", 0, err) != CDLAB_OK)
        return CDLAB_ERR_IO;
    if (H5Fis_hdf5(path) <= 0)
        return h5io_open_failed(path, "not an HDF5 file", err);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return h5io_open_failed(path, OPEN_FAILED, err);
    h5in *h = calloc(1, sizeof *h);
    if (!h) {
        H5Fclose(f);
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    }
    h->f = f;
    snprintf(h->path, sizeof h->path, "%s", path);
    *out = h;
    return CDLAB_OK;
}

void h5in_close(h5in *h)
{
    if (!h)
        return;
    H5Fclose(h->f);
    free(h);
}

int h5in_exists(h5in *h, const char *path)
{
    return H5Lexists(h->f, path, H5P_DEFAULT) > 0;
}

int h5in_has_attr(h5in *h, const char *obj, const char *name)
{
    return H5Aexists_by_name(h->f, obj, name, H5P_DEFAULT) > 0;
}

status h5in_size(h5in *h, const char *dset, long long *n, diag *err)
{
    hid_t d = H5Dopen2(h->f, dset, H5P_DEFAULT);
    if (d < 0)
        return diag_set(err, CDLAB_ERR_IO, "%s: no dataset %s", h->path, dset);
    hid_t sp = H5Dget_space(d);
    hssize_t count = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
    closed(sp);
    closed(d);
    if (count < 0)
        return diag_set(err, CDLAB_ERR_IO, "%s: cannot read the size of %s", h->path, dset);
    *n = (long long)count;
    return CDLAB_OK;
}

/* Whether a stored element class can be read as type: numbers as numbers (an integer dataset
 * read as doubles is converted), never strings or compounds. */
static int readable_as(H5T_class_t cls, h5type type)
{
    return type == H5IO_DOUBLE ? cls == H5T_FLOAT || cls == H5T_INTEGER : cls == H5T_INTEGER;
}

status h5in_read(h5in *h, const char *dset, h5type type, void *data, long count, diag *err)
{
    hid_t d = H5Dopen2(h->f, dset, H5P_DEFAULT);
    if (d < 0)
        return diag_set(err, CDLAB_ERR_IO, "%s: no dataset %s", h->path, dset);
    hid_t sp = H5Dget_space(d), ft = H5Dget_type(d);
    shape sh = shape_of(ft, sp);
    status st = CDLAB_OK;
    char what[64];
    if (!readable_as(sh.cls, type))
        st = diag_set(err, CDLAB_ERR_IO, "%s: %s holds %s, not %s", h->path, dset,
                      shape_text(sh, what, sizeof what),
                      type == H5IO_DOUBLE ? "numbers" : "integers");
    else if (sh.count != count)
        st = diag_set(err, CDLAB_ERR_IO, "%s: %s holds %lld values, expected %ld", h->path, dset,
                      (long long)sh.count, count);
    else if (count > 0 && H5Dread(d, mem_type(type), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
        st = diag_set(err, CDLAB_ERR_IO, "%s: cannot read %s", h->path, dset);
    else if (count > 0 && !checksum_holds(d))
        st = diag_set(err, CDLAB_ERR_IO,
                      "%s: %s does not hold what was written to it (its checksum differs): the "
                      "file was damaged while or after it was written",
                      h->path, dset);
    closed(ft);
    closed(sp);
    closed(d);
    return st;
}

/* A numeric attribute, one value, converted by HDF5 to the memory type mt. */
static status read_attr_num(h5in *h, const char *obj, const char *name, hid_t mt, void *v,
                            diag *err)
{
    if (H5Aexists_by_name(h->f, obj, name, H5P_DEFAULT) <= 0)
        return diag_set(err, CDLAB_ERR_IO, "%s: no attribute %s of %s", h->path, name, obj);
    hid_t a = H5Aopen_by_name(h->f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
    hid_t t = a >= 0 ? H5Aget_type(a) : H5I_INVALID_HID, sp = a >= 0 ? H5Aget_space(a) : -1;
    shape sh = shape_of(t, sp);
    char what[64];
    status st = CDLAB_OK;
    if ((sh.cls != H5T_INTEGER && sh.cls != H5T_FLOAT) || sh.count != 1)
        st = diag_set(err, CDLAB_ERR_IO, "%s: attribute %s of %s holds %s, not one number", h->path,
                      name, obj, shape_text(sh, what, sizeof what));
    else if (H5Aread(a, mt, v) < 0)
        st = diag_set(err, CDLAB_ERR_IO, "%s: cannot read %s of %s", h->path, name, obj);
    closed(sp);
    closed(t);
    closed(a);
    return st;
}

status h5in_attr_int(h5in *h, const char *obj, const char *name, long long *v, diag *err)
{
    return read_attr_num(h, obj, name, H5T_NATIVE_LLONG, v, err);
}

status h5in_attr_double(h5in *h, const char *obj, const char *name, double *v, diag *err)
{
    return read_attr_num(h, obj, name, H5T_NATIVE_DOUBLE, v, err);
}

status h5in_attr_str(h5in *h, const char *obj, const char *name, char **value, diag *err)
{
    *value = NULL;
    char what[64];
    hid_t o = H5Oopen(h->f, obj, H5P_DEFAULT);
    status st = o >= 0 ? read_attr_string(o, name, value, what, sizeof what) : CDLAB_ERR_IO;
    closed(o);
    if (st == CDLAB_ERR_ARG)
        return diag_set(err, CDLAB_ERR_IO, "%s: attribute %s of %s holds %s, not one string",
                        h->path, name, obj, what);
    if (st != CDLAB_OK)
        return diag_set(err, st == CDLAB_ERR_NOMEM ? st : CDLAB_ERR_IO,
                        "%s: no string attribute %s on %s", h->path, name, obj);
    return CDLAB_OK;
}

/* a names a later step than b (names of zero-padded step numbers, h5in_last_child) */
static int later_step_name(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    return la != lb ? la > lb : strcmp(a, b) > 0;
}

status h5in_last_child(h5in *h, const char *group, const char *before, char *name, diag *err)
{
    name[0] = '\0';
    if (H5Lexists(h->f, group, H5P_DEFAULT) <= 0)
        return diag_set(err, CDLAB_ERR_IO, "%s: no %s group (not a cdlab output with a checkpoint)",
                        h->path, group);
    hid_t g = H5Gopen2(h->f, group, H5P_DEFAULT);
    if (g < 0)
        return diag_set(err, CDLAB_ERR_IO, "%s: cannot open %s", h->path, group);
    H5G_info_t gi;
    if (H5Gget_info(g, &gi) >= 0)
        for (hsize_t k = 0; k < gi.nlinks; k++) {
            char buf[256];
            ssize_t len = H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, k, buf, sizeof buf,
                                             H5P_DEFAULT);
            if (len > 0 && len < (ssize_t)sizeof buf && later_step_name(buf, name) &&
                (!before || later_step_name(before, buf)))
                memcpy(name, buf, (size_t)len + 1);
        }
    H5Gclose(g);
    if (!name[0])
        return diag_set(err, CDLAB_ERR_IO, "%s: %s has no %s", h->path, group,
                        before ? "earlier entry" : "entry");
    return CDLAB_OK;
}

typedef struct verify_ctx {
    char *bad;
    size_t n;
    int ok;
} verify_ctx;

static herr_t verify_visit(hid_t o, const char *name, const H5O_info_t *info, void *op)
{
    verify_ctx *v = op;
    if (info->type != H5O_TYPE_DATASET)
        return 0;
    hid_t d = H5Dopen2(o, name, H5P_DEFAULT);
    int ok = d >= 0 && checksum_holds(d);
    closed(d);
    if (!ok) {
        v->ok = 0;
        snprintf(v->bad, v->n, "%s", name);
        return 1; /* the first is enough */
    }
    return 0;
}

int h5in_group_verifies(h5in *h, const char *group, char *bad, size_t n)
{
    if (n)
        bad[0] = '\0';
    verify_ctx v = {bad, n, 1};
    hid_t g = H5Oopen(h->f, group, H5P_DEFAULT);
    if (g < 0)
        return 0;
    if (H5Ovisit(g, H5_INDEX_NAME, H5_ITER_INC, verify_visit, &v) < 0)
        v.ok = 0;
    closed(g);
    return v.ok;
}

#define _GNU_SOURCE /* fallocate, memfd_create */
#include "h5io.h"
#include "config.h"

#include <hdf5.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Rows kept in memory per series before they are written: one HDF5 write per this many steps
 * instead of one per step; h5out_flush writes them at any time (and on errors). */
#define H5IO_SERIES_BUFFER 1024
#define H5IO_MAX_SERIES 64

typedef struct series {
    hid_t dset;
    hid_t mtype;
    int rank; /* total rank: 1 + rank_tail */
    hsize_t tail[2];
    size_t row_bytes;
    char *buf;
    int nbuf;
    hsize_t nrows;
} series;

/* Room reserved on disk ahead of the writes (h5out_make_room): this much for what a stopped run
 * still writes (its summary, the close), besides a chunk per series and the next output. */
#define H5IO_RESERVE_MIN (512LL << 10)

struct h5out {
    hid_t file;
    char path[PATH_MAX]; /* messages, and the file that release_room opens again */
    series s[H5IO_MAX_SERIES];
    int ns;
    /* An HDF5 call failed: the library's state no longer matches the file, and anything more
     * it wrote (its cache at the close) could overwrite what the last flush left readable. */
    int failed;
    /* h5out_make_room: the file's size at its last call (-1: none yet), the most it grew from
     * one call to the next, the end of the room reserved (0: none), and 1 where the file
     * system cannot reserve (fallocate unsupported) */
    long long mark, max_growth, reserved_end;
    int no_reserve;
    /* h5out_create_counter's: no file; every write succeeds, only the series' rows are kept */
    int counter;
};

static hid_t mem_type(h5type t)
{
    return t == H5IO_DOUBLE  ? H5T_NATIVE_DOUBLE
           : t == H5IO_INT32 ? H5T_NATIVE_INT32
           : t == H5IO_UINT8 ? H5T_NATIVE_UINT8
                             : H5T_NATIVE_INT64;
}
static size_t type_size(h5type t)
{
    return t == H5IO_INT32 ? 4 : t == H5IO_UINT8 ? 1 : 8;
}

/* An HDF5 call failed: the message names the file, the operation and, where the operating
 * system gave one (the write functions clear errno before they start), its reason, e.g. "No
 * space left on device". */
static status fail(h5out *h, diag *err, const char *what, const char *obj)
{
    int e = errno;
    if (h)
        h->failed = 1;
    if (e)
        return diag_set(err, CDLAB_ERR_IO, "%s: HDF5 error: %s %s: %s", h ? h->path : "?", what,
                        obj, strerror(e));
    return diag_set(err, CDLAB_ERR_IO, "%s: HDF5 error: %s %s", h ? h->path : "?", what, obj);
}

/* Before the library's first use: its errors are reported through diag, not printed; and it
 * does not close files at process exit. A file whose close failed (a full disk) stays open in
 * the library, and HDF5 1.10's exit handler then crashes in H5F__close_cb (measured: exit
 * status 139 after "No space left on device"); every file cdlab opens is closed explicitly. */
static void h5_init(void)
{
    static int done;
    if (done)
        return;
    H5dont_atexit();
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    done = 1;
}

/* Why path could not be opened for reading as HDF5: the system's reason when the file cannot
 * be read at all (missing, a directory, no permission), else `what`. */
#define OPEN_FAILED "cannot open as HDF5 (not an HDF5 file, or damaged)"
static status open_failed(const char *path, const char *what, diag *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || access(path, R_OK) != 0)
        return diag_set(err, CDLAB_ERR_IO, "%s: %s", path, strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return diag_set(err, CDLAB_ERR_IO, "%s: is a folder, not an HDF5 file", path);
    return diag_set(err, CDLAB_ERR_IO, "%s: %s", path, what);
}

status h5out_create(h5out **out, const char *path, diag *err)
{
    h5_init();
    h5out *h = calloc(1, sizeof *h);
    if (!h)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    snprintf(h->path, sizeof h->path, "%s", path);
    /* HDF5's own lock (flock) would keep readers (h5py, cdlab info) out while the run writes;
     * cdlab's exclusive access to an output comes from outfile.c's record lock instead, so
     * that a running file can be read up to its last flushed snapshot. */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_file_locking(fapl, 0, 1);
    /* a metadata cache of 1 to 4 MiB (HDF5's default grows to 32 MiB): a 10-particle run
     * writing 1,000 snapshots peaked at 44.9 MB with the default, 32.1 MB with this, and ran
     * 1.85 -> 1.55 s; what is written is the same */
    H5AC_cache_config_t mdc = {.version = H5AC__CURR_CACHE_CONFIG_VERSION};
    if (H5Pget_mdc_config(fapl, &mdc) >= 0) {
        mdc.set_initial_size = 1;
        mdc.initial_size = 1 << 20;
        mdc.min_size = 1 << 20;
        mdc.max_size = 4 << 20;
        H5Pset_mdc_config(fapl, &mdc);
    }
    errno = 0;
    h->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (h->file < 0) {
        int e = errno;
        free(h);
        return diag_set(err, CDLAB_ERR_IO, "%s: cannot create HDF5 file%s%s", path, e ? ": " : "",
                        e ? strerror(e) : "");
    }
    h->mark = -1;
    *out = h;
    return CDLAB_OK;
}

void h5io_library_version(char *buf, size_t n)
{
    unsigned maj = 0, min = 0, rel = 0;
    if (H5get_libversion(&maj, &min, &rel) < 0)
        snprintf(buf, n, "unknown");
    else
        snprintf(buf, n, "%u.%u.%u", maj, min, rel);
}

status h5out_create_counter(h5out **out, diag *err)
{
    h5out *h = calloc(1, sizeof *h);
    if (!h)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    snprintf(h->path, sizeof h->path, "(a counter, no file)");
    h->file = H5I_INVALID_HID;
    h->mark = -1;
    h->no_reserve = 1;
    h->counter = 1;
    *out = h;
    return CDLAB_OK;
}

double h5out_series_row_bytes(const h5out *h)
{
    double row = 0.0;
    for (int k = 0; k < h->ns; k++)
        row += (double)h->s[k].row_bytes;
    return row;
}

long h5out_series_stored_rows(long rows)
{
    return rows <= 0 ? 0
                     : (rows + H5IO_SERIES_BUFFER - 1) / H5IO_SERIES_BUFFER * H5IO_SERIES_BUFFER;
}

int h5_sibling_path(const char *h5_path, const char *suffix, char *buf, size_t n)
{
    size_t len = strlen(h5_path);
    if (len > 3 && strcmp(h5_path + len - 3, ".h5") == 0)
        len -= 3;
    int w = snprintf(buf, n, "%.*s%s", (int)len, h5_path, suffix);
    return w >= 0 && (size_t)w < n;
}

status h5out_open(h5out **out, const char *path, diag *err)
{
    h5_init();
    h5out *h = calloc(1, sizeof *h);
    if (!h)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    snprintf(h->path, sizeof h->path, "%s", path);
    h->file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (h->file < 0) {
        free(h);
        return diag_set(err, CDLAB_ERR_IO, "%s: cannot open HDF5 file for writing", path);
    }
    h->mark = -1;
    *out = h;
    return CDLAB_OK;
}

/* After a failure every later write is refused, so that nothing more reaches the file. */
static status refuse(const h5out *h, diag *err)
{
    return diag_set(err, CDLAB_ERR_IO,
                    "%s: an earlier write to it failed: nothing more is written to it (it holds "
                    "what its last flush wrote)",
                    h->path);
}

/* The descriptor HDF5's default (sec2) driver writes the file through; -1 if it gives none. */
static int file_fd(const h5out *h)
{
    void *handle = NULL;
    if (H5Fget_vfd_handle(h->file, H5P_DEFAULT, &handle) < 0 || !handle)
        return -1;
    return *(const int *)handle;
}

status h5out_make_room(h5out *h, long long expect, diag *err)
{
    if (!h || h->counter)
        return CDLAB_OK;
    if (h->failed)
        return refuse(h, err);
    int fd = file_fd(h);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        h->no_reserve = 1;
        return CDLAB_OK;
    }
    long long size = (long long)st.st_size;
    /* from the last call's size (from the start at the first): HDF5 leaves holes below the
     * end, written later, that need blocks as much as the end does */
    long long from = h->mark >= 0 ? h->mark : 0;
    if (h->mark >= 0 && size - h->mark > h->max_growth)
        h->max_growth = size - h->mark;
    h->mark = size;
    long long next = 2 * h->max_growth > expect ? 2 * h->max_growth : expect, chunks = 0;
    for (int k = 0; k < h->ns; k++) /* the buffered rows' chunk, allocated whole */
        chunks += (long long)(h->s[k].row_bytes * H5IO_SERIES_BUFFER);
    long long want = H5IO_RESERVE_MIN + chunks + next;
    int e = 0;
    if (!h->no_reserve) {
        /* every call asks again: HDF5 truncates the file to its end of allocation at
         * flushes, which may give reserved blocks back */
        int rc;
        do
            rc = fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)(size + want - from));
        while (rc != 0 && errno == EINTR);
        if (rc == 0) {
            if (size + want > h->reserved_end)
                h->reserved_end = size + want;
            return CDLAB_OK;
        }
        e = errno;
        /* no room, or the device failing, stop the run; any other answer (EOPNOTSUPP, ENOSYS,
         * a file system that answers otherwise) means it cannot reserve: the check below */
        if (e != ENOSPC && e != EDQUOT && e != EFBIG && e != EIO) {
            h->no_reserve = 1;
            e = 0;
        }
    }
    /* where nothing can be reserved, the free space is checked instead (another program
     * filling the disk meanwhile defeats it) */
    struct statvfs v;
    if (e == 0 && fstatvfs(fd, &v) == 0 && (long long)v.f_bavail * (long long)v.f_frsize < want)
        e = ENOSPC;
    if (e == 0)
        return CDLAB_OK;
    char amount[24];
    return diag_set(err, CDLAB_ERR_IO,
                    "%s: no room for the next output: %s (%s %s before each output: its "
                    "data, or twice the most one has written if more, and room for the summary, "
                    "so that a full disk stops the run between two outputs instead of cutting "
                    "one short)",
                    h->path, strerror(e), format_bytes((double)want, amount, sizeof amount),
                    h->no_reserve ? "must be free on the device" : "are reserved on the device");
}

int h5out_reserving(const h5out *h)
{
    return h && !h->no_reserve;
}

/* Gives back the room reserved beyond the end of the closed file at path: a truncation to its
 * size (ext4, XFS) and a hole punched past it (tmpfs); either is harmless where the other acts. */
static void release_room(const char *path, long long reserved_end)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return;
    if (fstat(fd, &st) == 0 && reserved_end > (long long)st.st_size) {
        int rc = ftruncate(fd, st.st_size);
        rc |= fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, st.st_size,
                        (off_t)(reserved_end - (long long)st.st_size));
        (void)rc; /* where neither gives it back, the room stays until the file is removed */
    }
    close(fd);
}

/* HDF5 writes its caches when a file closes and has no call that closes without writing. After
 * a failure what it would write could overwrite what the last flush left readable (measured: a
 * full disk met by a checkpoint's write, then the close, left /snapshots unreadable in a file
 * whose message named its snapshots). So its descriptor is pointed at a scratch file in memory
 * first: the close writes there. Returns 0 where that cannot be done. */
static int divert(const h5out *h)
{
    int fd = file_fd(h);
    if (fd < 0)
        return 0;
    int sink = memfd_create("cdlab-discarded", MFD_CLOEXEC);
    if (sink < 0)
        sink = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (sink < 0)
        return 0;
    int ok = dup2(sink, fd) == fd;
    close(sink);
    return ok;
}

static status flush_series(h5out *h, series *s, diag *err)
{
    if (s->nbuf == 0)
        return CDLAB_OK;
    if (h->failed)
        return refuse(h, err);
    errno = 0;
    hsize_t newdims[3] = {s->nrows + (hsize_t)s->nbuf, s->tail[0], s->tail[1]};
    if (H5Dset_extent(s->dset, newdims) < 0)
        return fail(h, err, "extending a series", "");
    hid_t fs = H5Dget_space(s->dset);
    hsize_t start[3] = {s->nrows, 0, 0}, count[3] = {(hsize_t)s->nbuf, s->tail[0], s->tail[1]};
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t ms = H5Screate_simple(s->rank, count, NULL);
    herr_t rc = H5Dwrite(s->dset, s->mtype, ms, fs, H5P_DEFAULT, s->buf);
    H5Sclose(ms);
    H5Sclose(fs);
    if (rc < 0)
        return fail(h, err, "writing a series", "");
    s->nrows += (hsize_t)s->nbuf;
    s->nbuf = 0;
    return CDLAB_OK;
}

status h5out_flush(h5out *h, diag *err)
{
    if (!h || h->counter)
        return CDLAB_OK;
    if (h->failed)
        return refuse(h, err);
    for (int k = 0; k < h->ns; k++) {
        status st = flush_series(h, &h->s[k], err);
        if (st != CDLAB_OK)
            return st;
    }
    errno = 0;
    if (H5Fflush(h->file, H5F_SCOPE_GLOBAL) < 0)
        return fail(h, err, "flushing", "the file");
    return CDLAB_OK;
}

status h5out_close(h5out *h, diag *err)
{
    if (!h)
        return CDLAB_OK;
    if (h->counter) { /* no file, no buffers */
        free(h);
        return CDLAB_OK;
    }
    status st = h->failed ? refuse(h, err) : h5out_flush(h, err);
    /* after a failure (before or in that flush) the close must not write to the file; where
     * its writes cannot be diverted the file stays open in the library, written no more */
    int may_close = !h->failed || divert(h);
    for (int k = 0; k < h->ns; k++) {
        if (may_close)
            H5Dclose(h->s[k].dset);
        free(h->s[k].buf);
    }
    if (may_close && H5Fclose(h->file) < 0 && st == CDLAB_OK)
        st = fail(h, err, "closing", "file");
    if (h->reserved_end > 0)
        release_room(h->path, h->reserved_end);
    free(h);
    return st;
}

status h5out_group(h5out *h, const char *path, diag *err)
{
    if (h->failed)
        return refuse(h, err);
    if (h->counter)
        return CDLAB_OK;
    if (H5Lexists(h->file, path, H5P_DEFAULT) > 0)
        return CDLAB_OK;
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t g = H5Gcreate2(h->file, path, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    H5Pclose(lcpl);
    if (g < 0)
        return fail(h, err, "creating group", path);
    H5Gclose(g);
    return CDLAB_OK;
}

status h5out_copy(h5out *dst, h5out *src, const char *path, diag *err)
{
    if (dst->failed || src->failed)
        return refuse(dst->failed ? dst : src, err);
    if (dst->counter || src->counter)
        return diag_set(err, CDLAB_ERR_ARG, "a counter has nothing to copy");
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    herr_t r = H5Ocopy(src->file, path, dst->file, path, H5P_DEFAULT, lcpl);
    H5Pclose(lcpl);
    return r < 0 ? fail(dst, err, "copying", path) : CDLAB_OK;
}

static status write_attr(h5out *h, const char *obj, const char *name, hid_t type, hid_t space,
                         const void *value, diag *err)
{
    if (h->failed)
        return refuse(h, err);
    errno = 0;
    hid_t o = H5Oopen(h->file, obj, H5P_DEFAULT);
    if (o < 0)
        return fail(h, err, "opening", obj);
    if (H5Aexists(o, name) > 0)
        H5Adelete(o, name);
    hid_t a = H5Acreate2(o, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    herr_t rc = a >= 0 ? H5Awrite(a, type, value) : -1;
    if (a >= 0)
        H5Aclose(a);
    H5Oclose(o);
    return rc < 0 ? fail(h, err, "writing attribute", name) : CDLAB_OK;
}

status h5out_attr_string(h5out *h, const char *obj, const char *name, const char *value, diag *err)
{
    if (h->counter)
        return CDLAB_OK;
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, strlen(value) + 1);
    H5Tset_cset(t, H5T_CSET_UTF8);
    hid_t sp = H5Screate(H5S_SCALAR);
    status st = write_attr(h, obj, name, t, sp, value, err);
    H5Sclose(sp);
    H5Tclose(t);
    return st;
}

status h5out_attr_double(h5out *h, const char *obj, const char *name, double value, diag *err)
{
    if (h->counter)
        return CDLAB_OK;
    hid_t sp = H5Screate(H5S_SCALAR);
    status st = write_attr(h, obj, name, H5T_NATIVE_DOUBLE, sp, &value, err);
    H5Sclose(sp);
    return st;
}

status h5out_attr_int(h5out *h, const char *obj, const char *name, long long value, diag *err)
{
    if (h->counter)
        return CDLAB_OK;
    hid_t sp = H5Screate(H5S_SCALAR);
    int64_t v = value;
    status st = write_attr(h, obj, name, H5T_NATIVE_INT64, sp, &v, err);
    H5Sclose(sp);
    return st;
}

status h5out_series(h5out *h, const char *path, h5type type, int rank_tail, const long *tail,
                    int *index, diag *err)
{
    if (h->failed)
        return refuse(h, err);
    if (h->ns == H5IO_MAX_SERIES)
        return diag_set(err, CDLAB_ERR_ARG, "too many series");
    series *s = &h->s[h->ns];
    memset(s, 0, sizeof *s);
    s->rank = 1 + rank_tail;
    s->tail[0] = rank_tail > 0 ? (hsize_t)tail[0] : 1;
    s->tail[1] = rank_tail > 1 ? (hsize_t)tail[1] : 1;
    s->row_bytes = type_size(type) * s->tail[0] * s->tail[1];
    if (h->counter) { /* before any HDF5 name: H5T_NATIVE_* start the library (2 MB of code) */
        *index = h->ns++;
        return CDLAB_OK;
    }
    s->mtype = mem_type(type);
    hsize_t dims[3] = {0, s->tail[0], s->tail[1]};
    hsize_t maxd[3] = {H5S_UNLIMITED, s->tail[0], s->tail[1]};
    hsize_t chunk[3] = {H5IO_SERIES_BUFFER, s->tail[0] > 0 ? s->tail[0] : 1,
                        s->tail[1] > 0 ? s->tail[1] : 1};
    hid_t sp = H5Screate_simple(s->rank, dims, maxd);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, s->rank, chunk);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    /* a chunk cache of one chunk: the rows are appended, a chunk at a time, and the default
     * cache (1 MiB per dataset) only held chunks written long ago (a 10-particle run of 10^5
     * steps peaked at 32.7 MB against 15.9 MB for 10 steps; 17.5 MB with this) */
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    H5Pset_chunk_cache(dapl, 1, s->row_bytes * H5IO_SERIES_BUFFER, 1.0);
    s->dset = H5Dcreate2(h->file, path, s->mtype, sp, lcpl, dcpl, dapl);
    H5Pclose(dapl);
    H5Pclose(lcpl);
    H5Pclose(dcpl);
    H5Sclose(sp);
    if (s->dset < 0)
        return fail(h, err, "creating series", path);
    s->buf = malloc(s->row_bytes * H5IO_SERIES_BUFFER + 1);
    if (!s->buf) {
        H5Dclose(s->dset);
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    }
    *index = h->ns++;
    return CDLAB_OK;
}

status h5out_series_append(h5out *h, int index, const void *row, diag *err)
{
    series *s = &h->s[index];
    if (h->failed)
        return refuse(h, err);
    if (h->counter)
        return diag_set(err, CDLAB_ERR_ARG, "a counter's series take no rows");
    if (s->nbuf == H5IO_SERIES_BUFFER) {
        status st = h5out_make_room(h, 0, err);
        if (st == CDLAB_OK)
            st = flush_series(h, s, err);
        if (st != CDLAB_OK)
            return st;
    }
    memcpy(s->buf + (size_t)s->nbuf * s->row_bytes, row, s->row_bytes);
    s->nbuf++;
    return CDLAB_OK;
}

status h5out_array(h5out *h, const char *path, h5type type, int rank, const long *dims,
                   const void *data, diag *err)
{
    if (h->failed)
        return refuse(h, err);
    if (h->counter)
        return CDLAB_OK;
    hsize_t d[3];
    errno = 0;
    for (int k = 0; k < rank; k++)
        d[k] = (hsize_t)dims[k];
    hid_t sp = H5Screate_simple(rank, d, NULL);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t ds = H5Dcreate2(h->file, path, mem_type(type), sp, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    H5Pclose(lcpl);
    herr_t rc = -1;
    if (ds >= 0) {
        rc = H5Dwrite(ds, mem_type(type), H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
        H5Dclose(ds);
    }
    H5Sclose(sp);
    return rc < 0 ? fail(h, err, "writing", path) : CDLAB_OK;
}

struct h5out_rows {
    h5out *h;
    hid_t ds, sp;
    h5type type;
    int rank;
    hsize_t dims[3];
    char path[256];
};

status h5out_rows_begin(h5out *h, const char *path, h5type type, int rank, const long *dims,
                        h5out_rows **rows, diag *err)
{
    if (h->failed)
        return refuse(h, err);
    if (h->counter)
        return diag_set(err, CDLAB_ERR_ARG, "a counter takes no arrays in rows");
    h5out_rows *r = calloc(1, sizeof *r);
    if (!r)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory writing %s", path);
    r->h = h;
    r->type = type;
    r->rank = rank;
    snprintf(r->path, sizeof r->path, "%s", path);
    for (int k = 0; k < rank; k++)
        r->dims[k] = (hsize_t)dims[k];
    errno = 0;
    r->sp = H5Screate_simple(rank, r->dims, NULL);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    r->ds = r->sp >= 0
                ? H5Dcreate2(h->file, path, mem_type(type), r->sp, lcpl, H5P_DEFAULT, H5P_DEFAULT)
                : -1;
    H5Pclose(lcpl);
    if (r->ds < 0) {
        status s = fail(h, err, "creating", path);
        if (r->sp >= 0)
            H5Sclose(r->sp);
        free(r);
        return s;
    }
    *rows = r;
    return CDLAB_OK;
}

status h5out_rows_write(h5out_rows *r, long first, long n, const void *data, diag *err)
{
    if (n <= 0)
        return CDLAB_OK;
    if (r->h->failed)
        return refuse(r->h, err);
    if (first < 0 || (hsize_t)(first + n) > r->dims[0])
        return diag_set(err, CDLAB_ERR_IO, "%s: rows %ld..%ld beyond its %llu rows", r->path, first,
                        first + n - 1, (unsigned long long)r->dims[0]);
    errno = 0;
    if (first == 0 && (hsize_t)n == r->dims[0]) /* all of it: as h5out_array writes */
        return H5Dwrite(r->ds, mem_type(r->type), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0
                   ? fail(r->h, err, "writing", r->path)
                   : CDLAB_OK;
    hsize_t start[3] = {(hsize_t)first, 0, 0}, count[3];
    for (int k = 0; k < r->rank; k++)
        count[k] = k == 0 ? (hsize_t)n : r->dims[k];
    hid_t mem = H5Screate_simple(r->rank, count, NULL);
    herr_t rc =
        mem >= 0 ? H5Sselect_hyperslab(r->sp, H5S_SELECT_SET, start, NULL, count, NULL) : -1;
    if (rc >= 0)
        rc = H5Dwrite(r->ds, mem_type(r->type), mem, r->sp, H5P_DEFAULT, data);
    if (mem >= 0)
        H5Sclose(mem);
    return rc < 0 ? fail(r->h, err, "writing", r->path) : CDLAB_OK;
}

status h5out_rows_end(h5out_rows *r, diag *err)
{
    (void)err;
    if (!r)
        return CDLAB_OK;
    /* As h5out_array: a close that fails (the raw data it flushes meets a full disk) is
     * reported by the file flush that follows every snapshot. Stopping the run here instead
     * left the file unreadable back to its last snapshot (HDF5 then closed the file with the
     * dataset's metadata half written; tests/check_safety.c io_disk_full). */
    H5Dclose(r->ds);
    H5Sclose(r->sp);
    free(r);
    return CDLAB_OK;
}

/* ---- reading ---- */

static status read_attr_string(hid_t o, const char *name, char **value)
{
    hid_t a = H5Aopen(o, name, H5P_DEFAULT);
    if (a < 0)
        return CDLAB_ERR_IO;
    hid_t t = H5Aget_type(a);
    status st = CDLAB_ERR_IO;
    if (H5Tget_class(t) == H5T_STRING && !H5Tis_variable_str(t)) {
        size_t n = H5Tget_size(t);
        *value = calloc(n + 1, 1);
        if (*value && H5Aread(a, t, *value) >= 0)
            st = CDLAB_OK;
    }
    H5Tclose(t);
    H5Aclose(a);
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

status h5in_read_doubles(const char *path, const char *dset, double **data, long *n, diag *err)
{
    h5_init();
    *data = NULL;
    *n = 0;
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return open_failed(path, OPEN_FAILED, err);
    hid_t d = H5Dopen2(f, dset, H5P_DEFAULT);
    if (d < 0) {
        H5Fclose(f);
        return diag_set(err, CDLAB_ERR_IO, "%s: no dataset %s", path, dset);
    }
    hid_t sp = H5Dget_space(d);
    hssize_t count = H5Sget_simple_extent_npoints(sp);
    H5Sclose(sp);
    status st = CDLAB_OK;
    *data = malloc((size_t)(count > 0 ? count : 1) * sizeof **data);
    if (!*data || H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, *data) < 0) {
        free(*data);
        *data = NULL;
        st = diag_set(err, CDLAB_ERR_IO, "%s: cannot read %s", path, dset);
    } else {
        *n = (long)count;
    }
    H5Dclose(d);
    H5Fclose(f);
    return st;
}

typedef struct walk_ctx {
    FILE *out;
    hid_t file;
    int depth;
} walk_ctx;

static herr_t print_attr(hid_t loc, const char *name, const H5A_info_t *info, void *op)
{
    (void)info;
    walk_ctx *w = op;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t t = H5Aget_type(a);
    H5T_class_t cls = H5Tget_class(t);
    if (cls == H5T_STRING) {
        char *v = NULL;
        if (read_attr_string(loc, name, &v) == CDLAB_OK) {
            if (strchr(v, '\n')) {
                fprintf(w->out, "  @%s:\n", name);
                for (char *line = v, *nl; *line; line = nl + 1) {
                    nl = strchr(line, '\n');
                    if (!nl) {
                        fprintf(w->out, "    | %s\n", line);
                        break;
                    }
                    fprintf(w->out, "    | %.*s\n", (int)(nl - line), line);
                }
            } else
                fprintf(w->out, "  @%s = %s\n", name, v);
        }
        free(v);
    } else if (cls == H5T_FLOAT || cls == H5T_INTEGER) {
        /* every value, each double as the shortest text that reads back to it (%.10g cut
         * recorded figures such as /elasticity's to ten digits) */
        hid_t sp = H5Aget_space(a);
        hssize_t n = H5Sget_simple_extent_npoints(sp);
        H5Sclose(sp);
        int is_float = cls == H5T_FLOAT;
        void *v =
            n > 0 ? malloc((size_t)n * (is_float ? sizeof(double) : sizeof(long long))) : NULL;
        if (v && H5Aread(a, is_float ? H5T_NATIVE_DOUBLE : H5T_NATIVE_LLONG, v) >= 0) {
            fprintf(w->out, "  @%s =", name);
            for (hssize_t k = 0; k < n; k++) {
                char b[32];
                if (is_float)
                    config_fmt_double(b, sizeof b, ((double *)v)[k]);
                else
                    snprintf(b, sizeof b, "%lld", ((long long *)v)[k]);
                fprintf(w->out, " %s", b);
            }
            fputc('\n', w->out);
        }
        free(v);
    }
    H5Tclose(t);
    H5Aclose(a);
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

status h5in_describe(const char *path, FILE *out, diag *err)
{
    h5_init();
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return open_failed(path, OPEN_FAILED, err);
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
        hid_t sp = H5Dget_space(d);
        hssize_t n = H5Sget_simple_extent_npoints(sp);
        /* rows, not steps: output.series_every may keep one row per many steps */
        double t[2] = {0, 0};
        hsize_t at[2] = {0, n > 0 ? (hsize_t)n - 1 : 0}, two = 2;
        hid_t mem = H5Screate_simple(1, &two, NULL);
        if (n > 0 && H5Sselect_elements(sp, H5S_SELECT_SET, 2, at) >= 0 &&
            H5Dread(d, H5T_NATIVE_DOUBLE, mem, sp, H5P_DEFAULT, t) >= 0)
            fprintf(out, "/series: %lld row%s, t = %.6g to %.6g\n", (long long)n, n == 1 ? "" : "s",
                    t[0], t[1]);
        else
            fprintf(out, "/series: %lld row%s\n", (long long)n, n == 1 ? "" : "s");
        H5Sclose(mem);
        H5Sclose(sp);
        H5Dclose(d);
    }
    if (H5Lexists(f, "/input_index", H5P_DEFAULT) > 0) {
        hid_t d = H5Dopen2(f, "/input_index", H5P_DEFAULT);
        hid_t sp = H5Dget_space(d);
        fprintf(out,
                "/input_index: %lld particles renumbered in spatial order (particles.order); "
                "input_index[id] is a particle's input index\n",
                (long long)H5Sget_simple_extent_npoints(sp));
        H5Sclose(sp);
        H5Dclose(d);
    }
    const char *lists[][2] = {
        {"/snapshots", "frame"}, {"/checkpoints", "checkpoint"}, {"/walls", "wall"}};
    for (int k = 0; k < 3; k++) {
        if (H5Lexists(f, lists[k][0], H5P_DEFAULT) <= 0)
            continue;
        hid_t g = H5Gopen2(f, lists[k][0], H5P_DEFAULT);
        H5G_info_t gi;
        H5Gget_info(g, &gi);
        fprintf(out, "%s: %llu %s%s\n", lists[k][0], (unsigned long long)gi.nlinks, lists[k][1],
                gi.nlinks == 1 ? "" : "s");
        H5Gclose(g);
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
    h5_init();
    *out = NULL;
    if (H5Fis_hdf5(path) <= 0)
        return open_failed(path, "not an HDF5 file", err);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return open_failed(path, OPEN_FAILED, err);
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
    *n = (long long)H5Sget_simple_extent_npoints(sp);
    H5Sclose(sp);
    H5Dclose(d);
    return CDLAB_OK;
}

status h5in_read(h5in *h, const char *dset, h5type type, void *data, long count, diag *err)
{
    hid_t d = H5Dopen2(h->f, dset, H5P_DEFAULT);
    if (d < 0)
        return diag_set(err, CDLAB_ERR_IO, "%s: no dataset %s", h->path, dset);
    hid_t sp = H5Dget_space(d);
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    H5Sclose(sp);
    status st = CDLAB_OK;
    if (n != count)
        st = diag_set(err, CDLAB_ERR_IO, "%s: %s holds %lld values, expected %ld", h->path, dset,
                      (long long)n, count);
    else if (count > 0 && H5Dread(d, mem_type(type), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
        st = diag_set(err, CDLAB_ERR_IO, "%s: cannot read %s", h->path, dset);
    H5Dclose(d);
    return st;
}

/* A numeric attribute, converted by HDF5 to the memory type mt. */
static status read_attr_num(h5in *h, const char *obj, const char *name, hid_t mt, void *v,
                            diag *err)
{
    if (H5Aexists_by_name(h->f, obj, name, H5P_DEFAULT) <= 0)
        return diag_set(err, CDLAB_ERR_IO, "%s: no attribute %s of %s", h->path, name, obj);
    hid_t a = H5Aopen_by_name(h->f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
    herr_t r = a < 0 ? -1 : H5Aread(a, mt, v);
    if (a >= 0)
        H5Aclose(a);
    return r < 0 ? diag_set(err, CDLAB_ERR_IO, "%s: cannot read %s of %s", h->path, name, obj)
                 : CDLAB_OK;
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
    hid_t o = H5Oopen(h->f, obj, H5P_DEFAULT);
    status st = o >= 0 ? read_attr_string(o, name, value) : CDLAB_ERR_IO;
    if (o >= 0)
        H5Oclose(o);
    if (st != CDLAB_OK)
        return diag_set(err, CDLAB_ERR_IO, "%s: no string attribute %s on %s", h->path, name, obj);
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

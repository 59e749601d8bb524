#define _GNU_SOURCE /* fallocate, memfd_create */
#include "h5io_hdf5.h"

#include "config.h"
#include "inputfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
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
    int entry; /* its ledger entry */
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
    /* what was written, checked against the file after its close (h5ledger.h); lost: an entry
     * could not be kept (out of memory), so the file cannot be proven */
    h5ledger *ledger;
    int ledger_lost;
    char read_back[PATH_MAX]; /* the name the close reads it back by ("": path) */
};

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
void h5io_init(void)
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
status h5io_open_failed(const char *path, const char *what, diag *err)
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
    return h5out_create_via(out, path, path, err);
}

status h5out_create_via(h5out **out, const char *path, const char *name, diag *err)
{
    h5io_init();
    h5out *h = calloc(1, sizeof *h);
    if (!h)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    snprintf(h->path, sizeof h->path, "%s", name);
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
    h->file = fapl >= 0 ? H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl) : H5I_INVALID_HID;
    if (fapl >= 0)
        H5Pclose(fapl);
    if (h->file < 0) {
        int e = errno;
        free(h);
        return diag_set(err, CDLAB_ERR_IO, "%s: cannot create HDF5 file%s%s", name, e ? ": " : "",
                        e ? strerror(e) : "");
    }
    h->mark = -1;
    if (!(h->ledger = h5ledger_new())) {
        H5Fclose(h->file);
        free(h);
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    }
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
    h5io_init();
    h5out *h = calloc(1, sizeof *h);
    if (!h)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    snprintf(h->path, sizeof h->path, "%s", path);
    errno = 0;
    h->file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (h->file < 0) {
        int e = errno;
        free(h);
        return diag_set(err, CDLAB_ERR_IO, "%s: cannot open HDF5 file for writing%s%s", path,
                        e ? ": " : "", e ? strerror(e) : "");
    }
    h->mark = -1;
    if (!(h->ledger = h5ledger_new())) {
        H5Fclose(h->file);
        free(h);
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    }
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
    /* a file-size limit (ulimit -f): past it a write fails (EFBIG) in the middle of an output,
     * which the reservation does not see (it keeps the file's size) */
    struct rlimit fl;
    if (getrlimit(RLIMIT_FSIZE, &fl) == 0 && fl.rlim_cur != RLIM_INFINITY &&
        (unsigned long long)(size + want) > (unsigned long long)fl.rlim_cur)
        e = EFBIG;
    if (!h->no_reserve && e == 0) {
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
                    "one short)%s",
                    h->path, strerror(e), format_bytes((double)want, amount, sizeof amount),
                    h->no_reserve ? "must be free on the device" : "are reserved on the device",
                    e == EFBIG ? "; the process's file-size limit (ulimit -f) is below that" : "");
}

int h5out_reserving(const h5out *h)
{
    return h && !h->no_reserve;
}

/* Gives back the room reserved beyond the end of the closed file at path: a truncation to its
 * size (ext4, XFS) and a hole punched past it (tmpfs); either is harmless where the other acts. */
static void release_room(const char *path, long long reserved_end)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
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

/* A ledger entry that could not be kept: the file cannot be proven at its close. */
static void ledger_lost(h5out *h, int index)
{
    if (index < 0)
        h->ledger_lost = 1;
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
    hid_t ms = H5Screate_simple(s->rank, count, NULL);
    herr_t rc =
        fs >= 0 && ms >= 0 ? H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) : -1;
    if (rc >= 0)
        rc = H5Dwrite(s->dset, s->mtype, ms, fs, H5P_DEFAULT, s->buf);
    if (!closed(ms) || !closed(fs))
        rc = -1;
    if (rc < 0)
        return fail(h, err, "writing a series", "");
    if (h->ledger && !h5ledger_add_rows(h->ledger, s->entry, s->buf, (long long)s->nrows, s->nbuf))
        h->ledger_lost = 1;
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

void h5out_read_back_as(h5out *h, const char *path)
{
    if (h)
        snprintf(h->read_back, sizeof h->read_back, "%s", path);
}

status h5out_close_checked(h5out *h, h5ledger **ledger, diag *err)
{
    if (ledger)
        *ledger = NULL;
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
        if (may_close && !closed(h->s[k].dset) && st == CDLAB_OK)
            st = fail(h, err, "closing", "a series");
        free(h->s[k].buf);
    }
    errno = 0;
    if (may_close && H5Fclose(h->file) < 0 && st == CDLAB_OK)
        st = fail(h, err, "closing", "file");
    if (h->reserved_end > 0)
        release_room(h->path, h->reserved_end);
    /* the closed file read back (also after a failure: what it holds then) */
    diag tmp;
    status sv = may_close ? h5io_verify_file(h->read_back[0] ? h->read_back : h->path, h->path,
                                             h->ledger, h->ledger_lost, st ? &tmp : err)
                          : CDLAB_ERR_IO;
    if (st == CDLAB_OK)
        st = sv;
    if (ledger)
        *ledger = h->ledger;
    else
        h5ledger_free(h->ledger);
    free(h);
    return st;
}

status h5out_close(h5out *h, diag *err)
{
    return h5out_close_checked(h, NULL, err);
}

status h5out_group(h5out *h, const char *path, diag *err)
{
    if (h->failed)
        return refuse(h, err);
    if (h->counter)
        return CDLAB_OK;
    errno = 0;
    /* negative also where a folder above it is missing: made with it below */
    if (H5Lexists(h->file, path, H5P_DEFAULT) > 0)
        return CDLAB_OK;
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    hid_t g = lcpl >= 0 && H5Pset_create_intermediate_group(lcpl, 1) >= 0
                  ? H5Gcreate2(h->file, path, lcpl, H5P_DEFAULT, H5P_DEFAULT)
                  : H5I_INVALID_HID;
    int ok = g >= 0;
    if (!closed(lcpl) || !closed(g))
        ok = 0;
    return ok ? CDLAB_OK : fail(h, err, "creating group", path);
}

status h5out_copy(h5out *dst, h5out *src, const char *path, diag *err)
{
    if (dst->failed || src->failed)
        return refuse(dst->failed ? dst : src, err);
    if (dst->counter || src->counter)
        return diag_set(err, CDLAB_ERR_ARG, "a counter has nothing to copy");
    errno = 0;
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    herr_t r = lcpl >= 0 && H5Pset_create_intermediate_group(lcpl, 1) >= 0
                   ? H5Ocopy(src->file, path, dst->file, path, H5P_DEFAULT, lcpl)
                   : -1;
    if (!closed(lcpl))
        r = -1;
    if (r < 0)
        return fail(dst, err, "copying", path);
    /* what the source wrote there is what the copy must hold */
    if (!h5ledger_copy_group(dst->ledger, src->ledger, path))
        dst->ledger_lost = 1;
    return CDLAB_OK;
}

/* The attribute name of obj, of the given type and (scalar) space, set to value (size bytes,
 * entered in the ledger as they are). */
static status write_attr(h5out *h, const char *obj, const char *name, hid_t type, hid_t space,
                         const void *value, size_t size, diag *err)
{
    if (h->failed)
        return refuse(h, err);
    errno = 0;
    if (type < 0 || space < 0)
        return fail(h, err, "writing attribute", name);
    hid_t o = H5Oopen(h->file, obj, H5P_DEFAULT);
    if (o < 0)
        return fail(h, err, "opening", obj);
    htri_t there = H5Aexists(o, name);
    herr_t rc = there < 0 || (there > 0 && H5Adelete(o, name) < 0) ? -1 : 0;
    hid_t a =
        rc >= 0 ? H5Acreate2(o, name, type, space, H5P_DEFAULT, H5P_DEFAULT) : H5I_INVALID_HID;
    rc = a >= 0 ? H5Awrite(a, type, value) : -1;
    if (!closed(a) || !closed(o))
        rc = -1;
    if (rc < 0)
        return fail(h, err, "writing attribute", name);
    ledger_lost(h, h5ledger_attr(h->ledger, obj, name, value, size));
    return CDLAB_OK;
}

status h5out_attr_string(h5out *h, const char *obj, const char *name, const char *value, diag *err)
{
    if (h->counter)
        return CDLAB_OK;
    size_t n = strlen(value) + 1;
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t >= 0 && (H5Tset_size(t, n) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0)) {
        closed(t);
        t = H5I_INVALID_HID;
    }
    hid_t sp = H5Screate(H5S_SCALAR);
    status st = write_attr(h, obj, name, t, sp, value, n, err);
    if ((!closed(sp) || !closed(t)) && st == CDLAB_OK)
        st = fail(h, err, "writing attribute", name);
    return st;
}

static status attr_scalar(h5out *h, const char *obj, const char *name, hid_t type,
                          const void *value, diag *err)
{
    hid_t sp = H5Screate(H5S_SCALAR);
    status st = write_attr(h, obj, name, type, sp, value, 8, err);
    if (!closed(sp) && st == CDLAB_OK)
        st = fail(h, err, "writing attribute", name);
    return st;
}

status h5out_attr_double(h5out *h, const char *obj, const char *name, double value, diag *err)
{
    return h->counter ? CDLAB_OK : attr_scalar(h, obj, name, H5T_NATIVE_DOUBLE, &value, err);
}

status h5out_attr_int(h5out *h, const char *obj, const char *name, long long value, diag *err)
{
    int64_t v = value;
    return h->counter ? CDLAB_OK : attr_scalar(h, obj, name, H5T_NATIVE_INT64, &v, err);
}

status h5out_attr_uint(h5out *h, const char *obj, const char *name, uint64_t value, diag *err)
{
    return h->counter ? CDLAB_OK : attr_scalar(h, obj, name, H5T_NATIVE_UINT64, &value, err);
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
    errno = 0;
    hid_t sp = H5Screate_simple(s->rank, dims, maxd);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    /* a chunk cache of one chunk: the rows are appended, a chunk at a time, and the default
     * cache (1 MiB per dataset) only held chunks written long ago (a 10-particle run of 10^5
     * steps peaked at 32.7 MB against 15.9 MB for 10 steps; 17.5 MB with this) */
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    int ok = sp >= 0 && dcpl >= 0 && lcpl >= 0 && dapl >= 0 &&
             H5Pset_chunk(dcpl, s->rank, chunk) >= 0 &&
             H5Pset_create_intermediate_group(lcpl, 1) >= 0 &&
             H5Pset_chunk_cache(dapl, 1, s->row_bytes * H5IO_SERIES_BUFFER, 1.0) >= 0;
    s->dset = ok ? H5Dcreate2(h->file, path, s->mtype, sp, lcpl, dcpl, dapl) : H5I_INVALID_HID;
    if (!closed(dapl) || !closed(lcpl) || !closed(dcpl) || !closed(sp))
        ok = 0;
    if (!ok || s->dset < 0) {
        closed(s->dset);
        return fail(h, err, "creating series", path);
    }
    s->buf = malloc(s->row_bytes * H5IO_SERIES_BUFFER + 1);
    if (!s->buf) {
        closed(s->dset);
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    }
    s->entry = h5ledger_dataset(h->ledger, path, (int)type, s->row_bytes, 0, 1);
    ledger_lost(h, s->entry);
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

/* The bytes of one row (one element of the first dimension) of an array. */
static size_t array_row_bytes(h5type type, int rank, const long *dims)
{
    size_t b = type_size(type);
    for (int k = 1; k < rank; k++)
        b *= (size_t)dims[k];
    return b;
}

/* A whole array's checksum beside it (h5ledger.h), once all its rows are written. */
static status write_checksum(h5out *h, const char *path, int entry, diag *err)
{
    if (entry < 0)
        return CDLAB_OK; /* the ledger lost it: the close says the file cannot be proven */
    return h5out_attr_int(h, path, H5IO_CHECKSUM_ATTR,
                          (long long)h5ledger_at(h->ledger, entry)->hash, err);
}

struct h5out_rows {
    h5out *h;
    hid_t ds, sp;
    h5type type;
    int rank;
    hsize_t dims[3];
    int entry; /* its ledger entry */
    char path[256];
};

status h5out_rows_begin(h5out *h, const char *path, h5type type, int rank, const long *dims,
                        h5out_rows **rows, diag *err)
{
    if (h->failed)
        return refuse(h, err);
    if (h->counter)
        return diag_set(err, CDLAB_ERR_ARG, "a counter takes no arrays in rows");
    if (rank < 1 || rank > 3 || strlen(path) >= sizeof((h5out_rows *)0)->path)
        return diag_set(err, CDLAB_ERR_ARG,
                        "%s: an array of rank %d (1 to 3) and a path of "
                        "at most 255 characters",
                        path, rank);
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
    r->ds = r->sp >= 0 && lcpl >= 0 && H5Pset_create_intermediate_group(lcpl, 1) >= 0
                ? H5Dcreate2(h->file, path, mem_type(type), r->sp, lcpl, H5P_DEFAULT, H5P_DEFAULT)
                : H5I_INVALID_HID;
    if (!closed(lcpl) && r->ds >= 0) {
        closed(r->ds);
        r->ds = H5I_INVALID_HID;
    }
    if (r->ds < 0) {
        status s = fail(h, err, "creating", path);
        closed(r->sp);
        free(r);
        return s;
    }
    r->entry =
        h5ledger_dataset(h->ledger, path, (int)type, array_row_bytes(type, rank, dims), dims[0], 0);
    ledger_lost(h, r->entry);
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
    herr_t rc;
    if (first == 0 && (hsize_t)n == r->dims[0]) { /* all of it: as h5out_array writes */
        rc = H5Dwrite(r->ds, mem_type(r->type), H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    } else {
        hsize_t start[3] = {(hsize_t)first, 0, 0}, count[3];
        for (int k = 0; k < r->rank; k++)
            count[k] = k == 0 ? (hsize_t)n : r->dims[k];
        hid_t mem = H5Screate_simple(r->rank, count, NULL);
        rc = mem >= 0 ? H5Sselect_hyperslab(r->sp, H5S_SELECT_SET, start, NULL, count, NULL) : -1;
        if (rc >= 0)
            rc = H5Dwrite(r->ds, mem_type(r->type), mem, r->sp, H5P_DEFAULT, data);
        if (!closed(mem))
            rc = -1;
    }
    if (rc < 0)
        return fail(r->h, err, "writing", r->path);
    if (r->entry >= 0 && !h5ledger_add_rows(r->h->ledger, r->entry, data, first, n))
        r->h->ledger_lost = 1;
    return CDLAB_OK;
}

status h5out_rows_end(h5out_rows *r, diag *err)
{
    if (!r)
        return CDLAB_OK;
    h5out *h = r->h;
    errno = 0;
    /* the dataset's close writes what HDF5 kept of its rows: a failure there is the run's
     * (after it the file is written no more, and its close discards HDF5's caches) */
    int ok = closed(r->ds);
    ok = closed(r->sp) && ok;
    status s = CDLAB_OK;
    if (!ok)
        s = h->failed ? refuse(h, err) : fail(h, err, "writing", r->path);
    else if (!h->failed)
        s = write_checksum(h, r->path, r->entry, err);
    free(r);
    return s;
}

status h5out_array(h5out *h, const char *path, h5type type, int rank, const long *dims,
                   const void *data, diag *err)
{
    if (h->failed)
        return refuse(h, err);
    if (h->counter)
        return CDLAB_OK;
    h5out_rows *r;
    status s = h5out_rows_begin(h, path, type, rank, dims, &r, err);
    if (s != CDLAB_OK)
        return s;
    s = h5out_rows_write(r, 0, dims[0], data, err);
    status s2 = h5out_rows_end(r, s == CDLAB_OK ? err : &(diag){{0}});
    return s == CDLAB_OK ? s2 : s;
}

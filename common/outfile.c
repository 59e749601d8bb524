/* Output files that never destroy data: see outfile.h. */
#define _GNU_SOURCE /* realpath; F_OFD_SETLK (Linux open file description locks) */
#include "outfile.h"

#include "h5io.h"
#include "xdmf.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void outfile_folder(const char *path, char *buf, size_t n)
{
    char tmp[OUTFILE_PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", path);
    snprintf(buf, n, "%s", dirname(tmp));
}

static void base_of(const char *path, char *buf, size_t n)
{
    char tmp[OUTFILE_PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", path);
    snprintf(buf, n, "%s", basename(tmp));
}

int outfile_same(const char *a, const char *b)
{
    struct stat sa, sb;
    int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea && eb)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (ea != eb)
        return 0;
    /* neither exists yet: the same name in the same (resolved) folder */
    char da[OUTFILE_PATH_MAX], db[OUTFILE_PATH_MAX], ra[PATH_MAX], rb[PATH_MAX];
    char na[OUTFILE_PATH_MAX], nb[OUTFILE_PATH_MAX];
    outfile_folder(a, da, sizeof da);
    outfile_folder(b, db, sizeof db);
    base_of(a, na, sizeof na);
    base_of(b, nb, sizeof nb);
    if (!realpath(da, ra) || !realpath(db, rb))
        return strcmp(a, b) == 0;
    return strcmp(ra, rb) == 0 && strcmp(na, nb) == 0;
}

/* The lock: an open file description lock (Linux), not a classic POSIX record lock, which the
 * process would lose as soon as any of its descriptors of the file is closed (HDF5 opens and
 * closes the file on its own), and not flock, which would keep readers out (HDF5 readers take
 * a shared flock). Whether another open description holds it: */
static int locked_by_other(int fd)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    if (fcntl(fd, F_OFD_GETLK, &fl) != 0)
        return 0;
    return fl.l_type != F_UNLCK;
}

void outfile_checkpoint_path(const char *out, char *buf, size_t n)
{
    size_t len = strlen(out);
    int part = len > 8 && strcmp(out + len - 8, ".partial") == 0;
    snprintf(buf, n, "%.*s.checkpoint", (int)(part ? len - 8 : len), out);
}

/* fsync(fd), where 0 also means a file system that cannot sync (EINVAL, ENOTSUP: some network
 * and FUSE file systems; the data are written as the system writes them): only a write that
 * failed (EIO, a full disk or quota) is an error. */
static int sync_failed(int fd)
{
    return fsync(fd) != 0 && (errno == EIO || errno == ENOSPC || errno == EDQUOT);
}

/* Makes a rename in path's folder durable. */
static void sync_folder(const char *path)
{
    char dir[OUTFILE_PATH_MAX];
    outfile_folder(path, dir, sizeof dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

status outfile_put(const char *partial, const char *final, const char *what, diag *err)
{
    int fd = open(partial, O_RDONLY);
    status s = CDLAB_OK;
    if (fd < 0 || sync_failed(fd))
        s = diag_set(err, CDLAB_ERR_IO, "%s: cannot make %s durable: %s", partial, what,
                     strerror(errno));
    if (fd >= 0)
        close(fd);
    if (s == CDLAB_OK && rename(partial, final) != 0)
        s = diag_set(err, CDLAB_ERR_IO, "%s: cannot rename to %s: %s", partial, final,
                     strerror(errno));
    if (s != CDLAB_OK) {
        unlink(partial);
        return s;
    }
    sync_folder(final);
    return CDLAB_OK;
}

status outfile_put_checkpoint(const outfile *o, diag *err)
{
    return outfile_put(o->ckpt_partial, o->ckpt, "the checkpoint's copy", err);
}

void outfile_drop_checkpoint(const outfile *o)
{
    unlink(o->ckpt);
    unlink(o->ckpt_partial);
}

/* The output that shares OUT.xmf with o's (OUT.h5 and OUT) is being written by a run: its
 * .partial exists and another open description holds its lock. */
static int twin_running(const outfile *o)
{
    char twin[OUTFILE_PATH_MAX + 16];
    size_t len = strlen(o->final);
    if (len > 3 && strcmp(o->final + len - 3, ".h5") == 0)
        snprintf(twin, sizeof twin, "%.*s.partial", (int)(len - 3), o->final);
    else
        snprintf(twin, sizeof twin, "%s.h5.partial", o->final);
    int fd = open(twin, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int held = locked_by_other(fd);
    close(fd);
    return held;
}

/* OUT.h5.checkpoint holds nothing that OUT.h5 does not: OUT.h5 says its run completed, and its
 * last checkpoint is the copy's step or later. */
static int copy_redundant(const outfile *o)
{
    char *said = NULL, last[256], copied[256];
    diag ignore;
    int done = h5in_read_attr_string(o->final, "/summary", "status", &said, &ignore) == CDLAB_OK &&
               strcmp(said, "completed") == 0;
    free(said);
    h5in *h;
    if (!done || h5in_open(&h, o->ckpt, &ignore) != CDLAB_OK)
        return 0;
    int ok = h5in_last_child(h, "/checkpoints", NULL, copied, &ignore) == CDLAB_OK;
    h5in_close(h);
    if (!ok || h5in_open(&h, o->final, &ignore) != CDLAB_OK)
        return 0;
    ok = h5in_last_child(h, "/checkpoints", NULL, last, &ignore) == CDLAB_OK;
    h5in_close(h);
    size_t la = strlen(last), lc = strlen(copied);
    return ok && (la > lc || (la == lc && strcmp(last, copied) >= 0));
}

/* The output's own names (OUT.h5, and OUT.xmf, its sidecar): refused where they name something
 * that is not a file, where they exist without --overwrite, or where the sidecar belongs to
 * the other output that shares it (OUT.h5 and OUT). */
static status check_existing(outfile *o, const char *final, int overwrite, diag *err)
{
    struct stat st;
    if (stat(final, &st) == 0) {
        if (!S_ISREG(st.st_mode))
            return diag_set(err, CDLAB_ERR_ARG,
                            "%s is not a regular file: give a file name for the output with -o",
                            final);
        if (!overwrite)
            return diag_set(err, CDLAB_ERR_ARG,
                            "%s exists: give --overwrite to replace it (the old file is kept until "
                            "the new run has completed) or another name with -o",
                            final);
        o->existed = 1;
    }
    if (stat(o->xmf_final, &st) == 0) {
        if (!S_ISREG(st.st_mode))
            return diag_set(err, CDLAB_ERR_ARG,
                            "%s (the output's XDMF sidecar) is not a regular file: move it or give "
                            "another name with -o",
                            o->xmf_final);
        if (!overwrite)
            return diag_set(err, CDLAB_ERR_ARG,
                            "%s (the XDMF sidecar of %s) exists: give --overwrite to replace it or "
                            "another name with -o",
                            o->xmf_final, final);
        /* OUT.h5 and OUT share OUT.xmf: --overwrite for one replaced the other's sidecar,
         * which ParaView then opened as the new run's */
        char named[PATH_MAX];
        if (xdmf_sidecar_names(o->xmf_final, named, sizeof named)) {
            const char *slash = strrchr(final, '/'), *base = slash ? slash + 1 : final;
            char other[OUTFILE_PATH_MAX + PATH_MAX];
            snprintf(other, sizeof other, "%.*s%s", (int)(base - final), final, named);
            if (strcmp(named, base) != 0 && stat(other, &st) == 0 && S_ISREG(st.st_mode))
                return diag_set(err, CDLAB_ERR_ARG,
                                "%s is the XDMF sidecar of %s, not of %s: --overwrite replaces "
                                "the output's own files only. Give another name with -o, or "
                                "move %s first",
                                o->xmf_final, other, final, o->xmf_final);
        }
    }
    return CDLAB_OK;
}

/* OUT.h5.partial created, exclusively: another run's (locked) or a killed one's is refused. */
static status create_partial(outfile *o, const char *final, int *fd_out, diag *err)
{
    struct stat st;
    int fd = open(o->partial, O_RDWR | O_CREAT | O_EXCL, 0644);
    if (fd < 0 && errno == EEXIST) {
        int fd2 = open(o->partial, O_RDWR);
        int held = fd2 >= 0 && locked_by_other(fd2);
        if (fd2 >= 0)
            close(fd2);
        if (held)
            return diag_set(err, CDLAB_ERR_ARG,
                            "another cdlab run is writing %s (into %s): wait for it or give "
                            "another name with -o",
                            final, o->partial);
        int copy = stat(o->ckpt, &st) == 0;
        return diag_set(err, CDLAB_ERR_ARG,
                        "%s exists: it was left by a run that was killed, or that failed while "
                        "%s existed, and holds its data up to its last snapshot (cdlab info %s; "
                        "continue it with --restart %s%s%s%s). Move or remove it first",
                        o->partial, final, o->partial, o->partial,
                        copy ? ", or with --restart " : "", copy ? o->ckpt : "",
                        copy ? ", the last checkpoint's copy, should that file be unreadable" : "");
    }
    if (fd < 0)
        return diag_set(err, CDLAB_ERR_IO, "%s: cannot create: %s", o->partial, strerror(errno));
    *fd_out = fd;
    return CDLAB_OK;
}

/* The helpers beside OUT.h5.partial (open on fd) claimed: the checkpoint's copy and its
 * partial name must not be there (a killed run's restart, or something planted), a killed
 * run's leftover sidecar is removed, the sidecar's partial name created exclusively, and the
 * lock taken. On a refusal OUT.h5.partial is removed and fd closed. */
static status claim_helpers(outfile *o, int fd, int overwrite, diag *err)
{
    struct stat st;
    /* a run killed after its file was in place, before its copy was removed: the copy holds
     * nothing the file does not, and --overwrite replaces both */
    if (lstat(o->ckpt, &st) == 0 && overwrite && copy_redundant(o))
        unlink(o->ckpt);
    if (lstat(o->ckpt, &st) == 0) { /* a killed run's restart: not overwritten */
        unlink(o->partial);
        close(fd);
        return diag_set(err, CDLAB_ERR_ARG,
                        "%s exists: the copy of the last checkpoint of a run that was killed "
                        "(continue it with --restart %s). Move or remove it first",
                        o->ckpt, o->ckpt);
    }
    if (lstat(o->ckpt_partial, &st) == 0) { /* never followed nor written over */
        unlink(o->partial);
        close(fd);
        return diag_set(err, CDLAB_ERR_ARG,
                        "%s exists: left by a run killed while it wrote its checkpoint's copy (an "
                        "incomplete copy), or put there. Move or remove it first",
                        o->ckpt_partial);
    }
    /* a sidecar left by a run killed between its two final renames (its file in place, the
     * sidecar not): no run writes it (the run that would is the one holding OUT.h5.partial,
     * or its twin's: this one, or none), so it is removed */
    if (lstat(o->xmf_partial, &st) == 0 && !twin_running(o))
        unlink(o->xmf_partial);
    /* the sidecar's temporary name claimed too: OUT.h5 and OUT (no .h5) share OUT.xmf, and
     * two such runs at once wrote into one OUT.xmf.partial, which ended as no XML */
    int xfd = open(o->xmf_partial, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (xfd < 0) {
        int e = errno;
        unlink(o->partial);
        close(fd);
        return e == EEXIST ? diag_set(err, CDLAB_ERR_ARG,
                                      "%s exists: another cdlab run is writing the sidecar %s "
                                      "(an output OUT.h5 and one named OUT share it), or a killed "
                                      "run left it. Move or remove it first, or give another "
                                      "name with -o",
                                      o->xmf_partial, o->xmf_final)
                           : diag_set(err, CDLAB_ERR_IO, "%s: cannot create: %s", o->xmf_partial,
                                      strerror(e));
    }
    close(xfd);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    if (fcntl(fd, F_OFD_SETLK, &fl) != 0) {
        unlink(o->xmf_partial);
        close(fd);
        return diag_set(err, CDLAB_ERR_ARG, "%s: another process holds it: %s", o->partial,
                        strerror(errno));
    }
    o->fd = fd;
    return CDLAB_OK;
}

/* outfile_claim's checks, without creating anything (o: its names filled in). */
static status claim_checks(outfile *o, const char *final, int overwrite, diag *err)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    /* an empty name once ran and wrote .partial, .checkpoint and .xmf.partial, then failed to
     * rename to "" (exit 1); a folder's name ("out/") gave "out/.partial: cannot create" */
    size_t len = strlen(final);
    if (len == 0 || final[len - 1] == '/')
        return diag_set(err, CDLAB_ERR_ARG,
                        "'%s' names no file: give a file name for the output (-o or output.file)",
                        final);
    if (len + 16 >= OUTFILE_PATH_MAX)
        return diag_set(err, CDLAB_ERR_ARG, "output file name too long: %s", final);
    snprintf(o->final, sizeof o->final, "%s", final);
    o->overwrite = overwrite;
    snprintf(o->partial, sizeof o->partial, "%s.partial", final);
    xdmf_sidecar_path(final, o->xmf_final, sizeof o->xmf_final);
    snprintf(o->xmf_partial, sizeof o->xmf_partial, "%s.partial", o->xmf_final);
    outfile_checkpoint_path(final, o->ckpt, sizeof o->ckpt);
    snprintf(o->ckpt_partial, sizeof o->ckpt_partial, "%s.partial", o->ckpt);
    status s = check_existing(o, final, overwrite, err);
    if (s != CDLAB_OK)
        return s;
    struct stat st;
    char dir[OUTFILE_PATH_MAX];
    outfile_folder(final, dir, sizeof dir);
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) /* it said "Permission denied" */
        return diag_set(err, CDLAB_ERR_IO, "%s: %s is not a folder (%s)", final, dir,
                        strerror(ENOTDIR));
    if (access(dir, W_OK | X_OK) != 0)
        return diag_set(err, CDLAB_ERR_IO, "%s: cannot write into the folder %s: %s", final, dir,
                        strerror(errno));
    return CDLAB_OK;
}

status outfile_check(const char *final, int overwrite, diag *err)
{
    outfile o;
    return claim_checks(&o, final, overwrite, err);
}

status outfile_claim(outfile *o, const char *final, int overwrite, diag *err)
{
    status s = claim_checks(o, final, overwrite, err);
    if (s != CDLAB_OK)
        return s;
    int fd = -1;
    if ((s = create_partial(o, o->final, &fd, err)) != CDLAB_OK)
        return s;
    return claim_helpers(o, fd, overwrite, err);
}

/* The open OUT.h5.partial has no name left: removed while the run wrote it (a file moved
 * elsewhere keeps its link, and its data). */
static int removed(const outfile *o)
{
    struct stat st;
    return o->fd >= 0 && fstat(o->fd, &st) == 0 && st.st_nlink == 0;
}

/* rename(from, to); where the run was not given --overwrite, never over a file that appeared
 * at `to` meanwhile (renameat2's RENAME_NOREPLACE; where the file system has none, link and
 * unlink, whose link fails on an existing name as well). 0, or -1 with errno. */
static int put_name(const char *from, const char *to, int replace)
{
    if (replace)
        return rename(from, to);
#ifdef RENAME_NOREPLACE
    if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
        return 0;
    if (errno != EINVAL && errno != ENOSYS)
        return -1;
#endif
    if (link(from, to) != 0)
        return -1;
    return unlink(from) == 0 || errno == ENOENT ? 0 : -1;
}

status outfile_commit(outfile *o, int completed, int *kept_partial, diag *err)
{
    *kept_partial = 0;
    status s = CDLAB_OK;
    struct stat st;
    /* durable before the name says so (a power loss after the rename leaves the whole file),
     * and before the caller removes the checkpoint's copy; a device that cannot is reported,
     * the data left in the .partial file */
    if (o->fd >= 0 && sync_failed(o->fd)) {
        s = diag_set(err, CDLAB_ERR_IO,
                     "%s: the system could not write it to the device: %s (the data stay in "
                     "%s, maybe not whole)",
                     o->partial, strerror(errno), o->partial);
    } else if (o->fd >= 0 && !removed(o) && !outfile_names_fd(o->partial, o->fd)) {
        /* another file under the run's name: not taken for the run's output */
        unlink(o->xmf_partial);
        s = diag_set(err, CDLAB_ERR_IO,
                     "%s was replaced while the run wrote it: it is not renamed to %s (this "
                     "run's own file is no longer under that name)",
                     o->partial, o->final);
    } else if (completed || !o->existed) {
        if (put_name(o->partial, o->final, o->overwrite) != 0) {
            int e = errno;
            /* gone from its name: removed (its data lost), or moved (they went with it) */
            int moved = e == ENOENT && o->fd >= 0 && !removed(o);
            if (e == ENOENT)
                unlink(o->xmf_partial); /* the sidecar names a file that is not beside it */
            if (e == EEXIST) {
                *kept_partial = 1;
                unlink(o->xmf_partial);
                s = diag_set(err, CDLAB_ERR_IO,
                             "%s appeared while the run wrote (without --overwrite): it is not "
                             "replaced, this run's data are in %s",
                             o->final, o->partial);
            } else
                s = diag_set(err, CDLAB_ERR_IO, "%s: cannot rename to %s: %s (%s%s)", o->partial,
                             o->final, strerror(e),
                             e != ENOENT ? "the data are in "
                             : moved     ? "it was moved while the run wrote it: the data went "
                                           "with it"
                                     : "it was removed while the run wrote it: its data are lost",
                             e == ENOENT ? "" : o->partial);
        } else if (stat(o->xmf_partial, &st) == 0 &&
                   put_name(o->xmf_partial, o->xmf_final, o->overwrite) != 0) {
            int e = errno;
            s = diag_set(err, CDLAB_ERR_IO, "%s: cannot rename to %s: %s%s", o->xmf_partial,
                         o->xmf_final, strerror(e),
                         e == EEXIST ? " (a file appeared there while the run wrote, without "
                                       "--overwrite: not replaced)"
                                     : "");
        }
        sync_folder(o->final);
    } else {
        /* the old OUT.h5 stays; the sidecar names OUT.h5, so it would show the old file */
        *kept_partial = 1;
        unlink(o->xmf_partial);
    }
    if (o->fd >= 0)
        close(o->fd);
    o->fd = -1;
    return s;
}

int outfile_create_new(const char *path, const char *what, diag *err)
{
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0)
        diag_set(err, CDLAB_ERR_IO,
                 errno == EEXIST ? "%s: cannot create %s: something is there already (left by a "
                                   "run that was killed, or put there while this one ran): not "
                                   "written over%s"
                                 : "%s: cannot create %s: %s",
                 path, what, errno == EEXIST ? "" : strerror(errno));
    return fd;
}

int outfile_names_fd(const char *path, int fd)
{
    struct stat a, b;
    return fd >= 0 && lstat(path, &a) == 0 && fstat(fd, &b) == 0 && S_ISREG(a.st_mode) &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

void outfile_fd_path(int fd, char *buf, size_t n)
{
    snprintf(buf, n, "/proc/self/fd/%d", fd);
}

status outfile_present(const outfile *o, diag *err)
{
    if (removed(o))
        return diag_set(err, CDLAB_ERR_IO,
                        "%s was removed while the run wrote it: the run stops, its series and "
                        "snapshots are lost",
                        o->partial);
    if (o->fd >= 0 && !outfile_names_fd(o->partial, o->fd))
        return diag_set(err, CDLAB_ERR_IO,
                        "%s was replaced while the run wrote it (another file or a link is under "
                        "its name now): the run stops; its own file is no longer under that name, "
                        "and the one there is not renamed to %s",
                        o->partial, o->final);
    return CDLAB_OK;
}

void outfile_abandon(outfile *o)
{
    if (o->fd < 0)
        return;
    /* only the run's own file: another one put under its name is left as it is */
    if (outfile_names_fd(o->partial, o->fd))
        unlink(o->partial);
    unlink(o->xmf_partial);
    close(o->fd);
    o->fd = -1;
}

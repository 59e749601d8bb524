/* FCLIB export of a CD step's contact problem (Debian libfclib-dev).
 * fclib.h selects HDF5 API versions of its own, so it is included only here.
 *
 * libfclib is loaded with dlopen when an export is asked for, not linked: it is linked to the
 * shared HDF5, whose S3 driver brings the curl/TLS/Kerberos chain, and the cdlab program links
 * the static HDF5 without it (Makefile, HDF5_STATIC). The library's HDF5 writes the problem and
 * closes the file; cdlab's own HDF5 then adds the /cdlab group. A program that links libfclib
 * itself (the test suites) gets the same library back from dlopen. */
#define _GNU_SOURCE /* close_range */
#include "nscd/cd_contact_problem.h"

#include "h5io.h"
#include "outfile.h"

#include <fclib.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Debian's libfclib0 */
#define FCLIB_SONAME "libfclib.so.0"

static struct {
    int tried;
    char why[400]; /* dlopen's or dlsym's message, when loading failed */
    __typeof__(&fclib_write_local) write_local;
    __typeof__(&fclib_write_solution) write_solution;
} fclib_lib;

/* dlsym's object pointer into a function pointer (ISO C has no conversion between the two);
 * 0 when the library lacks the symbol, its message kept in fclib_lib.why */
static int take_symbol(void *lib, const char *name, void *fn_ptr)
{
    dlerror();
    void *sym = dlsym(lib, name);
    const char *why = dlerror();
    if (why || !sym) {
        snprintf(fclib_lib.why, sizeof fclib_lib.why, "%s", why ? why : name);
        return 0;
    }
    memcpy(fn_ptr, &sym, sizeof sym);
    return 1;
}

status contact_problem_fclib_load(diag *err)
{
    if (!fclib_lib.tried) {
        fclib_lib.tried = 1;
        void *lib = dlopen(FCLIB_SONAME, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char *why = dlerror();
            snprintf(fclib_lib.why, sizeof fclib_lib.why, "%s", why ? why : "not found");
        } else if (!take_symbol(lib, "fclib_write_local", &fclib_lib.write_local) ||
                   !take_symbol(lib, "fclib_write_solution", &fclib_lib.write_solution)) {
            /* not the library this was built for (the first symbol it lacks is named) */
            fclib_lib.write_local = NULL;
            fclib_lib.write_solution = NULL;
            dlclose(lib);
        }
    }
    if (fclib_lib.write_local)
        return CDLAB_OK;
    return diag_set(err, CDLAB_ERR_ARG,
                    "--export-fclib needs the FCLIB library (" FCLIB_SONAME
                    ", Debian package libfclib0; make deps installs it): %s",
                    fclib_lib.why);
}

/* The reason in what the library and its HDF5 printed: the system's error message of the
 * failed write ("error message = 'No space left on device'"), else the last line. */
static void child_reason(const char *text, char *why, size_t n)
{
    const char *tag = "error message = '", *m = strstr(text, tag);
    if (m) {
        m += strlen(tag);
        const char *end = strchr(m, '\'');
        snprintf(why, n, "HDF5: %.*s", (int)(end ? end - m : (long)strlen(m)), m);
        return;
    }
    const char *last = NULL;
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        if ((nl ? nl - line : (long)strlen(line)) > 0)
            last = line;
        line = nl ? nl + 1 : line + strlen(line);
    }
    if (last)
        snprintf(why, n, "%.*s", (int)strcspn(last, "\n"), last);
    else
        snprintf(why, n, "no message; a full disk?");
}

/* fclib_write_local and fclib_write_solution into the new file `tmp`, in a child process: the
 * library ends the process (exit(1)) at any HDF5 error, a full disk for one, and HDF5's exit
 * handlers then crashed it (SIGSEGV), the run's own file left unfinished. The child holds none of
 * the parent's files (closed first: the exit handlers flush every open HDF5 file) and ends with
 * _exit; its standard error comes back through a pipe (HDF5's error stack, forty lines, was
 * printed above cdlab's message), the reason in it into why. 1: written, 0: not, -1: no child
 * process (errno says why). */
static int write_in_child(struct fclib_local *prob, struct fclib_solution *sol, const char *tmp,
                          char *why, size_t why_n)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    fflush(NULL); /* buffered output would be written twice */
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(fd[0]);
        close(fd[1]);
        errno = e;
        return -1;
    }
    if (pid == 0) {
        dup2(fd[1], STDERR_FILENO);
        close_range(3, ~0U, 0);
        int ok = fclib_lib.write_local(prob, tmp) && fclib_lib.write_solution(sol, tmp);
        _exit(ok ? 0 : 1);
    }
    close(fd[1]);
    /* read to the end (a child that fills the pipe would wait for ever), the first 16 kB kept */
    char text[16384];
    size_t got = 0;
    for (;;) {
        char chunk[4096];
        ssize_t r = read(fd[0], chunk, sizeof chunk);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        size_t take = (size_t)r < sizeof text - 1 - got ? (size_t)r : sizeof text - 1 - got;
        memcpy(text + got, chunk, take);
        got += take;
    }
    text[got] = '\0';
    close(fd[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    if (!ok)
        child_reason(text, why, why_n);
    return ok;
}

int contact_problem_stale_partials(const char *path, char said[][STALE_NOTICE_MAX], int max)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path + (slash == path)), path);
    else
        snprintf(dir, sizeof dir, ".");
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t len = strlen(base);
    int n = 0;
    for (struct dirent *e; n < max && (e = readdir(d)) != NULL;) {
        const char *name = e->d_name, *digits = name + len + 1;
        if (strncmp(name, base, len) != 0 || name[len] != '.')
            continue;
        char *end;
        errno = 0;
        long pid = strtol(digits, &end, 10);
        if (end == digits || *digits < '0' || *digits > '9' || errno ||
            strcmp(end, ".partial") != 0 || pid <= 0 || pid == (long)getpid())
            continue;
        if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) /* running, or not ours to ask */
            continue;
        snprintf(said[n++], STALE_NOTICE_MAX,
                 "notice: %s%s%s: the partial file of an export that was killed (its process "
                 "%ld is gone); cdlab does not use it: remove it",
                 slash ? dir : "", slash && strcmp(dir, "/") != 0 ? "/" : "", name, pid);
    }
    closedir(d);
    return n;
}

/* cdlab's own record of where the problem comes from: the /cdlab group of the export. */
static status write_provenance(h5out *h, const contact_problem *cp, const fclib_meta *meta,
                               diag *err)
{
    long nc = cp->nc, fr[3] = {cp->nc, cp->d, 3};
    status s;
    const char *g = "/cdlab";
    if ((s = h5out_group(h, g, err)) || (s = h5out_attr_int(h, g, "step", meta->step, err)) ||
        (s = h5out_attr_double(h, g, "t", meta->t, err)) ||
        (s = h5out_attr_double(h, g, "dt", meta->dt, err)) ||
        (s = h5out_attr_int(h, g, "sweeps", meta->sweeps, err)) ||
        (s = h5out_attr_int(h, g, "converged", meta->converged, err)) ||
        (s = h5out_attr_double(h, g, "solver_residual", meta->solver_residual, err)) ||
        (s = h5out_attr_string(h, g, "criterion", meta->criterion, err)) ||
        (s = h5out_attr_string(h, g, "sweep", meta->sweep, err)) ||
        (s = h5out_attr_double(h, g, "epsilon", meta->epsilon, err)) ||
        (s = h5out_attr_double(h, g, "natural_map_residual", meta->natural_map, err)) ||
        (s = h5out_attr_string(h, g, "natural_map_rho", "1 (FCLIB's and Siconos's error)", err)) ||
        (s = h5out_attr_double(h, g, "natural_map_residual_inv_w", meta->natural_map_inv_w, err)) ||
        (s = h5out_attr_string(h, g, "units",
                               "r: impulse (force x time); u, q: velocity; W: 1/mass", err)) ||
        (s = h5out_array(h, "/cdlab/body0", H5IO_INT32, 1, &nc, cp->body0, err)) ||
        (s = h5out_array(h, "/cdlab/body1", H5IO_INT32, 1, &nc, cp->body1, err)) ||
        (s = h5out_array(h, "/cdlab/gap", H5IO_DOUBLE, 1, &nc, cp->gap, err)) ||
        (s = h5out_array(h, "/cdlab/frame", H5IO_DOUBLE, 3, fr, cp->frame, err)))
        return s;
    return CDLAB_OK;
}

status contact_problem_write_fclib(const contact_problem *cp, const char *path,
                                   const fclib_meta *meta, diag *err)
{
    status s = contact_problem_fclib_load(err);
    if (s != CDLAB_OK)
        return s;
    char comment[] = "Delassus operator H^T M^-1 H of the step, compressed columns; rows and "
                     "columns in contact order, each contact's axes (n, t1[, t2])";
    struct fclib_matrix_info minfo = {
        .comment = comment, .conditioning = -1.0, .determinant = -1.0, .rank = -1};
    struct fclib_matrix Wm = {.nzmax = cp->nnz,
                              .m = cp->m,
                              .n = cp->m,
                              .p = cp->colptr,
                              .i = cp->row,
                              .x = cp->val,
                              .nz = -1,
                              .info = &minfo};
    char math[] = "W symmetric positive semi-definite; q includes g_pos/dt on the normal "
                  "(shock law with g_pos, Unger & Kertesz eqs. 33-34); r = contact impulse R dt";
    struct fclib_info info = {
        .title = (char *)meta->title, .description = (char *)meta->description, .math_info = math};
    struct fclib_local prob = {.W = &Wm,
                               .V = NULL,
                               .R = NULL,
                               .mu = cp->mu,
                               .q = cp->q,
                               .s = NULL,
                               .spacedim = cp->d,
                               .info = &info};
    if (cp->nc == 0)
        return diag_set(err, CDLAB_ERR_ARG,
                        "step %ld has no contacts: there is no contact problem to export",
                        meta->step);
    /* written whole as PATH.PID.partial, then renamed over PATH (a write that failed, a full
     * disk, had left part of the new problem under PATH, the old file removed first);
     * fclib_write_local adds to an existing file and refuses a second problem: a new one */
    char tmp[PATH_MAX + 48];
    snprintf(tmp, sizeof tmp, "%s.%ld.partial", path, (long)getpid());
    if (unlink(tmp) != 0 && errno != ENOENT)
        return diag_set(err, CDLAB_ERR_IO, "%s: cannot replace: %s", tmp, strerror(errno));
    struct fclib_solution sol = {.v = NULL, .u = cp->u, .r = cp->r, .l = NULL};
    char why[512] = "";
    int written = write_in_child(&prob, &sol, tmp, why, sizeof why);
    if (written != 1) {
        if (written < 0)
            snprintf(why, sizeof why, "no process to write it: %s", strerror(errno));
        unlink(tmp);
        return diag_set(err, CDLAB_ERR_IO, "%s: fclib could not write the problem (%s)%s", path,
                        why, access(path, F_OK) == 0 ? "; the older file is kept" : "");
    }

    h5out *h;
    s = h5out_open(&h, tmp, err);
    if (s != CDLAB_OK) {
        unlink(tmp);
        return s;
    }
    if ((s = write_provenance(h, cp, meta, err)) != CDLAB_OK) {
        diag ignored;
        h5out_close(h, &ignored);
        unlink(tmp);
        return s;
    }
    if ((s = h5out_close(h, err)) != CDLAB_OK) {
        unlink(tmp);
        return s;
    }
    return outfile_put(tmp, path, "the FCLIB export", err);
}

/* Output files that never destroy data (docs/output.md, "Overwrite policy").
 *
 * A run writes OUT.h5 (and its sidecar OUT.xmf) under temporary names in the same folder,
 * OUT.h5.partial and OUT.xmf.partial, holding a POSIX record lock on OUT.h5.partial while it
 * writes. When the run ends the files are renamed into place (an atomic replacement):
 *   - always when the run completed;
 *   - when it failed or was interrupted, only if no OUT.h5 existed before (otherwise the old
 *     file stays and the new data stay in the .partial files, and the caller says so);
 *   - never when nothing was written (a refused command): the .partial files are removed.
 * An existing OUT.h5 is refused unless overwrite is set; another run writing the same OUT.h5
 * (its lock is held) is refused; a .partial left by a killed run is refused (it holds data).
 * A killed process leaves OUT.h5.partial, readable up to its last flushed snapshot.
 *
 * The checkpoint's copy: HDF5 writes its metadata in place, so a kill that lands inside a flush
 * can leave OUT.h5.partial unreadable. Each checkpoint is therefore also written whole into a
 * file of its own, OUT.h5.checkpoint.partial, made durable (fsync) and renamed over
 * OUT.h5.checkpoint: at any moment OUT.h5.checkpoint is a complete checkpoint or absent. It is
 * removed once the run's file was closed whole and is on the device (outfile_commit), kept
 * otherwise; a run does not start while one is left over (it holds a killed run's restart). */
#ifndef CDLAB_OUTFILE_H
#define CDLAB_OUTFILE_H

#include "status.h"

#include <limits.h>
#include <stddef.h>

/* an output's path, as the system allows (its derived names have room for their suffixes) */
#define OUTFILE_PATH_MAX PATH_MAX

typedef struct outfile {
    char final[OUTFILE_PATH_MAX];          /* OUT.h5 */
    char partial[OUTFILE_PATH_MAX + 16];   /* OUT.h5.partial: the HDF5 file while the run writes */
    char xmf_final[OUTFILE_PATH_MAX + 16]; /* OUT.xmf */
    char xmf_partial[OUTFILE_PATH_MAX + 32];  /* OUT.xmf.partial */
    char ckpt[OUTFILE_PATH_MAX + 16];         /* OUT.h5.checkpoint: the last checkpoint's copy */
    char ckpt_partial[OUTFILE_PATH_MAX + 32]; /* OUT.h5.checkpoint.partial: the one written */
    int fd;                                   /* open on partial, holding the lock (-1: none) */
    int existed;                              /* OUT.h5 existed at the start (overwrite given) */
    int overwrite;                            /* given: an OUT.h5 there at the end is replaced */
} outfile;

/* Checks that OUT.h5 can be written (a regular file or a new name in an existing, writable
 * folder; absent unless overwrite; its sidecar name not a folder; no run writing it; no
 * .partial left over), then creates and locks OUT.h5.partial. Refusals are CDLAB_ERR_ARG (or
 * CDLAB_ERR_IO with the OS reason) and leave every file as it was. */
status outfile_claim(outfile *o, const char *final, int overwrite, diag *err);
/* outfile_claim's checks alone, creating nothing: a run refuses an output it cannot write
 * before its banner (the claim checks again when it creates the file). */
status outfile_check(const char *final, int overwrite, diag *err);

/* Puts the files in place (rules above), made durable first (fsync; a failure is an error and
 * leaves the .partial files). completed: the run finished every step. On return *kept_partial
 * says whether the data stayed in the .partial files (an older OUT.h5 kept). */
status outfile_commit(outfile *o, int completed, int *kept_partial, diag *err);

/* A file written and closed as `partial`: made durable and renamed over `final` (the folder
 * made durable too); `what` names it in a message. On failure `partial` is removed and `final`
 * stays as it was. */
status outfile_put(const char *partial, const char *final, const char *what, diag *err);
/* The checkpoint's copy written and closed in o->ckpt_partial: made durable and renamed over
 * o->ckpt (the folder made durable too). On failure the partial copy is removed and the older
 * copy, if any, stays. */
status outfile_put_checkpoint(const outfile *o, diag *err);

/* The run's file was closed whole: its checkpoint's copy is removed. */
void outfile_drop_checkpoint(const outfile *o);

/* The path of the checkpoint's copy beside a run's output or its .partial file (OUT.h5 or
 * OUT.h5.partial -> OUT.h5.checkpoint). */
void outfile_checkpoint_path(const char *out, char *buf, size_t n);

/* OUT.h5.partial is still there, and is the run's own: a file removed while the run writes it
 * (a cleanup, a slip) would take every later output with it, and the run would go on for
 * nothing; one put in its place would be taken for the run's output at the end. */
status outfile_present(const outfile *o, diag *err);

/* A helper file created anew at path, exclusively (O_CREAT | O_EXCL | O_NOFOLLOW: a file or a
 * link planted there is neither followed nor written over): its descriptor, or -1 with the
 * reason in err (CDLAB_ERR_IO; "exists" where something is there). */
int outfile_create_new(const char *path, const char *what, diag *err);
/* path names the file open at fd (the same device and inode, and not through a link): a file
 * swapped in under that name while the run wrote is not taken for its own. */
int outfile_names_fd(const char *path, int fd);
/* A name that reaches the file open at fd whatever happened to its own name since
 * (/proc/self/fd/N), into buf (64 bytes hold it). */
void outfile_fd_path(int fd, char *buf, size_t n);

/* Removes the .partial files (nothing worth keeping was written) and releases the lock. */
void outfile_abandon(outfile *o);

/* Whether two paths name the same file: the same device and inode when both exist, else the
 * same resolved folder and name (for files not created yet). */
int outfile_same(const char *a, const char *b);

/* The folder of a path, as dirname gives it ("x.h5": ".", "/x.h5": "/"), into buf. */
void outfile_folder(const char *path, char *buf, size_t n);

#endif

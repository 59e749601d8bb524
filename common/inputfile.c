/* Input files: see inputfile.h. */
#include "inputfile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What a file that is not regular is, for the message. */
static const char *kind_of(mode_t m)
{
    return S_ISDIR(m)    ? "a folder"
           : S_ISFIFO(m) ? "a FIFO (named pipe)"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

/* "a" or "an" before what ("an HDF5 file") */
static const char *article(const char *what)
{
    return strchr("aeiouAEIOUH", what[0]) ? "an" : "a";
}

/* The checked descriptor (blocking again), or -1 with err. */
static int open_checked(const char *path, const char *what, long long max_bytes, diag *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        struct stat st;
        if (e == EISDIR || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
            diag_set(err, CDLAB_ERR_IO, "%s: is a folder, not %s %s", path, article(what), what);
        else
            diag_set(err, CDLAB_ERR_IO, "%s: cannot open %s: %s", path, what, strerror(e));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        diag_set(err, CDLAB_ERR_IO, "%s: cannot read %s: %s", path, what, strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        diag_set(err, CDLAB_ERR_IO, "%s: is %s, not %s %s (a regular file is needed)", path,
                 kind_of(st.st_mode), article(what), what);
        close(fd);
        return -1;
    }
    if (max_bytes > 0 && (long long)st.st_size > max_bytes) {
        char a[24], b[24];
        diag_set(err, CDLAB_ERR_IO, "%s: a file of %s: more than the %s %s %s may have", path,
                 format_bytes((double)st.st_size, a, sizeof a),
                 format_bytes((double)max_bytes, b, sizeof b), article(what), what);
        close(fd);
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

FILE *input_file_open(const char *path, const char *what, long long max_bytes, diag *err)
{
    int fd = open_checked(path, what, max_bytes, err);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        diag_set(err, CDLAB_ERR_IO, "%s: cannot open %s: %s", path, what, strerror(errno));
        close(fd);
    }
    return f;
}

status input_file_check(const char *path, const char *what, long long max_bytes, diag *err)
{
    int fd = open_checked(path, what, max_bytes, err);
    if (fd < 0)
        return CDLAB_ERR_IO;
    close(fd);
    return CDLAB_OK;
}

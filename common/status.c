#include "status.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *status_text(status s)
{
    switch (s) {
#define CDLAB_X_TEXT(name, text)                                                                   \
    case name:                                                                                     \
        return text;
        CDLAB_STATUS_LIST(CDLAB_X_TEXT)
#undef CDLAB_X_TEXT
    }
    return "unknown status";
}

status diag_set(diag *d, status s, const char *fmt, ...)
{
    if (!d)
        return s;
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int need = vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
    char *full = need >= (int)sizeof d->msg ? malloc((size_t)need + 1) : NULL;
    if (full) { /* its start and its end, where the reason and the advice stand */
        vsnprintf(full, (size_t)need + 1, fmt, again);
        static const char cut[] = " [...] ";
        size_t keep = sizeof d->msg - sizeof cut, head = keep / 2, tail = keep - head;
        while (head > 0 && (full[head] & 0xc0) == 0x80) /* whole UTF-8 characters */
            head--;
        while (tail > 0 && (full[need - tail] & 0xc0) == 0x80)
            tail--;
        memcpy(d->msg, full, head);
        memcpy(d->msg + head, cut, sizeof cut - 1);
        memcpy(d->msg + head + sizeof cut - 1, full + need - tail, tail + 1);
        free(full);
    }
    va_end(again);
    return s;
}

int stdout_write_error(void)
{
    errno = 0;
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    return errno ? errno : EIO;
}

int std_streams_safe(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
            continue;
        /* the lowest free descriptor is fd itself: those below it are open */
        int got = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (got != fd) {
            if (got >= 0)
                close(got);
            return -1;
        }
    }
    return 0;
}

int stdout_checked_exit(const char *program, int rc)
{
    int e = stdout_write_error();
    if (e) {
        fprintf(stderr, "%s: cannot write the standard output: %s\n", program, strerror(e));
        rc = rc ? rc : 1;
    }
    return rc;
}

const char *format_bytes(double bytes, char *buf, size_t n)
{
    static const char *const unit[] = {"B", "kB", "MB", "GB", "TB", "PB", "EB"};
    const int last = (int)(sizeof unit / sizeof *unit) - 1;
    double v = bytes;
    int u = 0;
    if (!isfinite(v)) {
        snprintf(buf, n, "%g B", v);
        return buf;
    }
    /* 999.5 would print as 1000 with no decimals: the next unit's 1.00 instead */
    while (u < last && fabs(v) >= 999.5) {
        v /= 1000.0;
        u++;
    }
    int decimals = u == 0 ? 0 : fabs(v) < 9.995 ? 2 : fabs(v) < 99.95 ? 1 : 0;
    snprintf(buf, n, "%.*f %s", decimals, v, unit[u]);
    return buf;
}

#include "status.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

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
    if (d) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(d->msg, sizeof d->msg, fmt, ap);
        va_end(ap);
    }
    return s;
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

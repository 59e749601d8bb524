#include "status.h"

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

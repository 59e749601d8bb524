/* The engine registry (system.mode -> engine table) and the helpers every engine shares. */
#include "engine.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One line per engine: its table, defined in its <name>_engine.c. */
const engine_ops *const engine_registry[] = {&cd_engine_ops, &dem_engine_ops, NULL};

int engine_list_names(const char **names, int max)
{
    int n = 0;
    for (int k = 0; engine_registry[k] && n < max - 1; k++)
        names[n++] = engine_registry[k]->name;
    names[n] = NULL;
    return n;
}

const engine_ops *engine_find(const char *name)
{
    for (int k = 0; engine_registry[k]; k++)
        if (strcmp(engine_registry[k]->name, name) == 0)
            return engine_registry[k];
    return NULL;
}

void engine_say(const engine_notes *n, const char *fmt, ...)
{
    if (!n || !n->message)
        return;
    /* whole however long (a banner line with a long output path was cut at 511 characters) */
    char small[512], *line = small;
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (need >= (int)sizeof small && (line = malloc((size_t)need + 1)) != NULL) {
        va_start(ap, fmt);
        vsnprintf(line, (size_t)need + 1, fmt, ap);
        va_end(ap);
    }
    n->message(n->user, line ? line : small);
    if (line != small)
        free(line);
}

void engine_say_result(const engine_notes *n, const char *line)
{
    if (n && n->result)
        n->result(n->user, line);
    else
        engine_say(n, "%s", line);
}

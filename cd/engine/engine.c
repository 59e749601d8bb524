/* The helpers every engine shares, and the look-ups of the registry (cd/engines.c). */
#include "engine/engine.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

status engine_stress_series(h5out *h, const char *force_note, double volume, int ser[2], diag *err)
{
    static const char *const path[2] = {"/series/stress", "/series/stress_walls"};
    char def[2][400];
    snprintf(def[0], sizeof def[0],
             "Love-Weber sigma_ab = (1/V) sum f_a l_b over particle-particle contacts, f on p, l "
             "from p to q (tension positive)%s",
             force_note ? force_note : "");
    snprintf(def[1], sizeof def[1],
             "sigma_ab = (1/V) sum f_a l_b over the contacts with walls, pistons and cylinders, f "
             "on the particle, l from its centre to the contact point (tension positive)%s; "
             "stress + stress_walls: the particles' mean stress (1/V) sum_p sum_c f_a (x_c - "
             "x_p)_b, at rest without body forces the walls' tractions averaged",
             force_note ? force_note : "");
    long t33[2] = {3, 3};
    status s = CDLAB_OK;
    for (int k = 0; k < 2 && s == CDLAB_OK; k++)
        if ((s = h5out_series(h, path[k], H5IO_DOUBLE, 2, t33, &ser[k], err)) == CDLAB_OK &&
            (s = h5out_attr_string(h, path[k], "definition", def[k], err)) == CDLAB_OK)
            s = h5out_attr_double(h, path[k], "volume", volume, err);
    return s;
}

status engine_stress_row(h5out *h, const int ser[2], double sigma[2][3][3], diag *err)
{
    status s = h5out_series_append(h, ser[0], &sigma[0][0][0], err);
    return s == CDLAB_OK ? h5out_series_append(h, ser[1], &sigma[1][0][0], err) : s;
}

void engine_record_parts(const engine_record *rec, double *v, comm_op *ops)
{
    v[0] = rec->n_contacts, v[1] = rec->n_active, v[2] = rec->mean_overlap * rec->n_active;
    v[3] = rec->n_sliding, v[4] = rec->max_overlap;
    for (int k = 0; k < ENGINE_RECORD_PARTS; k++)
        ops[k] = k < 4 ? COMM_SUM : COMM_MAX;
}

void engine_record_merge(engine_record *rec, const double *v)
{
    rec->n_contacts = (int)v[0], rec->n_active = (int)v[1], rec->n_sliding = (int)v[3];
    rec->mean_overlap = v[1] > 0 ? v[2] / v[1] : 0.0;
    rec->max_overlap = v[4];
}

#include "generate.h"
#include "inputfile.h"

#include "config.h"
#include "h5io.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Attempts per particle before random sequential addition gives up: at that point the box is
 * too full for RSA, and the caller must give a bigger box or fewer particles. */
#define RSA_ATTEMPTS_PER_PARTICLE 20000

void generate_chain(particles *P, double radius, double spacing, vec3 origin, vec3 dir)
{
    double len = v3_norm(dir);
    vec3 u = v3_scale(dir, 1.0 / len);
    for (int k = 0; k < P->n; k++) {
        P->x[k] = v3_axpy(k * (2.0 * radius + spacing), u, origin);
        P->r[k] = radius;
    }
}

status generate_random_box(particles *P, pcg32 *rng, double rmin, double rmax, vec3 lo, vec3 hi,
                           diag *err)
{
    int dim = P->dimension, n = P->n;
    double h = 2.0 * rmax; /* grid cell: overlapping partners lie in adjacent cells */
    vec3 span = v3_sub(hi, lo);
    /* cell counts in double first: a huge box must not overflow an int (found by fuzzing) */
    double gx = floor(span.x / h) + 1.0, gy = dim >= 2 ? floor(span.y / h) + 1.0 : 1.0,
           gz = dim == 3 ? floor(span.z / h) + 1.0 : 1.0;
    if (!(gx * gy * gz <= 1e8))
        return diag_set(err, CDLAB_ERR_ARG,
                        "random packing: box too large for the radii (%.3g grid cells of size "
                        "2 radius_max; at most 1e8)",
                        gx * gy * gz);
    int nx = (int)gx, ny = (int)gy, nz = (int)gz;
    int *head = malloc((size_t)nx * ny * nz * sizeof *head),
        *next = malloc((size_t)(n > 0 ? n : 1) * sizeof *next);
    if (!head || !next) {
        free(head);
        free(next);
        return diag_set(err, CDLAB_ERR_NOMEM, "random packing: out of memory");
    }
    for (int c = 0; c < nx * ny * nz; c++)
        head[c] = -1;
    for (int i = 0; i < n; i++) {
        double r = rmin + (rmax - rmin) * pcg32_uniform(rng);
        int placed = 0;
        for (long a = 0; a < RSA_ATTEMPTS_PER_PARTICLE && !placed; a++) {
            vec3 x = v3(lo.x + r + (span.x - 2 * r) * pcg32_uniform(rng),
                        dim >= 2 ? lo.y + r + (span.y - 2 * r) * pcg32_uniform(rng) : lo.y,
                        dim == 3 ? lo.z + r + (span.z - 2 * r) * pcg32_uniform(rng) : 0.0);
            if (dim == 1)
                x.y = 0.0;
            int cx = (int)((x.x - lo.x) / h), cy = dim >= 2 ? (int)((x.y - lo.y) / h) : 0,
                cz = dim == 3 ? (int)((x.z - lo.z) / h) : 0;
            int ok = 1;
            for (int dz = -1; dz <= 1 && ok; dz++)
                for (int dy = -1; dy <= 1 && ok; dy++)
                    for (int dx = -1; dx <= 1 && ok; dx++) {
                        int X = cx + dx, Y = cy + dy, Z = cz + dz;
                        if (X < 0 || Y < 0 || Z < 0 || X >= nx || Y >= ny || Z >= nz)
                            continue;
                        for (int k = head[(Z * ny + Y) * nx + X]; k >= 0; k = next[k]) {
                            double s = r + P->r[k];
                            if (v3_norm2(v3_sub(x, P->x[k])) < s * s) {
                                ok = 0;
                                break;
                            }
                        }
                    }
            if (ok) {
                P->x[i] = x;
                P->r[i] = r;
                int c = (cz * ny + cy) * nx + cx;
                next[i] = head[c];
                head[c] = i;
                placed = 1;
            }
        }
        if (!placed) {
            free(head);
            free(next);
            return diag_set(err, CDLAB_ERR_ARG,
                            "random packing: could only place %d of %d particles in the box "
                            "(%d attempts for the next one); use a larger box or fewer particles",
                            i, n, RSA_ATTEMPTS_PER_PARTICLE);
        }
    }
    free(head);
    free(next);
    return CDLAB_OK;
}

/* The numbers of a data line into v: their count, want + 1 when there are more than want,
 * -1 at anything that is not a decimal number, -2 at a number out of range, *bad then pointing
 * at it (config_read_number). */
static int parse_numbers(char *p, double *v, int want, const char **bad)
{
    int got = 0;
    for (;;) {
        char *end;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\n' || *p == '\r' || *p == '\0')
            return got;
        if (got == want)
            return got + 1; /* too many columns */
        int r = config_read_number(p, &end, &v[got]);
        if (r == CONFIG_NOT_A_NUMBER || (*end && !strchr(" \t\r\n", *end)))
            return -1;
        if (r == CONFIG_OUT_OF_RANGE) {
            *bad = p;
            *end = '\0';
            return -2;
        }
        got++;
        p = end;
    }
}

/* The numbers' start in a particle file's line, NULL for a blank or comment line: a UTF-8
 * byte order mark (an editor's) before the first line and a comment after the numbers are
 * skipped, as in the config (both were "expected four numbers"). */
static char *data_of_line(char *line, int lineno)
{
    char *p = line;
    if (lineno == 1 && strncmp(p, "\xef\xbb\xbf", 3) == 0)
        p += 3;
    char *hash = strchr(p, '#');
    if (hash)
        *hash = '\0';
    while (*p == ' ' || *p == '\t')
        p++;
    return *p == '\n' || *p == '\r' || *p == '\0' ? NULL : p;
}

/* A missing packing that a study makes (experiments/NAME/out/...): err's message gains the
 * script that makes it. */
static void name_study_script(const char *path, diag *err)
{
    const char *e = strstr(path, "experiments/"), *o = e ? strstr(e, "/out") : NULL;
    if (o && access(path, F_OK) != 0 && o - e - 12 > 0 && o - e - 12 < 64) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%.*s (a file that experiments/%.*s/run.sh makes: run it first)",
                 (int)sizeof msg - 160, err->msg, (int)(o - e - 12), e + 12);
        diag_set(err, CDLAB_ERR_IO, "%s", msg);
    }
}

status generate_load_file(particles *P, const char *path, particle_format fmt, int *count,
                          diag *err)
{
    FILE *f = input_file_open(path, "particle file", 0, err);
    if (!f) {
        name_study_script(path, err);
        return CDLAB_ERR_IO;
    }
    const int want = fmt == PARTICLE_FORMAT_CHUTE ? 11 : 4;
    const char *what = fmt == PARTICLE_FORMAT_CHUTE
                           ? "eleven numbers 'x y z diameter vx vy vz wx wy wz frozen'"
                           : "four numbers 'x y z radius'";
    char line[4096];
    int n = 0, lineno = 0;
    status s = CDLAB_OK;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            s = diag_set(err, CDLAB_ERR_CONFIG, "%s:%d: line longer than %zu characters", path,
                         lineno, sizeof line - 2);
            break;
        }
        char *p = data_of_line(line, lineno);
        if (!p)
            continue;
        double v[11];
        const char *bad = NULL;
        int got = parse_numbers(p, v, want, &bad);
        if (got == -2) {
            s = diag_set(err, CDLAB_ERR_CONFIG, "%s:%d: '%.40s' is out of range (%s)", path, lineno,
                         bad, CONFIG_NUMBER_RANGE);
            break;
        }
        if (got != want) {
            s = diag_set(err, CDLAB_ERR_CONFIG, "%s:%d: expected %s", path, lineno, what);
            break;
        }
        double r = fmt == PARTICLE_FORMAT_CHUTE ? 0.5 * v[3] : v[3];
        int finite = 1;
        for (int k = 0; k < want; k++)
            finite = finite && isfinite(v[k]);
        if (!(r > 0.0) || !finite) {
            s = diag_set(err, CDLAB_ERR_CONFIG, "%s:%d: the %s must be > 0 and every value finite",
                         path, lineno, fmt == PARTICLE_FORMAT_CHUTE ? "diameter" : "radius");
            break;
        }
        if (fmt == PARTICLE_FORMAT_CHUTE && v[10] != 0.0 && v[10] != 1.0) {
            s = diag_set(err, CDLAB_ERR_CONFIG, "%s:%d: the frozen column must be 0 or 1", path,
                         lineno);
            break;
        }
        if (n == INT32_MAX) {
            s = diag_set(err, CDLAB_ERR_CONFIG, "%s:%d: more than %d particles", path, lineno,
                         INT32_MAX - 1);
            break;
        }
        if (P) {
            if (n >= P->n) {
                s = diag_set(err, CDLAB_ERR_CONFIG, "%s:%d: more particles than expected (%d)",
                             path, lineno, P->n);
                break;
            }
            P->x[n] = v3(v[0], v[1], v[2]);
            P->r[n] = r;
            if (fmt == PARTICLE_FORMAT_CHUTE) {
                P->v[n] = v3(v[4], v[5], v[6]);
                P->w[n] = v3(v[7], v[8], v[9]);
                P->frozen[n] = v[10] != 0.0;
            }
        }
        n++;
    }
    if (s == CDLAB_OK && ferror(f))
        s = diag_set(err, CDLAB_ERR_IO, "%s: read error", path);
    if (s == CDLAB_OK && n == 0) /* an empty system is refused (docs/config.md) */
        s = diag_set(err, CDLAB_ERR_CONFIG,
                     "%s: no particles (the file is empty or holds only comments and blank "
                     "lines): give a file with one particle per line, %s",
                     path, what);
    fclose(f);
    *count = n;
    return s;
}

/* The snapshot's rows in input order: the row of id k goes to input_index[k] (or to k). */
static status output_rows(h5in *h, const char *path, const char *g, int n, int *to, diag *err)
{
    char ds[400];
    snprintf(ds, sizeof ds, "%s/id", g);
    status s = h5in_read(h, ds, H5IO_INT32, to, n, err);
    int *index = NULL;
    if (s == CDLAB_OK && h5in_exists(h, "/input_index")) {
        long long m = 0;
        index = malloc((size_t)n * sizeof *index);
        if (!index)
            s = diag_set(err, CDLAB_ERR_NOMEM, "out of memory reading %s", path);
        else if ((s = h5in_size(h, "/input_index", &m, err)) == CDLAB_OK && m != n)
            s = diag_set(err, CDLAB_ERR_CONFIG, "%s: /input_index has %lld entries, not %d", path,
                         m, n);
        if (s == CDLAB_OK)
            s = h5in_read(h, "/input_index", H5IO_INT32, index, n, err);
    }
    char *seen = s == CDLAB_OK ? calloc((size_t)n, 1) : NULL;
    if (s == CDLAB_OK && !seen)
        s = diag_set(err, CDLAB_ERR_NOMEM, "out of memory reading %s", path);
    for (int k = 0; k < n && s == CDLAB_OK; k++) {
        int id = to[k], at = id >= 0 && id < n ? (index ? index[id] : id) : -1;
        if (at < 0 || at >= n || seen[at]++)
            s = diag_set(err, CDLAB_ERR_CONFIG,
                         "%s: %s/id and /input_index do not number %d particles once each", path, g,
                         n);
        else
            to[k] = at;
    }
    free(seen);
    free(index);
    return s;
}

/* Long: a snapshot's datasets read and checked one after the other (size, rows, ids, frozen flags),
 * each check beside its read. */
status generate_load_output(particles *P, const char *path, long step, int *count, long *taken,
                            diag *err)
{
    h5in *h;
    status s = h5in_open(&h, path, err);
    if (s != CDLAB_OK)
        return s;
    char name[256] = "", last[256] = "", g[320];
    *count = 0;
    if (!h5in_exists(h, "/parameters") || !h5in_exists(h, "/snapshots"))
        s = diag_set(err, CDLAB_ERR_CONFIG,
                     "%s: not a cdlab output with snapshots (no /parameters or /snapshots)", path);
    if (s == CDLAB_OK)
        s = h5in_last_child(h, "/snapshots", NULL, last, err);
    if (s == CDLAB_OK) {
        if (step >= 0)
            snprintf(name, sizeof name, "%08ld", step);
        else
            snprintf(name, sizeof name, "%s", last);
        snprintf(g, sizeof g, "/snapshots/%s", name);
        if (!h5in_exists(h, g))
            s = diag_set(err, CDLAB_ERR_CONFIG, "%s: no snapshot of step %ld (the last one is %s)",
                         path, step, last);
        else if (strcmp(name, last) == 0 && !h5in_exists(h, "/summary"))
            s = diag_set(err, CDLAB_ERR_CONFIG,
                         "%s: no /summary (its run was killed or is still running), so its last "
                         "snapshot, of step %ld, may be cut short: name an earlier one with "
                         "particles.snapshot",
                         path, atol(name));
    }
    long long size = 0;
    snprintf(g, sizeof g, "/snapshots/%s", name);
    char ds[400];
    if (s == CDLAB_OK) {
        snprintf(ds, sizeof ds, "%s/radius", g);
        s = h5in_size(h, ds, &size, err);
    }
    if (s == CDLAB_OK && (size < 1 || size > INT32_MAX))
        s = diag_set(err, CDLAB_ERR_CONFIG, "%s: %s holds %lld particles", path, g, size);
    int n = (int)size;
    if (s == CDLAB_OK && P && n > P->n)
        s = diag_set(err, CDLAB_ERR_CONFIG, "%s: more particles than expected (%d)", path, P->n);
    if (s == CDLAB_OK && P) {
        /* read whole, then placed row by row in input order */
        double *x = malloc((size_t)n * 10 * sizeof *x);
        int *to = malloc((size_t)n * sizeof *to);
        const char *names[] = {"position", "velocity", "angular_velocity", "radius"};
        if (!x || !to)
            s = diag_set(err, CDLAB_ERR_NOMEM, "out of memory reading %s", path);
        for (int k = 0; k < 4 && s == CDLAB_OK; k++) {
            snprintf(ds, sizeof ds, "%s/%s", g, names[k]);
            s = h5in_read(h, ds, H5IO_DOUBLE, x + (size_t)3 * n * k, k < 3 ? 3L * n : n, err);
        }
        if (s == CDLAB_OK)
            s = output_rows(h, path, g, n, to, err);
        /* frozen flags: written where the run had frozen particles (since 2026-11-28) */
        unsigned char *frozen = NULL;
        snprintf(ds, sizeof ds, "%s/frozen", g);
        if (s == CDLAB_OK && h5in_exists(h, ds)) {
            frozen = malloc((size_t)n);
            s = frozen ? h5in_read(h, ds, H5IO_UINT8, frozen, n, err)
                       : diag_set(err, CDLAB_ERR_NOMEM, "out of memory reading %s", path);
        }
        for (int k = 0; k < n && s == CDLAB_OK; k++) {
            const double *p = x + 3 * (size_t)k, *v = p + 3 * (size_t)n, *w = v + 3 * (size_t)n,
                         *r = x + 9 * (size_t)n + k;
            int finite = 1;
            for (int c = 0; c < 3; c++)
                finite = finite && isfinite(p[c]) && isfinite(v[c]) && isfinite(w[c]);
            if (!(r[0] > 0.0) || !finite) {
                s = diag_set(err, CDLAB_ERR_CONFIG,
                             "%s: %s: particle %d has a radius that is not > 0 or a value that is "
                             "not finite",
                             path, g, to[k]);
                break;
            }
            int i = to[k];
            P->x[i] = v3(p[0], p[1], p[2]);
            P->v[i] = v3(v[0], v[1], v[2]);
            P->w[i] = v3(w[0], w[1], w[2]);
            P->r[i] = r[0];
            P->frozen[i] = frozen && frozen[k] != 0;
        }
        free(frozen);
        free(x);
        free(to);
    }
    h5in_close(h);
    *count = s == CDLAB_OK ? n : 0;
    *taken = s == CDLAB_OK ? atol(name) : -1;
    return s;
}

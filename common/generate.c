#include "generate.h"

#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

status generate_load_file(particles *P, const char *path, particle_format fmt, int *count,
                          diag *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return diag_set(err, CDLAB_ERR_IO, "%s: cannot open particle file: %s", path,
                        strerror(errno));
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
        char *p = line;
        /* a UTF-8 byte order mark (an editor's) before the first line, and a comment after
         * the numbers, as in the config (both were "expected four numbers") */
        if (lineno == 1 && strncmp(p, "\xef\xbb\xbf", 3) == 0)
            p += 3;
        char *hash = strchr(p, '#');
        if (hash)
            *hash = '\0';
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\n' || *p == '\r' || *p == '\0')
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
    fclose(f);
    *count = n;
    return s;
}

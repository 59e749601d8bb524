#include "scene.h"
#include "scene_parts.h"

#include "generate.h"
#include "h5io.h"
#include "pcg32.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The start's pairs: a pair overlapping by more than max_frac of the smaller radius, or a
 * particle reaching beyond a wall by more than max_frac of its radius, is an input error (a
 * misplaced particle would be shot out by the first steps). The error names the worst pair. The
 * pairs within contact.detect_gap (what the first contact list holds) are searched in parts of
 * about SCENE_CHECK_PART pairs (in the grid's cell order) and counted into info->start_pairs
 * (walls included: run_setup's memory estimate); the search stops after the first part with a
 * pair beyond the bound, so that a system piled up on itself (a chain of 150,000 wrapped around
 * a periodic box of 20 diameters: 10^9 pairs) is refused at once rather than after filling the
 * memory: the worst pair named is then the worst of that part (of every pair when there is one
 * part: systems of up to about 10,000 particles). A start with more than SCENE_MAX_TOUCHING
 * touching pairs per particle on average is refused whatever max_frac allows: a sphere touches
 * at most 12 spheres at least as large as itself, so rigid spheres make at most 12 touching
 * pairs per sphere (each pair counted at its smaller sphere; 6 for equal spheres, fewer in 2D
 * and 1D). More than INT_MAX pairs within the gap is more than a contact list indexes; the count
 * stops past max_pairs (info->start_pairs_partial: the caller refuses so many). */
#define SCENE_CHECK_PART 65536
#define SCENE_MAX_TOUCHING 32
/* a listed pair's overlap as a fraction of the smaller radius (of the particle's against a wall);
 * >= 0: touching */
static double overlap_frac(const pair_ref *r, const particles *P, const wall *walls)
{
    double rad = r->i >= 0 ? fmin(P->r[r->i], P->r[r->j]) : P->r[r->j];
    return -contact_ref_gap(r, P, walls) / rad;
}

static status check_start_pairs(config *c, world *W, double max_frac, long max_pairs,
                                scene_info *info, diag *err)
{
    const particles *P = &W->P;
    const double gap = W->detect.gap;
    cells G;
    memset(&G, 0, sizeof G);
    pair_ref *refs = NULL, worst = {0};
    int n = 0, cap = 0, found = 0;
    double worst_frac = max_frac;
    long touching = 0, listed = 0, bound = (long)SCENE_MAX_TOUCHING * P->n;
    status s = contacts_search_start(&G, P, W->walls, W->n_walls, gap, &refs, &n, &cap, err);
    int k = 0, n0 = n; /* the walls' pairs come first in the first part, as in key order */
    listed = n;
    while (s == CDLAB_OK) {
        int next;
        if ((s = contacts_search_range(&G, P, W->n_walls, gap, k, n0 + SCENE_CHECK_PART, &refs, &n,
                                       &cap, &next, err)) != CDLAB_OK)
            break;
        int beyond = 0;
        for (int m = 0; m < n; m++) {
            double frac = overlap_frac(&refs[m], P, W->walls);
            beyond |= frac > worst_frac;
            touching += m >= n0 && frac >= 0.0;
        }
        if (beyond) { /* the worst in key order, as a sorted list names it */
            contacts_sort_refs(refs + n0, n - n0);
            for (int m = 0; m < n; m++) {
                double frac = overlap_frac(&refs[m], P, W->walls);
                if (frac > worst_frac) {
                    worst_frac = frac;
                    worst = refs[m];
                    found = 1;
                }
            }
        }
        listed += n - n0;
        k = next;
        if (found || k >= P->n || touching > bound || listed > INT_MAX || listed > max_pairs)
            break;
        n = n0 = 0;
    }
    cells_free(&G);
    free(refs);
    if (s != CDLAB_OK)
        return s;
    if (found) {
        double overlap = -contact_ref_gap(&worst, P, W->walls);
        if (worst.i >= 0)
            return config_error(c, "contact", "max_initial_overlap", err,
                                "particles %d and %d overlap by %.6g (%.3g of the smaller radius) "
                                "at the start; allowed: %g (raise contact.max_initial_overlap if "
                                "this is meant)",
                                P->id[worst.i], P->id[worst.j], overlap, worst_frac, max_frac);
        return config_error(c, "contact", "max_initial_overlap", err,
                            "particle %d at (%g, %g, %g) lies %.6g beyond wall '%s' (%.3g of its "
                            "radius) at the start; allowed: %g",
                            P->id[worst.j], P->x[worst.j].x, P->x[worst.j].y, P->x[worst.j].z,
                            overlap, W->walls[-1 - worst.i].name, worst_frac, max_frac);
    }
    if (touching > bound)
        return config_error(
            c, "particles", "count", err,
            "more than %ld pairs of particles touch or overlap at the start (%d per "
            "particle on average; rigid spheres make at most 12): the particles "
            "are piled up on each other (check count, spacing, the box and the "
            "file's units)",
            bound, SCENE_MAX_TOUCHING);
    if (listed > INT_MAX)
        return config_error(c, "contact", "detect_gap", err,
                            "more than %d pairs lie within detect_gap = %g at the start (%.3g per "
                            "particle so far), more than a contact list holds: the gap is usually "
                            "a fraction of the diameter",
                            INT_MAX, gap, (double)listed / (k > 0 ? k : 1));
    info->start_pairs = listed;
    info->start_pairs_partial = k < P->n;
    return CDLAB_OK;
}

/* particles.source = file: the file's path (relative to the config's directory), format and
 * tiling, and its particle count checked against particles.count (or taken as it, where count
 * is left out: *count 0). */
typedef struct file_source {
    char path[PATH_MAX];
    int fmt;
    double tile[3];
    long snapshot; /* format = cdlab: the snapshot's step (-1: the last) */
    int at_rest;   /* format = cdlab: velocities and spins set to 0 (snapshot_velocities off) */
} file_source;

/* The file's particles: counted (P NULL) or read into P; *n their number. */
static status load_file_source(particles *P, file_source *f, int *n, diag *err)
{
    if (f->fmt != PARTICLE_FORMAT_CDLAB)
        return generate_load_file(P, f->path, (particle_format)f->fmt, n, err);
    long taken;
    status s = generate_load_output(P, f->path, f->snapshot, n, &taken, err);
    if (s == CDLAB_OK)
        f->snapshot = taken;
    for (int i = 0; P && s == CDLAB_OK && f->at_rest && i < *n; i++)
        P->v[i] = P->w[i] = v3_zero();
    return s;
}

static status read_file_source(config *c, const particles *P, long *count, file_source *f,
                               diag *err)
{
    const char *sec = "particles";
    long tiles = 1;
    int in_file;
    char given[PATH_MAX];
    status s;
    f->fmt = PARTICLE_FORMAT_XYZR;
    if ((s = config_string(c, sec, "file", 1, "", given, sizeof given, err)))
        return s;
    /* a relative path is relative to the config file's directory */
    const char *slash = strrchr(c->file, '/');
    int len = given[0] != '/' && slash ? snprintf(f->path, sizeof f->path, "%.*s/%s",
                                                  (int)(slash - c->file), c->file, given)
                                       : snprintf(f->path, sizeof f->path, "%s", given);
    if (len < 0 || (size_t)len >= sizeof f->path)
        return config_error(
            c, sec, "file", err,
            "the path (with the config file's folder) is longer than %zu characters",
            sizeof f->path - 1);
    const char *formats[] = {"xyzr", "chute", "cdlab", NULL};
    const double one3[3] = {1, 1, 1};
    const char *snapshot_keys[] = {"snapshot", "snapshot_velocities", NULL};
    if ((s = config_enum(c, sec, "format", 0, PARTICLE_FORMAT_XYZR, formats, &f->fmt, err)) ||
        (s = config_doubles(c, sec, "tile", 0, 3, one3, f->tile, err)))
        return s;
    f->snapshot = -1;
    if (f->fmt != PARTICLE_FORMAT_CDLAB &&
        (s = config_used_only_with(c, sec, snapshot_keys, "format = cdlab", err)))
        return s;
    int moving = 1;
    if (f->fmt == PARTICLE_FORMAT_CDLAB &&
        ((config_has(c, sec, "snapshot") &&
          (s = config_int(c, sec, "snapshot", 1, 0, 0, LONG_MAX, &f->snapshot, err))) ||
         (s = config_bool(c, sec, "snapshot_velocities", 0, 1, &moving, err))))
        return s;
    f->at_rest = !moving;
    const char axis[] = "xyz";
    for (int a = 0; a < 3; a++) {
        if (!(f->tile[a] >= 1.0 && f->tile[a] <= 1e6 && f->tile[a] == floor(f->tile[a])))
            return config_error(c, sec, "tile", err,
                                "needs three whole numbers >= 1 (copies along x, y, z)");
        if (f->tile[a] > 1.0 && !P->box.periodic[a])
            return config_error(c, sec, "tile", err,
                                "tiling along %c needs a periodic %c axis (system.periodic): "
                                "the file is one periodic cell of the box divided by tile",
                                axis[a], axis[a]);
        tiles *= (long)f->tile[a];
    }
    if ((s = load_file_source(NULL, f, &in_file, err)))
        return s;
    if (f->fmt == PARTICLE_FORMAT_CDLAB) /* the step taken, where the last one was asked for */
        config_record(c, sec, "snapshot", "%ld", f->snapshot);
    /* (per tile the count divided, cut to a whole number, read "holds 4100 particles per tile,
     * not 4100" for 65,601 spheres in 16 tiles, and "not 0" for more tiles than spheres) */
    double total = (double)in_file * (double)tiles;
    if (*count == 0) { /* count left out: the file's, recorded as resolved */
        if (total > SCENE_MAX_PARTICLES)
            return config_error(c, sec, "tile", err,
                                "the file %s holds %d particles, tiled %ld x %ld x %ld: %.0f "
                                "particles, more than %ld",
                                f->path, in_file, (long)f->tile[0], (long)f->tile[1],
                                (long)f->tile[2], total, SCENE_MAX_PARTICLES);
        *count = (long)total;
        config_record(c, sec, "count", "%ld", *count);
        return CDLAB_OK;
    }
    if (tiles == 1 && in_file != *count)
        return config_error(c, sec, "count", err, "the file %s holds %d particles, not %ld",
                            f->path, in_file, *count);
    if (total != (double)*count)
        return config_error(c, sec, "count", err,
                            "the file %s holds %d particles, tiled %ld x %ld x %ld: %.0f "
                            "particles, not %ld",
                            f->path, in_file, (long)f->tile[0], (long)f->tile[1], (long)f->tile[2],
                            total, *count);
    return CDLAB_OK;
}

/* The periodic axes of the run that wrote the snapshot (its /parameters) that this run lacks. */
static void source_periodic(const particles *P, h5in *h, scene_info *info)
{
    char *axes = NULL;
    diag ignore;
    int k = 0;
    if (h5in_attr_str(h, "/parameters", "system.periodic", &axes, &ignore) == CDLAB_OK)
        for (int a = 0; a < 3; a++)
            if (strchr(axes, "xyz"[a]) && !P->box.periodic[a])
                info->source_lost_periodic[k++] = "xyz"[a];
    info->source_lost_periodic[k] = '\0';
    free(axes);
}

/* An "x y z" value of the source run's /parameters (as config_vec3 records it) into v: 1, or 0
 * where absent or not three numbers. */
static int source_vec3(h5in *h, const char *key, vec3 *v)
{
    char *text = NULL;
    diag ignore;
    double a[3];
    int got = 0;
    if (h5in_attr_str(h, "/parameters", key, &text, &ignore) == CDLAB_OK)
        for (char *p = text, *end; got < 3 && config_read_number(p, &end, &a[got]) == 0; p = end)
            got++;
    free(text);
    if (got == 3)
        *v = v3(a[0], a[1], a[2]);
    return got == 3;
}

/* The source run's pistons at the snapshot's step (its /series/piston_position and
 * piston_velocity rows of the snapshot's time, its /parameters' point and normal): this run's
 * pistons of the same name and normal that start elsewhere along it, or, where the particles
 * take the snapshot's velocities (moving), at another velocity, are said, with the point and
 * velocity that start them as the source's was (the snapshot holds the particles only; a piston
 * that starts higher falls onto the packing); where the series has no row at the snapshot's
 * step, that it is not known. */
static void source_pistons(const world *W, h5in *h, long step, int moving, scene_info *info)
{
    diag ignore;
    char *names = NULL, g[64];
    double time, *t = NULL, *s = NULL, *u = NULL;
    long long rows = 0, values = 0;
    snprintf(g, sizeof g, "/snapshots/%08ld", step);
    if (h5in_attr_str(h, "/series/piston_position", "pistons", &names, &ignore) != CDLAB_OK ||
        h5in_attr_double(h, g, "time", &time, &ignore) != CDLAB_OK ||
        h5in_size(h, "/series/t", &rows, &ignore) != CDLAB_OK ||
        h5in_size(h, "/series/piston_position", &values, &ignore) != CDLAB_OK || rows < 1 ||
        values % rows != 0 || !(t = malloc((size_t)rows * sizeof *t)) ||
        !(s = malloc((size_t)values * sizeof *s)) || !(u = malloc((size_t)values * sizeof *u)) ||
        h5in_read(h, "/series/t", H5IO_DOUBLE, t, (long)rows, &ignore) != CDLAB_OK ||
        h5in_read(h, "/series/piston_position", H5IO_DOUBLE, s, (long)values, &ignore) !=
            CDLAB_OK ||
        h5in_read(h, "/series/piston_velocity", H5IO_DOUBLE, u, (long)values, &ignore) !=
            CDLAB_OK) {
        free(names), free(t), free(s), free(u);
        return;
    }
    long np = (long)(values / rows), row = -1;
    for (long r = 0; r < rows && row < 0; r++)
        row = t[r] == time ? r : -1;
    int said = 0, col = 0;
    for (char *name = names, *next; name && col < np; name = next, col++) {
        next = strchr(name, ',');
        if (next)
            *next++ = '\0';
        char key[128];
        vec3 p0, n0;
        const wall *w = NULL;
        for (int k = 0; k < W->n_walls; k++)
            if (W->walls[k].kind == WALL_PISTON && strcmp(W->walls[k].name, name) == 0)
                w = &W->walls[k];
        snprintf(key, sizeof key, "%s.point", name); /* name: piston.NAME */
        int found = w && source_vec3(h, key, &p0);
        snprintf(key, sizeof key, "%s.normal", name);
        found = found && source_vec3(h, key, &n0) && v3_norm(n0) > 0.0;
        if (!found || said == (int)(sizeof info->source_pistons / sizeof info->source_pistons[0]))
            continue;
        n0 = v3_scale(n0, 1.0 / v3_norm(n0));
        if (!(v3_norm(v3_sub(n0, w->n)) <= 1e-12)) /* another piston */
            continue;
        if (row < 0) { /* output.series_every skipped the snapshot's step */
            snprintf(info->source_pistons[said++], sizeof info->source_pistons[0],
                     "notice: where the source run's %s stood at step %ld is not known: its "
                     "series has no row at that step (its output.series_every), and the "
                     "snapshot holds the particles only; this run's starts at its own point",
                     name, step);
            continue;
        }
        double sk = s[row * np + col], uk = u[row * np + col];
        vec3 at = v3_add(p0, v3_scale(n0, sk)); /* the source plane's point at the step */
        double d = v3_dot(v3_sub(at, w->p), w->n),
               scale = fmax(1.0, fmax(v3_norm(at), v3_norm(w->p)));
        int elsewhere = fabs(d) > 1e-12 * scale,
            other_speed = moving && fabs(uk - w->u) > 1e-12 * fmax(fabs(uk), fabs(w->u));
        if (!elsewhere && !other_speed)
            continue;
        char where[128] = "where this run's starts", speed[64] = "", set[256] = "";
        if (elsewhere)
            snprintf(where, sizeof where, "%.6g from where this run's starts, along its normal", d);
        if (moving)
            snprintf(speed, sizeof speed, ", moving at %.6g", uk);
        if (other_speed)
            snprintf(set, sizeof set, " --set %s.velocity=%.17g", name, uk);
        snprintf(info->source_pistons[said++], sizeof info->source_pistons[0],
                 "notice: at step %ld the source run's %s stood %s%s (its s = %.17g there; the "
                 "snapshot holds the particles only): to start it as it was, --set "
                 "%s.point=%.17g,%.17g,%.17g%s",
                 step, name, where, speed, sk, name, at.x, at.y, at.z, set);
    }
    free(names), free(t), free(s), free(u);
}

/* What the run whose snapshot was taken (particles.format = cdlab) tells of this one: its
 * periodic axes that this run lacks, its pistons (one opening of its file). */
static void source_run(const world *W, scene_info *info)
{
    h5in *h;
    diag ignore;
    if (h5in_open(&h, info->source_file, &ignore) != CDLAB_OK)
        return;
    source_periodic(&W->P, h, info);
    source_pistons(W, h, info->source_step, info->source_moving, info);
    h5in_close(h);
}

/* particles.source = chain: equal disks along a line. */
static status place_chain(config *c, particles *P, diag *err)
{
    const char *sec = "particles";
    int dim = P->dimension;
    double r, spacing;
    vec3 origin, dir;
    status s;
    if ((s = config_double(c, sec, "radius", 1, 0, 0.0, 1, INFINITY, &r, err)) ||
        /* a negative spacing makes overlapping neighbours (less than a diameter) */
        (s = config_double(c, sec, "spacing", 0, 0.0, -2.0 * r, 1, INFINITY, &spacing, err)) ||
        (s = config_vec3(c, sec, "origin", 0, v3_zero(), &origin, err)) ||
        (s = config_vec3(c, sec, "direction", 0, v3(1, 0, 0), &dir, err)) ||
        (s = scene_unit_vec(c, sec, "direction", &dir, err)))
        return s;
    if ((dim == 1 && (dir.y != 0.0 || dir.z != 0.0)) || (dim == 2 && dir.z != 0.0))
        return config_error(c, sec, "direction", err,
                            "must be along x in dimension 1 and in the xy plane in dimension 2");
    generate_chain(P, r, spacing, origin, dir);
    return CDLAB_OK;
}

/* particles.source = random: radii uniform in [radius_min, radius_max], no overlaps, in a box. */
static status place_random(config *c, particles *P, pcg32 *rng, diag *err)
{
    const char *sec = "particles";
    int dim = P->dimension;
    double rmin, rmax;
    vec3 lo, hi;
    status s;
    if ((s = config_double(c, sec, "radius_min", 1, 0, 0.0, 1, INFINITY, &rmin, err)) ||
        (s = config_double(c, sec, "radius_max", 1, 0, rmin, 0, INFINITY, &rmax, err)) ||
        (s = config_vec3(c, sec, "box_min", 1, v3_zero(), &lo, err)) ||
        (s = config_vec3(c, sec, "box_max", 1, v3_zero(), &hi, err)))
        return s;
    if (!(hi.x - lo.x > 2 * rmax) || (dim >= 2 && !(hi.y - lo.y > 2 * rmax)) ||
        (dim == 3 && !(hi.z - lo.z > 2 * rmax)))
        return config_error(c, sec, "box_max", err,
                            "the box must be wider than the largest diameter in every "
                            "direction used");
    if ((s = generate_random_box(P, rng, rmin, rmax, lo, hi, err))) {
        char msg[sizeof err->msg];
        memcpy(msg, err->msg, sizeof msg);
        return diag_set(err, CDLAB_ERR_CONFIG, "%s: [particles]: %s", c->shown, msg);
    }
    return CDLAB_OK;
}

/* particles.source = file: the file's particles, copied into every tile of the box. */
static status place_from_file(config *c, particles *P, file_source *f, diag *err)
{
    int n, dim = P->dimension;
    status s;
    if ((s = load_file_source(P, f, &n, err)))
        return s;
    /* read twice (counted, then placed): a file changed in between is not half taken */
    if ((double)n * f->tile[0] * f->tile[1] * f->tile[2] != (double)P->n)
        return config_error(c, "particles", "file", err,
                            "%s: it held %d particles when counted, and %d now (changed while "
                            "read?)",
                            f->path, (int)(P->n / (f->tile[0] * f->tile[1] * f->tile[2])), n);
    /* copies of the cell, shifted by the cell's period (box / tile) */
    vec3 cell = v3(P->box.L.x / f->tile[0], P->box.L.y / f->tile[1], P->box.L.z / f->tile[2]);
    int k = n;
    for (int tz = 0; tz < (int)f->tile[2]; tz++)
        for (int ty = 0; ty < (int)f->tile[1]; ty++)
            for (int tx = 0; tx < (int)f->tile[0]; tx++) {
                if (tx == 0 && ty == 0 && tz == 0)
                    continue;
                vec3 shift = v3(tx * cell.x, ty * cell.y, tz * cell.z);
                for (int i = 0; i < n; i++, k++) {
                    P->x[k] = v3_add(P->x[i], shift);
                    P->r[k] = P->r[i];
                    P->v[k] = P->v[i];
                    P->w[k] = P->w[i];
                    P->frozen[k] = P->frozen[i];
                }
            }
    /* motion along a locked axis would be kept (and move the particle there): refused */
    for (int i = 0; i < n; i++) {
        vec3 v = P->v[i], w = P->w[i];
        const char *bad = dim == 1 && (v.y != 0.0 || v.z != 0.0) ? "vy or vz"
                          : dim == 1 && (w.x != 0.0 || w.y != 0.0 || w.z != 0.0)
                              ? "an angular velocity"
                          : dim == 2 && v.z != 0.0                 ? "vz"
                          : dim == 2 && (w.x != 0.0 || w.y != 0.0) ? "wx or wy"
                                                                   : NULL;
        if (bad)
            return config_error(c, "particles", "file", err,
                                "%s: particle %d (data line %d) has %s, but in dimension %d "
                                "it moves %s only: set them to 0",
                                f->path, i, i + 1, bad, dim,
                                dim == 1 ? "along x" : "in the xy plane and turns about z");
    }
    return CDLAB_OK;
}

/* Masses (mass for all, or density x volume in 3D / area in 1D and 2D), the placement checked
 * against the dimension, and the system's mean diameter, mean mass and size L into info. */
static status assign_masses(config *c, particles *P, scene_info *info, diag *err)
{
    const char *sec = "particles";
    int dim = P->dimension, has_mass = config_has(c, sec, "mass"),
        has_density = config_has(c, sec, "density");
    if (has_mass && has_density)
        return config_error(c, sec, "density", err, "give either mass or density, not both");
    double mass = 0.0, density = 1.0;
    status s;
    /* a disc's thickness: its volume is pi r^2 t (mass from density, and the deformable discs'
     * stress); only dimension 2 has one */
    if (dim != 2 && config_has(c, sec, "thickness"))
        return config_error(c, sec, "thickness", err, "only discs (dimension 2) have a thickness");
    info->thickness = 1.0;
    if (dim == 2 &&
        (s = config_double(c, sec, "thickness", 0, 1.0, 0.0, 1, INFINITY, &info->thickness, err)))
        return s;
    if (has_mass) {
        if ((s = config_double(c, sec, "mass", 1, 0, 0.0, 1, INFINITY, &mass, err)))
            return s;
    } else if ((s = config_double(c, sec, "density", 0, 1.0, 0.0, 1, INFINITY, &density, err))) {
        return s;
    }
    long count = P->n;
    vec3 lo = v3(INFINITY, INFINITY, INFINITY), hi = v3(-INFINITY, -INFINITY, -INFINITY);
    double dsum = 0.0, msum = 0.0, z0 = count > 0 ? P->x[0].z : 0.0;
    for (int i = 0; i < P->n; i++) {
        double m = has_mass ? mass : particles_mass_from_density(dim, P->r[i], density);
        if (!has_mass && dim == 2)
            m *= info->thickness;
        particles_set_body(P, i, P->r[i], m);
        if (dim <= 2 && P->x[i].z != z0)
            return config_error(c, sec, "source", err,
                                "in dimension %d all particles must have the same z "
                                "(particle %d has z = %g, particle 0 has %g)",
                                dim, i, P->x[i].z, z0);
        if (dim == 1 && P->x[i].y != P->x[0].y)
            return config_error(c, sec, "source", err,
                                "in dimension 1 all particles must lie on one line along x");
        lo = v3(fmin(lo.x, P->x[i].x), fmin(lo.y, P->x[i].y), fmin(lo.z, P->x[i].z));
        hi = v3(fmax(hi.x, P->x[i].x), fmax(hi.y, P->x[i].y), fmax(hi.z, P->x[i].z));
        dsum += 2.0 * P->r[i];
        msum += m;
    }
    info->d_mean = count > 0 ? dsum / (double)count : 0.0;
    info->m_mean = count > 0 ? msum / (double)count : 0.0;
    info->length =
        count > 0 ? fmax(hi.x - lo.x, fmax(hi.y - lo.y, hi.z - lo.z)) + info->d_mean : 0.0;
    return CDLAB_OK;
}

/* Magnitudes no unit system needs, and that overflow energies (m v^2, I w^2): refused. */
static status check_magnitudes(config *c, const particles *P, const char *key, diag *err)
{
    for (int i = 0; i < P->n; i++) {
        vec3 x = P->x[i], v = P->v[i], w = P->w[i];
        double big = fmax(fmax(fabs(x.x), fmax(fabs(x.y), fabs(x.z))),
                          fmax(fmax(fabs(v.x), fmax(fabs(v.y), fabs(v.z))),
                               fmax(fabs(w.x), fmax(fabs(w.y), fabs(w.z)))));
        if (!(big <= SCENE_MAX_MAGNITUDE) || !(P->r[i] <= SCENE_MAX_MAGNITUDE))
            return config_error(c, "particles", key, err,
                                "particle %d: radius %g, position, velocity or angular velocity "
                                "up to %g: beyond %g",
                                i, P->r[i], big, SCENE_MAX_MAGNITUDE);
        /* each quantity named: a radius of 1e-300 is no magnitude beyond the limit, its mass
         * and moment of inertia underflow */
        if (!isfinite(P->m[i]) || !(P->m[i] > 0.0) || !isfinite(P->inv_m[i]))
            return config_error(c, "particles", key, err,
                                "particle %d: radius %g gives a mass of %g, not a finite positive "
                                "number in double precision (the radius, or the density, is too "
                                "small or too large)",
                                i, P->r[i], P->m[i]);
        if (!isfinite(P->inv_I[i]) || !(P->inv_I[i] > 0.0))
            return config_error(c, "particles", key, err,
                                "particle %d: radius %g and mass %g give a moment of inertia "
                                "(about m r^2) that underflows or overflows double precision: "
                                "its inverse is %g (the radius is too small or too large)",
                                i, P->r[i], P->m[i], P->inv_I[i]);
    }
    return CDLAB_OK;
}

/* Along a periodic axis a particle is wrapped into the box and its crossings counted in an int:
 * one placed more than SCENE_MAX_IMAGES box lengths away is refused (a typo in a spacing or a
 * file's units, not a system). */
#define SCENE_MAX_IMAGES 1e9

static status check_images(config *c, const particles *P, const char *key, diag *err)
{
    if (!P->box.any)
        return CDLAB_OK;
    const double lo[3] = {P->box.lo.x, P->box.lo.y, P->box.lo.z};
    const double L[3] = {P->box.L.x, P->box.L.y, P->box.L.z};
    for (int i = 0; i < P->n; i++) {
        const double *x = &P->x[i].x;
        for (int a = 0; a < 3; a++)
            if (P->box.periodic[a] && !(fabs((x[a] - lo[a]) / L[a]) <= SCENE_MAX_IMAGES))
                return config_error(c, "particles", key, err,
                                    "particle %d at %g along %c: %.12g lengths of the periodic box "
                                    "(%g from %g) away, more than %g",
                                    i, x[a], "xyz"[a], fabs((x[a] - lo[a]) / L[a]), L[a], lo[a],
                                    SCENE_MAX_IMAGES);
    }
    return CDLAB_OK;
}

static status build_particles(config *c, world *W, scene_info *info, pcg32 *rng, diag *err)
{
    particles *P = &W->P;
    const char *sec = "particles";
    const char *sources[] = {"chain", "random", "file", NULL};
    int source;
    status s;
    file_source f = {.fmt = PARTICLE_FORMAT_XYZR, .tile = {1, 1, 1}};
    long count = 0; /* left out with a file: the file's (read_file_source) */
    if ((s = config_enum(c, sec, "source", 0, 0, sources, &source, err)))
        return s;
    /* an empty system has nothing to simulate: refused rather than run */
    int counted = source != 2 || config_has(c, sec, "count");
    if ((counted && (s = config_int(c, sec, "count", 1, 0, 1, SCENE_MAX_PARTICLES, &count, err))) ||
        (source == 2 && (s = read_file_source(c, P, &count, &f, err))))
        return s;
    if (source == 2 && f.fmt == PARTICLE_FORMAT_CDLAB) {
        snprintf(info->source_file, sizeof info->source_file, "%s", f.path);
        info->source_step = f.snapshot;
        info->source_moving = !f.at_rest;
        snprintf(info->source_said, sizeof info->source_said,
                 "particles: %ld from the snapshot of step %ld of %s (%s)", count, f.snapshot,
                 f.path, f.at_rest ? "at rest" : "with its velocities");
    }
    pbox box = P->box;
    if ((s = particles_init(P, (int)count, P->dimension, err)))
        return s;
    P->box = box;
    s = source == 0   ? place_chain(c, P, err)
        : source == 1 ? place_random(c, P, rng, err)
                      : place_from_file(c, P, &f, err);
    if (s || (s = assign_masses(c, P, info, err)) ||
        (s = check_magnitudes(c, P, source == 2 ? "file" : "source", err)) ||
        (s = check_images(c, P, source == 2 ? "file" : "source", err)))
        return s;
    particles_apply_frozen(P);
    int wrapped = 0;
    particles_wrap(P);
    for (int i = 0; i < P->n; i++)
        wrapped += P->image[3 * i] != 0 || P->image[3 * i + 1] != 0 || P->image[3 * i + 2] != 0;
    info->wrapped = wrapped;
    /* the images of the input are not displacements: start counting from here */
    memset(P->image, 0, (size_t)P->n * 3 * sizeof *P->image);
    return CDLAB_OK;
}

status scene_particle_list(config *c, const char *sec, const char *key, int n, int **out,
                           int *count, diag *err)
{
    long *ids;
    int m;
    status s;
    *out = NULL;
    *count = 0;
    if ((s = config_int_list(c, sec, key, &ids, &m, err)))
        return s;
    int *idx = malloc((size_t)(m > 0 ? m : 1) * sizeof *idx);
    if (!idx) {
        free(ids);
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    }
    for (int k = 0; k < m; k++) {
        long id = ids[k] < 0 ? n + ids[k] : ids[k]; /* negative: from the end, -1 = last */
        if (id < 0 || id >= n)
            s = config_error(c, sec, key, err, "particle %ld does not exist (there are %d)", ids[k],
                             n);
        for (int j = 0; j < k && s == CDLAB_OK; j++)
            if (idx[j] == id) /* [load] would apply its force twice */
                s = config_error(c, sec, key, err, "particle %ld is listed twice (as %ld and %ld)",
                                 id, ids[j], ids[k]);
        if (s != CDLAB_OK) {
            free(ids);
            free(idx);
            return s;
        }
        idx[k] = (int)id;
    }
    free(ids);
    *out = idx;
    *count = m;
    return CDLAB_OK;
}

status scene_check_free_axes(const config *c, const char *sec, const char *key, vec3 v, int dim,
                             diag *err)
{
    if (dim == 2 && v.z != 0.0)
        return config_error(c, sec, key, err,
                            "in dimension 2 the particles move in the xy plane: its z component "
                            "(%g) would not act",
                            v.z);
    if (dim == 1 && (v.y != 0.0 || v.z != 0.0))
        return config_error(c, sec, key, err,
                            "in dimension 1 the particles move along x: its y and z components "
                            "(%g, %g) would not act",
                            v.y, v.z);
    return CDLAB_OK;
}

/* [load]: force on `particles`, -force on `opposite` (a specimen loaded from both ends). */
static status build_load(config *c, world *W, diag *err)
{
    int *idx, *opp = NULL, n, m = 0;
    vec3 f;
    status s;
    if ((s = scene_particle_list(c, "load", "particles", W->P.n, &idx, &n, err)))
        return s;
    /* a force (or its start, its ramp) that no particle carries was taken and never applied */
    if ((n == 0 && !config_has(c, "load", "opposite") &&
         (s = config_used_only_with(
              c, "load", (const char *const[]){"force", "start", "ramp", NULL},
              "load.particles or load.opposite (no particle carries the force)", err))) ||
        (s = scene_particle_list(c, "load", "opposite", W->P.n, &opp, &m, err)) ||
        (s = config_vec3(c, "load", "force", n + m > 0, v3_zero(), &f, err)) ||
        (s = scene_check_free_axes(c, "load", "force", f, W->P.dimension, err)) ||
        (s = config_double(c, "load", "start", 0, 0.0, -INFINITY, 0, INFINITY, &W->load_start,
                           err)) ||
        (s = config_double(c, "load", "ramp", 0, 0.0, 0.0, 0, INFINITY, &W->load_ramp, err))) {
        free(idx);
        free(opp);
        return s;
    }
    W->load_after = step_end_mark(W->load_start, W->dt);
    for (int k = 0; k < m && s == CDLAB_OK; k++)
        for (int j = 0; j < n; j++)
            if (idx[j] == opp[k])
                s = config_error(c, "load", "opposite", err,
                                 "particle %d is also in load.particles (the forces would cancel)",
                                 opp[k]);
    for (int k = 0; k < n && s == CDLAB_OK; k++)
        W->P.f_ext[idx[k]] = v3_add(W->P.f_ext[idx[k]], f);
    for (int k = 0; k < m && s == CDLAB_OK; k++)
        W->P.f_ext[opp[k]] = v3_sub(W->P.f_ext[opp[k]], f);
    free(idx);
    free(opp);
    return s;
}

void scene_info_free(scene_info *info)
{
    free(info->input_index);
    info->input_index = NULL;
    info->n_input = 0;
}

status scene_ids_of_inputs(const scene_info *info, int *idx, int m, diag *err)
{
    if (!info->input_index || m == 0)
        return CDLAB_OK;
    int n = info->n_input, *id_of = malloc((size_t)n * sizeof *id_of);
    if (!id_of)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    for (int k = 0; k < n; k++)
        id_of[info->input_index[k]] = k;
    for (int k = 0; k < m; k++)
        idx[k] = id_of[idx[k]];
    free(id_of);
    return CDLAB_OK;
}

status scene_build(config *c, world *W, scene_info *info, diag *err)
{
    return scene_build_counted(c, W, info, LONG_MAX, err);
}

static status build_counted(config *c, world *W, scene_info *info, long max_pairs, diag *err);

status scene_build_counted(config *c, world *W, scene_info *info, long max_pairs, diag *err)
{
    status s = build_counted(c, W, info, max_pairs, err);
    if (s != CDLAB_OK)
        scene_info_free(info);
    return s;
}

static status build_counted(config *c, world *W, scene_info *info, long max_pairs, diag *err)
{
    memset(W, 0, sizeof *W);
    memset(info, 0, sizeof *info);
    long dim;
    status s;
    if ((s = config_int(c, "system", "dimension", 1, 0, 1, 3, &dim, err)) ||
        (s = config_double(c, "system", "dt", 1, 0, 0.0, 1, INFINITY, &W->dt, err)) ||
        /* 2^53: every step's time t = step dt distinct, and the counts derived from steps
         * (the series' rows, the output's size) in range (LONG_MAX overflowed them: the banner
         * gave the series -775 EB) */
        (s = config_int(c, "system", "steps", 1, 0, 0, SCENE_MAX_STEPS, &info->steps, err)) ||
        (s = config_u64(c, "system", "seed", 0, 1, &info->seed, err)) ||
        (s = config_vec3(c, "system", "gravity", 0, v3_zero(), &W->gravity, err)))
        return s;
    W->P.dimension = (int)dim;
    if ((s = scene_check_free_axes(c, "system", "gravity", W->gravity, (int)dim, err)) ||
        (s = scene_build_box(c, &W->P.box, (int)dim, err)))
        return s;
    pcg32 rng;
    pcg32_seed(&rng, info->seed, PCG32_STREAM_GENERATE);
    double mu;
    if ((s = config_double(c, "contact", "friction", 0, 0.0, 0.0, 0, INFINITY, &mu, err)) ||
        (s = build_particles(c, W, info, &rng, err)) ||
        (s = scene_build_walls(c, W, (int)dim, mu, err)) || (s = build_load(c, W, err)) ||
        (s = scene_order_particles(c, W, info, err)))
        return s;
    if (info->source_file[0]) /* particles.format = cdlab */
        source_run(W, info);
    double rmin = particles_min_radius(&W->P);
    /* Default candidate threshold: half the smallest radius, so that pairs approaching within a
     * step are already candidates (the shock law then decides if they touch). */
    double gap_auto = W->P.n > 0 ? 0.5 * rmin : 0.0;
    if ((s = config_double(c, "contact", "detect_gap", 0, gap_auto, 0.0, 0, INFINITY,
                           &W->detect.gap, err)))
        return s;
    W->step_gap = W->detect.gap;
    W->detect.mu = mu;
    W->detect.warm_start = 1;
    double max_ov;
    if ((s = config_double(c, "contact", "max_initial_overlap", 0, 0.05, 0.0, 0, INFINITY, &max_ov,
                           err)))
        return s;
    /* minimum image: a particle must not meet two images of another */
    double rmax = 0.0;
    for (int i = 0; i < W->P.n; i++)
        rmax = fmax(rmax, W->P.r[i]);
    double reach = 2.0 * rmax + W->detect.gap, Lb[3] = {W->P.box.L.x, W->P.box.L.y, W->P.box.L.z};
    for (int a = 0; a < 3; a++)
        if (W->P.box.periodic[a] && !(Lb[a] >= 2.0 * reach))
            return config_error(c, "system", "box_max", err,
                                "the periodic box is %g long along %c; it must be at least twice "
                                "the largest diameter plus contact.detect_gap (%g)",
                                Lb[a], "xyz"[a], 2.0 * reach);
    return check_start_pairs(c, W, max_ov, max_pairs, info, err);
}

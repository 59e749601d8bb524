/* The scene's walls (planes, pistons, cylinders: [plane.*], [piston.*], [cylinder.*]) and its
 * periodic box, from the config. */
#include "scene.h"
#include "scene_parts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WALLS 64

/* A unit vector from a config value; zero length is an error. */
status scene_unit_vec(config *c, const char *sec, const char *key, vec3 *v, diag *err)
{
    double len = v3_norm(*v);
    if (!(len > 0.0))
        return config_error(c, sec, key, err, "must be a non-zero vector");
    *v = v3_scale(*v, 1.0 / len);
    return CDLAB_OK;
}

static status check_wall_dim(config *c, const char *sec, const char *key, int dim, vec3 n,
                             int is_axis, diag *err)
{
    /* Locked degrees of freedom must agree with the boundary geometry, or the contact frame
     * would have components the particles cannot move along. */
    const double tol = 1e-12;
    if (dim == 2 && !is_axis && fabs(n.z) > tol)
        return config_error(c, sec, key, err,
                            "in dimension 2 a wall normal must lie in the xy "
                            "plane (z component 0)");
    if (dim == 2 && is_axis && (fabs(n.x) > tol || fabs(n.y) > tol))
        return config_error(c, sec, key, err, "in dimension 2 a cylinder axis must be along z");
    if (dim == 1 && !is_axis && (fabs(n.y) > tol || fabs(n.z) > tol))
        return config_error(c, sec, key, err, "in dimension 1 a wall normal must be along x");
    if (dim == 1 && is_axis)
        return config_error(c, sec, key, err, "cylinders are not available in dimension 1");
    return CDLAB_OK;
}

/* A wall must be the same in every period of a periodic axis: a plane's (or piston's) normal
 * without a component along it, a cylinder's axis along it (and so at most one periodic axis).
 * One across a periodic axis was taken: the particles that wrapped round met it from behind,
 * deep inside it, and pairs touched through it across the boundary. */
static status check_wall_periodic(config *c, const char *sec, const char *key, const pbox *B,
                                  vec3 n, int cylinder, diag *err)
{
    const double comp[3] = {n.x, n.y, n.z};
    for (int a = 0; a < 3; a++) {
        if (!B->periodic[a])
            continue;
        if (!cylinder && fabs(comp[a]) > 1e-12)
            return config_error(c, sec, key, err,
                                "has a component along %c, which system.periodic makes periodic: "
                                "a wall must be the same in every period (its normal without "
                                "that component), or the axis not periodic",
                                "xyz"[a]);
        if (cylinder && !(fabs(comp[a]) >= 1.0 - 1e-12))
            return config_error(c, sec, key, err,
                                "is not along %c, which system.periodic makes periodic: a "
                                "cylinder must be the same in every period (its axis along the "
                                "one periodic axis), or the axis not periodic",
                                "xyz"[a]);
    }
    return CDLAB_OK;
}

status scene_build_walls(config *c, world *W, int dim, double mu, diag *err)
{
    char names[MAX_WALLS][CONFIG_NAME_MAX];
    const char *kinds[] = {"plane", "piston", "cylinder"};
    int total = 0;
    for (int k = 0; k < 3; k++)
        total += config_sections_with_prefix(c, kinds[k], names, MAX_WALLS);
    if (total > MAX_WALLS)
        return diag_set(err, CDLAB_ERR_CONFIG, "%s: at most %d walls (got %d)", c->shown, MAX_WALLS,
                        total);
    W->walls = calloc((size_t)(total > 0 ? total : 1), sizeof *W->walls);
    if (!W->walls)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    status s;
    for (int k = 0; k < 3; k++) {
        int m = config_sections_with_prefix(c, kinds[k], names, MAX_WALLS);
        for (int q = 0; q < m; q++) {
            const char *sec = names[q];
            wall *w = &W->walls[W->n_walls++];
            w->kind = (wall_kind)k;
            snprintf(w->name, sizeof w->name, "%.63s", sec);
            w->step_time = w->switch_after = INFINITY;
            const char *dir_key = k == WALL_CYLINDER ? "axis" : "normal";
            if ((s = config_vec3(c, sec, "point", 1, v3_zero(), &w->p, err)) ||
                (s = config_vec3(c, sec, dir_key, 1, v3_zero(), &w->n, err)) ||
                (s = scene_unit_vec(c, sec, dir_key, &w->n, err)) ||
                (s = check_wall_dim(c, sec, dir_key, dim, w->n, k == WALL_CYLINDER, err)) ||
                (s = check_wall_periodic(c, sec, dir_key, &W->P.box, w->n, k == WALL_CYLINDER,
                                         err)) ||
                (s = config_double(c, sec, "friction", 0, mu, 0.0, 0, INFINITY, &w->mu, err)))
                return s;
            if (k == WALL_CYLINDER) {
                const char *surf[] = {"inside", "outside", NULL};
                int which;
                if ((s = config_double(c, sec, "radius", 1, 0, 0.0, 1, INFINITY, &w->radius,
                                       err)) ||
                    (s = config_enum(c, sec, "surface", 1, 0, surf, &which, err)))
                    return s;
                w->inside = which == 0;
            }
            if (k == WALL_PISTON) {
                if ((s = config_double(c, sec, "mass", 1, 0, 0.0, 1, INFINITY, &w->mass, err)) ||
                    (s = config_double(c, sec, "force", 0, 0.0, -INFINITY, 0, INFINITY, &w->force,
                                       err)) ||
                    (s = config_double(c, sec, "force_after", 0, w->force, -INFINITY, 0, INFINITY,
                                       &w->force_after, err)) ||
                    (s = config_double(c, sec, "step_time", 0, INFINITY, 0.0, 0, INFINITY,
                                       &w->step_time, err)) ||
                    (s = config_double(c, sec, "velocity", 0, 0.0, -INFINITY, 0, INFINITY, &w->u,
                                       err)))
                    return s;
                /* as a particle's (a piston at 1e200 ran to step 0's non-finite kinetic energy) */
                if (!(fabs(w->u) <= SCENE_MAX_MAGNITUDE) || !isfinite(0.5 * w->mass * w->u * w->u))
                    return config_error(c, sec, "velocity", err,
                                        "%g: beyond %g, or with the mass %g a kinetic energy "
                                        "beyond a double",
                                        w->u, SCENE_MAX_MAGNITUDE, w->mass);
                /* one without the other changed nothing (force_after alone was never applied) */
                int fa = config_has(c, sec, "force_after"), st = config_has(c, sec, "step_time");
                if (fa != st)
                    return config_error(c, sec, fa ? "force_after" : "step_time", err,
                                        "is used only with %s.%s (the force becomes force_after "
                                        "in the steps that end after step_time)",
                                        sec, fa ? "step_time" : "force_after");
                w->inv_mass = 1.0 / w->mass;
                w->switch_after = step_end_mark(w->step_time, W->dt);
            }
        }
    }
    return CDLAB_OK;
}

/* [system] periodic = any of x, y, z (e.g. "x y", or "none"); box_min and box_max bound the
 * periodic axes. */
status scene_build_box(config *c, pbox *B, int dim, diag *err)
{
    char spec[64];
    status s;
    memset(B, 0, sizeof *B);
    if ((s = config_string(c, "system", "periodic", 0, "none", spec, sizeof spec, err)))
        return s;
    if (strcmp(spec, "none") != 0) {
        for (const char *p = spec; *p; p++) {
            if (*p == ' ' || *p == ',' || *p == '\t')
                continue;
            int a = *p == 'x' ? 0 : *p == 'y' ? 1 : *p == 'z' ? 2 : -1;
            if (a < 0)
                return config_error(c, "system", "periodic", err,
                                    "expected axes among x, y, z (e.g. 'x y') or 'none', got '%s'",
                                    spec);
            if (B->periodic[a])
                return config_error(c, "system", "periodic", err, "axis %c given twice", *p);
            if (a >= dim)
                return config_error(c, "system", "periodic", err,
                                    "axis %c is not free in dimension %d", *p, dim);
            B->periodic[a] = 1;
            B->any = 1;
        }
    }
    if (!B->any) {
        if (config_has(c, "system", "box_min") || config_has(c, "system", "box_max"))
            return config_error(c, "system", "box_min", err,
                                "box_min and box_max bound the periodic axes; set system.periodic");
        return CDLAB_OK;
    }
    vec3 lo, hi;
    if ((s = config_vec3(c, "system", "box_min", 1, v3_zero(), &lo, err)) ||
        (s = config_vec3(c, "system", "box_max", 1, v3_zero(), &hi, err)))
        return s;
    double l[3] = {lo.x, lo.y, lo.z}, h[3] = {hi.x, hi.y, hi.z}, L[3] = {0, 0, 0};
    for (int a = 0; a < 3; a++) {
        if (!B->periodic[a])
            continue;
        if (!(h[a] > l[a]))
            return config_error(c, "system", "box_max", err,
                                "must exceed box_min along every periodic axis (%c: %g <= %g)",
                                "xyz"[a], h[a], l[a]);
        L[a] = h[a] - l[a];
    }
    B->lo = lo;
    pbox_set_period(B, v3(L[0], L[1], L[2]));
    return CDLAB_OK;
}

#include "world.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void world_free(world *W)
{
    particles_free(&W->P);
    free(W->walls);
    memset(W, 0, sizeof *W);
}

double world_kinetic_energy(const world *W)
{
    const particles *P = &W->P;
    double e = 0.0;
    for (int i = 0; i < P->n; i++) {
        e += 0.5 * P->m[i] * v3_norm2(P->v[i]);
        /* a frozen particle (inv_I = 0) does not turn: 0.5/inv_I * 0 would be NaN */
        if (P->inv_I[i] > 0.0)
            e += 0.5 / P->inv_I[i] * v3_norm2(P->w[i]);
    }
    for (int k = 0; k < W->n_walls; k++)
        if (W->walls[k].kind == WALL_PISTON)
            e += 0.5 * W->walls[k].mass * W->walls[k].u * W->walls[k].u;
    return e;
}

status world_energy_error(const world *W, diag *err)
{
    const particles *P = &W->P;
    for (int i = 0; i < P->n; i++) {
        double et = 0.5 * P->m[i] * v3_norm2(P->v[i]);
        double er = P->inv_I[i] > 0.0 ? 0.5 / P->inv_I[i] * v3_norm2(P->w[i]) : 0.0;
        if (!isfinite(et) || !isfinite(er))
            return diag_set(err, CDLAB_ERR_NUMERIC,
                            "step %ld: the kinetic energy is not finite: particle %d has %s "
                            "energy %g (|v| = %g, |w| = %g, m = %g)",
                            W->step, P->id[i], isfinite(et) ? "rotational" : "translational",
                            isfinite(et) ? er : et, v3_norm(P->v[i]), v3_norm(P->w[i]), P->m[i]);
    }
    for (int k = 0; k < W->n_walls; k++) {
        const wall *w = &W->walls[k];
        if (w->kind == WALL_PISTON && !isfinite(0.5 * w->mass * w->u * w->u))
            return diag_set(err, CDLAB_ERR_NUMERIC,
                            "step %ld: the kinetic energy is not finite: piston '%s' moves at %g",
                            W->step, w->name, w->u);
    }
    return diag_set(err, CDLAB_ERR_NUMERIC, "step %ld: the kinetic energy is not finite", W->step);
}

status world_overlap_error(const world *W, int i, int j, double gap, double frac, const char *key,
                           const char *hint, diag *err)
{
    const particles *P = &W->P;
    double r = i >= 0 ? fmin(P->r[i], P->r[j]) : P->r[j];
    if (!(-gap > frac * r))
        return CDLAB_OK;
    if (i >= 0)
        return diag_set(err, CDLAB_ERR_NUMERIC,
                        "step %ld: overlap %.6g of particles %d and %d exceeds %s = %g of the "
                        "smaller radius%s",
                        W->step, -gap, P->id[i], P->id[j], key, frac, hint);
    return diag_set(err, CDLAB_ERR_NUMERIC,
                    "step %ld: overlap %.6g of particle %d with wall '%s' exceeds %s = %g of "
                    "its radius%s",
                    W->step, -gap, P->id[j], W->walls[-1 - i].name, key, frac, hint);
}

long first_step_after(double t, double dt)
{
    double after = step_end_mark(t, dt);
    if (!(after >= dt))
        return 1;
    double k = floor(after / dt) + 1.0;
    if (!(k < 9e18))
        return LONG_MAX;
    long s = (long)k;
    while (s > 1 && (double)(s - 1) * dt > after)
        s--;
    while (!((double)s * dt > after))
        s++;
    return s;
}

double world_max_friction(const world *W)
{
    double mu = W->detect.mu;
    for (int k = 0; k < W->n_walls; k++)
        mu = fmax(mu, W->walls[k].mu);
    return mu;
}

/* The volume of the Love-Weber stress: as given, or the current bounding box of the particles
 * (area in dimension 2, length in dimension 1), whose extent along a periodic axis is the
 * period: the sum counts each contact of the cell once (a bounding box there reached a radius
 * past the cell on each side, 5% more area in the 40 x 40 chute). */
double world_stress_volume(const world *W, double given)
{
    if (given > 0.0)
        return given;
    vec3 lo = v3(INFINITY, INFINITY, INFINITY), hi = v3(-INFINITY, -INFINITY, -INFINITY);
    for (int i = 0; i < W->P.n; i++) {
        double r = W->P.r[i];
        vec3 x = W->P.x[i];
        lo = v3(fmin(lo.x, x.x - r), fmin(lo.y, x.y - r), fmin(lo.z, x.z - r));
        hi = v3(fmax(hi.x, x.x + r), fmax(hi.y, x.y + r), fmax(hi.z, x.z + r));
    }
    if (W->P.n == 0)
        return 1.0;
    const pbox *B = &W->P.box;
    double ext[3] = {B->periodic[0] ? B->L.x : hi.x - lo.x, B->periodic[1] ? B->L.y : hi.y - lo.y,
                     B->periodic[2] ? B->L.z : hi.z - lo.z};
    double V = ext[0];
    if (W->P.dimension >= 2)
        V *= ext[1];
    if (W->P.dimension == 3)
        V *= ext[2];
    return V;
}

void world_stress_add(double sigma[3][3], vec3 f, vec3 l, double V)
{
    double fa[3] = {f.x, f.y, f.z}, lb[3] = {l.x, l.y, l.z};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            sigma[a][b] += fa[a] * lb[b] / V;
}

/* The simulated system, shared by every engine: particles, walls, time. */
#ifndef CDLAB_WORLD_H
#define CDLAB_WORLD_H

#include "contacts.h"
#include "particles.h"
#include "walls.h"

typedef struct world {
    particles P;
    wall *walls;
    int n_walls;
    /* contact detection's settings (the engines keep their own contact lists) */
    detect_params detect;
    vec3 gravity;      /* acceleration of gravity */
    double load_start; /* the particles' f_ext act in steps ending after this time */
    double load_after; /* ... taken as step_end_mark(load_start, dt) (walls.h) */
    double load_ramp;  /* ... rising linearly from 0 over this time after load_start (0: at once) */
    double dt;         /* time step */
    double t;          /* current time */
    long step;         /* steps done */
    /* CD: the longest way a particle or piston moved in the last step (0 before the first), for
     * the missed-contact check at the next detection (cd/nscd/cd_step.c) */
    double step_path;
    /* ... and the candidate gap of the detection that began that step: contact.detect_gap, or
     * in a restart's first step the checkpoint's (the restart may change the gap) */
    double step_gap;
} world;

void world_free(world *W);
/* The fraction of the particles' f_ext that acts at time t: 0 up to load_start, then rising
 * linearly to 1 over load_ramp (at once when load_ramp = 0). */
static inline double world_load_factor(const world *W, double t)
{
    if (!(t > W->load_after))
        return 0.0;
    if (W->load_ramp > 0.0 && t < W->load_start + W->load_ramp)
        return (t - W->load_start) / W->load_ramp;
    return 1.0;
}
/* The first step (>= 1) whose end, step dt, is after step_end_mark(t, dt) (walls.h): where
 * a force that acts in the steps ending after t first acts; LONG_MAX for t = inf (never). */
long first_step_after(double t, double dt);
/* Kinetic energy of particles (translation + rotation) and piston(s). */
double world_kinetic_energy(const world *W);
/* For a kinetic energy that is not finite: CDLAB_ERR_NUMERIC naming the step, the first
 * particle (or piston) whose energy is not finite, and the quantity. */
status world_energy_error(const world *W, diag *err);

/* The largest friction coefficient of any contact the world can make: particles' and walls'. */
double world_max_friction(const world *W);

/* The volume V of the Love-Weber stress sigma_ab = (1/V) sum f_a l_b (DEM's dem.stress_volume,
 * CD's solver.stress_volume): given when > 0, else the current bounding box of the particles
 * (area in dimension 2, length in 1) with the period as its extent along a periodic axis. */
double world_stress_volume(const world *W, double given);
/* One contact's term of that sum: sigma_ab += f_a l_b / V (f the force on body 0, l the branch
 * vector from body 0 to body 1). */
void world_stress_add(double sigma[3][3], vec3 f, vec3 l, double V);

/* A pair (i: particle or wall -1 - w, j: particle) overlapping by more than frac of the smaller
 * radius of its pair (of the particle's radius against a wall) stops the run: CDLAB_ERR_NUMERIC
 * with the step, the ids, the overlap, the config key that sets frac, and hint appended (may
 * be ""). */
status world_overlap_error(const world *W, int i, int j, double gap, double frac, const char *key,
                           const char *hint, diag *err);

#endif

/* Boundaries: fixed planes, a mobile piston (a plane with mass that moves along its normal),
 * fixed cylinders (inside or outside surface). Walls are immobile bodies (1/m = 0, l^2/I = 0);
 * the piston has a finite mass along its normal only. */
#ifndef CDLAB_WALLS_H
#define CDLAB_WALLS_H

#include "vec3.h"

typedef enum wall_kind { WALL_PLANE, WALL_PISTON, WALL_CYLINDER } wall_kind;

typedef struct wall {
    wall_kind kind;
    char name[64];
    vec3 p;        /* plane/piston: a point of the plane at s = 0; cylinder: a point on the axis */
    vec3 n;        /* plane/piston: unit normal pointing into the domain; cylinder: unit axis */
    double radius; /* cylinder radius */
    int inside;    /* cylinder: 1 = particles inside (contact with the inner surface) */
    double mu;     /* friction coefficient of contacts with this wall */
    /* piston only: position s along n (plane point = p + s n), velocity u = ds/dt */
    double mass, inv_mass, s, u;
    double force;         /* applied force along n (pushes into the domain when > 0) */
    double force_after;   /* value of the applied force after step_time */
    double step_time;     /* time of the force step (infinite: never) */
    double switch_after;  /* force_after acts in the steps ending after this (STEP_END_SLACK) */
    double contact_force; /* force of the contacts on the piston along n, last step */
} wall;

/* A step ends at t = step dt, computed in double precision, so the step that ends at a given
 * time mathematically may end just after it (with dt = 0.1 the third step ends at
 * 0.30000000000000004). The times that switch a force on (piston.step_time, load.start) are
 * taken as this fraction of dt later, so that such a step is not counted as ending after them:
 * more than the rounding of t for a billion steps, far less than a step. */
#define STEP_END_SLACK 1e-6

/* The time a step must end after to count as ending after t (wall.switch_after,
 * world.load_after, first_step_after). */
static inline double step_end_mark(double t, double dt)
{
    return t + STEP_END_SLACK * dt;
}

/* Applied piston force in the step that ends at time t_new (implicit: value at t_new). */
static inline double wall_piston_force(const wall *w, double t_new)
{
    return t_new > w->switch_after ? w->force_after : w->force;
}

#endif

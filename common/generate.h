/* Particle generators: a chain, a random polydisperse packing in a box, a file of positions. */
#ifndef CDLAB_GENERATE_H
#define CDLAB_GENERATE_H

#include "particles.h"
#include "pcg32.h"

/* count equal particles of radius r, centres at origin + k (2r + spacing) dir, k = 0..count-1. */
void generate_chain(particles *P, double radius, double spacing, vec3 origin, vec3 dir);

/* Random sequential addition of P->n non-overlapping particles with radii uniform in
 * [rmin, rmax] inside the box [lo, hi] (fully inside; z ignored in dimension <= 2 and y too in
 * dimension 1). Fails with a message, never silently places fewer particles. */
status generate_random_box(particles *P, pcg32 *rng, double rmin, double rmax, vec3 lo, vec3 hi,
                           diag *err);

typedef enum particle_format {
    PARTICLE_FORMAT_XYZR,  /* x y z radius */
    PARTICLE_FORMAT_CHUTE, /* x y z diameter vx vy vz wx wy wz frozen (shared/bench/chute_cell.txt)
                            */
    PARTICLE_FORMAT_CDLAB  /* a snapshot of a cdlab output (generate_load_output) */
} particle_format;

/* Reads one particle per line in the given column format (blank lines and '#' comments
 * skipped); sets *count to the number of particles in the file. With P == NULL only counts;
 * otherwise P->n must be at least the count. */
status generate_load_file(particles *P, const char *path, particle_format fmt, int *count,
                          diag *err);

/* The particles of a snapshot of a cdlab output file (HDF5): positions, radii, velocities,
 * angular velocities and frozen flags (where it has them), in the input order of the run that wrote
 * it (its /input_index where it renumbered them). step < 0: the last snapshot; a file without
 * /summary (a run killed or still running) may have cut its last snapshot short, which is refused.
 * Sets *count to its particles and *taken to its step. With P == NULL only counts; otherwise P->n
 * must be at least the count. */
status generate_load_output(particles *P, const char *path, long step, int *count, long *taken,
                            diag *err);

#endif

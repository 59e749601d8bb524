/* Builds the world (particles, walls, loads, system parameters) from a configuration.
 * Reads sections [system], [particles], [contact], [load], [plane.NAME], [piston.NAME],
 * [cylinder.NAME]; documented in docs/config.md. */
#ifndef CDLAB_SCENE_H
#define CDLAB_SCENE_H

#include "config.h"
#include "decomp.h"
#include "world.h"

/* The largest magnitude of a particle's coordinate, radius, velocity or angular velocity, or a
 * wall's position and velocity, that is accepted (from a config, a particle file or a
 * checkpoint): far beyond any physical value in any unit system, and small enough that
 * kinetic energies (m v^2 with m ~ r^3) stay finite in double precision
 * (1e50^2 * 1e150 < 1e308). */
#define SCENE_MAX_MAGNITUDE 1e50

/* system.steps at most 2^53 (common/scene.c) */
#define SCENE_MAX_STEPS 9007199254740992L

typedef struct scene_info {
    uint64_t seed;
    long steps;
    double length; /* largest extent of the particle assembly plus one diameter (system size L) */
    double d_mean; /* mean particle diameter */
    double m_mean; /* mean particle mass */
    int wrapped;   /* particles moved into the periodic box at the start */
    double thickness;        /* discs (dimension 2): particles.thickness (1 otherwise) */
    parallel_params par;     /* [parallel]: distributed runs */
    long start_pairs;        /* pairs within contact.detect_gap at the start, walls' included: what
                                the first contact list holds */
    int start_pairs_partial; /* start_pairs passed max_pairs and the count stopped there */
    /* particles.order = spatial: input_index[id] is the input index (file line, generator's
     * place) of the particle renumbered id; NULL with order = given (ids are the input
     * indices). malloc'ed: the caller frees it (scene_info_free). */
    int *input_index;
    int n_input;
    /* particles.order = auto (the default) chose: order_auto 1 (and input_index set) where the
     * input was renumbered. storage_spread: the mean distance between particles next to each
     * other in the input's storage, in mean diameters (about 2 in a file written in some
     * spatial order, a third of the box's size in a random one); 0 where not measured
     * (fewer than SCENE_ORDER_AUTO_N particles) */
    int order_auto;
    double storage_spread;
    /* particles.format = cdlab: the periodic axes of the run whose snapshot was taken that are
     * not periodic here ("" if none): its positions were wrapped into its box */
    char source_lost_periodic[4];
    /* and where the particles came from, for the banner ("" for other sources) */
    char source_said[4200];
    char source_file[4096]; /* and the file and step taken, the velocities taken or not */
    long source_step;
    int source_moving;
    /* the pistons of this run that start elsewhere than the source run's piston of the same
     * name stood at the snapshot's step: a banner line each ("" if none) */
    char source_pistons[4][700];
} scene_info;

/* particles.order = auto renumbers the particles in spatial order from this many on, when
 * particles next to each other in storage lie more than SCENE_ORDER_AUTO_SPREAD mean diameters
 * apart on average: a random order cost the DEM chute 12% at 65,600 spheres and 2.3x at
 * 1,049,600 (bench/PROFILE.md, session 30). */
#define SCENE_ORDER_AUTO_N 50000
/* particles.count's largest value (ids are ints; the checks' limit) */
#define SCENE_MAX_PARTICLES 100000000L
#define SCENE_ORDER_AUTO_SPREAD 8.0

void scene_info_free(scene_info *info);

status scene_build(config *c, world *W, scene_info *info, diag *err);
/* The same, with the start's pairs counted up to a little past max_pairs (a run that has no
 * memory for more is then refused without searching them all) */
status scene_build_counted(config *c, world *W, scene_info *info, long max_pairs, diag *err);

/* A list of particles in a config key (sec.key): indices, negative ones counted from the end
 * (-1 = the last), each at most once and existing among n; *out is malloc'ed (caller frees). */
status scene_particle_list(config *c, const char *sec, const char *key, int n, int **out,
                           int *count, diag *err);
/* The ids now of the particles at input indices idx[0..m) (particles.order = spatial renumbers
 * them; nothing to do with order = given); 0, or CDLAB_ERR_NOMEM. */
status scene_ids_of_inputs(const scene_info *info, int *idx, int m, diag *err);

/* A force that moves the particles (gravity, a load) with a component along an axis they
 * cannot move on (z in dimension 2, y and z in dimension 1) is
 * refused: that component would silently not act (gravity 0 0 -10 in 2D moved nothing). */
status scene_check_free_axes(const config *c, const char *sec, const char *key, vec3 v, int dim,
                             diag *err);

#endif

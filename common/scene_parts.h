/* The parts of the scene's construction (internal to common/scene*.c). */
#ifndef CDLAB_SCENE_PARTS_H
#define CDLAB_SCENE_PARTS_H

#include "scene.h"

/* [plane.*], [piston.*], [cylinder.*] into W->walls (at most MAX_WALLS), checked against the
 * dimension and the periodic box; mu: contact.friction, each wall's default. */
status scene_build_walls(config *c, world *W, int dim, double mu, diag *err);
/* A unit vector from a config value (normalised); zero length is an error. */
status scene_unit_vec(config *c, const char *sec, const char *key, vec3 *v, diag *err);
/* system.periodic, box_min, box_max into B. */
status scene_build_box(config *c, pbox *B, int dim, diag *err);
/* particles.order: W's particles renumbered (info->input_index) or kept. */
status scene_order_particles(config *c, world *W, scene_info *info, diag *err);

#endif

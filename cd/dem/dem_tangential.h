/* The tangential contact laws of DEM (dem.tangential), one module each, found by name through a
 * registry (LAMMPS's GRANULAR package keeps its sub-models so): a module checks its own options,
 * says how the pair pass frames its contacts, and gives the pass its kernels: one pair, and four
 * pairs in the lanes of vec3x4.h for the common case (with, optionally, a second phase for the
 * four-pair kernel's sliding pairs). A new law is a new file (law_<name>.c with its table) and
 * its table's name in dem_tangential.c.
 *
 * The modules: law_kuhn.c (Kuhn, Suzuki & Daouadji's refined law, and the conventional one
 * beside it: dem_contact_law.h, dem_contact_law4.h), law_lammps.c (LAMMPS's gran/hooke/history). */
#ifndef CDLAB_DEM_TANGENTIAL_H
#define CDLAB_DEM_TANGENTIAL_H

#include "dem/dem_pass4.h"

#include "config.h"

typedef struct dem_tangential_law {
    const char *name; /* dem.tangential's value */
    /* the default of dem.twirl with this law */
    int twirl_default;
    /* lever arms of the radii along the normal of now (LAMMPS) instead of the contact point
     * in the middle of the overlap: the frames of the pass and of the contact records */
    int radius_arms;
    /* [optional] its options against the rest of [dem] (read already into p): a refusal of a
     * combination it does not take, naming the key (config_error) */
    status (*check)(config *c, const char *section, const dem_params *p, diag *err);
    /* [optional] a line of the banner about it (after "DEM: ") */
    const char *summary;
    /* the force of pair k (c) touching now (frame f1; f0: the step's start) from the step's
     * movements: delivered to the particles, the history into c, the statistics into acc, the
     * energy dissipated into diss (friction, dashpots) */
    void (*pair)(world *W, dem_solver *S, int *cur, const dem_params *p, int k, dem_pair *c,
                 contact_frame f0, contact_frame f1, int was_touching, double *acc, double diss[2]);
    /* whether quad serves this pass (the common case of rigid particles, the pass says; the
     * law may say no: its start, an option the lanes do not make) */
    int (*quad_serves)(const dem_solver *S, const dem_params *p);
    /* four pairs kk[0..3] of the common case, into o[0..3] (nothing written: the pass applies
     * them in list order); sl[0..3]: what slides takes of a sliding lane */
    void (*quad)(const world *W, const dem_solver *S, const dem_params *p, const int *kk, int book,
                 quad_out *o, slide_in *sl);
    /* [optional] the chunk's sliding pairs that quad left (qo[dl[0..nd-1]]), four at a time */
    void (*slides)(const dem_params *p, double mu, const slide_in *sl, const int *dl, int nd,
                   quad_out *qo);
} dem_tangential_law;

/* The registered laws (NULL-terminated): dem.tangential's values in this order, the order the
 * checkpoint's dem_law constant counts them in (append a new one). */
extern const dem_tangential_law *const dem_tangential_registry[];
/* The laws' names in registry order, NULL-terminated (config_enum's list). */
const char *const *dem_tangential_names(void);

#endif

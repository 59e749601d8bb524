/* Reads the [dem] section (system.mode = dem) into dem_params. */
#ifndef CDLAB_DEM_CONFIG_H
#define CDLAB_DEM_CONFIG_H

#include "config.h"
#include "dem/dem.h"
#include "engine/equiv.h"
#include "scene.h"

typedef enum drive_motion { DRIVE_NONE, DRIVE_ROTATION, DRIVE_AFFINE } drive_motion;

typedef struct dem_setup {
    dem_params p;
    /* [drive]: kinematic driving instead of dynamics */
    drive_motion drive;
    vec3 rotation;        /* rotation vector per step */
    double G[3][3];       /* displacement gradient per step */
    vec3 centre;          /* centre of rotation / deformation */
    double stress_volume; /* 0: the current bounding box of the particles */
    double dt_crit;       /* critical time step estimate */
    int allow_unstable;   /* dem.allow_unstable_dt */
    int from_cd;          /* N_I of dem.stiffness_from_cd, 0 if not used */
    int cd_sweep;         /* with from_cd: the CD run's sweep order (sweep_order) */
    double cd_dt;         /* with from_cd: the CD run's time step */
    double cd_relaxation; /* with from_cd: the CD run's relaxation omega (1: Gauss-Seidel) */
} dem_setup;

/* dt is the run's time step; info gives the mean particle mass for stiffness_from_cd.
 * twin: the CD run this config also describes (system.mode = dem on a CD config), or NULL; it
 * gives the defaults of stiffness_from_cd (its N_I, when dem.k_n is not given and its
 * criterion is fixed), cd_sweep (its sweep) and cd_dt (the file's system.dt, the CD run's,
 * before any --set). Refuses (CDLAB_ERR_CONFIG) a dt above the critical one unless
 * dem.allow_unstable_dt. */
status dem_config_read(config *c, const world *W, const scene_info *info, const equiv_twin *twin,
                       dem_setup *d, diag *err);

#endif

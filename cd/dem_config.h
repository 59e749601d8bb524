/* Reads the [dem] section (system.mode = dem) into dem_params. */
#ifndef CDLAB_DEM_CONFIG_H
#define CDLAB_DEM_CONFIG_H

#include "config.h"
#include "dem.h"
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
} dem_setup;

/* dt is the run's time step; info gives the mean particle mass for stiffness_from_cd.
 * Refuses (CDLAB_ERR_CONFIG) a dt above the critical one unless dem.allow_unstable_dt. */
status dem_config_read(config *c, const world *W, const scene_info *info, dem_setup *d, diag *err);

#endif

/* Reads the [solver] section into cd_params. */
#ifndef CDLAB_CD_CONFIG_H
#define CDLAB_CD_CONFIG_H

#include "nscd/cd.h"
#include "config.h"

extern const char *const cd_criterion_names[]; /* "fixed", "local", "global", "natural_map" */

status cd_config_read(config *c, cd_params *p, diag *err);

#endif

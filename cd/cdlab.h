/* The public face of cd/ for the programs of tools/ (tools/check_layers.py: they include this
 * header and common/'s, nothing else of cd/): running a config (the run pipeline), the CD <->
 * DEM equivalence (`cdlab equiv`), FCLIB's availability, and the contact-law experiments of
 * `cdlab-lab`. */
#ifndef CDLAB_CDLAB_H
#define CDLAB_CDLAB_H

#include "dem/dem_lab.h"
#include "engine/equiv.h"
#include "nscd/cd_contact_problem.h"
#include "run/run.h"

#endif

/* The registry of DEM's tangential contact laws (dem_tangential.h): one line per law. */
#include "dem/dem_tangential.h"

#include <stddef.h>

const dem_tangential_law *const dem_tangential_registry[] = {&dem_law_kuhn, &dem_law_conventional,
                                                             &dem_law_lammps, NULL};

const char *const dem_tangential_names[] = {"kuhn", "conventional", "lammps", NULL};

/* The registry of DEM's tangential contact laws (dem_tangential.h): each module's table, named
 * here once. */
#include "dem/dem_tangential.h"

#include <stddef.h>

extern const dem_tangential_law dem_law_kuhn, dem_law_conventional, dem_law_lammps;

const dem_tangential_law *const dem_tangential_registry[] = {
    &dem_law_kuhn,         /* law_kuhn.c */
    &dem_law_conventional, /* law_kuhn.c */
    &dem_law_lammps,       /* law_lammps.c */
    NULL,
};

const char *const *dem_tangential_names(void)
{
    enum { N = sizeof dem_tangential_registry / sizeof *dem_tangential_registry };
    static const char *names[N]; /* the registry's NULL ends it too */
    if (!names[0])
        for (int k = 0; dem_tangential_registry[k]; k++)
            names[k] = dem_tangential_registry[k]->name;
    return names;
}

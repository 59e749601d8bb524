/* The registry of the CD step's solvers (cd_method.h). */
#include "nscd/cd_method.h"

#include <string.h>

const cd_method *const cd_methods[] = {&cd_method_sweeps, &cd_method_apgd, &cd_method_newton, NULL};

const cd_method *cd_method_find(const char *name)
{
    for (int k = 0; cd_methods[k]; k++)
        if (strcmp(cd_methods[k]->name, name) == 0)
            return cd_methods[k];
    return NULL;
}

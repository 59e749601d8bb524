/* OpenMP pragmas that vanish cleanly (no unknown-pragma warnings) when built without it. */
#ifndef CDLAB_PARALLEL_H
#define CDLAB_PARALLEL_H

#ifdef _OPENMP
#include <omp.h>
#define CDLAB_PARALLEL_FOR _Pragma("omp parallel for schedule(static)")
static inline int cdlab_threads(void)
{
    return omp_get_max_threads();
}
#else
#define CDLAB_PARALLEL_FOR
static inline int cdlab_threads(void)
{
    return 1;
}
#endif

#endif

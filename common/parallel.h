/* OpenMP pragmas that vanish cleanly (no unknown-pragma warnings) when built without it. */
#ifndef CDLAB_PARALLEL_H
#define CDLAB_PARALLEL_H

/* Loops over fewer items than this (particles, pairs) run on one thread: starting the team
 * costs more than it saves. */
#define CDLAB_PARALLEL_MIN 16384

#ifdef _OPENMP
#include <omp.h>
#define CDLAB_PARALLEL_FOR _Pragma("omp parallel for schedule(static)")
/* The threads a parallel region gets: OpenMP's count, capped by its thread limit
 * (OMP_THREAD_LIMIT: omp_get_max_threads alone said 2 where 1 ran, and the file recorded 2). */
static inline int cdlab_threads(void)
{
    int n = omp_get_max_threads(), limit = omp_get_thread_limit();
    return limit > 0 && limit < n ? limit : n;
}
static inline int cdlab_thread_limit(void)
{
    return omp_get_thread_limit();
}
static inline int cdlab_cores(void)
{
    return omp_get_num_procs();
}
static inline void cdlab_set_threads(int n)
{
    omp_set_num_threads(n);
}
#else
#define CDLAB_PARALLEL_FOR
static inline int cdlab_threads(void)
{
    return 1;
}
static inline int cdlab_thread_limit(void)
{
    return 1;
}
static inline int cdlab_cores(void)
{
    return 1;
}
static inline void cdlab_set_threads(int n)
{
    (void)n;
}
#endif

#endif

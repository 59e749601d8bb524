/* Geometric growth of arrays: the time step allocates nothing once sizes have settled. */
#ifndef CDLAB_GROW_H
#define CDLAB_GROW_H

#include <stddef.h>

/* Returns a buffer of at least need (>= 1) elements of elem bytes: ptr itself when *cap is
 * enough, else ptr reallocated to a doubled capacity (at least 64). Returns NULL on failure,
 * leaving ptr valid and *cap unchanged. */
void *grow_array(void *ptr, int *cap, int need, size_t elem);

#endif

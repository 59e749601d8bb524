/* Geometric growth of arrays: the time step allocates nothing once sizes have settled. */
#ifndef CDLAB_GROW_H
#define CDLAB_GROW_H

#include <stddef.h>

/* For tests of out-of-memory paths: when set above 0, each allocation of grow_array, grow_big and
 * big_alloc counts it down, and the one that brings it to 0 fails (returns NULL) as if memory
 * had run out; 0 (the default) leaves every allocation alone. Not thread-safe: set it only
 * around single-threaded runs. */
extern long grow_fail_countdown;

/* Returns a buffer of at least need (>= 1) elements of elem bytes: ptr itself when *cap is
 * enough, else ptr reallocated to a doubled capacity (at least 64). Returns NULL on failure,
 * leaving ptr valid and *cap unchanged. */
void *grow_array(void *ptr, int *cap, int need, size_t elem);

/* Memory for large arrays (freed with free()): 64-byte aligned, and from 2 MiB on aligned to
 * 2 MiB and advised to use transparent huge pages (madvise), so that scattered accesses (the
 * random sweep, the contact gather) do not miss the TLB on every touch; software prefetches
 * that miss the TLB may be dropped. Returns NULL on failure. */
void *big_alloc(size_t bytes);
/* big_alloc, copy old_bytes of old, free old. */
void *big_realloc(void *old, size_t old_bytes, size_t bytes);
/* Gives the pages of a big_alloc buffer (cap_bytes long) beyond its first keep_bytes back to the
 * system (madvise MADV_DONTNEED): they read as zero when touched again. The buffer stays valid;
 * a buffer under 2 MiB is left as it is. */
void big_release(void *p, size_t keep_bytes, size_t cap_bytes);
/* Frees a malloc'ed block whose contents are not needed any more, its whole pages given back to
 * the system first (madvise MADV_DONTNEED, 64 bytes clear of both ends, where the allocator
 * keeps its records): free() alone may keep a block of a thread's arena resident until the
 * arena is trimmed, so that copying many such blocks into one array held both at once. */
void free_discard(void *p, size_t bytes);
/* Gives the whole pages of bytes [from, to) of a malloc'ed or big_alloc block of `bytes` bytes
 * back to the system (madvise MADV_DONTNEED), 64 bytes clear of the block's ends: their contents
 * are not needed any more (they read as zero if touched again); the block stays valid. For an
 * array consumed front to back (a rebuild's candidates as the new list is written). */
void discard_range(void *p, size_t from, size_t to, size_t bytes);
/* grow_array for big arrays: a big_alloc buffer of doubled capacity, keeping the first
 * keep_bytes of ptr (0: contents not needed). */
void *grow_big(void *ptr, size_t keep_bytes, int *cap, int need, size_t elem);

#endif

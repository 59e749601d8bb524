#define _DEFAULT_SOURCE /* madvise advice (MADV_HUGEPAGE, MADV_DONTNEED): not in POSIX, and without it
                         * the -D_POSIX_C_SOURCE build compiled the advice out */
#include "grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

long grow_fail_countdown;

/* The test hook (grow.h): whether this allocation is the one to fail. Written only while a test
 * has set the countdown (the runs it drives are single-threaded). */
static int injected_failure(void)
{
    return grow_fail_countdown > 0 && --grow_fail_countdown == 0;
}

void *grow_array(void *ptr, int *cap, int need, size_t elem)
{
    if (need < 1)
        need = 1;
    if (ptr && need <= *cap)
        return ptr;
    long nc = *cap > 0 ? *cap : 64;
    while (nc < need)
        nc *= 2;
    if (nc > 0x7fffffffL || injected_failure())
        return NULL;
    void *p = realloc(ptr, (size_t)nc * elem);
    if (p)
        *cap = (int)nc;
    return p;
}

#define HUGE_PAGE ((size_t)2 << 20)

void *big_alloc(size_t bytes)
{
    void *p = NULL;
    if (injected_failure())
        return NULL;
    if (bytes >= HUGE_PAGE) {
        size_t rounded = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
        if (posix_memalign(&p, HUGE_PAGE, rounded) != 0)
            return NULL;
#ifdef MADV_HUGEPAGE
        madvise(p, rounded, MADV_HUGEPAGE); /* advice only: failure is harmless */
#endif
        return p;
    }
    if (posix_memalign(&p, 64, bytes > 0 ? bytes : 64) != 0)
        return NULL;
    return p;
}

/* Gives the whole pages within [from, to) back to the system (madvise MADV_DONTNEED: they read
 * as zero when touched again); advice, harmless if refused. */
static void discard_pages(uintptr_t from, uintptr_t to)
{
#ifdef MADV_DONTNEED
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    from = (from + page - 1) / page * page;
    to = to / page * page;
    if (to > from)
        madvise((void *)from, to - from, MADV_DONTNEED);
#else
    (void)from;
    (void)to;
#endif
}

void big_release(void *p, size_t keep_bytes, size_t cap_bytes)
{
    if (!p || cap_bytes < HUGE_PAGE) /* big_alloc aligned it to 2 MiB: pages are whole */
        return;
    /* the buffer's last page is whole (big_alloc rounded the buffer up to 2 MiB) */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    discard_pages((uintptr_t)p + keep_bytes, (uintptr_t)p + (cap_bytes + page - 1) / page * page);
}

void discard_range(void *p, size_t from, size_t to, size_t bytes)
{
    if (!p || bytes <= 128)
        return;
    /* clear of the allocator's records at both ends */
    from = from > 64 ? from : 64;
    to = to < bytes - 64 ? to : bytes - 64;
    if (to > from)
        discard_pages((uintptr_t)p + from, (uintptr_t)p + to);
}

void free_discard(void *p, size_t bytes)
{
    discard_range(p, 0, bytes, bytes);
    free(p);
}

void *big_realloc(void *old, size_t old_bytes, size_t bytes)
{
    void *p = big_alloc(bytes);
    if (!p)
        return NULL;
    if (old && old_bytes > 0)
        memcpy(p, old, old_bytes < bytes ? old_bytes : bytes);
    free(old);
    return p;
}

void *grow_big(void *ptr, size_t keep_bytes, int *cap, int need, size_t elem)
{
    if (need < 1)
        need = 1;
    if (ptr && need <= *cap)
        return ptr;
    long nc = *cap > 0 ? *cap : 64;
    while (nc < need)
        nc *= 2;
    if (nc > 0x7fffffffL)
        return NULL;
    void *p = big_realloc(ptr, keep_bytes, (size_t)nc * elem);
    if (p)
        *cap = (int)nc;
    return p;
}

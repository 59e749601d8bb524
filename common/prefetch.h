/* A software prefetch that survives the optimiser. GCC 12 at -O2/-O3 removed __builtin_prefetch
 * from cdlab's sweep (the helper counts as pure and its calls are dropped; inlined, the
 * prefetches vanished too; checked in the assembly): on x86-64 the instruction is emitted with
 * volatile asm, which the optimiser keeps. */
#ifndef CDLAB_PREFETCH_H
#define CDLAB_PREFETCH_H

static inline void prefetch_line(const void *p)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __asm__ volatile("prefetcht0 %0" : : "m"(*(const char *)p));
#else
    __builtin_prefetch(p);
#endif
}

#endif

/* PCG32 random number generator (O'Neill, "PCG: A family of simple fast space-efficient
 * statistically good algorithms for random number generation", 2014): 64-bit LCG state,
 * XSH-RR output permutation, 2^63 selectable streams. Written from the published algorithm.
 *
 * Seeds in cdlab are derived from the run seed and a fixed stream per call site
 * (see PCG32_STREAM_*), never from thread ids, so that results do not depend on threading. */
#ifndef CDLAB_PCG32_H
#define CDLAB_PCG32_H

#include <stdint.h>

typedef struct pcg32 {
    uint64_t state;
    uint64_t inc; /* always odd */
} pcg32;

enum {
    PCG32_STREAM_SWEEP = 1,    /* random sweep permutations of the CD solver */
    PCG32_STREAM_GENERATE = 2, /* particle generators */
};

void pcg32_seed(pcg32 *rng, uint64_t initstate, uint64_t initseq);

/* The next 32-bit output (inline: the random sweep draws one per contact and sweep). */
static inline uint32_t pcg32_next(pcg32 *rng)
{
    uint64_t old = rng->state;
    rng->state = old * 6364136223846793005ULL + rng->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31u));
}

/* Uniform integer in [0, bound), without modulo bias (rejection, then r mod bound). bound must
 * be > 0. */
uint32_t pcg32_bounded(pcg32 *rng, uint32_t bound);

/* Uniform integer in [0, bound), without bias, by Lemire's multiply-and-shift with rejection
 * ("Fast random integer generation in an interval", ACM TOMACS 2019): the high half of
 * r * bound, rejecting the low halves below 2^32 mod bound, so that a division is needed only
 * on the rare draws whose low half is below bound. A different mapping from pcg32_bounded (other
 * values for the same stream); used by the random sweep's shuffle. bound must be > 0. */
static inline uint32_t pcg32_bounded_fast(pcg32 *rng, uint32_t bound)
{
    uint64_t m = (uint64_t)pcg32_next(rng) * bound;
    uint32_t low = (uint32_t)m;
    if (low < bound) {
        uint32_t threshold = (uint32_t)(-bound) % bound;
        while (low < threshold) {
            m = (uint64_t)pcg32_next(rng) * bound;
            low = (uint32_t)m;
        }
    }
    return (uint32_t)(m >> 32);
}
/* Uniform double in [0, 1) with 53 random bits. */
double pcg32_uniform(pcg32 *rng);

#endif

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
uint32_t pcg32_next(pcg32 *rng);
/* Uniform integer in [0, bound), without modulo bias. bound must be > 0. */
uint32_t pcg32_bounded(pcg32 *rng, uint32_t bound);
/* Uniform double in [0, 1) with 53 random bits. */
double pcg32_uniform(pcg32 *rng);

#endif

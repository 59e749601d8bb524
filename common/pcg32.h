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

/* The LCG's multiplier (Knuth's MMIX constant, as in the PCG reference). */
#define PCG32_MULT 6364136223846793005ULL

/* The XSH-RR output of a state. */
static inline uint32_t pcg32_output(uint64_t old)
{
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31u));
}

/* The next 32-bit output (inline: the random sweep draws one per contact and sweep). */
static inline uint32_t pcg32_next(pcg32 *rng)
{
    uint64_t old = rng->state;
    rng->state = old * PCG32_MULT + rng->inc;
    return pcg32_output(old);
}

/* The next n outputs into out[0..n), as n calls of pcg32_next would give them (and leave the
 * generator where they would): on 8 interleaved lanes, each jumping 8 states per step, so that
 * the outputs do not wait on one chain of multiplications. */
void pcg32_fill(pcg32 *rng, uint32_t *out, int n);

/* Uniform integer in [0, bound), without modulo bias (rejection, then r mod bound). bound must
 * be > 0. */
uint32_t pcg32_bounded(pcg32 *rng, uint32_t bound);

/* Uniform integer in [0, bound), without bias, by Lemire's multiply-and-shift with rejection
 * ("Fast random integer generation in an interval", ACM TOMACS 2019): the high half of
 * r * bound, rejecting the low halves below 2^32 mod bound, so that a division is needed only
 * on the rare draws whose low half is below bound. A different mapping from pcg32_bounded (other
 * values for the same stream); used by the random sweep's shuffle. bound must be > 0.
 * pcg32_lemire_rejects: whether the product m = r * bound is rejected. */
static inline int pcg32_lemire_rejects(uint64_t m, uint32_t bound)
{
    uint32_t low = (uint32_t)m;
    return low < bound && low < (uint32_t)(-bound) % bound;
}

static inline uint32_t pcg32_bounded_fast(pcg32 *rng, uint32_t bound)
{
    uint64_t m = (uint64_t)pcg32_next(rng) * bound;
    while (pcg32_lemire_rejects(m, bound))
        m = (uint64_t)pcg32_next(rng) * bound;
    return (uint32_t)(m >> 32);
}

/* Moves the generator delta outputs on, in O(log delta) steps (as delta calls of pcg32_next). */
void pcg32_advance(pcg32 *rng, uint64_t delta);

/* The outputs a run of draws pcg32_bounded_fast(rng, top - i), i = *done, ..., count - 1 would
 * take, given as raw[0..n) (the generator's next n outputs): scans them in order, each either
 * rejected or making draw *done, and returns how many it took (n, or fewer when the draws end
 * first; *done then count). The draws' values are not kept: this tells how far such draws move
 * the generator (a Fisher-Yates shuffle of m entries draws top = m, count = m - 1), with the
 * outputs made elsewhere (on threads, from pcg32_advance). Eight draws at a time where no
 * output's low half is below its bound. top - i > 0 for every draw. */
int pcg32_bounded_down_scan(uint32_t top, int count, int *done, const uint32_t *raw, int n);

/* Uniform double in [0, 1) with 53 random bits. */
double pcg32_uniform(pcg32 *rng);

#endif

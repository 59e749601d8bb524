#include "pcg32.h"

/* The 64-bit LCG multiplier of the PCG reference (Knuth's MMIX constant). */

void pcg32_seed(pcg32 *rng, uint64_t initstate, uint64_t initseq)
{
    rng->state = 0u;
    rng->inc = (initseq << 1u) | 1u;
    pcg32_next(rng);
    rng->state += initstate;
    pcg32_next(rng);
}

uint32_t pcg32_bounded(pcg32 *rng, uint32_t bound)
{
    /* Reject the low values that would make the modulo biased: 2^32 mod bound of them. */
    uint32_t threshold = (uint32_t)(-bound) % bound;
    for (;;) {
        uint32_t r = pcg32_next(rng);
        if (r >= threshold)
            return r % bound;
    }
}

double pcg32_uniform(pcg32 *rng)
{
    uint64_t hi = pcg32_next(rng) >> 5; /* 27 bits */
    uint64_t lo = pcg32_next(rng) >> 6; /* 26 bits */
    return (double)(hi * 67108864ULL + lo) * (1.0 / 9007199254740992.0);
}

#include "pcg32.h"

/* The 64-bit LCG multiplier of the PCG reference (Knuth's MMIX constant). */
#define PCG32_MULT 6364136223846793005ULL

uint32_t pcg32_next(pcg32 *rng)
{
    uint64_t old = rng->state;
    rng->state = old * PCG32_MULT + rng->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18u) ^ old) >> 27u);
    uint32_t rot = (uint32_t)(old >> 59u);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31u));
}

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

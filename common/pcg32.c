#include "pcg32.h"


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

void pcg32_fill(pcg32 *rng, uint32_t *out, int n)
{
    enum { LANES = 8 };
    int k = 0;
    if (n >= 2 * LANES) {
        /* lane l holds the state of output k + l; a step of LANES states is x -> A x + C with
         * A = a^LANES, C = c (a^(LANES-1) + ... + a + 1), all mod 2^64 */
        uint64_t s[LANES], A = 1, C = 0;
        for (int l = 0; l < LANES; l++) {
            s[l] = rng->state;
            rng->state = rng->state * PCG32_MULT + rng->inc;
            A *= PCG32_MULT;
            C = C * PCG32_MULT + rng->inc;
        }
        for (; k + LANES <= n; k += LANES)
            for (int l = 0; l < LANES; l++) {
                out[k + l] = pcg32_output(s[l]);
                s[l] = s[l] * A + C;
            }
        rng->state = s[0]; /* the state of output k */
    }
    for (; k < n; k++)
        out[k] = pcg32_next(rng);
}

void pcg32_bounded_down(pcg32 *rng, uint32_t top, int count, uint32_t *out)
{
    enum { RUN = 1024 };
    uint32_t raw[RUN];
    int i = 0;
    while (i < count) {
        /* each draw takes at least one output: count - i draws to go need no more */
        int want = count - i < RUN ? count - i : RUN, p = 0;
        pcg32_fill(rng, raw, want);
        while (p < want) {
            uint32_t bound = top - (uint32_t)i;
            uint64_t m = (uint64_t)raw[p++] * bound;
            while (pcg32_lemire_rejects(m, bound)) /* rare: the next output, filled or not */
                m = (uint64_t)(p < want ? raw[p++] : pcg32_next(rng)) * bound;
            out[i++] = (uint32_t)(m >> 32);
        }
    }
}

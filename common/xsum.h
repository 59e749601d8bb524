/* Exact, order-free summation of doubles: every addend is added exactly into a fixed-point
 * integer that spans the whole range of double (2^-1074 to 2^1024), and the total is rounded to
 * the nearest double (ties to even) once, at the end. The result therefore does not depend on
 * the order of the additions, on how they were split between threads or ranks (partial sums
 * merge exactly), and it is the correctly rounded sum.
 *
 * For the distributed engines (docs/parallel.md): the diagnostics' sums must be the same bits
 * for any number of ranks. Cost: a few integer operations per addend (3.4 ns against 1.05 ns for
 * a plain += on the development machine, -O2), 540 bytes per sum. */
#ifndef CDLAB_XSUM_H
#define CDLAB_XSUM_H

#include <stdint.h>

#define XSUM_LIMBS 67 /* 32-bit digits (in 64-bit limbs, for deferred carries) over 2,144 bits */

typedef struct xsum {
    int64_t limb[XSUM_LIMBS];
    int32_t adds;     /* additions since the carries were last propagated */
    int32_t inf, nan; /* +1 / -1: an infinity of that sign was added (both: NaN); nan: a NaN */
} xsum;

void xsum_init(xsum *s);
/* The digits back into range (xsum_add calls it when the deferred carries could overflow). */
void xsum_carry(xsum *s);

/* s += (neg ? -mag : mag) 2^(b - 1074), mag < 2^63: the digits k = b / 32 ... k + 2 (bit b is
 * bit b % 32 of digit k), each changed by less than 2^33. */
static inline void xsum_add_digits(xsum *s, uint64_t mag, int neg, int b)
{
    int k = b >> 5, sh = b & 31;
    int64_t lo = (int64_t)(mag & 0xffffffffULL), hi = (int64_t)(mag >> 32); /* 32, 31 bits */
    int64_t l = lo << sh, h = hi << sh; /* at most 63 and 62 bits */
    int64_t d0 = l & 0xffffffffLL, d1 = (l >> 32) + (h & 0xffffffffLL), d2 = h >> 32;
    if (neg) {
        d0 = -d0;
        d1 = -d1;
        d2 = -d2;
    }
    s->limb[k] += d0;
    s->limb[k + 1] += d1;
    s->limb[k + 2] += d2;
    if (__builtin_expect(++s->adds >= (1 << 29), 0)) /* each digit changes by < 2^33 per add */
        xsum_carry(s);
}

/* s += x, exactly. Inline: the DEM step adds one value per touching pair (measured: 5% of the
 * chute's step as a call, 4.5 ns an add). A double m 2^e (m a 53-bit integer, e >= -1074) sets
 * bits e + 1074 ... e + 1126 of the fixed-point number; digit k holds bits 32k ... 32k + 31. */
static inline void xsum_add(xsum *s, double x)
{
    uint64_t u;
    __builtin_memcpy(&u, &x, sizeof u);
    int ex = (int)((u >> 52) & 0x7ff);
    uint64_t m = u & 0xfffffffffffffULL;
    if (__builtin_expect(ex == 0x7ff, 0)) { /* infinity or NaN */
        if (m != 0)
            s->nan = 1;
        else
            s->inf |= (u >> 63) ? 2 : 1;
        return;
    }
    if (ex == 0 && m == 0)
        return;
    /* |x| = m 2^(ex - 1075) (normal: the hidden bit added) or m 2^-1074 (subnormal): m's lowest
     * bit is bit b of the fixed-point number */
    if (ex > 0)
        m |= (uint64_t)1 << 52;
    xsum_add_digits(s, m, (int)(u >> 63), ex > 0 ? ex - 1 : 0);
}
/* s += t (exact). */
void xsum_merge(xsum *s, const xsum *t);
/* The sum rounded to the nearest double (ties to even); +-inf beyond the range, NaN after a NaN
 * or infinities of both signs. */
double xsum_round(const xsum *s);

/* As doubles, exactly (for sending between ranks): the digits after their carries (each below
 * 2^32 in magnitude, so exact in a double) and the flags. */
#define XSUM_PACKED (XSUM_LIMBS + 2)
void xsum_pack(const xsum *s, double out[XSUM_PACKED]);
void xsum_unpack(xsum *s, const double in[XSUM_PACKED]);
/* The sum as at most max doubles whose exact sum it is (the rounded sum, then the rounded
 * remainder, ...: a few doubles for any sum; for a checkpoint that a restart continues from
 * exactly); returns how many, or -1 when max is too small or the sum is not finite. */
int xsum_expand(const xsum *s, double *out, int max);

/* A faster front for many additions into one sum (the DEM pair pass adds one or two values per
 * touching pair): each addend's significand, with its sign, goes into the bin of its binary
 * exponent (one integer addition), and the bins are added into an xsum (exactly, as integers
 * times their powers of two) every XSUM_BIN_ADDS additions and at the end (xsum_bins_flush).
 * The sum is the same exact sum: the same bits after rounding as xsum_add's. 16.6 kB; zeroed
 * once (xsum_bins_init), and left zeroed by each flush. */
#define XSUM_BINS 2048
/* 1,024 significands below 2^53 sum to less than 2^63 in magnitude: no bin can overflow */
#define XSUM_BIN_ADDS 1024
typedef struct xsum_bins {
    int64_t bin[XSUM_BINS];        /* per biased exponent (0: subnormals, scaled as 1) */
    uint64_t used[XSUM_BINS / 64]; /* the bins added to since the last flush */
    int adds;                      /* additions since the last flush */
} xsum_bins;

void xsum_bins_init(xsum_bins *B);
/* s += the bins; the bins back to zero. */
void xsum_bins_flush(xsum_bins *B, xsum *s);

/* s += x through the bins (s: the sum that the bins flush into; infinities and NaN go to it at
 * once). */
static inline void xsum_bins_add(xsum_bins *B, xsum *s, double x)
{
    uint64_t u;
    __builtin_memcpy(&u, &x, sizeof u);
    int ex = (int)((u >> 52) & 0x7ff);
    if (__builtin_expect(ex == 0x7ff, 0)) {
        xsum_add(s, x);
        return;
    }
    int64_t m = (int64_t)(u & 0xfffffffffffffULL) | ((int64_t)(ex != 0) << 52);
    int64_t sg = (int64_t)u >> 63; /* 0 or -1: m or -m as (m ^ sg) - sg */
    B->bin[ex] += (m ^ sg) - sg;
    B->used[ex >> 6] |= (uint64_t)1 << (ex & 63);
    if (__builtin_expect(++B->adds >= XSUM_BIN_ADDS, 0))
        xsum_bins_flush(B, s);
}

/* Exact sums as OpenMP reductions: reduction(xsum_merge : a, b) gives each thread its own
 * zeroed accumulators and merges them exactly at the end, so the result does not depend on the
 * thread count or the schedule. */
#ifdef _OPENMP
#pragma omp declare reduction(xsum_merge:xsum                                                      \
                              : xsum_merge(&omp_out, &omp_in)) initializer(xsum_init(&omp_priv))
#endif

#endif

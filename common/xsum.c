/* Exact summation: see xsum.h. A double m 2^e (m a 53-bit integer, e >= -1074) sets bits
 * e + 1074 ... e + 1126 of the fixed-point number; digit k holds bits 32k ... 32k + 31. */
#include "xsum.h"

#include <math.h>
#include <string.h>

#define MASK32 0xffffffffLL

void xsum_init(xsum *s)
{
    memset(s, 0, sizeof *s);
}

/* Every digit back into [0, 2^32) but the top one, which carries the sign. */
void xsum_carry(xsum *s)
{
    for (int k = 0; k < XSUM_LIMBS - 1; k++) {
        int64_t c = s->limb[k] >> 32; /* floor division by 2^32 (arithmetic shift) */
        s->limb[k] -= c * ((int64_t)1 << 32);
        s->limb[k + 1] += c;
    }
    s->adds = 0;
}

void xsum_merge(xsum *s, const xsum *t)
{
    xsum u = *t;
    xsum_carry(&u);
    xsum_carry(s);
    for (int k = 0; k < XSUM_LIMBS; k++)
        s->limb[k] += u.limb[k];
    s->inf |= t->inf;
    s->nan |= t->nan;
    xsum_carry(s);
}

void xsum_bins_init(xsum_bins *B)
{
    memset(B, 0, sizeof *B);
}

void xsum_bins_flush(xsum_bins *B, xsum *s)
{
    for (int w = 0; w < XSUM_BINS / 64; w++)
        for (uint64_t bits = B->used[w]; bits; bits &= bits - 1) {
            int e = 64 * w + __builtin_ctzll(bits);
            int64_t v = B->bin[e];
            B->bin[e] = 0;
            int neg = v < 0;
            uint64_t mag = neg ? 0 - (uint64_t)v : (uint64_t)v; /* |v| < 2^63 */
            if (v != 0) /* bin 0 (subnormals) has bin 1's scale */
                xsum_add_digits(s, mag, neg, e > 0 ? e - 1 : 0);
        }
    memset(B->used, 0, sizeof B->used);
    B->adds = 0;
}

double xsum_round(const xsum *in)
{
    if (in->nan || in->inf == 3)
        return NAN;
    if (in->inf)
        return in->inf == 1 ? INFINITY : -INFINITY;
    xsum s = *in;
    xsum_carry(&s);
    int neg = s.limb[XSUM_LIMBS - 1] < 0;
    if (neg) { /* the magnitude: two's complement of the digits */
        int64_t c = 1;
        for (int k = 0; k < XSUM_LIMBS; k++) {
            int64_t v = (~s.limb[k] & MASK32) + c;
            c = v >> 32;
            s.limb[k] = v & MASK32;
        }
    }
    int top = XSUM_LIMBS - 1;
    while (top >= 0 && s.limb[top] == 0)
        top--;
    if (top < 0)
        return 0.0;
    int hb = 31;
    while (!((s.limb[top] >> hb) & 1))
        hb--;
    int H = 32 * top + hb; /* the highest set bit */
    /* the 64 bits from H down, and whether any bit below them is set */
    uint64_t bits = 0;
    int sticky = 0;
    for (int p = H; p > H - 64; p--) {
        bits <<= 1;
        if (p >= 0)
            bits |= (uint64_t)((s.limb[p >> 5] >> (p & 31)) & 1);
    }
    int low = H - 64; /* bits low ... 0 are below */
    for (int k = 0; k <= (low >= 0 ? low >> 5 : -1) && !sticky; k++) {
        int64_t v = s.limb[k];
        if (k == low >> 5)
            v &= (low & 31) == 31 ? MASK32 : (((int64_t)1 << ((low & 31) + 1)) - 1);
        sticky = v != 0;
    }
    double r;
    if (H < 53) { /* at most 53 significant bits from 2^-1074 up: exact */
        r = ldexp((double)(bits >> (63 - H)), -1074);
    } else {
        uint64_t mant = bits >> 11, rest = bits & 0x7ff;
        int guard = (int)(rest >> 10);
        int below = (rest & 0x3ff) != 0 || sticky;
        if (guard && (below || (mant & 1)))
            mant++;
        r = ldexp((double)mant, H - 52 - 1074); /* mant = 2^53 after rounding is exact too */
    }
    return neg ? -r : r;
}

void xsum_pack(const xsum *in, double out[XSUM_PACKED])
{
    xsum s = *in;
    xsum_carry(&s);
    for (int k = 0; k < XSUM_LIMBS; k++)
        out[k] = (double)s.limb[k]; /* |digit| < 2^32 (the top one: the sign, small) */
    out[XSUM_LIMBS] = s.inf;
    out[XSUM_LIMBS + 1] = s.nan;
}

void xsum_unpack(xsum *s, const double in[XSUM_PACKED])
{
    xsum_init(s);
    for (int k = 0; k < XSUM_LIMBS; k++)
        s->limb[k] = (int64_t)in[k];
    s->inf = (int32_t)in[XSUM_LIMBS];
    s->nan = (int32_t)in[XSUM_LIMBS + 1];
}

int xsum_expand(const xsum *in, double *out, int max)
{
    if (in->nan || in->inf)
        return -1;
    xsum s = *in;
    /* each remainder is below half an ulp of the last term: 53 more bits per term, so the
     * 2,144 bits take at most 41 terms */
    for (int n = 0; n < max; n++) {
        double d = xsum_round(&s);
        if (d == 0.0)
            return n;
        out[n] = d;
        xsum_add(&s, -d);
    }
    return xsum_round(&s) == 0.0 ? max : -1;
}

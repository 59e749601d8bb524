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
static void carry(xsum *s)
{
    for (int k = 0; k < XSUM_LIMBS - 1; k++) {
        int64_t c = s->limb[k] >> 32; /* floor division by 2^32 (arithmetic shift) */
        s->limb[k] -= c * ((int64_t)1 << 32);
        s->limb[k + 1] += c;
    }
    s->adds = 0;
}

void xsum_add(xsum *s, double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    int ex = (int)((u >> 52) & 0x7ff);
    int64_t m = (int64_t)(u & 0xfffffffffffffULL);
    if (ex == 0x7ff) { /* infinity or NaN */
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
    int b = ex > 0 ? ex - 1 : 0;
    if (ex > 0)
        m |= (int64_t)1 << 52;
    int k = b >> 5, sh = b & 31;
    int64_t lo = m & MASK32, hi = m >> 32; /* 32 and 21 bits */
    int64_t l = lo << sh, h = hi << sh;    /* at most 63 and 52 bits */
    int64_t d0 = l & MASK32, d1 = (l >> 32) + (h & MASK32), d2 = h >> 32;
    if (u >> 63) {
        d0 = -d0;
        d1 = -d1;
        d2 = -d2;
    }
    s->limb[k] += d0;
    s->limb[k + 1] += d1;
    s->limb[k + 2] += d2;
    if (++s->adds >= (1 << 29)) /* each digit changes by < 2^33 per add: room for 2^29 */
        carry(s);
}

void xsum_merge(xsum *s, const xsum *t)
{
    xsum u = *t;
    carry(&u);
    carry(s);
    for (int k = 0; k < XSUM_LIMBS; k++)
        s->limb[k] += u.limb[k];
    s->inf |= t->inf;
    s->nan |= t->nan;
    carry(s);
}

double xsum_round(const xsum *in)
{
    if (in->nan || in->inf == 3)
        return NAN;
    if (in->inf)
        return in->inf == 1 ? INFINITY : -INFINITY;
    xsum s = *in;
    carry(&s);
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
    carry(&s);
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

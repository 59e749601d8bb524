/* Exact summation (common/xsum.c): exact cancellation across 200 orders of magnitude, the
 * correctly rounded result at ties and just past them, subnormals, the same bits in any order and
 * for any split into merged partial sums, integer sums against 64-bit arithmetic, and the
 * special values. */
#include "suites.h"

#include "pcg32.h"
#include "xsum.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double sum_of(const double *x, int n)
{
    xsum s;
    xsum_init(&s);
    for (int i = 0; i < n; i++)
        xsum_add(&s, x[i]);
    return xsum_round(&s);
}

/* values spread over binary exponents -990 ... 990, with random signs (the same expression as
 * the Python reference of unit_correctly_rounded_against_fsum) */
static double wild(pcg32 *r)
{
    double m = pcg32_uniform(r) + 0.5, e = (double)((int)pcg32_bounded(r, 601) - 300);
    return (pcg32_bounded(r, 2) ? -1.0 : 1.0) * ldexp(m, (int)(e * 3.3));
}

START_TEST(unit_exact_cancellation_and_rounding)
{
    double a[] = {1e100, 1.0, -1e100};
    ck_assert_double_eq(sum_of(a, 3), 1.0);
    /* 1 + 2^-53 is a tie: to even (1); one more bit far below breaks it upward */
    double t[] = {1.0, ldexp(1.0, -53)};
    ck_assert_double_eq(sum_of(t, 2), 1.0);
    double u[] = {1.0, ldexp(1.0, -53), ldexp(1.0, -900)};
    ck_assert_double_eq(sum_of(u, 3), 1.0 + ldexp(1.0, -52));
    /* the tie of an odd mantissa rounds up */
    double v[] = {1.0 + ldexp(1.0, -52), ldexp(1.0, -53)};
    ck_assert_double_eq(sum_of(v, 2), 1.0 + ldexp(1.0, -51));
    /* subnormals add exactly */
    double d = ldexp(1.0, -1074), s[5] = {d, d, d, 3 * d, -d};
    ck_assert_double_eq(sum_of(s, 5), 5 * d);
    /* each value and its negative, plus a small one: exactly the small one */
    pcg32 r;
    pcg32_seed(&r, 1, 1);
    enum { N = 4001 };
    static double x[N];
    for (int i = 0; i < N - 1; i += 2) {
        x[i] = wild(&r);
        x[i + 1] = -x[i];
    }
    x[N - 1] = 0.1;
    ck_assert_double_eq(sum_of(x, N), 0.1);
    /* integers below 2^40: against 64-bit integer arithmetic */
    int64_t exact = 0;
    for (int i = 0; i < N; i++) {
        int64_t k = (int64_t)pcg32_bounded(&r, 1u << 30) * 1000 - ((int64_t)1 << 39);
        exact += k;
        x[i] = (double)k;
    }
    ck_assert_double_eq(sum_of(x, N), (double)exact);
    /* DBL_MAX twice overflows; back down it is exact again */
    double big[] = {1.7976931348623157e308, 1.7976931348623157e308};
    ck_assert(isinf(sum_of(big, 2)));
    double back[] = {1.7976931348623157e308, 1.7976931348623157e308, -1.7976931348623157e308};
    ck_assert_double_eq(sum_of(back, 3), 1.7976931348623157e308);
}
END_TEST

/* 10^5 wild values: shuffled orders and splits into merged partial sums give the same bits. */
START_TEST(invariant_order_and_split_free)
{
    enum { N = 100000 };
    static double x[N];
    pcg32 r;
    pcg32_seed(&r, 7, 3);
    for (int i = 0; i < N; i++)
        x[i] = wild(&r) * (i % 3 == 0 ? 1e-10 : 1.0);
    double ref = sum_of(x, N);
    ck_assert(isfinite(ref));
    for (int t = 0; t < 3; t++) {
        for (int i = N - 1; i > 0; i--) { /* Fisher-Yates */
            int j = (int)pcg32_bounded(&r, (uint32_t)i + 1);
            double tmp = x[i];
            x[i] = x[j];
            x[j] = tmp;
        }
        ck_assert(sum_of(x, N) == ref);
        /* split into 7 parts, merged in reverse order */
        xsum part[7], all;
        for (int p = 0; p < 7; p++)
            xsum_init(&part[p]);
        for (int i = 0; i < N; i++)
            xsum_add(&part[i % 7], x[i]);
        xsum_init(&all);
        for (int p = 6; p >= 0; p--)
            xsum_merge(&all, &part[p]);
        ck_assert(xsum_round(&all) == ref);
    }
}
END_TEST

/* Against Python's math.fsum (correctly rounded; values from the same PCG32 streams, computed
 * once with a Python PCG32): 2000 wild values (odd ones scaled by 1e-3) and the negatives of
 * every tenth. Naive left-to-right summation misses 4 of the 5 in the last bits. */
START_TEST(unit_correctly_rounded_against_fsum)
{
    const double fsum[5] = {0x1.f770d60bacee8p+989, 0x1.27a5f0e7f2805p+989, 0x1.aa65c10054af0p+988,
                            0x1.0257486efb104p+989, -0x1.00b375a30fb3ap+989};
    static double x[2200];
    int wrong_naive = 0;
    for (int seed = 1; seed <= 5; seed++) {
        pcg32 r;
        pcg32_seed(&r, (uint64_t)seed, 9);
        for (int i = 0; i < 2000; i++)
            x[i] = wild(&r) * (i % 2 ? 1e-3 : 1.0);
        for (int k = 0; k < 200; k++)
            x[2000 + k] = -x[10 * k];
        ck_assert_msg(sum_of(x, 2200) == fsum[seed - 1], "seed %d: %a, fsum %a", seed,
                      sum_of(x, 2200), fsum[seed - 1]);
        double naive = 0.0;
        for (int i = 0; i < 2200; i++)
            naive += x[i];
        wrong_naive += naive != fsum[seed - 1];
    }
    ck_assert_int_eq(wrong_naive, 4);
}
END_TEST

START_TEST(unit_special_values)
{
    double a[] = {1.0, INFINITY, 2.0};
    ck_assert(isinf(sum_of(a, 3)) && sum_of(a, 3) > 0);
    double b[] = {INFINITY, -INFINITY};
    ck_assert(isnan(sum_of(b, 2)));
    double c[] = {1.0, NAN};
    ck_assert(isnan(sum_of(c, 2)));
    double z[] = {0.0, -0.0};
    ck_assert_double_eq(sum_of(z, 2), 0.0);
    ck_assert_double_eq(sum_of(NULL, 0), 0.0);
    double n[] = {-3.5, 1.25};
    ck_assert_double_eq(sum_of(n, 2), -2.25);
}
END_TEST

/* values through bins (xsum_bins_add, flushed into s) */
static xsum bins_sum(const double *x, int n)
{
    static xsum_bins B; /* 16.6 kB: off the stack */
    xsum s;
    xsum_init(&s);
    xsum_bins_init(&B);
    for (int i = 0; i < n; i++)
        xsum_bins_add(&B, &s, x[i]);
    xsum_bins_flush(&B, &s);
    return s;
}

/* The bins give the very sum of xsum_add (the same digits after their carries, compared packed):
 * wild values with subnormals, zeros of both signs and the largest double among them; 5,000
 * equal values of the largest significand in one bin (more than one flush's worth: a bin that
 * kept 2,048 of them would overflow); the largest double 1,500 times, then its negative; the
 * special values. */
START_TEST(unit_bins_same_sum)
{
    enum { N = 100000 };
    static double x[N];
    pcg32 r;
    pcg32_seed(&r, 11, 5);
    for (int i = 0; i < N; i++) {
        x[i] = wild(&r);
        if (i % 7 == 0)
            x[i] = ldexp(x[i], -1080 + (int)pcg32_bounded(&r, 40)); /* subnormal or nearly */
        if (i % 1001 == 0)
            x[i] = i % 2 ? -0.0 : 0.0;
    }
    x[5] = DBL_MAX;
    x[6] = -DBL_MAX;
    x[N - 1] = ldexp(1.0, -1074);
    double want[XSUM_PACKED], got[XSUM_PACKED];
    xsum ref, b = bins_sum(x, N);
    xsum_init(&ref);
    for (int i = 0; i < N; i++)
        xsum_add(&ref, x[i]);
    xsum_pack(&ref, want);
    xsum_pack(&b, got);
    ck_assert(memcmp(want, got, sizeof want) == 0);
    ck_assert(xsum_round(&b) == sum_of(x, N));

    for (int i = 0; i < 5000; i++)
        x[i] = 2.0 - ldexp(1.0, -52);
    b = bins_sum(x, 5000);
    ck_assert_double_eq(xsum_round(&b), 5000.0 * 2.0 - 5000.0 * ldexp(1.0, -52));
    ck_assert(xsum_round(&b) == sum_of(x, 5000));

    for (int i = 0; i < 3000; i++)
        x[i] = i < 1500 ? DBL_MAX : -DBL_MAX;
    b = bins_sum(x, 1500);
    ck_assert(isinf(xsum_round(&b)) && xsum_round(&b) > 0);
    x[3000] = 0.5;
    b = bins_sum(x, 3001);
    ck_assert_double_eq(xsum_round(&b), 0.5);

    double inf[] = {1.0, INFINITY, 2.0}, nan[] = {INFINITY, -INFINITY, 1.0};
    b = bins_sum(inf, 3);
    ck_assert(isinf(xsum_round(&b)) && xsum_round(&b) > 0);
    b = bins_sum(nan, 3);
    ck_assert(isnan(xsum_round(&b)));
}
END_TEST

/* The exact forms: packed (for the ranks) and expanded (for checkpoints) sums come back as the
 * same exact sum: the packed digits equal, and adding the rest of the stream to either gives the
 * bits of the uninterrupted sum. Wild values over 600 binary orders of magnitude; the expansion
 * needs at most 41 doubles (2,144 bits / 53), here a handful. The OpenMP reduction gives the
 * one-thread bits for 1-4 threads. */
START_TEST(io_pack_and_expand_exact)
{
    enum { N = 20000 };
    static double x[N];
    pcg32 r;
    pcg32_seed(&r, 11, 5);
    for (int i = 0; i < N; i++)
        x[i] = wild(&r);
    for (int cut = 1; cut < N; cut += 4999) {
        xsum a, b, c;
        xsum_init(&a);
        for (int i = 0; i < cut; i++)
            xsum_add(&a, x[i]);
        double packed[XSUM_PACKED], pb[XSUM_PACKED], pa[XSUM_PACKED], e[64];
        xsum_pack(&a, packed);
        xsum_unpack(&b, packed);
        int ne = xsum_expand(&a, e, 64);
        ck_assert_int_ge(ne, 1);
        ck_assert_int_le(ne, 41);
        xsum_init(&c);
        for (int k = 0; k < ne; k++)
            xsum_add(&c, e[k]);
        xsum_pack(&b, pb);
        ck_assert(memcmp(packed, pb, sizeof pb) == 0);
        xsum_pack(&c, pb);
        ck_assert(memcmp(packed, pb, sizeof pb) == 0);
        for (int i = cut; i < N; i++) {
            xsum_add(&a, x[i]);
            xsum_add(&b, x[i]);
            xsum_add(&c, x[i]);
        }
        xsum_pack(&a, pa);
        xsum_pack(&c, pb);
        ck_assert(memcmp(pa, pb, sizeof pb) == 0);
        ck_assert(xsum_round(&b) == xsum_round(&a));
    }
    xsum z;
    xsum_init(&z);
    double e[2];
    ck_assert_int_eq(xsum_expand(&z, e, 2), 0); /* zero: no terms */
    xsum_add(&z, INFINITY);
    ck_assert_int_eq(xsum_expand(&z, e, 2), -1);
#ifdef _OPENMP
    xsum one;
    xsum_init(&one);
    for (int i = 0; i < N; i++)
        xsum_add(&one, x[i]);
    for (int t = 1; t <= 4; t++) {
        xsum red;
        xsum_init(&red);
#pragma omp parallel for num_threads(t) schedule(dynamic, 7) reduction(xsum_merge : red)
        for (int i = 0; i < N; i++)
            xsum_add(&red, x[i]);
        double p1[XSUM_PACKED], p2[XSUM_PACKED];
        xsum_pack(&one, p1);
        xsum_pack(&red, p2);
        ck_assert_msg(memcmp(p1, p2, sizeof p1) == 0, "%d threads", t);
    }
#endif
}
END_TEST

Suite *xsum_suite(void)
{
    Suite *s = suite_create("xsum");
    TCase *t = tcase_create("xsum");
    tcase_add_test(t, unit_exact_cancellation_and_rounding);
    tcase_add_test(t, invariant_order_and_split_free);
    tcase_add_test(t, unit_correctly_rounded_against_fsum);
    tcase_add_test(t, unit_special_values);
    tcase_add_test(t, unit_bins_same_sum);
    tcase_add_test(t, io_pack_and_expand_exact);
    suite_add_tcase(s, t);
    return s;
}

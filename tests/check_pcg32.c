#include "suites.h"

#include "pcg32.h"

#include <stdlib.h>

/* Reference output of the PCG32 demo program (pcg32-demo, seed 42, stream 54). */
START_TEST(unit_reference_output)
{
    pcg32 rng;
    pcg32_seed(&rng, 42u, 54u);
    const uint32_t expect[6] = {0xa15c02b7, 0x7b47f409, 0xba1d3330,
                                0x83d2f293, 0xbfa4784b, 0xcbed606e};
    for (int k = 0; k < 6; k++)
        ck_assert_uint_eq(pcg32_next(&rng), expect[k]);
}
END_TEST

/* Every value of [0, 7) drawn with frequency 1/7 within 5 sigma over 7e5 draws
 * (sigma = sqrt(N p (1-p)) ~ 293), and nothing outside. */
static void check_seven_uniform(pcg32 *rng, uint32_t (*draw)(pcg32 *, uint32_t))
{
    long hist[7] = {0};
    const long N = 700000;
    for (long k = 0; k < N; k++) {
        uint32_t r = draw(rng, 7);
        ck_assert_uint_lt(r, 7);
        hist[r]++;
    }
    for (int k = 0; k < 7; k++)
        ck_assert_int_lt(labs(hist[k] - N / 7), 5 * 293);
}

/* Bounded draws, with the modulo mapping and with Lemire's (for Lemire's also the range for a
 * bound near 2^32, where a plain multiply-shift would be biased), and uniform doubles. */
START_TEST(unit_bounded_uniform)
{
    pcg32 rng;
    pcg32_seed(&rng, 7u, 3u);
    check_seven_uniform(&rng, pcg32_bounded);
    check_seven_uniform(&rng, pcg32_bounded_fast);
    long low_third = 0;
    const uint32_t big = 3221225472u; /* 3 * 2^30 */
    for (long k = 0; k < 300000; k++) {
        uint32_t r = pcg32_bounded_fast(&rng, big);
        ck_assert_uint_lt(r, big);
        low_third += r < big / 3;
    }
    /* 1/3 of 3e5 = 1e5, standard deviation 258; 5 sigma */
    ck_assert_int_lt(labs(low_third - 100000), 5 * 258);
    double mean = 0.0;
    for (long k = 0; k < 100000; k++) {
        double u = pcg32_uniform(&rng);
        ck_assert(u >= 0.0 && u < 1.0);
        mean += u / 100000.0;
    }
    /* standard error of the mean of U(0,1) over 1e5 draws: 0.289/316 = 9.1e-4; 5 sigma */
    ck_assert_double_eq_tol(mean, 0.5, 5 * 9.1e-4);
}
END_TEST

/* Different streams of the same seed are different sequences. */
START_TEST(unit_streams_differ)
{
    pcg32 a, b;
    pcg32_seed(&a, 42u, 1u);
    pcg32_seed(&b, 42u, 2u);
    int same = 0;
    for (int k = 0; k < 100; k++)
        same += pcg32_next(&a) == pcg32_next(&b);
    ck_assert_int_lt(same, 3);
}
END_TEST

/* pcg32_fill gives the outputs of pcg32_next one by one and leaves the generator where they
 * do (lengths around its 8 lanes and its scalar tail). pcg32_advance moves it as that many
 * pcg32_next calls do (small steps one by one; large ones by their sums). */
START_TEST(unit_fill_and_advance_match_one_by_one)
{
    static uint32_t got[5000];
    const int lens[] = {0, 1, 7, 15, 16, 17, 24, 1000, 4099};
    for (int q = 0; q < (int)(sizeof lens / sizeof *lens); q++) {
        pcg32 a, b, c;
        pcg32_seed(&a, 42u + (uint64_t)q, 54u);
        b = c = a;
        pcg32_fill(&a, got, lens[q]);
        pcg32_advance(&c, (uint64_t)lens[q]);
        for (int k = 0; k < lens[q]; k++)
            ck_assert_uint_eq(got[k], pcg32_next(&b));
        ck_assert_uint_eq(a.state, b.state);
        ck_assert_uint_eq(c.state, b.state);
        ck_assert_uint_eq(pcg32_next(&a), pcg32_next(&b));
    }
    pcg32 a, b;
    pcg32_seed(&a, 7u, 3u);
    b = a;
    pcg32_advance(&a, 1ull << 40);
    pcg32_advance(&a, (1ull << 40) + 12345u);
    pcg32_advance(&b, (1ull << 41) + 12000u);
    pcg32_advance(&b, 345u);
    ck_assert_uint_eq(a.state, b.state);
    /* the period is 2^64: a full turn comes back */
    pcg32_advance(&a, ~0ull);
    pcg32_advance(&a, 1u);
    ck_assert_uint_eq(a.state, b.state);
}
END_TEST

/* pcg32_bounded_down_scan takes the outputs that pcg32_bounded_fast's draws take one by one,
 * with the outputs given in runs of any length (as cd_shuffle_skip's threads make them): bounds
 * near 3 * 2^30, where a quarter of the outputs are rejected (so also at the ends of runs), and
 * a shuffle's bounds, in runs of 1, 7, 8, 9 and 1,000 outputs. */
START_TEST(unit_scan_takes_the_draws_outputs)
{
    static uint32_t raw[1000];
    const uint32_t tops[] = {3221225472u, 5000u, 2u, 100000u};
    const int counts[] = {20000, 4999, 1, 99999};
    const int runs[] = {1, 7, 8, 9, 1000};
    for (int q = 0; q < 4; q++)
        for (int u = 0; u < 5; u++) {
            pcg32 a, b;
            pcg32_seed(&a, 9u + (uint64_t)u, (uint64_t)q);
            b = a;
            int done = 0, calls = 0;
            while (done < counts[q]) {
                int want = counts[q] - done < runs[u] ? counts[q] - done : runs[u];
                pcg32 g = a;
                pcg32_fill(&g, raw, want);
                int took = pcg32_bounded_down_scan(tops[q], counts[q], &done, raw, want);
                ck_assert_int_ge(took, 0);
                ck_assert_int_le(took, want);
                pcg32_advance(&a, (uint64_t)took);
                ck_assert_int_lt(++calls, 10 * counts[q]);
            }
            ck_assert_int_eq(done, counts[q]);
            long rejected = 0;
            for (int i = 0; i < counts[q]; i++) {
                pcg32 c = b;
                pcg32_bounded_fast(&b, tops[q] - (uint32_t)i);
                pcg32_next(&c);
                rejected += c.state != b.state;
            }
            ck_assert_uint_eq(a.state, b.state);
            if (q == 0) /* about a quarter of 20,000: 5,000 +- 61 */
                ck_assert_int_gt(rejected, 4000);
        }
}
END_TEST

Suite *pcg32_suite(void)
{
    Suite *s = suite_create("pcg32");
    TCase *tc = tcase_create("unit");
    tcase_add_test(tc, unit_reference_output);
    tcase_add_test(tc, unit_bounded_uniform);
    tcase_add_test(tc, unit_streams_differ);
    tcase_add_test(tc, unit_fill_and_advance_match_one_by_one);
    tcase_add_test(tc, unit_scan_takes_the_draws_outputs);
    suite_add_tcase(s, tc);
    return s;
}

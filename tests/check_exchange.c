/* The one-process parts of common/exchange.c: keyed_sort (a merge of the sorted runs a gather
 * brings, qsort for anything else) against a reference sort, and the id table (a stamp per
 * build: entries of the last build are gone, lookups O(1), grown with the ids). The parts that
 * move particles between ranks are tested under mpirun (check_mpi.c). */
#include "suites.h"

#include "exchange.h"
#include "pcg32.h"

#include <stdlib.h>
#include <string.h>

static int by_key_ref(const void *a, const void *b)
{
    uint64_t x = ((const keyed_ref *)a)->key, y = ((const keyed_ref *)b)->key;
    int r = ((const keyed_ref *)a)->rec, s = ((const keyed_ref *)b)->rec;
    return x != y ? (x > y) - (x < y) : (r > s) - (r < s);
}

/* Sorted runs of random lengths (1 to 64 runs: merged; beyond: qsort), random keys, repeated
 * keys across runs, already sorted input: the keys come out in order, records of equal keys in
 * their input order (the merge is stable; qsort broke such ties in its own order, so the result
 * depended on the number of runs), every record once. The 100- and 300-run cases start each run
 * below the last one's end, so that all their runs are seen (those of the 65- and 70-run cases
 * joined up in part, and qsort never ran). */
START_TEST(unit_keyed_sort_runs)
{
    pcg32 rng;
    pcg32_seed(&rng, 21, 4);
    enum { N = 5000 };
    static keyed_ref kr[N], ref[N];
    int cases[] = {1, 2, 3, 7, 64, 65, 70, 100, 300, 0};
    int apart = 0;
    for (int c = 0; cases[c] > 0; c++) {
        int runs = cases[c], n = 0;
        uint64_t last = 0;
        for (int r = 0; r < runs; r++) {
            int len = (int)pcg32_bounded(&rng, N / runs) + (r == 0 || runs >= 100);
            uint64_t key = pcg32_bounded(&rng, 1000);
            if (runs >= 100 && r > 0) /* below the last run's end: a run of its own */
                key = last > 0 ? pcg32_bounded(&rng, (uint32_t)last) : 0;
            for (int k = 0; k < len && n < N; k++) {
                key += pcg32_bounded(&rng, 3); /* equal neighbours too */
                kr[n] = (keyed_ref){key, n};
                n++;
            }
            last = key;
        }
        int found = 1;
        for (int k = 1; k < n; k++)
            found += kr[k].key < kr[k - 1].key;
        apart += runs >= 100 && found > 64;
        memcpy(ref, kr, (size_t)n * sizeof *kr);
        qsort(ref, (size_t)n, sizeof *ref, by_key_ref);
        keyed_sort(kr, n);
        int *seen = calloc((size_t)n, sizeof *seen);
        for (int k = 0; k < n; k++) {
            ck_assert_msg(kr[k].key == ref[k].key, "%d runs: key %d out of order", runs, k);
            ck_assert_msg(kr[k].rec == ref[k].rec, "%d runs: record %d of key %llu out of order",
                          runs, k, (unsigned long long)kr[k].key);
            ck_assert(kr[k].rec >= 0 && kr[k].rec < n);
            seen[kr[k].rec]++;
        }
        for (int k = 0; k < n; k++)
            ck_assert_int_eq(seen[k], 1);
        free(seen);
    }
    ck_assert_int_eq(apart, 2); /* the qsort path ran */
}
END_TEST

/* The table answers for the ids of its last build only, and grows with them. */
START_TEST(unit_id_map_stamps)
{
    particles P;
    memset(&P, 0, sizeof P);
    int ids1[] = {5, 2, 9}, ids2[] = {2, 40, 7, 1};
    id_map m;
    memset(&m, 0, sizeof m);
    diag e;
    P.id = ids1;
    P.n = 3;
    ck_assert_int_eq(exchange_id_map(&m, &P, &e), CDLAB_OK);
    ck_assert_int_eq(exchange_local_of(&m, 9), 2);
    ck_assert_int_eq(exchange_local_of(&m, 2), 1);
    ck_assert_int_eq(exchange_local_of(&m, 3), -1);
    ck_assert_int_eq(exchange_local_of(&m, -1), -1);
    ck_assert_int_eq(exchange_local_of(&m, 1000), -1);
    P.id = ids2;
    P.n = 4;
    ck_assert_int_eq(exchange_id_map(&m, &P, &e), CDLAB_OK);
    ck_assert_int_eq(exchange_local_of(&m, 9), -1); /* gone with the last build */
    ck_assert_int_eq(exchange_local_of(&m, 5), -1);
    ck_assert_int_eq(exchange_local_of(&m, 2), 0);
    ck_assert_int_eq(exchange_local_of(&m, 40), 1);
    ck_assert_int_eq(exchange_local_of(&m, 1), 3);
    exchange_id_map_free(&m);
}
END_TEST

Suite *exchange_suite(void)
{
    Suite *s = suite_create("exchange");
    TCase *t = tcase_create("exchange");
    tcase_add_test(t, unit_keyed_sort_runs);
    tcase_add_test(t, unit_id_map_stamps);
    suite_add_tcase(s, t);
    return s;
}

/* Recursive coordinate bisection (common/decomp.c): every position has exactly one owner whose
 * box holds it, the parts are balanced for any P, cuts avoid the planes of a lattice, the boxes
 * tile a periodic box, weights are balanced, the parts near a point agree with a brute-force
 * search over boxes and periodic images, and the result is a pure function of its input. */
#include "suites.h"

#include "decomp.h"
#include "pcg32.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double c_of(vec3 v, int a)
{
    return a == 0 ? v.x : a == 1 ? v.y : v.z;
}

static int in_box(const decomp *D, int p, vec3 x)
{
    for (int a = 0; a < 3; a++)
        if (!(c_of(x, a) >= c_of(D->lo[p], a) && c_of(x, a) < c_of(D->hi[p], a)))
            return 0;
    return 1;
}

static vec3 *random_points(int n, vec3 lo, vec3 hi, int dim, uint64_t seed)
{
    pcg32 r;
    pcg32_seed(&r, seed, 1);
    vec3 *x = malloc((size_t)n * sizeof *x);
    for (int i = 0; i < n; i++) {
        x[i] =
            v3(lo.x + (hi.x - lo.x) * pcg32_uniform(&r), lo.y + (hi.y - lo.y) * pcg32_uniform(&r),
               dim == 3 ? lo.z + (hi.z - lo.z) * pcg32_uniform(&r) : 0.0);
    }
    return x;
}

/* 1000 random points in 3D, P = 1 ... 13: each point in exactly one box, the owner's; the
 * counts within ceil(log2 P) + 1 of n/P (each cut is exact to one point). */
START_TEST(unit_owner_and_balance_any_p)
{
    int n = 1000;
    vec3 *x = random_points(n, v3(0, 0, 0), v3(3, 2, 1), 3, 7);
    pbox open = {{0, 0, 0}, 0, v3(0, 0, 0), v3(0, 0, 0), v3(0, 0, 0)};
    for (int P = 1; P <= 13; P++) {
        decomp D;
        diag err;
        ck_assert_int_eq(decomp_build(&D, P, x, NULL, n, 3, &open, &err), CDLAB_OK);
        int count[13] = {0};
        for (int i = 0; i < n; i++) {
            int o = decomp_owner(&D, x[i]), boxes = 0;
            ck_assert(o >= 0 && o < P);
            for (int p = 0; p < P; p++)
                boxes += in_box(&D, p, x[i]);
            ck_assert_int_eq(boxes, 1);
            ck_assert(in_box(&D, o, x[i]));
            count[o]++;
        }
        double slack = ceil(log2(P)) + 1;
        for (int p = 0; p < P; p++)
            ck_assert_msg(fabs(count[p] - (double)n / P) <= slack, "P = %d: part %d has %d", P, p,
                          count[p]);
        /* far outside the points: still owned (open axes extend to infinity) */
        int o = decomp_owner(&D, v3(-1e9, 5e9, 0.5));
        ck_assert(in_box(&D, o, v3(-1e9, 5e9, 0.5)));
        decomp_free(&D);
    }
    free(x);
}
END_TEST

/* The 20 x 9 lattice of experiments/ddem into 4 and 6 parts: no disc on a cut, cuts half-way
 * between lattice planes, counts within one lattice line of the mean. */
START_TEST(unit_lattice_cuts_between_planes)
{
    vec3 x[180];
    for (int i = 0; i < 180; i++)
        x[i] = v3(2 * (i % 9) + 1, 2 * (i / 9) + 1, 0);
    pbox open = {{0, 0, 0}, 0, v3(0, 0, 0), v3(0, 0, 0), v3(0, 0, 0)};
    int Ps[2] = {4, 6};
    for (int t = 0; t < 2; t++) {
        decomp D;
        diag err;
        ck_assert_int_eq(decomp_build(&D, Ps[t], x, NULL, 180, 2, &open, &err), CDLAB_OK);
        for (int k = 0; k < D.nodes; k++)
            ck_assert_double_eq(fmod(D.cut[k], 2.0), 0.0); /* planes are odd, cuts even */
        int count[6] = {0};
        for (int i = 0; i < 180; i++)
            count[decomp_owner(&D, x[i])]++;
        for (int p = 0; p < Ps[t]; p++)
            ck_assert_msg(abs(count[p] - 180 / Ps[t]) <= 9, "P = %d: part %d has %d", Ps[t], p,
                          count[p]);
        decomp_free(&D);
    }
}
END_TEST

/* Fully periodic 3D box, P = 7: the boxes lie in the period and their volumes sum to it. */
START_TEST(unit_periodic_boxes_tile_the_period)
{
    vec3 *x = random_points(500, v3(1, 2, 3), v3(5, 4, 6), 3, 11);
    pbox b = {{1, 1, 1}, 1, v3(1, 2, 3), v3(0, 0, 0), v3(0, 0, 0)};
    pbox_set_period(&b, v3(4, 2, 3));
    decomp D;
    diag err;
    ck_assert_int_eq(decomp_build(&D, 7, x, NULL, 500, 3, &b, &err), CDLAB_OK);
    double vol = 0.0;
    for (int p = 0; p < 7; p++) {
        vec3 e = v3_sub(D.hi[p], D.lo[p]);
        ck_assert(D.lo[p].x >= 1 && D.hi[p].x <= 5 && D.lo[p].y >= 2 && D.hi[p].y <= 4 &&
                  D.lo[p].z >= 3 && D.hi[p].z <= 6);
        vol += e.x * e.y * e.z;
    }
    ck_assert_double_eq_tol(vol, 24.0, 1e-12);
    decomp_free(&D);
    free(x);
}
END_TEST

/* Weights in [0, 2): each part's weight within a few of the largest weight of the mean. */
START_TEST(unit_weights_balanced)
{
    int n = 2000;
    vec3 *x = random_points(n, v3(0, 0, 0), v3(1, 1, 0), 2, 3);
    double *w = malloc((size_t)n * sizeof *w), total = 0.0;
    pcg32 r;
    pcg32_seed(&r, 5, 2);
    for (int i = 0; i < n; i++)
        total += (w[i] = 2.0 * pcg32_uniform(&r) * (x[i].x < 0.3 ? 5.0 : 1.0));
    pbox open = {{0, 0, 0}, 0, v3(0, 0, 0), v3(0, 0, 0), v3(0, 0, 0)};
    decomp D;
    diag err;
    ck_assert_int_eq(decomp_build(&D, 5, x, w, n, 2, &open, &err), CDLAB_OK);
    double part[5] = {0};
    int count[5] = {0};
    for (int i = 0; i < n; i++) {
        part[decomp_owner(&D, x[i])] += w[i];
        count[decomp_owner(&D, x[i])]++;
    }
    for (int p = 0; p < 5; p++)
        ck_assert_msg(fabs(part[p] - total / 5) < 3 * 10.0, "part %d weight %g of %g", p, part[p],
                      total / 5);
    ck_assert_int_lt(count[0] + count[1], count[3] + count[4]); /* heavy points: fewer of them */
    decomp_free(&D);
    free(w);
    free(x);
}
END_TEST

/* decomp_near against every box and every periodic image (x, y periodic, z open), P = 7. */
START_TEST(unit_near_matches_brute_force)
{
    int n = 800;
    vec3 *x = random_points(n, v3(0, 0, -1), v3(4, 3, 2), 3, 13);
    pbox b = {{1, 1, 0}, 1, v3(0, 0, 0), v3(0, 0, 0), v3(0, 0, 0)};
    pbox_set_period(&b, v3(4, 3, 0));
    decomp D;
    diag err;
    ck_assert_int_eq(decomp_build(&D, 7, x, NULL, n, 3, &b, &err), CDLAB_OK);
    double range = 0.4;
    int out[7], found = 0;
    for (int i = 0; i < n; i++) {
        int m = decomp_near(&D, x[i], range, out);
        int want[7] = {0};
        for (int sx = -1; sx <= 1; sx++)
            for (int sy = -1; sy <= 1; sy++) {
                vec3 y = v3(x[i].x + 4 * sx, x[i].y + 3 * sy, x[i].z);
                for (int p = 0; p < 7; p++) {
                    int ok = 1;
                    for (int a = 0; a < 3; a++)
                        ok &= c_of(y, a) - range < c_of(D.hi[p], a) &&
                              c_of(y, a) + range >= c_of(D.lo[p], a);
                    want[p] |= ok;
                }
            }
        int k = 0;
        for (int p = 0; p < 7; p++)
            if (want[p]) {
                ck_assert_int_lt(k, m);
                ck_assert_int_eq(out[k++], p);
            }
        ck_assert_int_eq(k, m);
        ck_assert_int_ge(m, 1); /* at least the owner */
        found += m > 1;
    }
    ck_assert_int_gt(found, n / 10); /* the test saw halos */
    decomp_free(&D);
    free(x);
}
END_TEST

/* The same input gives the same cuts (every rank computes the decomposition itself). */
START_TEST(determinism_decomp_pure)
{
    vec3 *x = random_points(300, v3(0, 0, 0), v3(1, 1, 1), 3, 17);
    pbox open = {{0, 0, 0}, 0, v3(0, 0, 0), v3(0, 0, 0), v3(0, 0, 0)};
    decomp A, B;
    diag err;
    ck_assert_int_eq(decomp_build(&A, 6, x, NULL, 300, 3, &open, &err), CDLAB_OK);
    ck_assert_int_eq(decomp_build(&B, 6, x, NULL, 300, 3, &open, &err), CDLAB_OK);
    ck_assert_int_eq(A.nodes, B.nodes);
    ck_assert(memcmp(A.cut, B.cut, (size_t)A.nodes * sizeof *A.cut) == 0);
    ck_assert(memcmp(A.axis, B.axis, (size_t)A.nodes * sizeof *A.axis) == 0);
    decomp_free(&A);
    decomp_free(&B);
    free(x);
}
END_TEST

Suite *decomp_suite(void)
{
    Suite *s = suite_create("decomp");
    TCase *t = tcase_create("decomp");
    tcase_add_test(t, unit_owner_and_balance_any_p);
    tcase_add_test(t, unit_lattice_cuts_between_planes);
    tcase_add_test(t, unit_periodic_boxes_tile_the_period);
    tcase_add_test(t, unit_weights_balanced);
    tcase_add_test(t, unit_near_matches_brute_force);
    tcase_add_test(t, determinism_decomp_pure);
    suite_add_tcase(s, t);
    return s;
}

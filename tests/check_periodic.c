/* Periodic boundaries, frozen particles, chute particle files and the thread independence of
 * the DEM engine; the contact search's sort and the memory it gives back. */
#include "suites.h"

#include "dem/dem_config.h"
#include "grow.h"
#include "parallel.h"
#include "pcg32.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Brute-force minimum-image candidates: pairs with gap < detect gap. */
static int brute_pairs(const particles *P, double gap)
{
    int n = 0;
    for (int i = 0; i < P->n; i++)
        for (int j = i + 1; j < P->n; j++) {
            vec3 d = pbox_delta(&P->box, P->x[i], P->x[j]);
            if (v3_norm(d) - P->r[i] - P->r[j] < gap)
                n++;
        }
    return n;
}

/* Random polydisperse spheres in a fully periodic box, for boxes of 2, 3 and 7 cells per axis
 * (2 cells: each neighbour cell must be visited once, not twice): the cell list finds exactly
 * the brute-force minimum-image pairs, and each pair once. */
START_TEST(unit_periodic_detection_matches_brute_force)
{
    const double sizes[] = {4.5, 6.6, 15.0};
    for (int q = 0; q < 3; q++) {
        double L = sizes[q];
        particles P;
        diag err;
        int n = (int)(0.3 * L * L * L);
        ck_assert_int_eq(particles_init(&P, n, 3, &err), CDLAB_OK);
        P.box = (pbox){.periodic = {1, 1, 1}, .any = 1, .lo = v3(-1, 0, 2)};
        pbox_set_period(&P.box, v3(L, L, L));
        pcg32 rng;
        pcg32_seed(&rng, 11 + q, 5);
        for (int i = 0; i < n; i++) {
            /* also outside the box: wrapping must bring them in */
            P.x[i] = v3(-1 + 3 * L * pcg32_uniform(&rng) - L, 2 * L * pcg32_uniform(&rng),
                        2 + L * pcg32_uniform(&rng));
            particles_set_body(&P, i, 0.3 + 0.2 * pcg32_uniform(&rng), 1.0);
        }
        particles_wrap(&P);
        for (int i = 0; i < n; i++) {
            ck_assert(P.x[i].x >= -1 && P.x[i].x < -1 + L);
            ck_assert(P.x[i].y >= 0 && P.x[i].y < L);
        }
        contact_list C;
        memset(&C, 0, sizeof C);
        detect_params dp = {.gap = 0.2, .mu = 0, .warm_start = 1};
        ck_assert_int_eq(contacts_detect(&C, &P, NULL, 0, &dp, &err), CDLAB_OK);
        int expect = brute_pairs(&P, 0.2);
        ck_assert_msg(C.n == expect, "L = %g: %d pairs found, brute force %d", L, C.n, expect);
        for (int k = 1; k < C.n; k++) /* each pair once, in key order */
            ck_assert_msg(C.c[k].key > C.c[k - 1].key, "pair %d: keys not increasing", k);
        ck_assert_int_gt(expect, n / 4);
        contacts_free(&C);
        particles_free(&P);
    }
}
END_TEST

/* The contact search on 3 threads (shares of 16,384 particles, each sorted by its thread, the
 * walls' pairs first) gives the candidates of one thread bit for bit, in strictly increasing key
 * order: 40,000 spheres in a box with 3 walls, stored in storage (= id) order and with the ids
 * shuffled (the final sort then runs). */
/* The cell list built on threads (the bounding box, the cells' indices; from 4 threads the bin
 * by ranges of cells, here 4 and 7 of them) is the one built on one thread: the same cell starts
 * and the same order, each cell's particles in index order; and a non-finite position is
 * reported as the first such particle in storage order. */
START_TEST(unit_threaded_cells_match_one_thread)
{
    enum { N = 50000 };
    particles P;
    diag err;
    ck_assert_int_eq(particles_init(&P, N, 3, &err), CDLAB_OK);
    pcg32 rng;
    pcg32_seed(&rng, 5, 1);
    for (int i = 0; i < N; i++) {
        P.x[i] =
            v3(30.0 * pcg32_uniform(&rng), 30.0 * pcg32_uniform(&rng), 30.0 * pcg32_uniform(&rng));
        particles_set_body(&P, i, 0.5, 1.0);
    }
    int saved = cdlab_threads();
    cells G[2];
    memset(G, 0, sizeof G);
    cdlab_set_threads(1);
    ck_assert_int_eq(cells_build(&G[0], &P, 1.1, &err), CDLAB_OK);
    int ncell = G[0].nx * G[0].ny * G[0].nz;
    ck_assert_int_gt(ncell, 1000);
    ck_assert_int_eq(G[0].start[ncell], N);
    const int threads[] = {4, 7, 3};
    for (int q = 0; q < 3; q++) {
        cdlab_set_threads(threads[q]);
        ck_assert_int_eq(cells_build(&G[1], &P, 1.1, &err), CDLAB_OK);
        ck_assert_msg(memcmp(G[0].start, G[1].start, (size_t)(ncell + 1) * sizeof(int)) == 0,
                      "%d threads: other cell starts", threads[q]);
        ck_assert_msg(memcmp(G[0].order, G[1].order, (size_t)N * sizeof(int)) == 0,
                      "%d threads: another order", threads[q]);
    }
    for (int c = 0; c < ncell; c++)
        for (int k = G[1].start[c]; k < G[1].start[c + 1]; k++) {
            ck_assert_int_eq(G[1].cell_of[G[1].order[k]], c);
            ck_assert(k == G[1].start[c] || G[1].order[k] > G[1].order[k - 1]);
        }
    P.x[40000].y = NAN;
    P.x[30000].x = INFINITY;
    ck_assert_int_eq(cells_build(&G[1], &P, 1.1, &err), CDLAB_ERR_NUMERIC);
    ck_assert_msg(strstr(err.msg, "particle 30000 ") != NULL, "%s", err.msg);
    cdlab_set_threads(saved);
    cells_free(&G[0]);
    cells_free(&G[1]);
    particles_free(&P);
}
END_TEST

START_TEST(unit_threaded_search_matches_one_thread)
{
    enum { N = 40000 };
    particles P;
    diag err;
    ck_assert_int_eq(particles_init(&P, N, 3, &err), CDLAB_OK);
    pcg32 rng;
    pcg32_seed(&rng, 21, 1);
    double L = 40.0;
    for (int i = 0; i < N; i++) {
        P.x[i] = v3(L * pcg32_uniform(&rng), L * pcg32_uniform(&rng), L * pcg32_uniform(&rng));
        particles_set_body(&P, i, 0.6 + 0.2 * pcg32_uniform(&rng), 1.0);
    }
    wall walls[3];
    memset(walls, 0, sizeof walls);
    vec3 normals[3] = {v3(0, 0, 1), v3(1, 0, 0), v3(0, 1, 0)};
    for (int w = 0; w < 3; w++) {
        walls[w].kind = WALL_PLANE;
        walls[w].n = normals[w];
        walls[w].p = v3(0, 0, 0);
    }
    int saved = cdlab_threads();
    for (int shuffled = 0; shuffled < 2; shuffled++) {
        if (shuffled)
            for (int i = N - 1; i > 0; i--) {
                int k = (int)pcg32_bounded(&rng, (uint32_t)i + 1), t = P.id[i];
                P.id[i] = P.id[k];
                P.id[k] = t;
            }
        /* one thread; 3 threads; 3 threads on a grid searched every step (CD: the search reads
         * the grid's copy in cell order and keeps its shares' lists), searched twice */
        pair_ref *r[3] = {NULL, NULL, NULL};
        int n[3] = {0, 0, 0}, cap[3] = {0, 0, 0};
        for (int t = 0; t < 3; t++) {
            cells G;
            memset(&G, 0, sizeof G);
            G.keep_shares = t == 2;
            cdlab_set_threads(t ? 3 : 1);
            for (int again = 0; again <= (t == 2); again++)
                ck_assert_int_eq(
                    contacts_find_pairs(&G, &P, walls, 3, 0.2, &r[t], &n[t], &cap[t], &err),
                    CDLAB_OK);
            ck_assert(t < 2 || G.cx != NULL);
            cells_free(&G);
        }
        ck_assert_int_gt(n[0], N);
        for (int t = 1; t < 3; t++) {
            ck_assert_int_eq(n[0], n[t]);
            ck_assert_msg(memcmp(r[0], r[t], (size_t)n[0] * sizeof *r[0]) == 0,
                          "shuffled %d: 3 threads (grid %d) differ from 1", shuffled, t);
        }
        int walls_seen = 0;
        for (int k = 0; k < n[0]; k++) {
            ck_assert(k == 0 || r[0][k].key > r[0][k - 1].key);
            walls_seen += r[0][k].i < 0;
        }
        ck_assert_int_gt(walls_seen, 100);
        for (int t = 0; t < 3; t++)
            free(r[t]);
    }
    cdlab_set_threads(saved);
    particles_free(&P);
}
END_TEST

/* Warm start: a new detection gives every pair that was a candidate before the force it had, bit
 * for bit (negative zeros included), and the new pairs a zero force; 3,000 spheres stored in
 * random order moved between the detections so that pairs leave and pairs arrive, on 1 and 3
 * threads (the forces are kept in blocks in parallel). */
START_TEST(unit_warm_start_carries_forces_by_key)
{
    enum { N = 3000 };
    particles P;
    diag err;
    ck_assert_int_eq(particles_init(&P, N, 3, &err), CDLAB_OK);
    int saved = cdlab_threads();
    for (int t = 0; t < 2; t++) {
        cdlab_set_threads(t ? 3 : 1);
        pcg32 rng;
        pcg32_seed(&rng, 5, 2);
        for (int i = 0; i < N; i++) {
            P.x[i] =
                v3(15 * pcg32_uniform(&rng), 15 * pcg32_uniform(&rng), 15 * pcg32_uniform(&rng));
            particles_set_body(&P, i, 0.5, 1.0);
        }
        contact_list C;
        memset(&C, 0, sizeof C);
        detect_params dp = {.gap = 0.2, .mu = 0.3, .warm_start = 1};
        ck_assert_int_eq(contacts_detect(&C, &P, NULL, 0, &dp, &err), CDLAB_OK);
        int n0 = C.n;
        uint64_t *key = malloc((size_t)n0 * sizeof *key);
        vec3 *R = malloc((size_t)n0 * sizeof *R);
        ck_assert(key && R);
        for (int k = 0; k < n0; k++) {
            C.c[k].R = k % 3 == 0   ? v3(k + 0.5, -0.25 * k, 1.0 / (k + 1))
                       : k % 3 == 1 ? v3(-0.0, 0.0, -0.0)
                                    : v3_zero();
            key[k] = C.c[k].key;
            R[k] = C.c[k].R;
        }
        for (int i = 0; i < N; i++)
            P.x[i] = v3_add(P.x[i], v3(0.1 * pcg32_uniform(&rng), 0.1 * pcg32_uniform(&rng),
                                       0.1 * pcg32_uniform(&rng)));
        ck_assert_int_eq(contacts_detect(&C, &P, NULL, 0, &dp, &err), CDLAB_OK);
        int kept = 0, fresh = 0, a = 0;
        for (int k = 0; k < C.n; k++) {
            while (a < n0 && key[a] < C.c[k].key)
                a++;
            vec3 want = a < n0 && key[a] == C.c[k].key ? R[a] : v3_zero();
            kept += a < n0 && key[a] == C.c[k].key;
            fresh += !(a < n0 && key[a] == C.c[k].key);
            ck_assert_msg(memcmp(&C.c[k].R, &want, sizeof want) == 0, "pair %d: force not carried",
                          k);
        }
        ck_assert_msg(kept > n0 / 2 && fresh > 50 && kept < n0, "%d kept, %d new of %d", kept,
                      fresh, C.n);
        free(key);
        free(R);
        contacts_free(&C);
    }
    cdlab_set_threads(saved);
    particles_free(&P);
}
END_TEST

static int cmp_key(const void *a, const void *b)
{
    uint64_t ka = ((const pair_ref *)a)->key, kb = ((const pair_ref *)b)->key;
    return (ka > kb) - (ka < kb);
}

/* The in-place sort of the candidates (contacts_sort_refs) orders keys as qsort does, on the
 * inputs that trouble a plain quicksort (random, sorted, reversed, all equal, few distinct,
 * organ pipe, interleaved), with its own depth limit and with limits of 0 and 1 (heapsort of
 * the whole, of the parts). The records travel whole with their keys. */
START_TEST(unit_sort_refs_matches_qsort)
{
    enum { N = 20011 };
    pair_ref *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    ck_assert(a && b);
    pcg32 rng;
    pcg32_seed(&rng, 7, 3);
    for (int pattern = 0; pattern < 7; pattern++) {
        for (int n = 0; n <= N; n += n < 40 ? 1 : 4999) {
            for (int k = 0; k < n; k++) {
                uint64_t key;
                switch (pattern) {
                case 0:
                    key = ((uint64_t)pcg32_next(&rng) << 32) | pcg32_next(&rng);
                    break;
                case 1:
                    key = (uint64_t)k;
                    break;
                case 2:
                    key = (uint64_t)(n - k);
                    break;
                case 3:
                    key = 42;
                    break;
                case 4:
                    key = pcg32_next(&rng) % 3;
                    break;
                case 5:
                    key = (uint64_t)(k < n / 2 ? k : n - k);
                    break;
                default: /* interleaved: odd positions high, even ones low */
                    key = k % 2 ? (uint64_t)(n + k) : (uint64_t)(n - k);
                }
                a[k] = (pair_ref){key, (int)(key % 1000003), k};
            }
            memcpy(b, a, (size_t)n * sizeof *a);
            int limit = (pattern + n) % 3; /* 0, 1: heapsort; 2: the sort's own limit */
            if (limit == 2)
                contacts_sort_refs(a, n);
            else
                contacts_sort_refs_depth(a, n, limit);
            qsort(b, (size_t)n, sizeof *b, cmp_key);
            for (int k = 0; k < n; k++) {
                ck_assert_msg(a[k].key == b[k].key, "pattern %d, n = %d: key %d differs", pattern,
                              n, k);
                ck_assert_int_eq(a[k].i, (int)(a[k].key % 1000003)); /* the record moved whole */
            }
            /* every record once: the j are a permutation of 0..n-1 */
            long sum = 0;
            for (int k = 0; k < n; k++)
                sum += a[k].j;
            ck_assert_int_eq(sum, (long)n * (n - 1) / 2);
        }
    }
    free(a);
    free(b);
}
END_TEST

/* Resident memory of this process, KiB (/proc/self/statm). */
static long resident_kib(void)
{
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    ck_assert(f && fscanf(f, "%ld %ld", &size, &resident) == 2);
    fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

/* big_release gives a big buffer's pages back (the neighbour list after a rebuild that shrank
 * it): 64 MiB touched, all but the first page released, the resident memory drops by most of it,
 * the kept page keeps its bytes and a released one reads zero. (Until 9d84b58 the advice was
 * compiled out by -D_POSIX_C_SOURCE and released nothing.) */
START_TEST(unit_big_release_gives_pages_back)
{
    size_t bytes = (size_t)64 << 20;
    unsigned char *p = big_alloc(bytes);
    ck_assert(p);
    memset(p, 1, bytes);
    long before = resident_kib();
    big_release(p, 4096, bytes);
    long after = resident_kib();
    ck_assert_msg(before - after > 48 * 1024, "released %ld KiB of 65536", before - after);
    ck_assert_int_eq(p[4095], 1);
    ck_assert_int_eq(p[bytes - 1], 0);
    free(p);
}
END_TEST

/* discard_range gives the whole pages of a range of a malloc'ed block back (a rebuild's
 * candidates as they are read): 64 MiB touched, its first 48 MiB discarded, the resident memory
 * drops by most of them, a byte well inside the range reads zero, the bytes outside it (the
 * first 64, those past its end) keep theirs. */
START_TEST(unit_discard_range_gives_pages_back)
{
    size_t bytes = (size_t)64 << 20, to = (size_t)48 << 20;
    unsigned char *p = malloc(bytes);
    ck_assert(p);
    memset(p, 1, bytes);
    long before = resident_kib();
    discard_range(p, 0, to + 100, bytes);
    long after = resident_kib();
    ck_assert_msg(before - after > 40 * 1024, "released %ld KiB of 49152", before - after);
    ck_assert_int_eq(p[0], 1);
    ck_assert_int_eq(p[63], 1);
    ck_assert_int_eq(p[(size_t)1 << 20], 0);
    ck_assert_int_eq(p[to - 8192], 0);
    ck_assert_int_eq(p[to + 99], 1);
    ck_assert_int_eq(p[bytes - 1], 1);
    discard_range(p, 0, bytes, 100); /* a block too small to hold a whole page: left as it is */
    ck_assert_int_eq(p[to + 99], 1);
    free(p);
}
END_TEST

/* A sphere coasting along x through a periodic box of length 3 crosses it 3 times in 10 time
 * units at v = 1: the wrapped x stays inside, the image count is 3 and the unwrapped position
 * x0 + v t (to 1e-12). */
START_TEST(unit_periodic_unwrapped_displacement)
{
    dsim s;
    dsim_open(&s, "[system]\nmode = dem\ndimension = 3\ndt = 0.01\nsteps = 1000\n"
                  "periodic = x\nbox_min = 0 0 0\nbox_max = 3 0 0\n"
                  "[particles]\ncount = 1\nradius = 0.5\nmass = 1\norigin = 1 0 0\n"
                  "[dem]\nk_n = 100\n");
    s.W.P.v[0] = v3(1, 0, 0);
    dsim_steps(&s, 1000);
    ck_assert_int_eq(s.W.P.image[0], 3);
    ck_assert(s.W.P.x[0].x >= 0 && s.W.P.x[0].x < 3);
    ck_assert_double_eq_tol(particles_unwrapped(&s.W.P, 0).x, 11.0, 1e-12);
    dsim_close(&s);
}
END_TEST

/* A particle too far out for its image count (2^31 periods, a velocity blown up): the wrap
 * leaves it as it is and names it, a NaN is left to the finiteness checks, the others wrap;
 * a DEM step that drives a particle that far stops with a message naming it, before the
 * detection (the int image count once overflowed, undefined behaviour). */
START_TEST(errors_wrap_beyond_image_range)
{
    particles P;
    diag err;
    ck_assert_int_eq(particles_init(&P, 3, 3, &err), CDLAB_OK);
    P.box = (pbox){.periodic = {1, 0, 0}, .any = 1, .lo = v3(0, 0, 0)};
    pbox_set_period(&P.box, v3(3, 0, 0));
    for (int i = 0; i < 3; i++)
        particles_set_body(&P, i, 0.5, 1.0);
    P.x[0] = v3(7.5, 0, 0);
    P.x[1] = v3(3.0 * 3e9, 1, 2);
    P.x[2] = v3(NAN, 0, 0);
    ck_assert_int_eq(particles_wrap(&P), 1);
    ck_assert_double_eq_tol(P.x[0].x, 1.5, 1e-12);
    ck_assert_int_eq(P.image[0], 2);
    ck_assert(P.x[1].x == 9e9 && P.image[3] == 0);
    ck_assert(isnan(P.x[2].x) && P.image[6] == 0);
    /* an image count near its limit: one period more is refused */
    P.x[1] = v3(4.5, 0, 0);
    P.image[3] = INT_MAX - 1;
    ck_assert_int_eq(particles_wrap_one(&P, 1), 1);
    P.image[3] = 5;
    ck_assert_int_eq(particles_wrap_one(&P, 1), 0);
    ck_assert_int_eq(P.image[3], 6);
    /* at lo + L where (x - lo) / L rounds below 1: the rounding branch moves it in */
    P.box.lo = v3(34.018771715470955, 0, 0);
    pbox_set_period(&P.box, v3(3.9538292681909302, 0, 0));
    P.x[0] = v3(P.box.lo.x + P.box.L.x, 0, 0);
    P.image[0] = 0;
    ck_assert(floor((P.x[0].x - P.box.lo.x) / P.box.L.x) == 0.0);
    ck_assert_int_eq(particles_wrap_one(&P, 0), 0);
    ck_assert(P.x[0].x >= P.box.lo.x && P.x[0].x < P.box.lo.x + P.box.L.x);
    ck_assert_int_eq(P.image[0], 1);
    particles_free(&P);

    dsim s;
    dsim_open(&s, "[system]\nmode = dem\ndimension = 3\ndt = 0.01\nsteps = 10\n"
                  "periodic = x\nbox_min = 0 0 0\nbox_max = 3 0 0\n"
                  "[particles]\ncount = 1\nradius = 0.5\nmass = 1\norigin = 1 0 0\n"
                  "[dem]\nk_n = 100\n");
    dsim_steps(&s, 2);
    s.W.P.v[0] = v3(1e12, 0, 0); /* 3.3e9 periods a step */
    status st = dem_step(&s.W, &s.S, &s.d.p, &s.st, &err);
    ck_assert_int_eq(st, CDLAB_ERR_NUMERIC);
    ck_assert_msg(strstr(err.msg, "step 3: particle 0") && strstr(err.msg, "2^31"), "%s", err.msg);
    dsim_close(&s);
}
END_TEST

/* Two spheres meeting across the periodic boundary (centres at x = 0.6 and 9.4 in a box of 10,
 * gap 0.2 through the boundary, approaching through it): the contact exists through the minimum
 * image and the elastic collision exchanges their velocities (to 1e-3 of the speed, the Verlet
 * error at omega dt = 0.01). */
START_TEST(analytic_periodic_collision_across_boundary)
{
    dsim s;
    dsim_open(&s,
              "[system]\nmode = dem\ndimension = 3\ndt = 1e-4\nsteps = 1\n"
              "periodic = x\nbox_min = 0 0 0\nbox_max = 10 0 0\n"
              "[particles]\ncount = 2\nradius = 0.5\nmass = 1\norigin = 0.6 0 0\nspacing = 7.8\n"
              "[contact]\ndetect_gap = 0.1\n"
              "[dem]\nk_n = 2e4\n");
    ck_assert_double_eq_tol(s.W.P.x[1].x, 9.4, 1e-12);
    s.W.P.v[0] = v3(-1, 0, 0);
    s.W.P.v[1] = v3(1, 0, 0);
    dsim_steps(&s, 6000);
    ck_assert_double_eq_tol(s.W.P.v[0].x, 1.0, 1e-3);
    ck_assert_double_eq_tol(s.W.P.v[1].x, -1.0, 1e-3);
    ck_assert_int_eq(s.W.P.image[0], 0);
    ck_assert_int_eq(s.W.P.image[3], 0);
    dsim_close(&s);
}
END_TEST

static const char *CHUTE =
    "[system]\nmode = dem\ndimension = 3\ndt = 1e-4\nsteps = 1\nseed = 1\n"
    "gravity = 0.4383711467890774 0 -0.898794046299167\n"
    "periodic = x y\nbox_min = 0 0 -0.5\nbox_max = %g %g 42\n"
    "[particles]\nsource = file\nformat = chute\nfile = ../bench/data/chute_cell.txt\n"
    "tile = %d %d 1\ncount = %d\ndensity = 1\n"
    "[contact]\nfriction = 0.5\ndetect_gap = 0.1\n"
    "[dem]\nk_n = 2e5\nk_t = 57142.857142857145\ndamping = rate\ndamping_normal = 50\n";

/* The chute cell tiled 2 x 2: 16,400 spheres, 400 of them frozen, with the file's velocities;
 * the copies are shifted by the cell (10); frozen spheres do not move in 20 steps while the
 * others do. */
START_TEST(io_chute_file_tiled_frozen)
{
    char ini[2048];
    snprintf(ini, sizeof ini, CHUTE, 20.0, 20.0, 2, 2, 16400);
    dsim s;
    dsim_open(&s, ini);
    particles *P = &s.W.P;
    int frozen = 0;
    for (int i = 0; i < P->n; i++)
        frozen += P->frozen[i];
    ck_assert_int_eq(P->n, 16400);
    ck_assert_int_eq(frozen, 400);
    ck_assert_double_eq_tol(P->x[4100].x, P->x[0].x + 10.0, 1e-12);
    ck_assert_double_eq_tol(P->x[3 * 4100 + 7].y, P->x[7].y + 10.0, 1e-12);
    ck_assert(P->r[5] == 0.5);
    vec3 x0 = P->x[0], x_last = P->x[P->n - 1];
    ck_assert(v3_norm(P->v[P->n - 1]) > 0.0);
    dsim_steps(&s, 20);
    ck_assert(P->x[0].x == x0.x && P->x[0].y == x0.y && P->x[0].z == x0.z);
    ck_assert(v3_norm(v3_sub(P->x[P->n - 1], x_last)) > 0.0);
    ck_assert_int_gt(s.st.n_active, P->n);
    dsim_close(&s);
}
END_TEST

/* The DEM step does not depend on the thread count: 40 steps of the chute cell (4,100
 * spheres, Kuhn law, dashpots, friction sliding) with 1 and 2 threads give bit-identical
 * positions, velocities, spins and energy ledgers. */
START_TEST(invariant_dem_threads_bit_identical)
{
#ifdef _OPENMP
    char ini[2048];
    snprintf(ini, sizeof ini, CHUTE, 10.0, 10.0, 1, 1, 4100);
    dsim a, b;
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    dsim_open(&a, ini);
    dsim_steps(&a, 40);
    omp_set_num_threads(2);
    dsim_open(&b, ini);
    dsim_steps(&b, 40);
    omp_set_num_threads(saved);
    same_particles(&a.W, &b.W);
    ck_assert_int_eq(memcmp(&a.S.E, &b.S.E, sizeof a.S.E), 0);
    ck_assert_int_gt(a.st.n_sliding, 0);
    dsim_close(&a);
    dsim_close(&b);
#endif
}
END_TEST

/* Bad periodic and file configurations give one-line errors naming the key. */
START_TEST(errors_periodic_config)
{
    const char *base = "[system]\nmode = dem\ndimension = %d\ndt = 1e-3\nsteps = 1\n%s"
                       "[particles]\ncount = 2\nradius = 0.5\nmass = 1\n%s[dem]\nk_n = 100\n";
    struct {
        int dim;
        const char *sys, *part, *expect;
    } cases[] = {
        {3, "periodic = q\nbox_min = 0 0 0\nbox_max = 9 9 9\n", "", "system.periodic"},
        {3, "periodic = x x\nbox_min = 0 0 0\nbox_max = 9 9 9\n", "", "given twice"},
        {2, "periodic = z\nbox_min = 0 0 0\nbox_max = 9 9 9\n", "", "not free in dimension 2"},
        {3, "periodic = x\nbox_min = 0 0 0\nbox_max = 2 0 0\n", "", "at least twice"},
        {3, "periodic = x\nbox_min = 5 0 0\nbox_max = 5 0 0\n", "", "must exceed box_min"},
        {3, "periodic = x\n", "", "system.box_min"},
        {3, "box_min = 0 0 0\n", "", "set system.periodic"},
        /* a wall across a periodic axis (the particles that wrapped met it from behind): a
         * plane's normal along it, even in part, or a cylinder's axis not along it */
        {3, "periodic = x\nbox_min = 0 0 0\nbox_max = 9 9 9\n",
         "[plane.side]\npoint = 0 0 0\nnormal = 1 0 1\n",
         "plane.side.normal: has a component along x"},
        {3, "periodic = x\nbox_min = 0 0 0\nbox_max = 9 9 9\n",
         "[cylinder.c]\npoint = 0 0 0\naxis = 0 0 1\nradius = 9\nsurface = inside\n",
         "cylinder.c.axis: is not along x"},
        {3, "periodic = x y\nbox_min = 0 0 0\nbox_max = 9 9 9\n",
         "[cylinder.c]\npoint = 0 0 0\naxis = 1 0 0\nradius = 9\nsurface = inside\n",
         "cylinder.c.axis: is not along y"},
        /* a kinematic drive that moves a particle and its periodic image apart (the box does
         * not turn or deform: a rotating row of touching discs in a ring lost its contact
         * across the boundary): a rotation about another axis, a gradient column of a
         * periodic axis */
        {2, "periodic = x\nbox_min = 0 0 0\nbox_max = 9 9 9\n",
         "[drive]\nmotion = rotation\nrotation = 0 0 0.01\n",
         "drive.rotation: x is periodic, and the box does not turn with the particles"},
        {3, "periodic = x y\nbox_min = 0 0 0\nbox_max = 9 9 9\n",
         "[drive]\nmotion = affine\ngradient = 0 0.001 0 0 0 0 0 0 0\n",
         "drive.gradient: y is periodic, and the box does not deform with the particles: the "
         "entry G_xy (0.001)"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char ini[1024];
        snprintf(ini, sizeof ini, base, cases[k].dim, cases[k].sys, cases[k].part);
        diag err = {{0}};
        status s = read_config_text(ini, "bad.ini", 1, &err);
        ck_assert_msg(s == CDLAB_ERR_CONFIG, "case %zu accepted", k);
        ck_assert_msg(strstr(err.msg, cases[k].expect), "case %zu: '%s' lacks '%s'", k, err.msg,
                      cases[k].expect);
        ck_assert_msg(strstr(err.msg, "bad.ini"), "case %zu: no file name in '%s'", k, err.msg);
    }
    /* what keeps the images together is taken: a rotation about the periodic axis, a shear
     * along it whose gradient lies along a bounded axis */
    const char *fine[] = {"[drive]\nmotion = rotation\nrotation = 0.01 0 0\n",
                          "[drive]\nmotion = affine\ngradient = 0 0 0.001 0 0 0 0 0 -0.001\n"};
    for (int k = 0; k < 2; k++) {
        char ini[1024];
        snprintf(ini, sizeof ini, base, 3, "periodic = x\nbox_min = 0 0 0\nbox_max = 9 9 9\n",
                 fine[k]);
        diag err = {{0}};
        ck_assert_msg(read_config_text(ini, "fine.ini", 1, &err) == CDLAB_OK, "%d: %s", k, err.msg);
    }
}
END_TEST

Suite *periodic_suite(void)
{
    Suite *s = suite_create("periodic");
    TCase *tu = tcase_create("unit");
    tcase_add_test(tu, unit_periodic_detection_matches_brute_force);
    tcase_add_test(tu, unit_sort_refs_matches_qsort);
    tcase_add_test(tu, unit_threaded_cells_match_one_thread);
    tcase_add_test(tu, unit_threaded_search_matches_one_thread);
    tcase_add_test(tu, unit_warm_start_carries_forces_by_key);
    tcase_add_test(tu, unit_big_release_gives_pages_back);
    tcase_add_test(tu, unit_discard_range_gives_pages_back);
    tcase_add_test(tu, unit_periodic_unwrapped_displacement);
    suite_add_tcase(s, tu);
    TCase *ta = tcase_create("analytic");
    tcase_add_test(ta, analytic_periodic_collision_across_boundary);
    suite_add_tcase(s, ta);
    TCase *ti = tcase_create("io");
    tcase_add_test(ti, io_chute_file_tiled_frozen);
    tcase_add_test(ti, invariant_dem_threads_bit_identical);
    tcase_add_test(ti, errors_periodic_config);
    tcase_add_test(ti, errors_wrap_beyond_image_range);
    tcase_set_timeout(ti, TEST_TIMEOUT_SECONDS);
    suite_add_tcase(s, ti);
    return s;
}

/* The MPI self-tests (tests/check_mpi.c runs them under mpirun): particles' migration and halo
 * copies against the global truth, and a DEM pile distributed over the ranks against the same
 * pile in one process, bit for bit. A test program of its own: they use the engines' internals
 * (common/exchange.c, cd/dem/dem_dist.c), which the programs of tools/ do not see.
 *
 *   mpi_selftest exchange [periodic]      (cdlab-lab exchange-selftest before)
 *   mpi_selftest decomp                   (the cuts from shares against those of the whole)
 *   mpi_selftest dem [STEPS [PARTICLES]]  (cdlab-lab dem-selftest before; default 600 600) */
#include "comm.h"
#include "config.h"
#include "dem/dem_config.h"
#include "dem/dem_dist.h"
#include "exchange.h"
#include "pcg32.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A failed check: the message (with the rank), and the test fails. */
#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond) && s == CDLAB_OK)                                                              \
            s = diag_set(&err, CDLAB_ERR_NUMERIC, __VA_ARGS__);                                    \
    } while (0)

/* The global particles of the self-test (every rank makes the same ones): n spheres in the box
 * [0,4) x [0,3) x [0,2), positions moved by step (0: the start) pseudo-random amounts. */
static void selftest_world(particles *G, int n, int step, int periodic)
{
    diag e;
    particles_init(G, n, 3, &e);
    G->box.periodic[0] = G->box.periodic[1] = periodic;
    G->box.any = periodic;
    G->box.lo = v3(0, 0, 0);
    pbox_set_period(&G->box, v3(4, 3, 2));
    pcg32 r;
    pcg32_seed(&r, 2026, 5);
    for (int i = 0; i < n; i++) {
        G->x[i] = v3(4 * pcg32_uniform(&r), 3 * pcg32_uniform(&r), 2 * pcg32_uniform(&r));
        G->v[i] = v3(pcg32_uniform(&r), i, -1.0 * i);
        particles_set_body(G, i, 0.05, 1.0);
    }
    for (int k = 0; k < step; k++)
        for (int i = 0; i < n; i++)
            G->x[i] = v3_add(G->x[i], v3(pcg32_uniform(&r) - 0.3, 0.8 * pcg32_uniform(&r) - 0.4,
                                         periodic ? 0.0 : 0.2 * pcg32_uniform(&r) - 0.1));
    particles_wrap(G);
}

/* Checks this rank's particles after a migration with D against the global truth G: owned
 * exactly, in id order, with G's records; over all ranks each id once. */
static status selftest_owned(const particles *P, const particles *G, const decomp *D, diag *e)
{
    status s = CDLAB_OK;
    diag err = {{0}};
    double sums[3] = {P->n, 0, 0}, rec[PARTICLE_RECORD], grec[PARTICLE_RECORD];
    for (int i = 0; i < P->n; i++) {
        int id = P->id[i];
        CHECK(id >= 0 && id < G->n, "rank %d: particle id %d", comm_rank(), id);
        if (s != CDLAB_OK)
            break;
        CHECK(i == 0 || P->id[i - 1] < id, "rank %d: ids out of order at %d", comm_rank(), i);
        CHECK(decomp_owner(D, G->x[id]) == comm_rank(), "rank %d holds particle %d of rank %d",
              comm_rank(), id, decomp_owner(D, G->x[id]));
        particles_pack(P, i, rec);
        particles_pack(G, id, grec);
        CHECK(memcmp(rec, grec, sizeof rec) == 0, "rank %d: particle %d differs", comm_rank(), id);
        sums[1] += id;
        sums[2] += (double)id * id;
    }
    comm_allreduce(sums, 3, COMM_SUM);
    double n = G->n;
    CHECK(sums[0] == n && sums[1] == n * (n - 1) / 2 && sums[2] == (n - 1) * n * (2 * n - 1) / 6,
          "particles lost or duplicated: %g of %g", sums[0], n);
    *e = err;
    return s;
}

/* Checks the halo copies (after P's own n_owned) against the ids the brute-force search over G
 * expects, and their records against G's (velocities shifted by dv). */
static status selftest_halo(const particles *P, const halo *H, const particles *G, const decomp *D,
                            double range, double dv, diag *e)
{
    status s = CDLAB_OK;
    diag err = {{0}};
    int me = comm_rank(), expect = 0, *near = malloc((size_t)D->parts * sizeof *near);
    unsigned char *want = calloc((size_t)G->n, 1);
    for (int j = 0; j < G->n; j++) {
        if (decomp_owner(D, G->x[j]) == me)
            continue;
        int m = decomp_near(D, G->x[j], range, near);
        for (int k = 0; k < m; k++)
            if (near[k] == me)
                want[j] = 1;
        expect += want[j];
    }
    CHECK(H->n_ghost == expect, "rank %d: %d halo copies, %d expected", me, H->n_ghost, expect);
    double rec[PARTICLE_RECORD], grec[PARTICLE_RECORD];
    for (int k = 0; k < H->n_ghost && s == CDLAB_OK; k++) {
        int id = P->id[H->n_owned + k];
        CHECK(id >= 0 && id < G->n && want[id], "rank %d: unexpected copy of %d", me, id);
        if (s != CDLAB_OK)
            break;
        want[id] = 0; /* each once */
        particles_pack(P, H->n_owned + k, rec);
        particles_pack(G, id, grec);
        grec[4] += dv;
        CHECK(memcmp(rec, grec, sizeof rec) == 0, "rank %d: copy of %d differs", me, id);
    }
    free(near);
    free(want);
    *e = err;
    return s;
}

static int exchange_selftest(int periodic)
{
    const int n = 3000;
    const double range = 0.3;
    diag err = {{0}};
    status s = CDLAB_OK;
    particles G, P;
    selftest_world(&G, n, 0, periodic);
    /* this rank starts with every R-th particle */
    int R = comm_size(), me = comm_rank(), mine = 0;
    for (int i = me; i < n; i += R)
        mine++;
    particles_init(&P, mine, 3, &err);
    P.box = G.box;
    double rec[PARTICLE_RECORD];
    /* two extra doubles per particle travel with it: (id, -id), and +0.5 in the halo update */
    double *ex = malloc((size_t)(mine > 0 ? mine : 1) * 2 * sizeof *ex);
    for (int i = me, k = 0; i < n; i += R, k++) {
        particles_pack(&G, i, rec);
        particles_unpack(&P, k, rec);
        ex[2 * k] = i, ex[2 * k + 1] = -i;
    }
    decomp D;
    halo H;
    long ghosts = 0;
    for (int step = 0; step < 3 && s == CDLAB_OK; step++) {
        if (step > 0) { /* everything moves; the decomposition follows the new positions */
            particles_free(&G);
            selftest_world(&G, n, step, periodic);
            for (int i = 0; i < P.n; i++)
                P.x[i] = G.x[P.id[i]],
                memcpy(&P.image[3 * i], &G.image[3 * P.id[i]], 3 * sizeof *P.image);
            decomp_free(&D);
        }
        s = decomp_build(&D, R, G.x, NULL, n, 3, &G.box, &err);
        if (s == CDLAB_OK)
            s = exchange_migrate(&P, &D, &ex, 2, &err);
        if (s == CDLAB_OK)
            s = selftest_owned(&P, &G, &D, &err);
        if ((s = comm_agree(s, &err)) != CDLAB_OK)
            break;
        for (int i = 0; i < P.n; i++)
            CHECK(ex[2 * i] == P.id[i] && ex[2 * i + 1] == -P.id[i],
                  "rank %d: the extra data of particle %d did not follow it", me, P.id[i]);
        if ((s = exchange_halo(&P, &D, range, &ex, 2, &H, &err)) == CDLAB_OK)
            s = selftest_halo(&P, &H, &G, &D, range, 0.0, &err);
        for (int i = 0; i < H.n_owned && s == CDLAB_OK; i++)
            P.v[i].y += 0.5, ex[2 * i] += 0.5;
        if (s == CDLAB_OK && (s = exchange_halo_update(&P, ex, &H, &err)) == CDLAB_OK)
            s = selftest_halo(&P, &H, &G, &D, range, 0.5, &err);
        for (int i = 0; i < P.n; i++)
            CHECK(ex[2 * i] == P.id[i] + 0.5 && ex[2 * i + 1] == -P.id[i],
                  "rank %d: the extra data of copy %d is not the owner's", me, P.id[i]);
        for (int i = 0; i < H.n_owned; i++)
            P.v[i].y -= 0.5, ex[2 * i] -= 0.5;
        ghosts += H.n_ghost;
        exchange_halo_drop(&P, &H);
        s = comm_agree(s, &err);
    }
    double g = (double)ghosts;
    comm_allreduce(&g, 1, COMM_SUM);
    if (me == 0) {
        if (s == CDLAB_OK)
            printf("exchange-selftest: ok (%d ranks, %d particles, %s, %.0f halo copies over 3 "
                   "partitions)\n",
                   R, n, periodic ? "x, y periodic" : "open", g);
        else
            fprintf(stderr, "exchange-selftest: FAILED: %s\n", err.msg);
    }
    decomp_free(&D);
    particles_free(&P);
    particles_free(&G);
    free(ex);
    return s == CDLAB_OK ? 0 : 1;
}

/* decomp_build_shared against decomp_build: each rank gives a share of a point set (every
 * R-th point, shifted by the case so that shares are uneven and some empty), and the tree must
 * be decomp_build's of the whole set, bit for bit (axes, cuts, children, boxes), for 1 to 9
 * parts. Cases: random 3D points, open; a 2D lattice of integer coordinates (ties on every
 * axis), periodic x, with integer weights 1 to 5; a 3D lattice with a few points moved off it;
 * 5 points (fewer than the parts); 40 copies of one point; none at all. */
static status decomp_case(int which, int *n_out, vec3 **x_out, double **w_out, int *dim, pbox *box)
{
    int n = which == 0   ? 700
            : which == 1 ? 360
            : which == 2 ? 512
            : which == 3 ? 5
            : which == 4 ? 40
                         : 0;
    vec3 *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
    double *w = malloc((size_t)(n > 0 ? n : 1) * sizeof *w);
    if (!x || !w) {
        free(x);
        free(w);
        return CDLAB_ERR_NOMEM;
    }
    memset(box, 0, sizeof *box);
    *dim = which == 1 ? 2 : 3;
    pcg32 r;
    pcg32_seed(&r, 77, (uint64_t)which + 1);
    for (int i = 0; i < n; i++) {
        w[i] = 1.0;
        if (which == 0 || which == 3)
            x[i] = v3(4 * pcg32_uniform(&r), 3 * pcg32_uniform(&r), 2 * pcg32_uniform(&r));
        else if (which == 1) {
            x[i] = v3(i % 24 + 0.5, i / 24, 0.0);
            w[i] = 1 + i % 5;
        } else if (which == 2)
            x[i] = v3(i % 8 + (i % 37 == 0 ? 0.25 : 0.0), i / 8 % 8, i / 64);
        else
            x[i] = v3(1.5, -2.0, 0.25);
    }
    if (which == 1) {
        box->periodic[0] = 1;
        box->any = 1;
        box->lo = v3(0, 0, 0);
        pbox_set_period(box, v3(24, 1, 1));
    }
    *n_out = n, *x_out = x, *w_out = w;
    return CDLAB_OK;
}

static int same_tree(const decomp *A, const decomp *B)
{
    size_t np = (size_t)A->parts, nn = (size_t)A->nodes; /* the nodes made, the parts' boxes */
    return A->parts == B->parts && A->nodes == B->nodes &&
           memcmp(A->axis, B->axis, nn * sizeof *A->axis) == 0 &&
           memcmp(A->cut, B->cut, nn * sizeof *A->cut) == 0 &&
           memcmp(A->child, B->child, 2 * nn * sizeof *A->child) == 0 &&
           memcmp(A->lo, B->lo, np * sizeof *A->lo) == 0 &&
           memcmp(A->hi, B->hi, np * sizeof *A->hi) == 0;
}

static int decomp_selftest(void)
{
    diag err = {{0}};
    status s = CDLAB_OK;
    int R = comm_size(), me = comm_rank(), trees = 0;
    for (int which = 0; which < 6 && s == CDLAB_OK; which++) {
        int n = 0, dim = 3;
        vec3 *x = NULL;
        double *w = NULL;
        pbox box;
        if (decomp_case(which, &n, &x, &w, &dim, &box) != CDLAB_OK)
            comm_abort(3);
        vec3 *mx = malloc((size_t)(n > 0 ? n : 1) * sizeof *mx);
        double *mw = malloc((size_t)(n > 0 ? n : 1) * sizeof *mw);
        int m = 0;
        for (int i = (me + which) % R; i < n; i += R) /* uneven shares, rank 0's not the first */
            mx[m] = x[i], mw[m++] = w[i];
        for (int parts = 1; parts <= 9 && s == CDLAB_OK; parts++) {
            decomp A, B;
            const double *wa = which == 1 ? w : NULL, *wb = which == 1 ? mw : NULL;
            s = decomp_build(&A, parts, x, wa, n, dim, &box, &err);
            if (s == CDLAB_OK &&
                (s = decomp_build_shared(&B, parts, mx, wb, m, dim, &box, &err)) == CDLAB_OK) {
                CHECK(same_tree(&A, &B), "rank %d: case %d, %d parts: the shared tree differs", me,
                      which, parts);
                decomp_free(&B);
            }
            decomp_free(&A);
            s = comm_agree(s, &err);
            trees++;
        }
        free(x);
        free(w);
        free(mx);
        free(mw);
    }
    if (me == 0) {
        if (s == CDLAB_OK)
            printf("decomp-selftest: ok (%d ranks, %d trees the same as one process's)\n", R,
                   trees);
        else
            fprintf(stderr, "decomp-selftest: FAILED: %s\n", err.msg);
    }
    return s == CDLAB_OK ? 0 : 1;
}

/* The reductions against the values every rank computes for itself: maxima and minima (ties
 * on every rank too), counts and a value only one rank has (comm_allreduce_exact_sum) the same
 * bits as the rank-order combination, and none of them a reduction in rank order
 * (comm_stats.ordered); sums of inexact values and mixed operations in rank order, bit for bit,
 * one such reduction a call. */
static double reduce_value(int r, int k)
{
    return (0.1 * (r + 1) + 1.0 / (3.0 + k)) * (k % 2 ? -1.0 : 1.0);
}

static int reduce_selftest(void)
{
    diag err = {{0}};
    status s = CDLAB_OK;
    int P = comm_size(), me = comm_rank();
    enum { K = 4 };
    double mx[K + 1], mn[K + 1], sum[K], ex[2], mix[3], emx[K + 1], emn[K + 1], esum[K], eex[2],
        emix[3];
    for (int k = 0; k < K; k++) {
        mx[k] = mn[k] = sum[k] = reduce_value(me, k);
        emx[k] = emn[k] = esum[k] = reduce_value(0, k);
        for (int r = 1; r < P; r++) {
            double x = reduce_value(r, k);
            emx[k] = x > emx[k] ? x : emx[k];
            emn[k] = x < emn[k] ? x : emn[k];
            esum[k] += x;
        }
    }
    mx[K] = mn[K] = emx[K] = emn[K] = 0.5; /* the same on every rank */
    ex[0] = me + 1, ex[1] = me == P - 1 ? 0.1 : 0.0;
    eex[0] = 0.5 * P * (P + 1), eex[1] = 0.1;
    mix[0] = reduce_value(me, 0), mix[1] = reduce_value(me, 1), mix[2] = reduce_value(me, 2);
    emix[0] = esum[0], emix[1] = emx[1], emix[2] = emn[2];
    const comm_op ops[3] = {COMM_SUM, COMM_MAX, COMM_MIN};
    comm_stats c0 = comm_stats_now();
    comm_allreduce(mx, K + 1, COMM_MAX);
    comm_allreduce(mn, K + 1, COMM_MIN);
    comm_allreduce_exact_sum(ex, 2);
    comm_stats c1 = comm_stats_now();
    comm_allreduce(sum, K, COMM_SUM);
    comm_allreduce_ops(mix, ops, 3);
    comm_stats c2 = comm_stats_now();
    CHECK(memcmp(mx, emx, sizeof mx) == 0, "rank %d: maxima differ (%.17g, expected %.17g)", me,
          mx[0], emx[0]);
    CHECK(memcmp(mn, emn, sizeof mn) == 0, "rank %d: minima differ (%.17g, expected %.17g)", me,
          mn[0], emn[0]);
    CHECK(memcmp(ex, eex, sizeof ex) == 0, "rank %d: exact sums %g %.17g, expected %g %.17g", me,
          ex[0], ex[1], eex[0], eex[1]);
    CHECK(memcmp(sum, esum, sizeof sum) == 0, "rank %d: sum %.17g, rank order %.17g", me, sum[0],
          esum[0]);
    CHECK(memcmp(mix, emix, sizeof mix) == 0, "rank %d: mixed reduction differs", me);
    double trees = c1.ordered - c0.ordered, ordered = c2.ordered - c1.ordered;
    CHECK(trees == 0.0 && ordered == (P > 1 ? 2.0 : 0.0),
          "rank %d: %g and %g reductions in rank order (expected 0 and %d)", me, trees, ordered,
          P > 1 ? 2 : 0);
    if (me == 0) {
        if (s == CDLAB_OK)
            printf("reduce-selftest: ok (%d ranks)\n", P);
        else
            fprintf(stderr, "reduce-selftest: FAILED: %s\n", err.msg);
    }
    return s == CDLAB_OK ? 0 : 1;
}

/* A periodic-x-y pile of 600 spheres falling onto a floor (the restart test's pile, without its
 * piston, stirred): Kuhn law, friction, dashpots, neighbour-list rebuilds. */
static const char *DEM_SELFTEST =
    "[system]\nmode = dem\ndimension = 3\ndt = 2e-4\nsteps = 1\ngravity = 0 0 -10\nseed = 3\n"
    "periodic = x y\nbox_min = 0 0 0\nbox_max = %g %g 0\n"
    "[particles]\nsource = random\ncount = %d\nradius_min = 0.25\nradius_max = 0.3\n"
    "box_min = 0 0 0\nbox_max = %g %g 9\n"
    "[contact]\nfriction = 0.4\ndetect_gap = 0.05\n"
    "[dem]\nk_n = 1e4\nk_t = 5e3\ndamping_normal = 0.2\ndamping_tangential = 0.1\n"
    "[plane.floor]\npoint = 0 0 0\nnormal = 0 0 1\n";

static status selftest_dem_open(world *W, dem_setup *d, dem_solver *S, int n, diag *err)
{
    config c;
    scene_info info = {0};
    char ini[1024];
    double scale = sqrt(n / 600.0), X = 8 * scale, Y = 6 * scale; /* the same height */
    snprintf(ini, sizeof ini, DEM_SELFTEST, X, Y, n, X, Y);
    status s = config_load_string(&c, ini, "dem-selftest", err);
    if (s == CDLAB_OK && (s = scene_build(&c, W, &info, err)) == CDLAB_OK)
        s = dem_config_read(&c, W, &info, NULL, d, err);
    scene_info_free(&info);
    /* a stirred pile: 5 m/s in every direction, so that the neighbour list is rebuilt (and
     * particles change rank) every few steps */
    for (int i = 0; i < W->P.n && s == CDLAB_OK; i++)
        W->P.v[i] = v3_scale(v3(sin(1.7 * i), cos(2.3 * i), 0.5 * sin(0.9 * i)), 5.0);
    config_free(&c);
    dem_solver_init(S);
    return s;
}

/* The pile run for steps in one process (every rank, the reference) and distributed over the
 * ranks: every rank's own particles have the reference's position, velocity, angular velocity
 * and orientation, bit for bit, and each id is owned once. */
static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int dem_selftest(long steps, int n_particles)
{
    diag err = {{0}};
    world A, B;
    dem_setup da, db;
    dem_solver Sa, Sb;
    dem_stats st;
    dem_mpi M;
    memset(&M, 0, sizeof M);
    parallel_params par = {.rebalance = 1.2, .rebalance_every = 0};
    memset(&B, 0, sizeof B);
    dem_solver_init(&Sb);
    status s = selftest_dem_open(&A, &da, &Sa, n_particles, &err);
    double t0 = now_s();
    for (long k = 0; k < steps && s == CDLAB_OK; k++)
        s = dem_step(&A, &Sa, &da.p, &st, &err);
    double t1 = now_s();
    if (s == CDLAB_OK && (s = selftest_dem_open(&B, &db, &Sb, n_particles, &err)) == CDLAB_OK)
        s = dem_mpi_init(&M, &B, &Sb, &db.p, &par, &err);
    comm_barrier();
    double t2 = now_s();
    for (long k = 0; k < steps && s == CDLAB_OK; k++)
        s = dem_step(&B, &Sb, &db.p, &st, &err);
    comm_barrier();
    double t3 = now_s();
    s = comm_agree(s, &err);
    double c[4] = {0, 0, 0, 0}; /* owned, differing, sum of ids, migrations */
    for (int i = 0; i < Sb.n_owned && s == CDLAB_OK; i++) {
        int id = B.P.id[i];
        c[0] += 1;
        c[2] += id;
        int same = id >= 0 && id < A.P.n && A.P.id[id] == id &&
                   memcmp(&A.P.x[id], &B.P.x[i], sizeof(vec3)) == 0 &&
                   memcmp(&A.P.v[id], &B.P.v[i], sizeof(vec3)) == 0 &&
                   memcmp(&A.P.w[id], &B.P.w[i], sizeof(vec3)) == 0 &&
                   memcmp(&A.P.q[4 * id], &B.P.q[4 * i], 4 * sizeof(double)) == 0;
        c[1] += !same;
    }
    c[3] = (double)M.migrated;
    comm_allreduce(c, 4, COMM_SUM);
    double n = A.P.n;
    int ok = s == CDLAB_OK && c[0] == n && c[1] == 0 && c[2] == n * (n - 1) / 2;
    if (comm_rank() == 0) {
        if (s != CDLAB_OK)
            fprintf(stderr, "dem-selftest: FAILED: %s\n", err.msg);
        else
            printf("dem-selftest: %s (%d ranks, %.0f particles, %ld steps, %ld rebuilds, %.0f "
                   "migrations; %.0f owned, %.0f differ from one process; one process %.3f s, "
                   "distributed %.3f s)\n",
                   ok ? "ok" : "FAILED", comm_size(), n, steps, Sb.rebuilds, c[3], c[0], c[1],
                   t1 - t0, t3 - t2);
    }
    dem_mpi_free(&M);
    dem_solver_free(&Sa);
    dem_solver_free(&Sb);
    world_free(&A);
    world_free(&B);
    return ok ? 0 : 1;
}

static int whole_number(const char *text, long lo, long hi, const char *what, long *value)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < lo || v > hi) {
        fprintf(stderr, "mpi_selftest: %s: expected a whole number in [%ld, %ld], got '%s'\n", what,
                lo, hi, text);
        return 0;
    }
    *value = v;
    return 1;
}

static int selftest_main(int argc, char **argv)
{
    const char *cmd = argc >= 2 ? argv[1] : "";
    if (strcmp(cmd, "dem") == 0 && argc <= 4) {
        long steps = 600, n = 600;
        if ((argc >= 3 && !whole_number(argv[2], 1, 100000000L, "dem: STEPS", &steps)) ||
            (argc >= 4 && !whole_number(argv[3], 2, 10000000L, "dem: PARTICLES", &n)))
            return 2;
        return dem_selftest(steps, (int)n);
    }
    if (strcmp(cmd, "exchange") == 0 &&
        (argc == 2 || (argc == 3 && strcmp(argv[2], "periodic") == 0)))
        return exchange_selftest(argc == 3);
    if (strcmp(cmd, "decomp") == 0 && argc == 2)
        return decomp_selftest();
    if (strcmp(cmd, "reduce") == 0 && argc == 2)
        return reduce_selftest();
    fprintf(
        stderr,
        "usage: mpi_selftest exchange [periodic] | decomp | reduce | dem [STEPS [PARTICLES]]\n");
    return 2;
}

int main(int argc, char **argv)
{
    diag err = {{0}};
    if (comm_init(&argc, &argv, &err) != CDLAB_OK) {
        fprintf(stderr, "mpi_selftest: %s\n", err.msg);
        comm_finalize();
        return 2;
    }
    int rc = stdout_checked_exit("mpi_selftest", selftest_main(argc, argv));
    comm_finalize();
    return rc;
}

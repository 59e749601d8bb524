/* The machine in a benchmark run (make bench, tools/bench.py): what its memory and one core give
 * in the same minutes as the bench's cases, so that a figure that moves between two bench runs
 * can be told apart from the machine's day (a VM's neighbours, its host). Prints one
 * `key value` line per figure:
 *
 *   triad_1      GB/s of a = b + 3 c over three arrays of 128 MiB (24 bytes per element moved),
 *                best of 5, one thread: what the step's streaming loops are bound by
 *   triad_all    the same on every OpenMP thread (the arrays first touched by the threads that
 *                use them)
 *   threads      how many threads that was
 *   lines_1      random 64-byte lines read per second, independent loads (the contact updates of
 *                a random sweep out of cache, each a few such lines), over 256 MiB, one thread
 *   latency_ns   ns per load of a chase through a random cycle of 256 MiB of lines, one thread
 *   chain_ns     ns per step of the dependent y = 1 + 1/sqrt(y): the core's own speed
 *
 * The random numbers are splitmix64's (its published constants), seeded alike in every run. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define TRIAD_N ((size_t)16 << 20) /* doubles per array: 128 MiB */
#define LINES ((size_t)4 << 20)    /* 64-byte lines: 256 MiB */
#define GATHERS ((size_t)8 << 20)
#define CHASES ((size_t)2 << 20)
#define CHAIN 20000000

typedef struct line {
    uint64_t next;
    double value[7];
} line;

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double triad(double *a, const double *b, const double *c, int threads)
{
    double best = INFINITY;
    (void)threads; /* without OpenMP: one thread */
    for (int rep = 0; rep < 5; rep++) {
        double t0 = now();
#pragma omp parallel for schedule(static) num_threads(threads)
        for (size_t i = 0; i < TRIAD_N; i++)
            a[i] = b[i] + 3.0 * c[i];
        best = fmin(best, now() - t0);
    }
    return 24.0 * (double)TRIAD_N / best / 1e9;
}

int main(void)
{
#ifdef _OPENMP
    int threads = omp_get_max_threads();
#else
    int threads = 1;
#endif
    double *a = malloc(TRIAD_N * sizeof *a), *b = malloc(TRIAD_N * sizeof *b),
           *c = malloc(TRIAD_N * sizeof *c);
    line *L = aligned_alloc(64, LINES * sizeof *L);
    if (!a || !b || !c || !L) {
        fprintf(stderr, "probe: out of memory\n");
        return 1;
    }
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < TRIAD_N; i++) {
        a[i] = 0.0;
        b[i] = 1.0;
        c[i] = 2.0;
    }
    double t_all = triad(a, b, c, threads);
    double t_one = triad(a, b, c, 1);

    /* a random cycle through all lines (Sattolo's shuffle of the identity) */
    uint64_t seed = 19;
    for (size_t i = 0; i < LINES; i++) {
        L[i].next = i;
        L[i].value[0] = (double)(i & 7);
    }
    for (size_t i = LINES - 1; i > 0; i--) {
        size_t j = (size_t)(splitmix64(&seed) % i);
        uint64_t t = L[i].next;
        L[i].next = L[j].next;
        L[j].next = t;
    }
    /* independent random lines (their addresses made apart from the loads) */
    double sum = 0.0, t0 = now();
    uint64_t s = 7;
    for (size_t k = 0; k < GATHERS; k++)
        sum += L[splitmix64(&s) & (LINES - 1)].value[0];
    double lines = (double)GATHERS / (now() - t0);
    /* dependent loads */
    uint64_t at = 0;
    t0 = now();
    for (size_t k = 0; k < CHASES; k++)
        at = L[at].next;
    double latency = (now() - t0) / (double)CHASES * 1e9;
    /* the core: a dependent chain of a division and a root */
    double y = 1.0;
    t0 = now();
    for (int k = 0; k < CHAIN; k++)
        y = 1.0 + 1.0 / sqrt(y);
    double chain = (now() - t0) / CHAIN * 1e9;

    printf(
        "triad_1 %.2f\ntriad_all %.2f\nthreads %d\nlines_1 %.4g\nlatency_ns %.1f\nchain_ns %.2f\n",
        t_one, t_all, threads, lines, latency, chain);
    /* the results used, so that no loop is optimised away */
    fprintf(stderr, "probe: checks %g %g %llu %g\n", a[TRIAD_N / 2], sum, (unsigned long long)at,
            y);
    free(a), free(b), free(c), free(L);
    return 0;
}

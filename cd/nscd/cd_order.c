/* The sweeps' orders that are drawn or built before the sweeps: the random sweep's shuffle (and
 * the draws the colored sweep skips), and the colored sweep's greedy colouring. */
#include "nscd/cd.h"

#include "exchange.h"
#include "grow.h"
#include "parallel.h"
#include "prefetch.h"

#include <stdlib.h>
#include <string.h>

/* Fisher-Yates: a uniform random permutation of a[0..n-1] in place. */
void cd_shuffle(pcg32 *rng, int *a, int n)
{
    for (int k = n - 1; k > 0; k--) {
        int m = (int)pcg32_bounded_fast(rng, (uint32_t)(k + 1));
        int t = a[k];
        a[k] = a[m];
        a[m] = t;
    }
}

/* The most outputs of the stream cd_shuffle_skip makes at a time (4 MB: a colour of 10^6
 * contacts in one go, each thread making a stretch of it), and the fewest it makes on threads
 * (a team started for less costs more than it saves: 32,768 outputs are about 30 us). */
#define SKIP_ROUND (1 << 20)
#define SKIP_THREADED 65536

status cd_shuffle_skip(cd_solver *S, int n, diag *err)
{
    if (n < 2)
        return CDLAB_OK;
    /* each draw takes at least one output: the count - done draws to go take no fewer */
    int count = n - 1, done = 0;
    int round = count < SKIP_ROUND ? count : SKIP_ROUND;
    uint32_t *raw = grow_array(S->draw, &S->draw_cap, round, sizeof *raw);
    if (!raw)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot grow solver buffers");
    S->draw = raw;
    int nt = cdlab_threads();
    while (done < count) {
        int want = count - done < round ? count - done : round;
        int per = (want + nt - 1) / nt;
        const pcg32 at = S->rng;
#pragma omp parallel for schedule(static) if (want >= SKIP_THREADED)
        for (int t = 0; t < nt; t++) {
            int lo = t * per, hi = lo + per < want ? lo + per : want;
            if (lo < hi) {
                pcg32 g = at;
                pcg32_advance(&g, (uint64_t)lo);
                pcg32_fill(&g, raw + lo, hi - lo);
            }
        }
        pcg32_advance(&S->rng,
                      (uint64_t)pcg32_bounded_down_scan((uint32_t)n, count, &done, raw, want));
    }
    return CDLAB_OK;
}

/* How many contacts ahead the greedy colouring prefetches its bodies' masks. */
#define COLOR_AHEAD 16

status cd_greedy_colors(int n, const int *a, const int *b, int nb, int *color, int *ncolors,
                        uint64_t **mask, int *mask_cap, int *mask_words, diag *err)
{
    for (;;) {
        int mw = *mask_words;
        uint64_t *m = grow_array(*mask, mask_cap, nb * mw, sizeof *m);
        if (!m)
            return diag_set(err, CDLAB_ERR_NOMEM, "cannot colour %d contacts", n);
        *mask = m;
        memset(m, 0, (size_t)nb * mw * sizeof *m);
        int ncol = 0, overflow = 0;
        for (int k = 0; k < n && !overflow; k++) {
            if (k + COLOR_AHEAD < n) { /* the bodies' masks: in random storage order, misses */
                if (a[k + COLOR_AHEAD] >= 0)
                    prefetch_line(&m[(size_t)a[k + COLOR_AHEAD] * mw]);
                if (b[k + COLOR_AHEAD] >= 0)
                    prefetch_line(&m[(size_t)b[k + COLOR_AHEAD] * mw]);
            }
            uint64_t *ra = a[k] >= 0 ? &m[(size_t)a[k] * mw] : NULL;
            uint64_t *rb = b[k] >= 0 ? &m[(size_t)b[k] * mw] : NULL;
            int col = -1;
            for (int w = 0; w < mw && col < 0; w++) {
                uint64_t used = (ra ? ra[w] : 0) | (rb ? rb[w] : 0);
                if (~used)
                    col = 64 * w + __builtin_ctzll(~used);
            }
            if (col < 0) {
                overflow = 1;
                break;
            }
            color[k] = col;
            if (ra)
                ra[col / 64] |= 1ull << (col % 64);
            if (rb)
                rb[col / 64] |= 1ull << (col % 64);
            if (col + 1 > ncol)
                ncol = col + 1;
        }
        if (!overflow) {
            *ncolors = ncol;
            return CDLAB_OK;
        }
        if (*mask_words >= 1 << 16)
            return diag_set(err, CDLAB_ERR_NOMEM, "contact graph needs more than %d colours",
                            64 << 16);
        *mask_words *= 2;
    }
}

/* Greedy colouring of the contact graph in list order (cd_greedy_colors): two contacts conflict
 * when they share a movable body (a particle that is not frozen, or a piston); fixed walls and
 * frozen particles do not count. Bodies are numbered particles, then walls. Deterministic:
 * depends only on the contact list. */
int *cd_contact_bodies(const world *W, const contact_list *L)
{
    const particles *P = &W->P;
    int n = L->n;
    int *ab = malloc((size_t)(2 * n + 1) * sizeof *ab);
    if (!ab)
        return NULL;
    CDLAB_PARALLEL_FOR
    for (int k = 0; k < n; k++) {
        const contact *c = &L->c[k];
        ab[k] = P->frozen[c->j] ? -1 : c->j;
        if (c->i >= 0)
            ab[n + k] = P->frozen[c->i] ? -1 : c->i;
        else
            ab[n + k] = W->walls[contact_wall_index(c)].kind == WALL_PISTON
                            ? P->n + contact_wall_index(c)
                            : -1;
    }
    return ab;
}

/* splitmix64's finaliser (Steele, Lea and Flood 2014): a bijection of 64-bit words. */
static uint64_t mix64(uint64_t x)
{
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

int *cd_color_order(const contact_list *L, int n_walls, int hashed)
{
    int n = L->n, walls = 0;
    int *ord = malloc((size_t)(n > 0 ? n : 1) * sizeof *ord);
    if (!ord)
        return NULL;
    for (int k = 0; k < n; k++)
        ord[k] = k;
    if (!hashed)
        return ord;
    while (walls < n && (L->c[walls].key >> 32) < (uint64_t)n_walls) /* first in key order */
        walls++;
    keyed_ref *kr = malloc((size_t)(n - walls + 1) * sizeof *kr);
    if (!kr) {
        free(ord);
        return NULL;
    }
    for (int k = walls; k < n; k++)
        kr[k - walls] = (keyed_ref){mix64(L->c[k].key), k};
    keyed_sort(kr, n - walls);
    for (int k = walls; k < n; k++)
        ord[k] = kr[k - walls].rec;
    free(kr);
    return ord;
}

status cd_color_bodies(world *W, cd_solver *S, const int *ab, int hashed, diag *err)
{
    int n = S->C.n, nb = W->P.n + W->n_walls;
    int *color_of = grow_array(S->color_of, &S->color_of_cap, n, sizeof *color_of);
    if (!color_of)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot colour %d contacts", n);
    S->color_of = color_of;
    status s;
    if (!hashed) {
        s = cd_greedy_colors(n, ab, ab + n, nb, color_of, &S->n_colors, &S->mask, &S->mask_cap,
                             &S->mask_words, err);
    } else { /* the bodies in the colouring's order, and the colours back in list order */
        int *ord = cd_color_order(&S->C, W->n_walls, 1);
        int *abo = calloc((size_t)(2 * n + 1), sizeof *abo);
        int *col = malloc((size_t)(n + 1) * sizeof *col);
        s = ord && abo && col ? CDLAB_OK
                              : diag_set(err, CDLAB_ERR_NOMEM, "cannot colour %d contacts", n);
        for (int t = 0; t < n && s == CDLAB_OK; t++) {
            abo[t] = ab[ord[t]];
            abo[n + t] = ab[n + ord[t]];
        }
        if (s == CDLAB_OK)
            s = cd_greedy_colors(n, abo, abo + n, nb, col, &S->n_colors, &S->mask, &S->mask_cap,
                                 &S->mask_words, err);
        for (int t = 0; t < n && s == CDLAB_OK; t++)
            color_of[ord[t]] = col[t];
        free(ord);
        free(abo);
        free(col);
    }
    if (s != CDLAB_OK)
        return s;
    S->colored_at_step = W->step;
    return cd_group_colors(S, n, err);
}

status cd_color_contacts(world *W, cd_solver *S, int hashed, diag *err)
{
    int *ab = cd_contact_bodies(W, &S->C);
    if (!ab)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot colour %d contacts", S->C.n);
    status s = cd_color_bodies(W, S, ab, hashed, err);
    free(ab);
    return s;
}

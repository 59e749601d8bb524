/* The colored sweep's colouring across MPI ranks, made by the ranks without a gather of every
 * contact: see cd_dist.h (cd_mpi_color).
 *
 * One process colours the contact list greedily in the colouring's order (cd_color_order: key
 * order, or hashed): contact k takes the lowest colour that no earlier contact at one of its
 * movable bodies took (cd_greedy_colors). That is Jones–Plassmann's colouring with the order as
 * priority, and it needs of contact k only the colours of the earlier contacts at its bodies:
 * each body's contacts are coloured in order, so a body's state is the key of its first
 * uncoloured contact ("next") and the colours its coloured ones took (a bit mask). A rank keeps
 * the contacts with one of its own particles, so it holds every contact of its own bodies and
 * follows their states; of a halo copy's body it knows the owner's state as last sent.
 *
 * A round: each rank sends the ranks that hold copies of its particles the states that changed
 * since it last sent them, and the colours it decided of the contacts they hold too; then it
 * colours, in order, every contact it decides that is ready (next = its key at each movable
 * body). Body 1's owner decides a contact (the rank that counts it), on its own bodies' states
 * of the moment (a chain among them goes through in one pass) and a halo copy's as sent; the
 * owner of a contact's body 0, when another rank, takes its colour from the decider and holds
 * that body at the contact until then, so a state sent stays true until the contact it names
 * is decided. The globally first uncoloured contact is ready within three rounds, so the rounds
 * end, when no rank has a contact or a colour left (one reduction a round, a tree).
 *
 * Pistons: a piston is one body of every rank, so its contacts form one chain through all of
 * them. The contacts with walls come first in either order (a wall's code is below every
 * particle's), so those of the particles that touch a piston are coloured before the rounds from
 * a gather of them alone (a surface, not the volume): every rank colours that short list as one
 * process does and takes its own contacts' colours. */
#include "nscd/cd_dist.h"

#include "comm.h"
#include "grow.h"

#include <stdlib.h>
#include <string.h>

/* A body's state as sent: the next key (high, low 32 bits), then the mask (32 bits a double):
 * whole numbers below 2^32, exact in doubles. */
#define NEXT_W 2

/* A 64-bit word as two whole doubles (high, low 32 bits), and back. */
static void put64(double *v, uint64_t x)
{
    v[0] = (double)(x >> 32);
    v[1] = (double)(x & 0xffffffffu);
}

static uint64_t get64(const double *v)
{
    return ((uint64_t)v[0] << 32) | (uint64_t)v[1];
}

static int is_piston(const world *W, const contact *c)
{
    return c->i < 0 && W->walls[contact_wall_index(c)].kind == WALL_PISTON;
}

/* The colours one process gives the contacts with walls of the particles that touch a piston:
 * into co[k] for this rank's ones (the others untouched); *ncolors their number. */
static status color_piston_chains(const cd_mpi *M, const world *W, const contact_list *L, int *co,
                                  int *ncolors, diag *err)
{
    const particles *P = &W->P;
    int n = L->n, own = M->H.n_owned, mine = 0;
    *ncolors = 0;
    unsigned char *touch = calloc((size_t)(own > 0 ? own : 1), 1);
    if (!touch)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot colour the pistons' contacts");
    for (int k = 0; k < n; k++) /* a wall's contact is held by its particle's owner only */
        if (is_piston(W, &L->c[k]))
            touch[L->c[k].j] = 1;
    for (int k = 0; k < n; k++)
        mine += L->c[k].i < 0 && touch[L->c[k].j];
    /* per contact: body 0 (the wall's code), body 1 (id), movable flags (1: body 0, 2: body 1) */
    double *rec = malloc((size_t)(mine > 0 ? mine : 1) * 3 * sizeof *rec), *all = NULL;
    status s =
        rec ? CDLAB_OK : diag_set(err, CDLAB_ERR_NOMEM, "cannot colour the pistons' contacts");
    for (int k = 0, m = 0; k < n && s == CDLAB_OK; k++) {
        const contact *c = &L->c[k];
        if (c->i >= 0 || !touch[c->j])
            continue;
        rec[3 * m] = c->i;
        rec[3 * m + 1] = P->id[c->j];
        rec[3 * m + 2] = is_piston(W, c) + 2 * !P->frozen[c->j];
        m++;
    }
    free(touch);
    int total = 0;
    if (s == CDLAB_OK)
        s = comm_allgather(rec, 3 * mine, &all, &total, err);
    free(rec);
    int g = total / 3;
    keyed_ref *kr = malloc((size_t)(g > 0 ? g : 1) * sizeof *kr),
              *ids = malloc((size_t)(g > 0 ? g : 1) * sizeof *ids);
    int *ab = malloc((size_t)(2 * g + 1) * sizeof *ab), *gc = malloc((size_t)(g + 1) * sizeof *gc);
    uint64_t *mask = NULL;
    int mask_cap = 0, mask_words = 1, nb = 0;
    if (s == CDLAB_OK && (!kr || !ids || !ab || !gc))
        s = diag_set(err, CDLAB_ERR_NOMEM, "cannot colour %d contacts with pistons", g);
    if (s == CDLAB_OK) {
        for (int k = 0; k < g; k++) {
            kr[k] = (keyed_ref){
                contact_key_of_ids((long)all[3 * k], (long)all[3 * k + 1], W->n_walls), k};
            ids[k] = (keyed_ref){(uint64_t)all[3 * k + 1], k};
        }
        keyed_sort(kr, g);
        keyed_sort(ids, g);
        /* the particles numbered 0 .. nb - 1 in id order (gc as scratch), then the walls */
        for (int k = 0; k < g; k++) {
            if (k > 0 && ids[k].key != ids[k - 1].key)
                nb++;
            gc[ids[k].rec] = nb;
        }
        nb += g > 0;
        for (int k = 0; k < g; k++) {
            const double *r = all + (size_t)kr[k].rec * 3;
            int f = (int)r[2];
            ab[k] = f & 2 ? gc[kr[k].rec] : -1;
            ab[g + k] = f & 1 ? nb + (-1 - (int)r[0]) : -1;
        }
        s = cd_greedy_colors(g, ab, ab + g, nb + W->n_walls, gc, ncolors, &mask, &mask_cap,
                             &mask_words, err);
    }
    /* this rank's ones: both lists in key order, one merge */
    for (int k = 0, a = 0; k < n && s == CDLAB_OK; k++) {
        const contact *c = &L->c[k];
        while (a < g && kr[a].key < c->key)
            a++;
        if (a < g && kr[a].key == c->key)
            co[k] = gc[a];
    }
    free(all);
    free(kr);
    free(ids);
    free(ab);
    free(gc);
    free(mask);
    return s;
}

/* The rounds' buffers: per own movable particle its contacts in key order (off, adj), the
 * first uncoloured one (at), its colours (mask, words a body) and the next key last sent to its
 * halo copies (last); per halo copy its owner's rank (owner) and the owner's state as last
 * received (vals, width a particle, at the particle's index); the colours to send (out: key's
 * high and low 32 bits, colour; nout of them) and their ranks (dest). */
typedef struct rounds {
    int own, words, width, nout, out_cap, dest_cap;
    int *off, *adj, *at, *owner, *dest, *scount, *rcount;
    uint64_t *mask, *last;
    double *vals, *out;
} rounds;

static void rounds_free(rounds *R)
{
    free(R->off);
    free(R->adj);
    free(R->at);
    free(R->owner);
    free(R->dest);
    free(R->scount);
    free(R->rcount);
    free(R->mask);
    free(R->last);
    free(R->vals);
    free(R->out);
    memset(R, 0, sizeof *R);
}

static uint64_t next_key(const rounds *R, const contact_list *L, int b)
{
    int a = R->off[b] + R->at[b];
    return a < R->off[b + 1] ? L->c[R->adj[a]].key : UINT64_MAX;
}

static uint64_t sent_next(const rounds *R, int b)
{
    return get64(R->vals + (size_t)b * (size_t)R->width);
}

static uint64_t sent_mask(const rounds *R, int b, int w)
{
    return get64(R->vals + (size_t)b * (size_t)R->width + NEXT_W + 2 * w);
}

/* Contact k coloured col: its own movable bodies step past it. */
static status take(rounds *R, const contact_list *L, const particles *P, int k, int col, int *co,
                   diag *err)
{
    const contact *c = &L->c[k];
    co[k] = col;
    int b[2] = {c->j, c->i};
    for (int t = 0; t < 2; t++) {
        if (b[t] < 0 || b[t] >= R->own || P->frozen[b[t]])
            continue;
        int a = R->off[b[t]] + R->at[b[t]];
        if (a >= R->off[b[t] + 1] || R->adj[a] != k)
            return diag_set(err, CDLAB_ERR_NUMERIC, "colouring: contact %d-%d out of turn",
                            c->i >= 0 ? P->id[c->i] : c->i, P->id[c->j]);
        R->at[b[t]]++;
        R->mask[(size_t)b[t] * (size_t)R->words + (size_t)(col / 64)] |= 1ull << (col % 64);
    }
    return CDLAB_OK;
}

/* A pass over the uncoloured contacts rem[0 .. *nrem) (kept in key order): those this rank
 * decides and finds ready are coloured and leave the list; the colour of one with a halo
 * copy's body is queued for that body's owner. *overflow: a colour past the masks' width. */
static status round_pass(rounds *R, const world *W, const contact_list *L, int *rem, int *nrem,
                         int *co, int *overflow, diag *err)
{
    const particles *P = &W->P;
    int m = 0, own = R->own;
    status s = CDLAB_OK;
    for (int q = 0; q < *nrem && s == CDLAB_OK; q++) {
        int k = rem[q];
        const contact *c = &L->c[k];
        if (co[k] >= 0) /* its colour came from the rank that decided it */
            continue;
        /* decided by body 1's owner: a halo copy's there, its owner's state as sent */
        int ready = c->j < own && !is_piston(W, c); /* the pistons': before the rounds */
        int b[2], nb = 0;
        if (!P->frozen[c->j])
            b[nb++] = c->j;
        if (c->i >= 0 && !P->frozen[c->i])
            b[nb++] = c->i;
        for (int t = 0; t < nb && ready; t++)
            ready = (b[t] >= own ? sent_next(R, b[t]) : next_key(R, L, b[t])) == c->key;
        int col = -1;
        for (int w = 0; w < R->words && ready && col < 0; w++) {
            uint64_t used = 0;
            for (int t = 0; t < nb; t++)
                used |= b[t] >= own ? sent_mask(R, b[t], w)
                                    : R->mask[(size_t)b[t] * (size_t)R->words + (size_t)w];
            if (~used)
                col = 64 * w + __builtin_ctzll(~used);
        }
        if (ready && col < 0) {
            *overflow = 1;
            break;
        }
        if (!ready) {
            rem[m++] = k;
            continue;
        }
        s = take(R, L, P, k, col, co, err);
        if (s == CDLAB_OK && c->i >= own) { /* body 0's owner holds it too */
            double *o = grow_array(R->out, &R->out_cap, 3 * (R->nout + 1), sizeof *o);
            int *d = o ? grow_array(R->dest, &R->dest_cap, R->nout + 1, sizeof *d) : NULL;
            if (!o || !d) {
                s = diag_set(err, CDLAB_ERR_NOMEM, "cannot colour the contacts");
                break;
            }
            R->out = o;
            R->dest = d;
            put64(o + 3 * R->nout, c->key);
            o[3 * R->nout + 2] = col;
            d[R->nout++] = R->owner[c->i - own];
        }
    }
    if (!*overflow)
        *nrem = m;
    return s;
}

/* A state as sent: the next key, then the mask, each 64 bits as two whole doubles. */
static void put_state(const rounds *R, const contact_list *L, int b, double *v)
{
    put64(v, next_key(R, L, b));
    for (int w = 0; w < R->words; w++)
        put64(v + NEXT_W + 2 * w, R->mask[(size_t)b * (size_t)R->words + (size_t)w]);
}

/* Contact of the key in L (in key order), or -1. */
static int find_key(const contact_list *L, uint64_t key)
{
    int lo = 0, hi = L->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (L->c[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < L->n && L->c[lo].key == key ? lo : -1;
}

/* A round's messages (collective), to the ranks with something for them only: to each rank, the
 * states of its halo copies of this rank's particles that changed since last sent (a count,
 * then per state its place in the halo's list to that rank and the state) and the colours
 * decided here of the contacts it holds too; what comes is taken (a colour: the next contact
 * of its body here). */
static status exchange_round(rounds *R, const cd_mpi *M, const world *W, const contact_list *L,
                             int *co, diag *err)
{
    const halo *H = &M->H;
    int P = comm_size(), n = R->nout, sw = 1 + R->width;
    long room = 0;
    for (int r = 0; r < P; r++)
        room += 1 + (long)H->scount[r] * sw;
    double *send = malloc((size_t)(room + 3 * (long)n + 1) * sizeof *send), *recv = NULL;
    /* the queued colours grouped by rank (their order kept): rank r's at at[r] .. at[r + 1] */
    int *at = calloc((size_t)P + 1, sizeof *at), *fill = malloc((size_t)P * sizeof *fill);
    int *grouped = malloc((size_t)(n + 1) * sizeof *grouped);
    status s = send && at && fill && grouped
                   ? CDLAB_OK
                   : diag_set(err, CDLAB_ERR_NOMEM, "cannot colour the contacts");
    for (int q = 0; q < n && s == CDLAB_OK; q++)
        at[R->dest[q] + 1]++;
    for (int r = 0; r < P && s == CDLAB_OK; r++) {
        at[r + 1] += at[r];
        fill[r] = at[r];
    }
    for (int q = 0; q < n && s == CDLAB_OK; q++)
        grouped[fill[R->dest[q]]++] = q;
    long used = 0;
    for (int r = 0, first = 0; r < P && s == CDLAB_OK; first += H->scount[r], r++) {
        long start = used++;
        int ns = 0;
        for (int q = 0; q < H->scount[r]; q++) {
            int b = H->send[first + q];
            if (next_key(R, L, b) == R->last[b])
                continue;
            send[used] = q;
            put_state(R, L, b, send + used + 1);
            used += sw;
            ns++;
        }
        send[start] = ns;
        for (int g = at[r]; g < at[r + 1]; g++, used += 3)
            memcpy(send + used, R->out + 3 * grouped[g], 3 * sizeof *send);
        /* a segment only with something in it: no message otherwise */
        R->scount[r] = used - start > 1 ? (int)(used - start) : 0;
        if (!R->scount[r])
            used = start;
    }
    for (int b = 0; s == CDLAB_OK && b < R->own; b++)
        R->last[b] = next_key(R, L, b);
    free(at);
    free(fill);
    free(grouped);
    if (s != CDLAB_OK) /* an exchange of nothing: the others wait for this rank's */
        memset(R->scount, 0, (size_t)P * sizeof *R->scount);
    int total = 0;
    status x = comm_exchange(send, R->scount, &recv, R->rcount, &total, err);
    if (s == CDLAB_OK)
        s = x;
    free(send);
    R->nout = 0;
    /* the segments in rank order; a rank's copies lie in rank order after the own ones */
    long pos = 0;
    for (int r = 0, copies = R->own; r < P && s == CDLAB_OK; copies += H->rcount[r], r++) {
        long end = pos + R->rcount[r];
        if (pos == end)
            continue;
        int ns = (int)recv[pos++];
        for (int q = 0; q < ns && pos + sw <= end; q++, pos += sw)
            memcpy(R->vals + (size_t)(copies + (int)recv[pos]) * (size_t)R->width, recv + pos + 1,
                   (size_t)R->width * sizeof *recv);
        for (; pos + 3 <= end && s == CDLAB_OK; pos += 3) {
            int k = find_key(L, get64(recv + pos));
            if (k < 0 || co[k] >= 0)
                s = diag_set(err, CDLAB_ERR_NUMERIC, "colouring: a colour for a contact not held");
            else
                s = take(R, L, &W->P, k, (int)recv[pos + 2], co, err);
        }
        pos = end;
    }
    free(recv);
    return s;
}

/* The rounds' buffers for this step's list, the pistons' chains taken (pc: their colours). */
static status rounds_init(rounds *R, const cd_mpi *M, const world *W, const contact_list *L,
                          const int *ord, const int *pc, int words, int *co, diag *err)
{
    const particles *P = &W->P;
    int n = L->n, own = M->H.n_owned, ghosts = P->n - own, ranks = comm_size();
    memset(R, 0, sizeof *R);
    R->own = own;
    R->words = words;
    R->width = NEXT_W + 2 * words;
    R->off = calloc((size_t)own + 1, sizeof *R->off);
    R->adj = malloc((size_t)(2 * n + 1) * sizeof *R->adj);
    R->at = calloc((size_t)own + 1, sizeof *R->at);
    R->owner = malloc((size_t)(ghosts > 0 ? ghosts : 1) * sizeof *R->owner);
    R->scount = calloc((size_t)ranks, sizeof *R->scount);
    R->rcount = calloc((size_t)ranks, sizeof *R->rcount);
    R->mask = calloc((size_t)(own > 0 ? own : 1) * (size_t)words, sizeof *R->mask);
    R->last = malloc((size_t)(own > 0 ? own : 1) * sizeof *R->last);
    R->vals = malloc((size_t)(P->n > 0 ? P->n : 1) * (size_t)R->width * sizeof *R->vals);
    if (!R->off || !R->adj || !R->at || !R->owner || !R->scount || !R->rcount || !R->mask ||
        !R->last || !R->vals)
        return diag_set(err, CDLAB_ERR_NOMEM, "cannot colour %d contacts", n);
    /* nothing sent or received yet: a next key that is no contact's */
    for (int b = 0; b < own; b++)
        R->last[b] = UINT64_MAX;
    for (int g = own; g < P->n; g++) {
        double *v = R->vals + (size_t)g * (size_t)R->width;
        memset(v, 0, (size_t)R->width * sizeof *v);
        put64(v, UINT64_MAX);
    }
    for (int r = 0, g = 0; r < ranks; r++) /* the copies lie in rank order */
        for (int q = 0; q < M->H.rcount[r] && g < ghosts; q++)
            R->owner[g++] = r;
    for (int k = 0; k < n; k++) {
        const contact *c = &L->c[k];
        if (c->j < own && !P->frozen[c->j])
            R->off[c->j + 1]++;
        if (c->i >= 0 && c->i < own && !P->frozen[c->i])
            R->off[c->i + 1]++;
    }
    for (int b = 0; b < own; b++)
        R->off[b + 1] += R->off[b];
    for (int q = 0; q < n; q++) { /* in the colouring's order; at: the fill's cursor first */
        int k = ord[q];
        const contact *c = &L->c[k];
        if (c->j < own && !P->frozen[c->j])
            R->adj[R->off[c->j] + R->at[c->j]++] = k;
        if (c->i >= 0 && c->i < own && !P->frozen[c->i])
            R->adj[R->off[c->i] + R->at[c->i]++] = k;
    }
    memset(R->at, 0, (size_t)own * sizeof *R->at);
    status s = CDLAB_OK;
    for (int k = 0; k < n; k++)
        co[k] = -1;
    for (int q = 0; q < n && s == CDLAB_OK; q++) /* the pistons' chains, in order */
        if (pc[ord[q]] >= 0)
            s = take(R, L, P, ord[q], pc[ord[q]], co, err);
    return s;
}

/* The number of colours and each one's counted contacts (one process's sizes: a maximum and
 * exact sums, through the trees), then the contacts grouped by colour. Collective: s, this
 * rank's status so far (agreed here). */
static status color_sizes(cd_mpi *M, cd_solver *S, status s, diag *err)
{
    int n = S->C.n;
    const int *co = S->color_of;
    double nc = 0.0;
    for (int k = 0; k < n && s == CDLAB_OK; k++)
        if (co[k] + 1 > nc)
            nc = co[k] + 1;
    comm_allreduce(&nc, 1, COMM_MAX);
    int ncol = (int)nc;
    double *gs = calloc((size_t)ncol + 1, sizeof *gs);
    int *sizes =
        s == CDLAB_OK ? grow_array(M->gsize, &M->gsize_cap, ncol + 1, sizeof *sizes) : NULL;
    int *order = s == CDLAB_OK
                     ? grow_array(S->color_order, &S->color_order_cap, ncol + 1, sizeof *order)
                     : NULL;
    if (sizes)
        M->gsize = sizes;
    if (order)
        S->color_order = order;
    if (s == CDLAB_OK && (!gs || !sizes || !order))
        s = diag_set(err, CDLAB_ERR_NOMEM, "cannot colour %d contacts", n);
    for (int k = 0; k < n && s == CDLAB_OK; k++)
        gs[co[k]] += M->count[k];
    s = comm_agree(s, err);
    if (s == CDLAB_OK) {
        comm_allreduce_exact_sum(gs, ncol);
        for (int c = 0; c < ncol; c++)
            sizes[c] = (int)gs[c];
        S->n_colors = ncol;
        s = cd_group_colors(S, n, err);
    }
    free(gs);
    return s;
}

status cd_mpi_color(cd_mpi *M, world *W, cd_solver *S, int hashed, double total_contacts, diag *err)
{
    contact_list *L = &S->C;
    int n = L->n, npc = 0, has_piston = 0;
    for (int w = 0; w < W->n_walls; w++)
        has_piston |= W->walls[w].kind == WALL_PISTON;
    int *co = grow_array(S->color_of, &S->color_of_cap, n + 1, sizeof *co);
    int *pc = malloc((size_t)(n + 1) * sizeof *pc), *rem = malloc((size_t)(n + 1) * sizeof *rem);
    int *ord = cd_color_order(L, W->n_walls, hashed);
    if (co)
        S->color_of = co;
    status s = co && pc && rem && ord
                   ? CDLAB_OK
                   : diag_set(err, CDLAB_ERR_NOMEM, "cannot colour %d contacts", n);
    for (int k = 0; k < n && s == CDLAB_OK; k++)
        pc[k] = -1;
    if (has_piston) /* collective: every rank, also one that failed above, takes part */
        s = comm_agree(s == CDLAB_OK ? color_piston_chains(M, W, L, pc, &npc, err) : s, err);
    int words = S->mask_words > 0 ? S->mask_words : 1;
    while (64 * words < npc)
        words *= 2;
    rounds R = {0};
    M->color_rounds = 0;
    for (;;) { /* the rounds; again with wider masks if a colour passes them */
        int nrem = 0, flag = 0;
        if (s == CDLAB_OK)
            s = rounds_init(&R, M, W, L, ord, pc, words, co, err);
        for (int q = 0; q < n && s == CDLAB_OK; q++)
            if (co[ord[q]] < 0)
                rem[nrem++] = ord[q];
        /* the first uncoloured contact is coloured every three rounds at least: more would be a
         * list that two ranks do not hold alike */
        s = comm_agree(s, err);
        for (long round = 0; s == CDLAB_OK; round++) {
            int overflow = 0;
            if (round > 3 * (long)total_contacts + 3)
                s = diag_set(err, CDLAB_ERR_NUMERIC,
                             "step %ld: the colouring's rounds stopped colouring (%d contacts "
                             "left on rank %d)",
                             W->step, nrem, comm_rank());
            /* states and colours to the ranks that need them (every rank takes part, whatever
             * its status), then what is ready coloured */
            status x = exchange_round(&R, M, W, L, co, err);
            if (s == CDLAB_OK)
                s = x;
            if (s == CDLAB_OK)
                s = round_pass(&R, W, L, rem, &nrem, co, &overflow, err);
            flag = overflow ? 2 : nrem > 0 || R.nout > 0;
            s = comm_agree_flag(s, &flag, err);
            M->color_rounds++;
            if (s != CDLAB_OK || flag != 1)
                break;
        }
        rounds_free(&R);
        if (s != CDLAB_OK || flag < 2)
            break;
        if (words >= 1 << 16) {
            s = diag_set(err, CDLAB_ERR_NOMEM, "contact graph needs more than %d colours",
                         64 << 16);
            break;
        }
        words *= 2;
    }
    S->mask_words = words;
    free(pc);
    free(rem);
    free(ord);
    return color_sizes(M, S, s, err);
}

/* What a writer put into an HDF5 file: see h5ledger.h. */
#include "h5ledger.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 64-bit multiply-rotate mixing (constants: odd 64-bit numbers with well-spread bits, the
 * primes of xxHash64); the final avalanche is SplitMix64's. */
#define MIX_P1 0x9E3779B185EBCA87ULL
#define MIX_P2 0xC2B2AE3D27D4EB4FULL
#define MIX_P3 0x165667B19E3779F9ULL

static inline uint64_t rotl64(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static inline uint64_t avalanche(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint64_t hash_bytes(const unsigned char *p, size_t n, uint64_t seed)
{
    uint64_t h = seed * MIX_P1 + MIX_P3 + (uint64_t)n;
    size_t k = 0;
    for (; k + 8 <= n; k += 8) {
        uint64_t w;
        memcpy(&w, p + k, 8);
        h = rotl64(h ^ (w * MIX_P2), 31) * MIX_P1;
    }
    if (k < n) {
        uint64_t w = 0;
        memcpy(&w, p + k, n - k);
        h = rotl64(h ^ (w * MIX_P2), 27) * MIX_P1;
    }
    return avalanche(h);
}

uint64_t h5ledger_hash_rows(const void *data, size_t row_bytes, long long first, long long n)
{
    const unsigned char *p = data;
    uint64_t sum = 0;
    for (long long r = 0; r < n; r++)
        sum += hash_bytes(p + (size_t)r * row_bytes, row_bytes, (uint64_t)(first + r) + 1);
    return sum;
}

struct h5ledger {
    h5ledger_entry *e;
    int n, cap;
    int *table; /* open addressing over entry indices, -1 empty; size a power of two */
    int tsize;
};

h5ledger *h5ledger_new(void)
{
    return calloc(1, sizeof(h5ledger));
}

void h5ledger_free(h5ledger *l)
{
    if (!l)
        return;
    for (int k = 0; k < l->n; k++) {
        free(l->e[k].obj);
        free(l->e[k].name);
        free(l->e[k].seg);
    }
    free(l->e);
    free(l->table);
    free(l);
}

static uint64_t key_hash(const char *obj, const char *name)
{
    uint64_t h = 1469598103934665603ULL;
    for (const char *c = obj; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    h = (h ^ '@') * 1099511628211ULL;
    for (const char *c = name ? name : ""; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ULL;
    return h;
}

static int same_key(const h5ledger_entry *e, const char *obj, const char *name)
{
    return strcmp(e->obj, obj) == 0 &&
           ((!name && !e->name) || (name && e->name && strcmp(e->name, name) == 0));
}

static int rehash(h5ledger *l, int tsize)
{
    int *t = malloc((size_t)tsize * sizeof *t);
    if (!t)
        return 0;
    for (int k = 0; k < tsize; k++)
        t[k] = -1;
    for (int k = 0; k < l->n; k++) {
        size_t at = (size_t)key_hash(l->e[k].obj, l->e[k].name) & (size_t)(tsize - 1);
        while (t[at] >= 0)
            at = (at + 1) & (size_t)(tsize - 1);
        t[at] = k;
    }
    free(l->table);
    l->table = t;
    l->tsize = tsize;
    return 1;
}

/* The entry of obj@name, made (zeroed, with its key) where there is none. */
static h5ledger_entry *find_or_add(h5ledger *l, h5ledger_kind kind, const char *obj,
                                   const char *name)
{
    if (2 * (l->n + 1) > l->tsize && !rehash(l, l->tsize ? 2 * l->tsize : 256))
        return NULL;
    size_t at = (size_t)key_hash(obj, name) & (size_t)(l->tsize - 1);
    for (; l->table[at] >= 0; at = (at + 1) & (size_t)(l->tsize - 1))
        if (same_key(&l->e[l->table[at]], obj, name))
            return &l->e[l->table[at]];
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 256;
        h5ledger_entry *m = realloc(l->e, (size_t)cap * sizeof *m);
        if (!m)
            return NULL;
        l->e = m;
        l->cap = cap;
    }
    h5ledger_entry *e = &l->e[l->n];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->obj = strdup(obj);
    e->name = name ? strdup(name) : NULL;
    if (!e->obj || (name && !e->name)) {
        free(e->obj);
        free(e->name);
        return NULL;
    }
    l->table[at] = l->n++;
    return e;
}

int h5ledger_dataset(h5ledger *l, const char *path, int type, size_t row_bytes, long long rows,
                     int series)
{
    h5ledger_entry *e = l ? find_or_add(l, H5LEDGER_DATASET, path, NULL) : NULL;
    if (!e)
        return -1;
    e->type = type;
    e->row_bytes = row_bytes;
    e->rows = rows;
    e->hash = 0;
    e->nseg = 0;
    e->series = series;
    return (int)(e - l->e);
}

int h5ledger_attr(h5ledger *l, const char *obj, const char *name, const void *value, size_t size)
{
    h5ledger_entry *e = l ? find_or_add(l, H5LEDGER_ATTR, obj, name) : NULL;
    if (!e)
        return -1;
    e->type = -1;
    e->row_bytes = size;
    e->rows = 1;
    e->hash = h5ledger_hash_rows(value, size, 0, 1);
    return (int)(e - l->e);
}

int h5ledger_add_rows(h5ledger *l, int k, const void *data, long long first, long long n)
{
    h5ledger_entry *e = &l->e[k];
    uint64_t h = h5ledger_hash_rows(data, e->row_bytes, first, n);
    e->hash += h;
    if (!e->series)
        return 1;
    if (first + n > e->rows)
        e->rows = first + n;
    if (e->nseg == e->capseg) {
        int cap = e->capseg ? 2 * e->capseg : 16;
        h5ledger_segment *m = realloc(e->seg, (size_t)cap * sizeof *m);
        if (!m)
            return 0;
        e->seg = m;
        e->capseg = cap;
    }
    e->seg[e->nseg++] = (h5ledger_segment){first, n, h};
    return 1;
}

/* path is group itself or lies under it */
static int under(const char *path, const char *group)
{
    size_t n = strlen(group);
    if (n == 1 && group[0] == '/')
        return path[0] == '/';
    return strncmp(path, group, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int h5ledger_copy_group(h5ledger *dst, const h5ledger *src, const char *group)
{
    if (!dst || !src)
        return 0;
    for (int k = 0; k < src->n; k++) {
        const h5ledger_entry *e = &src->e[k];
        if (!under(e->obj, group))
            continue;
        h5ledger_entry *d = find_or_add(dst, e->kind, e->obj, e->name);
        if (!d)
            return 0;
        char *obj = d->obj, *name = d->name;
        free(d->seg);
        *d = *e;
        d->obj = obj;
        d->name = name;
        d->seg = NULL;
        d->capseg = d->nseg;
        if (e->nseg > 0) {
            d->seg = malloc((size_t)e->nseg * sizeof *d->seg);
            if (!d->seg) {
                d->nseg = d->capseg = 0;
                return 0;
            }
            memcpy(d->seg, e->seg, (size_t)e->nseg * sizeof *d->seg);
        }
    }
    return 1;
}

int h5ledger_count(const h5ledger *l)
{
    return l ? l->n : 0;
}

h5ledger_entry *h5ledger_at(h5ledger *l, int k)
{
    return &l->e[k];
}

int h5ledger_failures(const h5ledger *l, char *buf, size_t n)
{
    int bad = 0;
    if (n)
        buf[0] = '\0';
    for (int k = 0; l && k < l->n; k++) {
        const h5ledger_entry *e = &l->e[k];
        if (e->ok)
            continue;
        if (bad++ == 0 && n)
            snprintf(buf, n, "%s%s%s", e->obj, e->name ? "@" : "", e->name ? e->name : "");
    }
    return bad;
}

int h5ledger_group_ok(const h5ledger *l, const char *group)
{
    for (int k = 0; l && k < l->n; k++)
        if (!l->e[k].ok && under(l->e[k].obj, group))
            return 0;
    return 1;
}

long long h5ledger_rows_ok(const h5ledger *l, const char *path)
{
    for (int k = 0; l && k < l->n; k++)
        if (l->e[k].kind == H5LEDGER_DATASET && strcmp(l->e[k].obj, path) == 0)
            return l->e[k].rows_ok;
    return -1;
}

/* The step named by the child of group that obj lies under; -1 where it is not a step. */
static long long child_step(const char *obj, const char *group, size_t gl)
{
    if (strncmp(obj, group, gl) != 0 || obj[gl] != '/')
        return -1;
    char child[32], *end;
    size_t cl = strcspn(obj + gl + 1, "/");
    if (cl == 0 || cl >= sizeof child)
        return -1;
    memcpy(child, obj + gl + 1, cl);
    child[cl] = '\0';
    long long step = strtoll(child, &end, 10);
    return *end || step < 0 ? -1 : step;
}

long long h5ledger_last_whole_step(const h5ledger *l, const char *group, const char *mark)
{
    size_t gl = strlen(group);
    long long *bad = NULL, best = -1;
    int nbad = 0, cap = 0;
    /* the steps with an entry that did not verify (few: what a failure cut short) */
    for (int k = 0; l && k < l->n; k++) {
        long long step = l->e[k].ok ? -1 : child_step(l->e[k].obj, group, gl);
        if (step < 0)
            continue;
        if (nbad == cap) {
            long long *m = realloc(bad, (size_t)(cap = cap ? 2 * cap : 16) * sizeof *m);
            if (!m) {
                free(bad);
                return -1; /* out of memory: none proven */
            }
            bad = m;
        }
        bad[nbad++] = step;
    }
    for (int k = 0; l && k < l->n; k++) {
        const h5ledger_entry *e = &l->e[k];
        long long step = child_step(e->obj, group, gl);
        int whole = step > best;
        if (mark) /* the child group's own attribute of that name, verified */
            whole = whole && e->kind == H5LEDGER_ATTR && e->ok && strcmp(e->name, mark) == 0 &&
                    !strchr(e->obj + gl + 1, '/');
        for (int j = 0; whole && j < nbad; j++)
            whole = bad[j] != step;
        if (whole)
            best = step;
    }
    free(bad);
    return best;
}

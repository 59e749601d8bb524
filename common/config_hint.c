/* The config reader's hints for a key or section that is not known: the closest known name
 * (edit distance), or the sections that have such a key (config.h: config_closest,
 * config_key_hint). */
#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Edit distance (insertions, deletions, substitutions) of two short names. */
static int edit_distance(const char *a, const char *b)
{
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (la >= CONFIG_NAME_MAX || lb >= CONFIG_NAME_MAX)
        return 1 << 20;
    int row[CONFIG_NAME_MAX + 1];
    for (int j = 0; j <= lb; j++)
        row[j] = j;
    for (int i = 1; i <= la; i++) {
        int prev = row[0];
        row[0] = i;
        for (int j = 1; j <= lb; j++) {
            int up = row[j];
            int sub = prev + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            row[j] = sub < up + 1 ? (sub < row[j - 1] + 1 ? sub : row[j - 1] + 1)
                                  : (up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1);
            prev = up;
        }
    }
    return row[lb];
}

/* The known name closest to a misspelt one (NULL if none is close: at most a third of its
 * letters differ). */
const char *config_closest(const char *name, const char *const *known, int n)
{
    const char *best = NULL;
    int bd = (int)strlen(name) / 3 + 1;
    for (int k = 0; k < n; k++) {
        int d = edit_distance(name, known[k]);
        if (d < bd || (d == bd && !best && d <= 1)) {
            bd = d;
            best = known[k];
        }
    }
    return best;
}

/* " (did you mean 'x'?)" for a key of a section, among the keys the readers asked for there
 * (every getter records the keys it looked up, defaults included), or "". */
const char *config_key_hint(const config *c, const char *sec, const char *key, char *buf, size_t n)
{
    const char *names[256];
    int m = 0;
    size_t sl = strlen(sec);
    /* derived values are recorded too (dem.critical_dt): only documented keys are suggested */
    for (int k = 0; k < c->nres && m < 256; k++)
        if (strncmp(c->res[k].name, sec, sl) == 0 && c->res[k].name[sl] == '.' &&
            config_documented(c, sec, c->res[k].name + sl + 1))
            names[m++] = c->res[k].name + sl + 1;
    const char *best = config_closest(key, names, m);
    if (best) {
        snprintf(buf, n, " (did you mean '%s'?)", best);
        return buf;
    }
    /* the key of other sections, given in the wrong one (--set system.iterations=80) */
    size_t at = 0;
    int found = 0;
    for (int k = 0; k < c->nschema && at + 1 < n; k++) {
        const char *other = c->schema[k].section;
        size_t ol = strlen(other);
        if (strcmp(c->schema[k].key, key) != 0 || strcmp(other, sec) == 0)
            continue;
        int tmpl = ol > 0 && other[ol - 1] == '.';
        int w = snprintf(buf + at, n - at, "%s[%s%s]", found ? ", " : " (it is a key of ", other,
                         tmpl ? "NAME" : "");
        if (w < 0 || (size_t)w >= n - at)
            break;
        at += (size_t)w;
        found++;
    }
    if (!found || at + 2 > n)
        return "";
    snprintf(buf + at, n - at, ")");
    return buf;
}

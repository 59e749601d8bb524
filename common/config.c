#include "config.h"
#include "inputfile.h"

#include <ini.h>

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <strings.h>

typedef struct parse_state {
    config *c;
    int line;      /* line of the text currently handed to inih */
    const char *p; /* string reader position */
    FILE *f;
    diag *err;
    status st;
} parse_state;

static status add_entry(config *c, const char *sec, const char *key, const char *val, int line,
                        diag *err)
{
    if (strlen(sec) >= CONFIG_NAME_MAX || strlen(key) >= CONFIG_NAME_MAX)
        return line ? diag_set(err, CDLAB_ERR_CONFIG, "%s:%d: section or key name too long",
                               c->shown, line)
                    : diag_set(err, CDLAB_ERR_CONFIG, "--set %s.%s: section or key name too long",
                               sec, key);
    if (strlen(val) >= CONFIG_VALUE_MAX)
        return diag_set(err, CDLAB_ERR_CONFIG, "%s:%d: %s.%s: value too long", c->shown, line, sec,
                        key);
    for (int k = 0; k < c->n; k++) {
        config_entry *e = &c->e[k];
        if (strcmp(e->section, sec) == 0 && strcmp(e->key, key) == 0) {
            if (line) /* the same key twice in a file is almost always a mistake */
                return diag_set(err, CDLAB_ERR_CONFIG,
                                "%s:%d: %s.%s: duplicate key (first given on line %d)", c->shown,
                                line, sec, key, e->line);
            if (e->line && !e->file_value && !(e->file_value = strdup(e->value)))
                return diag_set(err, CDLAB_ERR_NOMEM, "out of memory reading the configuration");
            snprintf(e->value, sizeof e->value, "%s", val); /* --set overrides the file */
            e->line = 0;
            return CDLAB_OK;
        }
    }
    if (c->n == CONFIG_MAX_KEYS)
        return diag_set(err, CDLAB_ERR_CONFIG,
                        "%s:%d: more than %d keys: not a config cdlab reads (its largest, 64 walls "
                        "with their keys, has about 1,000)",
                        c->shown, line, CONFIG_MAX_KEYS);
    if (c->n == c->cap) {
        int nc = c->cap ? 2 * c->cap : 32;
        config_entry *p = realloc(c->e, (size_t)nc * sizeof *p);
        if (!p)
            return diag_set(err, CDLAB_ERR_NOMEM, "out of memory reading the configuration");
        c->e = p;
        c->cap = nc;
    }
    config_entry *e = &c->e[c->n++];
    memset(e, 0, sizeof *e);
    snprintf(e->section, sizeof e->section, "%s", sec);
    snprintf(e->key, sizeof e->key, "%s", key);
    snprintf(e->value, sizeof e->value, "%s", val);
    e->line = line;
    return CDLAB_OK;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    parse_state *ps = user;
    if (ps->st != CDLAB_OK) /* inih goes on after a handler error; keep the first one */
        return 0;
    if (section[0] == '\0') {
        ps->st = diag_set(ps->err, CDLAB_ERR_CONFIG, "%s:%d: key '%s' outside of any [section]",
                          ps->c->shown, ps->line, name);
        return 0;
    }
    ps->st = add_entry(ps->c, section, name, value, ps->line, ps->err);
    return ps->st == CDLAB_OK;
}

/* Readers hand inih one line at a time and count lines, so the handler knows its line. */
static char *read_string(char *str, int num, void *stream)
{
    parse_state *ps = stream;
    if (*ps->p == '\0' || ps->st != CDLAB_OK)
        return NULL;
    int line_start = ps->p == ps->c->text || ps->p[-1] == '\n';
    if (line_start) {
        /* a line longer than inih's longest would be split, its tail read as a line of its
         * own (a "key = value" there taking effect): refused, with the line's number */
        const char *nl = strchr(ps->p, '\n');
        size_t len = nl ? (size_t)(nl - ps->p) : strlen(ps->p);
        if (len > CONFIG_VALUE_MAX - 2) {
            ps->st = diag_set(ps->err, CDLAB_ERR_CONFIG,
                              "%s:%d: line of %zu characters, longer than the %d a config line may "
                              "have",
                              ps->c->shown, ps->line + 1, len, CONFIG_VALUE_MAX - 2);
            return NULL;
        }
    }
    int k = 0;
    while (k < num - 1 && ps->p[k] != '\0' && ps->p[k] != '\n')
        k++;
    if (ps->p[k] == '\n' && k < num - 1)
        k++;
    memcpy(str, ps->p, (size_t)k);
    str[k] = '\0';
    ps->p += k;
    /* inih asks again for the rest of a line longer than its buffer: one line, one count */
    if (line_start)
        ps->line++;
    return str;
}

static status parse(config *c, parse_state *ps)
{
    /* libinih's run-time settings: no multi-line values (a continuation line would silently
     * extend a value), '#' and ';' inline comments, long lines on the heap in a buffer of the
     * longest line from the start (without ini_initial_alloc the buffer stayed at its default
     * 200 bytes: a line of 200 characters or more was split, its tail parsed as a line of its
     * own, a syntax error or, where it read "key = value", a key) */
    ini_allow_multiline = 0;
    ini_inline_comment_prefixes = ";#";
    ini_use_stack = 0;
    ini_max_line = CONFIG_VALUE_MAX;
    ini_initial_alloc = CONFIG_VALUE_MAX;
    int rc = ini_parse_stream(read_string, ps, handler, ps);
    if (ps->st != CDLAB_OK)
        return ps->st;
    if (rc > 0)
        return diag_set(ps->err, CDLAB_ERR_CONFIG,
                        "%s:%d: syntax error (expected [section], key = value or a comment)",
                        c->shown, rc);
    if (rc < 0)
        return diag_set(ps->err, CDLAB_ERR_IO, "%s: cannot parse (inih error %d)", c->shown, rc);
    return CDLAB_OK;
}

status config_load_string(config *c, const char *text, const char *name, diag *err)
{
    memset(c, 0, sizeof *c);
    snprintf(c->file, sizeof c->file, "%s", name);
    size_t len = strlen(c->file);
    snprintf(c->shown, sizeof c->shown, "%s%.200s", len > 200 ? "..." : "",
             c->file + (len > 200 ? len - 200 : 0));
    /* a line end that is a CR alone (classic Mac OS): inih reads the whole file as one line,
     * and the message was a missing key */
    for (const char *cr = strchr(text, '\r'); cr; cr = strchr(cr + 1, '\r'))
        if (cr[1] != '\n') {
            int line = 1;
            for (const char *q = text; q < cr; q++)
                line += *q == '\n';
            return diag_set(err, CDLAB_ERR_CONFIG,
                            "%s:%d: a line ends in a carriage return alone (CR, an old Mac "
                            "format): save the file with LF (or CR LF) line ends",
                            c->shown, line);
        }
    c->text = strdup(text);
    if (!c->text)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    parse_state ps = {.c = c, .p = c->text, .err = err, .st = CDLAB_OK};
    return parse(c, &ps);
}

status config_load_file(config *c, const char *path, diag *err)
{
    if (strlen(path) >= sizeof c->file) {
        memset(c, 0, sizeof *c);
        return diag_set(err, CDLAB_ERR_IO,
                        "%.200s...: config file name too long (over %zu characters)", path,
                        sizeof c->file - 1);
    }
    FILE *f = input_file_open(path, "config file", INPUT_CONFIG_MAX_BYTES, err);
    if (!f) {
        memset(c, 0, sizeof *c);
        return CDLAB_ERR_IO;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (len + 1 == cap) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) {
        memset(c, 0, sizeof *c);
        return diag_set(err, CDLAB_ERR_NOMEM, "%s: out of memory reading the file", path);
    }
    buf[len] = '\0';
    if (strlen(buf) != len) {
        free(buf);
        memset(c, 0, sizeof *c);
        return diag_set(err, CDLAB_ERR_CONFIG, "%s: contains a NUL byte (not a text file?)", path);
    }
    status s = config_load_string(c, buf, path, err);
    free(buf);
    return s;
}

status config_set(config *c, const char *assignment, diag *err)
{
    const char *eq = strchr(assignment, '=');
    if (!eq)
        return diag_set(err, CDLAB_ERR_CONFIG, "--set %s: expected section.key=value", assignment);
    char name[2 * CONFIG_NAME_MAX + 2];
    size_t nl = (size_t)(eq - assignment);
    if (nl >= sizeof name)
        return diag_set(err, CDLAB_ERR_CONFIG, "--set %s: name too long", assignment);
    memcpy(name, assignment, nl);
    name[nl] = '\0';
    while (nl > 0 && isspace((unsigned char)name[nl - 1]))
        name[--nl] = '\0';
    char *dot = strrchr(name, '.');
    if (!dot || dot == name || dot[1] == '\0')
        return diag_set(err, CDLAB_ERR_CONFIG, "--set %s: expected section.key=value", assignment);
    *dot = '\0';
    const char *val = eq + 1;
    while (isspace((unsigned char)*val))
        val++;
    return add_entry(c, name, dot + 1, val, 0, err);
}

void config_free(config *c)
{
    for (int k = 0; k < c->n; k++)
        free(c->e[k].file_value);
    free(c->text);
    free(c->e);
    for (int k = 0; k < c->nres; k++)
        free(c->res[k].value);
    free(c->res);
    memset(c, 0, sizeof *c);
}

static config_entry *find(const config *c, const char *sec, const char *key)
{
    for (int k = 0; k < c->n; k++)
        if (strcmp(c->e[k].section, sec) == 0 && strcmp(c->e[k].key, key) == 0)
            return &c->e[k];
    return NULL;
}

int config_has(const config *c, const char *section, const char *key)
{
    return find(c, section, key) != NULL;
}

status config_used_only_with(const config *c, const char *section, const char *const *keys,
                             const char *what, diag *err)
{
    for (; *keys; keys++)
        if (config_has(c, section, *keys))
            return config_error(c, section, *keys, err, "is used only with %s", what);
    return CDLAB_OK;
}

int config_section_line(const config *c, const char *section)
{
    for (int k = 0; k < c->n; k++)
        if (strcmp(c->e[k].section, section) == 0)
            return c->e[k].line;
    return -1;
}

char *config_overrides(const config *c)
{
    size_t n = 1;
    for (int k = 0; k < c->n; k++)
        if (c->e[k].line == 0)
            n += strlen(c->e[k].section) + strlen(c->e[k].key) + strlen(c->e[k].value) + 3;
    char *buf = malloc(n), *p = buf;
    if (!buf)
        return NULL;
    *p = '\0';
    for (int k = 0; k < c->n; k++) {
        const config_entry *e = &c->e[k];
        if (e->line == 0)
            p += sprintf(p, "%s.%s=%s\n", e->section, e->key, e->value);
    }
    return buf;
}

const char *config_file_value(const config *c, const char *section, const char *key)
{
    const config_entry *e = find(c, section, key);
    if (!e)
        return NULL;
    return e->line ? e->value : e->file_value;
}

int config_given_by_set(const config *c, const char *section, const char *key)
{
    const config_entry *e = find(c, section, key);
    return e && e->line == 0;
}

int config_sections_with_prefix(const config *c, const char *prefix, char names[][CONFIG_NAME_MAX],
                                int max)
{
    int count = 0;
    size_t pl = strlen(prefix);
    for (int k = 0; k < c->n; k++) {
        const char *s = c->e[k].section;
        if (strncmp(s, prefix, pl) != 0 || s[pl] != '.' || s[pl + 1] == '\0')
            continue;
        /* counted once however many keys it has: past max (a count for a message) by the
         * entries before it (101 walls of two keys each were "138") */
        int seen = 0;
        for (int m = 0; m < count && m < max && !seen; m++)
            seen = strcmp(names[m], s) == 0;
        for (int m = 0; m < k && count >= max && !seen; m++)
            seen = strcmp(c->e[m].section, s) == 0;
        if (seen)
            continue;
        if (count < max)
            snprintf(names[count], CONFIG_NAME_MAX, "%s", s);
        count++;
    }
    return count;
}

void config_record(config *c, const char *sec, const char *key, const char *fmt, ...)
{
    char name[sizeof c->res->name];
    snprintf(name, sizeof name, "%s.%s", sec, key);
    config_resolved *r = NULL;
    for (int k = 0; k < c->nres; k++)
        if (strcmp(c->res[k].name, name) == 0)
            r = &c->res[k];
    if (!r) {
        if (c->nres == c->rescap) {
            int nc = c->rescap ? 2 * c->rescap : 64;
            config_resolved *p = realloc(c->res, (size_t)nc * sizeof *p);
            if (!p) {
                c->res_lost = 1;
                return;
            }
            c->res = p;
            c->rescap = nc;
        }
        r = &c->res[c->nres++];
        snprintf(r->name, sizeof r->name, "%s", name);
        r->value = NULL;
    }
    va_list ap, again;
    va_start(ap, fmt);
    va_copy(again, ap);
    int len = vsnprintf(NULL, 0, fmt, ap);
    char *v = len >= 0 ? malloc((size_t)len + 1) : NULL;
    if (v)
        vsnprintf(v, (size_t)len + 1, fmt, again);
    else
        c->res_lost = 1;
    va_end(again);
    va_end(ap);
    free(r->value);
    r->value = v ? v : strdup("");
}

void config_fmt_double(char *buf, size_t n, double v)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static status verror(const config *c, const config_entry *e, const char *sec, const char *key,
                     diag *err, const char *fmt, va_list ap)
{
    char msg[700];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (e && e->line > 0)
        return diag_set(err, CDLAB_ERR_CONFIG, "%s:%d: %s.%s: %s", c->shown, e->line, sec, key,
                        msg);
    if (e)
        return diag_set(err, CDLAB_ERR_CONFIG, "--set %s.%s: %s", sec, key, msg);
    return diag_set(err, CDLAB_ERR_CONFIG, "%s: %s.%s: %s", c->shown, sec, key, msg);
}

status config_error(const config *c, const char *sec, const char *key, diag *err, const char *fmt,
                    ...)
{
    va_list ap;
    va_start(ap, fmt);
    status s = verror(c, find(c, sec, key), sec, key, err, fmt, ap);
    va_end(ap);
    return s;
}

static status eerr(const config *c, const config_entry *e, const char *sec, const char *key,
                   diag *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;
static status eerr(const config *c, const config_entry *e, const char *sec, const char *key,
                   diag *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    status s = verror(c, e, sec, key, err, fmt, ap);
    va_end(ap);
    return s;
}

void config_use_schema(config *c, const config_key_doc *schema, int n)
{
    c->schema = schema;
    c->nschema = n;
    c->undocumented[0] = '\0';
}

int config_documented(const config *c, const char *section, const char *key)
{
    if (!c->schema)
        return 1;
    for (int k = 0; k < c->nschema; k++) {
        const char *s = c->schema[k].section;
        size_t l = strlen(s);
        int sec_ok = l > 0 && s[l - 1] == '.' ? strncmp(section, s, l) == 0 && section[l] != '\0'
                                              : strcmp(section, s) == 0;
        if (sec_ok && strcmp(key, c->schema[k].key) == 0)
            return 1;
    }
    return 0;
}

/* Looks up a key; missing and required is an error; marks it used. */
static status lookup(config *c, const char *sec, const char *key, int required, config_entry **out,
                     diag *err)
{
    if (!c->undocumented[0] && !config_documented(c, sec, key))
        snprintf(c->undocumented, sizeof c->undocumented, "%s.%s", sec, key);
    config_entry *e = find(c, sec, key);
    *out = e;
    if (e) {
        e->used = 1;
        if (e->value[0] == '\0')
            return eerr(c, e, sec, key, err, "empty value");
        return CDLAB_OK;
    }
    if (required)
        return diag_set(err, CDLAB_ERR_CONFIG, "%s: missing required key %s.%s (section [%s])",
                        c->shown, sec, key, sec);
    return CDLAB_OK;
}

static int parse_long(const char *s, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    if (errno || end == s || *end != '\0')
        return 0;
    *out = v;
    return 1;
}

int config_read_number(const char *s, char **end, double *v)
{
    errno = 0;
    *v = strtod(s, end);
    if (*end == s || memchr(s, 'x', (size_t)(*end - s)) || memchr(s, 'X', (size_t)(*end - s)))
        return CONFIG_NOT_A_NUMBER;
    return errno == ERANGE ? CONFIG_OUT_OF_RANGE : 0;
}

int config_parse_number(const char *s, double *out)
{
    char *end;
    double v;
    if (config_read_number(s, &end, &v) != 0 || !isfinite(v))
        return 0;
    while (isspace((unsigned char)*end))
        end++;
    if (*end != '\0')
        return 0;
    *out = v;
    return 1;
}

status config_int(config *c, const char *sec, const char *key, int required, long dflt, long min,
                  long max, long *out, diag *err)
{
    config_entry *e;
    status s = lookup(c, sec, key, required, &e, err);
    if (s != CDLAB_OK)
        return s;
    long v = dflt;
    if (e && !parse_long(e->value, &v))
        return eerr(c, e, sec, key, err, "expected an integer (got '%s')", e->value);
    if (v < min || v > max) {
        if (max == __LONG_MAX__)
            return eerr(c, e, sec, key, err, "must be >= %ld (got %ld)", min, v);
        return eerr(c, e, sec, key, err, "must be in [%ld, %ld] (got %ld)", min, max, v);
    }
    *out = v;
    config_record(c, sec, key, "%ld", v);
    return CDLAB_OK;
}

status config_u64(config *c, const char *sec, const char *key, int required, uint64_t dflt,
                  uint64_t *out, diag *err)
{
    config_entry *e;
    status s = lookup(c, sec, key, required, &e, err);
    if (s != CDLAB_OK)
        return s;
    uint64_t v = dflt;
    if (e) {
        char *end;
        errno = 0;
        const char *p = e->value;
        while (isspace((unsigned char)*p))
            p++;
        /* decimal only: base 0 read "010" as octal 8 and "0x10" as 16 */
        unsigned long long u = strtoull(p, &end, 10);
        while (isspace((unsigned char)*end))
            end++;
        if (*p == '-' || errno || end == p || *end != '\0')
            return eerr(c, e, sec, key, err, "expected a non-negative integer (got '%s')",
                        e->value);
        v = (uint64_t)u;
    }
    *out = v;
    config_record(c, sec, key, "%llu", (unsigned long long)v);
    return CDLAB_OK;
}

status config_double(config *c, const char *sec, const char *key, int required, double dflt,
                     double min, int min_open, double max, double *out, diag *err)
{
    config_entry *e;
    status s = lookup(c, sec, key, required, &e, err);
    if (s != CDLAB_OK)
        return s;
    double v = dflt;
    if (e && !config_parse_number(e->value, &v))
        return eerr(c, e, sec, key, err, "expected %s (got '%s')", CONFIG_NUMBER_RANGE, e->value);
    int lo_open = min_open & CONFIG_MIN_OPEN, hi_open = min_open & CONFIG_MAX_OPEN;
    if (lo_open ? !(v > min) : !(v >= min))
        return eerr(c, e, sec, key, err, "must be %s %g (got %g)", lo_open ? ">" : ">=", min, v);
    if (hi_open ? !(v < max) : !(v <= max))
        return eerr(c, e, sec, key, err, "must be %s %g (got %g)", hi_open ? "<" : "<=", max, v);
    *out = v;
    char b[32];
    config_fmt_double(b, sizeof b, v);
    config_record(c, sec, key, "%s", b);
    return CDLAB_OK;
}

status config_bool(config *c, const char *sec, const char *key, int required, int dflt, int *out,
                   diag *err)
{
    config_entry *e;
    status s = lookup(c, sec, key, required, &e, err);
    if (s != CDLAB_OK)
        return s;
    int v = dflt;
    if (e) {
        const char *t[] = {"true", "yes", "on", "1"}, *f[] = {"false", "no", "off", "0"};
        v = -1;
        for (int k = 0; k < 4; k++) {
            if (strcasecmp(e->value, t[k]) == 0)
                v = 1;
            if (strcasecmp(e->value, f[k]) == 0)
                v = 0;
        }
        if (v < 0)
            return eerr(c, e, sec, key, err, "expected true or false (got '%s')", e->value);
    }
    *out = v;
    config_record(c, sec, key, "%s", v ? "true" : "false");
    return CDLAB_OK;
}

status config_enum(config *c, const char *sec, const char *key, int required, int dflt,
                   const char *const *choices, int *out, diag *err)
{
    config_entry *e;
    status s = lookup(c, sec, key, required, &e, err);
    if (s != CDLAB_OK)
        return s;
    int v = dflt;
    if (e) {
        v = -1;
        for (int k = 0; choices[k]; k++)
            if (strcmp(e->value, choices[k]) == 0)
                v = k;
        if (v < 0) {
            char list[512] = "";
            for (int k = 0; choices[k]; k++) {
                strncat(list, k ? ", " : "", sizeof list - strlen(list) - 1);
                strncat(list, choices[k], sizeof list - strlen(list) - 1);
            }
            return eerr(c, e, sec, key, err, "expected one of %s (got '%s')", list, e->value);
        }
    }
    *out = v;
    config_record(c, sec, key, "%s", choices[v]);
    return CDLAB_OK;
}

/* Splits a value into numbers separated by spaces and/or commas: copies it into buf
 * (CONFIG_VALUE_MAX bytes) and cuts the copy in place, tok[k] pointing at the k-th item, for the
 * first max items; returns the count of all. Items of any length (a fixed-size copy of each
 * once cut a long number short: '-1.000...0e1' read as -1). */
static int split_numbers(const char *s, char *buf, char **tok, int max)
{
    snprintf(buf, CONFIG_VALUE_MAX, "%s", s);
    int n = 0;
    char *p = buf;
    while (*p) {
        while (*p && (isspace((unsigned char)*p) || *p == ','))
            p++;
        if (!*p)
            break;
        if (n < max)
            tok[n] = p;
        n++;
        while (*p && !isspace((unsigned char)*p) && *p != ',')
            p++;
        if (*p)
            *p++ = '\0';
    }
    return n;
}

status config_vec3(config *c, const char *sec, const char *key, int required, vec3 dflt, vec3 *out,
                   diag *err)
{
    config_entry *e;
    status s = lookup(c, sec, key, required, &e, err);
    if (s != CDLAB_OK)
        return s;
    vec3 v = dflt;
    if (e) {
        char buf[CONFIG_VALUE_MAX], *tok[3];
        double d[3];
        int n = split_numbers(e->value, buf, tok, 3);
        if (n != 3)
            return eerr(c, e, sec, key, err, "expected three numbers 'x y z' (got '%s')", e->value);
        for (int k = 0; k < 3; k++)
            if (!config_parse_number(tok[k], &d[k]))
                return eerr(c, e, sec, key, err,
                            "expected three numbers 'x y z' (bad item '%s': %s)", tok[k],
                            CONFIG_NUMBER_RANGE);
        v = v3(d[0], d[1], d[2]);
    }
    *out = v;
    char b[3][32];
    config_fmt_double(b[0], sizeof b[0], v.x);
    config_fmt_double(b[1], sizeof b[1], v.y);
    config_fmt_double(b[2], sizeof b[2], v.z);
    config_record(c, sec, key, "%s %s %s", b[0], b[1], b[2]);
    return CDLAB_OK;
}

status config_doubles(config *c, const char *sec, const char *key, int required, int n,
                      const double *dflt, double *out, diag *err)
{
    config_entry *e;
    status s = lookup(c, sec, key, required, &e, err);
    if (s != CDLAB_OK)
        return s;
    if (!e) {
        for (int k = 0; k < n; k++)
            out[k] = dflt[k];
    } else {
        char buf[CONFIG_VALUE_MAX], *tok[16];
        if (n > 16 || split_numbers(e->value, buf, tok, 16) != n)
            return eerr(c, e, sec, key, err, "expected %d numbers (got '%s')", n, e->value);
        for (int k = 0; k < n; k++)
            if (!config_parse_number(tok[k], &out[k]))
                return eerr(c, e, sec, key, err, "expected %d numbers (bad item '%s': %s)", n,
                            tok[k], CONFIG_NUMBER_RANGE);
    }
    char buf[CONFIG_VALUE_MAX > 600 ? 600 : CONFIG_VALUE_MAX] = "";
    for (int k = 0; k < n; k++) {
        char b[32];
        config_fmt_double(b, sizeof b, out[k]);
        strncat(buf, k ? " " : "", sizeof buf - strlen(buf) - 1);
        strncat(buf, b, sizeof buf - strlen(buf) - 1);
    }
    config_record(c, sec, key, "%s", buf);
    return CDLAB_OK;
}

status config_int_list(config *c, const char *sec, const char *key, long **out, int *count,
                       diag *err)
{
    config_entry *e;
    *out = NULL;
    *count = 0;
    status s = lookup(c, sec, key, 0, &e, err);
    if (s != CDLAB_OK || !e) {
        if (s == CDLAB_OK)
            config_record(c, sec, key, "%s", "");
        return s;
    }
    char *buf = malloc(CONFIG_VALUE_MAX);
    int n = buf ? split_numbers(e->value, buf, NULL, 0) : 0;
    long *v = malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
    char **tok = malloc((size_t)(n > 0 ? n : 1) * sizeof *tok);
    if (!buf || !v || !tok) {
        free(buf);
        free(v);
        free(tok);
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    }
    split_numbers(e->value, buf, tok, n);
    for (int k = 0; k < n; k++)
        if (!parse_long(tok[k], &v[k])) {
            status st =
                eerr(c, e, sec, key, err, "expected a list of integers (bad item '%s')", tok[k]);
            free(buf);
            free(v);
            free(tok);
            return st;
        }
    free(buf);
    free(tok);
    *out = v;
    *count = n;
    config_record(c, sec, key, "%s", e->value);
    return CDLAB_OK;
}

status config_string(config *c, const char *sec, const char *key, int required, const char *dflt,
                     char *out, size_t outsize, diag *err)
{
    config_entry *e;
    status s = lookup(c, sec, key, required, &e, err);
    if (s != CDLAB_OK)
        return s;
    const char *v = e ? e->value : dflt;
    if (strlen(v) >= outsize)
        return eerr(c, e, sec, key, err, "value too long (max %zu characters)", outsize - 1);
    snprintf(out, outsize, "%s", v);
    config_record(c, sec, key, "%s", v);
    return CDLAB_OK;
}

static int section_known(const char *s, const char *const *known)
{
    for (int k = 0; known[k]; k++) {
        size_t l = strlen(known[k]);
        if (l > 0 && known[k][l - 1] == '.') {
            if (strncmp(s, known[k], l) == 0 && s[l] != '\0')
                return 1;
        } else if (strcmp(s, known[k]) == 0) {
            return 1;
        }
    }
    return 0;
}

status config_check_unused(const config *c, const char *const *known_sections, diag *err)
{
    for (int k = 0; k < c->n; k++) {
        const config_entry *e = &c->e[k];
        if (e->used)
            continue;
        char hint[CONFIG_NAME_MAX + 160] = "";
        if (!section_known(e->section, known_sections)) {
            const char *names[64];
            int m = 0;
            for (int s = 0; known_sections[s] && m < 64; s++)
                names[m++] = known_sections[s];
            const char *best = config_closest(e->section, names, m);
            if (best)
                snprintf(hint, sizeof hint, " (did you mean [%s%s]?)", best,
                         best[strlen(best) - 1] == '.' ? "NAME" : "");
            if (e->line)
                return diag_set(err, CDLAB_ERR_CONFIG, "%s:%d: unknown section [%s]%s", c->shown,
                                e->line, e->section, hint);
            return diag_set(err, CDLAB_ERR_CONFIG, "--set %s.%s: unknown section [%s]%s",
                            e->section, e->key, e->section, hint);
        }
        return eerr(c, e, e->section, e->key, err, "unknown key '%s' in section [%s]%s", e->key,
                    e->section, config_key_hint(c, e->section, e->key, hint, sizeof hint));
    }
    return CDLAB_OK;
}

status config_skip_section(config *c, const char *section, const char *const *keys, int *count,
                           diag *err)
{
    *count = 0;
    /* without a list: the section's documented keys (docs/config.md) */
    const char *documented[CONFIG_SECTION_KEYS_MAX + 1];
    if (!keys) {
        int m = 0;
        for (int k = 0; k < c->nschema && m < CONFIG_SECTION_KEYS_MAX; k++)
            if (strcmp(c->schema[k].section, section) == 0)
                documented[m++] = c->schema[k].key;
        documented[m] = NULL;
        keys = documented;
    }
    for (int k = 0; k < c->n; k++) {
        config_entry *e = &c->e[k];
        if (strcmp(e->section, section) != 0)
            continue;
        int known = 0;
        for (int m = 0; keys[m] && !known; m++)
            known = strcmp(keys[m], e->key) == 0;
        if (!known) {
            int m = 0;
            while (keys[m])
                m++;
            const char *best = config_closest(e->key, keys, m);
            return eerr(c, e, e->section, e->key, err, "unknown key '%s' in section [%s]%s%s%s",
                        e->key, e->section, best ? " (did you mean '" : "", best ? best : "",
                        best ? "'?)" : "");
        }
        e->used = 1;
        (*count)++;
    }
    return CDLAB_OK;
}

/* XDMF sidecar writer (docs/output.md, "XDMF sidecar"). */
#include "xdmf.h"

#include "h5io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A text built in memory before it is written whole (lost: out of memory on the way). */
typedef struct text {
    char *s;
    size_t len, cap;
    int lost;
} text;

struct xdmf {
    int fd;
    char path[PATH_MAX + 32];
    char h5_name[PATH_MAX]; /* the HDF5 file as the sidecar names it: its base name, XML-escaped */
    long footer;            /* offset of the closing tags */
    text grid;              /* the snapshot being added */
    text contacts;          /* the contacts collection's grids, written at close */
};

/* appends to a text; out of memory: the text is marked and its writer reports it */
static void tadd(text *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tadd(text *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0 || b->lost)
        return;
    if (b->len + (size_t)need + 1 > b->cap) {
        size_t cap = 2 * (b->len + (size_t)need + 1) + 4096;
        char *m = realloc(b->s, cap);
        if (!m) {
            b->lost = 1;
            return;
        }
        b->s = m;
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, (size_t)need + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)need;
}

static const char footer[] = "  </Grid>\n </Domain>\n</Xdmf>\n";
#define FOOTER_LEN (sizeof footer - 1)

void xdmf_sidecar_path(const char *h5_path, char *buf, size_t n)
{
    h5_sibling_path(h5_path, ".xmf", buf, n);
}

static const char *const entity[][2] = {
    {"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}, {"'", "&apos;"}};
#define N_ENTITY (sizeof entity / sizeof entity[0])

/* The length of the valid UTF-8 sequence at p (1 to 4 bytes), 0 where p starts none. */
static size_t utf8_length(const unsigned char *p)
{
    if (p[0] < 0x80)
        return 1;
    size_t n = p[0] >= 0xC2 && p[0] <= 0xDF   ? 2
               : p[0] >= 0xE0 && p[0] <= 0xEF ? 3
               : p[0] >= 0xF0 && p[0] <= 0xF4 ? 4
                                              : 0;
    for (size_t k = 1; k < n; k++)
        if ((p[k] & 0xC0) != 0x80)
            return 0;
    /* no overlong forms, surrogates or code points past U+10FFFF */
    if ((n == 3 && p[0] == 0xE0 && p[1] < 0xA0) || (n == 3 && p[0] == 0xED && p[1] >= 0xA0) ||
        (n == 4 && p[0] == 0xF0 && p[1] < 0x90) || (n == 4 && p[0] == 0xF4 && p[1] >= 0x90))
        return 0;
    return n;
}

/* The base name of h5_path as XML text into buf (n >= 16), its length: a name with & or < made
 * the sidecar no XML (ParaView could not read it), and so did a byte that is no UTF-8 (a
 * Latin-1 name): such a byte is written as a character reference, &#xNN;, which
 * xdmf_sidecar_names reads back as the byte (an XML reader takes it for the character U+00NN,
 * which names another file: docs/output.md). A control character, which XML cannot hold even
 * so, is written as U+FFFD. */
static size_t escaped_base(const char *h5_path, char *buf, size_t n)
{
    const char *slash = strrchr(h5_path, '/'), *base = slash ? slash + 1 : h5_path;
    size_t len = 0;
    for (const char *p = base; *p && len + 10 < n;) {
        const unsigned char c = (unsigned char)*p;
        size_t k = 0;
        while (k < N_ENTITY && *p != entity[k][0][0])
            k++;
        size_t u = utf8_length((const unsigned char *)p);
        if (k < N_ENTITY) {
            len += (size_t)snprintf(buf + len, n - len, "%s", entity[k][1]);
            p++;
        } else if (c < 0x20 || c == 0x7F) {
            len += (size_t)snprintf(buf + len, n - len, "&#xFFFD;");
            p++;
        } else if (u == 0) {
            len += (size_t)snprintf(buf + len, n - len, "&#x%02X;", c);
            p++;
        } else {
            memcpy(buf + len, p, u);
            len += u;
            p += u;
        }
    }
    buf[len] = '\0';
    return len;
}

int xdmf_sidecar_names(const char *xmf_path, char *buf, size_t n)
{
    /* the first data item ("...Format="HDF">NAME:/snapshots/..."), past the head and a
     * name of PATH_MAX escaped */
    static const char mark[] = "Format=\"HDF\">";
    size_t cap = 6 * PATH_MAX + 4096;
    char *head = malloc(cap + 1);
    int fd = head ? open(xmf_path, O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0) {
        free(head);
        return 0;
    }
    size_t got = 0;
    for (ssize_t r; got < cap && (r = read(fd, head + got, cap - got)) != 0;) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    head[got] = '\0';
    const char *at = strstr(head, "<Xdmf") ? strstr(head, mark) : NULL;
    const char *end = at ? strstr(at += sizeof mark - 1, ":/") : NULL;
    size_t len = 0;
    if (end) {
        for (const char *p = at; p < end && len + 1 < n;) {
            size_t k = 0;
            unsigned byte;
            int used = 0;
            while (k < N_ENTITY && strncmp(p, entity[k][1], strlen(entity[k][1])) != 0)
                k++;
            if (k == N_ENTITY && sscanf(p, "&#x%2X;%n", &byte, &used) == 1 && used == 6) {
                buf[len++] = (char)byte; /* a byte that is no UTF-8 (escaped_base) */
                p += used;
                continue;
            }
            buf[len++] = k < N_ENTITY ? entity[k][0][0] : *p;
            p += k < N_ENTITY ? strlen(entity[k][1]) : 1;
        }
        buf[len] = '\0';
    }
    free(head);
    return end && len > 0 && !memchr(buf, '/', len) && !memchr(buf, '<', len);
}

/* n bytes at offset at; 0 or the OS's error */
static int write_at(int fd, const char *data, size_t n, long at)
{
    while (n > 0) {
        ssize_t w = pwrite(fd, data, n, (off_t)at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return w < 0 ? errno : ENOSPC;
        data += w;
        n -= (size_t)w;
        at += (long)w;
    }
    return 0;
}

/* body, then the closing tags, where the closing tags stand. A write that fails leaves the file
 * as it was (its closing tags written again where they stood, whose bytes the file has, and
 * nothing after them): a valid sidecar of the snapshots before. */
static status append(xdmf *x, const text *body, diag *err)
{
    if (body->lost)
        return diag_set(err, CDLAB_ERR_NOMEM, "%s: out of memory for the sidecar", x->path);
    long at = x->footer;
    int e = write_at(x->fd, body->s, body->len, at);
    if (!e)
        e = write_at(x->fd, footer, FOOTER_LEN, at + (long)body->len);
    if (!e) {
        x->footer = at + (long)body->len;
        return CDLAB_OK;
    }
    if (ftruncate(x->fd, (off_t)(at + (long)FOOTER_LEN)) == 0)
        write_at(x->fd, footer, FOOTER_LEN, at);
    /* at the header (footer still 0) there is nothing before to keep */
    return diag_set(err, CDLAB_ERR_IO, "%s: cannot write: %s%s", x->path, strerror(e),
                    at > 0 ? " (it keeps the snapshots before)" : "");
}

status xdmf_create(xdmf **out, const char *path, const char *h5_path, diag *err)
{
    xdmf *x = calloc(1, sizeof *x);
    if (!x)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    snprintf(x->path, sizeof x->path, "%s", path);
    size_t len = escaped_base(h5_path, x->h5_name, sizeof x->h5_name);
    x->fd = open(x->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (x->fd < 0) {
        status s = diag_set(err, CDLAB_ERR_IO, "%s: cannot create the XDMF sidecar: %s", x->path,
                            strerror(errno));
        free(x);
        return s;
    }
    /* an XML comment holds no "--" and does not end in "-" */
    int comment_ok = !strstr(x->h5_name, "--") && x->h5_name[0] && x->h5_name[len - 1] != '-';
    text head = {0};
    tadd(&head,
         "<?xml version=\"1.0\" ?>\n"
         "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
         "<!-- cdlab snapshots%s%s (docs/output.md); open this file in ParaView -->\n"
         "<Xdmf Version=\"2.0\">\n"
         " <Domain>\n"
         "  <Grid Name=\"particles\" GridType=\"Collection\" "
         "CollectionType=\"Temporal\">\n",
         comment_ok ? " of " : "", comment_ok ? x->h5_name : "");
    status s = append(x, &head, err);
    free(head.s);
    if (s != CDLAB_OK) {
        diag tmp;
        xdmf_close(x, &tmp);
        return s;
    }
    *out = x;
    return CDLAB_OK;
}

/* the datasets' number types: float64, int32, uint8 */
enum { F64, I32, U8 };

/* <DataItem> of dataset `name` of group g, of number type kind */
static void item(xdmf *x, text *b, const char *g, const char *name, const char *dims, int kind,
                 const char *indent)
{
    tadd(b,
         "%s<DataItem Dimensions=\"%s\" NumberType=\"%s\" Precision=\"%d\" Format=\"HDF\">"
         "%s:%s/%s</DataItem>\n",
         indent, dims,
         kind == I32  ? "Int"
         : kind == U8 ? "UChar"
                      : "Float",
         kind == I32  ? 4
         : kind == U8 ? 1
                      : 8,
         x->h5_name, g, name);
}

static void attribute(xdmf *x, text *b, const char *g, const char *name, const char *type,
                      const char *center, const char *dims, int kind)
{
    tadd(b, "     <Attribute Name=\"%s\" AttributeType=\"%s\" Center=\"%s\">\n",
         strrchr(name, '/') ? strrchr(name, '/') + 1 : name, type, center);
    item(x, b, g, name, dims, kind, "      ");
    tadd(b, "     </Attribute>\n");
}

status xdmf_add_snapshot(xdmf *x, const char *g, double t, long n, long nc, const xdmf_field *extra,
                         int input_index, int frozen, diag *err)
{
    char d1[32], d3[48], c1[32], c2[48], c3[48], e3[48];
    snprintf(d1, sizeof d1, "%ld", n);
    snprintf(d3, sizeof d3, "%ld 3", n);
    snprintf(c1, sizeof c1, "%ld", nc);
    snprintf(c2, sizeof c2, "%ld 2", nc);
    snprintf(c3, sizeof c3, "%ld 3", nc);
    snprintf(e3, sizeof e3, "%ld 3", 2 * nc);
    const char *name = strrchr(g, '/') ? strrchr(g, '/') + 1 : g;
    text *b = &x->grid;
    b->len = 0;
    tadd(b,
         "   <Grid Name=\"particles %s\" GridType=\"Uniform\">\n"
         "    <Time Value=\"%.17g\"/>\n"
         "    <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"%ld\" "
         "NodesPerElement=\"1\"/>\n"
         "    <Geometry GeometryType=\"XYZ\">\n",
         name, t, n);
    item(x, b, g, "position", d3, F64, "     ");
    tadd(b, "    </Geometry>\n");
    attribute(x, b, g, "radius", "Scalar", "Node", d1, F64);
    attribute(x, b, g, "velocity", "Vector", "Node", d3, F64);
    attribute(x, b, g, "angular_velocity", "Vector", "Node", d3, F64);
    attribute(x, b, g, "id", "Scalar", "Node", d1, I32);
    if (input_index) /* one array for every snapshot: the input's index of each id */
        attribute(x, b, "", "input_index", "Scalar", "Node", d1, I32);
    if (frozen)
        attribute(x, b, g, "frozen", "Scalar", "Node", d1, U8);
    for (const xdmf_field *e = extra; e && e->name[0]; e++) {
        char de[64];
        snprintf(de, sizeof de, "%ld%s%s", n, e->dims[0] ? " " : "", e->dims);
        attribute(x, b, g, e->name, e->type, "Node", de, F64);
    }
    tadd(b, "   </Grid>\n");
    status s = append(x, b, err);
    if (s != CDLAB_OK || nc == 0) /* ParaView's reader does not take an empty grid */
        return s;
    text *c = &x->contacts;
    tadd(c,
         "   <Grid Name=\"contacts %s\" GridType=\"Uniform\">\n"
         "    <Time Value=\"%.17g\"/>\n"
         "    <Topology TopologyType=\"Polyline\" NumberOfElements=\"%ld\" "
         "NodesPerElement=\"2\">\n",
         name, t, nc);
    item(x, c, g, "contacts/line", c2, I32, "     ");
    tadd(c, "    </Topology>\n    <Geometry GeometryType=\"XYZ\">\n");
    item(x, c, g, "contacts/endpoints", e3, F64, "     ");
    tadd(c, "    </Geometry>\n");
    attribute(x, c, g, "contacts/force_magnitude", "Scalar", "Cell", c1, F64);
    attribute(x, c, g, "contacts/force", "Vector", "Cell", c3, F64);
    attribute(x, c, g, "contacts/gap", "Scalar", "Cell", c1, F64);
    tadd(c, "   </Grid>\n");
    return CDLAB_OK;
}

status xdmf_close(xdmf *x, diag *err)
{
    if (!x)
        return CDLAB_OK;
    status s = CDLAB_OK;
    /* the contacts collection after the particles one (out of memory for it: the sidecar keeps
     * the particles, the HDF5 file has the contacts) */
    if (x->fd >= 0 && x->contacts.len > 0 && !x->contacts.lost) {
        text b = {0};
        tadd(&b,
             "  </Grid>\n  <Grid Name=\"contacts\" GridType=\"Collection\" "
             "CollectionType=\"Temporal\">\n%s",
             x->contacts.s);
        s = append(x, &b, err);
        free(b.s);
    }
    if (x->fd >= 0) /* durable before it is renamed into place, as the HDF5 file */
        fsync(x->fd);
    if (x->fd >= 0 && close(x->fd) != 0 && s == CDLAB_OK)
        s = diag_set(err, CDLAB_ERR_IO, "%s: cannot write: %s", x->path, strerror(errno));
    free(x->grid.s);
    free(x->contacts.s);
    free(x);
    return s;
}

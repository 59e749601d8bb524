/* XDMF sidecar writer (docs/output.md, "XDMF sidecar"). */
#include "xdmf.h"

#include "h5io.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct xdmf {
    FILE *f;
    char path[600];
    char h5_name[512]; /* the HDF5 file as the sidecar names it: its base name (same folder) */
    long footer;       /* offset of the closing tags */
    char *contacts;    /* the contacts collection's grids, written at close */
    size_t clen, ccap;
};

/* appends to the contacts buffer */
static void cadd(xdmf *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cadd(xdmf *x, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (need < 0 || x->ccap == (size_t)-1)
        return;
    if (x->clen + (size_t)need + 1 > x->ccap) {
        size_t cap = 2 * (x->clen + (size_t)need + 1) + 4096;
        char *b = realloc(x->contacts, cap);
        if (!b) { /* the sidecar will lack the contacts; the HDF5 file has them */
            free(x->contacts);
            x->contacts = NULL;
            x->ccap = (size_t)-1;
            return;
        }
        x->contacts = b;
        x->ccap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(x->contacts + x->clen, (size_t)need + 1, fmt, ap);
    va_end(ap);
    x->clen += (size_t)need;
}

static const char footer[] = "  </Grid>\n </Domain>\n</Xdmf>\n";

void xdmf_sidecar_path(const char *h5_path, char *buf, size_t n)
{
    h5_sibling_path(h5_path, ".xmf", buf, n);
}

static status write_footer(xdmf *x, diag *err)
{
    if (fseek(x->f, x->footer, SEEK_SET) != 0 || fputs(footer, x->f) == EOF || fflush(x->f) != 0)
        return diag_set(err, CDLAB_ERR_IO, "%s: cannot write: %s", x->path, strerror(errno));
    return CDLAB_OK;
}

status xdmf_create(xdmf **out, const char *path, const char *h5_path, diag *err)
{
    xdmf *x = calloc(1, sizeof *x);
    if (!x)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    snprintf(x->path, sizeof x->path, "%s", path);
    const char *slash = strrchr(h5_path, '/');
    snprintf(x->h5_name, sizeof x->h5_name, "%s", slash ? slash + 1 : h5_path);
    x->f = fopen(x->path, "w");
    if (!x->f) {
        status s = diag_set(err, CDLAB_ERR_IO, "%s: cannot create the XDMF sidecar: %s", x->path,
                            strerror(errno));
        free(x);
        return s;
    }
    fprintf(x->f,
            "<?xml version=\"1.0\" ?>\n"
            "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
            "<!-- cdlab snapshots of %s (docs/output.md); open this file in ParaView -->\n"
            "<Xdmf Version=\"2.0\">\n"
            " <Domain>\n"
            "  <Grid Name=\"particles\" GridType=\"Collection\" "
            "CollectionType=\"Temporal\">\n",
            x->h5_name);
    x->footer = ftell(x->f);
    status s = write_footer(x, err);
    if (s != CDLAB_OK) {
        diag tmp;
        xdmf_close(x, &tmp);
        return s;
    }
    *out = x;
    return CDLAB_OK;
}

/* <DataItem> of dataset `name` of group g, to the file or (to_buf) the contacts buffer */
#define OUT(x, to_buf, ...)                                                                        \
    do {                                                                                           \
        if (to_buf)                                                                                \
            cadd(x, __VA_ARGS__);                                                                  \
        else                                                                                       \
            fprintf((x)->f, __VA_ARGS__);                                                          \
    } while (0)

static void item(xdmf *x, int to_buf, const char *g, const char *name, const char *dims, int is_int,
                 const char *indent)
{
    OUT(x, to_buf,
        "%s<DataItem Dimensions=\"%s\" NumberType=\"%s\" Precision=\"%d\" Format=\"HDF\">"
        "%s:%s/%s</DataItem>\n",
        indent, dims, is_int ? "Int" : "Float", is_int ? 4 : 8, x->h5_name, g, name);
}

static void attribute(xdmf *x, int to_buf, const char *g, const char *name, const char *type,
                      const char *center, const char *dims, int is_int)
{
    OUT(x, to_buf, "     <Attribute Name=\"%s\" AttributeType=\"%s\" Center=\"%s\">\n",
        strrchr(name, '/') ? strrchr(name, '/') + 1 : name, type, center);
    item(x, to_buf, g, name, dims, is_int, "      ");
    OUT(x, to_buf, "     </Attribute>\n");
}

status xdmf_add_snapshot(xdmf *x, const char *g, double t, long n, long nc, const xdmf_field *extra,
                         diag *err)
{
    char d1[32], d3[48], c1[32], c2[48], c3[48], e3[48];
    snprintf(d1, sizeof d1, "%ld", n);
    snprintf(d3, sizeof d3, "%ld 3", n);
    snprintf(c1, sizeof c1, "%ld", nc);
    snprintf(c2, sizeof c2, "%ld 2", nc);
    snprintf(c3, sizeof c3, "%ld 3", nc);
    snprintf(e3, sizeof e3, "%ld 3", 2 * nc);
    const char *name = strrchr(g, '/') ? strrchr(g, '/') + 1 : g;
    if (fseek(x->f, x->footer, SEEK_SET) != 0)
        return diag_set(err, CDLAB_ERR_IO, "%s: cannot write: %s", x->path, strerror(errno));
    fprintf(x->f,
            "   <Grid Name=\"particles %s\" GridType=\"Uniform\">\n"
            "    <Time Value=\"%.17g\"/>\n"
            "    <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"%ld\" "
            "NodesPerElement=\"1\"/>\n"
            "    <Geometry GeometryType=\"XYZ\">\n",
            name, t, n);
    item(x, 0, g, "position", d3, 0, "     ");
    fprintf(x->f, "    </Geometry>\n");
    attribute(x, 0, g, "radius", "Scalar", "Node", d1, 0);
    attribute(x, 0, g, "velocity", "Vector", "Node", d3, 0);
    attribute(x, 0, g, "angular_velocity", "Vector", "Node", d3, 0);
    attribute(x, 0, g, "id", "Scalar", "Node", d1, 1);
    for (const xdmf_field *e = extra; e && e->name[0]; e++) {
        char de[64];
        snprintf(de, sizeof de, "%ld%s%s", n, e->dims[0] ? " " : "", e->dims);
        attribute(x, 0, g, e->name, e->type, "Node", de, 0);
    }
    fprintf(x->f, "   </Grid>\n");
    if (ferror(x->f))
        return diag_set(err, CDLAB_ERR_IO, "%s: cannot write: %s", x->path, strerror(errno));
    x->footer = ftell(x->f);
    if (nc > 0) { /* ParaView's reader does not take an empty grid */
        cadd(x,
             "   <Grid Name=\"contacts %s\" GridType=\"Uniform\">\n"
             "    <Time Value=\"%.17g\"/>\n"
             "    <Topology TopologyType=\"Polyline\" NumberOfElements=\"%ld\" "
             "NodesPerElement=\"2\">\n",
             name, t, nc);
        item(x, 1, g, "contacts/line", c2, 1, "     ");
        cadd(x, "    </Topology>\n    <Geometry GeometryType=\"XYZ\">\n");
        item(x, 1, g, "contacts/endpoints", e3, 0, "     ");
        cadd(x, "    </Geometry>\n");
        attribute(x, 1, g, "contacts/force_magnitude", "Scalar", "Cell", c1, 0);
        attribute(x, 1, g, "contacts/force", "Vector", "Cell", c3, 0);
        attribute(x, 1, g, "contacts/gap", "Scalar", "Cell", c1, 0);
        cadd(x, "   </Grid>\n");
    }
    return write_footer(x, err);
}

status xdmf_close(xdmf *x, diag *err)
{
    if (!x)
        return CDLAB_OK;
    status s = CDLAB_OK;
    /* the contacts collection after the particles one */
    if (x->f && x->contacts && x->clen > 0) {
        if (fseek(x->f, x->footer, SEEK_SET) != 0 ||
            fprintf(x->f, "  </Grid>\n  <Grid Name=\"contacts\" GridType=\"Collection\" "
                          "CollectionType=\"Temporal\">\n") < 0 ||
            fwrite(x->contacts, 1, x->clen, x->f) != x->clen || fputs(footer, x->f) == EOF)
            s = diag_set(err, CDLAB_ERR_IO, "%s: cannot write: %s", x->path, strerror(errno));
    }
    if (x->f && fclose(x->f) != 0 && s == CDLAB_OK)
        s = diag_set(err, CDLAB_ERR_IO, "%s: cannot write: %s", x->path, strerror(errno));
    free(x->contacts);
    free(x);
    return s;
}

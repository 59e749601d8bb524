/* The bodies of the two fuzz targets, shared by the libFuzzer harnesses (fuzz_*.c, `make fuzz`)
 * and the Check suite that replays the saved inputs of tests/fuzz/regress/ (check_fuzz.c). Any
 * outcome but a crash, a sanitizer report, a leak or a hang is fine: bad input must end in an
 * error with a message. */
#ifndef CDLAB_FUZZ_TARGETS_H
#define CDLAB_FUZZ_TARGETS_H

#include "run/run.h"
#include "config.h"
#include "generate.h"
#include "h5io.h"
#include "particles.h"

#include <hdf5.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A config file's text through everything `cdlab check` does (inih parsing, typed and
 * range-checked getters, the scene: particles, walls, periodic box, solver and DEM sections,
 * unknown-key check). */
/* A valid config may describe a run as large as the machine's memory, and validating it builds
 * the scene: a mutated count of 21,474,649 disks took 2.7 GB, over the fuzzer's 2 GB limit,
 * without any fault. The fuzz targets refuse runs estimated above FUZZ_MEMORY_LIMIT instead
 * (ASan roughly doubles the real use). Its 10^8 bytes (125,000 DEM particles) also bound the
 * time of a valid scene under the sanitizers: with 0.5 GB, the chain of 150,000 piled up on
 * itself among the seeds (tests/fuzz/regress/config) held the config fuzzer to 805 runs/s (2,078
 * without it; 1,452 with it now), and with max_initial_overlap raised the start's check lists 32
 * pairs per particle: 3.4 s at 150,000, near the 10 s limit at the 600,000 that 0.5 GB admitted. */
#define FUZZ_MEMORY_LIMIT 1e8

static inline status fuzz_config_text(const char *text, const char *name, diag *err)
{
    config c;
    status s = config_load_string(&c, text, name, err);
    run_hooks hk = {.memory_limit = FUZZ_MEMORY_LIMIT};
    if (s == CDLAB_OK)
        s = run_validate(&c, &hk, err);
    config_free(&c);
    return s;
}

/* A particle file (`particles.source = file`) through generate_load_file: the first byte picks
 * xyzr (even) or chute (odd), the rest is written to path and read twice, as the scene does:
 * once to count, once into the arrays (the two passes must agree: abort otherwise). */
static inline status fuzz_particle_file(const uint8_t *data, size_t size, const char *path,
                                        diag *err)
{
    if (size < 1)
        return CDLAB_OK;
    particle_format fmt = (data[0] & 1) ? PARTICLE_FORMAT_CHUTE : PARTICLE_FORMAT_XYZR;
    FILE *f = fopen(path, "wb");
    if (!f || (size > 1 && fwrite(data + 1, 1, size - 1, f) != size - 1))
        abort();
    fclose(f);
    int count = 0;
    status s = generate_load_file(NULL, path, fmt, &count, err);
    if (s == CDLAB_OK && count > 0) {
        particles P;
        s = particles_init(&P, count, 3, err);
        int n = 0;
        if (s == CDLAB_OK && (s = generate_load_file(&P, path, fmt, &n, err)) == CDLAB_OK &&
            n != count)
            abort();
        particles_free(&P);
    }
    return s;
}

/* ---- restoring a checkpoint (`--restart`), describing (`cdlab info`) and reading particles
 * from (`particles.format = cdlab`) a mutated output ----
 * Two templates, written once per process: a CD and a DEM run of 20 spheres, 5 steps, each
 * ending in a snapshot and a checkpoint. An input is a template choice (byte 0, even: CD, odd:
 * DEM) and up to eight mutations of 18 bytes: [item][kind][8-byte index][8-byte value]. item
 * picks a dataset or attribute of the checkpoint (relative names) or of the file (absolute
 * ones); kind (mod 8):
 *   0 sets one element of a dataset, or the attribute, to the value;
 *   1 the same, a dataset's checksum attribute made to match (a hostile file that passes the
 *     check of what was written: the values themselves must then be refused);
 *   2 deletes the item;
 *   3 replaces a dataset by one of another length (its checksum made to match when the index
 *     is odd);
 *   4 replaces an attribute by an array of 2 to 9001 values of its class;
 *   5 replaces an attribute by one of the other class (a string for a number, a number for a
 *     string);
 *   6 replaces a dataset by one of strings, or of rank 2;
 *   7 replaces an attribute by a variable-length string.
 * The mutated copy is then restored by run_simulation, which runs two more steps from it,
 * described by h5in_describe and read as a particle source: a corrupt or hostile file must be
 * refused with a message, never crash or hang. */
#define FUZZ_CK_STEPS 5
static const char *const fuzz_ck_ini[2] = {
    "[system]\ndimension = 3\ndt = 0.01\nsteps = %d\ngravity = 0 0 -1\nseed = 3\n"
    "[solver]\niterations = 20\n"
    "[particles]\nsource = random\ncount = 20\nradius_min = 0.4\nradius_max = 0.5\n"
    "box_min = 0 0 0\nbox_max = 3 3 6\n[contact]\nfriction = 0.3\ndetect_gap = 0.2\n"
    "[plane.floor]\npoint = 0 0 0\nnormal = 0 0 1\n[output]\nevery = 0\n",
    "[system]\nmode = dem\ndimension = 3\ndt = 1e-3\nsteps = %d\ngravity = 0 0 -10\nseed = 3\n"
    "[dem]\nk_n = 1e4\nk_t = 5e3\ndamping_normal = 0.3\n"
    "[particles]\nsource = random\ncount = 20\nradius_min = 0.4\nradius_max = 0.5\n"
    "box_min = 0 0 0\nbox_max = 3 3 6\n[contact]\nfriction = 0.3\n"
    "[plane.floor]\npoint = 0 0 0\nnormal = 0 0 1\n"
    "[piston.top]\npoint = 0 0 6\nnormal = 0 0 -1\nmass = 2\nforce = 5\n[output]\nevery = 0\n"};
static const char *const fuzz_ck_items[] = {"@format",
                                            "@step",
                                            "@particles",
                                            "@walls",
                                            "@contacts",
                                            "@contact_record",
                                            "@contact_bytes",
                                            "@dem_rebuilds",
                                            "@mode",
                                            "@dt",
                                            "@dimension",
                                            "@friction",
                                            "@k_n",
                                            "@k_t",
                                            "@damping_normal",
                                            "@damping_tangential",
                                            "@dem_law",
                                            "@bodies_checksum",
                                            "@walls_checksum",
                                            "@box_checksum",
                                            "@complete",
                                            "x",
                                            "v",
                                            "w",
                                            "q",
                                            "image",
                                            "walls",
                                            "rng",
                                            "contacts",
                                            "dem_F",
                                            "dem_T",
                                            "dem_path",
                                            "dem_piston_F",
                                            "dem_energy",
                                            "dem_wall_path",
                                            "x@checksum",
                                            "rng@checksum",
                                            "/summary@status",
                                            "/summary@steps_done",
                                            "/summary@wall_seconds",
                                            "/series/t",
                                            "/snapshots/00000005/position",
                                            "/snapshots/00000005/radius",
                                            "/snapshots/00000005/id",
                                            "/snapshots/00000005/velocity",
                                            "/snapshots/00000005@step",
                                            "/parameters@system.dt",
                                            "/@program",
                                            "/build@git_commit"};
#define FUZZ_CK_NITEMS (sizeof fuzz_ck_items / sizeof fuzz_ck_items[0])

static inline status fuzz_ck_run(int dem, long steps, const char *out, const char *restart,
                                 diag *err)
{
    char ini[2048];
    snprintf(ini, sizeof ini, fuzz_ck_ini[dem], (int)steps);
    config c;
    status s = config_load_string(&c, ini, "fuzz_checkpoint.ini", err);
    run_summary sum;
    run_hooks hk = {.restart = restart};
    if (s == CDLAB_OK)
        s = run_simulation(&c, out, &hk, &sum, err);
    config_free(&c);
    return s;
}

/* Removes an output, its sidecar and their temporary names. */
static inline void fuzz_ck_clear(const char *h5)
{
    char p[600];
    size_t n = strlen(h5);
    unlink(h5);
    snprintf(p, sizeof p, "%s.partial", h5);
    unlink(p);
    snprintf(p, sizeof p, "%.*s.xmf", (int)(n > 3 ? n - 3 : n), h5);
    unlink(p);
    snprintf(p, sizeof p, "%.*s.xmf.partial", (int)(n > 3 ? n - 3 : n), h5);
    unlink(p);
}

static inline void fuzz_ck_copy(const char *from, const char *to)
{
    FILE *a = fopen(from, "rb"), *b = fopen(to, "wb");
    if (!a || !b)
        abort();
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, a)) > 0)
        if (fwrite(buf, 1, n, b) != n)
            abort();
    fclose(a);
    fclose(b);
}

/* The checksum attribute of dataset path made to match its values as stored (h5ledger.h). */
static inline void fuzz_ck_fix_checksum(hid_t f, const char *path)
{
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    if (d < 0)
        return;
    hid_t t = H5Dget_type(d), sp = H5Dget_space(d);
    hsize_t dims[3] = {0, 1, 1};
    int rank = H5Sget_simple_extent_ndims(sp);
    size_t row = H5Tget_size(t);
    if (rank >= 1 && rank <= 3 && H5Sget_simple_extent_dims(sp, dims, NULL) == rank) {
        for (int k = 1; k < rank; k++)
            row *= (size_t)dims[k];
        char *buf = malloc(row * (size_t)(dims[0] > 0 ? dims[0] : 1));
        if (!buf)
            abort();
        if (dims[0] == 0 || H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0) {
            int64_t h = (int64_t)h5ledger_hash_rows(buf, row, 0, (long long)dims[0]);
            if (H5Aexists(d, H5IO_CHECKSUM_ATTR) > 0)
                H5Adelete(d, H5IO_CHECKSUM_ATTR);
            hid_t one = H5Screate(H5S_SCALAR);
            hid_t a =
                H5Acreate2(d, H5IO_CHECKSUM_ATTR, H5T_NATIVE_INT64, one, H5P_DEFAULT, H5P_DEFAULT);
            H5Awrite(a, H5T_NATIVE_INT64, &h);
            H5Aclose(a);
            H5Sclose(one);
        }
        free(buf);
    }
    H5Sclose(sp);
    H5Tclose(t);
    H5Dclose(d);
}

/* An attribute name of obj replaced (see above: kinds 0, 1, 4, 5, 7). */
static inline void fuzz_ck_attr(hid_t f, const char *obj, const char *name, int kind, uint64_t idx,
                                const uint8_t *value)
{
    if (H5Aexists_by_name(f, obj, name, H5P_DEFAULT) <= 0)
        return;
    hid_t a = H5Aopen_by_name(f, obj, name, H5P_DEFAULT, H5P_DEFAULT);
    hid_t t = H5Aget_type(a);
    H5T_class_t cls = H5Tget_class(t);
    H5Tclose(t);
    H5Aclose(a);
    H5Adelete_by_name(f, obj, name, H5P_DEFAULT);
    if (kind == 2)
        return;
    if (kind == 5) /* the other class */
        cls = cls == H5T_STRING ? H5T_INTEGER : H5T_STRING;
    hsize_t n = kind == 4 ? 2 + idx % 9000 : 1;
    hid_t sp = kind == 4 ? H5Screate_simple(1, &n, NULL) : H5Screate(H5S_SCALAR);
    if (kind == 7) {
        char text[9];
        memcpy(text, value, 8);
        text[8] = '\0';
        const char *p = text;
        hid_t st = H5Tcopy(H5T_C_S1);
        H5Tset_size(st, H5T_VARIABLE);
        hid_t na = H5Acreate_by_name(f, obj, name, st, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Awrite(na, st, &p);
        H5Aclose(na);
        H5Tclose(st);
    } else if (cls == H5T_STRING) {
        char *text = calloc((size_t)n, 9);
        if (!text)
            abort();
        for (hsize_t k = 0; k < n; k++)
            memcpy(text + 9 * k, value, 8);
        hid_t st = H5Tcopy(H5T_C_S1);
        H5Tset_size(st, 9);
        hid_t na = H5Acreate_by_name(f, obj, name, st, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Awrite(na, st, text);
        H5Aclose(na);
        H5Tclose(st);
        free(text);
    } else {
        int64_t *v = malloc((size_t)n * 8);
        if (!v)
            abort();
        for (hsize_t k = 0; k < n; k++)
            memcpy(&v[k], value, 8);
        hid_t mt = cls == H5T_FLOAT ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
        hid_t na = H5Acreate_by_name(f, obj, name, mt, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Awrite(na, mt, v);
        H5Aclose(na);
        free(v);
    }
    H5Sclose(sp);
}

/* Dataset path replaced (see above: kinds 0, 1, 2, 3, 6). */
static inline void fuzz_ck_dataset(hid_t f, const char *path, int kind, uint64_t idx,
                                   const uint8_t *value)
{
    if (H5Lexists(f, path, H5P_DEFAULT) <= 0)
        return;
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    if (d < 0)
        return;
    hid_t t = H5Dget_type(d);
    int is_float = H5Tget_class(t) == H5T_FLOAT;
    H5Tclose(t);
    hid_t mt = is_float ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
    hid_t sp = H5Dget_space(d);
    hssize_t n = H5Sget_simple_extent_npoints(sp);
    H5Sclose(sp);
    if (kind == 0 || kind == 1) {
        if (n > 0) {
            int64_t *buf = malloc((size_t)n * 8);
            if (!buf)
                abort();
            H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
            memcpy(&buf[idx % (uint64_t)n], value, 8);
            H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
            free(buf);
        }
        H5Dclose(d);
        if (kind == 1)
            fuzz_ck_fix_checksum(f, path);
        return;
    }
    H5Dclose(d);
    H5Ldelete(f, path, H5P_DEFAULT);
    if (kind == 2)
        return;
    hsize_t len = idx % 64;
    if (kind == 6 && (idx & 1)) { /* strings */
        hsize_t m = len + 1;
        char *text = calloc((size_t)m, 9);
        if (!text)
            abort();
        for (hsize_t k = 0; k < m; k++)
            memcpy(text + 9 * k, value, 8);
        hid_t st = H5Tcopy(H5T_C_S1);
        H5Tset_size(st, 9);
        hid_t ns = H5Screate_simple(1, &m, NULL);
        hid_t nd = H5Dcreate2(f, path, st, ns, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        H5Dwrite(nd, st, H5S_ALL, H5S_ALL, H5P_DEFAULT, text);
        H5Dclose(nd);
        H5Sclose(ns);
        H5Tclose(st);
        free(text);
        return;
    }
    hsize_t dims[2] = {len, kind == 6 ? 1 + (idx >> 8) % 5 : 1};
    int rank = kind == 6 ? 2 : 1;
    int64_t *buf = calloc((size_t)(dims[0] * dims[1] + 1), 8);
    if (!buf)
        abort();
    for (hsize_t k = 0; k < dims[0] * dims[1]; k++)
        memcpy(&buf[k], value, 8);
    hid_t ns = H5Screate_simple(rank, dims, NULL);
    hid_t nd = H5Dcreate2(f, path, mt, ns, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(nd, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    H5Dclose(nd);
    H5Sclose(ns);
    free(buf);
    if (idx & 1)
        fuzz_ck_fix_checksum(f, path);
}

/* One mutation of file f, whose checkpoint group is g (see above). */
static inline void fuzz_ck_mutate(hid_t f, const char *g, const uint8_t *r)
{
    const char *item = fuzz_ck_items[r[0] % FUZZ_CK_NITEMS];
    int kind = r[1] % 8;
    uint64_t idx;
    memcpy(&idx, r + 2, 8);
    char path[300];
    const char *at = strchr(item, '@');
    if (item[0] == '/')
        snprintf(path, sizeof path, "%.*s", at ? (int)(at - item) : (int)strlen(item), item);
    else
        snprintf(path, sizeof path, "%s%s%.*s", g, at == item ? "" : "/",
                 at ? (int)(at - item) : (int)strlen(item), item);
    if (!path[0])
        snprintf(path, sizeof path, "/");
    if (at) {
        fuzz_ck_attr(f, path, at + 1, kind == 3 || kind == 6 ? 0 : kind, idx, r + 10);
        return;
    }
    fuzz_ck_dataset(f, path, kind == 4 || kind == 5 || kind == 7 ? 6 : kind, idx, r + 10);
}

/* dir: a folder of the caller's for the templates and the mutated files. */
static inline status fuzz_checkpoint(const uint8_t *data, size_t size, const char *dir, diag *err)
{
    if (size < 1)
        return CDLAB_OK;
    int dem = data[0] & 1;
    char tmpl[2][300], mutated[300], out[300];
    for (int k = 0; k < 2; k++) {
        snprintf(tmpl[k], sizeof tmpl[k], "%s/template_%s.h5", dir, k ? "dem" : "cd");
        if (access(tmpl[k], R_OK) != 0) {
            diag e2;
            fuzz_ck_clear(tmpl[k]);
            if (fuzz_ck_run(k, FUZZ_CK_STEPS, tmpl[k], NULL, &e2) != CDLAB_OK)
                abort(); /* the templates themselves must run */
        }
    }
    snprintf(mutated, sizeof mutated, "%s/mutated.h5", dir);
    snprintf(out, sizeof out, "%s/restored.h5", dir);
    fuzz_ck_copy(tmpl[dem], mutated);
    hid_t f = H5Fopen(mutated, H5F_ACC_RDWR, H5P_DEFAULT);
    if (f < 0)
        abort();
    char g[64];
    snprintf(g, sizeof g, "/checkpoints/%08d", FUZZ_CK_STEPS);
    for (size_t r = 1; r + 18 <= size && r < 1 + 8 * 18; r += 18)
        fuzz_ck_mutate(f, g, data + r);
    H5Fclose(f);
    fuzz_ck_clear(out);
    status s = fuzz_ck_run(dem, FUZZ_CK_STEPS + 2, out, mutated, err);
    fuzz_ck_clear(out);
    /* cdlab info of it, and its last snapshot as a particle source (counted, then read) */
    FILE *sink = fopen("/dev/null", "w");
    if (!sink)
        abort();
    diag e2;
    h5in_describe(mutated, sink, &e2);
    fclose(sink);
    int count = 0, n = 0;
    long taken;
    if (generate_load_output(NULL, mutated, -1, &count, &taken, &e2) == CDLAB_OK && count > 0) {
        particles P;
        if (particles_init(&P, count, 3, &e2) == CDLAB_OK) {
            if (generate_load_output(&P, mutated, -1, &n, &taken, &e2) == CDLAB_OK && n != count)
                abort();
            particles_free(&P);
        }
    }
    return s;
}

#endif

/* The engine interface: every registered engine's table is complete and documented, the
 * registry finds each by name, and the CD <-> DEM equivalence's figures match their closed
 * forms (Unger & Kertesz eqs. 45-46, 54, 57, 63, 67-68). */
#include "suites.h"

#include "config_schema.h" /* generated from docs/config.md into the build folder */
#include "engine/engine.h"
#include "engine/equiv.h"

#include <math.h>
#include <string.h>

/* A table with a missing operation would crash the run pipeline at that call; a section that
 * docs/config.md lacks could not be read (the reader refuses undocumented keys). */
START_TEST(unit_registry_tables_complete)
{
    int n = 0;
    for (int k = 0; engine_registry[k]; k++, n++) {
        const engine_ops *o = engine_registry[k];
        ck_assert_msg(o->name && o->title && o->program && o->sections, "engine %d: names", k);
        /* every [required] operation of engine.h (the [optional] ones may be NULL) */
        ck_assert_msg(o->setup.memory && o->setup.read && o->setup.announce && o->setup.estimate &&
                          o->setup.free && o->step.start && o->step.step && o->report.header &&
                          o->report.row && o->report.contact_count && o->report.contact &&
                          o->persist.checkpoint_write && o->persist.checkpoint_read &&
                          o->persist.checkpoint_bytes,
                      "engine %s: an operation the pipeline calls is missing", o->name);
        /* an engine whose constant packs options says which: the other way is no use */
        ck_assert_msg(!o->persist.constant_change || o->persist.constants,
                      "engine %s: constant_change without constants", o->name);
        ck_assert_ptr_eq(engine_find(o->name), o);
        for (int j = 0; j < k; j++)
            ck_assert_msg(strcmp(engine_registry[j]->name, o->name) != 0, "two engines named %s",
                          o->name);
        for (int m = 0; o->sections[m]; m++) {
            int documented = 0;
            for (int q = 0; q < CONFIG_SCHEMA_N; q++)
                documented += strcmp(config_schema[q].section, o->sections[m]) == 0;
            ck_assert_msg(documented > 0, "engine %s: section [%s] is not in docs/config.md",
                          o->name, o->sections[m]);
        }
        /* the memory estimate: 1 to 100 MB for the program, between 100 B and 100 kB per
         * particle with 1 to 32 pairs, of which the pairs at 16 B (a pair's two indices and its
         * key) to 10 kB each, is all that makes sense */
        config c;
        diag err;
        ck_assert_int_eq(config_load_string(&c, "", "empty.ini", &err), CDLAB_OK);
        for (int dim = 1; dim <= 3; dim++) {
            engine_memory m = o->setup.memory(&c, dim);
            ck_assert(m.base >= 1e6 && m.base <= 1e8);
            ck_assert(m.per_particle > 100.0 && m.per_particle < 1e5);
            ck_assert(m.pairs_per_particle >= 1.0 && m.pairs_per_particle <= 32.0);
            ck_assert(m.per_pair >= 16.0 && m.per_pair < 1e4);
            ck_assert(m.per_particle - m.pairs_per_particle * m.per_pair >= 100.0);
        }
        config_free(&c);
    }
    ck_assert_int_ge(n, 2);
    ck_assert_ptr_null(engine_find("nope"));
    const char *names[ENGINE_MAX + 1];
    ck_assert_int_eq(engine_list_names(names, ENGINE_MAX + 1), n);
    ck_assert_str_eq(names[0], "cd"); /* the default of system.mode is the first */
    ck_assert_ptr_null(names[n]);
}
END_TEST

/* The DEM figures grow with the options that add per-particle or per-pair state: deformable
 * discs (stresses) and bonds (a bond's state per pair). */
START_TEST(unit_memory_options)
{
    const engine_ops *dem = engine_find("dem");
    config plain, both;
    diag err;
    ck_assert_int_eq(config_load_string(&plain, "[dem]\ndeformable = false\n", "p.ini", &err),
                     CDLAB_OK);
    ck_assert_int_eq(
        config_load_string(&both, "[dem]\ndeformable = true\nbond = true\n", "b.ini", &err),
        CDLAB_OK);
    engine_memory p = dem->setup.memory(&plain, 2), b = dem->setup.memory(&both, 2);
    ck_assert(b.per_particle > p.per_particle + 300.0);
    ck_assert(b.per_pair > p.per_pair + 100.0);
    ck_assert(p.pairs_per_particle == b.pairs_per_particle);
    config_free(&plain);
    config_free(&both);
}
END_TEST

/* A message within the record is whole; a longer one keeps its start and its end (the reason
 * and the advice), " [...] " between them, and no UTF-8 character cut. */
START_TEST(unit_diag_long_messages)
{
    static diag d;
    static char path[3 * 4096 + 1];
    memset(path, 'p', sizeof path - 1);
    path[sizeof path - 1] = '\0';
    ck_assert_int_eq(diag_set(&d, CDLAB_ERR_IO, "%s: cannot open: why", path), CDLAB_ERR_IO);
    ck_assert_uint_eq(strlen(d.msg), sizeof path - 1 + strlen(": cannot open: why"));
    static char big[20000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    /* 2 bytes each, the first one's lead byte the last that the start would keep */
    memcpy(big + DIAG_MSG_MAX / 2 - 11, "\u00d7\u00d7\u00d7\u00d7\u00d7", 10);
    diag_set(&d, CDLAB_ERR_IO, "start %s: the reason; the advice", big);
    size_t len = strlen(d.msg);
    ck_assert_uint_le(len, DIAG_MSG_MAX - 1);
    ck_assert_uint_ge(len, DIAG_MSG_MAX - 4);
    ck_assert(strncmp(d.msg, "start aaa", 9) == 0);
    ck_assert(strcmp(d.msg + len - 22, "the reason; the advice") == 0);
    char *cut = strstr(d.msg, " [...] ");
    ck_assert_ptr_nonnull(cut);
    ck_assert((cut[-1] & 0xc0) != 0xc0); /* not the lead byte of a cut character */
    ck_assert(cut[-1] == 'a' || (unsigned char)cut[-1] == 0x97);
}
END_TEST

/* Amounts in messages: three significant digits, the unit that keeps them below 1000. */
START_TEST(unit_format_bytes)
{
    char b[24];
    ck_assert_str_eq(format_bytes(0.0, b, sizeof b), "0 B");
    ck_assert_str_eq(format_bytes(812.0, b, sizeof b), "812 B");
    ck_assert_str_eq(format_bytes(999.4, b, sizeof b), "999 B");
    ck_assert_str_eq(format_bytes(999.6, b, sizeof b), "1.00 kB");
    ck_assert_str_eq(format_bytes(1e5, b, sizeof b), "100 kB");
    ck_assert_str_eq(format_bytes(40.1e6, b, sizeof b), "40.1 MB");
    ck_assert_str_eq(format_bytes(999.7e6, b, sizeof b), "1.00 GB");
    ck_assert_str_eq(format_bytes(1.656e9, b, sizeof b), "1.66 GB");
    ck_assert_str_eq(format_bytes(3e11, b, sizeof b), "300 GB");
    ck_assert_str_eq(format_bytes(1.2e13, b, sizeof b), "12.0 TB");
    ck_assert_str_eq(format_bytes(5e20, b, sizeof b), "500 EB");
    ck_assert_str_eq(format_bytes(5e23, b, sizeof b), "500000 EB");
}
END_TEST

/* N_I = 40 random sweeps, dt = 0.5, d = 2, m = 3: the closed forms, to rounding (1e-14
 * relative: a few operations in double precision). */
START_TEST(analytic_equivalence_figures)
{
    double q = (4.0 * sqrt(exp(1.0)) - 5.0) / 2.0, N = 40, dt = 0.5, d = 2, m = 3;
    equiv_figures f = equiv_of(SWEEP_RANDOM, 40, dt, d, m);
    double D = q * N * d * d / dt;
    ck_assert_double_eq_tol(f.q, 0.7974425414002564, 1e-15); /* eq. (46) */
    ck_assert_double_eq_tol(f.D / D, 1.0, 1e-14);
    ck_assert_double_eq_tol(f.c / (sqrt(q * N) * d / dt), 1.0, 1e-14);
    ck_assert_double_eq_tol(f.l_diff / sqrt(4.0 * D * dt), 1.0, 1e-14);
    ck_assert_double_eq_tol(f.kappa / (q * m * N / (dt * dt)), 1.0, 1e-14);
    ck_assert_double_eq_tol(f.gamma / (q * m * N / dt), 1.0, 1e-14);
    ck_assert(equiv_q(SWEEP_JACOBI) == 0.5); /* eq. (45), exactly */
    /* l_diff = 2 sqrt(q N_I) d: a pure number of diameters, whatever dt */
    ck_assert_double_eq_tol(f.l_diff / (2.0 * sqrt(q * N) * d), 1.0, 1e-14);
    /* undamped: 2 / omega with omega = 2 sqrt(k/m); k = 4, m = 1 -> 0.5 */
    ck_assert_double_eq_tol(equiv_critical_dt(4.0, 0.0, 1.0), 0.5, 1e-15);
    /* damping shortens it: xi = c omega / (2 k) = 1 for c = 2 -> 0.5 (sqrt 2 - 1) */
    ck_assert_double_eq_tol(equiv_critical_dt(4.0, 2.0, 1.0), 0.5 * (sqrt(2.0) - 1.0), 1e-15);
}
END_TEST

Suite *engine_suite(void)
{
    Suite *s = suite_create("engine");
    TCase *tc = tcase_create("engine");
    tcase_add_test(tc, unit_registry_tables_complete);
    tcase_add_test(tc, analytic_equivalence_figures);
    tcase_add_test(tc, unit_memory_options);
    tcase_add_test(tc, unit_format_bytes);
    tcase_add_test(tc, unit_diag_long_messages);
    suite_add_tcase(s, tc);
    return s;
}

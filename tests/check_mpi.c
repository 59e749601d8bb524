/* Under mpirun (OpenMPI, started as a subprocess): a job of one rank runs as one process; what is
 * not distributed yet is refused on every rank with one message and no output; particles
 * migrate and are copied into halos between 1-4 ranks exactly as the global truth says; the
 * distributed DEM step and the distributed colored CD sweep give the one-process state bit for
 * bit; the domain-wise CD sweeps keep the 1D wave's omega and tau; nothing hangs (every command
 * has a timeout). */
#include "suites.h"

#include "h5io.h"
#include "xdmf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* mpirun as root needs the OMPI_ALLOW variables. Under check-asan the leak check is off for
 * the processes mpirun starts: OpenMPI unloads its plugins at MPI_Finalize, and LeakSanitizer
 * then reports their allocations from "unknown modules" that no suppression can name (cdlab's
 * own allocations are leak-checked by every other test, in the same code paths). */
/* Every mpirun has a time limit so that a hang (ranks waiting for each other for ever) fails
 * the test instead of the suite: 1500 s, far above any run's time on a busy machine. It was
 * 120 s, and four CD runs passed it beside two CPU-bound jobs: with more ranks than free
 * cores, a collective waits for ranks the scheduler has not run, and the CD sweeps' exchanges
 * (two per sweep, one per colour) took 25 times as long. Those runs are the slow tests. */
#define MPIRUN                                                                                     \
    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "                                   \
    "ASAN_OPTIONS=halt_on_error=1:detect_leaks=0 "                                                 \
    "timeout 1500 mpirun --oversubscribe "

/* The self-test program beside the cdlab binary the tests run (build/mpi_selftest). */
static void selftest_bin(char *buf, size_t n)
{
    const char *bin = cdlab_bin(), *slash = strrchr(bin, '/');
    snprintf(buf, n, "%.*smpi_selftest", slash ? (int)(slash - bin + 1) : 0, bin);
}

static int run_shell(const char *cmd)
{
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static long count_in_file(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    long c = 0;
    for (const char *p = buf; (p = strstr(p, needle)); p++)
        c++;
    return c;
}

/* A bad config (an unknown key, a value out of range) and a command other than run/check are
 * refused on every rank before any file exists: exit 2, one message. */
START_TEST(errors_mpi_refusals_once)
{
    char out[] = "/tmp/cdlab_mpiXXXXXX", err[] = "/tmp/cdlab_mpierrXXXXXX";
    int fd = mkstemp(out);
    close(fd);
    unlink(out); /* the run must not create it */
    fd = mkstemp(err);
    close(fd);
    struct {
        const char *args, *message;
    } cases[] = {{"run mpi/pile.ini --set dem.k_m=1", "unknown key 'k_m' in section [dem]"},
                 {"run mpi/pile.ini --set system.dt=-1", "system.dt: must be > 0 (got -1)"},
                 {"equiv 10 0.01 1", "only cdlab run and cdlab check"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, MPIRUN "-np 2 %s %s -o %s > /dev/null 2> %s", cdlab_bin(),
                 cases[k].args, out, err);
        ck_assert_int_eq(run_shell(cmd), 2);
        ck_assert_msg(count_in_file(err, cases[k].message) == 1, "%s: message not once",
                      cases[k].args);
        ck_assert_int_ne(access(out, F_OK), 0);
    }
    unlink(err);
}
END_TEST

/* The banner (standard error) names the ranks, those on rank 0's node and its cores, and says
 * when a waiting rank naps (more ranks on the node than cores: comm.c) and only then; one
 * process has no such line. */
START_TEST(io_mpi_banner_names_ranks)
{
    static char out[1 << 16];
    char cmd[1024];
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const char *naps = "naps instead of polling";
    for (int np = 2; np <= 3; np++) {
        snprintf(cmd, sizeof cmd, MPIRUN "-np %d %s check mpi/pile.ini 2>&1", np, cdlab_bin());
        ck_assert_int_eq(run_capture(cmd, out, sizeof out), 0);
        char line[128];
        snprintf(line, sizeof line, "ranks: %d, %d on rank 0's node of %ld cores", np, np, cores);
        ck_assert_msg(strstr(out, line) != NULL, "%d ranks: no '%s' in\n%s", np, line, out);
        ck_assert_msg((strstr(out, naps) != NULL) == (np > cores), "%d ranks on %ld cores: naps %s",
                      np, cores, np > cores ? "not said" : "said");
    }
    snprintf(cmd, sizeof cmd, "%s check mpi/pile.ini 2>&1", cdlab_bin());
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 0);
    ck_assert_ptr_null(strstr(out, "ranks: "));
}
END_TEST

/* The XDMF sidecars of outputs a and b (paths of equal length) say the same, but for the data
 * file they name. */
static void same_sidecar(const char *a, const char *b)
{
    char xa[600], xb[600];
    xdmf_sidecar_path(a, xa, sizeof xa);
    xdmf_sidecar_path(b, xb, sizeof xb);
    ck_assert_uint_eq(strlen(a), strlen(b));
    static char ta[1 << 20], tb[1 << 20];
    size_t n[2];
    char *t[2] = {ta, tb};
    const char *x[2] = {xa, xb};
    for (int k = 0; k < 2; k++) {
        FILE *f = fopen(x[k], "r");
        ck_assert_msg(f != NULL, "no sidecar %s", x[k]);
        n[k] = fread(t[k], 1, sizeof ta - 1, f);
        t[k][n[k]] = '\0';
        fclose(f);
    }
    ck_assert_uint_eq(n[0], n[1]);
    /* a's file names, as b's: then the two are the same bytes */
    const char *base_a = strrchr(a, '/') + 1, *base_b = strrchr(b, '/') + 1;
    for (char *q = ta; (q = strstr(q, base_a)); q++)
        memcpy(q, base_b, strlen(base_b));
    ck_assert_msg(memcmp(ta, tb, n[0]) == 0, "the sidecars of %s and %s differ", a, b);
}

/* The DEM energy ledger: every term, the balance and the relative residual (exact sums over
 * particles and pairs: the same bits on any number of ranks). */
static const char *const dem_ledger_series[] = {"/series/energy/kinetic_translational",
                                                "/series/energy/kinetic_rotational",
                                                "/series/energy/kinetic_piston",
                                                "/series/energy/elastic_normal",
                                                "/series/energy/elastic_tangential",
                                                "/series/energy/friction_dissipation",
                                                "/series/energy/damping_dissipation",
                                                "/series/energy/work_external",
                                                "/series/energy/work_piston",
                                                "/series/energy/balance_residual",
                                                "/series/residual",
                                                NULL};

/* cdlab run of tests/mpi/pile.ini (600 spheres falling on a floor, periodic x and y, rebuilds,
 * probes) on 2 ranks of 2 threads with the boxes cut afresh every second rebuild, and on 3
 * ranks, against one process: snapshots (particles and contacts), probes,
 * the stress and contact series, the energy ledger and the checkpoint's pairs, forces and exact
 * ledger sums bit for bit. Checkpoints cross rank counts: the 3-rank run's checkpoint continued
 * by one process, and the one-process checkpoint continued by 2 ranks, for 100 steps, end where
 * the one-process continuation does, bit for bit, ledger included. */
START_TEST(determinism_mpi_run_matches_one_process)
{
    char one[] = "/tmp/cdlab_mpi1XXXXXX", many[] = "/tmp/cdlab_mpiPXXXXXX";
    char c1[] = "/tmp/cdlab_mpic1XXXXXX", cP[] = "/tmp/cdlab_mpicPXXXXXX";
    char c2[] = "/tmp/cdlab_mpic2XXXXXX";
    char *files[5] = {one, many, c1, cP, c2};
    for (int k = 0; k < 5; k++) {
        int fd = mkstemp(files[k]);
        close(fd);
    }
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s run mpi/pile.ini -o %s --overwrite --quiet", cdlab_bin(), one);
    ck_assert_int_eq(run_shell(cmd), 0);
    const char *exact[] = {"/snapshots/00000400/position",
                           "/snapshots/00000400/velocity",
                           "/snapshots/00000400/angular_velocity",
                           "/snapshots/00000400/orientation",
                           "/snapshots/00000200/position",
                           "/snapshots/00000400/contacts/pair",
                           "/snapshots/00000400/contacts/force",
                           "/series/probe_position",
                           "/series/probe_velocity",
                           "/series/stress",
                           "/series/stress_walls",
                           "/series/contacts",
                           "/series/active_contacts",
                           "/series/max_overlap",
                           "/series/mean_overlap",
                           "/checkpoints/00000400/x",
                           "/checkpoints/00000400/dem_F",
                           "/checkpoints/00000400/dem_T",
                           "/checkpoints/00000400/dem_energy",
                           "/checkpoints/00000400/dem_energy_exact",
                           NULL};
    /* 2 ranks of 2 threads each with the boxes cut afresh at every second rebuild (hybrid, and
     * rebalancing mid-run: neither changes a bit), then 3 ranks (its checkpoint is used below) */
    const char *extra[] = {"--threads 2 --set parallel.rebalance_every=2", ""};
    for (int np = 2; np <= 3; np++) {
        snprintf(cmd, sizeof cmd, MPIRUN "-np %d %s run mpi/pile.ini -o %s --overwrite --quiet %s",
                 np, cdlab_bin(), many, extra[np - 2]);
        ck_assert_int_eq(run_shell(cmd), 0);
        same_data(one, many, exact);
        same_data(one, many, dem_ledger_series);
    }
    /* the last (3-rank) file's checkpoint, continued by one process */
    snprintf(cmd, sizeof cmd,
             "%s run mpi/pile.ini -o %s --overwrite --quiet --set system.steps=500 --restart %s",
             cdlab_bin(), c1, one);
    ck_assert_int_eq(run_shell(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "%s run mpi/pile.ini -o %s --overwrite --quiet --set system.steps=500 --restart %s",
             cdlab_bin(), cP, many);
    ck_assert_int_eq(run_shell(cmd), 0);
    const char *cont[] = {"/snapshots/00000500/position", "/snapshots/00000500/velocity",
                          "/snapshots/00000500/contacts/force", "/checkpoints/00000500/dem_F",
                          NULL};
    same_data(c1, cP, cont);
    /* the one-process checkpoint continued by 2 ranks */
    snprintf(cmd, sizeof cmd,
             MPIRUN "-np 2 %s run mpi/pile.ini -o %s --overwrite --quiet --set system.steps=500 "
                    "--restart %s",
             cdlab_bin(), c2, one);
    ck_assert_int_eq(run_shell(cmd), 0);
    same_data(c1, c2, cont);
    same_data(c1, c2, dem_ledger_series);
    same_data(c1, cP, dem_ledger_series);
    for (int k = 0; k < 5; k++)
        remove_output(files[k]);
}
END_TEST

/* particles.order = spatial on 3 ranks: every rank renumbers the particles alike, so the run
 * writes the one-process file (its particles, probes and /input_index) bit for bit. */
START_TEST(determinism_mpi_spatial_order)
{
    char one[] = "/tmp/cdlab_mpioXXXXXX", many[] = "/tmp/cdlab_mpiqXXXXXX";
    close(mkstemp(one));
    close(mkstemp(many));
    char cmd[1024];
    const char *set = "--set particles.order=spatial";
    snprintf(cmd, sizeof cmd, "%s run mpi/pile.ini -o %s --overwrite --quiet %s", cdlab_bin(), one,
             set);
    ck_assert_int_eq(run_shell(cmd), 0);
    snprintf(cmd, sizeof cmd, MPIRUN "-np 3 %s run mpi/pile.ini -o %s --overwrite --quiet %s",
             cdlab_bin(), many, set);
    ck_assert_int_eq(run_shell(cmd), 0);
    const char *exact[] = {"/input_index",
                           "/series/probe_ids",
                           "/series/probe_position",
                           "/snapshots/00000400/position",
                           "/snapshots/00000400/velocity",
                           "/snapshots/00000400/id",
                           "/snapshots/00000400/contacts/force",
                           NULL};
    same_data(one, many, exact);
    remove_output(one);
    remove_output(many);
}
END_TEST

/* The largest over the ranks of /parallel/ranks/<figure> per step, from the file at path. */
static double rank_figure_per_step(const char *path, const char *figure)
{
    double *v = NULL, *steps = NULL, worst = 0.0;
    long n = 0, m = 0;
    diag e;
    char ds[96];
    snprintf(ds, sizeof ds, "/parallel/ranks/%s", figure);
    ck_assert_msg(h5in_read_doubles(path, ds, &v, &n, &e) == CDLAB_OK, "%s", e.msg);
    ck_assert_msg(h5in_read_doubles(path, "/parallel/ranks/steps", &steps, &m, &e) == CDLAB_OK,
                  "%s", e.msg);
    ck_assert_msg(n == m && n > 1, "%ld and %ld rows", n, m);
    for (long r = 0; r < n; r++)
        worst = fmax(worst, v[r] / steps[r]);
    free(v);
    free(steps);
    return worst;
}

/* /parallel/ranks of the DEM pile (tests/mpi/pile.ini, 400 steps) on 2 and 4 ranks: a row per
 * rank of each figure, every rank's 400 steps, its MPI time within its step time, its peak
 * resident memory (the program and a 600-sphere world: between 1 and 256 MiB; measured 17-25;
 * under AddressSanitizer, whose shadow and quarantine add a few hundred MiB, 4 GiB; measured 258),
 * at most 5 MPI calls per step whatever P (the halo refresh's exchange and agreement, the
 * rebuild test's maximum, the step's agreement with the record's sums, and the rebuilds'
 * migration and halo on a few steps; measured 4.2: a sixth collective every step fails it), and
 * at most P - 1 + log2 P messages per call (docs/parallel.md's pattern: rank 0 sends a
 * reduction's result to every other rank), and at most 1.1 reductions per step in rank order
 * through rank 0 (the step's record, with its sum of overlaps; the rebuilds' sum of loads:
 * measured 1.03; the maxima and counts, 2.06 a step before, go through trees). */
START_TEST(io_mpi_rank_figures)
{
    char out[] = "/tmp/cdlab_mpirfXXXXXX";
    int fd = mkstemp(out);
    close(fd);
    const char *names[] = {"step_seconds", "step_comm_seconds", "step_messages", "step_calls",
                           "steps",        "peak_rss_kib"};
#ifdef CDLAB_SANITIZED
    const double peak_max_kib = 4.0 * 1024.0 * 1024.0;
#else
    const double peak_max_kib = 256.0 * 1024.0;
#endif
    for (int np = 2; np <= 4; np += 2) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 MPIRUN "-np %d %s run mpi/pile.ini -o %s --overwrite --quiet --set output.every=0",
                 np, cdlab_bin(), out);
        ck_assert_int_eq(run_shell(cmd), 0);
        double *v[6];
        for (int k = 0; k < 6; k++) {
            char ds[64];
            long n = 0;
            diag e;
            snprintf(ds, sizeof ds, "/parallel/ranks/%s", names[k]);
            ck_assert_msg(h5in_read_doubles(out, ds, &v[k], &n, &e) == CDLAB_OK, "%s", e.msg);
            ck_assert_msg(n == np, "%d ranks: %ld rows of %s", np, n, names[k]);
        }
        const double log2p = np == 2 ? 1.0 : 2.0;
        for (int r = 0; r < np; r++) {
            double steps = v[4][r], calls = v[3][r] / steps, msgs = v[2][r] / steps;
            ck_assert_msg(steps == 400.0, "%d ranks, rank %d: %g steps", np, r, steps);
            ck_assert_msg(v[1][r] >= 0.0 && v[1][r] <= v[0][r], "%d ranks, rank %d: MPI %g s of %g",
                          np, r, v[1][r], v[0][r]);
            ck_assert_msg(v[5][r] > 1024.0 && v[5][r] < peak_max_kib,
                          "%d ranks, rank %d: peak %g KiB", np, r, v[5][r]);
            ck_assert_msg(calls > 0.0 && calls <= 5.0, "%d ranks, rank %d: %g calls per step", np,
                          r, calls);
            ck_assert_msg(msgs <= calls * (np - 1 + log2p),
                          "%d ranks, rank %d: %g messages per step", np, r, msgs);
        }
        for (int k = 0; k < 6; k++)
            free(v[k]);
        double ordered = rank_figure_per_step(out, "step_ordered_reductions");
        ck_assert_msg(ordered > 0.9 && ordered <= 1.1, "%d ranks: %g rank-order reductions a step",
                      np, ordered);
    }
    remove_output(out);
}
END_TEST

/* The DEM chute benchmark (bench/chute.ini) reduced to one 4,100-sphere tile, 200 steps (the
 * frozen rough base, periodic x and y, the Kuhn law, rate dashpots): 2, 3 and 4 ranks write the
 * one-process final state bit for bit (positions, velocities, spins, orientations, contact
 * forces, the stress and overlap series, the energy ledger, the checkpoint's forces); and with
 * dem.tangential = lammps and a tangential dashpot, 3 ranks. */
START_TEST(determinism_mpi_chute_tile_2_to_4_ranks)
{
    char one[] = "/tmp/cdlab_mpich1XXXXXX", many[] = "/tmp/cdlab_mpichPXXXXXX";
    int fd = mkstemp(one);
    close(fd);
    fd = mkstemp(many);
    close(fd);
    const char *exact[] = {"/snapshots/00000200/position",
                           "/snapshots/00000200/velocity",
                           "/snapshots/00000200/angular_velocity",
                           "/snapshots/00000200/orientation",
                           "/snapshots/00000200/contacts/force",
                           "/series/stress",
                           "/series/stress_walls",
                           "/series/mean_overlap",
                           "/series/max_overlap",
                           "/checkpoints/00000200/dem_F",
                           "/checkpoints/00000200/dem_T",
                           NULL};
    /* the bench's law on 2 to 4 ranks; LAMMPS's law (dem.tangential = lammps, its lever arms and
     * friction cap, with a tangential dashpot) on 3 */
    const char *law[] = {"", "--set dem.tangential=lammps --set dem.damping_tangential=25"};
    for (int l = 0; l < 2; l++) {
        char sets[512], cmd[1024];
        snprintf(sets, sizeof sets,
                 "--set particles.tile=1,1,1 --set particles.count=4100 "
                 "--set system.box_max=10,10,42 --set system.steps=200 --set output.every=0 %s",
                 law[l]);
        snprintf(cmd, sizeof cmd, "cd ../bench && %s run chute.ini -o %s --overwrite --quiet %s",
                 cdlab_bin(), one, sets);
        ck_assert_int_eq(run_shell(cmd), 0);
        for (int np = l ? 3 : 2; np <= (l ? 3 : 4); np++) {
            snprintf(cmd, sizeof cmd,
                     "cd ../bench && " MPIRUN
                     "-np %d %s run chute.ini -o %s --overwrite --quiet %s",
                     np, cdlab_bin(), many, sets);
            ck_assert_int_eq(run_shell(cmd), 0);
            same_data(one, many, exact);
            same_data(one, many, dem_ledger_series);
        }
    }
    remove_output(one);
    remove_output(many);
}
END_TEST

/* An error on the ranks (DEM: an exploding overlap, dt far above the critical step; CD: a disk
 * sinking into the floor under too few Jacobi sweeps) stops every rank: exit 1, the message
 * once, the file kept with the state up to the failure; no hang. */
START_TEST(errors_mpi_failure_stops_all_ranks)
{
    char out[] = "/tmp/cdlab_mpiXXXXXX", err[] = "/tmp/cdlab_mpierrXXXXXX";
    int fd = mkstemp(out);
    close(fd);
    unlink(out);
    fd = mkstemp(err);
    close(fd);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             MPIRUN "-np 2 %s run mpi/pile.ini -o %s --set system.dt=0.02 "
                    "--set dem.allow_unstable_dt=true > /dev/null 2> %s",
             cdlab_bin(), out, err);
    ck_assert_int_eq(run_shell(cmd), 1);
    ck_assert_int_eq(count_in_file(err, "exceeds dem.abort_overlap"), 1);
    char *said;
    diag e;
    ck_assert_int_eq(h5in_read_attr_string(out, "/summary", "status", &said, &e), CDLAB_OK);
    ck_assert_ptr_nonnull(strstr(said, "exceeds dem.abort_overlap"));
    free(said);
    remove_output(out);
    /* contact dynamics: the Jacobi update at 5 sweeps lets a disk sink into the floor */
    snprintf(cmd, sizeof cmd,
             MPIRUN "-np 2 %s run mpi/cdpile.ini -o %s --set solver.sweep=jacobi "
                    "--set solver.iterations=5 --set system.dt=0.01 > /dev/null 2> %s",
             cdlab_bin(), out, err);
    ck_assert_int_eq(run_shell(cmd), 1);
    ck_assert_int_eq(count_in_file(err, "exceeds solver.abort_overlap"), 1);
    ck_assert_int_eq(h5in_read_attr_string(out, "/summary", "status", &said, &e), CDLAB_OK);
    ck_assert_ptr_nonnull(strstr(said, "exceeds solver.abort_overlap"));
    free(said);
    remove_output(out);
    unlink(err);
}
END_TEST

/* mpirun -np 1 gives the file a run without mpirun gives (final positions bit for bit). */
START_TEST(io_mpi_job_of_one_is_one_process)
{
    char a[] = "/tmp/cdlab_mpiaXXXXXX", b[] = "/tmp/cdlab_mpibXXXXXX";
    int fd = mkstemp(a);
    close(fd);
    fd = mkstemp(b);
    close(fd);
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s run memcheck/dem.ini -o %s --overwrite --quiet --set system.steps=200",
             cdlab_bin(), a);
    ck_assert_int_eq(run_shell(cmd), 0);
    snprintf(cmd, sizeof cmd,
             MPIRUN
             "-np 1 %s run memcheck/dem.ini -o %s --overwrite --quiet --set system.steps=200",
             cdlab_bin(), b);
    ck_assert_int_eq(run_shell(cmd), 0);
    double *xa, *xb;
    long na, nb;
    diag e;
    ck_assert_int_eq(h5in_read_doubles(a, "/snapshots/00000200/position", &xa, &na, &e), CDLAB_OK);
    ck_assert_int_eq(h5in_read_doubles(b, "/snapshots/00000200/position", &xb, &nb, &e), CDLAB_OK);
    ck_assert_int_eq(na, nb);
    ck_assert(memcmp(xa, xb, (size_t)na * sizeof *xa) == 0);
    free(xa);
    free(xb);
    remove_output(a);
    remove_output(b);
}
END_TEST

/* The exchange self-test (tests/mpi_selftest.c) on 1, 2, 3, 4 ranks, open and x-y periodic:
 * 3,000 particles scattered over the ranks migrate to the owners of a recursive bisection, three
 * times as everything moves and the bisection follows; every rank then holds exactly its
 * particles in id order with their records bit for bit, each id once over all ranks; the halo
 * copies are exactly those a brute-force search expects, bit for bit, also after an update. */
START_TEST(io_mpi_migration_and_halo_1_to_4_ranks)
{
    char lab[512];
    selftest_bin(lab, sizeof lab);
    for (int np = 1; np <= 4; np++)
        for (int periodic = 0; periodic < 2; periodic++) {
            char cmd[1024];
            snprintf(cmd, sizeof cmd, MPIRUN "-np %d %s exchange %s > /dev/null", np, lab,
                     periodic ? "periodic" : "");
            ck_assert_msg(run_shell(cmd) == 0, "%d ranks%s: the self-test failed", np,
                          periodic ? ", periodic" : "");
        }
}
END_TEST

/* The cuts from the ranks' shares (decomp_build_shared, no gather) on 1, 2, 3, 4 ranks are those
 * of the whole set (decomp_build), bit for bit, for 1 to 9 parts: random points, a weighted
 * lattice with ties on every axis (periodic x), a lattice with a few points off it, fewer points
 * than parts, one point 40 times, none (tests/mpi_selftest.c, decomp). */
/* tests/mpi_selftest.c with args on 1, 2, 3 and 4 ranks; each must pass (what: the failure). */
static void selftest_1_to_4(const char *args, const char *what)
{
    char lab[512];
    selftest_bin(lab, sizeof lab);
    for (int np = 1; np <= 4; np++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, MPIRUN "-np %d %s %s > /dev/null", np, lab, args);
        ck_assert_msg(run_shell(cmd) == 0, "%d ranks: %s", np, what);
    }
}

START_TEST(io_mpi_cuts_from_shares_1_to_4_ranks)
{
    selftest_1_to_4("decomp", "the cuts differ from one process's");
}
END_TEST

/* The reductions (tests/mpi_selftest.c, reduce) on 1, 2, 3, 4 ranks: maxima, minima, counts and
 * a value one rank has through the library's trees, the bits the rank-order combination gives,
 * no reduction in rank order among them; inexact sums in rank order, bit for bit. */
START_TEST(io_mpi_reductions_1_to_4_ranks)
{
    selftest_1_to_4("reduce", "a reduction differs from the rank-order one");
}
END_TEST

/* The DEM self-test (tests/mpi_selftest.c, cd/dem/dem_dist.c) on 1, 2, 3, 4 ranks: a stirred,
 * periodic-x-y pile of 600 spheres falling on a floor (Kuhn law, friction, dashpots), 150 steps
 * with 9 neighbour-list rebuilds, particles migrating between ranks at each (302 to 482
 * migrations): every particle's position, velocity, angular velocity and orientation equal the
 * one-process run's bit for bit, each owned once. (More ranks than the machine's 2 cores are
 * slow: a rank waiting in a collective for a descheduled one; 150 steps keep it to seconds.) */
START_TEST(determinism_dem_distributed_bit_identical_1_to_4_ranks)
{
    selftest_1_to_4("dem 150", "the distributed pile differs");
}
END_TEST

/* Contact dynamics, colored sweep (tests/mpi/cdpile.ini: 600 spheres falling on a floor, periodic
 * x and y, friction, N_I = 20, 400 steps): 2, 3 and 4 ranks, with the boxes cut afresh every 7
 * steps or never after the start, write the one-process file bit for bit (positions, velocities,
 * spins, orientations, contact pairs and forces, probes, contact counts, overlaps, residuals, the
 * checkpoint), and the 3-rank FCLIB export of step 300 is the one-process export. Checkpoints cross
 * rank counts: the one-process and the 2-rank checkpoints continued by 3 ranks end where the
 * one-process continuation does, bit for bit. */
START_TEST(determinism_cd_colored_1_to_4_ranks)
{
    char one[] = "/tmp/cdlab_mpicd1XXXXXX", many[] = "/tmp/cdlab_mpicdPXXXXXX";
    char two[] = "/tmp/cdlab_mpicd2XXXXXX", c1[] = "/tmp/cdlab_mpicdc1XXXXXX";
    char cP[] = "/tmp/cdlab_mpicdcPXXXXXX";
    char *files[5] = {one, many, two, c1, cP};
    for (int k = 0; k < 5; k++) {
        int fd = mkstemp(files[k]);
        close(fd);
    }
    char cmd[1024];
    char fone[64], fmany[64];
    snprintf(fone, sizeof fone, "%s.fclib.h5", one);
    snprintf(fmany, sizeof fmany, "%s.fclib.h5", many);
    snprintf(cmd, sizeof cmd,
             "%s run mpi/cdpile.ini -o %s --overwrite --quiet --export-fclib 300 --fclib-out %s",
             cdlab_bin(), one, fone);
    ck_assert_int_eq(run_shell(cmd), 0);
    const char *exact[] = {"/snapshots/00000400/position",
                           "/snapshots/00000400/velocity",
                           "/snapshots/00000400/angular_velocity",
                           "/snapshots/00000400/orientation",
                           "/snapshots/00000300/position",
                           "/snapshots/00000400/contacts/pair",
                           "/snapshots/00000400/contacts/force",
                           "/series/probe_position",
                           "/series/probe_velocity",
                           "/series/contacts",
                           "/series/active_contacts",
                           "/series/sliding_contacts",
                           "/series/max_overlap",
                           "/series/mean_overlap",
                           "/series/residual",
                           "/series/kinetic_energy",
                           "/series/sweeps",
                           "/series/stress",
                           "/series/stress_walls",
                           "/checkpoints/00000400/x",
                           "/checkpoints/00000400/v",
                           "/checkpoints/00000400/w",
                           NULL};
    struct {
        int np;
        const char *set;
    } cases[] = {{2, ""},
                 {3, "--set parallel.rebalance_every=7 --export-fclib 300 --fclib-out"},
                 {4, ""},
                 {2, "--set parallel.rebalance=1e9"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        snprintf(cmd, sizeof cmd,
                 MPIRUN "-np %d %s run mpi/cdpile.ini -o %s --overwrite --quiet %s %s", cases[k].np,
                 cdlab_bin(), k == 0 ? two : many, cases[k].set, k == 1 ? fmany : "");
        ck_assert_int_eq(run_shell(cmd), 0);
        same_data(one, k == 0 ? two : many, exact);
    }
    /* the FCLIB export of step 300 from 3 ranks: the one-process problem and solution */
    const char *fclib[] = {"/fclib_local/W/x", "/fclib_local/W/i", "/fclib_local/vectors/q",
                           "/solution/r",      "/solution/u",      "/cdlab/frame",
                           "/cdlab/body0",     "/fclib_local/W/p", NULL};
    same_data(fone, fmany, fclib);
    unlink(fone);
    unlink(fmany);
    const char *cont[] = {"/snapshots/00000500/position",       "/snapshots/00000500/velocity",
                          "/snapshots/00000500/contacts/force", "/series/mean_overlap",
                          "/checkpoints/00000500/contacts",     NULL};
    snprintf(cmd, sizeof cmd,
             "%s run mpi/cdpile.ini -o %s --overwrite --quiet --set system.steps=500 --restart %s",
             cdlab_bin(), c1, one);
    ck_assert_int_eq(run_shell(cmd), 0);
    for (int from = 0; from < 2; from++) {
        snprintf(cmd, sizeof cmd,
                 MPIRUN "-np 3 %s run mpi/cdpile.ini -o %s --overwrite --quiet "
                        "--set system.steps=500 --restart %s",
                 cdlab_bin(), cP, from == 0 ? one : two);
        ck_assert_int_eq(run_shell(cmd), 0);
        same_data(c1, cP, cont);
    }
    for (int k = 0; k < 5; k++)
        remove_output(files[k]);
}
END_TEST

/* The 1D wave test's last disk (experiments/chain1d): omega from the zero crossings of its
 * displacement from the final position, tau from the decay of the half-waves' peaks (a
 * least-squares line through their logarithms), over t0 .. the end. */
static void wave_of(const char *path, long t0, double *omega, double *tau)
{
    double *x;
    long n;
    diag e;
    ck_assert_msg(h5in_read_doubles(path, "/series/probe_position", &x, &n, &e) == CDLAB_OK, "%s",
                  e.msg);
    long rows = n / 6; /* probes 0 and -1, 3 components: the last disk's x is column 3 */
    double x0 = x[6 * (rows - 1) + 3], first = 0.0, last = 0.0, peak = 0.0, tpeak = 0.0;
    int crossings = 0;
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    int np = 0;
    for (long t = t0 + 1; t < rows; t++) {
        double a = x[6 * (t - 1) + 3] - x0, b = x[6 * t + 3] - x0;
        if (fabs(b) > peak)
            peak = fabs(b), tpeak = (double)t;
        if ((a < 0.0) != (b < 0.0) && a != b) {
            double tc = (double)(t - 1) + a / (a - b);
            if (crossings++ == 0)
                first = tc;
            last = tc;
            if (peak > 1e-9 && crossings > 1) { /* the half-wave just ended */
                sx += tpeak, sy += log(peak), sxx += tpeak * tpeak, sxy += tpeak * log(peak);
                np++;
            }
            peak = 0.0;
        }
        if (np >= 8)
            break;
    }
    ck_assert_int_ge(crossings, 6);
    *omega = acos(-1.0) * (crossings - 1) / (last - first);
    double slope = (np * sxy - sx * sy) / (np * sxx - sx * sx);
    *tau = -1.0 / slope;
    free(x);
}

/* The domain-wise random sweep (Shojaaee et al.) on the 1D wave test (50 disks, N_I = 40): on 2
 * and 4 ranks the slowest mode's omega is within 3% and tau within 20% of the one-process run's
 * (experiments/chain1d/analyze.py's fits: omega -0.4% and -1.6%, tau +1% and +3.5%: the boundary
 * updates soften the chain);
 * the run is reproducible on a given number of ranks. */
START_TEST(physics_cd_domain_wise_wave_2_and_4_ranks)
{
    char one[] = "/tmp/cdlab_mpiw1XXXXXX", many[] = "/tmp/cdlab_mpiwPXXXXXX";
    char again[] = "/tmp/cdlab_mpiwAXXXXXX";
    char *files[3] = {one, many, again};
    for (int k = 0; k < 3; k++) {
        int fd = mkstemp(files[k]);
        close(fd);
    }
    const char *sets = "--set output.every=0 --set system.steps=700";
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s run ../experiments/chain1d/chain1d.ini -o %s --overwrite --quiet %s", cdlab_bin(),
             one, sets);
    ck_assert_int_eq(run_shell(cmd), 0);
    double w1, t1, w, t;
    wave_of(one, 222, &w1, &t1);
    ck_assert_msg(fabs(w1 / 0.17673 - 1.0) < 0.01, "one process: omega %g", w1); /* eq. (58) */
    for (int np = 2; np <= 4; np += 2) {
        snprintf(cmd, sizeof cmd,
                 MPIRUN "-np %d %s run ../experiments/chain1d/chain1d.ini -o %s --overwrite "
                        "--quiet %s",
                 np, cdlab_bin(), many, sets);
        ck_assert_int_eq(run_shell(cmd), 0);
        wave_of(many, 222, &w, &t);
        ck_assert_msg(fabs(w / w1 - 1.0) < 0.03, "%d ranks: omega %g, one process %g", np, w, w1);
        ck_assert_msg(fabs(t / t1 - 1.0) < 0.20, "%d ranks: tau %g, one process %g", np, t, t1);
    }
    snprintf(cmd, sizeof cmd,
             MPIRUN "-np 4 %s run ../experiments/chain1d/chain1d.ini -o %s --overwrite --quiet %s",
             cdlab_bin(), again, sets);
    ck_assert_int_eq(run_shell(cmd), 0);
    const char *same[] = {"/series/probe_position", "/series/residual", NULL};
    same_data(many, again, same);
    /* the rule recorded is the order's as measured (experiments/parallel): random -0.53,
     * forward -0.98, Jacobi 0 (it was -0.53 for every order) */
    const char *orders[] = {"random", "forward", "jacobi"};
    const double rule[] = {-0.53, -0.98, 0.0};
    for (int k = 0; k < 3; k++) {
        snprintf(cmd, sizeof cmd,
                 MPIRUN "-np 2 %s run ../experiments/chain1d/chain1d.ini -o %s --overwrite "
                        "--quiet --set output.every=0 --set system.steps=5 --set solver.sweep=%s",
                 cdlab_bin(), again, orders[k]);
        ck_assert_int_eq(run_shell(cmd), 0);
        h5in *h;
        diag e;
        double v = NAN;
        ck_assert_int_eq(h5in_open(&h, again, &e), CDLAB_OK);
        ck_assert_int_eq(h5in_attr_double(h, "/parallel", "q_change_per_boundary_fraction", &v, &e),
                         CDLAB_OK);
        h5in_close(h);
        ck_assert_msg(v == rule[k], "%s: %g", orders[k], v);
    }
    for (int k = 0; k < 3; k++)
        remove_output(files[k]);
}
END_TEST

/* A CD piston (tests/memcheck/cd.ini: 60 spheres under a loaded piston, the local criterion)
 * with the colored sweep, 300 steps (the piston rests on the spheres from step 100 on): 3 ranks
 * write the one-process file bit for bit (the piston's position, velocity and contact force,
 * the particles, the sweeps the criterion needed), with at most 2 reductions a step in rank
 * order through rank 0 (the contacts' figures and the step's record; measured 2.0 with 133
 * sweeps a step: the piston's velocity after each colour goes through a tree, where it took
 * 1,177 reductions a step through rank 0 over the first 60 steps), and so do they with the
 * colouring in hashed order; the domain-wise random sweep completes on 2 ranks with the piston
 * resting on the pile (force within 1% of its load). */
START_TEST(determinism_cd_piston_colored_3_ranks)
{
    char one[] = "/tmp/cdlab_mpip1XXXXXX", many[] = "/tmp/cdlab_mpipPXXXXXX";
    int fd = mkstemp(one);
    close(fd);
    fd = mkstemp(many);
    close(fd);
    const char *sets = "--set system.steps=300 --set output.every=100";
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s run memcheck/cd.ini -o %s --overwrite --quiet --set solver.sweep=colored %s",
             cdlab_bin(), one, sets);
    ck_assert_int_eq(run_shell(cmd), 0);
    snprintf(cmd, sizeof cmd,
             MPIRUN "-np 3 %s run memcheck/cd.ini -o %s --overwrite --quiet "
                    "--set solver.sweep=colored %s",
             cdlab_bin(), many, sets);
    ck_assert_int_eq(run_shell(cmd), 0);
    const char *exact[] = {"/series/piston_position",
                           "/series/piston_velocity",
                           "/series/piston_force",
                           "/series/sweeps",
                           "/series/residual",
                           "/series/stress",
                           "/series/stress_walls",
                           "/snapshots/00000300/position",
                           "/snapshots/00000300/contacts/force",
                           "/checkpoints/00000300/walls",
                           NULL};
    same_data(one, many, exact);
    double ordered = rank_figure_per_step(many, "step_ordered_reductions");
    ck_assert_msg(ordered > 0.0 && ordered <= 2.0, "%g rank-order reductions a step", ordered);
    /* the colouring in hashed order: the pistons' chains before the rounds all the same */
    const char *hashed = "--set solver.sweep=colored --set solver.color_priority=hashed";
    snprintf(cmd, sizeof cmd, "%s run memcheck/cd.ini -o %s --overwrite --quiet %s %s", cdlab_bin(),
             one, hashed, sets);
    ck_assert_int_eq(run_shell(cmd), 0);
    snprintf(cmd, sizeof cmd, MPIRUN "-np 3 %s run memcheck/cd.ini -o %s --overwrite --quiet %s %s",
             cdlab_bin(), many, hashed, sets);
    ck_assert_int_eq(run_shell(cmd), 0);
    same_data(one, many, exact);
    snprintf(cmd, sizeof cmd, MPIRUN "-np 2 %s run memcheck/cd.ini -o %s --overwrite --quiet %s",
             cdlab_bin(), many, sets);
    ck_assert_int_eq(run_shell(cmd), 0);
    double *f;
    long n;
    diag e;
    ck_assert_int_eq(h5in_read_doubles(many, "/series/piston_force", &f, &n, &e), CDLAB_OK);
    ck_assert_msg(fabs(f[n - 1] + 20.0) < 0.2, "piston force %g, load 20", f[n - 1]);
    free(f);
    remove_output(one);
    remove_output(many);
}
END_TEST

/* The contacts the detection missed (a pile settling with dt = 0.06: 5 pairs closed by more than
 * the gap in a step) are counted on 3 ranks as in one process: each once, on its body 1's
 * owner, from the halo copies' positions and velocities as from the particles'. */
START_TEST(determinism_cd_missed_contacts_3_ranks)
{
    char path[2][32] = {"/tmp/cdlab_mpim1XXXXXX", "/tmp/cdlab_mpimPXXXXXX"};
    long long missed[2];
    double overlap[2];
    for (int k = 0; k < 2; k++) {
        int fd = mkstemp(path[k]);
        close(fd);
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 "%s%s run memcheck/cd.ini -o %s --overwrite --quiet --set solver.sweep=colored "
                 "--set system.dt=0.06 --set system.steps=20 2>/dev/null",
                 k ? MPIRUN "-np 3 " : "", cdlab_bin(), path[k]);
        ck_assert_int_eq(run_shell(cmd), 0);
        h5in *h;
        diag e;
        ck_assert_int_eq(h5in_open(&h, path[k], &e), CDLAB_OK);
        ck_assert_int_eq(h5in_attr_int(h, "/summary", "missed_contacts", &missed[k], &e), CDLAB_OK);
        ck_assert_int_eq(h5in_attr_double(h, "/summary", "missed_overlap", &overlap[k], &e),
                         CDLAB_OK);
        h5in_close(h);
    }
    ck_assert_msg(
        missed[0] == 5 && missed[1] == missed[0] && overlap[1] == overlap[0] && overlap[0] > 0.04,
        "missed %lld / %lld, overlap %.17g / %.17g", missed[0], missed[1], overlap[0], overlap[1]);
    remove_output(path[0]);
    remove_output(path[1]);
}
END_TEST

/* The global criterion (eq. 36) with the colored sweep on 3 ranks (tests/mpi/cdpile.ini, 250
 * steps, epsilon 1e-4, at most 200 sweeps): its sums of |R| are exact over the ranks, so every
 * step takes the one-process number of sweeps and the file is the one-process file bit for bit
 * (sweeps, residuals, convergence, positions, contact forces). */
START_TEST(determinism_cd_global_criterion_3_ranks)
{
    char one[] = "/tmp/cdlab_mpigc1XXXXXX", many[] = "/tmp/cdlab_mpigcPXXXXXX";
    int fd = mkstemp(one);
    close(fd);
    fd = mkstemp(many);
    close(fd);
    const char *sets = "--set solver.criterion=global --set solver.epsilon=1e-4 "
                       "--set solver.iterations=200 --set system.steps=250";
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s run mpi/cdpile.ini -o %s --overwrite --quiet %s", cdlab_bin(),
             one, sets);
    ck_assert_int_eq(run_shell(cmd), 0);
    snprintf(cmd, sizeof cmd, MPIRUN "-np 3 %s run mpi/cdpile.ini -o %s --overwrite --quiet %s",
             cdlab_bin(), many, sets);
    ck_assert_int_eq(run_shell(cmd), 0);
    const char *exact[] = {"/series/sweeps",
                           "/series/residual",
                           "/series/converged",
                           "/series/kinetic_energy",
                           "/snapshots/00000250/position",
                           "/snapshots/00000250/contacts/force",
                           NULL};
    same_data(one, many, exact);
    /* the criterion did work: more than one sweep in some step, fewer than the cap in most */
    double *sw;
    long n;
    diag e;
    ck_assert_int_eq(h5in_read_doubles(one, "/series/sweeps", &sw, &n, &e), CDLAB_OK);
    double most = 0.0;
    for (long k = 0; k < n; k++)
        most = fmax(most, sw[k]);
    ck_assert_double_gt(most, 1.0);
    free(sw);
    remove_output(one);
    remove_output(many);
}
END_TEST

/* The colored CD sweep on 3 ranks, 30 steps of the falling pile (the quick suite's distributed
 * CD run; the long ones are slow tests): the one-process file bit for bit. */
START_TEST(determinism_cd_colored_short_3_ranks)
{
    char one[] = "/tmp/cdlab_mpics1XXXXXX", many[] = "/tmp/cdlab_mpicsPXXXXXX";
    int fd = mkstemp(one);
    close(fd);
    fd = mkstemp(many);
    close(fd);
    const char *sets = "--set system.steps=30 --set output.every=10";
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s run mpi/cdpile.ini -o %s --overwrite --quiet %s", cdlab_bin(),
             one, sets);
    ck_assert_int_eq(run_shell(cmd), 0);
    snprintf(cmd, sizeof cmd, MPIRUN "-np 3 %s run mpi/cdpile.ini -o %s --overwrite --quiet %s",
             cdlab_bin(), many, sets);
    ck_assert_int_eq(run_shell(cmd), 0);
    /* the contacts the file holds are those gathered on rank 0 (rank 0's own are a part) */
    const char *exact[] = {"/series/residual",
                           "/series/kinetic_energy",
                           "/series/stress",
                           "/snapshots/00000030/position",
                           "/snapshots/00000030/velocity",
                           "/snapshots/00000030/contacts/pair",
                           "/snapshots/00000030/contacts/force",
                           NULL};
    same_data(one, many, exact);
    remove_output(one);
    remove_output(many);
}
END_TEST

/* Messages to the neighbouring boxes only (issue 66): the 1D wave test's chain of 50 disks on 4
 * ranks, cut into 4 boxes along the line, so that a box has 1 or 2 neighbours: with the colored
 * sweep, the domain-wise random sweep and DEM (the chain's DEM twin), no rank sends to more than
 * 2 ranks in one exchange of the steps (/parallel/ranks/exchange_partners), and a rank's
 * messages a step stay within its calls times the larger of its partners plus a barrier's
 * log2 P and a tree's 2 log2 P, plus P - 1 for each reduction in rank order (rank 0's share). */
START_TEST(io_mpi_neighbour_messages_4_ranks)
{
    char out[] = "/tmp/cdlab_mpinbXXXXXX";
    int fd = mkstemp(out);
    close(fd);
    const char *modes[] = {"--set solver.sweep=colored --set system.steps=100",
                           "--set solver.sweep=random --set system.steps=100",
                           "--set system.mode=dem --set system.dt=0.01 --set system.steps=300"};
    const int P = 4;
    const double lg = 2.0; /* log2 P */
    for (int m = 0; m < 3; m++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 MPIRUN "-np %d %s run ../experiments/chain1d/chain1d.ini -o %s --overwrite "
                        "--quiet %s",
                 P, cdlab_bin(), out, modes[m]);
        ck_assert_int_eq(run_shell(cmd), 0);
        const char *names[] = {"exchange_partners", "step_messages", "step_calls",
                               "step_ordered_reductions", "steps"};
        double *v[5];
        long n[5];
        diag e;
        for (int k = 0; k < 5; k++) {
            char ds[96];
            snprintf(ds, sizeof ds, "/parallel/ranks/%s", names[k]);
            ck_assert_msg(h5in_read_doubles(out, ds, &v[k], &n[k], &e) == CDLAB_OK, "%s", e.msg);
            ck_assert_int_eq(n[k], P);
        }
        for (int r = 0; r < P; r++) {
            double partners = v[0][r], steps = v[4][r];
            ck_assert_msg(partners >= 1.0 && partners <= 2.0,
                          "%s: rank %d sent to %g ranks at once", modes[m], r, partners);
            double bound = v[2][r] * fmax(partners + lg, 2.0 * lg) + v[3][r] * (P - 1);
            ck_assert_msg(v[1][r] <= bound, "%s: rank %d, %g messages a step, over %g", modes[m], r,
                          v[1][r] / steps, bound / steps);
        }
        for (int k = 0; k < 5; k++)
            free(v[k]);
    }
    remove_output(out);
}
END_TEST

/* Rank 0 takes the gathered output a slice of 65,536 ids at a time (exchange_gather_world): the
 * DEM chute tiled 4 x 4 (65,600 spheres: two slices, 3 steps) and the CD chute tiled 4 x 4
 * (colored, hashed order, 2 steps) on 2 ranks write the one-process snapshot and checkpoint bit
 * for bit, the pairs across the slices' boundary included. */
START_TEST(determinism_mpi_gather_slices_2_ranks)
{
    char one[] = "/tmp/cdlab_mpig1XXXXXX", many[] = "/tmp/cdlab_mpigPXXXXXX";
    int fd = mkstemp(one);
    close(fd);
    fd = mkstemp(many);
    close(fd);
    const char *runs[2][2] = {{"../bench/chute.ini", "--set system.steps=3 --set output.every=3"},
                              {"../bench/chute_cd.ini",
                               "--set system.steps=2 --set output.every=2 --set "
                               "solver.sweep=colored --set solver.color_priority=hashed --set "
                               "solver.criterion=fixed --set solver.iterations=10"}};
    const char *tiles = "--set particles.tile=4,4,1 --set particles.count=65600 --set "
                        "system.box_max=40,40,42";
    const char *dem[] = {"/snapshots/00000003/position",      "/snapshots/00000003/velocity",
                         "/snapshots/00000003/contacts/pair", "/snapshots/00000003/contacts/force",
                         "/checkpoints/00000003/contacts",    "/checkpoints/00000003/x",
                         "/checkpoints/00000003/dem_F",       NULL};
    const char *cd[] = {"/snapshots/00000002/position",
                        "/snapshots/00000002/velocity",
                        "/snapshots/00000002/contacts/pair",
                        "/snapshots/00000002/contacts/force",
                        "/checkpoints/00000002/x",
                        "/checkpoints/00000002/contacts",
                        NULL};
    for (int k = 0; k < 2; k++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "%s run %s -o %s --overwrite --quiet %s %s", cdlab_bin(),
                 runs[k][0], one, tiles, runs[k][1]);
        ck_assert_int_eq(run_shell(cmd), 0);
        snprintf(cmd, sizeof cmd, MPIRUN "-np 2 %s run %s -o %s --overwrite --quiet %s %s",
                 cdlab_bin(), runs[k][0], many, tiles, runs[k][1]);
        ck_assert_int_eq(run_shell(cmd), 0);
        same_data(one, many, k == 0 ? dem : cd);
    }
    remove_output(one);
    remove_output(many);
}
END_TEST

/* The colouring the ranks make (cd/nscd/cd_dist_color.c) where it needs more than 64 colours
 * (tests/mpi/cdhub.ini: 150 spheres hitting one sphere, 150 contacts at one body, so that the
 * ranks' masks widen), in key and in hashed order: 2 and 3 ranks write the one-process file
 * bit for bit, and every step's row records the colouring's rounds (at least one; on 2 ranks the
 * hub's contacts are split between them, so its chain crosses ranks and takes more). */
START_TEST(determinism_cd_colored_hub_2_and_3_ranks)
{
    char one[] = "/tmp/cdlab_mpih1XXXXXX", many[] = "/tmp/cdlab_mpihPXXXXXX";
    int fd = mkstemp(one);
    close(fd);
    fd = mkstemp(many);
    close(fd);
    const char *exact[] = {"/series/kinetic_energy",
                           "/series/residual",
                           "/snapshots/00000020/position",
                           "/snapshots/00000020/velocity",
                           "/snapshots/00000020/angular_velocity",
                           "/snapshots/00000010/contacts/pair",
                           "/snapshots/00000010/contacts/force",
                           NULL};
    for (int hashed = 0; hashed <= 1; hashed++) {
        const char *prio = hashed ? "hashed" : "key";
        char cmd[1024];
        snprintf(cmd, sizeof cmd,
                 "%s run mpi/cdhub.ini -o %s --overwrite --quiet --set solver.color_priority=%s",
                 cdlab_bin(), one, prio);
        ck_assert_int_eq(run_shell(cmd), 0);
        for (int P = 2; P <= 3; P++) {
            snprintf(cmd, sizeof cmd,
                     MPIRUN "-np %d %s run mpi/cdhub.ini -o %s --overwrite --quiet --set "
                            "solver.color_priority=%s",
                     P, cdlab_bin(), many, prio);
            ck_assert_int_eq(run_shell(cmd), 0);
            same_data(one, many, exact);
            double *r = NULL;
            long n = 0;
            diag e;
            ck_assert_msg(h5in_read_doubles(many, "/series/parallel/colour_rounds", &r, &n, &e) ==
                              CDLAB_OK,
                          "%s", e.msg);
            ck_assert_int_eq(n, 21); /* rows of steps 0 .. 20 */
            for (long k = 1; k < n; k++)
                ck_assert_msg(r[k] >= (P == 2 ? 2.0 : 1.0), "%s, %d ranks, step %ld: %g rounds",
                              prio, P, k, r[k]);
            free(r);
        }
    }
    remove_output(one);
    remove_output(many);
}
END_TEST

/* A DEM piston (tests/memcheck/dem.ini: 60 spheres under a loaded piston, Kuhn law, dashpots,
 * 1,500 steps): 3 ranks write the one-process file bit for bit (the piston's position, velocity
 * and contact force, the energy ledger, the particles, the checkpoint with the wall path); that
 * checkpoint continued by 2 ranks ends where the one-process continuation does, ledger
 * included. */
START_TEST(determinism_dem_piston_3_ranks)
{
    char one[] = "/tmp/cdlab_mpidp1XXXXXX", many[] = "/tmp/cdlab_mpidpPXXXXXX";
    char c1[] = "/tmp/cdlab_mpidc1XXXXXX", c2[] = "/tmp/cdlab_mpidc2XXXXXX";
    char *files[4] = {one, many, c1, c2};
    for (int k = 0; k < 4; k++) {
        int fd = mkstemp(files[k]);
        close(fd);
    }
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s run memcheck/dem.ini -o %s --overwrite --quiet", cdlab_bin(),
             one);
    ck_assert_int_eq(run_shell(cmd), 0);
    snprintf(cmd, sizeof cmd, MPIRUN "-np 3 %s run memcheck/dem.ini -o %s --overwrite --quiet",
             cdlab_bin(), many);
    ck_assert_int_eq(run_shell(cmd), 0);
    const char *exact[] = {"/series/piston_position",
                           "/series/piston_velocity",
                           "/series/piston_force",
                           "/series/energy/kinetic_piston",
                           "/series/energy/work_piston",
                           "/series/mean_overlap",
                           "/snapshots/00001500/position",
                           "/snapshots/00001500/contacts/force",
                           "/checkpoints/00001500/walls",
                           "/checkpoints/00001500/dem_piston_F",
                           "/checkpoints/00001500/dem_wall_path",
                           NULL};
    same_data(one, many, exact);
    same_data(one, many, dem_ledger_series);
    const char *more = "--set system.steps=2000";
    snprintf(cmd, sizeof cmd, "%s run memcheck/dem.ini -o %s --overwrite --quiet %s --restart %s",
             cdlab_bin(), c1, more, one);
    ck_assert_int_eq(run_shell(cmd), 0);
    snprintf(cmd, sizeof cmd,
             MPIRUN "-np 2 %s run memcheck/dem.ini -o %s --overwrite --quiet %s --restart %s",
             cdlab_bin(), c2, more, many);
    ck_assert_int_eq(run_shell(cmd), 0);
    const char *cont[] = {"/series/piston_position", "/series/mean_overlap",
                          "/snapshots/00002000/position", "/checkpoints/00002000/walls", NULL};
    same_data(c1, c2, cont);
    same_data(c1, c2, dem_ledger_series);
    for (int k = 0; k < 4; k++)
        remove_output(files[k]);
}
END_TEST

/* Bonds and deformable discs (tests/mpi/bonded.ini: a bonded block of 240 deformable discs
 * thrown onto a floor, periodic along x, 1,200 steps, 144 neighbour-list rebuilds, 141 of 442
 * bonds broken by the impact; particles migrate between ranks with their bonds and stresses): 2,
 * 3 and 4 ranks write the one-process file bit for bit (particles, discs' stresses and
 * ellipses, contact forces, the bond counts, the ledger with the discs' strain energy, the
 * checkpoint's bonds and stresses) and its XDMF sidecar; the one-process checkpoint continued by 3
 * ranks and the 2-rank checkpoint continued by one process end where the one-process continuation
 * does. */
START_TEST(determinism_dem_bonds_deformable_1_to_4_ranks)
{
    char one[] = "/tmp/cdlab_mpib1XXXXXX", many[] = "/tmp/cdlab_mpibPXXXXXX";
    char two[] = "/tmp/cdlab_mpib2XXXXXX", c1[] = "/tmp/cdlab_mpibc1XXXXXX";
    char cP[] = "/tmp/cdlab_mpibcPXXXXXX";
    char *files[5] = {one, many, two, c1, cP};
    for (int k = 0; k < 5; k++) {
        int fd = mkstemp(files[k]);
        close(fd);
    }
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s run mpi/bonded.ini -o %s --overwrite --quiet", cdlab_bin(), one);
    ck_assert_int_eq(run_shell(cmd), 0);
    const char *exact[] = {"/snapshots/00001200/position",
                           "/snapshots/00001200/velocity",
                           "/snapshots/00001200/angular_velocity",
                           "/snapshots/00001200/stress",
                           "/snapshots/00001200/ellipse_a",
                           "/snapshots/00001200/ellipse_axis",
                           "/snapshots/00001200/contacts/pair",
                           "/snapshots/00001200/contacts/force",
                           "/series/bonds/intact",
                           "/series/bonds/broken",
                           "/series/energy/elastic_particles",
                           "/series/mean_overlap",
                           "/series/active_contacts",
                           "/series/probe_position",
                           "/checkpoints/00001200/dem_bonds",
                           "/checkpoints/00001200/dem_bonds_broken",
                           "/checkpoints/00001200/dem_disc_stress",
                           "/checkpoints/00001200/dem_energy_exact",
                           NULL};
    for (int np = 2; np <= 4; np++) {
        snprintf(cmd, sizeof cmd, MPIRUN "-np %d %s run mpi/bonded.ini -o %s --overwrite --quiet",
                 np, cdlab_bin(), np == 2 ? two : many);
        ck_assert_int_eq(run_shell(cmd), 0);
        same_data(one, np == 2 ? two : many, exact);
        same_data(one, np == 2 ? two : many, dem_ledger_series);
        same_sidecar(one, np == 2 ? two : many); /* the XDMF sidecar (rank 0 writes it) */
    }
    /* the impact broke bonds, and some stayed */
    double *b;
    long n;
    diag e;
    ck_assert_int_eq(h5in_read_doubles(one, "/series/bonds/broken", &b, &n, &e), CDLAB_OK);
    ck_assert_double_gt(b[n - 1], 50.0);
    free(b);
    const char *cont[] = {"/snapshots/00001500/position",
                          "/snapshots/00001500/stress",
                          "/series/bonds/intact",
                          "/checkpoints/00001500/dem_bonds",
                          "/series/energy/elastic_particles",
                          NULL};
    const char *more = "--set system.steps=1500";
    snprintf(cmd, sizeof cmd, "%s run mpi/bonded.ini -o %s --overwrite --quiet %s --restart %s",
             cdlab_bin(), c1, more, one);
    ck_assert_int_eq(run_shell(cmd), 0);
    snprintf(cmd, sizeof cmd,
             MPIRUN "-np 3 %s run mpi/bonded.ini -o %s --overwrite --quiet %s --restart %s",
             cdlab_bin(), cP, more, one);
    ck_assert_int_eq(run_shell(cmd), 0);
    same_data(c1, cP, cont);
    same_data(c1, cP, dem_ledger_series);
    snprintf(cmd, sizeof cmd, "%s run mpi/bonded.ini -o %s --overwrite --quiet %s --restart %s",
             cdlab_bin(), cP, more, two);
    ck_assert_int_eq(run_shell(cmd), 0);
    same_data(c1, cP, cont);
    for (int k = 0; k < 5; k++)
        remove_output(files[k]);
}
END_TEST

/* The kinematic drive (tests/memcheck/dem.ini driven: a rigid rotation and an affine
 * deformation, 60 steps, against a fixed piston): 3 and 2 ranks write the one-process file bit
 * for bit (positions, orientations, contact forces, stress, the piston's contact force). */
START_TEST(determinism_dem_drive_2_and_3_ranks)
{
    char one[] = "/tmp/cdlab_mpidr1XXXXXX", many[] = "/tmp/cdlab_mpidrPXXXXXX";
    int fd = mkstemp(one);
    close(fd);
    fd = mkstemp(many);
    close(fd);
    const char *drives[] = {"--set drive.motion=rotation --set 'drive.rotation=0 0.01 0.02'",
                            "--set drive.motion=affine "
                            "--set 'drive.gradient=1e-3 0 0 0 -1e-3 0 0 0 0'"};
    const char *exact[] = {"/snapshots/00000060/position",
                           "/snapshots/00000060/orientation",
                           "/snapshots/00000060/contacts/force",
                           "/series/stress",
                           "/series/stress_walls",
                           "/series/piston_force",
                           "/checkpoints/00000060/walls",
                           NULL};
    for (int k = 0; k < 2; k++) {
        char cmd[1024];
        const char *sets = "--set system.steps=60 --set output.every=20";
        snprintf(cmd, sizeof cmd, "%s run memcheck/dem.ini -o %s --overwrite --quiet %s %s",
                 cdlab_bin(), one, sets, drives[k]);
        ck_assert_int_eq(run_shell(cmd), 0);
        snprintf(cmd, sizeof cmd,
                 MPIRUN "-np %d %s run memcheck/dem.ini -o %s --overwrite --quiet %s %s", 3 - k,
                 cdlab_bin(), many, sets, drives[k]);
        ck_assert_int_eq(run_shell(cmd), 0);
        same_data(one, many, exact);
    }
    remove_output(one);
    remove_output(many);
}
END_TEST

/* Ctrl-C under mpirun (SIGINT to mpirun, which sends SIGTERM to the ranks): every rank stops after
 * the same step, the file is closed with a snapshot and a checkpoint of that step and says it was
 * interrupted; no hang (timeout). Its checkpoint continued by 3 ranks for 100 steps ends where
 * one process continuing it does, bit for bit. */
START_TEST(errors_mpi_interrupt_writes_checkpoint)
{
    char out[] = "/tmp/cdlab_mpiiXXXXXX", rc[] = "/tmp/cdlab_mpiircXXXXXX";
    char c1[] = "/tmp/cdlab_mpiic1XXXXXX", cP[] = "/tmp/cdlab_mpiicPXXXXXX";
    char *files[4] = {out, rc, c1, cP};
    for (int k = 0; k < 4; k++) {
        int fd = mkstemp(files[k]);
        close(fd);
    }
    unlink(out);
    /* Ctrl-C in a terminal reaches mpirun alone (OpenMPI puts the ranks in process groups of
     * their own). timeout --foreground passes the SIGINT on to mpirun only: without it timeout
     * also signals its whole process group, mpirun gets SIGINT twice and kills the ranks hard,
     * which is what a second Ctrl-C does. */
    char cmd[1400];
    snprintf(cmd, sizeof cmd,
             "(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
             "ASAN_OPTIONS=halt_on_error=1:detect_leaks=0 "
             "timeout --foreground 120 mpirun --oversubscribe -np 2 %s run mpi/pile.ini -o %s "
             "--set system.steps=100000000 > /dev/null 2>&1 & p=$!; sleep 3; kill -INT $p; "
             "wait $p; echo $? > %s)",
             cdlab_bin(), out, rc);
    run_shell(cmd);
    FILE *f = fopen(rc, "r");
    int code = -1;
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fscanf(f, "%d", &code), 1);
    fclose(f);
    ck_assert_int_ne(code, 0);   /* not completed */
    ck_assert_int_ne(code, 124); /* not the timeout: the ranks stopped */
    char *said;
    diag e;
    ck_assert_msg(h5in_read_attr_string(out, "/summary", "status", &said, &e) == CDLAB_OK, "%s",
                  e.msg);
    ck_assert_ptr_nonnull(strstr(said, "interrupted by signal"));
    long step = -1;
    ck_assert_int_eq(sscanf(strstr(said, "after step"), "after step %ld", &step), 1);
    free(said);
    ck_assert_int_gt(step, 0);
    char ck[64];
    snprintf(ck, sizeof ck, "/checkpoints/%08ld/x", step);
    const char *have[] = {ck, NULL};
    same_data(out, out, have); /* the checkpoint of the step it stopped at is there */
    snprintf(cmd, sizeof cmd,
             "%s run mpi/pile.ini -o %s --overwrite --quiet --set system.steps=%ld --restart %s",
             cdlab_bin(), c1, step + 100, out);
    ck_assert_int_eq(run_shell(cmd), 0);
    snprintf(cmd, sizeof cmd,
             MPIRUN "-np 3 %s run mpi/pile.ini -o %s --overwrite --quiet --set system.steps=%ld "
                    "--restart %s",
             cdlab_bin(), cP, step + 100, out);
    ck_assert_int_eq(run_shell(cmd), 0);
    char pos[64];
    snprintf(pos, sizeof pos, "/snapshots/%08ld/position", step + 100);
    const char *cont[] = {pos, NULL};
    same_data(c1, cP, cont);
    same_data(c1, cP, dem_ledger_series);
    for (int k = 0; k < 4; k++)
        remove_output(files[k]);
}
END_TEST

Suite *mpi_suite(void)
{
    Suite *s = suite_create("mpi");
    TCase *t = tcase_create("mpi");
    tcase_set_timeout(t, TEST_TIMEOUT_SECONDS);
    tcase_add_test(t, errors_mpi_refusals_once);
    tcase_add_test(t, io_mpi_banner_names_ranks);
    tcase_add_test(t, determinism_mpi_run_matches_one_process);
    tcase_add_test(t, determinism_mpi_spatial_order);
    tcase_add_test(t, errors_mpi_failure_stops_all_ranks);
    tcase_add_test(t, determinism_mpi_chute_tile_2_to_4_ranks);
    tcase_add_test(t, io_mpi_rank_figures);
    tcase_add_test(t, io_mpi_job_of_one_is_one_process);
    tcase_add_test(t, io_mpi_migration_and_halo_1_to_4_ranks);
    tcase_add_test(t, io_mpi_cuts_from_shares_1_to_4_ranks);
    tcase_add_test(t, io_mpi_reductions_1_to_4_ranks);
    tcase_add_test(t, determinism_dem_distributed_bit_identical_1_to_4_ranks);
    tcase_add_test(t, determinism_dem_drive_2_and_3_ranks);
    tcase_add_test(t, errors_mpi_interrupt_writes_checkpoint);
    tcase_add_test(t, determinism_cd_colored_short_3_ranks);
    tcase_add_test(t, determinism_cd_colored_hub_2_and_3_ranks);
    tcase_add_test(t, io_mpi_neighbour_messages_4_ranks);
    tcase_add_test(t, determinism_mpi_gather_slices_2_ranks);
    suite_add_tcase(s, t);
    /* the runs of thousands of collectives (make test-slow, CI): beside two CPU-bound jobs on
     * the 2-core machine each took 1.5 to 6 minutes (a collective waits for ranks the scheduler
     * has not run); the quick suite keeps a short colored CD run and the DEM runs */
    TCase *slow = tcase_create("mpi_long");
    tcase_set_timeout(slow, TEST_TIMEOUT_SECONDS);
    tcase_set_tags(slow, "slow");
    tcase_add_test(slow, determinism_cd_colored_1_to_4_ranks);
    tcase_add_test(slow, physics_cd_domain_wise_wave_2_and_4_ranks);
    tcase_add_test(slow, determinism_cd_piston_colored_3_ranks);
    tcase_add_test(slow, determinism_dem_bonds_deformable_1_to_4_ranks);
    tcase_add_test(slow, determinism_cd_global_criterion_3_ranks);
    tcase_add_test(slow, determinism_dem_piston_3_ranks);
    tcase_add_test(slow, determinism_cd_missed_contacts_3_ranks);
    suite_add_tcase(s, slow);
    return s;
}

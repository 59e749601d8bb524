/* Under mpirun (OpenMPI, started as a subprocess): a job of one rank runs as one process; a job of
 * more ranks is refused on every rank with one message and no output (distributed runs are not
 * built yet: docs/parallel.md); particles migrate and are copied into halos between 1-4 ranks
 * exactly as the global truth says; the distributed DEM step gives the one-process state bit
 * for bit; nothing hangs (every command has a timeout). */
#include "suites.h"

#include "h5io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* mpirun as root needs the OMPI_ALLOW variables. Under check-asan the leak check is off for
 * the processes mpirun starts: OpenMPI unloads its plugins at MPI_Finalize, and LeakSanitizer
 * then reports their allocations from "unknown modules" that no suppression can name (cdlab's
 * own allocations are leak-checked by every other test, in the same code paths). */
#define MPIRUN                                                                                     \
    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "                                   \
    "ASAN_OPTIONS=halt_on_error=1:detect_leaks=0 OMPI_MCA_mpi_yield_when_idle=1 "                  \
    "timeout 120 mpirun --oversubscribe "

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

START_TEST(errors_mpi_job_of_two_refused_once)
{
    char out[] = "/tmp/cdlab_mpiXXXXXX", err[] = "/tmp/cdlab_mpierrXXXXXX";
    int fd = mkstemp(out);
    close(fd);
    unlink(out); /* the run must not create it */
    fd = mkstemp(err);
    close(fd);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, MPIRUN "-np 2 %s run memcheck/dem.ini -o %s > /dev/null 2> %s",
             cdlab_bin(), out, err);
    ck_assert_int_eq(run_shell(cmd), 2);
    ck_assert_int_eq(count_in_file(err, "are not built yet"), 1);
    ck_assert_int_ne(access(out, F_OK), 0);
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

/* cdlab-lab exchange-selftest (tools/cdlab_lab.c) on 1, 2, 3, 4 ranks, open and x-y periodic:
 * 3,000 particles scattered over the ranks migrate to the owners of a recursive bisection, three
 * times as everything moves and the bisection follows; every rank then holds exactly its
 * particles in id order with their records bit for bit, each id once over all ranks; the halo
 * copies are exactly those a brute-force search expects, bit for bit, also after an update. */
START_TEST(io_mpi_migration_and_halo_1_to_4_ranks)
{
    char lab[512];
    snprintf(lab, sizeof lab, "%s-lab", cdlab_bin());
    for (int np = 1; np <= 4; np++)
        for (int periodic = 0; periodic < 2; periodic++) {
            char cmd[1024];
            snprintf(cmd, sizeof cmd, MPIRUN "-np %d %s exchange-selftest %s > /dev/null", np, lab,
                     periodic ? "periodic" : "");
            ck_assert_msg(run_shell(cmd) == 0, "%d ranks%s: the self-test failed", np,
                          periodic ? ", periodic" : "");
        }
}
END_TEST

/* cdlab-lab dem-selftest (tools/cdlab_lab.c, cd/dem_dist.c) on 1, 2, 3, 4 ranks: a stirred,
 * periodic-x-y pile of 600 spheres falling on a floor (Kuhn law, friction, dashpots), 150 steps
 * with 9 neighbour-list rebuilds, particles migrating between ranks at each (302 to 482
 * migrations): every particle's position, velocity, angular velocity and orientation equal the
 * one-process run's bit for bit, each owned once. (More ranks than the machine's 2 cores are
 * slow: a rank waiting in a collective for a descheduled one; 150 steps keep it to seconds.) */
START_TEST(determinism_dem_distributed_bit_identical_1_to_4_ranks)
{
    char lab[512];
    snprintf(lab, sizeof lab, "%s-lab", cdlab_bin());
    for (int np = 1; np <= 4; np++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, MPIRUN "-np %d %s dem-selftest 150 > /dev/null", np, lab);
        ck_assert_msg(run_shell(cmd) == 0, "%d ranks: the distributed pile differs", np);
    }
}
END_TEST

Suite *mpi_suite(void)
{
    Suite *s = suite_create("mpi");
    TCase *t = tcase_create("mpi");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, errors_mpi_job_of_two_refused_once);
    tcase_add_test(t, io_mpi_job_of_one_is_one_process);
    tcase_add_test(t, io_mpi_migration_and_halo_1_to_4_ranks);
    tcase_add_test(t, determinism_dem_distributed_bit_identical_1_to_4_ranks);
    suite_add_tcase(s, t);
    return s;
}

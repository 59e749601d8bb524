/* cdlab-lab: prints the data of the contact-law experiments as CSV (experiments/kuhn,
 * experiments/sliding_pair). The same routines (cd/dem/dem_lab.c) are asserted by the Check tests.
 *
 *   cdlab-lab fig4 [Z1/Z0]     final force angle vs movement (Kuhn et al. Fig. 4)
 *   cdlab-lab fig6             stress after a 90 deg rigid rotation, four variants (Fig. 6)
 *   cdlab-lab sliding-pair     normal and shear force over time (docs/physics.md)
 * (The MPI self-tests that were here are tests/mpi_selftest.c.) */
#include "build_info.h"
#include "cdlab.h"
#include "comm.h"
#include "config.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int fig4(int argc, char **argv)
{
    double z1 = argc > 0 ? atof(argv[0]) * 1e-3 : 1e-3;
    /* k_n = 1e6, k_t = 8e5, mu = 0.5, overlap 1e-3 -> z1; movement orthogonal to the initial
     * force at the friction limit; reference: 1e5 elastic-plastic sub-steps */
    printf("ratio,angle_ref_deg,angle_kuhn_deg,angle_conventional_deg,mag_ref,mag_kuhn,mag_"
           "conventional\n");
    for (int k = 0; k <= 60; k++) {
        double ratio = pow(10.0, -2.0 + 3.0 * k / 60.0);
        lab_fig4 f = lab_kuhn_fig4(ratio, 1e-3, z1, 100000);
        printf("%.6g,%.6f,%.6f,%.6f,%.9g,%.9g,%.9g\n", f.ratio, f.angle_ref, f.angle_kuhn,
               f.angle_conv, f.mag_ref, f.mag_kuhn, f.mag_conv);
    }
    return 0;
}

static int fig6(int increments)
{
    const char *names[4] = {"no adjustment", "projection only", "twirl only",
                            "projection and twirl"};
    int v[4][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
    printf("variant,contacts,error_rel,s00,s01,s02,s10,s11,s12,s20,s21,s22\n");
    for (int k = 0; k < 4; k++) {
        lab_fig6 r;
        diag err;
        if (lab_kuhn_fig6(v[k][0], v[k][1], (int)increments, &r, &err) != CDLAB_OK) {
            fprintf(stderr, "cdlab-lab: %s\n", err.msg);
            return 1;
        }
        if (k == 0) {
            printf("original,%d,0", r.contacts);
            for (int a = 0; a < 9; a++)
                printf(",%.6g", r.sigma0[a / 3][a % 3]);
            printf("\n");
        }
        printf("%s,%d,%.6g", names[k], r.contacts, r.error);
        for (int a = 0; a < 9; a++)
            printf(",%.6g", r.sigma_back[a / 3][a % 3]);
        printf("\n");
    }
    return 0;
}

static int sliding_pair(void)
{
    static lab_pair_row rows[LAB_PAIR_ROWS];
    diag err;
    if (lab_sliding_pair(rows, &err) != CDLAB_OK) {
        fprintf(stderr, "cdlab-lab: %s\n", err.msg);
        return 1;
    }
    printf("t_s,x_m,overlap_m,normal_force_N,shear_force_N,sliding\n");
    for (int k = 0; k < LAB_PAIR_ROWS; k++)
        printf("%.17g,%.17g,%.17g,%.17g,%.17g,%d\n", rows[k].t, rows[k].x, rows[k].delta,
               rows[k].fn, rows[k].fs, rows[k].sliding);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: cdlab-lab COMMAND\n"
               "  fig4 [Z1/Z0]              final force angle vs movement (Kuhn et al. Fig. 4),\n"
               "                            CSV; Z1/Z0 the overlap's ratio (default 1)\n"
               "  fig6 [INCREMENTS]         stress after a 90 deg rigid rotation in INCREMENTS\n"
               "                            steps (default 1000), four variants\n"
               "                            (Fig. 6), CSV\n"
               "  sliding-pair              normal and shear force over time, CSV\n"
               "example: cdlab-lab fig4 > fig4.csv\n");
}

/* A whole number in [lo, hi], or 0 with a message naming what it was for. */
static int whole_number(const char *text, long lo, long hi, const char *what, long *value)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (end == text || *end != '\0' || errno != 0 || v < lo || v > hi) {
        fprintf(stderr, "cdlab-lab: %s: expected a whole number in [%ld, %ld], got '%s'\n", what,
                lo, hi, text);
        return 0;
    }
    *value = v;
    return 1;
}

static int lab_main(int argc, char **argv)
{
    const char *cmd = argc >= 2 ? argv[1] : "";
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "fig4") == 0 && argc <= 3) {
        if (argc == 3) {
            double r;
            if (!config_parse_number(argv[2], &r) || !(r > 0.0)) {
                fprintf(stderr, "cdlab-lab: fig4: Z1/Z0 must be a number > 0, got '%s'\n", argv[2]);
                return 2;
            }
        }
        return fig4(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "fig6") == 0 && argc <= 3) {
        long increments = 1000;
        if (argc == 3 && !whole_number(argv[2], 1, 10000000L, "fig6: INCREMENTS", &increments))
            return 2;
        return fig6((int)increments);
    }
    if (strcmp(cmd, "sliding-pair") == 0 && argc == 2)
        return sliding_pair();
    const char *known[] = {"fig4", "fig6", "sliding-pair"};
    int is_known = 0;
    for (int k = 0; k < 3; k++)
        is_known |= strcmp(cmd, known[k]) == 0;
    if (argc >= 2)
        fprintf(stderr,
                is_known ? "cdlab-lab: %s: wrong arguments\n" : "cdlab-lab: unknown command '%s'\n",
                cmd);
    usage(stderr);
    return 2;
}

int main(int argc, char **argv)
{
    if (std_streams_safe() != 0)
        return 2; /* a closed standard stream, and no /dev/null to put in its place */
    /* a file-size limit (ulimit -f) makes a write fail with EFBIG, reported as a full disk is,
     * instead of killing the program without a word (SIGXFSZ, exit 153) */
    signal(SIGXFSZ, SIG_IGN);
    diag err = {{0}};
    if (comm_init(&argc, &argv, &err) != CDLAB_OK) {
        fprintf(stderr, "cdlab-lab: %s\n", err.msg);
        comm_finalize();
        return 2;
    }
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        printf("cdlab-lab %s\ncommit %s\nresults epoch %d\n", cdlab_version, cdlab_git_commit,
               CDLAB_RESULTS_EPOCH);
        comm_finalize();
        return stdout_checked_exit("cdlab-lab", 0);
    }
    int rc = stdout_checked_exit("cdlab-lab", lab_main(argc, argv));
    comm_finalize();
    return rc;
}

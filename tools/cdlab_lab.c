/* cdlab-lab: prints the data of the contact-law experiments as CSV (experiments/kuhn,
 * experiments/sliding_pair). The same routines (cd/dem_lab.c) are asserted by the Check tests.
 *
 *   cdlab-lab fig4 [Z1/Z0]     final force angle vs movement (Kuhn et al. Fig. 4)
 *   cdlab-lab fig6             stress after a 90 deg rigid rotation, four variants (Fig. 6)
 *   cdlab-lab sliding-pair     normal and shear force over time (docs/physics.md) */
#include "dem_lab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int fig6(void)
{
    const char *names[4] = {"no adjustment", "projection only", "twirl only",
                            "projection and twirl"};
    int v[4][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
    printf("variant,contacts,error_rel,s00,s01,s02,s10,s11,s12,s20,s21,s22\n");
    for (int k = 0; k < 4; k++) {
        lab_fig6 r;
        diag err;
        if (lab_kuhn_fig6(v[k][0], v[k][1], &r, &err) != CDLAB_OK) {
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

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "fig4") == 0)
        return fig4(argc - 2, argv + 2);
    if (argc == 2 && strcmp(argv[1], "fig6") == 0)
        return fig6();
    if (argc == 2 && strcmp(argv[1], "sliding-pair") == 0)
        return sliding_pair();
    fprintf(stderr, "usage: cdlab-lab fig4 [Z1/Z0] | fig6 | sliding-pair\n");
    return 2;
}

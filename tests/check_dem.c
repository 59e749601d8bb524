/* DEM mode: energy ledger, sliding pair, objectivity (Kuhn Fig. 6), the DEM twin of the wave
 * test, and the critical time step. */
#include "suites.h"

#include "nscd/cd_config.h"
#include "run/run.h"
#include "dem/dem_config.h"
#include "fit.h"
#include "dem/dem_lab.h"
#include "dem/dem_contact_law.h"
#include "dem/dem_contact_law4.h"
#include "h5io.h"
#include "pcg32.h"
#include "particles.h"
#include "run/run_threads.h"
#include "parallel.h"

#include <math.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Two spheres, m = 1, r = 0.5, k_n = 1e4: omega dt = sqrt(2 k/m) dt = 1e-3 at dt = 7e-6. */
static const char *PAIR =
    "[system]\nmode = dem\ndimension = 3\ndt = 7e-6\nsteps = 1\n"
    "[dem]\nk_n = 1e4\nk_t = 8e3\ndamping_normal = %g\ndamping_tangential = %g\n"
    "[contact]\nfriction = %g\n"
    "[particles]\ncount = 2\nradius = 0.5\nmass = 1\nspacing = 0.028\n";

/* No damping, no friction: a head-on collision over 1e4 steps; the total energy changes by
 * less than 1e-6 relative (velocity Verlet is symplectic: the error is O((omega dt)^2) = 1e-6
 * during contact and does not accumulate; measured 1.7e-7). */
START_TEST(energy_elastic_pair_conserves)
{
    char ini[1024];
    snprintf(ini, sizeof ini, PAIR, 0.0, 0.0, 0.0);
    dsim s;
    dsim_open(&s, ini);
    s.W.P.v[0] = v3(1, 0, 0);
    s.W.P.v[1] = v3(-1, 0, 0);
    dsim_start(&s);
    double E0 = s.S.E.initial, worst = 0.0;
    int touched = 0;
    for (int k = 0; k < 10000; k++) {
        dsim_steps(&s, 1);
        touched |= s.st.n_active > 0;
        double E = s.S.E.kin_trans + s.S.E.kin_rot + s.S.E.elastic_n + s.S.E.elastic_t;
        worst = fmax(worst, fabs(E / E0 - 1));
    }
    ck_assert(touched);
    ck_assert_int_eq(s.st.n_active, 0);        /* apart again */
    ck_assert_double_lt(s.W.P.v[0].x, -0.999); /* elastic: velocities exchanged */
    ck_assert_msg(worst < 1e-6, "energy drift %g", worst);
    dsim_close(&s);
}
END_TEST

/* Friction 0.3 and dashpots (0.1 of critical, normal and tangential), an oblique collision of
 * spinning spheres: kinetic + elastic + friction + damping dissipation equals the initial
 * energy within 1e-6 relative at every step (measured 5.7e-7; the dashpot work is booked as
 * the integrator applies it: half in the pair pass, half before the next one, see
 * dem_damping_work_before in cd/dem/dem_pass.c). */
START_TEST(energy_ledger_closes_with_friction_and_damping)
{
    char ini[1024];
    snprintf(ini, sizeof ini, PAIR, 0.1, 0.1, 0.3);
    dsim s;
    dsim_open(&s, ini);
    s.W.P.v[0] = v3(1, 0, 0);
    s.W.P.v[1] = v3(-1, 0, 0);
    s.W.P.x[1].y = 0.4;
    s.W.P.w[0] = v3(0, 0, 3);
    dsim_start(&s);
    double E0 = s.S.E.initial, worst = 0.0;
    for (int k = 0; k < 30000; k++) {
        dsim_steps(&s, 1);
        worst = fmax(worst, fabs(dem_energy_residual(&s.S.E)) / E0);
    }
    ck_assert_int_eq(s.st.n_active, 0); /* the collision is over */
    ck_assert_double_gt(s.S.E.friction, 1e-3 * E0);
    ck_assert_double_gt(s.S.E.damping, 0.1 * E0);
    ck_assert_msg(worst < 1e-6, "ledger residual %g", worst);
    dsim_close(&s);
}
END_TEST

/* The linear spring-dashpot's restitution: a head-on impact at damping ratio xi (a fraction of
 * c_cr = 2 sqrt(m_eff k_n), m_eff the reduced mass, a wall's particle's own mass) ends, with the
 * unclipped dashpot, where the overlap returns to 0, half a damped period after it began:
 * e = exp(-pi xi / sqrt(1 - xi^2)). Two spheres (m_eff = 1/2, omega dt = 1e-3) and a sphere on a
 * plane (m_eff = 1, omega dt = 7e-4), xi from 0 to 0.9: e within 0.3 omega dt of it (the
 * dashpot acts on the step's mean velocity, and the impact starts and ends inside a step;
 * measured: pair 2.2e-4 at xi = 0.3, wall 3.7e-5 at xi = 0.1, 1e-7 and below undamped), the
 * kinetic energy lost booked as the dashpots' dissipation within 1e-6 of the initial energy. A
 * dashpot made from the wrong mass (the particle's for a pair: xi sqrt 2) misses e = 0.37 at
 * xi = 0.3 by 0.14 (0.23). */
START_TEST(analytic_dem_restitution)
{
    static const char *WALL = "[system]\nmode = dem\ndimension = 3\ndt = 7e-6\nsteps = 1\n"
                              "[dem]\nk_n = 1e4\nk_t = 8e3\ndamping_normal = %g\n"
                              "damping_tangential = %g\n[contact]\nfriction = %g\n"
                              "[particles]\ncount = 1\nradius = 0.5\nmass = 1\n"
                              "origin = 0.514 0 0\n[plane.wall]\npoint = 0 0 0\nnormal = 1 0 0\n";
    const double xi[] = {0.0, 0.1, 0.3, 0.6, 0.9};
    for (int on_wall = 0; on_wall < 2; on_wall++)
        for (int k = 0; k < 5; k++) {
            char ini[1024];
            snprintf(ini, sizeof ini, on_wall ? WALL : PAIR, xi[k], 0.0, 0.0);
            dsim s;
            dsim_open(&s, ini);
            s.W.P.v[0] = v3(on_wall ? -1 : 1, 0, 0);
            if (!on_wall)
                s.W.P.v[1] = v3(-1, 0, 0);
            dsim_start(&s);
            double E0 = s.S.E.initial;
            int touched = 0;
            for (int n = 0; n < 40000 && (!touched || s.st.n_active > 0); n++) {
                dsim_steps(&s, 1);
                touched |= s.st.n_active > 0;
            }
            ck_assert(touched);
            ck_assert_int_eq(s.st.n_active, 0); /* apart again */
            /* the velocity of separation over that of approach (2, or 1 on the wall) */
            double e = on_wall ? s.W.P.v[0].x : (s.W.P.v[1].x - s.W.P.v[0].x) / 2.0;
            double expect = exp(-CDLAB_PI * xi[k] / sqrt(1.0 - xi[k] * xi[k]));
            double omega_dt = (on_wall ? sqrt(1e4) : sqrt(2e4)) * 7e-6;
            ck_assert_msg(fabs(e - expect) <= 0.3 * omega_dt, "%s, xi %g: e %.9g, expected %.9g",
                          on_wall ? "wall" : "pair", xi[k], e, expect);
            double lost = E0 - (s.S.E.kin_trans + s.S.E.kin_rot + s.S.E.elastic_n);
            ck_assert_msg(fabs(lost - s.S.E.damping) <= 1e-6 * E0, "lost %.9g, damping %.9g", lost,
                          s.S.E.damping);
            dsim_close(&s);
        }
}
END_TEST

/* A sphere (disc) sliding on a plane at v0 = 1 with no spin, mu = 0.2, g = 10: friction
 * decelerates it at mu g and spins it up until it rolls, at t_s = 2 v0 / (7 mu g) = 1/7 (a disc:
 * v0 / (3 mu g) = 1/6), then rolls at 5/7 v0 (2/3 v0), friction having dissipated the kinetic
 * energy lost, 1/7 (1/6) with m = 1. With a tangential dashpot of 0.3 of critical that spares
 * sliding contacts (dem.damping_tangential_sliding = false) the slide ends within 1.5 ms of t_s
 * (measured 0.6 ms late: the spring's first steps), the rolling speed is within 1e-4 (9e-6) and
 * the friction work within 1e-3 (3e-6) of the energy lost. The default (Kuhn et al.'s dashpot on
 * every contact) reaches the same rolling state but ends the slide within 5 ms (3.6 and 4.4 ms):
 * its dashpot's c_t v0 = 379 against mu m g = 2. */
START_TEST(analytic_dem_slide_to_roll)
{
    static const char *INI = "[system]\nmode = dem\ndimension = %d\ndt = 1e-4\nsteps = 1\n"
                             "gravity = %s\n[dem]\nk_n = 1e6\nk_t = 4e5\ndamping_normal = 0.3\n"
                             "damping_tangential = 0.3\ndamping_tangential_sliding = %s\n"
                             "[contact]\nfriction = 0.2\n"
                             "[particles]\ncount = 1\nradius = 0.5\nmass = 1\norigin = %s\n"
                             "[plane.floor]\npoint = 0 0 0\nnormal = %s\n";
    for (int dim = 2; dim <= 3; dim++)
        for (int sliding = 0; sliding < 2; sliding++) {
            char ini[1024];
            snprintf(ini, sizeof ini, INI, dim, dim == 3 ? "0 0 -10" : "0 -10 0",
                     sliding ? "true" : "false", dim == 3 ? "0 0 0.5" : "0 0.5 0",
                     dim == 3 ? "0 0 1" : "0 1 0");
            dsim s;
            dsim_open(&s, ini);
            s.W.P.v[0] = v3(1, 0, 0);
            dsim_start(&s);
            double t_slid = 0.0;
            for (int n = 0; n < 4000; n++) {
                dsim_steps(&s, 1);
                if (s.st.n_sliding > 0)
                    t_slid = s.W.t;
            }
            double roll = dim == 3 ? 5.0 / 7.0 : 2.0 / 3.0, t_s = dim == 3 ? 1.0 / 7.0 : 1.0 / 6.0;
            double lost = 0.5 * (1.0 - (dim == 3 ? 7.0 / 5.0 : 3.0 / 2.0) * roll * roll);
            ck_assert_msg(fabs(s.W.P.v[0].x - roll) <= 1e-4, "dim %d, %d: v %.9g", dim, sliding,
                          s.W.P.v[0].x);
            if (sliding) {
                ck_assert_msg(t_slid < 5e-3, "dim %d: slid until %g", dim, t_slid);
            } else {
                ck_assert_msg(fabs(t_slid - t_s) <= 1.5e-3, "dim %d: slid until %g, t_s %g", dim,
                              t_slid, t_s);
                ck_assert_msg(fabs(s.S.E.friction - lost) <= 1e-3 * lost,
                              "dim %d: friction work %.9g, energy lost %.9g", dim, s.S.E.friction,
                              lost);
            }
            dsim_close(&s);
        }
}
END_TEST

/* The sliding pair of docs/physics.md (d = 1 mm, overlap 0.1 d, mu = 0.3, k_n = k_t = 1e9 N/m,
 * 1 mm/s right for 0.5 s, left 0.5 s, right 0.5 s; dt = 5 ms), kinematically driven: the shear
 * force never exceeds mu k_n delta, equals it while sliding, is zero while apart, and changes
 * sign within a few steps of the reversal at t = 1 s. */
START_TEST(analytic_sliding_pair)
{
    static lab_pair_row rows[LAB_PAIR_ROWS];
    diag err;
    ck_assert_msg(lab_sliding_pair(rows, &err) == CDLAB_OK, "%s", err.msg);
    const double mu = 0.3, kn = 1e9, kt = 1e9, v = 1e-3, dt = 5e-3;
    int slid = 0, apart = 0, reversal = -1, sign_change = -1;
    for (int k = 0; k < LAB_PAIR_ROWS; k++) {
        const lab_pair_row *r = &rows[k];
        double limit = r->delta > 0 ? mu * kn * r->delta : 0.0;
        ck_assert_msg(fabs(r->fs) <= limit * (1 + 1e-12) + 1e-12, "t %g: |Fs| %g > limit %g", r->t,
                      fabs(r->fs), limit);
        if (r->sliding) {
            slid = 1;
            ck_assert_msg(fabs(fabs(r->fs) - limit) <= 1e-9 * limit, "t %g: sliding at %g of %g",
                          r->t, fabs(r->fs), limit);
        }
        if (r->delta < 0) {
            apart = 1;
            ck_assert_msg(r->fs == 0.0 && r->fn == 0.0, "t %g: force %g while apart", r->t, r->fs);
        }
        if (reversal < 0 && r->t > 1.0 + 1e-9)
            reversal = k;
        if (reversal >= 0 && sign_change < 0 && r->fs * rows[k - 1].fs < 0)
            sign_change = k;
    }
    ck_assert(slid && apart && reversal > 0 && sign_change > 0);
    /* expected: the elastic unloading mu f_n / k_t at v dt per step, ~6 steps */
    double expect = mu * kn * rows[reversal].delta / (kt * v * dt);
    ck_assert_msg(sign_change - reversal <= expect + 2,
                  "sign change %d steps after the reversal "
                  "(expected %.1f)",
                  sign_change - reversal, expect);
}
END_TEST

/* Runs INI text (what, n particles) from its start and compares it every `every` steps with
 * LAMMPS's thermo rows ref[1..rows-1] = {step, kinetic, rotational, contacts}: both energies
 * within tol relative (the rotational times rot: LAMMPS's 2D convention), the contacts within
 * one (ref < 0: not compared; LAMMPS counts the particle pairs only). Prints the first and last
 * rows' differences; returns the wall contacts counted at the rows. */
static int lammps_rows_match(const char *ini, const char *what, int n, const double (*ref)[4],
                             int rows, int every, double rot, double tol)
{
    dsim s;
    dsim_open(&s, ini);
    ck_assert_int_eq(s.W.P.n, n);
    dsim_start(&s);
    int wall_contacts = 0;
    for (int row = 1; row < rows; row++) {
        const double *r = ref[row];
        dsim_steps(&s, every);
        double et = s.S.E.kin_trans / r[1] - 1.0, er = s.S.E.kin_rot / (rot * r[2]) - 1.0;
        ck_assert_msg(
            fabs(et) <= tol && fabs(er) <= tol && (r[3] < 0 || abs(s.st.n_active - (int)r[3]) <= 1),
            "%s, step %g: kinetic %.17g (LAMMPS %.17g), rotational %.17g (%g times "
            "%.17g), contacts %d (%g)",
            what, r[0], s.S.E.kin_trans, r[1], s.S.E.kin_rot, rot, r[2], s.st.n_active, r[3]);
        if (row == 1 || row == rows - 1)
            fprintf(stderr, "  lammps law, %s, step %g: kinetic %+.2e, rotational %+.2e\n", what,
                    r[0], et, er);
        for (int k = 0; k < s.S.npair; k++)
            wall_contacts += s.S.pair[k].i < 0 && s.S.pair[k].zeta >= 0.0;
    }
    dsim_close(&s);
    return wall_contacts;
}

/* dem.tangential = lammps against LAMMPS itself: the chute benchmark's cell (4,100 spheres, 100
 * of them a frozen rough base, periodic in x and y, gravity tilted 26 deg), 1,000 steps from
 * its flowing state, beside Debian's LAMMPS (29 Sep 2021 - Update 2, package
 * 20220106.git7586adbb6a+ds1-2+b2): bench/lammps/in.chute3d with -var rx 1 -var ry 1
 * -var nwarm 0 -var nsteps 1000, thermo every 100 steps printed with "%.17g": its kinetic
 * energy (ke), rotational energy (compute erotate/sphere) and contacts (compute contact/atom's
 * mean times N/2), below; the second table with pair_style's dampflag 1 (gamma_t = gamma_n/2 =
 * 25: the tangential dashpot inside the friction cap). Both energies within 1e-9 relative
 * and the contacts within one at every row (measured: 2.7e-15 and 1.6e-13 at step 100,
 * 1.1e-11 and 7.5e-11 at step 1,000 as round-off grows in the flow; the contacts equal). The
 * kuhn and conventional laws differ from LAMMPS's by their model (the contact point in the
 * middle of the overlap, the friction limit on the elastic force, the first forces without
 * dashpots): the conventional law 3.5e-5 and 2.0e-5 at step 100 on the full chute
 * (experiments/lammps). */
static const double lammps_chute_ref[2][11][4] = {
    {{0, 67.020330660304751, 3.142641551709648, 6863},
     {100, 67.541173619429188, 3.3090385339068145, 6658},
     {200, 67.83720316263144, 3.2853643670151693, 6511},
     {300, 68.299864625309567, 3.2994882681273694, 6413},
     {400, 68.934625874823766, 3.3055348662912287, 6286},
     {500, 69.656827328420945, 3.3295263329478075, 6217},
     {600, 70.601184258362053, 3.3600647480359545, 6038},
     {700, 71.742768885124704, 3.3740110055846859, 5868},
     {800, 72.978222242775217, 3.3382295617997211, 5694},
     {900, 74.427833011430039, 3.2756111950947933, 5492},
     {1000, 75.993567316621991, 3.21099043505837, 5202}},
    {{0, 67.020330660304751, 3.142641551709648, 6863},
     {100, 67.450492602049493, 3.2347681161629667, 6696},
     {200, 67.700253856518358, 3.197525818101612, 6591},
     {300, 68.105620750843741, 3.2145497115679675, 6522},
     {400, 68.673582812223032, 3.2450299053994316, 6445},
     {500, 69.31685143734299, 3.296640841716346, 6366},
     {600, 70.183409775783545, 3.312626958877313, 6214},
     {700, 71.19490467876318, 3.3171741169555613, 6049},
     {800, 72.323657333247226, 3.3439809371646065, 5862},
     {900, 73.6393824960589, 3.2909765325843616, 5725},
     {1000, 75.056725797591014, 3.233433342851761, 5508}}};

START_TEST(reference_lammps_chute)
{
    static const char *INI =
        "[system]\nmode = dem\ndimension = 3\ndt = 1e-4\nsteps = 1000\n"
        "gravity = 0.4383711467890774 0 -0.898794046299167\nperiodic = x y\n"
        "box_min = 0 0 -0.5\nbox_max = 10 10 42\n"
        "[particles]\nsource = file\nformat = chute\nfile = ../bench/data/chute_cell.txt\n"
        "density = 1\n[contact]\nfriction = 0.5\ndetect_gap = 0.1\n"
        "[dem]\nk_n = 2e5\nk_t = 57142.857142857145\ndamping = rate\ndamping_normal = 50\n"
        "damping_tangential = %g\ntangential = lammps\n";
    for (int damped = 0; damped < 2; damped++) {
        char ini[1024];
        snprintf(ini, sizeof ini, INI, damped ? 25.0 : 0.0);
        lammps_rows_match(ini, damped ? "chute, gamma_t 25" : "chute, gamma_t 0", 4100,
                          lammps_chute_ref[damped], 11, 100, 1.0, 1e-9);
    }
}
END_TEST

/* experiments/lammps/NAME.ini, its particle file NAME.txt named from here (the tests run in
 * tests/), as INI text (static: one at a time). */
static const char *lammps_study_ini(const char *name)
{
    char path[256], file[64];
    snprintf(path, sizeof path, "../experiments/lammps/%s.ini", name);
    snprintf(file, sizeof file, "file = %s.txt", name);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "%s", path);
    static char text[8192], ini[8448];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    char *at = strstr(text, file);
    ck_assert_msg(at != NULL, "%s: no '%s'", path, file);
    *at = '\0';
    snprintf(ini, sizeof ini, "%sfile = ../experiments/lammps/%s.txt%s", text, name,
             at + strlen(file));
    return ini;
}

/* LAMMPS's walls: experiments/lammps/walls.ini (360 spheres thrown about in a box of five
 * frictional walls, mu 0.3 on the walls and 0.5 between spheres, with both dashpots) against
 * LAMMPS's fix wall/gran hooke/history (experiments/lammps/in.walls, the same LAMMPS): both
 * energies within 1e-11 relative every 400 steps to step 4,000 (measured 4.9e-13 and 9.0e-13 at
 * most: a gas with few contacts, so round-off hardly grows). */
START_TEST(reference_lammps_walls)
{
    static const double ref[11][4] = {{0, 288.82699205483897, 29.298632597758246, -1},
                                      {400, 289.54717719690547, 29.298632597758246, -1},
                                      {800, 281.29668568031218, 33.074501836041541, -1},
                                      {1200, 265.39738452122134, 41.468618835076249, -1},
                                      {1600, 243.37305975726167, 54.855971073426488, -1},
                                      {2000, 229.60545053510222, 60.986339299388305, -1},
                                      {2400, 222.32201372591544, 61.008193343174504, -1},
                                      {2800, 211.52809729309664, 63.027289398721422, -1},
                                      {3200, 204.74258590843351, 63.84114014072626, -1},
                                      {3600, 199.5465150010053, 66.118830236653352, -1},
                                      {4000, 191.8996905068301, 68.536337780155804, -1}};
    ck_assert_int_gt(
        lammps_rows_match(lammps_study_ini("walls"), "walls", 360, ref, 11, 400, 1.0, 1e-11), 0);
}
END_TEST

/* And in 2D: experiments/lammps/discs.ini (120 discs thrown about in a box of three frictional
 * walls, with both dashpots) against LAMMPS in 2D (experiments/lammps/in.discs: fix nve/sphere
 * disc, fix enforce2d, fix wall/gran hooke/history; its 2D particles weigh as balls, so the
 * config's density 2/3 gives them LAMMPS's mass; its compute erotate/sphere takes 0.4 m r^2, the
 * discs' energy is 5/4 of it): both energies within 1e-12 relative every 500 steps to step
 * 4,000 (measured: 7.8e-16 and 4.4e-16 at most). */
START_TEST(reference_lammps_discs)
{
    static const double ref[9][4] = {{0, 58.809438112514393, 3.0580843126867738, -1},
                                     {500, 58.986920072031431, 3.0580843126867738, -1},
                                     {1000, 55.987482032017382, 4.0474173127303912, -1},
                                     {1500, 53.630862463101764, 4.4395342256253114, -1},
                                     {2000, 51.483036367979516, 5.0184499802447133, -1},
                                     {2500, 49.591121673233118, 5.9881141850881123, -1},
                                     {3000, 47.400571393797136, 6.7426820251529911, -1},
                                     {3500, 45.416421705690034, 7.4202412648254397, -1},
                                     {4000, 45.281934586151145, 7.0333960286883075, -1}};
    ck_assert_int_gt(
        lammps_rows_match(lammps_study_ini("discs"), "discs", 120, ref, 9, 500, 1.25, 1e-12), 0);
}
END_TEST

/* The 1D wave test in DEM with stiffness_from_cd = 40 (random-sweep q): omega within 5% and
 * tau within 20% of eqs. (58) and (60) (measured -1.0% and +2.0%). */
START_TEST(analytic_dem_wave_twin)
{
    const char *ini = "[system]\nmode = dem\ndimension = 1\ndt = 0.01\nsteps = 1\n"
                      "[dem]\nstiffness_from_cd = 40\ncd_dt = 1\ncd_sweep = random\n"
                      "[particles]\ncount = 50\nradius = 0.5\nmass = 1\norigin = 1.5 0 0\n"
                      "[contact]\ndetect_gap = 0.5\n"
                      "[plane.wall]\npoint = 0 0 0\nnormal = 1 0 0\n"
                      "[load]\nparticles = -1\nforce = -0.05 0 0\n";
    dsim s;
    dsim_open(&s, ini);
    const long steps = 100000, every = 10; /* 1000 time units, sampled every 0.1 */
    double *t = malloc(steps / every * sizeof *t), *x = malloc(steps / every * sizeof *x);
    long last_open = -1, m = 0;
    for (long k = 0; k < steps; k++) {
        dsim_steps(&s, 1);
        if (s.st.n_active < 50)
            last_open = m;
        if ((k + 1) % every == 0) {
            t[m] = s.W.t;
            x[m] = s.W.P.x[49].x;
            m++;
        }
    }
    const double q = (4 * sqrt(exp(1.0)) - 5) / 2, N_I = 40, L = 50, kk = 2 * CDLAB_PI / (4 * L);
    double D = q * N_I, c = sqrt(q * N_I);
    double omega_th = kk * sqrt(c * c - D * D * kk * kk / 4), tau_th = 2 / (D * kk * kk);
    long k0 = last_open + 1 + lround(tau_th / 3 / 0.1), k1 = k0 + lround(6 * tau_th / 0.1);
    ck_assert(k1 <= m);
    damped_sine f;
    diag err;
    ck_assert(fit_damped_sine(t + k0, x + k0, (int)(k1 - k0), &f, &err) == CDLAB_OK);
    ck_assert_msg(fabs(f.omega / omega_th - 1) < 0.05, "omega %g vs %g", f.omega, omega_th);
    ck_assert_msg(fabs(f.tau / tau_th - 1) < 0.20, "tau %g vs %g", f.tau, tau_th);
    free(t);
    free(x);
    dsim_close(&s);
}
END_TEST

/* dt above the critical DEM time step: refused with a message (exit 2 from the command line),
 * accepted with dem.allow_unstable_dt. */
START_TEST(errors_critical_dt)
{
    const char *ini = "[system]\nmode = dem\ndimension = 3\ndt = 0.1\nsteps = 1\n"
                      "[dem]\nk_n = 1e4\n"
                      "[particles]\ncount = 2\nradius = 0.5\nmass = 1\n";
    config c;
    diag err = {{0}};
    world W;
    scene_info info;
    dem_setup d;
    ck_assert_int_eq(config_load_string(&c, ini, "dem.ini", &err), CDLAB_OK);
    ck_assert_int_eq(scene_build(&c, &W, &info, &err), CDLAB_OK);
    ck_assert_int_eq(dem_config_read(&c, &W, &info, NULL, &d, &err), CDLAB_ERR_CONFIG);
    ck_assert_msg(strstr(err.msg, "dem.ini:4: system.dt: dt = 0.1 exceeds the critical DEM time "
                                  "step 0.005345224838248488 "),
                  "%s", err.msg);
    /* 2 sqrt(m/k)/2 = sqrt(1/1e4)... omega_max = 2 sqrt(k_max/m) with k_max = k_t (1 + 5/2) */
    ck_assert_double_eq_tol(d.dt_crit, 1.0 / sqrt(3.5e4), 1e-12);
    config_free(&c);
    world_free(&W);
    ck_assert_int_eq(config_load_string(&c, ini, "dem.ini", &err), CDLAB_OK);
    ck_assert_int_eq(config_set(&c, "dem.allow_unstable_dt=true", &err), CDLAB_OK);
    ck_assert_int_eq(scene_build(&c, &W, &info, &err), CDLAB_OK);
    ck_assert_int_eq(dem_config_read(&c, &W, &info, NULL, &d, &err), CDLAB_OK);
    /* /parameters records the critical step in full, as every other number (it was "%.6g":
     * 0.00534522, 3.2e-9 off) */
    const char *rec = resolved_value(&c, "dem.critical_dt");
    ck_assert_msg(*rec && strtod(rec, NULL) == d.dt_crit, "recorded '%s', %.17g", rec, d.dt_crit);
    config_free(&c);
    world_free(&W);
    /* a stiffness whose critical time step overflows its formula (-nan: any dt passed, even
     * without allow_unstable_dt, and the run went on), and a twin's k_n = inf from a tiny
     * cd_dt, are refused */
    const char *bad[][4] = {
        {"dem.k_n=1e308", "dem.damping_normal=0.5", "dem.allow_unstable_dt=false",
         "--set dem.k_n: k_n = 1e+308, k_t = 3500 and the dashpots give a critical time "
         "step that a double cannot hold"},
        {"dem.k_n=1e308", "dem.damping_normal=0.5", "dem.allow_unstable_dt=true",
         "a double cannot hold"},
        {"dem.stiffness_from_cd=40", "dem.cd_dt=1e-200", "dem.allow_unstable_dt=true",
         "dem.cd_dt: cd_dt = 1e-200 with stiffness_from_cd = 40 and the mean particle mass 1 "
         "gives k_n = inf and damping_normal = 3.18977e+201: beyond the range of a double"}};
    for (int k = 0; k < 3; k++) {
        const char *twin_ini = "[system]\nmode = dem\ndimension = 3\ndt = 0.1\nsteps = 1\n"
                               "[particles]\ncount = 2\nradius = 0.5\nmass = 1\n"
                               "[dem]\nk_t = 3500\n";
        ck_assert_int_eq(config_load_string(&c, twin_ini, "dem.ini", &err), CDLAB_OK);
        ck_assert_int_eq(config_set(&c, bad[k][0], &err), CDLAB_OK);
        ck_assert_int_eq(config_set(&c, bad[k][1], &err), CDLAB_OK);
        ck_assert_int_eq(config_set(&c, bad[k][2], &err), CDLAB_OK);
        ck_assert_int_eq(scene_build(&c, &W, &info, &err), CDLAB_OK);
        ck_assert_int_eq(dem_config_read(&c, &W, &info, NULL, &d, &err), CDLAB_ERR_CONFIG);
        ck_assert_msg(strstr(err.msg, bad[k][3]), "%s: %s", bad[k][0], err.msg);
        config_free(&c);
        world_free(&W);
    }
}
END_TEST

/* dem.tangential = lammps has its own tangential rules: the keys that would change them are
 * refused by name, not ignored (projection off, twirl on, the dashpot spared on sliding
 * contacts), and so are bonds and deformable discs; without them the twirl is recorded off. */
START_TEST(errors_lammps_law_keys)
{
    const char *ini = "[system]\nmode = dem\ndimension = 2\ndt = 1e-3\nsteps = 1\n"
                      "[dem]\nk_n = 1e4\ntangential = lammps\n[contact]\nfriction = 0.3\n"
                      "[particles]\ncount = 2\nradius = 0.5\nmass = 1\n";
    const char *bad[][2] = {
        {"dem.projection=false", "dem.projection: tangential = lammps always turns"},
        {"dem.twirl=true", "dem.twirl: tangential = lammps has no twirl"},
        {"dem.damping_tangential_sliding=false",
         "dem.damping_tangential_sliding: with tangential = lammps the tangential dashpot acts"},
        {"dem.bond=true", "dem.bond: tangential = lammps is LAMMPS's law of frictional contacts "
                          "between rigid spheres; bonds use"},
        {"dem.deformable=true", "dem.deformable: tangential = lammps is LAMMPS's law"},
        {NULL, NULL}};
    for (int k = 0; k < 6; k++) {
        config c;
        diag err = {{0}};
        world W;
        scene_info info;
        dem_setup d;
        ck_assert_int_eq(config_load_string(&c, ini, "dem.ini", &err), CDLAB_OK);
        if (bad[k][0])
            ck_assert_int_eq(config_set(&c, bad[k][0], &err), CDLAB_OK);
        if (k == 4) { /* the discs' own keys, so that the law is what is refused */
            ck_assert_int_eq(config_set(&c, "dem.young_modulus=1e6", &err), CDLAB_OK);
            ck_assert_int_eq(config_set(&c, "dem.poisson_ratio=0.3", &err), CDLAB_OK);
        }
        ck_assert_int_eq(scene_build(&c, &W, &info, &err), CDLAB_OK);
        status s = dem_config_read(&c, &W, &info, NULL, &d, &err);
        if (bad[k][0]) {
            ck_assert_int_eq(s, CDLAB_ERR_CONFIG);
            ck_assert_msg(strstr(err.msg, bad[k][1]), "%s: %s", bad[k][0], err.msg);
        } else {
            ck_assert_msg(s == CDLAB_OK, "%s", err.msg);
            ck_assert_int_eq(d.p.law.tangential, DEM_LAMMPS);
            ck_assert(d.p.law.projection && !d.p.law.twirl);
            ck_assert_str_eq(resolved_value(&c, "dem.twirl"), "false");
        }
        config_free(&c);
        world_free(&W);
    }
}
END_TEST

/* particles.order = spatial: the same particles renumbered along a Z-order curve. Every
 * per-particle datum travels with its particle, the ids are the new indices, input_index is a
 * permutation that names each one's input index, loads (by input index) land on their particles,
 * and particles that touch are near in memory: the mean index distance of the pairs within
 * reach falls to under a fifth of the random packing's (197 against 1,406, about n / 3). */
START_TEST(unit_order_spatial_renumbers)
{
    const char *ini = "[system]\nmode = dem\ndimension = 3\ndt = 1e-4\nsteps = 1\nseed = 5\n"
                      "[dem]\nk_n = 1e4\n"
                      "[particles]\nsource = random\ncount = 4000\nradius_min = 0.3\n"
                      "radius_max = 0.5\nbox_min = 0 0 0\nbox_max = 18 18 18\n"
                      "[load]\nparticles = 7 -1\nforce = 0 0 -2\n";
    config c;
    diag err = {{0}};
    world Wg, Ws;
    scene_info ig, is;
    ck_assert_int_eq(config_load_string(&c, ini, "dem.ini", &err), CDLAB_OK);
    ck_assert_msg(scene_build(&c, &Wg, &ig, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_int_eq(config_set(&c, "particles.order=spatial", &err), CDLAB_OK);
    ck_assert_msg(scene_build(&c, &Ws, &is, &err) == CDLAB_OK, "%s", err.msg);
    config_free(&c);
    int n = Wg.P.n;
    ck_assert_ptr_null(ig.input_index);
    ck_assert_ptr_nonnull(is.input_index);
    ck_assert_int_eq(is.n_input, n);
    ck_assert_int_eq(Ws.P.n, n);
    int *seen = calloc((size_t)n, sizeof *seen);
    for (int k = 0; k < n; k++) {
        int i = is.input_index[k];
        ck_assert(i >= 0 && i < n && !seen[i]);
        seen[i] = 1;
        ck_assert_int_eq(Ws.P.id[k], k);
        ck_assert(memcmp(&Ws.P.x[k], &Wg.P.x[i], sizeof(vec3)) == 0);
        ck_assert(memcmp(&Ws.P.q[4 * k], &Wg.P.q[4 * i], 4 * sizeof(double)) == 0);
        ck_assert(memcmp(&Ws.P.f_ext[k], &Wg.P.f_ext[i], sizeof(vec3)) == 0);
        ck_assert(Ws.P.r[k] == Wg.P.r[i] && Ws.P.m[k] == Wg.P.m[i]);
        ck_assert(Ws.P.inv_m[k] == Wg.P.inv_m[i] && Ws.P.inv_I[k] == Wg.P.inv_I[i]);
        ck_assert_int_eq(Ws.P.frozen[k], Wg.P.frozen[i]);
        /* the loads on input particles 7 and n - 1 only */
        int loaded = Ws.P.f_ext[k].z != 0.0;
        ck_assert_int_eq(loaded, i == 7 || i == n - 1);
    }
    free(seen);
    int idx[2] = {7, n - 1};
    ck_assert_int_eq(scene_ids_of_inputs(&is, idx, 2, &err), CDLAB_OK);
    ck_assert_int_eq(is.input_index[idx[0]], 7);
    ck_assert_int_eq(is.input_index[idx[1]], n - 1);
    double dist[2] = {0.0, 0.0};
    long pairs[2] = {0, 0};
    const world *w2[2] = {&Wg, &Ws};
    for (int v = 0; v < 2; v++) {
        const particles *P = &w2[v]->P;
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++) {
                double reach = 1.5 * (P->r[i] + P->r[j]);
                if (v3_norm2(v3_sub(P->x[j], P->x[i])) < reach * reach) {
                    dist[v] += j - i;
                    pairs[v]++;
                }
            }
    }
    ck_assert_int_eq(pairs[0], pairs[1]);
    ck_assert_int_gt(pairs[0], n / 2);
    ck_assert_msg(dist[1] < 0.2 * dist[0], "mean index distance %g (given: %g)", dist[1] / pairs[1],
                  dist[0] / pairs[0]);
    scene_info_free(&is);
    ck_assert_ptr_null(is.input_index);
    world_free(&Wg);
    world_free(&Ws);
}
END_TEST

/* A run with particles.order = spatial is the run of a file that lists its particles in that
 * order (order = given): the final state bit for bit. The output maps the ids back
 * (/input_index) and names the probe, given by input index, by its new id. */
START_TEST(io_order_spatial_is_sorted_input)
{
    const char *fmt = "[system]\nmode = dem\ndimension = 3\ndt = 2e-4\nsteps = 80\n"
                      "gravity = 0 0 -10\nseed = 4\n"
                      "[dem]\nk_n = 1e4\nk_t = 5e3\ndamping_normal = 0.2\ntangential = kuhn\n"
                      "[contact]\nfriction = 0.4\ndetect_gap = 0.05\n"
                      "[plane.floor]\npoint = 0 0 0\nnormal = 0 0 1\n"
                      "[output]\nevery = 80\nprobes = %d\n"
                      "[particles]\ncount = 400\n%s";
    char ini[2048], a[32], b[32], list[32] = "/tmp/cdlab_orderXXXXXX";
    snprintf(ini, sizeof ini, fmt, 5,
             "source = random\nradius_min = 0.25\nradius_max = 0.3\nbox_min = 0 0 0\n"
             "box_max = 5 5 12\norder = spatial\n");
    run_summary sum;
    diag err = {{0}};
    ck_assert_msg(run_to_temp(ini, "order.ini", a, &sum, &err) == CDLAB_OK, "%s", err.msg);
    /* the same particles, listed in the order the run gave them */
    world W;
    scene_info info;
    build_from_string(ini, &W, &info, NULL);
    int fd = mkstemp(list);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    for (int k = 0; k < W.P.n; k++)
        fprintf(f, "%.17g %.17g %.17g %.17g\n", W.P.x[k].x, W.P.x[k].y, W.P.x[k].z, W.P.r[k]);
    fclose(f);
    char src[160];
    snprintf(src, sizeof src, "source = file\nfile = %s\n", list);
    /* the probe: input particle 5 of the first run, its new id in the second's input */
    int id5[1] = {5};
    ck_assert_int_eq(scene_ids_of_inputs(&info, id5, 1, &err), CDLAB_OK);
    snprintf(ini, sizeof ini, fmt, id5[0], src);
    ck_assert_msg(run_to_temp(ini, "order.ini", b, &sum, &err) == CDLAB_OK, "%s", err.msg);
    const char *names[] = {"/snapshots/00000080/position", "/snapshots/00000080/velocity",
                           "/snapshots/00000080/angular_velocity", "/series/probe_position", NULL};
    same_data(a, b, names);
    /* /input_index in the spatial run only; the probe named by its new id */
    h5in *h;
    ck_assert_msg(h5in_open(&h, a, &err) == CDLAB_OK, "%s", err.msg);
    int *in = malloc((size_t)W.P.n * sizeof *in), probe = -1;
    ck_assert_msg(h5in_read(h, "/input_index", H5IO_INT32, in, W.P.n, &err) == CDLAB_OK, "%s",
                  err.msg);
    ck_assert_msg(h5in_read(h, "/series/probe_ids", H5IO_INT32, &probe, 1, &err) == CDLAB_OK, "%s",
                  err.msg);
    h5in_close(h);
    ck_assert(memcmp(in, info.input_index, (size_t)W.P.n * sizeof *in) == 0);
    ck_assert_int_eq(in[probe], 5);
    ck_assert_int_eq(probe, id5[0]);
    ck_assert_int_ne(probe, 5); /* renumbered (for this seed) */
    ck_assert_msg(h5in_open(&h, b, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_msg(h5in_read(h, "/input_index", H5IO_INT32, in, W.P.n, &err) != CDLAB_OK,
                  "a run in the given order has no /input_index");
    h5in_close(h);
    free(in);
    scene_info_free(&info);
    world_free(&W);
    unlink(list);
    remove_output(a);
    remove_output(b);
}
END_TEST

/* Collects the lines of the run's messages (4096 bytes). */
static void keep_message(void *user, const char *line)
{
    char *buf = user;
    size_t used = strlen(buf);
    snprintf(buf + used, 4096 - used, "%s\n", line);
}

/* A run of 50,000 particles or more stored in no spatial order (a random packing) in
 * particles.order = given is told of particles.order = spatial in its banner (neighbours in
 * storage lie about a third of the box apart); in spatial order, in a fifth of the particles, or
 * in the default order (auto: renumbered, and the banner says so) it is not. */
START_TEST(io_order_hint_for_unordered_input)
{
    const char *ini = "[system]\nmode = dem\ndimension = 2\ndt = 1e-4\nsteps = 1\nseed = 2\n"
                      "[dem]\nk_n = 1e4\n[contact]\ndetect_gap = 0.2\n"
                      "[particles]\nsource = random\ncount = 50000\nradius_min = 0.4\n"
                      "radius_max = 0.5\nbox_min = 0 0 0\nbox_max = 300 300 0\n";
    const char *sets[] = {"particles.order=given", "particles.order=spatial",
                          "particles.count=10000", ""};
    for (int v = 0; v < 4; v++) {
        config c;
        diag err = {{0}};
        char note[4096] = "";
        run_hooks hk = {.message = keep_message, .user = note};
        ck_assert_int_eq(config_load_string(&c, ini, "order.ini", &err), CDLAB_OK);
        if (sets[v][0])
            ck_assert_int_eq(config_set(&c, sets[v], &err), CDLAB_OK);
        ck_assert_msg(run_validate(&c, &hk, &err) == CDLAB_OK, "%s", err.msg);
        config_free(&c);
        int hint = strstr(note, "hint: the particles are stored in no spatial order") != NULL;
        ck_assert_msg(hint == (v == 0), "%s: %s", sets[v], note);
        ck_assert_int_eq(strstr(note, "particles in spatial order (particles.order)") != NULL,
                         v == 1);
        ck_assert_int_eq(strstr(note, "particles in spatial order (particles.order = auto") != NULL,
                         v == 3);
    }
}
END_TEST

/* particles.order = auto (the default) renumbers 50,000 particles or more whose input lies in
 * no spatial order (a random packing: neighbours in storage about a third of the box apart),
 * and keeps the input's order below that count and for a chain in order (neighbours in storage
 * one diameter apart); the resolved parameter names the order taken. */
START_TEST(unit_order_auto_decides)
{
    const char *random2d = "[system]\nmode = dem\ndimension = 2\ndt = 1e-4\nsteps = 1\n"
                           "[particles]\nsource = random\ncount = %d\nradius_min = 0.4\n"
                           "radius_max = 0.5\nbox_min = 0 0 0\nbox_max = 300 300 0\n";
    const char *chain = "[system]\ndimension = 1\ndt = 1\nsteps = 1\n[particles]\nsource = chain\n"
                        "count = 60000\nradius = 0.5\nmass = 1\norigin = 1.5 0 0\n";
    struct {
        int count;
        const char *fmt;
        int renumbered;
    } cases[] = {{50000, random2d, 1}, {49999, random2d, 0}, {0, chain, 0}};
    for (int k = 0; k < 3; k++) {
        char ini[512];
        snprintf(ini, sizeof ini, cases[k].fmt, cases[k].count);
        order_taken o = scene_order_taken(ini);
        ck_assert_int_eq(o.automatic, cases[k].renumbered);
        ck_assert_int_eq(o.renumbered, cases[k].renumbered);
        ck_assert_str_eq(o.resolved, cases[k].renumbered ? "spatial" : "given");
        if (k == 0)
            ck_assert_msg(o.spread > 50.0, "%g", o.spread);
        if (k == 2)
            ck_assert_msg(fabs(o.spread - 1.0) < 1e-9, "%g", o.spread);
    }
}
END_TEST

/* A CD config run in DEM mode (--set system.mode=dem) is its DEM twin: [solver] is not used
 * (one notice), dem.stiffness_from_cd defaults to its N_I, cd_sweep to its sweep and cd_dt to
 * the file's dt; [dem] in a CD run is ignored the same way; a misspelt key in an ignored
 * section is still an error; every sweep order has a q. */
START_TEST(unit_twin_from_cd_config)
{
    const char *cd_ini = "[system]\ndimension = 1\ndt = 1.0\nsteps = 10\n"
                         "[solver]\nsweep = backward\ncriterion = fixed\niterations = 30\n"
                         "[particles]\ncount = 5\nradius = 0.5\nmass = 1\norigin = 1.5 0 0\n"
                         "[dem]\ndamping_tangential = 0.1\n"
                         "[plane.wall]\npoint = 0 0 0\nnormal = 1 0 0\n";
    config c;
    diag err = {{0}};
    char note[4096] = "";
    run_hooks hk = {.message = keep_message, .user = note};
    /* as a CD run: [dem] ignored with a notice */
    ck_assert_int_eq(config_load_string(&c, cd_ini, "cd.ini", &err), CDLAB_OK);
    ck_assert_msg(run_validate(&c, &hk, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_msg(strstr(note, "[dem] not used with system.mode = cd"), "%s", note);
    config_free(&c);
    /* as its DEM twin */
    note[0] = '\0';
    ck_assert_int_eq(config_load_string(&c, cd_ini, "cd.ini", &err), CDLAB_OK);
    ck_assert_int_eq(config_set(&c, "system.mode=dem", &err), CDLAB_OK);
    ck_assert_int_eq(config_set(&c, "system.dt=0.002", &err), CDLAB_OK);
    ck_assert_msg(run_validate(&c, &hk, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_msg(strstr(note, "dem.stiffness_from_cd = 30, cd_sweep = backward, cd_dt = 1)"), "%s",
                  note);
    world W;
    scene_info info;
    dem_setup d;
    equiv_twin twin = {.present = 1, .sweep = SWEEP_BACKWARD, .iterations = 30};
    ck_assert_int_eq(scene_build(&c, &W, &info, &err), CDLAB_OK);
    ck_assert_msg(dem_config_read(&c, &W, &info, &twin, &d, &err) == CDLAB_OK, "%s", err.msg);
    /* kappa = q m N_I/dt_CD^2 with the measured q = 1.00 of the ordered sweeps (exact) */
    ck_assert_double_eq_tol(d.p.law.k_n, EQUIV_Q_ORDERED_MEASURED * 1.0 * 30 / 1.0, 1e-12);
    ck_assert(d.cd_dt == 1.0);
    world_free(&W);
    config_free(&c);
    /* the twin of a colored run whose colouring is in hashed order takes that colouring's q
     * (0.770, not the key order's 0.751), and its notice says so */
    note[0] = '\0';
    ck_assert_int_eq(config_load_string(&c, cd_ini, "cd.ini", &err), CDLAB_OK);
    ck_assert_int_eq(config_set(&c, "solver.sweep=colored", &err), CDLAB_OK);
    ck_assert_int_eq(config_set(&c, "solver.color_priority=hashed", &err), CDLAB_OK);
    ck_assert_int_eq(config_set(&c, "system.mode=dem", &err), CDLAB_OK);
    ck_assert_int_eq(config_set(&c, "system.dt=0.002", &err), CDLAB_OK);
    ck_assert_msg(run_validate(&c, &hk, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_msg(strstr(note, "cd_sweep = colored, its colouring in hashed order, cd_dt = 1)"),
                  "%s", note);
    twin = (equiv_twin){.present = 1, .sweep = SWEEP_COLORED, .iterations = 30, .color_hashed = 1};
    ck_assert_int_eq(scene_build(&c, &W, &info, &err), CDLAB_OK);
    ck_assert_msg(dem_config_read(&c, &W, &info, &twin, &d, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_double_eq_tol(d.p.law.k_n, EQUIV_Q_COLORED_HASHED_MEASURED * 1.0 * 30 / 1.0, 1e-12);
    world_free(&W);
    config_free(&c);
    /* a misspelt key in an ignored section is an error, in both directions */
    ck_assert_int_eq(config_load_string(&c, cd_ini, "cd.ini", &err), CDLAB_OK);
    ck_assert_int_eq(config_set(&c, "dem.dampingtangential=0.1", &err), CDLAB_OK);
    ck_assert_int_eq(run_validate(&c, NULL, &err), CDLAB_ERR_CONFIG);
    ck_assert_msg(strstr(err.msg, "unknown key 'dampingtangential' in section [dem]"), "%s",
                  err.msg);
    config_free(&c);
    ck_assert_int_eq(config_load_string(&c, cd_ini, "cd.ini", &err), CDLAB_OK);
    ck_assert_int_eq(config_set(&c, "system.mode=dem", &err), CDLAB_OK);
    ck_assert_int_eq(config_set(&c, "system.dt=0.002", &err), CDLAB_OK);
    ck_assert_int_eq(config_set(&c, "solver.iteration=3", &err), CDLAB_OK);
    ck_assert_int_eq(run_validate(&c, NULL, &err), CDLAB_ERR_CONFIG);
    ck_assert_msg(strstr(err.msg, "unknown key 'iteration' in section [solver]"), "%s", err.msg);
    config_free(&c);
    /* a DEM config without [solver] still needs cd_dt for stiffness_from_cd */
    ck_assert_int_eq(
        config_load_string(&c,
                           "[system]\nmode = dem\ndimension = 3\ndt = 0.001\nsteps = 1\n"
                           "[dem]\nstiffness_from_cd = 20\n"
                           "[particles]\ncount = 2\nradius = 0.5\nmass = 1\n",
                           "x.ini", &err),
        CDLAB_OK);
    ck_assert_int_eq(run_validate(&c, NULL, &err), CDLAB_ERR_CONFIG);
    ck_assert_msg(strstr(err.msg, "dem.cd_dt"), "%s", err.msg);
    config_free(&c);
    /* every sweep order has a q: theory (random, jacobi) or measured (the others) */
    for (int k = 0; sweep_order_names[k]; k++)
        ck_assert_msg(equiv_q((sweep_order)k) > 0.4, "no q for %s", sweep_order_names[k]);
}
END_TEST

/* A head-on collision far too fast for a soft contact: the run stops with the step, the
 * particle ids and the overlap, and the output file stays readable with that status. */
START_TEST(errors_dem_abort_overlap)
{
    const char *ini = "[system]\nmode = dem\ndimension = 3\ndt = 1e-3\nsteps = 2000\n"
                      "[dem]\nk_n = 10\n"
                      "[particles]\ncount = 2\nradius = 0.5\nmass = 1\nspacing = 0.5\n"
                      "[load]\nparticles = 0\nforce = 400 0 0\n"
                      "[output]\nevery = 0\n";
    char path[32];
    diag err = {{0}};
    run_summary sum;
    status s = run_to_temp(ini, "fast.ini", path, &sum, &err);
    ck_assert_int_eq(s, CDLAB_ERR_NUMERIC);
    ck_assert_msg(strstr(err.msg, "of particles 0 and 1 exceeds dem.abort_overlap = 0.5 of the "
                                  "smaller radius") &&
                      strstr(err.msg, "step "),
                  "%s", err.msg);
    assert_stopped_file(path, &sum, "dem.abort_overlap");
}
END_TEST

/* Kuhn Fig. 6: a compressed 3D assembly rotated rigidly by 90 deg about x in 1000 increments;
 * the stress rotated back equals the original within 0.5% of its largest component with
 * projection and twirl; with the twirl off the error exceeds 5%. */
START_TEST(invariant_objectivity_rigid_rotation)
{
    lab_fig6 both, no_twirl;
    diag err;
    ck_assert_msg(lab_kuhn_fig6(1, 1, 1000, &both, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_msg(lab_kuhn_fig6(1, 0, 1000, &no_twirl, &err) == CDLAB_OK, "%s", err.msg);
    ck_assert_int_gt(both.contacts, 150);
    ck_assert_msg(both.error < 0.005, "projection and twirl: error %.4g of the largest component",
                  both.error);
    ck_assert_msg(no_twirl.error > 0.05, "twirl off: error only %.4g", no_twirl.error);
}
END_TEST

/* `cdlab equiv` prints eqs. (67)-(68) and a [dem] section that reproduces them. */
START_TEST(io_equiv_command)
{
    char cmd[512], out[4096];
    snprintf(cmd, sizeof cmd, "%s equiv 40 0.5 2 jacobi --length 30", cdlab_bin());
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 0);
    /* q = 1/2: kappa = 0.5 * 2 * 40 / 0.25 = 160, gamma = 80, c = sqrt(20)/0.5 = 8.944 */
    ck_assert_msg(strstr(out, "kappa     = 160 "), "%s", out);
    ck_assert_msg(strstr(out, "gamma     = 80 "), "%s", out);
    ck_assert_msg(strstr(out, "c         = 8.94427"), "%s", out);
    ck_assert_msg(strstr(out, "[dem]\nstiffness_from_cd = 40\ncd_dt = 0.5\ncd_sweep = jacobi"),
                  "%s", out);
    /* the ordered sweeps have a measured q = 1.00 (cd_config.h) */
    snprintf(cmd, sizeof cmd, "%s equiv 40 1 1 forward", cdlab_bin());
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "kappa     = 40 "), "%s", out);
    snprintf(cmd, sizeof cmd, "%s equiv 40 1 1 sideways 2>/dev/null", cdlab_bin());
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 2); /* no such sweep */
    /* N_I beyond solver.iterations' range (it wrapped round to -2147483648) or not whole */
    snprintf(cmd, sizeof cmd, "%s equiv --diameter 2 99999999999999999999 1 1 2>&1", cdlab_bin());
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "N_I must be an integer from 1 to 100000000, as solver.iterations "
                              "(got '99999999999999999999')"),
                  "%s", out);
    snprintf(cmd, sizeof cmd, "%s equiv 40.5 1 1 2>&1", cdlab_bin());
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "(got '40.5')"), "%s", out);
    /* hexadecimal, which strtod takes and config files refuse ("0x28" was read as 40), and a
     * mass under the smallest double */
    const char *nums[][2] = {{"0x28 1 1", "N_I must be a number > 0 (got '0x28')"},
                             {"40 1 1e-400", "MASS must be a number > 0 (got '1e-400')"}};
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "%s equiv %s 2>&1", cdlab_bin(), nums[k][0]);
        ck_assert_int_eq(run_capture(cmd, out, sizeof out), 2);
        ck_assert_msg(strstr(out, nums[k][1]), "%s: %s", nums[k][0], out);
    }
    /* an option given twice (the last won), without its number (taken for the sweep), unknown */
    const char *opts[][2] = {{"--length 50 --length 60", "--length given twice ('50', then '60')"},
                             {"--diameter", "--diameter needs a number"},
                             {"--diam 2", "unknown option '--diam'"}};
    for (int k = 0; k < 3; k++) {
        snprintf(cmd, sizeof cmd, "%s equiv 40 1 1 %s 2>&1", cdlab_bin(), opts[k][0]);
        ck_assert_int_eq(run_capture(cmd, out, sizeof out), 2);
        ck_assert_msg(strstr(out, opts[k][1]), "%s: %s", opts[k][0], out);
    }
    /* the [dem] section holds the time step as given (cd_dt = 0.00123457 described another
     * twin), k_n and the dashpot in full */
    snprintf(cmd, sizeof cmd, "%s equiv 40 0.00123456789 1.23456789 2>&1", cdlab_bin());
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "\ncd_dt = 0.00123456789\n") &&
                      strstr(out, "dt = 0.00123456789, particle mass m = 1.23456789,"),
                  "%s", out);
    {
        equiv_figures e = equiv_of(SWEEP_RANDOM, 40, 0.00123456789, 1.0, 1.23456789);
        char kn[32], want[80];
        config_fmt_double(kn, sizeof kn, e.kappa);
        snprintf(want, sizeof want, "; equivalent to: k_n = %s, ", kn);
        ck_assert_msg(strstr(out, want) && strlen(kn) > 12, "%s: %s", want, out);
    }
    /* figures beyond a double's range are refused (kappa = inf, a critical time step -nan) */
    snprintf(cmd, sizeof cmd, "%s equiv 40 1e-300 1e300 2>&1", cdlab_bin());
    ck_assert_int_eq(run_capture(cmd, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "cdlab equiv: kappa is inf for N_I = 40, DT = 1e-300, MASS = 1e300, "
                              "diameter 1: beyond the range of a double"),
                  "%s", out);
}
END_TEST

/* A DEM run through the run driver writes the energy ledger; the residual stays small. */
START_TEST(io_dem_run_energy_series)
{
    const char *ini =
        "[system]\nmode = dem\ndimension = 2\ndt = 2e-4\nsteps = 10000\ngravity = 0 -10 0\n"
        "[dem]\nk_n = 1e4\nk_t = 5e3\ndamping_normal = 0.2\ndamping_tangential = 0.1\n"
        "[contact]\nfriction = 0.4\n"
        "[particles]\nsource = random\ncount = 40\nradius_min = 0.4\nradius_max = 0.5\n"
        "box_min = 0 0 0\nbox_max = 8 12 0\n"
        "[plane.floor]\npoint = 0 0 0\nnormal = 0 1 0\n"
        "[plane.left]\npoint = 0 0 0\nnormal = 1 0 0\n"
        "[plane.right]\npoint = 8 0 0\nnormal = -1 0 0\n"
        "[output]\nevery = 0\n";
    char path[32];
    diag err = {{0}};
    run_summary sum;
    status s = run_to_temp(ini, "dem.ini", path, &sum, &err);
    ck_assert_msg(s == CDLAB_OK, "%s", err.msg);
    double *d;
    long n;
    ck_assert_int_eq(h5in_read_doubles(path, "/series/energy/work_external", &d, &n, &err),
                     CDLAB_OK);
    ck_assert_int_eq(n, 10001);
    double W_ext = d[n - 1];
    free(d);
    ck_assert_double_gt(W_ext, 10.0); /* the pile fell */
    ck_assert_int_eq(h5in_read_doubles(path, "/series/energy/balance_residual", &d, &n, &err),
                     CDLAB_OK);
    double worst = 0.0;
    for (long k = 0; k < n; k++)
        worst = fmax(worst, fabs(d[k]));
    free(d);
    /* relative to the work put in; omega dt = sqrt(2 k/m) dt ~ 0.035 here, so the integration
     * error is larger than in the pair tests (omega dt = 1e-3); see the closing bound */
    ck_assert_msg(worst < 1e-3 * W_ext, "residual %g of %g (%.3g)", worst, W_ext, worst / W_ext);
    char *v;
    ck_assert_int_eq(h5in_read_attr_string(path, "/", "program", &v, &err), CDLAB_OK);
    ck_assert_str_eq(v, "cdlab run (linear-frictional DEM)");
    free(v);
    remove_output(path);
}
END_TEST

/* The kinematic driver from a config: an overlapping chain along x rotated by 90 deg about z in
 * 100 steps; /series/stress turns sigma_xx into sigma_yy (to 1e-9 of it: normal forces only). */
START_TEST(io_drive_rotation_config)
{
    const char *ini = "[system]\nmode = dem\ndimension = 3\ndt = 1\nsteps = 100\n"
                      "[dem]\nk_n = 100\nk_t = 0\nstress_volume = 1\n"
                      "[drive]\nmotion = rotation\nrotation = 0 0 0.015707963267948967\n"
                      "[particles]\ncount = 4\nradius = 0.5\nmass = 1\nspacing = -0.1\n"
                      "[contact]\nmax_initial_overlap = 0.5\n"
                      "[output]\nevery = 0\n";
    char path[32];
    diag err = {{0}};
    run_summary sum;
    status s = run_to_temp(ini, "drive.ini", path, &sum, &err);
    ck_assert_msg(s == CDLAB_OK, "%s", err.msg);
    double *d;
    long n;
    ck_assert_int_eq(h5in_read_doubles(path, "/series/stress", &d, &n, &err), CDLAB_OK);
    ck_assert_int_eq(n, 101 * 9);
    /* three contacts, each f = k 0.1 = 10 along the branch of length 0.9:
     * sigma_xx = -3 * 10 * 0.9 = -27 (tension positive) */
    ck_assert_double_eq_tol(d[0], -27.0, 1e-9);
    const double *last = d + 100 * 9;
    ck_assert_double_eq_tol(last[4], -27.0, 27e-9); /* sigma_yy */
    ck_assert_double_eq_tol(last[0], 0.0, 27e-9);
    free(d);
    remove_output(path);
    /* gravity and a load, which move nothing under the drive, are said (with --quiet too: they
     * were taken without a word); without them nothing is */
    char file[] = "/tmp/cdlab_driveXXXXXX", cmd[512], text[4096];
    temp_text_file(file, ini);
    const char *sets[] = {"", "--set system.gravity=0,0,-10 --set load.particles=1 "
                              "--set load.force=1,0,0"};
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd, "%s check %s -q %s 2>&1", cdlab_bin(), file, sets[k]);
        ck_assert_int_eq(run_capture(cmd, text, sizeof text), 0);
        ck_assert_msg((strstr(text, "notice: [drive] prescribes every particle's motion: "
                                    "system.gravity and the [load] forces move nothing") != NULL) ==
                          k,
                      "%d: %s", k, text);
    }
    unlink(file);
}
END_TEST

/* The stress's volume along a periodic axis is the period: a periodic ring of 5 overlapping
 * spheres (a = 0.9 apart, 5 contacts of force k 0.1 = 10, the last across the boundary) in a
 * cell of 4.5 has sigma_xx = -5 * 10 * 0.9 / 4.5 = -10 (the bounding box of the particles, 4.6,
 * gave -9.78). */
START_TEST(io_stress_volume_periodic)
{
    const char *ini = "[system]\nmode = dem\ndimension = 1\ndt = 1e-3\nsteps = 0\nperiodic = x\n"
                      "box_min = 0 0 0\nbox_max = 4.5 0 0\n[dem]\nk_n = 100\nk_t = 0\n"
                      "[particles]\ncount = 5\nradius = 0.5\nmass = 1\nspacing = -0.1\n"
                      "origin = 0.45 0 0\n[contact]\nmax_initial_overlap = 0.5\n"
                      "[output]\nevery = 0\n";
    char path[32];
    diag err = {{0}};
    run_summary sum;
    ck_assert_msg(run_to_temp(ini, "pstress.ini", path, &sum, &err) == CDLAB_OK, "%s", err.msg);
    double *d;
    long n;
    ck_assert_int_eq(h5in_read_doubles(path, "/series/stress", &d, &n, &err), CDLAB_OK);
    ck_assert_int_eq(n, 9);
    ck_assert_double_eq_tol(d[0], -10.0, 1e-12);
    free(d);
    remove_output(path);
}
END_TEST

/* Steps k0 .. k1 - 1 through the tuner, each taking one_thread seconds at one thread and
 * every_core at more. */
static void tuner_steps(thread_tuner *T, long k0, long k1, double one_thread, double every_core)
{
    for (long k = k0; k < k1; k++)
        run_tune_threads(T, k, cdlab_threads() > 1 ? every_core : one_thread, NULL);
}

/* The automatic thread choice's rule (run_threads.c) on given step times, not measured ones: a
 * step under 0.3 ms at one thread is not tried at more threads; a longer one is tried at every
 * core and the faster count kept until the next trial, which comes later the longer the choice
 * stays (a machine of one core has nothing to try: its count stays 1). */
START_TEST(unit_thread_tuner_rule)
{
    int saved = cdlab_threads(), cores = cdlab_cores();
    /* short steps (0.1 ms): one thread through the trial and after it */
    thread_tuner T = run_tuner(0, 1);
    long first = T.trial_at;
    ck_assert_int_eq(first, 3); /* the trial after 3 steps of warm-up */
    tuner_steps(&T, 0, first + 20, 1e-4, 1e-5);
    ck_assert_int_eq(T.chosen, 1);
    ck_assert_int_eq(cdlab_threads(), 1);
    ck_assert_int_gt(T.trial_at, first + 20);
    /* long steps (1 ms), 0.6 ms at every core: the trial switches to every core */
    T = run_tuner(0, 1);
    tuner_steps(&T, 0, first + 16, 1e-3, 6e-4);
    ck_assert_int_eq(T.chosen, cores);
    ck_assert_int_eq(cdlab_threads(), cores);
    long next = T.trial_at;
    ck_assert_int_gt(next, first + 16);
    /* the next trial finds every core slower (2 ms): back to one thread */
    tuner_steps(&T, first + 16, next + 16, 1e-3, 2e-3);
    ck_assert_int_eq(T.chosen, 1);
    ck_assert_int_eq(cdlab_threads(), 1);
    ck_assert_int_gt(T.trial_at, next + 16);
    cdlab_set_threads(saved);
}
END_TEST

/* system.threads = 1, 2 and automatic (0: the run times 1 thread against 2 and may switch in
 * the middle) give bit-identical results; the output records how the count was chosen. */
START_TEST(determinism_threads_setting)
{
    const char *fmt = "[system]\nmode = dem\ndimension = 3\ndt = 1e-3\nsteps = 300\nseed = 2\n"
                      "gravity = 0 0 -10\nthreads = %d\n"
                      "[dem]\nk_n = 1e4\nk_t = 5e3\ndamping_normal = 0.3\n"
                      "[particles]\nsource = random\ncount = 120\nradius_min = 0.4\n"
                      "radius_max = 0.5\nbox_min = 0 0 0\nbox_max = 5 5 8\n"
                      "[contact]\nfriction = 0.4\n[plane.floor]\npoint = 0 0 0\nnormal = 0 0 1\n"
                      "[output]\nevery = 0\n";
    double *x[3];
    long n[3];
    const int settings[3] = {1, 2, 0};
    for (int k = 0; k < 3; k++) {
        char ini[1024], path[32];
        snprintf(ini, sizeof ini, fmt, settings[k]);
        diag err = {{0}};
        run_summary sum;
        ck_assert_msg(run_to_temp(ini, "threads.ini", path, &sum, &err) == CDLAB_OK, "%s", err.msg);
        ck_assert_int_eq(
            h5in_read_doubles(path, "/snapshots/00000300/position", &x[k], &n[k], &err), CDLAB_OK);
        char *why;
        ck_assert_int_eq(h5in_read_attr_string(path, "/build", "threads_chosen_by", &why, &err),
                         CDLAB_OK);
        ck_assert_msg(strstr(why, settings[k] ? "system.threads" : "automatic") ||
                          (settings[k] == 0 && getenv("OMP_NUM_THREADS")),
                      "%s", why);
        free(why);
        if (settings[k] == 0 && !getenv("OMP_NUM_THREADS")) {
            /* automatic: one thread or every core, whichever its trials measured faster (120
             * spheres' steps are under the 0.3 ms below which more threads are not tried, in
             * an optimised build on an idle machine; in the sanitizers' build beside another
             * job they were not, and the trial kept 2 threads: the rule itself is
             * unit_thread_tuner_rule's, on given step times) */
            h5in *h;
            long long used;
            ck_assert_int_eq(h5in_open(&h, path, &err), CDLAB_OK);
            ck_assert_int_eq(h5in_attr_int(h, "/summary", "threads", &used, &err), CDLAB_OK);
            h5in_close(h);
            ck_assert_msg(used == 1 || used == cdlab_cores(), "used %lld threads", used);
        }
        remove_output(path);
    }
    for (int k = 1; k < 3; k++) {
        ck_assert_int_eq(n[k], n[0]);
        ck_assert_msg(memcmp(x[k], x[0], (size_t)n[0] * sizeof(double)) == 0,
                      "system.threads = %d differs from 1", settings[k]);
    }
    for (int k = 0; k < 3; k++)
        free(x[k]);
}
END_TEST

/* quat_integrate_n (the drift's quaternions, four at a time) is quat_integrate bit for bit:
 * 4,003 rotations (not a multiple of 4: the tail) of random unit and non-unit quaternions by
 * random small, zero, large (> 1e-2 rad) and NaN rotation vectors. */
START_TEST(unit_quat_integrate_n_matches)
{
    enum { N = 4003 };
    static double qa[4 * N], qb[4 * N], q0[4 * N];
    static vec3 phi[N];
    pcg32 rng;
    pcg32_seed(&rng, 19, 7);
    for (int k = 0; k < N; k++) {
        double n2 = 0.0;
        for (int c = 0; c < 4; c++) {
            qa[4 * k + c] = 2.0 * pcg32_uniform(&rng) - 1.0;
            n2 += qa[4 * k + c] * qa[4 * k + c];
        }
        double f = k % 7 == 3 ? 1.5 : 1.0 / sqrt(n2); /* every 7th far from unit */
        for (int c = 0; c < 4; c++)
            qa[4 * k + c] *= f;
        double scale = k % 11 == 5 ? 0.3 : 1e-3 * pcg32_uniform(&rng);
        phi[k] =
            v3(scale * (2.0 * pcg32_uniform(&rng) - 1.0), scale * (2.0 * pcg32_uniform(&rng) - 1.0),
               scale * (2.0 * pcg32_uniform(&rng) - 1.0));
        if (k % 13 == 2)
            phi[k] = v3_zero();
        if (k == 1001)
            phi[k].y = NAN;
    }
    memcpy(qb, qa, sizeof qa);
    memcpy(q0, qa, sizeof qa);
    for (int k = 0; k < N; k++)
        quat_integrate(&qa[4 * k], phi[k]);
    quat_integrate_n(qb, phi, N);
    int changed = 0;
    for (int k = 0; k < N; k++)
        changed += memcmp(&q0[4 * k], &qa[4 * k], 4 * sizeof *qa) != 0;
    ck_assert_int_gt(changed, N / 2); /* the rotations did move the quaternions */
    ck_assert_int_eq(memcmp(qa, qb, sizeof qa), 0);
}
END_TEST

/* The pair pass's four-pairs-at-a-time path (pairs4: the lanes of vec3x4.h, the sliding
 * pairs' law alone) gives contact_force's bits: 400 spheres settling in a periodic box with
 * friction, dashpots as fractions of critical (a square root in the lanes), the Kuhn law with
 * projection and twirl, 2,400 steps; every state and the ledger compared with memcmp against the
 * run that takes every pair through contact_force. Some pairs slide. */
static const char *LANES =
    "[system]\nmode = dem\ndimension = 3\ndt = 1e-3\nsteps = 1\nseed = 3\n"
    "gravity = 2 1 -10\nperiodic = x y\nbox_min = 0 0 -1\nbox_max = 6 6 18\n"
    "[dem]\nk_n = 2e4\nk_t = 8e3\ndamping_normal = 0.3\ndamping_tangential = 0.1\n"
    "[contact]\nfriction = 0.3\n"
    "[particles]\nsource = random\ncount = 400\nradius_min = 0.3\nradius_max = 0.5\n"
    "box_min = 0 0 0\nbox_max = 6 6 17\n"
    "[plane.base]\npoint = 0 0 0\nnormal = 0 0 1\n";

/* The start's pair count (scene_info.start_pairs: the memory estimate's and the refusal of a
 * list too large for the memory) is the first neighbour list's length, walls' pairs included:
 * LANES's 400 polydisperse spheres in a periodic box on a plane, with four detect_gaps; the list
 * grows with the gap. */
START_TEST(unit_start_pairs_first_list)
{
    const char *gaps[] = {"0", "0.05", "0.5", "1.5"};
    long last = -1;
    for (int g = 0; g < 4; g++) {
        config c;
        diag err = {{0}};
        char set[64];
        snprintf(set, sizeof set, "contact.detect_gap=%s", gaps[g]);
        dsim s;
        memset(&s, 0, sizeof s);
        ck_assert_int_eq(config_load_string(&c, LANES, "lanes.ini", &err), CDLAB_OK);
        ck_assert_int_eq(config_set(&c, set, &err), CDLAB_OK);
        ck_assert_msg(scene_build(&c, &s.W, &s.info, &err) == CDLAB_OK, "%s", err.msg);
        ck_assert_msg(dem_config_read(&c, &s.W, &s.info, NULL, &s.d, &err) == CDLAB_OK, "%s",
                      err.msg);
        config_free(&c);
        dem_solver_init(&s.S);
        dsim_start(&s);
        ck_assert_msg(s.S.npair == s.info.start_pairs, "gap %s: %d listed, %ld counted", gaps[g],
                      s.S.npair, s.info.start_pairs);
        ck_assert_int_eq(s.info.start_pairs_partial, 0);
        ck_assert_int_gt(s.info.start_pairs, last);
        last = s.info.start_pairs;
        dsim_close(&s);
    }
    ck_assert_int_gt(last, 400 * 10); /* gap 1.5: 16 pairs per sphere */
}
END_TEST

/* slide4 (the Kuhn law's sliding branch in lanes) against dem_contact_law, bit for bit: 4,000
 * random sliding pairs (their tangential force on the friction circle at the step's start, the
 * common case of a pair that goes on sliding and line 25's branch, or inside it: the general
 * root), and pairs made for the other branches: no rotation (force along the movement), c2 ~ 0
 * (no normal movement), and line 26's A = 0, which slide4 must hand back (ok cleared). */
static const double SL_KN = 2e5, SL_KT = 57142.857142857145, SL_MU = 0.5;

static vec3 sl_unit(pcg32 *rng)
{
    vec3 a;
    do
        a = v3(2.0 * pcg32_uniform(rng) - 1.0, 2.0 * pcg32_uniform(rng) - 1.0,
               2.0 * pcg32_uniform(rng) - 1.0);
    while (v3_norm2(a) < 0.01 || v3_norm2(a) > 1.0);
    return v3_scale(a, 1.0 / v3_norm(a));
}

/* the pair pass's slide_in and the law's input for one pair (lever arms zero: du = du_q) */
static void sl_make(vec3 n, double zeta_old, double zeta_new, vec3 ft_old, vec3 du, vec3 dth,
                    dem_contact_in *in, slide_in *s)
{
    *in = (dem_contact_in){.zeta_new = zeta_new,
                           .zeta_old = zeta_old,
                           .ft_old = ft_old,
                           .n = n,
                           .du_q = du,
                           .dth_p = dth,
                           .dth_q = dth};
    double dzeta = -v3_dot(du, n);
    *s = (slide_in){.n = n,
                    .dxi = v3_axpy(dzeta, n, du),
                    .ft_old = ft_old,
                    .dzeta = dzeta,
                    .zeta_old = zeta_old,
                    .zeta_new = zeta_new,
                    .spin = 0.5 * v3_dot(v3_add(dth, dth), n)};
}

/* whether the pass would give the pair to slide4: touching before and after, the trial force
 * beyond the friction circle, |spin| < 1e-2 */
static int sl_sliding(const slide_in *s)
{
    vec3 trial = v3_axpy(SL_KT, s->dxi, s->ft_old);
    return s->zeta_old > 0.0 && s->zeta_new >= 0.0 && fabs(s->spin) < 1e-2 &&
           v3_norm(trial) > SL_MU * (SL_KN * s->zeta_new);
}

/* runs slide4 on four pairs and compares each lane it made with the law; returns the lanes made */
static int sl_check(const dem_law *L, const dem_contact_in in[4], const slide_in sin[4],
                    int made[4])
{
    const slide_in *s[4] = {&sin[0], &sin[1], &sin[2], &sin[3]};
    v4m ok;
    vv3 ft, f;
    v4d irrev;
    slide4(L, SL_MU, s, &ok, &ft, &f, &irrev);
    int n = 0;
    for (int l = 0; l < 4; l++) {
        made[l] = ok[l] != 0;
        if (!made[l])
            continue;
        dem_contact_out out;
        dem_contact_law(L, &in[l], &out);
        ck_assert_int_eq(out.sliding, 1);
        vec3 a = vv3_lane(ft, l), b = vv3_lane(f, l);
        double w = irrev[l];
        ck_assert_msg(memcmp(&a, &out.ft, sizeof a) == 0, "lane %d: f_t differs", l);
        ck_assert_msg(memcmp(&b, &out.f, sizeof b) == 0, "lane %d: f differs", l);
        ck_assert_msg(memcmp(&w, &out.dW_t_irrev, sizeof w) == 0,
                      "lane %d: dW_t_irrev %.17g vs %.17g", l, w, out.dW_t_irrev);
        n++;
    }
    return n;
}

START_TEST(unit_slide4_matches_law)
{
    dem_law L = {.k_n = SL_KN,
                 .k_t = SL_KT,
                 .mu = SL_MU,
                 .eps = 1e-12,
                 .tangential = DEM_KUHN,
                 .projection = 1,
                 .twirl = 1};
    pcg32 rng;
    pcg32_seed(&rng, 23, 5);
    int made_limit = 0, made_inside = 0, drawn = 0, made_all = 0;
    while (drawn < 4000) {
        dem_contact_in in[4];
        slide_in sin[4];
        int on_circle[4];
        for (int l = 0; l < 4; l++) {
            do {
                vec3 n = sl_unit(&rng);
                /* the overlap of the step's end as the movement makes it (zeta + dzeta) */
                double zo = 1e-4 + 1e-2 * pcg32_uniform(&rng);
                double dz = zo * (0.6 * pcg32_uniform(&rng) - 0.3), zn = zo + dz;
                vec3 t = v3_reject(sl_unit(&rng), n), m = v3_reject(sl_unit(&rng), n);
                t = v3_scale(t, 1.0 / v3_norm(t));
                on_circle[l] = pcg32_uniform(&rng) < 0.5;
                double mag =
                    SL_MU * (SL_KN * zo) * (on_circle[l] ? 1.0 : 0.3 + 0.69 * pcg32_uniform(&rng));
                vec3 du =
                    v3_axpy(-dz, n, v3_scale(m, zo * (0.05 + pcg32_uniform(&rng)) / v3_norm(m)));
                vec3 dth = v3_scale(sl_unit(&rng), 4e-3 * pcg32_uniform(&rng));
                sl_make(n, zo, zn, v3_scale(t, mag), du, dth, &in[l], &sin[l]);
            } while (!sl_sliding(&sin[l]));
        }
        int made[4];
        made_all += sl_check(&L, in, sin, made);
        for (int l = 0; l < 4; l++) {
            made_limit += made[l] && on_circle[l];
            made_inside += made[l] && !on_circle[l];
        }
        drawn += 4;
    }
    /* nearly every random sliding pair is slide4's own */
    ck_assert_int_ge(made_all, 3900);
    ck_assert_int_gt(made_limit, 1000);
    ck_assert_int_gt(made_inside, 1000);
    /* made pairs, n along z: 0 no rotation (f_t along the movement), 1 no normal movement (c2 =
     * 0), 2 line 26 (A = 0 exactly: mu k_n dzeta = k_t |dxi|, with k_n = k_t = 1), 3 an ordinary
     * one with a spin about n (the twirl) */
    dem_law L1 = L;
    L1.k_n = L1.k_t = 1.0;
    vec3 z = v3(0.0, 0.0, 1.0);
    dem_contact_in in[4];
    slide_in sin[4];
    sl_make(z, 1e-3, 1e-3, v3(2e-4, 0.0, 0.0), v3(1e-3, 0.0, 0.0), v3_zero(), &in[0], &sin[0]);
    sl_make(z, 1e-3, 1e-3, v3(3e-4, 2e-4, 0.0), v3(1e-3, -2e-3, 0.0), v3_zero(), &in[1], &sin[1]);
    sl_make(z, 1e-3, 1e-3, v3(3e-4, 3.5e-4, 0.0), v3(2.5e-4, 0.0, -5e-4), v3_zero(), &in[2],
            &sin[2]);
    sl_make(z, 1e-3, 9e-4, v3(-3e-4, 1e-4, 0.0), v3(4e-4, 7e-4, 1e-4), v3(0.0, 0.0, 2e-3), &in[3],
            &sin[3]);
    for (int l = 0; l < 4; l++) {
        /* sliding as the pass decides it, with this law's constants */
        vec3 trial = v3_axpy(L1.k_t, sin[l].dxi, sin[l].ft_old);
        ck_assert(v3_norm(trial) > SL_MU * (L1.k_n * sin[l].zeta_new));
    }
    int made[4];
    ck_assert_int_eq(sl_check(&L1, in, sin, made), 3);
    ck_assert(made[0] && made[1] && !made[2] && made[3]);
    ck_assert(sin[1].dzeta == 0.0);
}
END_TEST

/* The pass's pairs four at a time give what every pair through contact_force gives, bit for
 * bit, under the Kuhn law, the conventional law (its sliding lanes too, which pairs4 makes in
 * lanes: it failed for the limit's scale taken as a product with the inverse length), without
 * projection and twirl, and under the lammps law (lammps4), with its dashpots as fractions of
 * the critical ones and as rates. */
START_TEST(unit_pair_lanes_match_one_by_one)
{
    const char *laws[] = {
        "", "[dem]\ntangential = conventional\n", "[dem]\nprojection = false\ntwirl = false\n",
        "[dem]\ntangential = lammps\n", "[dem]\ntangential = lammps\ndamping = rate\n"};
    for (int v = 0; v < 5; v++) {
        char ini[1024];
        snprintf(ini, sizeof ini, "%s%s", LANES, laws[v]);
        dsim a, b;
        dsim_open(&a, ini);
        dsim_open(&b, ini);
        b.S.one_by_one = 1;
        int slid = 0;
        for (int r = 0; r < 6; r++) {
            dsim_steps(&a, 400);
            dsim_steps(&b, 400);
            slid += a.st.n_sliding;
            ck_assert_int_eq(a.st.n_sliding, b.st.n_sliding);
            ck_assert_int_eq(a.st.n_active, b.st.n_active);
        }
        ck_assert_msg(slid > 0, "law %d: nothing slid", v);
        ck_assert_int_gt(a.st.n_active, 200);
        int n = a.W.P.n;
        same_particles(&a.W, &b.W);
        ck_assert_int_eq(memcmp(a.W.P.q, b.W.P.q, (size_t)n * 4 * sizeof *a.W.P.q), 0);
        ck_assert_int_eq(memcmp(a.S.F, b.S.F, (size_t)n * sizeof *a.S.F), 0);
        ck_assert_int_eq(memcmp(a.S.T, b.S.T, (size_t)n * sizeof *a.S.T), 0);
        ck_assert_int_eq(a.S.npair, b.S.npair);
        ck_assert_int_eq(memcmp(a.S.pair, b.S.pair, (size_t)a.S.npair * sizeof *a.S.pair), 0);
        ck_assert_int_eq(memcmp(&a.S.E, &b.S.E, sizeof a.S.E), 0);
        dsim_close(&a);
        dsim_close(&b);
    }
}
END_TEST

/* The force write-back's blocks (cd/dem/dem_writeback.c, dem_build_writeback) follow the thread
 * count: 4,000 polydisperse spheres settling on a plane in a periodic box (22,000 pairs, 2,800
 * touching), their pairs in 1 block on 1 thread, 2 blocks on 2 (one per thread) and 6 on 3 (two per
 * thread), each whole DEM_BLOCKs of the list, with straddlers gathered from side rows; positions,
 * velocities, orientations, forces, the pairs and the ledger after 600 steps compared with memcmp
 * against the one-thread run. */
START_TEST(unit_writeback_blocks_match_one_thread)
{
    const char *ini =
        "[system]\nmode = dem\ndimension = 3\ndt = 1e-3\nsteps = 1\nseed = 8\n"
        "gravity = 3 0 -30\nperiodic = x y\nbox_min = 0 0 -1\nbox_max = 12 12 31\n"
        "[dem]\nk_n = 2e4\nk_t = 8e3\ndamping_normal = 0.3\n"
        "[contact]\nfriction = 0.3\ndetect_gap = 0.5\n"
        "[particles]\nsource = random\ncount = 4000\nradius_min = 0.3\nradius_max = 0.5\n"
        "box_min = 0 0 0\nbox_max = 12 12 29\n"
        "[plane.base]\npoint = 0 0 0\nnormal = 0 0 1\n";
    int saved = cdlab_threads();
    const int threads[3] = {1, 2, 3}, blocks[3] = {1, 2, 6};
    dsim s[3];
    for (int t = 0; t < 3; t++) {
        cdlab_set_threads(threads[t]);
        dsim_open(&s[t], ini);
        dsim_steps(&s[t], 600);
        const dem_solver *S = &s[t].S;
        ck_assert_int_eq(S->nwb, blocks[t]);
        ck_assert_int_eq(S->wbs[0], 0);
        ck_assert_int_eq(S->wbs[S->nwb], S->npair);
        for (int b = 1; b < S->nwb; b++) {
            ck_assert_int_eq(S->wbs[b] % 1024, 0);
            ck_assert_int_gt(S->wbs[b], S->wbs[b - 1]);
        }
        if (t > 0)
            ck_assert_msg(S->nstrad > 50, "%d threads: %d straddlers", threads[t], S->nstrad);
    }
    cdlab_set_threads(saved);
    ck_assert_int_gt(s[0].S.npair, 5 * 4096); /* 6 blocks of at least 4,096 pairs */
    ck_assert_int_gt(s[0].st.n_active, 2000);
    int n = s[0].W.P.n;
    for (int t = 1; t < 3; t++) {
        same_particles(&s[0].W, &s[t].W);
        ck_assert_int_eq(memcmp(s[0].W.P.q, s[t].W.P.q, (size_t)n * 4 * sizeof *s[0].W.P.q), 0);
        ck_assert_int_eq(memcmp(s[0].S.F, s[t].S.F, (size_t)n * sizeof *s[0].S.F), 0);
        ck_assert_int_eq(memcmp(s[0].S.T, s[t].S.T, (size_t)n * sizeof *s[0].S.T), 0);
        ck_assert_int_eq(s[0].S.npair, s[t].S.npair);
        ck_assert_int_eq(
            memcmp(s[0].S.pair, s[t].S.pair, (size_t)s[0].S.npair * sizeof *s[0].S.pair), 0);
        ck_assert_int_eq(memcmp(&s[0].S.E, &s[t].S.E, sizeof s[0].S.E), 0);
    }
    for (int t = 0; t < 3; t++)
        dsim_close(&s[t]);
}
END_TEST

Suite *dem_suite(void)
{
    Suite *s = suite_create("dem");
    TCase *te = tcase_create("energy");
    tcase_set_timeout(te, TEST_TIMEOUT_SECONDS);
    tcase_add_test(te, energy_elastic_pair_conserves);
    tcase_add_test(te, energy_ledger_closes_with_friction_and_damping);
    suite_add_tcase(s, te);
    TCase *ta = tcase_create("analytic");
    tcase_set_timeout(ta, TEST_TIMEOUT_SECONDS);
    tcase_add_test(ta, analytic_sliding_pair);
    tcase_add_test(ta, analytic_dem_restitution);
    tcase_add_test(ta, analytic_dem_slide_to_roll);
    tcase_add_test(ta, analytic_dem_wave_twin);
    tcase_add_test(ta, reference_lammps_chute);
    tcase_add_test(ta, reference_lammps_walls);
    tcase_add_test(ta, reference_lammps_discs);
    suite_add_tcase(s, ta);
    TCase *tio = tcase_create("io");
    tcase_set_timeout(tio, TEST_TIMEOUT_SECONDS);
    tcase_add_test(tio, io_equiv_command);
    tcase_add_test(tio, io_dem_run_energy_series);
    tcase_add_test(tio, io_order_spatial_is_sorted_input);
    tcase_add_test(tio, io_order_hint_for_unordered_input);
    tcase_add_test(tio, io_drive_rotation_config);
    tcase_add_test(tio, io_stress_volume_periodic);
    tcase_add_test(tio, unit_thread_tuner_rule);
    tcase_add_test(tio, determinism_threads_setting);
    suite_add_tcase(s, tio);
    TCase *tr = tcase_create("errors");
    tcase_add_test(tr, errors_critical_dt);
    tcase_add_test(tr, errors_lammps_law_keys);
    tcase_add_test(tr, unit_quat_integrate_n_matches);
    tcase_add_test(tr, unit_pair_lanes_match_one_by_one);
    tcase_add_test(tr, unit_writeback_blocks_match_one_thread);
    tcase_add_test(tr, unit_slide4_matches_law);
    tcase_add_test(tr, unit_start_pairs_first_list);
    tcase_add_test(tr, unit_order_spatial_renumbers);
    tcase_add_test(tr, unit_order_auto_decides);
    tcase_add_test(tr, unit_twin_from_cd_config);
    tcase_add_test(tr, errors_dem_abort_overlap);
    suite_add_tcase(s, tr);
    TCase *ti = tcase_create("invariant");
    tcase_set_timeout(ti, TEST_TIMEOUT_SECONDS);
    tcase_add_test(ti, invariant_objectivity_rigid_rotation);
    suite_add_tcase(s, ti);
    return s;
}

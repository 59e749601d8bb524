#include "dem/dem_lab.h"

#include "dem/dem_config.h"

#include <stdlib.h>
#include <string.h>

vec3 lab_substepped(double k_n, double k_t, double mu, double z0, double z1, vec3 ft, vec3 dxi,
                    long N, double *dissipated)
{
    vec3 d = v3_scale(dxi, 1.0 / (double)N);
    double diss = 0.0;
    for (long k = 1; k <= N; k++) {
        double fn = k_n * (z0 + (z1 - z0) * (double)k / (double)N);
        vec3 trial = v3_axpy(k_t, d, ft);
        double len = v3_norm(trial);
        vec3 next = len > mu * fn ? v3_scale(trial, mu * fn / len) : trial;
        /* work of the increment (trapezoid) minus the change of stored energy */
        diss += 0.5 * v3_dot(d, v3_add(ft, next)) - (v3_norm2(next) - v3_norm2(ft)) / (2.0 * k_t);
        ft = next;
    }
    *dissipated = diss;
    return ft;
}

dem_law lab_fig4_law(dem_tangential t)
{
    return (dem_law){.k_n = 1e6,
                     .k_t = 8e5,
                     .mu = 0.5,
                     .eps = 1e-12,
                     .tangential = t,
                     .projection = 1,
                     .twirl = 1};
}

dem_contact_out lab_law_step(const dem_law *L, double zeta_old, double zeta_new, vec3 ft, vec3 dxi)
{
    dem_contact_in in;
    memset(&in, 0, sizeof in);
    in.zeta_old = zeta_old;
    in.zeta_new = zeta_new;
    in.ft_old = ft;
    in.n = v3(0, 0, 1);
    /* q moves by dxi and approaches p by (zeta_new - zeta_old) along -n (a new contact: 0) */
    in.du_q = v3_axpy(-(zeta_new - (zeta_old > 0 ? zeta_old : zeta_new)), in.n, dxi);
    dem_contact_out out;
    dem_contact_force(L, &in, &out);
    return out;
}

static double angle_deg(vec3 f) /* from the movement (+y) toward m_perp = z x y = -x */
{
    return atan2(-f.x, f.y) * 180.0 / CDLAB_PI;
}

lab_fig4 lab_kuhn_fig4(double ratio, double z0, double z1, long substeps)
{
    const double k_n = 1e6, k_t = 8e5, mu = 0.5, fn = k_n * z0;
    vec3 ft0 = v3(mu * fn, 0, 0), dxi = v3(0, ratio * mu * fn / k_t, 0);
    double diss;
    vec3 ref = lab_substepped(k_n, k_t, mu, z0, z1, ft0, dxi, substeps, &diss);
    dem_law kuhn = lab_fig4_law(DEM_KUHN), conv = lab_fig4_law(DEM_CONVENTIONAL);
    vec3 fk = lab_law_step(&kuhn, z0, z1, ft0, dxi).ft,
         fc = lab_law_step(&conv, z0, z1, ft0, dxi).ft;
    return (lab_fig4){.ratio = ratio,
                      .angle_ref = angle_deg(ref),
                      .angle_kuhn = angle_deg(fk),
                      .angle_conv = angle_deg(fc),
                      .mag_ref = v3_norm(ref),
                      .mag_kuhn = v3_norm(fk),
                      .mag_conv = v3_norm(fc)};
}

typedef struct dsetup {
    world W;
    scene_info info;
    dem_setup d;
    dem_solver S;
} dsetup;

static status dsetup_open(dsetup *s, const char *ini, diag *err)
{
    config c;
    memset(s, 0, sizeof *s);
    status st = config_load_string(&c, ini, "lab.ini", err);
    if (st == CDLAB_OK)
        st = scene_build(&c, &s->W, &s->info, err);
    if (st == CDLAB_OK)
        st = dem_config_read(&c, &s->W, &s->info, NULL, &s->d, err);
    config_free(&c);
    dem_solver_init(&s->S);
    return st;
}

static void dsetup_close(dsetup *s)
{
    dem_solver_free(&s->S);
    world_free(&s->W);
    scene_info_free(&s->info);
}

status lab_kuhn_fig6(int projection, int twirl, int increments, lab_fig6 *out, diag *err)
{
    const char *ini = "[system]\nmode = dem\ndimension = 3\ndt = 1\nsteps = 1\nseed = 4\n"
                      "[dem]\nk_n = 1e4\nk_t = 1e4\nallow_unstable_dt = true\n"
                      "[contact]\nfriction = 0.5\ndetect_gap = 0.2\n"
                      "[particles]\nsource = random\ncount = 300\nradius_min = 0.4\n"
                      "radius_max = 0.6\nbox_min = 0 0 0\nbox_max = 9 9 9\nmass = 1\n";
    dsetup s;
    status st = dsetup_open(&s, ini, err);
    int n = s.W.P.n;
    vec3 *du = malloc((size_t)(n > 0 ? n : 1) * sizeof *du),
         *dth = malloc((size_t)(n > 0 ? n : 1) * sizeof *dth);
    if (st == CDLAB_OK && (!du || !dth))
        st = diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    vec3 centre = v3(4.5, 4.5, 4.5);
    dem_stats ds;
    /* compression: 18% along x, 10% along y and z, with some shear so that the tangential
     * forces are not aligned with the axes; 200 increments */
    double G[3][3] = {{-0.18, 0.03, 0.0}, {0.0, -0.10, 0.02}, {0.01, 0.0, -0.10}};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            G[a][b] /= 200;
    for (int k = 0; k < 200 && st == CDLAB_OK; k++) {
        dem_affine(&s.W, centre, G, du, dth);
        st = dem_kinematic_step(&s.W, &s.S, &s.d.p, du, dth, &ds, err);
    }
    out->contacts = ds.n_active;
    /* the packing is prepared with the full law; only the rotation uses the variant */
    s.d.p.law.projection = projection;
    s.d.p.law.twirl = twirl;
    double sig90[3][3];
    if (st == CDLAB_OK)
        dem_stress(&s.W, &s.S, 1.0, out->sigma0, NULL);
    for (int k = 0; k < increments && st == CDLAB_OK; k++) {
        dem_rigid_rotation(&s.W, centre, v3(0.5 * CDLAB_PI / increments, 0, 0), du, dth);
        st = dem_kinematic_step(&s.W, &s.S, &s.d.p, du, dth, &ds, err);
    }
    if (st == CDLAB_OK) {
        dem_stress(&s.W, &s.S, 1.0, sig90, NULL);
        /* sigma0' = Q^T sigma90 Q with Q the +90 deg rotation about x: (y, z) -> (-z, y) */
        double Q[3][3] = {{1, 0, 0}, {0, 0, -1}, {0, 1, 0}};
        double emax = 0.0, smax = 0.0;
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) {
                double v = 0.0;
                for (int k = 0; k < 3; k++)
                    for (int l = 0; l < 3; l++)
                        v += Q[k][a] * sig90[k][l] * Q[l][b];
                out->sigma_back[a][b] = v;
                emax = fmax(emax, fabs(v - out->sigma0[a][b]));
                smax = fmax(smax, fabs(out->sigma0[a][b]));
            }
        out->error = emax / smax;
    }
    free(du);
    free(dth);
    dsetup_close(&s);
    return st;
}

status lab_sliding_pair(lab_pair_row rows[LAB_PAIR_ROWS], diag *err)
{
    const char *ini = "[system]\nmode = dem\ndimension = 3\ndt = 5e-3\nsteps = 1\n"
                      "[dem]\nk_n = 1e9\nk_t = 1e9\nallow_unstable_dt = true\n"
                      "[contact]\nfriction = 0.3\nmax_initial_overlap = 0.5\n"
                      "[particles]\ncount = 2\nradius = 5e-4\nmass = 1e-6\nspacing = -1e-4\n"
                      "direction = 0 0 1\n";
    dsetup s;
    status st = dsetup_open(&s, ini, err);
    const double v = 1e-3, dt = 5e-3;
    vec3 du[2], dth[2] = {v3_zero(), v3_zero()};
    dem_stats ds;
    for (int k = 0; k < LAB_PAIR_ROWS && st == CDLAB_OK; k++) {
        double t = k * dt, dir = t < 0.5 - 1e-12 ? 1 : (t < 1.0 - 1e-12 ? -1 : 1);
        du[0] = v3_zero();
        du[1] = v3(dir * v * dt, 0, 0);
        st = dem_kinematic_step(&s.W, &s.S, &s.d.p, du, dth, &ds, err);
        lab_pair_row *r = &rows[k];
        memset(r, 0, sizeof *r);
        r->t = (k + 1) * dt;
        r->x = s.W.P.x[1].x - s.W.P.x[0].x;
        r->delta = -(v3_norm(v3_sub(s.W.P.x[1], s.W.P.x[0])) - 2 * 5e-4);
        r->sliding = ds.n_sliding > 0;
        for (int c = 0; c < s.S.npair; c++) {
            contact ct;
            dem_contact_record(&s.W, &s.S, c, &ct);
            vec3 Rt = v3_reject(ct.R, ct.n);
            r->fs = v3_norm(Rt) * (Rt.x >= 0 ? 1 : -1);
            r->fn = v3_dot(ct.R, ct.n);
            r->delta = -ct.gap; /* the overlap the law saw */
        }
    }
    dsetup_close(&s);
    return st;
}

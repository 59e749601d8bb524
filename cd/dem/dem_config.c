#include "dem/dem_config.h"
#include "dem/dem_tangential.h"

#include "engine/equiv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* dem.stiffness_from_cd = N_I: Unger & Kertesz eqs. (67)-(68), kappa = q m N_I/dt^2 and
 * gamma = q m N_I/dt, with the CD run's dt and sweep order, and the mean particle mass. The
 * tangential spring and dashpot: the same argument (eqs. 42-46) applied to the tangential
 * block of the contact's Delassus matrix, whose shock law (eq. 34) uses the tangential mass
 * m_t (eq. 18) where the normal one uses m_n (eq. 17), gives kappa m_t/m_n and gamma m_t/m_n
 * (equiv_tangential_ratio: 1/3 for discs, 2/7 for spheres); measured on a hexagonal lattice
 * of 138 discs under a piston, friction 0.3, random sweep, N_I = 20 and 40 (experiments/
 * cd_vs_dem): omega and tau of the twin within 1 and 2 % of the CD run's, where k_t = kappa
 * without a tangential dashpot was 6 % and 14 % off. */
static status stiffness_from_cd(config *c, const world *W, const scene_info *info,
                                const equiv_twin *twin, long from_cd, dem_setup *d, diag *err)
{
    const char *S = "dem";
    dem_params *p = &d->p;
    int is_twin = twin && twin->present;
    status s;
    double cd_dt, file_dt = NAN;
    const char *fdt = is_twin ? config_file_value(c, "system", "dt") : NULL;
    if (fdt) {
        if (!config_parse_number(fdt, &file_dt) || !(file_dt > 0.0))
            file_dt = NAN; /* config_double below then asks for dem.cd_dt */
    }
    int sweep;
    double omega;
    if ((s = config_double(c, S, "cd_dt", !isfinite(file_dt), file_dt, 0.0, 1, INFINITY, &cd_dt,
                           err)) ||
        (s = config_enum(c, S, "cd_sweep", 0, is_twin ? (int)twin->sweep : SWEEP_RANDOM,
                         sweep_order_names, &sweep, err)) ||
        (s = config_double(c, S, "cd_relaxation", 0,
                           is_twin && twin->relaxation > 0.0 ? twin->relaxation : 1.0, 0.0,
                           CONFIG_MIN_OPEN | CONFIG_MAX_OPEN, 2.0, &omega, err)))
        return s;
    d->cd_sweep = sweep;
    d->cd_dt = cd_dt;
    d->cd_relaxation = omega;
    /* the twin of a colored run whose colouring is in hashed order: that colouring's q */
    int hashed = is_twin && twin->color_hashed && sweep == SWEEP_COLORED;
    double q = equiv_q_of((sweep_order)sweep, hashed, omega);
    if (!isfinite(q))
        return config_error(c, S, omega == 1.0 ? "cd_sweep" : "cd_relaxation", err,
                            "no q for the %s sweep%s; give dem.k_n and the dashpot yourself",
                            sweep_order_names[sweep],
                            omega == 1.0 ? ""
                            : hashed     ? " relaxed, its colouring in hashed order (that q is "
                                           "measured at omega = 1 only)"
                                         : " relaxed above 1 (it is unstable)");
    for (const char *const *k = (const char *const[]){"k_n", "damping", "damping_normal", NULL}; *k;
         k++)
        if (config_has(c, S, *k))
            return config_error(c, S, *k, err,
                                "is set by dem.stiffness_from_cd; give one or the other");
    equiv_figures e = equiv_of_q(q, (int)from_cd, cd_dt, info->d_mean, info->m_mean);
    /* k_n = inf (cd_dt = 1e-200) ran with a -nan critical time step and no force */
    if (!(e.kappa > 0.0 && e.kappa < INFINITY && e.gamma > 0.0 && e.gamma < INFINITY))
        return config_error(c, S, "cd_dt", err,
                            "cd_dt = %g with stiffness_from_cd = %ld and the mean particle mass "
                            "%g gives k_n = %g and damping_normal = %g: beyond the range of a "
                            "double",
                            cd_dt, from_cd, info->m_mean, e.kappa, e.gamma);
    p->law.k_n = e.kappa;
    p->damp_n = e.gamma;
    p->damp_absolute = 1;
    char kn[32], gn[32]; /* as the resolved list records every number */
    config_fmt_double(kn, sizeof kn, e.kappa);
    config_fmt_double(gn, sizeof gn, e.gamma);
    config_record(c, S, "k_n", "%s", kn);
    config_record(c, S, "damping", "absolute");
    config_record(c, S, "damping_normal", "%s", gn);
    double ratio = equiv_tangential_ratio(W->P.dimension);
    if ((s = config_double(c, S, "k_t", 0, ratio * e.kappa, 0.0, 0, INFINITY, &p->law.k_t, err)) ||
        (s = config_double(c, S, "damping_tangential", 0, ratio * e.gamma, 0.0, 0, INFINITY,
                           &p->damp_t, err)))
        return s;
    return CDLAB_OK;
}

/* [drive]: every particle moved by a rigid rotation or an affine increment per step */
static status read_drive(config *c, const world *W, dem_setup *d, diag *err)
{
    status s;
    const char *motions[] = {"none", "rotation", "affine", NULL};
    int motion;
    if ((s = config_enum(c, "drive", "motion", 0, DRIVE_NONE, motions, &motion, err)))
        return s;
    d->drive = (drive_motion)motion;
    if (d->drive != DRIVE_NONE) {
        vec3 centroid = v3_zero();
        for (int i = 0; i < W->P.n; i++)
            centroid = v3_add(centroid, v3_scale(W->P.x[i], 1.0 / W->P.n));
        const double zero9[9] = {0};
        double g[9];
        if ((s = config_vec3(c, "drive", "centre", 0, centroid, &d->centre, err)) ||
            (d->drive == DRIVE_ROTATION &&
             (s = config_vec3(c, "drive", "rotation", 1, v3_zero(), &d->rotation, err))) ||
            (d->drive == DRIVE_AFFINE &&
             (s = config_doubles(c, "drive", "gradient", 1, 9, zero9, g, err))))
            return s;
        /* within the axes the particles move on (a rotation about x in 2D, or a gradient
         * entry of z, would move them off their plane or spin them about a locked axis) */
        int dim = W->P.dimension;
        vec3 w = d->rotation;
        if (d->drive == DRIVE_ROTATION && dim == 1)
            return config_error(c, "drive", "motion", err,
                                "a rotation cannot move particles that move along x alone "
                                "(dimension 1): use motion = affine");
        if (d->drive == DRIVE_ROTATION && dim == 2 && (w.x != 0.0 || w.y != 0.0))
            return config_error(c, "drive", "rotation", err,
                                "in dimension 2 a rotation is about z: its x and y components "
                                "(%g, %g) must be 0",
                                w.x, w.y);
        if (d->drive == DRIVE_AFFINE)
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++) {
                    double gab = g[3 * a + b];
                    d->G[a][b] = gab;
                    if (gab != 0.0 && (a >= dim || b >= dim))
                        return config_error(c, "drive", "gradient", err,
                                            "in dimension %d the entry G_%c%c (%g) must be 0: the "
                                            "particles do not move along %c",
                                            dim, "xyz"[a], "xyz"[b], gab, "xyz"[a >= dim ? a : b]);
                }
        /* the periodic box neither turns nor deforms: a particle and its image a period L e_a
         * away must move alike, so the motion may not depend on a periodic axis (G e_a = 0, a
         * rotation only about that axis); else pairs across the boundary part or overlap for
         * no reason (a rotating row of touching discs in a ring lost its boundary contact) */
        const int *per = W->P.box.periodic;
        const double wv[3] = {w.x, w.y, w.z};
        for (int a = 0; a < 3; a++) {
            if (!per[a])
                continue;
            for (int b = 0; b < 3; b++) {
                double gba = d->G[b][a];
                if (d->drive == DRIVE_ROTATION && b != a && wv[b] != 0.0)
                    return config_error(
                        c, "drive", "rotation", err,
                        "%c is periodic, and the box does not turn with the particles: a "
                        "rotation about another axis (component %c = %g) moves a particle and "
                        "its periodic image apart, so pairs across the boundary part or overlap "
                        "unphysically; rotate about %c alone, or use a box without periodic axes",
                        "xyz"[a], "xyz"[b], wv[b], "xyz"[a]);
                if (d->drive == DRIVE_AFFINE && gba != 0.0)
                    return config_error(
                        c, "drive", "gradient", err,
                        "%c is periodic, and the box does not deform with the particles: the "
                        "entry G_%c%c (%g) moves a particle and its periodic image apart, so "
                        "pairs across the boundary part or overlap unphysically; G's column %c "
                        "(G_x%c, G_y%c, G_z%c) must be 0, while the columns of axes that are not "
                        "periodic are free (a shear G_%cb along a periodic %c with b bounded by "
                        "walls is fine)",
                        "xyz"[a], "xyz"[b], "xyz"[a], gba, "xyz"[a], "xyz"[a], "xyz"[a], "xyz"[a],
                        "xyz"[a], "xyz"[a]);
            }
        }
    } else if (config_section_line(c, "drive") >= 0) {
        return config_error(c, "drive", "motion", err,
                            "a [drive] section needs motion = rotation or affine");
    }
    return CDLAB_OK;
}

/* dem.bond and its strengths (every key refused without bond = true, rather than ignored) */
static status read_bonds(config *c, const world *W, dem_params *p, diag *err)
{
    const char *S = "dem";
    status s;
    if ((s = config_bool(c, S, "bond", 0, 0, &p->bond, err)))
        return s;
    if (!p->bond)
        return config_used_only_with(
            c, S,
            (const char *const[]){"bond_gap", "bond_strength_normal", "bond_strength_shear", NULL},
            "dem.bond = true", err);
    double rmin = particles_min_radius(&W->P);
    if ((s = config_double(c, S, "bond_gap", 0, 1e-6 * rmin, 0.0, 0, INFINITY, &p->bond_gap,
                           err)) ||
        (s = config_double(c, S, "bond_strength_normal", 0, 0.0, 0.0, 0, INFINITY,
                           &p->bond_strength_n, err)) ||
        (s = config_double(c, S, "bond_strength_shear", 0, 0.0, 0.0, 0, INFINITY,
                           &p->bond_strength_t, err)))
        return s;
    /* the pairs bonded are taken from the neighbour list, which holds the pairs within the
     * skin */
    if (p->bond_gap >= W->detect.gap)
        return config_error(c, S, "bond_gap", err,
                            "%g is not below the neighbour-list skin contact.detect_gap = %g: "
                            "raise the skin or lower bond_gap",
                            p->bond_gap, W->detect.gap);
    return CDLAB_OK;
}

/* dem.deformable: discs only, E_p > 0, -1 < nu_p < 0.5 (plane strain needs 1 - 2 nu > 0) */
static status read_deformable(config *c, const world *W, const scene_info *info, dem_params *p,
                              diag *err)
{
    const char *S = "dem";
    status s;
    if ((s = config_bool(c, S, "deformable", 0, 0, &p->deformable, err)))
        return s;
    if (!p->deformable)
        return config_used_only_with(c, S,
                                     (const char *const[]){"young_modulus", "poisson_ratio", NULL},
                                     "dem.deformable = true", err);
    if (W->P.dimension != 2)
        return config_error(c, S, "deformable", err,
                            "deformable particles are discs: system.dimension must be 2, not %d "
                            "(spheres becoming ellipsoids are designed, not built: "
                            "docs/physics.md)",
                            W->P.dimension);
    if ((s = config_double(c, S, "young_modulus", 1, 0.0, 0.0, 1, INFINITY, &p->young, err)) ||
        (s = config_double(c, S, "poisson_ratio", 1, 0.0, -1.0, 1, 0.5, &p->poisson, err)))
        return s;
    if (!(p->poisson < 0.5))
        return config_error(c, S, "poisson_ratio", err,
                            "must be below 0.5 (the plane-strain compliance needs 1 - 2 nu > 0)");
    p->thickness = info->thickness;
    return CDLAB_OK;
}

/* Long: [dem]'s keys read in the order docs/config.md lists them, each with its check beside it:
 * the sequence is the schema. */
status dem_config_read(config *c, const world *W, const scene_info *info, const equiv_twin *twin,
                       dem_setup *d, diag *err)
{
    memset(d, 0, sizeof *d);
    d->p = dem_params_default();
    dem_params *p = &d->p;
    const char *S = "dem";
    const char *dmode[] = {"fraction", "absolute", "rate", NULL};
    int t, dm = 0;
    long from_cd = 0;
    status s;
    /* the twin of a CD config: its N_I unless the [dem] section gives a stiffness itself */
    int is_twin = twin && twin->present;
    long from_cd_default = is_twin && !config_has(c, S, "k_n") ? twin->iterations : 0;
    /* its stiffness is kappa = q m N_I/dt^2: a criterion that is no fixed count has no N_I
     * (it said "missing required key dem.k_n") */
    if (is_twin && twin->iterations == 0 && !config_has(c, S, "k_n") &&
        !config_has(c, S, "stiffness_from_cd"))
        return config_error(c, "solver", "criterion", err,
                            "is %s: the DEM twin of a CD run takes its stiffness from a fixed "
                            "number of sweeps per step (kappa = q m N_I/dt^2, Unger & Kertesz "
                            "eq. 67), which a %s criterion does not have: give it one with "
                            "--set solver.criterion=fixed --set solver.iterations=N_I, or "
                            "dem.stiffness_from_cd = N_I, or the contact yourself (dem.k_n)",
                            twin->criterion ? twin->criterion : "not fixed",
                            twin->criterion ? twin->criterion : "converging");
    if ((s = config_int(c, S, "stiffness_from_cd", 0, from_cd_default, 0, 100000000L, &from_cd,
                        err)))
        return s;
    d->from_cd = (int)from_cd;
    if (from_cd > 0) {
        if ((s = stiffness_from_cd(c, W, info, twin, from_cd, d, err)))
            return s;
    } else {
        if ((s = config_double(c, S, "k_n", 1, 0, 0.0, 1, INFINITY, &p->law.k_n, err)) ||
            (s = config_double(c, S, "k_t", 0, p->law.k_n, 0.0, 0, INFINITY, &p->law.k_t, err)) ||
            (s = config_enum(c, S, "damping", 0, 0, dmode, &dm, err)) ||
            (s = config_double(c, S, "damping_normal", 0, 0.0, 0.0, 0, INFINITY, &p->damp_n, err)))
            return s;
        p->damp_absolute = dm == 1;
        p->damp_rate = dm == 2;
    }
    int sliding = 1;
    if ((s = config_enum(c, S, "tangential", 0, 0, dem_tangential_names(), &t, err)))
        return s;
    const dem_tangential_law *law = dem_tangential_registry[t];
    if ((s = config_double(c, S, "damping_tangential", 0, from_cd > 0 ? p->damp_t : 0.0, 0.0, 0,
                           INFINITY, &p->damp_t, err)) ||
        (s = config_bool(c, S, "damping_tangential_sliding", 0, 1, &sliding, err)) ||
        (s = config_bool(c, S, "projection", 0, 1, &p->law.projection, err)) ||
        (s = config_bool(c, S, "twirl", 0, law->twirl_default, &p->law.twirl, err)) ||
        (s = config_double(c, S, "eps", 0, 1e-12, 0.0, 1, 1e-3, &p->law.eps, err)) ||
        (s = config_bool(c, S, "allow_unstable_dt", 0, 0, &d->allow_unstable, err)) ||
        (s = config_double(c, S, "abort_overlap", 0, p->abort_overlap, 0.0, 0, INFINITY,
                           &p->abort_overlap, err)))
        return s;
    p->law.tangential = (dem_tangential)t;
    p->damp_t_stick_only = !sliding;
    if (world_max_friction(W) > 0.0 && !(p->law.k_t > 0.0))
        return config_error(c, S, "k_t", err,
                            "friction is used but k_t = 0 (no tangential force could arise): "
                            "give dem.k_t > 0");
    if ((s = config_double(c, S, "stress_volume", 0, 0.0, 0.0, 0, INFINITY, &d->stress_volume,
                           err)))
        return s;
    if ((s = read_drive(c, W, d, err)) || (s = read_bonds(c, W, p, err)) ||
        (s = read_deformable(c, W, info, p, err)))
        return s;
    /* the law's own rules on the other options (dem_tangential.h) */
    if (law->check && (s = law->check(c, S, p, err)))
        return s;
    d->dt_crit = dem_critical_dt(W, p);
    /* -nan or 0 where the stiffness and the damping overflow its formula (k_n = 1e308): the
     * comparison below then let any dt through, and the run went on without a word */
    if (!(d->dt_crit > 0.0))
        return config_error(c, S, "k_n", err,
                            "k_n = %g, k_t = %g and the dashpots give a critical time step that "
                            "a double cannot hold (%g); choose units that keep the stiffness, "
                            "masses and time step nearer 1",
                            p->law.k_n, p->law.k_t, d->dt_crit);
    /* in full, as the resolved list records every number (it was "%.6g") */
    char crit[32], dt[32];
    config_fmt_double(crit, sizeof crit, d->dt_crit);
    config_fmt_double(dt, sizeof dt, W->dt);
    config_record(c, S, "critical_dt", "%s", crit);
    if (W->dt > d->dt_crit && !d->allow_unstable && d->drive == DRIVE_NONE)
        return config_error(c, "system", "dt", err,
                            "dt = %s exceeds the critical DEM time step %s (from k = %g, the "
                            "lightest particle and the damping); lower it, or set "
                            "dem.allow_unstable_dt = true",
                            dt, crit, fmax(p->law.k_n, p->law.k_t));
    return CDLAB_OK;
}

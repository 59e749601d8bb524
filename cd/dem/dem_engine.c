/* The linear-frictional DEM engine behind the engine interface (engine.h): [dem] and [drive]
 * -> dem_setup, dem_step (or the kinematic drive) per step, the energy ledger and the
 * Love-Weber stress as series of their own, the pair store with its history and the solver's
 * forces, paths and ledger in checkpoints. */
#include "comm.h"
#include "dem/dem.h"
#include "dem/dem_config.h"
#include "dem/dem_tangential.h"
#include "dem/dem_dist.h"
#include "engine/engine.h"
#include "engine/engine_checkpoint.h"
#include "grow.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SER_KT, SER_KR, SER_KP, SER_EN, SER_ET, SER_FR, SER_DA, SER_WX, SER_WP, SER_RES, SER_N };
static const char *const energy_paths[SER_N] = {
    "/series/energy/kinetic_translational", "/series/energy/kinetic_rotational",
    "/series/energy/kinetic_piston",        "/series/energy/elastic_normal",
    "/series/energy/elastic_tangential",    "/series/energy/friction_dissipation",
    "/series/energy/damping_dissipation",   "/series/energy/work_external",
    "/series/energy/work_piston",           "/series/energy/balance_residual"};

typedef struct dem_engine {
    dem_setup set;
    dem_solver S;
    vec3 *du, *dth; /* the kinematic drive's increments (room for drive_cap particles) */
    int drive_cap;
    /* DEM draws no random numbers; checkpoint format 3 stores a stream in every checkpoint,
     * so the stream of system.seed is stored as it was seeded (the next format can drop it) */
    pcg32 rng;
    int ser[SER_N], ser_stress[2]; /* /series/stress, stress_walls */
    int ser_bonds[2];              /* intact, broken (with dem.bond) */
    int ser_particles;             /* the discs' strain energy (with dem.deformable) */
    /* distributed runs (more than one MPI rank, cd/dem/dem_dist.c): the distribution, and on rank 0
     * the gathered world and state the output reports */
    dem_mpi *M;
    parallel_params par;
    world Wg;
    dem_solver Sg;
} dem_engine;

/* The state the output reports: this process's, or in a distributed run the gathered one. */
static const dem_solver *view_of(const dem_engine *E)
{
    return E->M ? &E->Sg : &E->S;
}

#define DEM_OF(e) ((dem_engine *)(e)->content)

/* Peak memory (VmHWM), measured at 81a8fc2: about 10 MB for a run of 1,000 particles (the
 * program, its libraries, HDF5); beyond it per particle: the chute (bench/chute.ini, 3.67 pairs
 * per particle) 474 B at 65,600 spheres (one thread) and 466 B at 1,049,600 (two threads); a 2D
 * lattice of 99,856 discs in random storage order (2 pairs per particle, 2 steps) 415 B on one
 * thread and 576 B on two (the pairs of particles whose pairs lie in several write-back blocks
 * keep side rows: 150 B per pair then, 64 B otherwise); a 1D chain of 10^5 / 10^6 discs 340 /
 * 281 B. Deformable discs add 250-345 B per particle (their stresses, also in the side rows),
 * bonds about 190 B per pair (the same lattice, one and two threads). Taken: 300 B per particle
 * (+350 deformable) and 100 B per pair (+200 bonded), with a dense packing's pairs within the
 * skin: 1, 2 and 5 per particle. */
static engine_memory dem_memory(config *c, int dimension)
{
    int deformable = 0, bond = 0;
    diag ignore;
    if (config_bool(c, "dem", "deformable", 0, 0, &deformable, &ignore) != CDLAB_OK)
        deformable = 0;
    if (config_bool(c, "dem", "bond", 0, 0, &bond, &ignore) != CDLAB_OK)
        bond = 0;
    const double per_pair = bond ? 300.0 : 100.0, pairs = dimension == 3   ? 5.0
                                                          : dimension == 2 ? 2.0
                                                                           : 1.0;
    return (engine_memory){.base = 10e6,
                           .per_particle = (deformable ? 650.0 : 300.0) + pairs * per_pair,
                           .pairs_per_particle = pairs,
                           .per_pair = per_pair};
}

static status dem_read(engine *e, config *c, const world *W, const scene_info *info,
                       equiv_twin *twin, char *note, size_t note_n, diag *err)
{
    dem_engine *E = calloc(1, sizeof *E);
    if (!E)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    e->content = E;
    dem_solver_init(&E->S);
    pcg32_seed(&E->rng, info->seed, PCG32_STREAM_SWEEP);
    E->par = info->par;
    status s = dem_config_read(c, W, info, twin, &E->set, err);
    if (s != CDLAB_OK)
        return s;
    /* the twin runs the CD run's physical time: the pipeline scales its steps */
    if (E->set.from_cd > 0 && twin && twin->present && E->set.cd_dt != W->dt)
        twin->time_ratio = E->set.cd_dt / W->dt;
    if (E->set.from_cd > 0 && twin && twin->present) {
        char relax[96] = "";
        if (E->set.cd_relaxation != 1.0)
            snprintf(relax, sizeof relax, ", cd_relaxation = %g", E->set.cd_relaxation);
        if (twin->color_hashed && E->set.cd_sweep == SWEEP_COLORED) /* its q: equiv.h */
            snprintf(relax + strlen(relax), sizeof relax - strlen(relax),
                     ", its colouring in hashed order");
        snprintf(note, note_n,
                 "; this is the DEM twin of its CD run (dem.stiffness_from_cd = %d, cd_sweep = "
                 "%s%s, cd_dt = %g)",
                 E->set.from_cd, sweep_order_names[E->set.cd_sweep], relax, E->set.cd_dt);
    }
    return CDLAB_OK;
}

/* The warnings of the run about DEM's records (engine_ops.warning): the energy ledger's
 * balance (RUN_BALANCE_WARN: the run's threshold). */
static void dem_warning(const engine *e, engine_warning kind, const world *W, long step,
                        const engine_record *rec, char *buf, size_t n)
{
    (void)e, (void)W;
    if (kind == ENGINE_WARN_BALANCE)
        snprintf(buf, n,
                 "at step %ld the energy ledger's residual is %.3g of the energy the run was "
                 "given (its initial energy and the work put in; /series/residual), above 0.5: "
                 "the run made or lost energy that no term books, a numerical instability. The "
                 "usual cause is a dt too large for the packing: the critical time step in the "
                 "banner is a pair's estimate, and a particle with many stiff contacts, with "
                 "dashpots more so, needs less (docs/config.md, [dem]). /summary@"
                 "energy_residual_max keeps the largest",
                 step, rec->residual);
    else
        snprintf(buf, n, "step %ld: %s", step,
                 kind == ENGINE_WARN_MISSED ? "pairs met unseen by the neighbour list"
                                            : "the step did not converge");
}

/* Long: the banner's DEM lines in the order they print. */
static void dem_announce(const engine *e, const world *W, const scene_info *info,
                         const engine_notes *notes)
{
    (void)info;
    const dem_setup *d = &DEM_OF(e)->set;
    const dem_params *p = &d->p;
    engine_say(notes,
               "DEM: k_n = %.6g, k_t = %.6g, tangential law %s (projection %s, twirl %s), "
               "dashpots %s n = %g, t = %g%s",
               p->law.k_n, p->law.k_t, dem_tangential_registry[p->law.tangential]->name,
               p->law.projection ? "on" : "off", p->law.twirl ? "on" : "off",
               p->damp_rate       ? "rate (c = m_eff gamma)"
               : p->damp_absolute ? "absolute"
                                  : "fraction of critical",
               p->damp_n, p->damp_t,
               d->from_cd ? " (from the CD equivalence, eqs. 67-68; the tangential ones times "
                            "m_t/m_n, the tangential block's share: docs/physics.md)"
                          : "");
    if (dem_tangential_registry[p->law.tangential]->summary)
        engine_say(notes, "DEM: %s", dem_tangential_registry[p->law.tangential]->summary);
    else if (p->damp_t > 0.0 && world_max_friction(W) > 0.0)
        engine_say(notes, "%s",
                   p->damp_t_stick_only
                       ? "DEM: the tangential dashpot acts on sticking contacts only "
                         "(dem.damping_tangential_sliding = false): a sliding contact's "
                         "tangential force is the friction limit's"
                       : "DEM: the tangential dashpot also acts on sliding contacts "
                         "(dem.damping_tangential_sliding = true, Kuhn et al.'s contact "
                         "damping): their tangential force exceeds the friction limit by c_t "
                         "times the sliding speed, so fast sliding stops sooner than friction "
                         "alone would stop it (docs/config.md)");
    if (p->bond)
        engine_say(notes,
                   "DEM: bonds between the particle pairs closer than %g at the start (springs "
                   "k_n, k_t from the bonded state, the dashpots above); strengths: tension %g, "
                   "shear %g (0: never breaks)",
                   p->bond_gap, p->bond_strength_n, p->bond_strength_t);
    if (p->deformable)
        engine_say(notes,
                   "DEM: deformable discs (Rojek et al. eqs. 12-13): E_p = %g, nu_p = %g, "
                   "thickness %g; k_n/(t E_p) = %.4g; shapes from the forces of the step before",
                   p->young, p->poisson, p->thickness, p->law.k_n / (p->thickness * p->young));
    if (p->bond && d->drive == DRIVE_NONE)
        engine_say(notes,
                   "DEM: the critical time step below is a pair's; a bonded lattice is less "
                   "stable (experiments/ddem: unstable above 0.86 of it, 0.67 with dashpots of "
                   "0.5 of critical)");
    if (d->drive == DRIVE_NONE)
        engine_say(notes, "DEM: critical time step %.6g, dt = %g (%.3g of it)%s", d->dt_crit, W->dt,
                   W->dt / d->dt_crit,
                   W->dt > d->dt_crit ? "  WARNING: above it (dem.allow_unstable_dt)" : "");
    else if (d->drive == DRIVE_ROTATION)
        engine_say(notes,
                   "DEM: kinematic drive, rigid rotation by (%g, %g, %g) per step about "
                   "(%g, %g, %g); no dynamics",
                   d->rotation.x, d->rotation.y, d->rotation.z, d->centre.x, d->centre.y,
                   d->centre.z);
    else
        engine_say(notes,
                   "DEM: kinematic drive, affine displacement gradient per step about "
                   "(%g, %g, %g); no dynamics",
                   d->centre.x, d->centre.y, d->centre.z);
    if (d->drive == DRIVE_NONE)
        return;
    /* the forces the config gives that move nothing under the drive (they were taken without a
     * word): said with --quiet too */
    int loaded = particles_loaded(&W->P), pistons = 0;
    for (int k = 0; k < W->n_walls; k++)
        pistons += W->walls[k].kind == WALL_PISTON;
    int gravity = W->gravity.x != 0.0 || W->gravity.y != 0.0 || W->gravity.z != 0.0;
    const char *item[3];
    int n = 0;
    if (gravity)
        item[n++] = "system.gravity";
    if (loaded)
        item[n++] = "the [load] forces";
    if (pistons)
        item[n++] = "the pistons (they stay where they are)";
    if (n > 0) {
        char line[400];
        snprintf(line, sizeof line,
                 "notice: [drive] prescribes every particle's motion: %s%s%s%s%s move%s nothing "
                 "(the contact forces are computed and recorded)",
                 item[0],
                 n > 2   ? ", "
                 : n > 1 ? " and "
                         : "",
                 n > 1 ? item[1] : "", n > 2 ? " and " : "", n > 2 ? item[2] : "",
                 n == 1 && !pistons ? "s" : "");
        engine_say_result(notes, line);
    }
}

/* The DEM chute's particle-steps per second, measured on the project's machine
 * (bench/results/2026-11-24-9d84b585d961.md, one thread: 4.86e6). */
#define EST_DEM_PARTICLE_STEPS_PER_S 4.9e6

static void dem_estimate(const engine *e, const world *W, long steps, long pairs, char *buf,
                         size_t n)
{
    (void)e;
    /* the chute lists 3.7 pairs per particle; the pair pass is most of its step */
    double per = W->P.n > 0 ? (double)pairs / W->P.n / 3.7 : 1.0;
    snprintf(buf, n, "about %.2g s",
             (double)steps * W->P.n * fmax(per, 1.0) / EST_DEM_PARTICLE_STEPS_PER_S);
}

/* The DEM law's options packed into one constant (dem_law: a decimal digit each, so that a
 * checkpoint's format need not change with a new option). */
static double law_code(const dem_params *p)
{
    return p->law.tangential * 1000 + p->law.projection * 100 + p->law.twirl * 10 +
           p->damp_absolute * 2 + p->damp_rate + p->bond * 10000 + p->deformable * 100000 +
           p->damp_t_stick_only * 1000000;
}
enum { LAW_CODE = 4 }; /* its place among dem_constants' */

/* The constants a checkpoint records (format 3 fixes their names; those after dem_law, written
 * since 2026-11-28, may be missing in an older one): each 0 where its option is off (a restart
 * may not turn an option on or off: dem_law). */
static int dem_constants(const engine *e, engine_constant *k)
{
    const dem_params *p = &DEM_OF(e)->set.p;
    const engine_constant c[] = {
        {"k_n", "dem.k_n (or dem.stiffness_from_cd, cd_dt, cd_sweep)", p->law.k_n, 0},
        {"k_t", "dem.k_t", p->law.k_t, 0},
        {"damping_normal", "dem.damping_normal (or dem.stiffness_from_cd)", p->damp_n, 0},
        {"damping_tangential", "dem.damping_tangential", p->damp_t, 0},
        {"dem_law",
         "dem.tangential, projection, twirl, damping, damping_tangential_sliding, bond or "
         "deformable",
         law_code(p), 0},
        {"young_modulus", "dem.young_modulus", p->deformable ? p->young : 0.0, 1},
        {"poisson_ratio", "dem.poisson_ratio", p->deformable ? p->poisson : 0.0, 1},
        {"bond_strength_normal", "dem.bond_strength_normal", p->bond ? p->bond_strength_n : 0.0, 1},
        {"bond_strength_shear", "dem.bond_strength_shear", p->bond ? p->bond_strength_t : 0.0, 1},
        {"law_eps", "dem.eps", p->law.eps, 1}};
    int n = (int)(sizeof c / sizeof c[0]);
    memcpy(k, c, sizeof c);
    return n;
}

/* dem_law changed on restart: the key of the first option that differs, with its two values
 * ("= 1000110 here, 110 in the checkpoint" named no key). */
static int dem_constant_change(const engine *e, int k, double there, double here, char *buf,
                               size_t n)
{
    (void)e;
    static const struct {
        double unit;
        const char *key;
    } digits[] = {{1e6, "dem.damping_tangential_sliding"},
                  {1e5, "dem.deformable"},
                  {1e4, "dem.bond"},
                  {1e3, "dem.tangential"},
                  {1e2, "dem.projection"},
                  {1e1, "dem.twirl"},
                  {1e0, "dem.damping"}};
    if (k != LAW_CODE || !(there >= 0.0 && here >= 0.0 && there < 1e7 && here < 1e7) ||
        there != floor(there) || here != floor(here))
        return 0;
    for (size_t d = 0; d < sizeof digits / sizeof digits[0]; d++) {
        long a = (long)fmod(floor(there / digits[d].unit), 10.0);
        long b = (long)fmod(floor(here / digits[d].unit), 10.0);
        if (a != b) {
            snprintf(buf, n, "%s (option %ld here, %ld in the checkpoint)", digits[d].key, b, a);
            return 1;
        }
    }
    return 0;
}

static status dem_header(engine *e, h5out *h, const world *W, const scene_info *info, diag *err)
{
    (void)W, (void)info;
    dem_engine *E = DEM_OF(e);
    const dem_params *p = &E->set.p;
    status s;
    if ((s = h5out_group(h, "/dem", err)) ||
        (s = h5out_attr_double(h, "/dem", "k_n", p->law.k_n, err)) ||
        (s = h5out_attr_double(h, "/dem", "k_t", p->law.k_t, err)) ||
        (s = h5out_attr_double(h, "/dem", "critical_dt", E->set.dt_crit, err)) ||
        (s = h5out_attr_double(h, "/dem", "damping_normal", p->damp_n, err)) ||
        (s = h5out_attr_double(h, "/dem", "damping_tangential", p->damp_t, err)) ||
        (s = h5out_attr_string(h, "/dem", "damping",
                               p->damp_rate       ? "rate"
                               : p->damp_absolute ? "absolute"
                                                  : "fraction",
                               err)))
        return s;
    if (p->bond &&
        ((s = h5out_attr_double(h, "/dem", "bond_gap", p->bond_gap, err)) ||
         (s = h5out_attr_double(h, "/dem", "bond_strength_normal", p->bond_strength_n, err)) ||
         (s = h5out_attr_double(h, "/dem", "bond_strength_shear", p->bond_strength_t, err)) ||
         (s = h5out_series(h, "/series/bonds/intact", H5IO_DOUBLE, 0, NULL, &E->ser_bonds[0],
                           err)) ||
         (s = h5out_series(h, "/series/bonds/broken", H5IO_DOUBLE, 0, NULL, &E->ser_bonds[1],
                           err))))
        return s;
    if (p->deformable && ((s = h5out_attr_double(h, "/dem", "young_modulus", p->young, err)) ||
                          (s = h5out_attr_double(h, "/dem", "poisson_ratio", p->poisson, err)) ||
                          (s = h5out_attr_double(h, "/dem", "thickness", p->thickness, err)) ||
                          (s = h5out_attr_double(h, "/dem", "stiffness_ratio",
                                                 p->law.k_n / (p->thickness * p->young), err)) ||
                          (s = h5out_series(h, "/series/energy/elastic_particles", H5IO_DOUBLE, 0,
                                            NULL, &E->ser_particles, err))))
        return s;
    for (int k = 0; k < SER_N; k++)
        if ((s = h5out_series(h, energy_paths[k], H5IO_DOUBLE, 0, NULL, &E->ser[k], err)))
            return s;
    return engine_stress_series(h, NULL, E->set.stress_volume, E->ser_stress, err);
}

/* The step's record; its residual (the ledger's) is made for the rows written (dem_gather). A
 * distributed run's counts and overlaps are every rank's (its counted pairs and own particles),
 * merged in rank order: here, or by the run's agreement of the step (by_rank). */
static void record_of(dem_engine *E, const dem_stats *st, engine_record *rec, int by_rank)
{
    *rec = (engine_record){.converged = 1,
                           .n_contacts = st->n_contacts,
                           .n_active = st->n_active,
                           .n_sliding = st->n_sliding,
                           .mean_overlap = st->mean_overlap,
                           .max_overlap = st->max_overlap,
                           .rebuilds = E->S.rebuilds};
    if (E->M && !by_rank) {
        double v[ENGINE_RECORD_PARTS];
        comm_op ops[ENGINE_RECORD_PARTS];
        engine_record_parts(rec, v, ops);
        comm_allreduce_ops(v, ops, ENGINE_RECORD_PARTS);
        engine_record_merge(rec, v);
    }
}

/* The ledger's relative residual: its balance over the largest energies it holds. */
static double ledger_residual(const dem_energy *En)
{
    double scale = fabs(En->initial) + fabs(En->work_external) + fabs(En->work_piston);
    return scale > 0.0 ? dem_energy_residual(En) / scale : 0.0;
}

static status dem_engine_start(engine *e, world *W, engine_record *rec, diag *err)
{
    dem_engine *E = DEM_OF(e);
    dem_stats st;
    memset(&st, 0, sizeof st);
    status s = CDLAB_OK;
    if (comm_size() > 1) { /* each rank keeps its share; the first rebuild distributes them */
        if (!(E->M = calloc(1, sizeof *E->M)))
            s = diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
        else
            s = dem_mpi_init(E->M, W, &E->S, &E->set.p, &E->par, err);
        s = comm_agree(s, err);
    }
    if (s == CDLAB_OK)
        s = comm_agree(dem_start(W, &E->S, &E->set.p, &st, err), err);
    if (s == CDLAB_OK && E->M) /* the ledger over all ranks, once every rank has started */
        s = comm_agree(dem_ledger_start(W, &E->S, &E->set.p, err), err);
    record_of(E, &st, rec, 0);
    return s;
}

static status dem_engine_step(engine *e, world *W, engine_record *rec, diag *err)
{
    dem_engine *E = DEM_OF(e);
    dem_setup *d = &E->set; /* not const: dem_affine takes G as a plain array */
    dem_stats st;
    memset(&st, 0, sizeof st);
    status s;
    if (d->drive == DRIVE_NONE) {
        s = dem_step(W, &E->S, &d->p, &st, err);
    } else {
        /* room for this process's particles (a distributed run: its own and its copies) */
        int cap = E->drive_cap;
        vec3 *du = grow_array(E->du, &cap, W->P.n + 1, sizeof *du);
        if (du)
            E->du = du;
        vec3 *dth = du ? grow_array(E->dth, &E->drive_cap, W->P.n + 1, sizeof *dth) : NULL;
        if (dth)
            E->dth = dth;
        if (!du || !dth)
            return diag_set(err, CDLAB_ERR_NOMEM, "out of memory for the kinematic drive");
        if (d->drive == DRIVE_ROTATION)
            dem_rigid_rotation(W, d->centre, d->rotation, E->du, E->dth);
        else
            dem_affine(W, d->centre, d->G, E->du, E->dth);
        s = dem_kinematic_step(W, &E->S, &d->p, E->du, E->dth, &st, err);
    }
    record_of(E, &st, rec, 1);
    return s;
}

/* The energy ledger and the stress (a pass over the contacts: only for the rows written). */
static status dem_row(engine *e, h5out *h, const world *W, diag *err)
{
    dem_engine *E = DEM_OF(e);
    const dem_energy *En = &view_of(E)->E;
    double v[SER_N] = {
        En->kin_trans, En->kin_rot, En->kin_piston,    En->elastic_n,   En->elastic_t,
        En->friction,  En->damping, En->work_external, En->work_piston, dem_energy_residual(En)};
    double sigma[2][3][3];
    dem_stress(W, view_of(E), world_stress_volume(W, E->set.stress_volume), sigma[0], sigma[1]);
    status s;
    for (int k = 0; k < SER_N; k++)
        if ((s = h5out_series_append(h, E->ser[k], &v[k], err)))
            return s;
    if (E->set.p.deformable &&
        (s = h5out_series_append(h, E->ser_particles, &En->elastic_particles, err)))
        return s;
    if (E->set.p.bond) {
        const dem_solver *V = view_of(E);
        double intact = dem_bonds_intact(V), broken = (double)V->bonds_broken;
        if ((s = h5out_series_append(h, E->ser_bonds[0], &intact, err)) ||
            (s = h5out_series_append(h, E->ser_bonds[1], &broken, err)))
            return s;
    }
    return engine_stress_row(h, E->ser_stress, sigma, err);
}

static int dem_contact_count(const engine *e, const world *W)
{
    (void)W;
    return view_of(DEM_OF(e))->npair;
}

static void dem_contact(const engine *e, const world *W, int k, contact *c)
{
    dem_contact_record(W, view_of(DEM_OF(e)), k, c);
}

static const xdmf_field deform_fields[] = {
    {"stress", "Tensor", "3 3"}, {"strain", "Tensor", "3 3"},     {"ellipse_a", "Scalar", ""},
    {"ellipse_b", "Scalar", ""}, {"ellipse_axis", "Vector", "3"}, {"", "", ""}};

static const xdmf_field *dem_snapshot_fields(const engine *e)
{
    return DEM_OF(e)->set.p.deformable ? deform_fields : NULL;
}

/* Deformable discs: each disc's stress and strain (3x3, plane strain: sigma_zz = nu_p
 * (sigma_xx + sigma_yy), eps_zz = 0) and its ellipse (semi-axes a >= b, unit vector of a). */
static status dem_snapshot(const engine *e, h5out *h, const char *g, const world *W, diag *err)
{
    const dem_engine *E = DEM_OF(e);
    const dem_params *p = &E->set.p;
    if (!p->deformable)
        return CDLAB_OK;
    long n = W->P.n, n33[3] = {n, 3, 3}, n3[2] = {n, 3};
    size_t m = (size_t)(n > 0 ? n : 1);
    double *sig = calloc(m * 9, sizeof *sig), *eps = calloc(m * 9, sizeof *eps);
    double *a = malloc(m * sizeof *a), *b = malloc(m * sizeof *b), *ax = malloc(m * 3 * sizeof *ax);
    status s = CDLAB_OK;
    if (!sig || !eps || !a || !b || !ax)
        s = diag_set(err, CDLAB_ERR_NOMEM, "out of memory writing a snapshot");
    for (long i = 0; i < n && s == CDLAB_OK; i++) {
        const double *si = &view_of(E)->sig[3 * i];
        double ei[3];
        dem_deform_strain(p->young, p->poisson, si, ei);
        double *S9 = &sig[9 * i], *E9 = &eps[9 * i];
        S9[0] = si[0], S9[4] = si[1], S9[1] = S9[3] = si[2];
        S9[8] = p->poisson * (si[0] + si[1]);
        E9[0] = ei[0], E9[4] = ei[1], E9[1] = E9[3] = ei[2];
        const dem_ellipse *el = &view_of(E)->ell[i];
        a[i] = el->a, b[i] = el->b;
        ax[3 * i] = el->e1.x, ax[3 * i + 1] = el->e1.y, ax[3 * i + 2] = 0.0;
    }
    struct {
        const char *name;
        int rank;
        const long *dims;
        const double *data;
    } arr[] = {{"stress", 3, n33, sig},
               {"strain", 3, n33, eps},
               {"ellipse_a", 1, &n, a},
               {"ellipse_b", 1, &n, b},
               {"ellipse_axis", 2, n3, ax}};
    char path[128];
    for (size_t k = 0; k < sizeof arr / sizeof arr[0] && s == CDLAB_OK; k++) {
        snprintf(path, sizeof path, "%s/%s", g, arr[k].name);
        s = h5out_array(h, path, H5IO_DOUBLE, arr[k].rank, arr[k].dims, arr[k].data, err);
    }
    free(sig);
    free(eps);
    free(a);
    free(b);
    free(ax);
    return s;
}

#define PAIR_BYTES ((long)sizeof(dem_pair))
/* the ledger's cumulative terms in a checkpoint, exactly: for each, the doubles whose exact sum
 * it is (xsum_expand: at most 41 for any sum), zero-padded */
#define EXACT_TERMS 48
/* a bond in a checkpoint: i, j, gap0, u_t (3), intact, as doubles (ids are exact) */
#define BOND_WIDTH 7

static status dem_checkpoint_write(const engine *e, h5out *h, const char *g, const world *W,
                                   diag *err)
{
    const dem_engine *E = DEM_OF(e);
    const dem_solver *S = view_of(E);
    engine_records r = {
        .kind = "dem_pair", .bytes = PAIR_BYTES, .n = S->npair, .rebuilds = S->rebuilds};
    status s = engine_checkpoint_write_records(h, g, &r, S->pair, &E->rng, err);
    if (s != CDLAB_OK)
        return s;
    char path[128];
    long n = W->P.n, n3[2] = {n, 3}, nw = W->n_walls, one = 1;
    long ne = (long)(offsetof(dem_energy, elastic_particles) / sizeof(double));
#define CK(name, rank, dims, data)                                                                 \
    do {                                                                                           \
        snprintf(path, sizeof path, "%s/%s", g, name);                                             \
        if ((s = h5out_array(h, path, H5IO_DOUBLE, rank, dims, data, err)))                        \
            return s;                                                                              \
    } while (0)
    CK("dem_F", 2, n3, S->F);
    CK("dem_T", 2, n3, S->T);
    CK("dem_path", 1, &n, S->path);
    CK("dem_piston_F", 1, &nw, S->piston_F);
    CK("dem_energy", 1, &ne, &S->E);
    CK("dem_wall_path", 1, &one, &S->wall_path);
    if ((s = h5out_attr_double(h, g, "dem_skin", S->list_skin, err)))
        return s;
    double exact[DEM_CUMULATIVE][EXACT_TERMS];
    memset(exact, 0, sizeof exact);
    for (int k = 0; k < DEM_CUMULATIVE; k++)
        if (xsum_expand(&S->acc_total[k], exact[k], EXACT_TERMS) < 0)
            return diag_set(err, CDLAB_ERR_NUMERIC,
                            "the energy ledger is not finite: no checkpoint can hold it");
    long nx[2] = {DEM_CUMULATIVE, EXACT_TERMS};
    CK("dem_energy_exact", 2, nx, exact);
    if (E->set.p.deformable)
        CK("dem_disc_stress", 2, n3, S->sig);
    if (E->set.p.bond) {
        long nb[2] = {S->nbond, BOND_WIDTH}, broken = 1;
        double *t = malloc((size_t)(S->nbond > 0 ? S->nbond : 1) * BOND_WIDTH * sizeof *t);
        if (!t)
            return diag_set(err, CDLAB_ERR_NOMEM, "out of memory writing a checkpoint");
        for (int k = 0; k < S->nbond; k++) {
            const dem_bond_state *b = &S->bond[k];
            double row[BOND_WIDTH] = {b->i, b->j, b->gap0, b->u_t.x, b->u_t.y, b->u_t.z, b->intact};
            memcpy(&t[BOND_WIDTH * k], row, sizeof row);
        }
        double nbroken = (double)S->bonds_broken;
        snprintf(path, sizeof path, "%s/%s", g, "dem_bonds");
        s = h5out_array(h, path, H5IO_DOUBLE, 2, nb, t, err);
        free(t);
        if (s != CDLAB_OK)
            return s;
        CK("dem_bonds_broken", 1, &broken, &nbroken);
    }
#undef CK
    return CDLAB_OK;
}

/* dem_checkpoint_write's bytes; the bonds are counted as pairs (bond_gap < detect_gap: no more
 * are made at the start). */
static double dem_checkpoint_bytes(const engine *e, const world *W, long pairs)
{
    const dem_engine *E = DEM_OF(e);
    engine_records r = {.bytes = PAIR_BYTES, .n = pairs};
    double n = W->P.n, ne = (double)(offsetof(dem_energy, elastic_particles) / sizeof(double));
    double doubles = 7.0 * n + W->n_walls + ne + 1.0 + DEM_CUMULATIVE * EXACT_TERMS;
    if (E->set.p.deformable)
        doubles += 3.0 * n;
    if (E->set.p.bond)
        doubles += (double)pairs * BOND_WIDTH + 1.0;
    return engine_checkpoint_records_bytes(&r) + 8.0 * doubles;
}

/* The bonds of a checkpoint (dem.bond), checked: pairs of existing particles in key order. */
static status read_bonds(h5in *h, const char *g, const char *file, world *W, dem_solver *S,
                         diag *err)
{
    char path[400];
    long long count;
    snprintf(path, sizeof path, "%s/dem_bonds", g);
    status s = h5in_size(h, path, &count, err);
    if (s != CDLAB_OK)
        return s;
    if (count % BOND_WIDTH != 0 || count / BOND_WIDTH > W->P.n * 8LL)
        return diag_set(err, CDLAB_ERR_IO, "%s: corrupt checkpoint (%lld bond count)", file, count);
    int n = (int)(count / BOND_WIDTH);
    double *t = malloc((size_t)(n > 0 ? n : 1) * BOND_WIDTH * sizeof *t);
    if (!t)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory reading a checkpoint");
    if ((s = h5in_read(h, path, H5IO_DOUBLE, t, (long)count, err)) == CDLAB_OK)
        s = dem_reserve_bonds(S, n, err);
    for (int k = 0; k < n && s == CDLAB_OK; k++) {
        const double *r = &t[BOND_WIDTH * k];
        int ok = r[0] >= 0 && r[0] < W->P.n && r[1] >= 0 && r[1] < W->P.n && r[0] == (int)r[0] &&
                 r[1] == (int)r[1] && (r[6] == 0.0 || r[6] == 1.0) &&
                 isfinite(r[2] + r[3] + r[4] + r[5]);
        dem_bond_state b = {0, (int)r[0], (int)r[1], r[2], v3(r[3], r[4], r[5]), (int)r[6]};
        if (ok)
            b.key = contact_pair_key(b.i, b.j, &W->P, W->n_walls);
        if (!ok || (k > 0 && !(b.key > S->bond[k - 1].key)))
            s = diag_set(err, CDLAB_ERR_IO, "%s: corrupt checkpoint (bond %d)", file, k);
        else
            S->bond[k] = b;
    }
    free(t);
    if (s == CDLAB_OK)
        S->nbond = n;
    double broken = 0.0;
    snprintf(path, sizeof path, "%s/dem_bonds_broken", g);
    if (s == CDLAB_OK && (s = h5in_read(h, path, H5IO_DOUBLE, &broken, 1, err)) == CDLAB_OK)
        S->bonds_broken = (long)broken;
    return s;
}

/* The ledger's cumulative sums (S->acc): exactly as the checkpoint's run had them; from a
 * checkpoint made before they were stored (cdlab before results epoch 4), its rounded totals. */
static status read_exact_ledger(h5in *h, const char *g, const char *file, dem_solver *S, diag *err)
{
    char path[400];
    snprintf(path, sizeof path, "%s/dem_energy_exact", g);
    const double old[DEM_CUMULATIVE] = {S->E.friction, S->E.damping, S->E.work_external};
    if (!h5in_exists(h, path)) {
        for (int k = 0; k < DEM_CUMULATIVE; k++) {
            xsum_init(&S->acc[k]);
            xsum_add(&S->acc[k], old[k]);
        }
        return CDLAB_OK;
    }
    double exact[DEM_CUMULATIVE][EXACT_TERMS];
    status s = h5in_read(h, path, H5IO_DOUBLE, exact, DEM_CUMULATIVE * EXACT_TERMS, err);
    for (int k = 0; k < DEM_CUMULATIVE && s == CDLAB_OK; k++) {
        xsum_init(&S->acc[k]);
        for (int m = 0; m < EXACT_TERMS; m++) {
            if (!isfinite(exact[k][m]))
                return diag_set(err, CDLAB_ERR_IO, "%s: corrupt checkpoint (energy ledger)", file);
            xsum_add(&S->acc[k], exact[k][m]);
        }
        /* the stored totals are these sums rounded: anything else is not this run's ledger */
        if (xsum_round(&S->acc[k]) != old[k])
            return diag_set(err, CDLAB_ERR_IO,
                            "%s: corrupt checkpoint (energy ledger: exact and rounded sums differ)",
                            file);
    }
    return s;
}

static status dem_checkpoint_read(engine *e, h5in *h, const char *g, const char *file, world *W,
                                  diag *err)
{
    dem_engine *E = DEM_OF(e);
    dem_solver *S = &E->S;
    engine_records r = {.kind = "DEM pair", .bytes = PAIR_BYTES};
    status s = engine_checkpoint_count_records(h, g, file, &r, err);
    /* one rebuild at the start, at most one per step since */
    if (s == CDLAB_OK && r.rebuilds > W->step + 1)
        s = diag_set(err, CDLAB_ERR_IO,
                     "%s: corrupt checkpoint %s (%ld neighbour-list rebuilds in %ld steps)", file,
                     g, r.rebuilds, W->step);
    if (s == CDLAB_OK && (s = dem_reserve_pairs(S, (int)r.n, err)) == CDLAB_OK) {
        S->npair = (int)r.n;
        S->indexed = S->bonds_linked = 0; /* indexed by dem_resume */
        s = engine_checkpoint_read_records(h, g, file, &r, S->pair, &E->rng, err);
    }
    for (long k = 0; k < r.n && s == CDLAB_OK; k++) {
        const dem_pair *p = &S->pair[k];
        if (p->j < 0 || p->j >= W->P.n || p->i >= W->P.n || p->i < -W->n_walls)
            s = diag_set(err, CDLAB_ERR_IO, "%s: corrupt checkpoint (contact %ld)", file, k);
        else if (!(isfinite(p->ft.x) && isfinite(p->ft.y) && isfinite(p->ft.z) && !isnan(p->zeta)))
            s = diag_set(err, CDLAB_ERR_IO, "%s: corrupt checkpoint (pair %ld)", file, k);
    }
    char path[400];
    long n = W->P.n, ne = (long)(offsetof(dem_energy, elastic_particles) / sizeof(double));
    /* what the forces of the pairs depend on, before dem_resume recomputes them: the bonds and
     * the discs' stresses (their shapes) */
    if (s == CDLAB_OK && E->set.p.bond)
        s = read_bonds(h, g, file, W, S, err);
    if (s == CDLAB_OK && (s = dem_prepare(W, S, &E->set.p, err)) == CDLAB_OK &&
        E->set.p.deformable) {
        snprintf(path, sizeof path, "%s/dem_disc_stress", g);
        s = h5in_read(h, path, H5IO_DOUBLE, S->sig, 3 * n, err);
        for (long i = 0; i < 3 * n && s == CDLAB_OK; i++)
            if (!isfinite(S->sig[i]))
                s = diag_set(err, CDLAB_ERR_IO, "%s: corrupt checkpoint (disc stress)", file);
    }
    if (s != CDLAB_OK || (s = dem_resume(W, S, &E->set.p, err)) != CDLAB_OK)
        return s;
#define RD(name, data, count)                                                                      \
    if (s == CDLAB_OK) {                                                                           \
        snprintf(path, sizeof path, "%s/%s", g, name);                                             \
        s = h5in_read(h, path, H5IO_DOUBLE, data, count, err);                                     \
    }
    RD("dem_F", S->F, 3 * n);
    RD("dem_T", S->T, 3 * n);
    RD("dem_path", S->path, n);
    RD("dem_piston_F", S->piston_F, (long)W->n_walls);
    RD("dem_energy", &S->E, ne);
    RD("dem_wall_path", &S->wall_path, 1);
#undef RD
    /* the forces and the ledger, as finite as the run keeps them */
    if (s == CDLAB_OK &&
        (!engine_all_finite(&S->F[0].x, 3 * n) || !engine_all_finite(&S->T[0].x, 3 * n) ||
         !engine_all_finite(S->path, n) || !engine_all_finite(S->piston_F, W->n_walls) ||
         !engine_all_finite((const double *)&S->E, ne) || !isfinite(S->wall_path)))
        s = diag_set(err, CDLAB_ERR_IO,
                     "%s: corrupt checkpoint %s: a force, torque, path or energy row holds a "
                     "value that is not finite",
                     file, g);
    if (s == CDLAB_OK)
        s = read_exact_ledger(h, g, file, S, err);
    /* the skin the checkpoint's neighbour list was built with; a checkpoint written before
     * 2026-11-28 lacks it: the writing run's contact.detect_gap, or 0 (a rebuild at the first
     * step: safe, the energy ledger's last bits may differ from an uninterrupted run's) */
    if (s == CDLAB_OK)
        s = engine_checkpoint_gap(h, g, "dem_skin", file, 0.0, &S->list_skin, err);
    S->rebuilds = r.rebuilds;
    if (comm_size() > 1) { /* every rank read the whole state: each keeps its share */
        s = comm_agree(s, err);
        if (s == CDLAB_OK && !(E->M = calloc(1, sizeof *E->M)))
            s = diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
        s = comm_agree(s, err);
        if (s == CDLAB_OK)
            s = dem_mpi_init_restored(E->M, W, S, &E->set.p, &E->par, err);
    }
    return s;
}

static void dem_engine_free(engine *e)
{
    dem_engine *E = DEM_OF(e);
    if (E) {
        if (E->M) {
            dem_mpi_free(E->M);
            free(E->M);
            dem_solver_free(&E->Sg);
            particles_free(&E->Wg.P); /* its walls are the run's */
        }
        dem_solver_free(&E->S);
        free(E->du);
        free(E->dth);
    }
    free(E);
    e->content = NULL;
}

/* The world to write: this process's, or in a distributed run the state gathered on rank 0
 * (NULL on the other ranks, which only send). Collective. */
static status dem_gather(engine *e, world *W, world **view, engine_record *rec, diag *err)
{
    dem_engine *E = DEM_OF(e);
    *view = W;
    /* the ledger now (collective: every rank's exact sums merged) */
    status s = comm_agree(dem_ledger(W, &E->S, &E->set.p, err), err);
    if (s != CDLAB_OK)
        return s;
    rec->residual = ledger_residual(&E->S.E);
    rec->balance = E->set.drive == DRIVE_NONE; /* a drive's work is not booked */
    if (!E->M)
        return CDLAB_OK;
    s = dem_mpi_gather(E->M, W, &E->S, &E->set.p, &E->Wg, &E->Sg, err);
    E->Sg.E = E->S.E;
    memcpy(E->Sg.acc_total, E->S.acc_total, sizeof E->Sg.acc_total);
    *view = comm_rank() == 0 ? &E->Wg : NULL;
    /* as one process makes it; a record not made by a step (a restart's first row) has none */
    if (s == CDLAB_OK && comm_rank() == 0 && rec->n_active > 0)
        rec->mean_overlap = dem_mean_overlap(&E->Wg, &E->Sg);
    return s;
}

static const char *const dem_sections[] = {"dem", "drive", NULL};

const engine_ops dem_engine_ops = {
    .name = "dem",
    .title = "DEM",
    .mmap_threshold = 4L << 20,
    .program = "cdlab run (linear-frictional DEM)",
    .iterative = 0,
    .contacts_at_start = 1,
    .sections = dem_sections,
    .setup =
        {
            .memory = dem_memory,
            .read = dem_read,
            .read_other = NULL,
            .serial_reason = NULL,
            .announce = dem_announce,
            .estimate = dem_estimate,
            .free = dem_engine_free,
        },
    .step =
        {
            .plan_export = NULL,
            .start = dem_engine_start,
            .step = dem_engine_step,
            .record_by_rank = 1,
        },
    .report =
        {
            .warning = dem_warning,
            .header = dem_header,
            .row = dem_row,
            .contact_count = dem_contact_count,
            .contact = dem_contact,
            .snapshot = dem_snapshot,
            .snapshot_fields = dem_snapshot_fields,
            .gather = dem_gather,
        },
    .persist =
        {
            .constants = dem_constants,
            .constant_change = dem_constant_change,
            .checkpoint_write = dem_checkpoint_write,
            .checkpoint_read = dem_checkpoint_read,
            .checkpoint_bytes = dem_checkpoint_bytes,
        },
};

/* The contact dynamics engine behind the engine interface (engine.h): [solver] -> cd_params,
 * cd_step_solve / cd_step_finish per step (with the FCLIB export of one step in between), the
 * spurious-elasticity figures in the header and the banner, the contact list and the sweep's
 * random stream in checkpoints. */
#include "nscd/cd.h"
#include "nscd/cd_config.h"
#include "nscd/cd_contact_problem.h"
#include "nscd/cd_dist.h"
#include "nscd/cd_method.h"
#include "comm.h"
#include "engine/engine.h"
#include "engine/engine_checkpoint.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The relative change of the effective q per fraction f of contacts across rank boundaries
 * with a domain-wise sweep, (q_P/q_1 - 1)/f, measured per order on the 1D wave test with 200
 * disks (experiments/parallel/summary.md, 2 and 4 ranks, f = 0.50% and 1.50%): random -0.53
 * and -0.54 (three seeds); forward and backward -0.99 and -0.98 (from omega and from tau
 * alike); Jacobi 0 (every contact takes the previous sweep's velocities anyway: the runs on
 * 2 and 4 ranks are the one process's to 1e-12). The colored sweep is not domain-wise. */
static double domain_wise_dq(sweep_order s)
{
    return s == SWEEP_RANDOM ? -0.53 : s == SWEEP_FORWARD || s == SWEEP_BACKWARD ? -0.98 : 0.0;
}

typedef struct cd_engine {
    cd_params prm;
    cd_solver S;
    scene_info info;
    /* the FCLIB export (export_step 0: none) */
    long export_step;
    char export_path[PATH_MAX], config_file[PATH_MAX];
    engine_notes notes;
    /* distributed runs (more than one MPI rank, cd/nscd/cd_dist.c): the distribution, the state
     * gathered on rank 0 for the output, the boundary-contact series */
    cd_mpi *M;
    world Wg;
    contact_list Cg;
    int ser_across, have_across, ser_rounds; /* ser_rounds: colored only (else -1) */
    int ser_stress[2];                       /* /series/stress, stress_walls */
    /* apgd and newton: /series/dilation (mean, largest), and the last step's */
    int ser_dilation, have_dilation;
    double dilation[2];
} cd_engine;

#define CD_OF(e) ((cd_engine *)(e)->content)

/* The contacts of the world the report operations are handed: the solver's, or in a distributed
 * run (where they see only the state cd_gather assembled on rank 0, in a copy of Wg) the
 * contacts gathered with it. */
static const contact_list *contacts_of(const cd_engine *E, const world *W)
{
    (void)W;
    return E->M ? &E->Cg : &E->S.C;
}

/* Peak memory (VmHWM), measured at 81a8fc2 on lattices of touching unit particles in random
 * storage order (tools/bench.py's, 2 steps, N_I = 10, the random sweep on one thread): about
 * 10 MB for a run of 1,000 particles (the program, its libraries, HDF5); beyond it per
 * particle at 10^5 / 10^6 particles 534 / 446 B for a 1D chain (1 pair per particle), 704 /
 * 620 B in 2D (2 pairs), 884 / 798 B in 3D (3 pairs); the colored sweep on two threads 915 B
 * (3D, 10^5) and 653 B (2D, 10^6). Each listed pair 174-193 B (2D, 3D; 205 B colored on two
 * threads, detect_gap 0.1 and 2 at 10^5), so about 350 B per particle besides its pairs. Taken:
 * 350 B per particle and 220 B per pair (a margin for more threads), with a dense packing's
 * pairs: 1, 2 and 6 per particle (the DEM chute's spheres list 4.8 within the default
 * detect_gap of a quarter diameter). The 3D lattice at 10^6 spheres then reads 1.02 GB against
 * the 0.81 GB measured. */
static engine_memory cd_memory(config *c, int dimension)
{
    (void)c;
    const double per_pair = 220.0, pairs = dimension == 3 ? 6.0 : dimension == 2 ? 2.0 : 1.0;
    return (engine_memory){.base = 10e6,
                           .per_particle = 350.0 + pairs * per_pair,
                           .pairs_per_particle = pairs,
                           .per_pair = per_pair};
}

static status cd_read(engine *e, config *c, const world *W, const scene_info *info,
                      equiv_twin *twin, char *note, size_t note_n, diag *err)
{
    (void)twin, (void)note, (void)note_n;
    /* candidates are the pairs with gap < detect_gap at the step's start: with 0, a pair is one
     * only once it overlaps, and g_pos = max(g, 0) keeps that overlap (memcheck's pile: 255
     * missed contacts); in DEM mode 0 is a neighbour list without skin, which is fine */
    if (W->detect.gap == 0.0 && config_has(c, "contact", "detect_gap"))
        return config_error(c, "contact", "detect_gap", err,
                            "0 in CD mode makes a pair a contact only once it overlaps, and the "
                            "shock law keeps the overlap it reached; give more than the distance "
                            "two bodies close in one step (the default is half the smallest "
                            "radius)");
    cd_engine *E = calloc(1, sizeof *E);
    if (!E)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    e->content = E;
    E->info = *info;
    cd_solver_init(&E->S, info->seed);
    status s = cd_config_read(c, &E->prm, err);
    if (s == CDLAB_OK && E->prm.crit == CRIT_NATURAL_MAP && comm_size() > 1)
        return config_error(c, "solver", "criterion", err,
                            "is natural_map, which is not yet offered in a distributed run (its "
                            "residual would need the halo's velocities after every sweep): use "
                            "one process, or the local, global or fixed criterion");
    if (s == CDLAB_OK && E->prm.method != &cd_method_sweeps && comm_size() > 1)
        return config_error(c, "solver", "method", err,
                            "is %s, which runs in one process only (it assembles the whole "
                            "step's Delassus operator): use one process, or the sweeps",
                            E->prm.method->name);
    return s;
}

/* [solver] in a DEM run: checked as in a CD run; the DEM twin takes its sweep and N_I. */
static status cd_read_other(config *c, equiv_twin *twin, diag *err)
{
    cd_params p;
    status s = cd_config_read(c, &p, err);
    if (s == CDLAB_OK && p.method != &cd_method_sweeps)
        return config_error(c, "solver", "method", err,
                            "is %s: the DEM twin's stiffness and damping come from the sweeps' q "
                            "(Unger & Kertesz), which %s does not have (its spurious elasticity "
                            "is measured in experiments/solvers); give the twin a sweeps config",
                            p.method->name, p.method->name);
    if (s == CDLAB_OK)
        *twin = (equiv_twin){.present = 1,
                             .sweep = p.sweep,
                             .iterations = p.crit == CRIT_FIXED ? p.iterations : 0,
                             .criterion = cd_criterion_names[p.crit],
                             .relaxation = p.relaxation,
                             .color_hashed = p.color_hashed};
    return s;
}

/* The warnings of the run about CD's records (engine_ops.warning). */
static void cd_warning(const engine *e, engine_warning kind, const world *W, long step,
                       const engine_record *rec, char *buf, size_t n)
{
    int sweeps = CD_OF(e)->prm.method == &cd_method_sweeps;
    if (kind == ENGINE_WARN_UNCONVERGED)
        snprintf(buf, n,
                 "step %ld did not converge: the solver's criterion was not met within its %d "
                 "%s (solver.iterations), and the run goes on with the %s forces. "
                 "/summary@unconverged_steps counts every such step (/series/converged marks "
                 "those with a row): raise solver.iterations, or loosen solver.epsilon",
                 step, rec->sweeps, sweeps ? "sweeps" : "iterations",
                 sweeps ? "last sweep's" : "method's answer's");
    else if (kind == ENGINE_WARN_MISSED)
        snprintf(buf, n,
                 "in step %ld, %ld pair%s met unseen by the contact detection: further apart than "
                 "contact.detect_gap = %g at the step's start, so no force acted between them in "
                 "the step, and they overlap by up to %g (the shock law's g_pos keeps such an "
                 "overlap). A pair that closes by more than the gap in one step is missed: raise "
                 "contact.detect_gap above about 2 v dt, or lower dt. /summary@missed_contacts "
                 "counts them all",
                 step, rec->missed, rec->missed > 1 ? "s" : "", W->detect.gap, rec->missed_overlap);
    else
        snprintf(buf, n, "step %ld: %s", step, "an energy balance that does not close");
}

static const char *cd_serial_reason(const engine *e, char *buf, size_t n)
{
    const cd_engine *E = CD_OF(e);
    if (E->prm.method == &cd_method_newton) { /* its sparse LU is (its product is not) */
        snprintf(buf, n, "solver.method = newton is serial");
        return buf;
    }
    if (E->prm.method == &cd_method_apgd) /* its products with W on threads */
        return NULL;
    /* the random sweep: on threads by deterministic reservations (cd_sweep.c), the same bits */
    if (E->prm.sweep == SWEEP_COLORED || E->prm.sweep == SWEEP_JACOBI ||
        (E->prm.sweep == SWEEP_RANDOM && comm_size() == 1))
        return NULL;
    snprintf(buf, n, "the %s sweep is serial", sweep_order_names[E->prm.sweep]);
    return buf;
}

/* The spurious elasticity figures of the run's solver: Unger & Kertesz's for the sweeps' q, of
 * the relaxed sweeps' q(omega) (equiv_q_relaxed) when relaxed; not a number for apgd and newton,
 * which have no q (their elasticity is measured, experiments/solvers). */
static equiv_figures cd_figures(const cd_params *p, const world *W, const scene_info *info)
{
    equiv_figures f = equiv_of_q(equiv_q_of(p->sweep, p->color_hashed, p->relaxation),
                                 p->iterations, W->dt, info->d_mean, info->m_mean);
    if (p->method != &cd_method_sweeps)
        f.q = f.D = f.c = f.l_diff = f.kappa = f.gamma = NAN;
    return f;
}

/* The banner's line on what the ranks do to the sweep (more than one rank). */
static void announce_distributed(const cd_params *p, const engine_notes *notes)
{
    if (comm_size() > 1 && p->sweep == SWEEP_COLORED)
        engine_say(notes,
                   "distributed over %d ranks: the colored sweep is the one-process sweep, "
                   "bit for bit",
                   comm_size());
    else if (comm_size() > 1 && p->sweep == SWEEP_JACOBI)
        engine_say(notes,
                   "distributed over %d ranks: domain-wise jacobi sweep: every contact takes the "
                   "previous sweep's velocities in one process too, so q is unchanged (measured "
                   "on a 200-disk chain, experiments/parallel)",
                   comm_size());
    else if (comm_size() > 1)
        engine_say(notes,
                   "distributed over %d ranks: domain-wise %s sweep (Shojaaee et al. 2012): the "
                   "contacts across rank boundaries are updated from the halo velocities of the "
                   "previous sweep, which lowers the effective q by about %.2f times their "
                   "fraction for this order (/series/parallel/boundary_fraction; measured on a "
                   "200-disk chain, experiments/parallel); the figures below are one process's",
                   comm_size(), sweep_order_names[p->sweep], -domain_wise_dq(p->sweep));
}

/* The banner's solver lines for apgd and newton. */
static void announce_assembled(const cd_params *p, const engine_notes *notes)
{
    char stop[160];
    if (p->crit == CRIT_FIXED)
        snprintf(stop, sizeof stop, "criterion fixed: %d iterations every step", p->iterations);
    else
        snprintf(stop, sizeof stop,
                 "criterion natural_map: residual (rho = 1) <= epsilon %g, at most %d iterations",
                 p->epsilon, p->iterations);
    engine_say(notes, "solver: method %s (%s), %s, warm start %s", p->method->name,
               p->method->title, stop, p->warm_start ? "on" : "off");
    if (p->method == &cd_method_apgd && p->desaxce)
        engine_say(notes, "solver: apgd with De Saxce's outer fixed point back to Coulomb's law "
                          "(solver.desaxce = true); /series/dilation records the answers' u_N "
                          "at closed contacts");
    else if (p->method == &cd_method_apgd)
        engine_say(notes,
                   "solver: apgd on Anitescu's convex relaxation (solver.desaxce = false): "
                   "sliding contacts separate at u_N = mu |u_T| (a dilation, not Coulomb's "
                   "law), recorded in /series/dilation; the criterion is the relaxed problem's "
                   "own residual");
    else
        engine_say(notes,
                   "solver: newton after %d %s sweeps a step (solver.presweeps; they count as "
                   "iterations), W assembled and factorized by UMFPACK at every Newton step",
                   p->presweeps, sweep_order_names[p->sweep]);
    engine_say(notes,
               "spurious elasticity: %s has no q (Unger & Kertesz's figures are the "
               "sweeps'); its c, kappa and gamma are measured in experiments/solvers",
               p->method->name);
}

static void cd_announce(const engine *e, const world *W, const scene_info *info,
                        const engine_notes *notes)
{
    const cd_params *p = &CD_OF(e)->prm;
    equiv_figures f = cd_figures(p, W, info);
    /* what each criterion uses (the banner named epsilon and delta for the fixed count too,
     * where epsilon does nothing) */
    const char *sweep = sweep_order_names[p->sweep], *warm = p->warm_start ? "on" : "off";
    if (p->method != &cd_method_sweeps) {
        announce_assembled(p, notes);
        return;
    }
    if (p->crit == CRIT_FIXED)
        engine_say(notes,
                   "solver: sweep %s, criterion fixed: %d sweeps every step (solver.epsilon not "
                   "used), warm start %s",
                   sweep, p->iterations, warm);
    else if (p->crit == CRIT_LOCAL) {
        engine_say(notes,
                   "solver: sweep %s, criterion local: every |dR| <= epsilon |R| + delta with "
                   "epsilon %g, delta %g, at most %d sweeps, warm start %s",
                   sweep, p->epsilon, p->delta, p->iterations, warm);
        /* delta is a force in the config's units: the default 1e-12 is not small in SI at the
         * micrometre scale (a 1 um sphere weighs 1e-13 N), where every change passed and
         * every step counted as converged after a sweep or two. The reference: the mean
         * particle's weight, or without gravity the force that stops it moving a diameter a
         * step. */
        double g = v3_norm(W->gravity),
               f_ref = info->m_mean * (g > 0.0 ? g : info->d_mean / (W->dt * W->dt));
        if (p->delta > 0.0 && p->delta >= p->epsilon * f_ref) {
            char line[600];
            snprintf(line, sizeof line,
                     "warning: solver.delta = %g is not small against this system's forces: "
                     "epsilon times %s is %g, so the local criterion accepts a change below "
                     "delta whatever the force, and steps count as converged that are not; "
                     "delta is a force in the config's units: set it well below %g",
                     p->delta,
                     g > 0.0 ? "the mean particle's weight" : "m d/dt^2 (the mean particle)",
                     p->epsilon * f_ref, p->epsilon * f_ref);
            engine_say_result(notes, line);
        }
    } else if (p->crit == CRIT_GLOBAL)
        engine_say(notes,
                   "solver: sweep %s, criterion global: change of the mean |R| <= epsilon times it "
                   "with epsilon %g (solver.delta not used), at most %d sweeps, warm start %s",
                   sweep, p->epsilon, p->iterations, warm);
    else
        engine_say(notes,
                   "solver: sweep %s, criterion natural_map: the natural-map residual (rho = 1, "
                   "FCLIB's and Siconos's) <= epsilon %g after a sweep (solver.delta not used; a "
                   "pass over the contacts after every sweep), at most %d sweeps, warm start %s",
                   sweep, p->epsilon, p->iterations, warm);
    if (p->sweep == SWEEP_COLORED && p->color_hashed)
        engine_say(notes,
                   "solver: the colouring takes the pairs in hashed order "
                   "(solver.color_priority = hashed): another colouring than the key order's, "
                   "q = %.3f measured on the chain at omega = 1 (key order: %.3f)%s",
                   EQUIV_Q_COLORED_HASHED_MEASURED, EQUIV_Q_COLORED_MEASURED,
                   p->relaxation != 1.0 ? "; relaxed, its q is not known" : "");
    if (p->relaxation != 1.0 && isfinite(f.q))
        engine_say(notes,
                   "solver: %s sweeps (projected SOR), omega = solver.relaxation = %g: each "
                   "update moves the force omega times the Gauss-Seidel step before the shock "
                   "law's projection; q(omega) = %.4f (derived on the chain, docs/physics.md; "
                   "%.4f at omega = 1)",
                   p->relaxation > 1.0 ? "over-relaxed" : "under-relaxed", p->relaxation, f.q,
                   equiv_q(p->sweep));
    announce_distributed(p, notes);
    if (p->crit != CRIT_FIXED || !isfinite(f.q))
        return;
    engine_say(notes,
               "spurious elasticity (Unger & Kertesz eqs. 54-68, N_I = %d, q = %.4f): c = %.4g, "
               "D = %.4g, l_diff = %.4g, L = %.4g, L/l_diff = %.3g, kappa_eff = %.4g, "
               "gamma_eff = %.4g",
               p->iterations, f.q, f.c, f.D, f.l_diff, info->length, info->length / f.l_diff,
               f.kappa, f.gamma);
    if (f.l_diff < info->length)
        engine_say(notes,
                   "warning: l_diff = %.4g < L = %.4g: the packing is in the spuriously soft "
                   "regime (N_I = %d too small for rigid behaviour, eq. 48)",
                   f.l_diff, info->length, p->iterations);
}

/* The random sweep's contact updates per second, measured on the project's machine
 * (bench/results/2026-11-21-81957ac636aa.md, one thread, 2D 1e4 disks; 3D 1e5 spheres gave
 * 1.7e7). Measured against it: the 1500 steps of the 50-disk chain take 0.6 s, estimated
 * 0.12 s (per-step overheads dominate small systems). */
#define EST_CD_UPDATES_PER_S 2.5e7

static void cd_estimate(const engine *e, const world *W, long steps, long pairs, char *buf,
                        size_t n)
{
    (void)W;
    const cd_params *p = &CD_OF(e)->prm;
    if (p->method != &cd_method_sweeps) {
        snprintf(buf, n, "not estimated for solver.method = %s", p->method->name);
        return;
    }
    /* a sweep updates every listed pair */
    double per_sweep = (double)steps * (double)pairs / EST_CD_UPDATES_PER_S;
    if (p->crit == CRIT_FIXED)
        snprintf(buf, n, "about %.2g s", per_sweep * p->iterations);
    else
        snprintf(buf, n, "about %.2g s per sweep per step (criterion %s: at most %d)", per_sweep,
                 cd_criterion_names[p->crit], p->iterations);
}

static status cd_plan_export(engine *e, long step, const char *path, const char *config_file,
                             const engine_notes *notes, diag *err)
{
    /* rank 0 writes the file (a distributed run gathers the problem there); the others' status
     * is agreed with its own before any file is created (run.c, prepare) */
    status s = comm_rank() == 0 ? contact_problem_fclib_load(err) : CDLAB_OK;
    if (s != CDLAB_OK)
        return s;
    char stale[4][STALE_NOTICE_MAX];
    int ns = comm_rank() == 0 ? contact_problem_stale_partials(path, stale, 4) : 0;
    for (int k = 0; k < ns; k++)
        engine_say(notes, "%s", stale[k]);
    cd_engine *E = CD_OF(e);
    E->export_step = step;
    snprintf(E->export_path, sizeof E->export_path, "%s", path);
    snprintf(E->config_file, sizeof E->config_file, "%s", config_file);
    E->notes = *notes;
    return CDLAB_OK;
}

/* Right after the sweeps of the step: the problem, its residual, the file. */
static status export_fclib(cd_engine *E, world *W, const contact_list *L, const cd_stats *st,
                           diag *err)
{
    contact_problem cp;
    status s = contact_problem_build(W, L, &cp, err);
    if (s != CDLAB_OK)
        return s;
    const cd_params *p = &E->prm;
    const char *cfg = E->config_file;
    double res_abs;
    double res = natural_map_residual(cp.nc, cp.d, cp.colptr, cp.row, cp.val, cp.q, cp.mu, cp.r,
                                      NM_RHO_ONE, &res_abs);
    double res_w = natural_map_residual(cp.nc, cp.d, cp.colptr, cp.row, cp.val, cp.q, cp.mu, cp.r,
                                        NM_RHO_INV_W, NULL);
    long step = W->step + 1; /* the step being solved */
    double t = (double)step * W->dt;
    char title[PATH_MAX + 64], desc[PATH_MAX + 512];
    snprintf(title, sizeof title, "cdlab %s, step %ld", cfg, step);
    snprintf(desc, sizeof desc,
             "Contact dynamics step %ld (t = %.17g, dt = %.17g) of %s: %d contacts, dimension %d; "
             "cdlab solution after %d iterations (method %s, %s sweep, %s criterion, epsilon %g, "
             "converged %d)",
             step, t, W->dt, cfg, cp.nc, W->P.dimension, st->sweeps, p->method->name,
             sweep_order_names[p->sweep], cd_criterion_names[p->crit], p->epsilon, st->converged);
    fclib_meta meta = {.title = title,
                       .description = desc,
                       .step = step,
                       .t = t,
                       .dt = W->dt,
                       .sweeps = st->sweeps,
                       .converged = st->converged,
                       .solver_residual = st->residual,
                       .criterion = cd_criterion_names[p->crit],
                       .sweep = sweep_order_names[p->sweep],
                       .epsilon = p->epsilon,
                       .natural_map = res,
                       .natural_map_inv_w = res_w};
    s = contact_problem_write_fclib(&cp, E->export_path, &meta, err);
    if (s == CDLAB_OK) {
        char line[PATH_MAX + 512];
        snprintf(line, sizeof line,
                 "fclib: step %ld written to %s: %d contacts, local dimension %d, W %d x %d with "
                 "%d entries; natural-map residual of cdlab's solution (rho = 1, FCLIB's and "
                 "Siconos's) %.3g relative, %.3g absolute; with rho = 1/W_NN %.3g relative",
                 step, E->export_path, cp.nc, cp.d, cp.m, cp.m, cp.nnz, res, res_abs, res_w);
        engine_say_result(&E->notes, line);
    }
    contact_problem_free(&cp);
    return s;
}

static status cd_header(engine *e, h5out *h, const world *W, const scene_info *info, diag *err)
{
    const cd_params *p = &CD_OF(e)->prm;
    /* spurious elasticity figures (Unger & Kertesz sec. 3) for the fixed iteration count */
    equiv_figures f = cd_figures(p, W, info);
    const char *g = "/elasticity";
    status s;
    if ((s = h5out_group(h, g, err)) || (s = h5out_attr_double(h, g, "q", f.q, err)) ||
        (s = h5out_attr_double(h, g, "D", f.D, err)) ||
        (s = h5out_attr_double(h, g, "c", f.c, err)) ||
        (s = h5out_attr_double(h, g, "l_diff", f.l_diff, err)) ||
        (s = h5out_attr_double(h, g, "kappa_eff", f.kappa, err)) ||
        (s = h5out_attr_double(h, g, "gamma_eff", f.gamma, err)) ||
        (s = h5out_attr_double(h, g, "L", info->length, err)) ||
        (s = h5out_attr_double(h, g, "d_mean", info->d_mean, err)) ||
        (s = h5out_attr_double(h, g, "relaxation", p->relaxation, err)) ||
        (s = h5out_attr_string(h, g, "method", p->method->name, err)))
        return s;
    if (p->method != &cd_method_sweeps) {
        if ((s = h5out_series(h, "/series/dilation", H5IO_DOUBLE, 1, (const long[]){2},
                              &CD_OF(e)->ser_dilation, err)))
            return s;
        CD_OF(e)->have_dilation = 1;
    }
    if ((s = h5out_attr_double(h, g, "m_mean", info->m_mean, err)))
        return s;
    if ((s = engine_stress_series(h, "; f: the contact force of the step (its impulse / dt)",
                                  p->stress_volume, CD_OF(e)->ser_stress, err)) ||
        comm_size() == 1)
        return s;
    /* distributed: what the partition does to the sweep, and the boundary contacts' share */
    int colored = p->sweep == SWEEP_COLORED;
    if (!colored && (s = h5out_attr_double(h, "/parallel", "q_change_per_boundary_fraction",
                                           domain_wise_dq(p->sweep), err)))
        return s;
    if ((s = h5out_attr_string(h, "/parallel", "cd_sweep",
                               colored ? "colored: the one-process sweep, bit for bit"
                                       : "domain-wise (Shojaaee et al. 2012): boundary contacts "
                                         "from the halo velocities of the previous sweep",
                               err)))
        return s;
    s = h5out_series(h, "/series/parallel/boundary_fraction", H5IO_DOUBLE, 0, NULL,
                     &CD_OF(e)->ser_across, err);
    CD_OF(e)->have_across = s == CDLAB_OK;
    CD_OF(e)->ser_rounds = -1;
    if (s == CDLAB_OK && colored)
        s = h5out_series(h, "/series/parallel/colour_rounds", H5IO_INT32, 0, NULL,
                         &CD_OF(e)->ser_rounds, err);
    return s;
}

/* Every rank holds the whole world (the start, or a restart's read): each keeps its share. */
static status start_distributed(cd_engine *E, world *W, diag *err)
{
    status s = CDLAB_OK;
    if (!(E->M = calloc(1, sizeof *E->M)))
        s = diag_set(err, CDLAB_ERR_NOMEM, "out of memory");
    s = comm_agree(s, err);
    return s == CDLAB_OK ? cd_mpi_init(E->M, W, &E->S, &E->prm, &E->info.par, E->info.seed, err)
                         : s;
}

static status cd_start(engine *e, world *W, engine_record *rec, diag *err)
{
    (void)rec; /* contacts are found by the first step */
    cd_engine *E = CD_OF(e);
    return comm_size() > 1 ? start_distributed(E, W, err) : CDLAB_OK;
}

static status cd_engine_step(engine *e, world *W, engine_record *rec, diag *err)
{
    cd_engine *E = CD_OF(e);
    cd_stats st = {.converged = 1};
    status s;
    if (E->M) {
        s = cd_mpi_solve(E->M, W, &E->S, &E->prm, &st, err);
        if (s == CDLAB_OK && E->export_step == W->step + 1) { /* the problem gathered on rank 0 */
            cd_stats g;
            memset(&g, 0, sizeof g);
            s = cd_mpi_gather(E->M, W, &E->Wg, &E->Cg, &g, err);
            if (s == CDLAB_OK && comm_rank() == 0)
                s = export_fclib(E, &E->Wg, &E->Cg, &st, err);
            s = comm_agree(s, err);
        }
        if (s == CDLAB_OK)
            s = cd_mpi_finish(E->M, W, &E->prm, &st, err);
    } else {
        s = cd_step_solve(W, &E->S, &E->prm, &st, err);
        if (s == CDLAB_OK && E->export_step == W->step + 1)
            s = export_fclib(E, W, &E->S.C, &st, err);
        if (s == CDLAB_OK)
            s = cd_step_finish(W, &E->S, &E->prm, &st, err);
    }
    *rec = (engine_record){.sweeps = st.sweeps,
                           .converged = st.converged,
                           .n_contacts = st.n_contacts,
                           .n_active = st.n_active,
                           .n_sliding = st.n_sliding,
                           .residual = st.residual,
                           .mean_overlap = st.mean_overlap,
                           .max_overlap = st.max_overlap,
                           .solve_seconds = st.solve_seconds,
                           .missed = st.missed,
                           .missed_overlap = st.missed_overlap};
    E->dilation[0] = st.dilation_mean;
    E->dilation[1] = st.dilation_max;
    return s;
}

/* The Love-Weber stress in list order: sigma[0] of the particle-particle contacts, f = -R on
 * body 0 (i), l from i to j (as dem_stress); sigma[1] of the wall contacts, f = R on the
 * particle (body 1), l from its centre to the contact point at the row's positions. */
static void cd_stress(const world *W, const contact_list *L, double V, double sigma[2][3][3])
{
    memset(sigma, 0, 18 * sizeof(double));
    for (int k = 0; k < L->n; k++) {
        const contact *c = &L->c[k];
        if (c->R.x == 0.0 && c->R.y == 0.0 && c->R.z == 0.0)
            continue;
        if (c->i >= 0) {
            world_stress_add(sigma[0], v3_scale(c->R, -1.0),
                             pbox_delta(&W->P.box, W->P.x[c->i], W->P.x[c->j]), V);
        } else {
            const wall *w = &W->walls[-1 - c->i];
            contact_frame f = contact_frame_wall(w, w->s, W->P.x[c->j], W->P.r[c->j]);
            world_stress_add(sigma[1], c->R, f.l1, V);
        }
    }
}

/* The stress; in a distributed run (W: the state gathered on rank 0) the contacts across the
 * ranks' boundaries. */
static status cd_row(engine *e, h5out *h, const world *W, diag *err)
{
    const cd_engine *E = CD_OF(e);
    double sigma[2][3][3];
    cd_stress(W, contacts_of(E, W), world_stress_volume(W, E->prm.stress_volume), sigma);
    status s = engine_stress_row(h, E->ser_stress, sigma, err);
    if (s == CDLAB_OK && E->have_dilation)
        s = h5out_series_append(h, E->ser_dilation, E->dilation, err);
    if (s != CDLAB_OK || !E->have_across) /* one process: no boundary series */
        return s;
    double f = E->M && E->M->counted > 0.0 ? E->M->across / E->M->counted : 0.0;
    s = h5out_series_append(h, E->ser_across, &f, err);
    int rounds = E->M ? (int)E->M->color_rounds : 0;
    if (s == CDLAB_OK && E->ser_rounds >= 0)
        s = h5out_series_append(h, E->ser_rounds, &rounds, err);
    return s;
}

/* The world to write: this process's, or in a distributed run the state gathered on rank 0
 * (NULL on the other ranks, which only send), with the step's figures as one process makes
 * them. Collective. */
static status cd_gather(engine *e, world *W, world **view, engine_record *rec, diag *err)
{
    cd_engine *E = CD_OF(e);
    *view = W;
    if (!E->M)
        return CDLAB_OK;
    cd_stats st;
    memset(&st, 0, sizeof st);
    status s = cd_mpi_gather(E->M, W, &E->Wg, &E->Cg, &st, err);
    *view = comm_rank() == 0 ? &E->Wg : NULL;
    /* the step's counts and largest overlap are exact sums and maxima over the ranks; its mean
     * overlap is made again as one process makes it (a record not made by a step, the first
     * row of a run or a restart, has no contacts) */
    if (s == CDLAB_OK && comm_rank() == 0 && rec->n_active > 0)
        rec->mean_overlap = st.mean_overlap;
    return s;
}

static int cd_contact_count(const engine *e, const world *W)
{
    return contacts_of(CD_OF(e), W)->n;
}

static void cd_contact(const engine *e, const world *W, int k, contact *c)
{
    const contact_list *L = contacts_of(CD_OF(e), W);
    *c = L->c[k];
    if (k + CONTACT_GEOMETRY_AHEAD < L->n) /* the writer asks for the contacts in list order */
        contact_geometry_prefetch(L->c[k + CONTACT_GEOMETRY_AHEAD].j, &W->P);
    contact_geometry(c, &W->P, W->walls);
}

#define CONTACT_BYTES ((long)sizeof(contact))

static status cd_checkpoint_write(const engine *e, h5out *h, const char *g, const world *W,
                                  diag *err)
{
    const contact_list *L = contacts_of(CD_OF(e), W);
    engine_records r = {.kind = "contact", .bytes = CONTACT_BYTES, .n = L->n};
    status s = engine_checkpoint_write_records(h, g, &r, L->c, &CD_OF(e)->S.rng, err);
    /* the gap the contact list was detected with, for a restart's missed-contact check */
    return s ? s : h5out_attr_double(h, g, "detect_gap", W->step_gap, err);
}

static double cd_checkpoint_bytes(const engine *e, const world *W, long pairs)
{
    (void)e, (void)W;
    engine_records r = {.bytes = CONTACT_BYTES, .n = pairs};
    return engine_checkpoint_records_bytes(&r);
}

static status cd_checkpoint_read(engine *e, h5in *h, const char *g, const char *file, world *W,
                                 diag *err)
{
    engine_records r = {.kind = "contact", .bytes = CONTACT_BYTES};
    status s = engine_checkpoint_count_records(h, g, file, &r, err);
    if (s != CDLAB_OK)
        return s;
    contact_list *L = &CD_OF(e)->S.C;
    contact *buf = NULL;
    if (r.n > 0 && posix_memalign((void **)&buf, 64, (size_t)r.n * sizeof *buf) != 0)
        return diag_set(err, CDLAB_ERR_NOMEM, "out of memory reading a checkpoint");
    free(L->c);
    L->c = buf;
    L->n = L->cap = (int)r.n;
    if ((s = engine_checkpoint_read_records(h, g, file, &r, buf, &CD_OF(e)->S.rng, err)))
        return s;
    for (long k = 0; k < r.n; k++) {
        const contact *c = &L->c[k];
        if (c->j < 0 || c->j >= W->P.n || c->i >= W->P.n || c->i < -W->n_walls ||
            !(isfinite(c->R.x) && isfinite(c->R.y) && isfinite(c->R.z)))
            return diag_set(err, CDLAB_ERR_IO, "%s: corrupt checkpoint (contact %ld)", file, k);
    }
    /* the checkpoint's step moved its particles by v dt from where its detection, with the
     * gap of the run that wrote it, had looked: the uninterrupted run's next detection takes
     * both (the missed-contact check; a restart may change contact.detect_gap). A checkpoint
     * written before 2026-11-28 lacks the gap: the writing run's contact.detect_gap. */
    if ((s = engine_checkpoint_gap(h, g, "detect_gap", file, W->detect.gap, &W->step_gap, err)))
        return s;
    double v2 = 0.0;
    for (int i = 0; i < W->P.n; i++)
        v2 = fmax(v2, v3_norm2(W->P.v[i]));
    W->step_path = sqrt(v2) * W->dt;
    for (int k = 0; k < W->n_walls; k++)
        if (W->walls[k].kind == WALL_PISTON)
            W->step_path = fmax(W->step_path, fabs(W->walls[k].u) * W->dt);
    /* a distributed run: every rank read the whole state, each keeps its share */
    return comm_size() > 1 ? start_distributed(CD_OF(e), W, err) : CDLAB_OK;
}

static void cd_free(engine *e)
{
    cd_engine *E = CD_OF(e);
    if (E) {
        cd_solver_free(&E->S);
        if (E->M)
            cd_mpi_free(E->M);
        free(E->M);
        particles_free(&E->Wg.P);
        contacts_free(&E->Cg);
    }
    free(E);
    e->content = NULL;
}

static const char *const cd_sections[] = {"solver", NULL};

const engine_ops cd_engine_ops = {
    .name = "cd",
    .title = "contact dynamics",
    .program = "cdlab run (contact dynamics)",
    .iterative = 1,
    .contacts_at_start = 0,
    .sections = cd_sections,
    .setup =
        {
            .memory = cd_memory,
            .read = cd_read,
            .read_other = cd_read_other,
            .serial_reason = cd_serial_reason,
            .announce = cd_announce,
            .estimate = cd_estimate,
            .free = cd_free,
        },
    .step =
        {
            .plan_export = cd_plan_export,
            .start = cd_start,
            .step = cd_engine_step,
        },
    .report =
        {
            .warning = cd_warning,
            .header = cd_header,
            .row = cd_row,
            .contact_count = cd_contact_count,
            .contact = cd_contact,
            .snapshot = NULL,
            .snapshot_fields = NULL,
            .gather = cd_gather,
        },
    .persist =
        {
            /* rigid contacts: no constants but the world's own (dt, friction, bodies) */
            .constants = NULL,
            .checkpoint_write = cd_checkpoint_write,
            .checkpoint_read = cd_checkpoint_read,
            .checkpoint_bytes = cd_checkpoint_bytes,
        },
};

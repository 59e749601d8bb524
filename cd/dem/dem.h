/* Linear-frictional DEM mode on the shared geometry layer: the same particles, walls, piston
 * and contact list as contact dynamics, with soft contacts (Kuhn, Suzuki & Daouadji, Fig. 1),
 * normal and tangential dashpots, velocity-Verlet integration of translations and rotations
 * (the leapfrog trajectory with synchronised velocities), and an energy ledger. */
#ifndef CDLAB_DEM_H
#define CDLAB_DEM_H

#include "dem/dem_contact.h"
#include "dem/dem_deform.h"
#include "world.h"
#include "xsum.h"

#include <stdint.h>

typedef struct dem_params {
    dem_law law;           /* k_n, k_t, eps, tangential, projection, twirl (mu is per contact) */
    double damp_n, damp_t; /* dashpots: fractions of c_cr, absolute, or rates (see below) */
    int damp_absolute;     /* damp_n, damp_t are dashpot constants c (force / velocity) */
    int damp_rate;         /* damp_n, damp_t are rates gamma: c = m_eff gamma (LAMMPS style) */
    /* dem.damping_tangential_sliding = false: the tangential dashpot acts only on contacts that
     * stick in the step (the law's sliding flag clear), so that a sliding contact's tangential
     * force is the friction slider's alone; 0: it acts on every touching contact (Kuhn et al.'s
     * contact damping added to the law's force) */
    int damp_t_stick_only;
    double abort_overlap; /* stop when an overlap exceeds this fraction of the smaller radius
                             (of the particle's radius against a wall); 0: never */
    /* bonded contacts (Rojek et al. eqs. 1-11, cd/dem/dem_bond.h): every particle pair closer than
     * bond_gap at the start is bonded; the bond's dashpots are damp_n, damp_t */
    int bond;
    double bond_gap;
    double bond_strength_n, bond_strength_t; /* elastic tension / shear that break it (0: never) */
    /* deformable discs (Rojek et al. eqs. 12-13, cd/dem/dem_deform.h), dimension 2 */
    int deformable;
    double young, poisson; /* the particles' E_p and nu_p */
    double thickness;      /* V = pi r^2 thickness */
} dem_params;

dem_params dem_params_default(void);

/* Cumulative energy ledger. Balance: kinetic + elastic + friction + damping
 * - work_external - work_piston stays equal to its initial value (the "initial" field).
 * Evaluated on demand (dem_ledger: for the rows written), each term a correctly rounded exact
 * sum over the particles or pairs (common/xsum.h): the same bits for any thread count, any
 * number of ranks, any storage order. */
typedef struct dem_energy {
    double kin_trans, kin_rot, kin_piston;
    double elastic_n, elastic_t; /* stored in the contacts now */
    double friction;             /* dissipated by sliding (sum of dW_t_irrev) */
    double damping;              /* dissipated by the dashpots */
    double work_external;        /* work of gravity and loads */
    double work_piston;          /* work of the pistons' applied forces */
    double initial;              /* kinetic + elastic at the start */
    /* deformable discs: their strain energy, sum of 1/2 sigma : eps V (recomputed from the
     * stresses; a checkpoint stores the fields above it); work_external then includes the work
     * of the loads on the movement of their points of action by the discs' strain */
    double elastic_particles;
} dem_energy;

/* kinetic + elastic + dissipated - input work - initial: zero for a closed ledger */
double dem_energy_residual(const dem_energy *E);

/* One entry of the DEM neighbour list: what a pair carries from step to step, in one 64-byte
 * cache line. Its geometry (normal, gap, lever arms, now and at the start of the step) is
 * recomputed from the positions and the step's movements, its force on body 1 is kept in the
 * solver's per-contact force buffer. */
/* A bond (dem_params.bond): made at the start between the pair (i, j) of key `key`, with the
 * gap it had then; u_t is the tangential displacement of the contact points since then (in the
 * tangent plane of the last step). The table is sorted by key; a broken bond stays in it. */
typedef struct dem_bond_state {
    uint64_t key;
    int i, j;
    double gap0;
    vec3 u_t;
    int intact;
} dem_bond_state;

typedef struct dem_pair {
    int i;       /* body 0: particle index (>= 0), or wall w encoded as -1 - w */
    int j;       /* body 1: particle index */
    double zeta; /* overlap (-gap) at the end of the last step if >= 0; negative: apart
                    (-INFINITY for a new pair; the value is not kept up to date while apart) */
    vec3 ft;     /* tangential force f^t on body 0 (Kuhn et al. conventions: on p) */
    vec3 fd;     /* dashpot force on body 0 at the end of the last step */
} dem_pair;

/* Neighbour list: the pair store holds every pair closer than detect.gap (the skin) at
 * its last rebuild, and is rebuilt only when the particles' path lengths since then could
 * have closed that gap (2 max path >= skin, or path + piston travel >= skin); in between only
 * the geometry of the listed pairs is updated.
 *
 * Forces are summed without atomics and in an order that does not depend on the thread count:
 * each contact's force is computed on its own (in parallel) and added to its particles' sums in
 * the key order of each particle's contacts, in the pair pass or, for the particles whose
 * contacts lie in several blocks, by a gather after it (dem_solver: the write-back). The energy
 * ledger's sums are exact; the statistics are taken over fixed blocks and the block results
 * added in block order, so the results are bit-identical for any thread count. */
struct dem_solver;
/* Distributed runs (cd/dem/dem_dist.c): what the step asks of the layer that moves particles and
 * pairs between ranks. NULL in one process. */
typedef struct dem_dist {
    /* after the drift: the halo copies' positions, velocities, orientations and the step's
     * movements from their owners */
    status (*refresh)(struct dem_dist *d, world *W, struct dem_solver *S, diag *err);
    /* at a rebuild, before the candidates are found: particles to their owners (with their
     * step's movements), pair histories to the ranks that will need them (S->pair, in key
     * order, local indices), new halo copies; sets S->n_owned */
    status (*redistribute)(struct dem_dist *d, world *W, struct dem_solver *S, const dem_params *p,
                           diag *err);
    /* the largest of the ranks' values */
    double (*max)(struct dem_dist *d, double v);
    /* the exact sums of every rank added into sums[0..n-1], the same on every rank */
    status (*merge)(struct dem_dist *d, xsum *sums, int n, diag *err);
    /* width values per particle (own, then copies, as the particles lie): the copies' from
     * their owners (deformable discs: the stresses the copies' shapes come from) */
    status (*halo_values)(struct dem_dist *d, double *vals, int width, diag *err);
    /* the worst of the ranks' statuses, on every rank (a rank that failed on its own, before
     * the next exchange, tells the others instead of leaving them waiting) */
    status (*agree)(struct dem_dist *d, status s, diag *err);
    /* after the forces: each piston's contact force summed over every rank's pairs with it in
     * key order, as one process sums it (S->piston_F, the same on every rank) */
    void (*pistons)(struct dem_dist *d, world *W, struct dem_solver *S);
} dem_dist;

/* The ledger's terms that accumulate over the steps (dem_solver.acc), and the exact sums that
 * dem_ledger makes: the state's, then the cumulative ones. */
enum { DEM_ACC_FRICTION, DEM_ACC_DAMPING, DEM_ACC_WORK_EXTERNAL, DEM_CUMULATIVE };
enum { DEM_LEDGER_STATE = 5, DEM_LEDGER_SUMS = DEM_LEDGER_STATE + DEM_CUMULATIVE };

typedef struct dem_solver {
    vec3 *F, *T; /* contact forces and torques on the particles at the current time */
    /* The step's translations and rotations (du, dθ: Kuhn et al.'s movements): in a dynamic step
     * v Δt and ω Δt with the velocities after the first half kick, made where they are read
     * (the drift moved the particles by exactly these; nothing stored: 48 bytes per particle);
     * zero for dem_start's forces; a kinematic step's prescribed ones, held in du and dth
     * (allocated by the first kinematic step, moves_cap entries). */
    enum { DEM_MOVES_VELOCITY, DEM_MOVES_ZERO, DEM_MOVES_GIVEN } moves;
    vec3 *du, *dth;
    int moves_cap;
    double *path;      /* distance travelled by each particle since the last rebuild */
    double *piston_F;  /* contact force on each wall along its normal (pistons) */
    double *piston_ds; /* the last step's piston movement */
    double wall_path;  /* largest piston travel since the last rebuild */
    /* the skin (detect.gap) the list was built with: a larger skin (a restart's) rebuilds at
     * once, since pairs between the two skins are not listed yet could touch first */
    double list_skin;
    int cap, wcap;
    dem_pair *pair; /* the neighbour list, sorted by pair key (contact_pair_key) */
    int npair, pair_cap;
    pair_ref *refs; /* candidates of the last rebuild */
    int ref_cap;
    cells grid;
    /* The forces' write-back (cd/dem/dem_writeback.c, dem_build_writeback; used by the pair pass,
     * cd/dem/dem_pass.c). The pair pass runs over blocks of the list (wbs), each on one thread in
     * list order. A particle whose pairs all lie in one block (home[i]: that block) gets its force,
     * torque and stress terms added there directly; the others ("straddlers": pairs in several
     * blocks, or with a wall; home -1) gather them afterwards, in contact order, from the side rows
     * that their pairs write. Either way a particle's sum runs in its pairs' key order: the same
     * bits for any thread count and any number of ranks, whatever the block size. Side rows also
     * hold every wall pair (the pistons) and every bonded pair (the output's contact force). */
    int *wbs; /* the blocks' first pairs (multiples of 1,024; made at each rebuild), then npair */
    int nwb, wbs_cap;
    int *home; /* per particle: its block, -1 a straddler, -2 no pair to sum */
    int home_cap;
    /* per side row: its pair, in list order, then INT_MAX (the pass finds a pair's row with a
     * cursor that follows it; others by bisection: a per-pair index took 4 bytes per pair) */
    int *side_pair;
    int side_pair_cap;
    /* pairs [0, indexed) have their write-back index (home, side_pair, the side rows) made for the
     * list as it is; 0 while a new list is made or indexed, and after that failed (out of memory):
     * the failed state's row then remakes each pair's force from its state (dem_pair_force)
     * instead of reading an index of the old list */
    int indexed;
    /* per side row: force on body 1, its torque on body 1 and on body 0 (zeroed each step in
     * the pass, a block's rows by the thread that runs it); in a view (dem_reserve_view: the
     * state gathered for the output) the force alone, a row per pair */
    vec3 *side;
    int nside, side_cap;
    int view;        /* side holds one vector a row (a view), not three */
    int *strad;      /* the straddlers, with their contact sides in contact order: */
    int *sadj_start; /* sadj[sadj_start[s] .. sadj_start[s + 1] - 1], 2 r + 1 when body 1 */
    int *sadj;       /* of the pair of side row r, 2 r when body 0 */
    int nstrad, strad_cap, sadj_start_cap, sadj_cap;
    int *wall_rows; /* the side rows of the pairs with a wall, in contact order */
    int n_wall_pairs, wall_rows_cap;
    double k_n;   /* the law's k_n, and whether the pairs have dashpots: a pair's force */
    int dashpots; /* is remade from its state (dem_pair_force) */
    double *blk;  /* per-block partial sums */
    int blk_cap;
    long rebuilds; /* neighbour-list rebuilds so far */
    /* the smallest radius of W's particles, for the overlap check's first test: made when first
     * needed after the list was indexed (a rebuild, a resume: the only times a process's particles
     * change, in a distributed run too), for rmin_n particles at rmin_r */
    double rmin;
    int rmin_n;
    const double *rmin_r;
    /* bonds: the table (key order), per pair the index of its intact bond or -1 */
    dem_bond_state *bond;
    int nbond, bond_cap;
    int *bond_of;
    int bond_of_cap;
    int bonds_linked; /* pairs [0, bonds_linked) have bond_of made for the list as it is */
    long bonds_broken;
    /* deformable discs: per particle the stress {xx, yy, xy} from the forces and loads of the
     * current time and the ellipse of its strain (the shape the next step's contacts see);
     * per contact the stress terms of body 1 and body 0 ({xx, yy, xy} each); ext_max: the
     * largest reach beyond the radius (r max(eps_1, 0)) over the particles */
    double *sig;
    dem_ellipse *ell;
    double *eload;    /* the strain along the particle's load (f_ext) direction, u . eps . u */
    double *side_sig; /* per side row: the stress terms of body 1 and body 0 (3 each) */
    int side_sig_cap;
    double ext_max;
    /* distributed runs: particles [0, n_owned) are this rank's, the others halo copies (one
     * process: n_owned = P->n, dist = NULL) */
    int n_owned;
    dem_dist *dist;
    int started;    /* forces at t = 0 computed */
    int one_by_one; /* every pair through contact_force, none four at a time (tests compare) */
    /* the tangential law's module (dem_tangential.h: dem.tangential) and whether its lever arms
     * are the radii (its radius_arms: in the forces, the torques and the contact records) */
    const struct dem_tangential_law *law;
    int radius_arms;
    dem_energy E;
    /* the cumulative terms of the ledger, exactly: this process's contributions since the start
     * (dissipated by friction and broken bonds, by the dashpots; the work of gravity and the
     * loads); after a restart rank 0 carries the checkpoint's totals. acc_total: summed over
     * the ranks at the last dem_ledger (what a checkpoint stores). */
    xsum acc[DEM_CUMULATIVE];
    xsum acc_total[DEM_CUMULATIVE];
} dem_solver;

void dem_solver_init(dem_solver *S);
void dem_solver_free(dem_solver *S);

/* Critical time step of the explicit integration: 2/omega_max (sqrt(1 + xi^2) - xi), with
 * omega_max = 2 sqrt(k_max / m_min) from the stiffest contact (k_n, or k_t (1 + m r^2/I) for
 * the rolling mode) and the lightest particle, and xi the damping ratio of that mode. */
double dem_critical_dt(const world *W, const dem_params *p);

typedef struct dem_stats {
    int n_contacts, n_active, n_sliding;
    double mean_overlap, max_overlap;
} dem_stats;

/* Contacts and forces at the current time, and (in one process) the ledger's initial energy.
 * Called by the first dem_step (or kinematic step) if not before. */
status dem_start(world *W, dem_solver *S, const dem_params *p, dem_stats *st, diag *err);
/* The energy ledger now (S->E), from the state and the exact cumulative sums (collective in a
 * distributed run: every rank gets the totals). Each step keeps only the cumulative terms; call
 * this for the figures (the run does, for the rows it writes). */
status dem_ledger(const world *W, dem_solver *S, const dem_params *p, diag *err);
/* The ledger at the start: nothing dissipated or done yet, the initial energy set (collective in
 * a distributed run, whose engine calls it after dem_start). */
status dem_ledger_start(const world *W, dem_solver *S, const dem_params *p, diag *err);
/* Room for n pairs in S->pair (for a checkpoint reader, which then sets S->npair). */
status dem_reserve_pairs(dem_solver *S, int n, diag *err);
/* After a restart has restored the state (positions, velocities, the pairs, F, T, piston_F,
 * path, wall_path, E): rebuilds the derived buffers and the contact forces of the pairs; the
 * next dem_step continues exactly as the original run would have. */
status dem_resume(world *W, dem_solver *S, const dem_params *p, diag *err);
/* The per-particle buffers (a checkpoint reader fills S->sig of deformable discs before
 * dem_resume). */
status dem_prepare(world *W, dem_solver *S, const dem_params *p, diag *err);
/* Contact force on body 1 of pair k at the current time: the step's value for a pair with a
 * side row, else remade from the pair's state (-k_n zeta n + f_t + the dashpot, as the law
 * made it: the same bits); zero for a pair apart. */
vec3 dem_pair_force(const world *W, const dem_solver *S, int k);
/* Pair k as a contact record for output: geometry of now (with the effective masses) and the
 * force on body 1. */
void dem_contact_record(const world *W, const dem_solver *S, int k, contact *c);
status dem_step(world *W, dem_solver *S, const dem_params *p, dem_stats *st, diag *err);
/* The mean overlap of the pairs with a force or an intact bond, summed as dem_step sums it (for
 * a state assembled from elsewhere: the same bits as the step's statistics; its bonds linked to
 * its pairs by dem_link_bonds). */
double dem_mean_overlap(const world *W, const dem_solver *S);
/* Each pair's intact bond (S->bond in key order, S->pair too), for a state assembled from
 * elsewhere. */
status dem_link_bonds(const world *W, dem_solver *S, diag *err);
/* Room for W's particles and npair pairs with their forces (a side row each: S->side[3 k] is
 * pair k's force on body 1), for a state assembled from elsewhere (the gathered view of a
 * distributed run, cd/dem/dem_dist.c). */
status dem_reserve_view(world *W, dem_solver *S, const dem_params *p, int npair, diag *err);
/* Bonds: intact ones now (the broken ones are S->bonds_broken). */
int dem_bonds_intact(const dem_solver *S);
/* Room for n bonds in S->bond (for a checkpoint reader, which then fills them in key order and
 * sets S->nbond). */
status dem_reserve_bonds(dem_solver *S, int n, diag *err);
/* Deformable discs: the ellipses of the stresses in S->sig (after a checkpoint restored them;
 * before dem_resume). */
void dem_deform_shapes(const world *W, dem_solver *S, const dem_params *p);

/* Room in S->du and S->dth for S->cap particles: a kinematic step's prescribed movements (a
 * distributed run's migration moves them with their particles). */
status dem_reserve_moves(dem_solver *S, diag *err);
/* Kinematic driver: moves particle i by du[i] and rotates it by dth[i] (no dynamics), then
 * recomputes the contact forces with the DEM law. Pistons do not move. */
status dem_kinematic_step(world *W, dem_solver *S, const dem_params *p, const vec3 *du,
                          const vec3 *dth, dem_stats *st, diag *err);
/* Increments for a rigid rotation by the rotation vector phi about centre (exact rotation of
 * the positions; every particle spins by phi). */
void dem_rigid_rotation(const world *W, vec3 centre, vec3 phi, vec3 *du, vec3 *dth);
/* Increments for an affine deformation x -> x + G (x - centre) with the spin of G's
 * antisymmetric part. */
void dem_affine(const world *W, vec3 centre, double G[3][3], vec3 *du, vec3 *dth);
/* Love-Weber stress of the particle-particle contacts (of the DEM pairs), sigma_ab = (1/V) sum f_a
 * l_b with f the force on p and l the branch vector from p to q (tension positive, as in Kuhn et
 * al. Fig. 6); and, unless walls is NULL, the same sum over the contacts with walls, pistons and
 * cylinders, f on the particle and l from its centre to the contact point. */
void dem_stress(const world *W, const dem_solver *S, double V, double sigma[3][3],
                double walls[3][3]);

#endif

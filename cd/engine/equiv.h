/* The CD <-> DEM equivalence (Unger & Kertesz sec. 3): what an incompletely converged contact
 * dynamics solver does to a packing, as the figures of an elastic medium, and the DEM contact
 * that has them. One concept shared by both engines and `cdlab equiv`: the CD engine reports
 * the figures of its run, the DEM engine takes its stiffness and dashpot from them (the DEM
 * twin of a CD run), and neither engine reads the other's code or configuration.
 *
 * Symbols as in the paper: q (eqs. 45-46, per sweep order), D (54), c (57), l_diff (63),
 * kappa (67), gamma (68). */
#ifndef CDLAB_EQUIV_H
#define CDLAB_EQUIV_H

/* The CD solver's sweep orders; q depends on the order. */
typedef enum sweep_order {
    SWEEP_RANDOM,   /* fresh random permutation every sweep, each contact exactly once */
    SWEEP_FORWARD,  /* list order (sorted by pair key) */
    SWEEP_BACKWARD, /* reverse list order */
    SWEEP_JACOBI,   /* every contact from the previous sweep's forces (parallel update) */
    SWEEP_COLORED,  /* graph colouring of the contacts; colours in a fresh random order, each
                       colour's contacts (no movable body in common) updated in parallel */
} sweep_order;

/* "random", "forward", "backward", "jacobi", "colored", NULL: the config's solver.sweep and
 * dem.cd_sweep */
extern const char *const sweep_order_names[];

/* q of the colored sweep, measured (no theory): the 1D wave test (experiments/chain1d,
 * study.py) at N_I = 40, three seeds, inverting eq. (58) for the fitted omega: 0.751 +- 0.008
 * (0.746 from tau). On the chain the colouring is red-black (two colours and the wall). */
#define EQUIV_Q_COLORED_MEASURED 0.751

/* q of the colored sweep with solver.color_priority = hashed (the colouring takes the pairs in
 * the order of a hash of their keys: three colours on the chain, in no regular pattern),
 * measured the same way: 0.770 +- 0.004 from omega (three seeds, N_I = 40), 0.759 from tau.
 * Not derived, so not known relaxed (omega != 1). */
#define EQUIV_Q_COLORED_HASHED_MEASURED 0.770

/* q of the ordered sweeps (forward, backward: list order, and its reverse), measured the same
 * way (experiments/chain1d, N_I = 40; the order is deterministic, so one seed): 1.0035 from
 * omega, 1.0004-1.0006 from tau, for both directions. On the chain the list order is the
 * chain's order (from the wall to the free end); in a 2D or 3D packing the list is sorted by
 * pair key (particle ids), whose q has not been measured. */
#define EQUIV_Q_ORDERED_MEASURED 1.00

/* q of the sweep order (eqs. 45-46): 1/2 for jacobi, (4 sqrt(e) - 5)/2 for random, the
 * measured values for colored and the ordered sweeps (above). */
double equiv_q(sweep_order s);

/* q of the over-relaxed sweeps (solver.relaxation = omega), derived on the chain (docs/physics.md,
 * "q of the relaxed sweeps": the variance of one sweep's mean kernel) and measured on it
 * (experiments/chain1d): jacobi omega/2; random 2 exp(omega/2) - 2 - omega/2 (eq. 46 at 1);
 * forward and backward omega/(2 - omega) (1 at 1: the measured q, now derived); colored (two
 * colours in random order) omega (omega + 2)/4 (3/4 at 1), each scaled by equiv_q(s) over its
 * value at 1 so that omega = 1 is equiv_q(s) exactly (the colored sweep's measured 0.751). NaN
 * for jacobi above 1, where its checkerboard mode grows by |1 - 2 omega| a sweep. */
double equiv_q_relaxed(sweep_order s, double omega);

/* equiv_q_relaxed, or with color_hashed (solver.color_priority = hashed) for the colored sweep
 * EQUIV_Q_COLORED_HASHED_MEASURED at omega = 1 and NaN relaxed. */
double equiv_q_of(sweep_order s, int color_hashed, double omega);

typedef struct equiv_figures {
    double q, D, c, l_diff, kappa, gamma; /* eqs. (45-46), (54), (57), (63), (67), (68) */
} equiv_figures;

/* For N_I sweeps per step, time step dt, particle diameter d and mass m. */
equiv_figures equiv_of(sweep_order s, int N_I, double dt, double d, double m);
/* The same for the sweeps relaxed by omega (equiv_q_relaxed; omega = 1: equiv_of). */
equiv_figures equiv_of_relaxed(sweep_order s, double omega, int N_I, double dt, double d, double m);
/* The same for a given q (equiv_q_of's). */
equiv_figures equiv_of_q(double q, int N_I, double dt, double d, double m);

/* The tangential block's figures over the normal ones: m_t/m_n (eqs. 17-18) for two equal
 * particles, or a particle and a wall, with lever arms of their radius and moments of inertia
 * beta m r^2: beta/(1 + beta), 1/3 for discs (beta = 1/2), 2/7 for spheres (beta = 2/5). The
 * DEM twin's k_t and tangential dashpot are kappa and gamma times it (dem_config.c). */
double equiv_tangential_ratio(int dimension);

/* Critical time step of the explicit (velocity-Verlet) integration of one contact of stiffness
 * k and absolute dashpot c on mass m: 2/omega (sqrt(1 + xi^2) - xi), omega = 2 sqrt(k/m),
 * xi = c omega / (2 k). */
double equiv_critical_dt(double k, double c, double m);

/* What the DEM twin of a CD run needs to know of that run: its sweep order, and N_I when its
 * criterion is a fixed iteration count. The CD engine fills it from its own section when a DEM
 * run's config has one (system.mode = dem on a CD config); the run pipeline hands it over. */
typedef struct equiv_twin {
    int present; /* the config describes a CD run */
    sweep_order sweep;
    int iterations;        /* N_I of a fixed-count criterion; 0 for the local or global criterion */
    const char *criterion; /* the CD run's criterion's name ("fixed", "local", ...) */
    double relaxation;     /* the CD run's solver.relaxation (omega; q is known for 1 only; 0: 1) */
    int color_hashed;      /* the CD run's solver.color_priority is hashed (colored sweep) */
    /* set by the engine that runs the twin: the CD run's time step over its own, so that the
     * run pipeline can run the CD run's physical time (its steps and output cadences scaled);
     * 0 where the steps are the CD run's (not a twin, or the same time step) */
    double time_ratio;
} equiv_twin;

#endif

/* Reads the [solver] section into cd_params, and the spurious-elasticity figures of
 * Unger & Kertesz sec. 3 for a fixed iteration count. */
#ifndef CDLAB_CD_CONFIG_H
#define CDLAB_CD_CONFIG_H

#include "cd.h"
#include "config.h"

extern const char *const cd_sweep_names[]; /* "random", "forward", "backward", "jacobi", "colored" */
extern const char *const cd_criterion_names[]; /* "fixed", "local", "global" */

status cd_config_read(config *c, cd_params *p, diag *err);

/* q of the colored sweep, measured (no theory): the 1D wave test (experiments/chain1d,
 * study.py) at N_I = 40, three seeds, inverting eq. (58) for the fitted omega: 0.751 +- 0.008
 * (0.746 from tau). On the chain the colouring is red-black (two colours and the wall). */
#define CD_Q_COLORED_MEASURED 0.751

/* q of the ordered sweeps (forward, backward: list order, and its reverse), measured the same
 * way (experiments/chain1d, N_I = 40; the order is deterministic, so one seed): 1.0035 from
 * omega, 1.0004-1.0006 from tau, for both directions. On the chain the list order is the
 * chain's order (from the wall to the free end); in a 2D or 3D packing the list is sorted by
 * pair key (particle ids), whose q has not been measured. */
#define CD_Q_ORDERED_MEASURED 1.00

/* q of the sweep order (eqs. 45-46): 1/2 for jacobi, (4 sqrt(e) - 5)/2 for random, the
 * measured values for colored and the ordered sweeps (above). */
double cd_sweep_q(sweep_order s);

typedef struct cd_elasticity {
    double q, D, c, l_diff, kappa, gamma; /* eqs. (54), (57), (63), (67), (68) */
} cd_elasticity;

/* For N_I sweeps per step, time step dt, particle diameter d and mass m. */
cd_elasticity cd_elasticity_of(sweep_order s, int N_I, double dt, double d, double m);

#endif

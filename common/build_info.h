/* Build provenance, echoed into every output file. */
#ifndef CDLAB_BUILD_INFO_H
#define CDLAB_BUILD_INFO_H

extern const char *const cdlab_version;
extern const char *const cdlab_git_commit; /* short hash, "-dirty" if the tree had changes */
extern const char *const cdlab_compiler;
extern const char *const cdlab_cflags;

/* The results epoch: raised by every change that moves any number a run produces (compare
 * outputs with the previous build: tools/h5compare.py), in the same commit. Every output
 * records it (/build@results_epoch), every study summary records the epoch of the build that
 * made it, and `make experiments-status` calls a summary stale when its epoch is older.
 *   1  everything up to d9d5e06
 *   2  CD: the contact point of an open particle pair in the middle of the gap (frictional CD
 *      results change; angular momentum conserved)
 *   3  /series/kinetic_energy of runs with frozen particles: a number instead of NaN (it added
 *      0.5/inv_I * |w|^2 with inv_I = 0); no study has frozen particles
 *   4  exact sums (common/xsum.h), so that distributed runs give the one-process bits: the DEM
 *      energy ledger (every term at round-off, ~1e-15 relative; the cumulative terms summed
 *      exactly over all steps; the kinetic terms of a kinematic drive are now the imposed
 *      velocities' instead of the start's; a restart's first row carries the ledger's residual
 *      instead of 0) and the CD global criterion's sums of |R| (its residual at round-off; a
 *      step's sweep count can change where the test falls within that round-off)
 *   5  the kinematic drive reports the walls' contact forces of each step (/series/piston_force,
 *      the checkpoint's walls); they stayed at the start's values (zero)
 *   6  DEM, Kuhn law: the rotation of the sliding direction without trigonometric functions
 *      (dem_sliding_angle_end): its sine and cosine within two ulps of the angle formula's, so
 *      sliding contacts move in the last bits (multi-particle flows then differ at the level
 *      their chaos gives round-off: 1e-7 relative in the chute's velocities after 300 steps)
 *   7  /series/stress of DEM runs with a periodic axis and dem.stress_volume = 0: along that
 *      axis the volume's extent is the period, not the particles' bounding box (a radius past
 *      the cell on each side: 5% more area, 5% less stress, in the chute); /summary
 *      mean_sweeps of a continued run over its own steps (it was divided by the steps from the
 *      original start). No study has either: their numbers are the same
 *   8  a continued run's first series row (the checkpoint's step) holds the step's contacts,
 *      active and sliding contacts, overlaps, sweeps and residual, as the uninterrupted run's
 *      (checkpoints carry them: row_record); they were zeros. Every other number as before
 *      (tools/identity.py: 19 of 21 runs bit-identical, the two restarts differ in row 0
 *      alone); no study reads a continued run's first row
 */
#define CDLAB_RESULTS_EPOCH 8

#endif

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
 *      0.5/inv_I * |w|^2 with inv_I = 0); no study has frozen particles */
#define CDLAB_RESULTS_EPOCH 3

#endif

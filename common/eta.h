#ifndef CDLAB_ETA_H
#define CDLAB_ETA_H
/* The remaining time of a run from its progress so far, for the progress line. Two models of
 * the cost of a step (wall seconds per step) are fitted to samples of (step, elapsed):
 *   - constant: the cost over the recent quarter of the elapsed time (at least two samples'
 *     span), held to the end;
 *   - trend: elapsed(step) fitted by a parabola over the samples after the first (set-up and
 *     a first transient excluded), so a cost that grows (or falls) linearly with the step is
 *     followed to the end; the cost is not let fall below a fifth of today's.
 * Where the two agree to ETA_AGREE the estimate is one number, else the range between them:
 * a packing that gathers contacts (a compression, a settling) makes each step dearer, and the
 * constant model is then the low end. Samples are kept at least ETA_MIN_GAP seconds apart, at
 * most ETA_SAMPLES of them (every other one dropped when full, the gap doubled). */

#define ETA_SAMPLES 64
#define ETA_MIN_GAP 0.5
#define ETA_AGREE 0.10
#define ETA_FIRST 5 /* samples before the first estimate */

typedef struct eta_state {
    long step[ETA_SAMPLES];
    double t[ETA_SAMPLES];
    int n;
    double gap; /* seconds between kept samples (0: ETA_MIN_GAP) */
} eta_state;    /* zeroed: no samples yet */

/* A sample of the run's progress: steps done and wall seconds since the run's first step. */
void eta_sample(eta_state *e, long step, double elapsed);
/* The remaining seconds to `steps` from `step`: *lo <= *hi (equal where the models agree).
 * Returns 0 (nothing set) until the estimate rests on ETA_FIRST samples and 2 seconds. */
int eta_estimate(const eta_state *e, long step, long steps, double *lo, double *hi);

#endif

#include "eta.h"

#include <math.h>

void eta_sample(eta_state *e, long step, double elapsed)
{
    if (e->gap <= 0.0)
        e->gap = ETA_MIN_GAP;
    if (e->n > 0 && (elapsed - e->t[e->n - 1] < e->gap || step <= e->step[e->n - 1]))
        return;
    if (e->n == ETA_SAMPLES) { /* keep the first, every other one, and make room */
        int m = 0;
        for (int k = 0; k < e->n; k += 2, m++) {
            e->step[m] = e->step[k];
            e->t[m] = e->t[k];
        }
        e->n = m;
        e->gap *= 2;
    }
    e->step[e->n] = step;
    e->t[e->n] = elapsed;
    e->n++;
}

/* The cost per step over the last quarter of the elapsed time (at least the last two
 * intervals). */
static double recent_cost(const eta_state *e)
{
    int last = e->n - 1, k = last - 2;
    while (k > 0 && e->t[last] - e->t[k - 1] <= 0.25 * e->t[last])
        k--;
    return (e->t[last] - e->t[k]) / (double)(e->step[last] - e->step[k]);
}

/* Least squares of t = c0 + c1 s + c2 s^2 over samples 1..n-1, s centred on the last sample
 * (the fit's cost at the last step is c1, its growth per step 2 c2). Returns 0 if singular. */
static int parabola(const eta_state *e, double *c1, double *c2)
{
    double A[3][4] = {{0}};
    long s0 = e->step[e->n - 1];
    for (int k = 1; k < e->n; k++) {
        double s = (double)(e->step[k] - s0), p[3] = {1.0, s, s * s};
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++)
                A[i][j] += p[i] * p[j];
            A[i][3] += p[i] * e->t[k];
        }
    }
    for (int c = 0; c < 3; c++) { /* Gauss-Jordan with partial pivoting */
        int piv = c;
        for (int r = c + 1; r < 3; r++)
            if (fabs(A[r][c]) > fabs(A[piv][c]))
                piv = r;
        if (fabs(A[piv][c]) <= 1e-300)
            return 0;
        for (int j = 0; j < 4; j++) {
            double tmp = A[c][j];
            A[c][j] = A[piv][j];
            A[piv][j] = tmp;
        }
        for (int r = 0; r < 3; r++)
            if (r != c) {
                double f = A[r][c] / A[c][c];
                for (int j = c; j < 4; j++)
                    A[r][j] -= f * A[c][j];
            }
    }
    *c1 = A[1][3] / A[1][1];
    *c2 = A[2][3] / A[2][2];
    return isfinite(*c1) && isfinite(*c2);
}

/* The integral over the next `left` steps of the cost now + slope x, held at >= floor. */
static double integrate(double now, double slope, double floor, double left)
{
    if (slope >= 0.0 || now + slope * left >= floor)
        return left * (now + 0.5 * slope * left);
    double x = (floor - now) / slope; /* where it reaches the floor */
    return x * (now + 0.5 * slope * x) + floor * (left - x);
}

int eta_estimate(const eta_state *e, long step, long steps, double *lo, double *hi)
{
    /* the trend needs 4 samples after the first to be more than a line through them; before
     * it, the recent cost alone was 3.5x low at 1% of piston2d/prepare.ini */
    if (e->n < ETA_FIRST || e->t[e->n - 1] < 2.0)
        return 0;
    double left = (double)(steps > step ? steps - step : 0);
    double flat = recent_cost(e) * left, trend = flat, c1, c2;
    if (parabola(e, &c1, &c2) && c1 > 0.0)
        trend = integrate(c1, 2.0 * c2, 0.2 * c1, left);
    *lo = fmin(flat, trend);
    *hi = fmax(flat, trend);
    if (*hi - *lo <= ETA_AGREE * *hi)
        *lo = *hi = 0.5 * (*lo + *hi);
    return 1;
}

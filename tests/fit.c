#include "fit.h"

#include "vec3.h"

#include <math.h>
#include <string.h>

#define FIT_MAX_ITER 500
#define FIT_REL_TOL 1e-12 /* stop when the relative drop of the residual is below this */

static double model(const double p[5], double t)
{
    return p[0] + p[1] * exp(-t / p[2]) * sin(p[3] * t + p[4]);
}

static double sumsq(const double *t, const double *x, int n, const double p[5])
{
    double s = 0.0;
    for (int k = 0; k < n; k++) {
        double r = model(p, t[k] - t[0]) - x[k];
        s += r * r;
    }
    return s;
}

/* Solves the 5x5 system A y = b in place by Gaussian elimination with partial pivoting. */
static int solve5(double A[5][5], double b[5])
{
    for (int c = 0; c < 5; c++) {
        int piv = c;
        for (int r = c + 1; r < 5; r++)
            if (fabs(A[r][c]) > fabs(A[piv][c]))
                piv = r;
        if (A[piv][c] == 0.0)
            return 0;
        for (int k = 0; k < 5; k++) {
            double tmp = A[c][k];
            A[c][k] = A[piv][k];
            A[piv][k] = tmp;
        }
        double tb = b[c];
        b[c] = b[piv];
        b[piv] = tb;
        for (int r = c + 1; r < 5; r++) {
            double f = A[r][c] / A[c][c];
            for (int k = c; k < 5; k++)
                A[r][k] -= f * A[c][k];
            b[r] -= f * b[c];
        }
    }
    for (int c = 4; c >= 0; c--) {
        for (int k = c + 1; k < 5; k++)
            b[c] -= A[c][k] * b[k];
        b[c] /= A[c][c];
    }
    return 1;
}

/* The starting point: Prony's x[k+1] = a x[k] + b x[k-1] + c by normal equations (3x3) gives
 * the decay and frequency, a scan of the phase and the amplitude's sign the rest. Returns 0
 * when the Prony system is singular. */
static int prony_start(const double *t, const double *x, int n, double p[5])
{
    double h = t[1] - t[0];
    double M[3][3] = {{0}}, v[3] = {0};
    for (int k = 1; k + 1 < n; k++) {
        double row[3] = {x[k], x[k - 1], 1.0};
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 3; j++)
                M[i][j] += row[i] * row[j];
            v[i] += row[i] * x[k + 1];
        }
    }
    double A5[5][5] = {{0}}, b5[5] = {0};
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            A5[i][j] = M[i][j];
        b5[i] = v[i];
    }
    A5[3][3] = A5[4][4] = 1.0;
    if (!solve5(A5, b5))
        return 0;
    double rho = sqrt(fmax(-b5[1], 1e-300));
    double cw = fmax(-1.0, fmin(1.0, b5[0] / (2.0 * rho)));
    double p0[5] = {x[n - 1], 0.0, rho < 1.0 ? -h / log(rho) : 1e3 * h * n, acos(cw) / h, 0.0};
    memcpy(p, p0, sizeof p0);
    /* phase and amplitude sign scan for a start in the right basin */
    double amp = fabs(x[0] - x[n - 1]) + 1e-300, best = INFINITY;
    for (int s = -1; s <= 1; s += 2)
        for (int k = 0; k < 24; k++) {
            double q[5] = {p[0], s * amp, p[2], p[3], -CDLAB_PI + 2 * CDLAB_PI * k / 24.0};
            double r = sumsq(t, x, n, q);
            if (r < best) {
                best = r;
                p[1] = q[1];
                p[4] = q[4];
            }
        }
    return 1;
}

/* Levenberg-Marquardt from p until the relative drop of the sum of squares falls below
 * FIT_REL_TOL (or FIT_MAX_ITER); returns the sum of squares. */
static double levenberg_marquardt(const double *t, const double *x, int n, double p[5])
{
    double lambda = 1e-3, S = sumsq(t, x, n, p);
    for (int it = 0; it < FIT_MAX_ITER; it++) {
        double JTJ[5][5] = {{0}}, JTr[5] = {0};
        for (int k = 0; k < n; k++) {
            double tt = t[k] - t[0], e = exp(-tt / p[2]), sn = sin(p[3] * tt + p[4]),
                   cs = cos(p[3] * tt + p[4]);
            double J[5] = {1.0, e * sn, p[1] * e * sn * tt / (p[2] * p[2]), p[1] * e * cs * tt,
                           p[1] * e * cs};
            double r = x[k] - model(p, tt);
            for (int i = 0; i < 5; i++) {
                for (int j = 0; j < 5; j++)
                    JTJ[i][j] += J[i] * J[j];
                JTr[i] += J[i] * r;
            }
        }
        int improved = 0;
        while (lambda < 1e12) {
            double A[5][5], d[5];
            memcpy(A, JTJ, sizeof A);
            memcpy(d, JTr, sizeof d);
            for (int i = 0; i < 5; i++)
                A[i][i] *= 1.0 + lambda;
            if (!solve5(A, d)) {
                lambda *= 10;
                continue;
            }
            double q[5];
            for (int i = 0; i < 5; i++)
                q[i] = p[i] + d[i];
            double Sq = q[2] > 0.0 ? sumsq(t, x, n, q) : INFINITY;
            if (Sq < S) {
                double drop = (S - Sq) / (S > 0 ? S : 1.0);
                memcpy(p, q, 5 * sizeof *p);
                S = Sq;
                lambda = fmax(lambda / 10, 1e-12);
                improved = drop > FIT_REL_TOL;
                break;
            }
            lambda *= 10;
        }
        if (!improved)
            break;
    }
    return S;
}

status fit_damped_sine(const double *t, const double *x, int n, damped_sine *out, diag *err)
{
    if (n < 10)
        return diag_set(err, CDLAB_ERR_ARG, "damped-sine fit needs at least 10 points (got %d)", n);
    double p[5];
    if (!prony_start(t, x, n, p))
        return diag_set(err, CDLAB_ERR_NUMERIC, "damped-sine fit: singular Prony system");
    double S = levenberg_marquardt(t, x, n, p);
    if (p[1] < 0) { /* canonical sign: A > 0 */
        p[1] = -p[1];
        p[4] += CDLAB_PI;
    }
    out->x0 = p[0];
    out->A = p[1];
    out->tau = p[2];
    out->omega = p[3];
    out->phi = p[4];
    out->rms = sqrt(S / n);
    if (!isfinite(out->omega + out->tau))
        return diag_set(err, CDLAB_ERR_NUMERIC, "damped-sine fit did not converge");
    return CDLAB_OK;
}

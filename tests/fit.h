/* Least-squares fit of a damped sine plus constant, x(t) = x0 + A exp(-t/tau) sin(omega t + phi)
 * (Unger & Kertesz eq. 64), used by the wave-test regression. Levenberg-Marquardt with the
 * analytic Jacobian, started from a linear-prediction (Prony) estimate and a phase scan. */
#ifndef CDLAB_FIT_H
#define CDLAB_FIT_H

#include "status.h"

typedef struct damped_sine {
    double x0, A, tau, omega, phi;
    double rms; /* root-mean-square residual */
} damped_sine;

/* t must be uniformly spaced and n >= 10. */
status fit_damped_sine(const double *t, const double *x, int n, damped_sine *out, diag *err);

#endif

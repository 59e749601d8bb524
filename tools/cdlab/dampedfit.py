"""Fit of a damped sine plus constant, x(t) = x0 + A exp(-t/tau) sin(omega t + phi)
(Unger & Kertesz eq. 64): linear-prediction (Prony) start, amplitude/phase scan, then
scipy's least squares. Returns the parameters and their 1-sigma errors."""
import math

import numpy as np
from scipy.optimize import curve_fit


def damped(t, x0, A, tau, omega, phi):
    return x0 + A * np.exp(-t / tau) * np.sin(omega * t + phi)


def prony(t, x):
    """x[k+1] = a x[k] + b x[k-1] + c with a = 2 rho cos(omega h), b = -rho^2."""
    h = t[1] - t[0]
    M = np.column_stack([x[1:-1], x[:-2], np.ones(len(x) - 2)])
    (a, b, _), *_ = np.linalg.lstsq(M, x[2:], rcond=None)
    rho = math.sqrt(max(-b, 1e-300))
    omega = math.acos(max(-1.0, min(1.0, a / (2 * rho)))) / h
    tau = -h / math.log(rho) if rho < 1 else 1e3 * h * len(t)
    return omega, tau


def fit(t, x, omega0=None, tau0=None):
    """t: times (uniform), x: data. Returns dict(x0, A, tau, omega, phi, *_err, rms)."""
    t = np.asarray(t, float)
    x = np.asarray(x, float)
    tt = t - t[0]
    om_p, tau_p = prony(tt, x)
    omega0 = omega0 or om_p
    tau0 = tau0 or tau_p
    x0 = x[-1]
    amp = max(abs(x - x0).max(), 1e-300)
    best = None
    for omega_s in {omega0, om_p}:
        for tau_s in {tau0, tau_p}:
            for phi in np.linspace(-math.pi, math.pi, 13):
                for A in (amp, -amp):
                    r = np.sum((damped(tt, x0, A, tau_s, omega_s, phi) - x) ** 2)
                    if best is None or r < best[0]:
                        best = (r, [x0, A, tau_s, omega_s, phi])
    popt, pcov = curve_fit(damped, tt, x, p0=best[1], maxfev=40000)
    err = np.sqrt(np.abs(np.diag(pcov)))
    names = ["x0", "A", "tau", "omega", "phi"]
    out = {n: float(v) for n, v in zip(names, popt)}
    out.update({n + "_err": float(e) for n, e in zip(names, err)})
    out["rms"] = float(np.sqrt(np.mean((damped(tt, *popt) - x) ** 2)))
    out["t0"] = float(t[0])
    out["popt"] = popt
    return out


def loglog_slope(x, y):
    """Least-squares slope of log y against log x with its 1-sigma error."""
    lx, ly = np.log(np.asarray(x, float)), np.log(np.asarray(y, float))
    A = np.column_stack([lx, np.ones_like(lx)])
    coef, res, *_ = np.linalg.lstsq(A, ly, rcond=None)
    n = len(lx)
    if n > 2:
        s2 = float(np.sum((ly - A @ coef) ** 2)) / (n - 2)
        cov = s2 * np.linalg.inv(A.T @ A)
        return float(coef[0]), float(math.sqrt(cov[0, 0]))
    return float(coef[0]), float("nan")

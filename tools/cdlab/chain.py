"""The 1D wave test's analysis (Unger & Kertesz sec. 3.3.1, Fig. 7), shared by the studies that
run the chain (experiments/chain1d, cd_vs_dem, parallel): the last step in which any chain
contact carried zero force (while the chain still bounces the dynamics is not linear), the fit
    x(t) = x0 + A exp(-t/tau) sin(omega t + phi)            (eq. 64)
to the last disk's position after it, and omega and tau of eqs. (58) and (60) for the slowest
mode (wavelength 4L, wall fixed, far end free) and the q of the sweep order."""
import math

import h5py
import numpy as np

from . import dampedfit

class NotAChain(SystemExit):
    """The file is no run this analysis fits; uncaught, it ends a script with its one line."""


Q_RANDOM = (4.0 * math.sqrt(math.e) - 5.0) / 2.0  # eq. (46)
Q_BY_SWEEP = {"random": Q_RANDOM, "jacobi": 0.5}   # eq. (45) for the parallel update


def theory(q, N_I, dt, d, L):
    D = q * N_I * d * d / dt                  # eq. (54)
    c = math.sqrt(q * N_I) * d / dt           # eq. (57)
    k = 2 * math.pi / (4 * L)                 # slowest mode, wavelength 4L
    omega = k * math.sqrt(c * c - D * D * k * k / 4)  # eq. (58)
    tau = 2 / (D * k * k)                     # eq. (60)
    return omega, tau, c, D


def not_a_chain(f, par):
    """Why the file is not a run this analysis fits (None when it is one)."""
    need = [("system.dimension", "1"), ("particles.source", "chain")]
    for key, value in need:
        if par.get(key) != value:
            return f"{key} = {par.get(key, '(none)')}, the chain has {value}"
    if not par.get("load.force") or not par.get("load.particles"):
        return "no [load] force on the last disk"
    if par.get("system.mode", "cd") == "cd" and par.get("solver.criterion") != "fixed":
        return (f"solver.criterion = {par.get('solver.criterion')}: the theory is that of N_I sweeps "
                "every step (criterion fixed)")
    if "series/probe_ids" not in f:
        return "no output.probes"
    return None


def analyze(path, q=None, window_tau=6.0):
    with h5py.File(path, "r") as f:
        if "parameters" not in f:
            raise NotAChain(f"{path} is not a cdlab output (no /parameters)")
        par = {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in f["parameters"].attrs.items()}
        why = not_a_chain(f, par)
        if why:
            raise NotAChain(f"{path} is not a 1D wave test run like experiments/chain1d/chain1d.ini "
                            f"({why})")
        t = f["series/t"][:]
        active = f["series/active_contacts"][:]
        probe_ids = list(f["series/probe_ids"][:])
        pos = f["series/probe_position"][:]
        n = int(par["particles.count"])
        mode = par.get("system.mode", "cd")
        if mode == "dem":
            # the DEM twin: the theory of its CD original (dem.stiffness_from_cd, eqs. 67-68)
            if "dem.stiffness_from_cd" not in par or par["dem.stiffness_from_cd"] == "0":
                raise NotAChain(f"{path}: a DEM run needs dem.stiffness_from_cd to compare with the CD theory")
            sweep = par["dem.cd_sweep"]
            N_I = int(par["dem.stiffness_from_cd"])
            dt = float(par["dem.cd_dt"])
        else:
            sweep = par["solver.sweep"]
            N_I = int(par["solver.iterations"])
            dt = float(par["system.dt"])
        d = 2 * float(par["particles.radius"])
        mass = float(par["particles.mass"])
        F = abs(float(par["load.force"].split()[0]))
    if q is None:
        if sweep not in Q_BY_SWEEP:
            raise NotAChain(f"{path}: no theoretical q for sweep '{sweep}'; pass --q")
        q = Q_BY_SWEEP[sweep]
    last = n - 1
    col = probe_ids.index(last) if last in probe_ids else None
    if col is None:
        raise NotAChain(f"{path}: the last disk is not among output.probes")
    x = pos[:, col, 0]
    # The chain has n contacts (n - 1 pairs and the wall); any with zero force = still bouncing.
    open_steps = np.nonzero(active < n)[0]
    k0 = int(open_steps[-1]) + 1 if len(open_steps) else 0
    k_open = k0
    L = n * d
    om_th, tau_th, c, D = theory(q, N_I, dt, d, L)
    # Fit window: start tau/3 after the last opening, i.e. three damping times of the next mode
    # (wavelength 4L/3, k' = 3k, tau' = tau/9), so that only the slowest mode is left (fitting
    # from the opening itself biases tau by +10% on average over seeds); six damping times long.
    h = t[1] - t[0]  # output spacing (the DEM twin samples finer than the CD step)
    k0 = min(len(t) - 1, k0 + int(round(tau_th / (3 * h))))
    k1 = min(len(t), k0 + int(window_tau * tau_th / h) + 1)
    tt, xx = t[k0:k1], x[k0:k1]
    if len(tt) < 20:
        raise NotAChain(f"{path}: only {len(tt)} steps after the last contact opening; run longer")
    fr = dampedfit.fit(tt, xx, omega0=om_th, tau0=tau_th)
    popt = fr["popt"]
    perr = [fr["x0_err"], fr["A_err"], fr["tau_err"], fr["omega_err"], fr["phi_err"]]
    om0, tau0 = dampedfit.prony(tt - tt[0], xx)
    res = dict(path=path, mode=mode, sweep=sweep, q=q, N_I=N_I, n=n, d=d, m=mass, F=F, dt=dt, L=L,
               t_last_open=float(t[k_open - 1]) if k_open > 0 else float("nan"), t_fit_end=float(t[k1 - 1]),
               omega=popt[3], omega_err=perr[3], tau=popt[2], tau_err=perr[2],
               omega_prony=om0, tau_prony=tau0,
               omega_th=om_th, tau_th=tau_th, c=c, D=D, popt=popt, t=t, x=x, k0=k0, k1=k1,
               k_open=k_open)
    return res


def figures(run):
    """A scan's figures of a chain run (cdlab scan ... --figure cdlab.chain:figures): the fitted
    omega and tau of the slowest mode and eqs. (58), (60)'s, from the run's file."""
    r = analyze(run.path)
    return {"omega": float(r["omega"]), "omega_eq58": float(r["omega_th"]),
            "tau": float(r["tau"]), "tau_eq60": float(r["tau_th"])}

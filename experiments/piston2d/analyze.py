#!/usr/bin/python3
"""piston2d analysis (Unger & Kertesz sec. 3.3.2, Fig. 8).

For every friction, N_I and relative force step dF/F: the piston's response is the stepped
run's piston position minus that of the unstepped baseline (same packing, same seed, same
N_I), so that the slow drift of the packing cancels; x(t) = x0 + A exp(-t/tau) sin(omega t + phi)
(eq. 64) is fitted to it. Main result: the log-log slopes of omega and tau against N_I at a
small step (0.5 %), expected 1/2 and -1 (+- 0.05), with and without friction. Second result:
how omega, tau, the quality factor Q = omega tau / 2 and the number of contacts that slide
depend on the step's amplitude. Writes summary.md (summary_quick.md) and plots in out/ (out_quick/)."""
import argparse
import glob
import math
import os
import re

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
from cdlab import dampedfit
from cdlab import Run
from cdlab.scan import read_results
from cdlab.stamp import stamp
from cdlab.textfile import write_text

CDLAB = os.environ.get("CDLAB", os.path.join(root, "build", "cdlab"))
MAIN = 0.005          # the main result's relative force step
TOL_SLOPE = 0.05      # on both slopes (the and the paper's claim: 1/2 and -1)
F_PISTON = 50.0       # the force before the step (runs.py)


def response(path, base_path):
    """Baseline-subtracted piston response after the step, and the extra sliding contacts."""
    r, b = Run(path), Run(base_path)
    t = r.series("t")
    x = r.series("piston_position")[:, 0] - b.series("piston_position")[:, 0]
    ns = r.series("sliding_contacts").astype(float) - b.series("sliding_contacts").astype(float)
    F = float(r.params["piston.top.force"])
    dF = float(r.params["piston.top.force_after"]) - F
    # row 0 is the checkpoint the run continued from (the last step at F); the step acts from row 1
    tt, xx = t[1:], x[1:]
    f = dampedfit.fit(tt, xx)
    dt = float(r.params["system.dt"])
    n8 = int(8 * f["tau"] / dt)  # refit over at most eight damping times (then only round-off)
    if 50 < n8 < len(tt):
        f = dampedfit.fit(tt[:n8], xx[:n8], omega0=f["omega"], tau0=f["tau"])
    half = t <= t[0] + math.pi / f["omega"]
    return dict(N_I=int(r.params["solver.iterations"]), mu=float(r.params["contact.friction"]),
                amp=dF / F, dF=dF, fit=f, t=t - t[0], x=x,
                slide_mean=float(ns[1:][half[1:]].mean()), slide_max=float(ns.max()),
                active=int(b.series("active_contacts")[1]), compliance=f["x0"] / dF)


def verdict(s, e, want, quick):
    if quick or not np.isfinite(e):
        return "n/a (quick: two N_I)" if quick else "n/a"
    return "pass" if abs(s - want) <= TOL_SLOPE and e <= TOL_SLOPE else "FAIL"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tag", default="full")
    a = ap.parse_args()
    quick = a.tag == "quick"
    sub = "out_quick" if quick else "out"  # a quick run's own folder
    out = os.path.join(here, sub)
    runs, files = [], []
    for folder in sorted(glob.glob(os.path.join(out, "ring_mu*"))):  # runs.py's scans
        rows = read_results(folder)
        steps = [r for r in rows if r["piston.top.force_after"] != F_PISTON]
        for r in steps:
            base = next(b["file"] for b in rows if b["piston.top.force_after"] == F_PISTON
                        and b["solver.iterations"] == r["solver.iterations"])
            runs.append(response(r["file"], base))
            files += [r["file"], base, r["restart"]]
    files = sorted(set(files) | set(glob.glob(os.path.join(out, f"prepare_{a.tag}_mu*.h5"))))
    mus = sorted({r["mu"] for r in runs}, reverse=True)
    amps = sorted({r["amp"] for r in runs})
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    md = [f"# piston2d: the 2D piston test (Unger & Kertész sec. 3.3.2, Fig. 8){' — QUICK run' if quick else ''}", ""]
    preps = sorted(glob.glob(os.path.join(out, f"prepare_{a.tag}_mu*.md")), reverse=True)
    md += ["## Preparation (prepare.ini)", ""]
    for prep in preps:
        mu_text = re.search(r"_mu([^_]+)\.md$", prep).group(1)
        md += [f"Friction {mu_text}: " + " ".join(open(prep).read().split("\n")[2:]).strip(), ""]
    md += ["## The force step", "",
           "Disks with radii uniform in [0.5, 1], density 1, fixed base and side walls, a piston of mass 2000 (about the "
           "packing's 1830), no gravity, Δt = 0.02, random sweep with a fixed N_I. From the prepared packing the piston "
           "force F = 50 acts for 2000 steps; the run is continued from its checkpoint with the force stepped to "
           "F + ΔF, and once with ΔF = 0: that **baseline** (same packing, seed and N_I) is subtracted from the stepped "
           "run's piston position before eq. (64) is fitted, so that the packing's slow drift under F does not enter "
           "the fit (`tools/cdlab/dampedfit.py`, over at most 8τ; ± = 1σ of the fit). Q = ωτ/2 is the quality factor; "
           "'sliding' is the mean number of contacts more than in the baseline at the Coulomb limit "
           "(`/series/sliding_contacts`) during the first half-cycle after the step.", ""]

    # --- main result: the small step, both frictions ---
    main_rows, slopes = [], {}
    fig2, axs = plt.subplots(1, 2, figsize=(10, 4))
    for mu, style in zip(mus, ("o-", "s--")):
        sel = sorted([r for r in runs if r["mu"] == mu and abs(r["amp"] - MAIN) < 1e-12], key=lambda r: r["N_I"])
        if not sel:
            continue
        NI = np.array([r["N_I"] for r in sel])
        om = np.array([r["fit"]["omega"] for r in sel])
        ta = np.array([r["fit"]["tau"] for r in sel])
        s_om, e_om = dampedfit.loglog_slope(NI, om)
        s_ta, e_ta = dampedfit.loglog_slope(NI, ta)
        slopes[mu] = (s_om, e_om, s_ta, e_ta)
        label = f"friction {mu:g}" + (" (the paper's)" if mu > 0 else " (control)")
        md += [f"### ΔF/F = {100 * MAIN:g} %, {label}", "",
               "| N_I | ω | τ | Q = ωτ/2 | static compliance x0/ΔF | sliding (of active) | rms of the fit |",
               "|---|---|---|---|---|---|---|"]
        for r in sel:
            f = r["fit"]
            md.append(f"| {r['N_I']} | {f['omega']:.4f} ± {f['omega_err']:.1e} | {f['tau']:.3f} ± {f['tau_err']:.1e} | "
                      f"{f['omega'] * f['tau'] / 2:.1f} | {r['compliance']:.3e} | {r['slide_mean']:.1f} ({r['active']}) | "
                      f"{f['rms'] / abs(r['dF']):.1e} ΔF |")
        md.append("")
        for what, s, e, want in (("ω", s_om, e_om, 0.5), ("τ", s_ta, e_ta, -1.0)):
            main_rows.append(f"| {label} | {what} | {s:.3f} ± {e:.3f} | {want:g} | ± {TOL_SLOPE} (and σ below it) | "
                             f"{verdict(s, e, want, quick)} |")
        axs[0].loglog(NI, om, style, label=label)
        axs[1].loglog(NI, ta, style, label=label)
    nn = np.geomspace(8, 400, 50)
    if slopes:
        mu0 = mus[0]
        sel0 = sorted([r for r in runs if r["mu"] == mu0 and abs(r["amp"] - MAIN) < 1e-12], key=lambda r: r["N_I"])
        axs[0].loglog(nn, sel0[0]["fit"]["omega"] * (nn / sel0[0]["N_I"]) ** 0.5, "k:", lw=1, label="∝ N_I^½")
        axs[1].loglog(nn, sel0[0]["fit"]["tau"] * (nn / sel0[0]["N_I"]) ** -1.0, "k:", lw=1, label="∝ N_I^−1")
    for ax, name, want in zip(axs, ("ω", "τ"), ("½", "−1")):
        ax.set_xlabel("N_I")
        ax.set_ylabel(name)
        ax.set_title(f"{name} against N_I at ΔF/F = {100 * MAIN:g} % (slope {want} expected)", fontsize=10)
        ax.legend(fontsize=8)
    fig2.tight_layout()
    fig2.savefig(os.path.join(out, f"omega_tau_{a.tag}.png"), dpi=120)
    md += ["### Slopes at the small step (the paper's claim)", "",
           f"Log–log slopes against N_I over N_I = {min(r['N_I'] for r in runs)}…{max(r['N_I'] for r in runs)}.", "",
           "| run | slope of | measured | expected | tolerance | result |", "|---|---|---|---|---|---|", *main_rows, "",
           f"![ω, τ against N_I]({sub}/omega_tau_{a.tag}.png)", ""]

    # Fig. 8: the baseline-subtracted response at the small step, friction of the paper
    fig8, ax8 = plt.subplots(figsize=(8, 5))
    off = 0.0
    for r in sorted([r for r in runs if r["mu"] == mus[0] and abs(r["amp"] - MAIN) < 1e-12], key=lambda r: r["N_I"]):
        n = min(len(r["t"]), int(4 * r["fit"]["tau"] / (r["t"][1] - r["t"][0])) + 200, 2500)
        y = r["x"][:n] / r["dF"]
        ax8.plot(r["t"][:n], y + off, "-", lw=1, label=f"N_I = {r['N_I']}")
        off -= 1.2 * np.max(np.abs(y))
    ax8.set_xlabel("time after the force step")
    ax8.set_ylabel("(piston − baseline) / ΔF (curves offset)")
    ax8.set_title(f"Piston after a force step of {100 * MAIN:g} %, friction {mus[0]:g} (cf. Unger & Kertész Fig. 8)",
                  fontsize=10)
    ax8.legend(fontsize=8)
    fig8.tight_layout()
    fig8.savefig(os.path.join(out, f"fig8_{a.tag}.png"), dpi=120)
    md += [f"![Fig. 8]({sub}/fig8_{a.tag}.png)", ""]

    # --- second result: the amplitude dependence ---
    if len(amps) > 1:
        md += ["## How the response depends on the step's amplitude", "",
               "The same runs at other ΔF/F. The spurious visco-elasticity of the theory is linear: ω, τ and Q do not "
               "depend on the amplitude. The packing is not: the larger the step, the more contacts reach the Coulomb "
               "limit and slide, adding a rate-independent (hysteretic) loss and softening the response. Slopes over "
               "every N_I; the single values at N_I = 20.", "",
               "| friction | ΔF/F | ω slope | τ slope | ω (N_I = 20) | Q (N_I = 20) | sliding (N_I = 20) |",
               "|---|---|---|---|---|---|---|"]
        for mu in mus:
            for amp in amps:
                sel = sorted([r for r in runs if r["mu"] == mu and abs(r["amp"] - amp) < 1e-12], key=lambda r: r["N_I"])
                if len(sel) < 2:
                    continue
                NI = [r["N_I"] for r in sel]
                so, eo = dampedfit.loglog_slope(NI, [r["fit"]["omega"] for r in sel])
                st, et = dampedfit.loglog_slope(NI, [r["fit"]["tau"] for r in sel])
                r20 = [r for r in sel if r["N_I"] == 20]
                c20 = (f"{r20[0]['fit']['omega']:.3f} | {r20[0]['fit']['omega'] * r20[0]['fit']['tau'] / 2:.1f} | "
                       f"{r20[0]['slide_mean']:.1f}") if r20 else "– | – | –"
                md.append(f"| {mu:g} | {100 * amp:g} % | {so:.3f} ± {eo:.3f} | {st:.3f} ± {et:.3f} | {c20} |")
        md.append("")
        for mu in mus:
            sel_mu = [r for r in runs if r["mu"] == mu]
            NIs = sorted({r["N_I"] for r in sel_mu})
            amps_mu = sorted({r["amp"] for r in sel_mu})
            if len(amps_mu) < 2:
                continue
            md += [f"Friction {mu:g}, every run: ω / Q / sliding contacts in the first half-cycle.", "",
                   "| N_I | " + " | ".join(f"ΔF/F = {100 * x:g} %" for x in amps_mu) + " |",
                   "|---|" + "---|" * len(amps_mu)]
            for ni in NIs:
                cells = []
                for amp in amps_mu:
                    r = [x for x in sel_mu if x["N_I"] == ni and abs(x["amp"] - amp) < 1e-12]
                    cells.append(f"{r[0]['fit']['omega']:.3f} / {r[0]['fit']['omega'] * r[0]['fit']['tau'] / 2:.1f} / "
                                 f"{r[0]['slide_mean']:.1f}" if r else "–")
                md.append(f"| {ni} | " + " | ".join(cells) + " |")
            md.append("")
        # what the amplitude scan shows, in words, with its numbers
        def pick(mu, amp, ni):
            r = [x for x in runs if x["mu"] == mu and abs(x["amp"] - amp) < 1e-12 and x["N_I"] == ni]
            return r[0] if r else None
        big, small = max(amps), MAIN
        mu_f = max(mus)
        rs, rb, r0 = pick(mu_f, small, 20), pick(mu_f, big, 20), pick(0.0, small, 20)
        sel_big = sorted([x for x in runs if x["mu"] == mu_f and abs(x["amp"] - big) < 1e-12], key=lambda x: x["N_I"])
        if rs and rb and len(sel_big) > 2:
            st_big, _ = dampedfit.loglog_slope([x["N_I"] for x in sel_big], [x["fit"]["tau"] for x in sel_big])
            qs_big = [x["fit"]["omega"] * x["fit"]["tau"] / 2 for x in sel_big]
            md += [f"**What it shows.** At steps up to {100 * small:g} % hardly any contact slides ({rs['slide_mean']:.1f} "
                   f"of {rs['active']} at N_I = 20), the response is linear and the paper's scalings hold, with and "
                   "without friction (table above). "
                   + (f"The frictional packing is stiffer than the frictionless one at the same N_I (ω = "
                      f"{rs['fit']['omega']:.2f} against {r0['fit']['omega']:.2f} at N_I = 20): its sticking contacts "
                      "carry tangential forces that the frictionless packing lacks (the two are different "
                      "packings, each prepared with its own friction). " if r0 else "")
                   + f"At {100 * big:g} % some {rb['slide_mean']:.0f} contacts reach the Coulomb limit in the first "
                   f"half-cycle: the packing softens (ω = {rb['fit']['omega']:.2f} at N_I = 20), the quality factor "
                   f"falls to {min(qs_big):.1f}–{max(qs_big):.1f} at every N_I and τ ∝ N_I^{st_big:.2f}: the loss is "
                   "then dominated by sliding, which is rate-independent and so does not follow the solver's N_I. "
                   "That is why a study with a 20 % step finds τ falling slower than 1/N_I with friction. The "
                   "spurious visco-elasticity itself is linear; the packing's friction makes the response "
                   "amplitude-dependent, and the number of sliding contacts per half-cycle measures by how much.", ""]
        fig3, ax3 = plt.subplots(1, 3, figsize=(13, 4))
        mu = mus[0]
        for ni in sorted({r["N_I"] for r in runs}):
            sel = sorted([r for r in runs if r["mu"] == mu and r["N_I"] == ni], key=lambda r: r["amp"])
            if len(sel) < 2:
                continue
            A = [100 * r["amp"] for r in sel]
            ax3[0].semilogx(A, [r["fit"]["omega"] for r in sel], "o-", label=f"N_I = {ni}")
            ax3[1].loglog(A, [r["fit"]["omega"] * r["fit"]["tau"] / 2 for r in sel], "o-", label=f"N_I = {ni}")
            ax3[2].semilogx(A, [max(r["slide_mean"], 0.0) for r in sel], "o-", label=f"N_I = {ni}")
        for ax, yl in zip(ax3, ("ω", "quality factor Q = ωτ/2", "extra sliding contacts, first half-cycle")):
            ax.set_xlabel("ΔF/F (%)")
            ax.set_ylabel(yl)
        ax3[0].legend(fontsize=7)
        fig3.suptitle(f"Amplitude dependence of the piston's ringing, friction {mu:g}", fontsize=10)
        fig3.tight_layout()
        fig3.savefig(os.path.join(out, f"amplitude_{a.tag}.png"), dpi=120)
        md += [f"![amplitude dependence]({sub}/amplitude_{a.tag}.png)", ""]

    inputs = [os.path.join(here, "prepare.ini"), os.path.join(here, "ring.ini")]
    inputs += sorted(glob.glob(os.path.join(out, f"packing_{a.tag}_mu*.txt")))
    md += stamp(CDLAB, inputs=inputs, runs=files)
    write_text(os.path.join(here, "summary_quick.md" if quick else "summary.md"), "\n".join(md))
    print("\n".join(md))
    bad = sum("| FAIL |" in line for line in main_rows)
    print(f"piston2d: {'required checks passed' if not bad else f'{bad} required check(s) FAILED'} (see summary)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/python3
"""cd_vs_dem analysis: omega, tau and the static compression of each CD run and its DEM twin
(Unger & Kertesz eqs. 67-68), in one table and overlaid plots; summary.md."""
import argparse
import math
import os

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
from cdlab import Run, chain  # (chain: the 1D wave test's fit, tools/cdlab/chain.py)
from cdlab.scan import row_file
from runs import piston_cd  # (this study's runs.py: piston2d's CD runs it twins)
from cdlab.stamp import stamp
from cdlab.textfile import write_text

CDLAB = os.environ.get("CDLAB", os.path.join(root, "build", "cdlab"))

Q = (4 * math.sqrt(math.e) - 5) / 2


def chain_static(path):
    """Total compression of the chain at the end: rigid length minus the actual span from the wall
    (the sum of the overlaps), and the mean overlap per contact."""
    r = Run(path)
    n = int(r.params["particles.count"])
    x_last = r.series("probe_position")[-1, 1, 0]
    total = (n - 0.5) * 1.0 - x_last  # rigid: last centre at (n - 1) d + d/2 from the wall
    return total, total / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    out = os.path.join(here, "out_quick" if a.quick else "out")  # quick: a folder of its own
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    NIs = [20, 80] if a.quick else [10, 20, 40, 80, 160]
    rows = []
    ratios = []
    fig, axs = plt.subplots(len(NIs), 1, figsize=(8, 2.2 * len(NIs)), sharex=True)
    ok_all = True
    for ax, ni in zip(np.atleast_1d(axs), NIs):
        # the runs of runs.py's scans, found by their values
        cd_file = row_file(os.path.join(out, "chain_cd"), {"solver.iterations": ni})
        dem_file = row_file(os.path.join(out, "chain_dem"), {"dem.stiffness_from_cd": ni})
        cd, dm = chain.analyze(cd_file), chain.analyze(dem_file)
        cs, cm = chain_static(cd_file)
        ds, dmn = chain_static(dem_file)
        kappa = Q * 1.0 * ni
        th_static = 0.05 / kappa * 50  # 50 contacts (49 pairs and the wall), each F/kappa
        ratios.append((ni, cs / th_static))
        d_om = dm["omega"] / cd["omega"] - 1
        d_ta = dm["tau"] / cd["tau"] - 1
        ok = abs(d_om) <= 0.05 and abs(d_ta) <= 0.20
        ok_all &= ok
        rows.append(f"| chain | {ni} | {cd['omega']:.5f} | {dm['omega']:.5f} | {100 * d_om:+.2f}% | {cd['tau']:.2f} | "
                    f"{dm['tau']:.2f} | {100 * d_ta:+.2f}% | {cs:.4f} | {ds:.4f} | {th_static:.4f} | {'pass' if ok else 'FAIL'} |")
        for r, style, name in ((cd, ".", "CD"), (dm, "-", "DEM twin")):
            t, x = r["t"], r["x"]
            k = slice(max(0, r["k_open"] - int(60 / (t[1] - t[0]))), r["k1"])
            ax.plot(t[k], x[k] - r["popt"][0], style, ms=2, lw=1, label=f"{name}")
        ax.set_ylabel(f"N_I = {ni}")
        ax.legend(fontsize=7, loc="upper right")
    np.atleast_1d(axs)[-1].set_xlabel("t / Δt_CD")
    fig.suptitle("1D chain: last disk (x − x₀) in CD and in its DEM twin", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "chain_overlay.png"), dpi=110)

    prow = []
    md = [f"# cd_vs_dem: CD runs and their DEM twins{' — QUICK run' if a.quick else ''}", "",
          "Each CD run at fixed N_I (random sweep) beside a DEM run whose contacts have the spring "
          "κ = q m N_I/Δt² and the normal dashpot γ = q m N_I/Δt of Unger & Kertész eqs. (67)–(68) "
          "(`dem.stiffness_from_cd`, `cdlab equiv`), no tangential spring. DEM time step: half the critical one, "
          "a power-of-two fraction of the CD step.", "",
          "## 1D chain (the wave test)", "",
          "Tolerances: DEM within 5% of CD for ω and 20% for τ. Static compression: the chain's total shortening "
          "under F_ext = 0.05 at the end of the run (the sum of the overlaps), and the DEM value expected from "
          "the springs, 50 F/κ.", "",
          "| system | N_I | ω CD | ω DEM | diff. | τ CD | τ DEM | diff. | compression CD | compression DEM | 50 F/κ | result |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|", *rows, "",
          "**Where they agree, and why.** ω and τ, the collective visco-elastic response, agree: on scales larger "
          "than a grain the CD chain obeys the same wave equation (56) as the spring–dashpot chain (eq. 65). "
          f"**Where they do not.** The static compression of the CD chain is {ratios[0][1]:.2f} times 50 F/κ at "
          f"N_I = {ratios[0][0]} and {ratios[-1][1]:.2f} times at N_I = {ratios[-1][0]}, so it does not follow 1/N_I "
          "as the DEM chain's does (which matches 50 F/κ): in CD the overlaps are not elastic deformations but the "
          "accumulated errors of incompletely converged steps; with g_pos (eq. 33) an overlap, once made (by the "
          "impact on the wall), is never pushed back, so the static state remembers the transient. The DEM "
          "springs carry F at exactly F/κ each. The equivalence is dynamic, not static (Unger & Kertész: "
          "“a real congruence can be expected only for the collective behavior but not on the level of contacts”).",
          "", f"![chain overlay]({os.path.basename(out)}/chain_overlay.png)", ""]
    if not a.quick:
        from cdlab import Run as R2
        from cdlab import dampedfit
        pdev = []
        fig, axs = plt.subplots(2, 1, figsize=(8, 4.8), sharex=True)
        for ax, ni in zip(axs, [10, 20]):
            res = {}
            for name, path in (("CD", piston_cd(ni)),
                               ("DEM twin", row_file(os.path.join(out, "piston_dem"),
                                                     {"dem.stiffness_from_cd": ni}))):
                r = R2(path)
                t, s = r.series("t"), r.series("piston_position")[:, 0]
                t_step = float(r.params["piston.top.step_time"])
                k = int(np.searchsorted(t, t_step - 1e-9))  # the row of the step (rows may be sampled)
                h = t[k + 1] - t[k]
                f = dampedfit.fit(t[k + 1:], s[k + 1:])
                n8 = int(8 * f["tau"] / h)
                if 50 < n8 < len(t) - k - 1:
                    f = dampedfit.fit(t[k + 1:k + 1 + n8], s[k + 1:k + 1 + n8], omega0=f["omega"], tau0=f["tau"])
                res[name] = (f, s[k], s[-1])
                step = max(1, int(0.02 / h))
                ax.plot(t[k::step] - t_step, s[k::step] - s[k], "." if name == "CD" else "-", ms=2, lw=1, label=name)
            ax.set_ylabel(f"N_I = {ni}")
            ax.set_xlim(0, 40)
            ax.legend(fontsize=7)
            (fc, sc, ec), (fd, sd, ed) = res["CD"], res["DEM twin"]
            pdev.append((abs(fd["omega"] / fc["omega"] - 1), abs(fd["tau"] / fc["tau"] - 1),
                         (ed - sd) / (ec - sc) if ec != sc else float("nan")))
            prow.append(f"| piston (frictionless) | {ni} | {fc['omega']:.4f} | {fd['omega']:.4f} | "
                        f"{100 * (fd['omega'] / fc['omega'] - 1):+.1f}% | {fc['tau']:.3f} | {fd['tau']:.3f} | "
                        f"{100 * (fd['tau'] / fc['tau'] - 1):+.1f}% | {ec - sc:.5f} | {ed - sd:.5f} |")
        axs[-1].set_xlabel("time after the force step")
        fig.suptitle("Piston after F → 1.2 F, frictionless packing: CD and DEM twin", fontsize=10)
        fig.tight_layout()
        fig.savefig(os.path.join(out, "piston_overlay.png"), dpi=110)
        md += ["## 2D piston packing (frictionless)", "",
               "The packing of piston2d with friction 0 in both (the twin has no tangential spring); the piston "
               "displacement caused by the step ΔF = 10 is the static compression compared here. No tolerance: "
               "reported for the comparison.", "",
               "| system | N_I | ω CD | ω DEM | diff. | τ CD | τ DEM | diff. | step compression CD | DEM |",
               "|---|---|---|---|---|---|---|---|---|---|", *prow, "",
               f"In the random 2D packing the twin reproduces the CD frequency to within {100 * max(d[0] for d in pdev):.1f}%: "
               "the per-contact κ of eq. (67), derived for a chain, carries over to the packing's collective stiffness. "
               f"The damping times differ by up to {100 * max(d[1] for d in pdev):.0f}% and the compression caused by the step "
               f"by factors {min(d[2] for d in pdev):.2f}–{max(d[2] for d in pdev):.2f} (DEM/CD): the CD packing also loses energy in "
               "contacts that open and close (each closing a perfectly inelastic shock, see piston2d), and its static "
               "response is that of accumulated solver errors, not of springs (as in the chain).",
               "", "![piston overlay](out/piston_overlay.png)", ""]
    tag = "quick" if a.quick else "full"
    md += open(os.path.join(out, f"cost_{tag}.md")).read().split("\n")
    import glob
    runs = sorted(glob.glob(os.path.join(out, "chain_*", "rows", "*.h5")) +
                  glob.glob(os.path.join(out, "cost_*", "rows", "*.h5")))
    inputs = [os.path.join(root, "experiments", "chain1d", f) for f in ("chain1d.ini", "chain1d_dem.ini")]
    if not a.quick:
        runs += sorted(glob.glob(os.path.join(out, "piston_dem", "rows", "*.h5")))
        runs += [piston_cd(ni) for ni in (10, 20)]
        inputs += [os.path.join(here, "piston_dem.ini"), os.path.join(root, "experiments", "piston2d", "ring.ini"),
                   os.path.join(root, "experiments", "piston2d", "out", "packing_full_mu0.txt")]
    md += stamp(CDLAB, inputs=inputs, runs=runs)
    write_text(os.path.join(here, "summary_quick.md" if a.quick else "summary.md"), "\n".join(md))
    print("\n".join(md))
    print(f"cd_vs_dem: chain {'pass' if ok_all else 'FAIL'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/python3
"""Convergence study analysis: accuracy (mean and max overlap) against cost (mean sweeps per
step) for the local, global and fixed criteria; sweeps after a force step against chain length
(eq. 48); time per step against particle count (eqs. 49-50 and the fixed-N_I line)."""
import argparse
import glob
import os

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
from cdlab import Run
from cdlab.dampedfit import loglog_slope
from cdlab.scan import read_results
from cdlab.stamp import stamp
from cdlab.textfile import write_text

CDLAB = os.environ.get("CDLAB", os.path.join(root, "build", "cdlab"))


def acc_point(path):
    r = Run(path)
    sw = r.series("sweeps")[1:]
    status = r.summary.get("status", b"")
    status = status.decode() if isinstance(status, bytes) else str(status)
    return dict(sweeps=float(sw.mean()), mean_ov=float(r.series("mean_overlap")[1:].mean()),
                max_ov=float(r.series("max_overlap")[1:].max()),
                unconverged=int(r.summary.get("unconverged_steps", 0)),
                seconds=float(r.summary.get("wall_seconds", np.nan)) / max(1, len(sw)),
                aborted=None if status == "completed" else f"stopped at step {len(sw)}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    tag = "quick" if a.quick else "full"
    sub = "out_quick" if a.quick else "out"  # a quick run has its own folders
    out = os.path.join(here, sub)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    md = [f"# convergence: accuracy and cost of the convergence criteria{' — QUICK run' if a.quick else ''}", ""]
    fig, axs = plt.subplots(1, 2, figsize=(11, 4.3))
    for ax, scen, title in ((axs[0], "piston", "piston packing: force step F → 1.2 F"),
                            (axs[1], "settle", "2D pile settling under gravity")):
        md += [f"## Accuracy against cost: {title}", "",
               "| criterion | parameter | mean sweeps per step | mean overlap | max overlap | unconverged steps | s per step | run |",
               "|---|---|---|---|---|---|---|---|"]
        by_crit = {}
        for crit, mk in (("local", "o-"), ("global", "s-"), ("fixed", "^-")):
            pts = []
            for r in read_results(os.path.join(out, f"acc_{scen}")):  # runs.py's scans
                if r["solver.criterion"] == crit:
                    par = r["solver.iterations"] if crit == "fixed" else r["solver.epsilon"]
                    pts.append((float(par), acc_point(r["file"])))
            pts.sort(key=lambda x: -x[0] if crit != "fixed" else x[0])
            by_crit[crit] = pts
            for par, q in pts:
                md.append(f"| {crit} | {'ε = %g' % par if crit != 'fixed' else 'N_I = %d' % par} | {q['sweeps']:.1f} | "
                          f"{q['mean_ov']:.3e} | {q['max_ov']:.3e} | {q['unconverged']} | {q['seconds']:.3g} | "
                          f"{q['aborted'] or 'completed'} |")
            if pts:
                ax.loglog([q["sweeps"] for _, q in pts], [max(q["mean_ov"], 1e-16) for _, q in pts], mk, label=f"{crit}: mean overlap")
                ax.loglog([q["sweeps"] for _, q in pts], [max(q["max_ov"], 1e-16) for _, q in pts], mk, mfc="none", alpha=0.5,
                          label=f"{crit}: max overlap")
        md.append("")
        loc = by_crit.get("local", [])
        tight = [q["mean_ov"] for e, q in loc if e <= 1e-3]
        if len(tight) >= 2 and max(tight) / min(tight) < 1.01:
            md += [f"Here the mean overlap stops falling at {min(tight):.3e} for local ε ≤ 1e-3: these overlaps are "
                   "those of the prepared packing, which g_pos (eq. 33) never removes; the force step adds less than "
                   "that, so this scenario measures the cost more than the accuracy.", ""]
        glo = [(e, q["sweeps"]) for e, q in by_crit.get("global", [])]
        nonmono = [(e1, s1, e2, s2) for (e1, s1), (e2, s2) in zip(glo, glo[1:]) if s2 < s1]
        if nonmono:
            e1, s1, e2, s2 = nonmono[0]
            md += [f"The global criterion's cost is not monotonic in ε (ε = {e1:g}: {s1:.0f} sweeps per step, "
                   f"ε = {e2:g}: {s2:.0f}): a change of the mean |R| can be small while individual forces still "
                   "move, so eq. (36) can stop a relaxation early by chance.", ""]
        ax.set_xlabel("mean sweeps per step (cost)")
        ax.set_ylabel("overlap (accuracy), units of length")
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, f"accuracy_cost_{tag}.png"), dpi=120)
    md += ["A run marked “stopped” ended itself when an overlap exceeded half the smaller radius "
           "(`solver.abort_overlap`): the criterion was too loose to keep the packing together; its statistics "
           "cover the steps up to then.", "",
           "Disk radii 0.5–1. The overlap is the accuracy measure of Unger & Kertész sec. 2.5.1 (zero for an exact "
           "solution). ε: tolerance of eqs. (35) (local, with δ = 1e-9) and (36) (global); N_I: sweeps of eq. (37).", "",
           f"![accuracy against cost]({sub}/accuracy_cost_{tag}.png)", ""]

    # (b) sweeps for the load to reach the base (eq. 48), and what the local criterion does;
    # (c) time per step against n: converged (the sweeps of (b)) and fixed N_I = 50
    import json
    reach = json.load(open(os.path.join(out, f"reach_{tag}.json")))
    rows_b, rows_c, rows_f = [], [], []
    fig, axs = plt.subplots(1, 2, figsize=(11, 4.3))
    verdicts = []
    for dim, mk in ((1, "o"), (2, "s"), (3, "^")):
        pts = []
        for row in read_results(os.path.join(out, "scal")):
            if row["system.dimension"] != dim:
                continue
            n = int(row["particles.count"])
            ns = round(n ** (1.0 / dim))
            r = Run(row["file"])
            ni = reach[f"{dim}d_{ns}"]
            rr = Run(os.path.join(out, f"reach_{tag}_{dim}d_{ns}_{ni}.h5"))
            t_conv = float(rr.summary["step_seconds"])
            pts.append((ns, n, ni, int(r.series("sweeps")[1]), t_conv))
        pts.sort()
        # (d) fixed N_I = 50 on the larger lattices: s per timed step, contact updates per step
        fx = []
        for row in read_results(os.path.join(out, "fixed")):
            if row["system.dimension"] != dim:
                continue
            rf = Run(row["file"])
            s = rf.summary
            steps = int(s["timed_steps"])
            updates = float(s["contact_updates"]) / int(s["steps_done"])  # per step: contacts x 50
            fx.append((int(rf.params["particles.count"]), float(s["timed_step_seconds"]) / steps, updates))
        fx.sort()
        if len(pts) < 2 or len(fx) < 2:
            continue
        L = np.array([x[0] for x in pts], float)
        n = np.array([x[1] for x in pts], float)
        nr = np.array([x[2] for x in pts], float)
        nl = np.array([x[3] for x in pts], float)
        tc = np.array([x[4] for x in pts], float)
        nf = np.array([x[0] for x in fx], float)
        tf = np.array([x[1] for x in fx], float)
        s_r, e_r = loglog_slope(L, nr)
        s_l, e_l = loglog_slope(L, nl)
        s_tc, e_tc = loglog_slope(n, tc)
        s_tf, e_tf = loglog_slope(nf, tf)
        exp_t = {1: 3.0, 2: 2.0, 3: 5.0 / 3.0}[dim]  # n (L/d)^2 with L ~ n^(1/dim)
        for x in pts:
            rows_b.append(f"| {dim}D | {x[0]} | {x[1]} | {x[2]} | {x[3]} | {x[4]:.3g} |")
        for x in fx:
            rows_f.append(f"| {dim}D | {x[0]} | {x[1]:.3g} | {x[1] / x[2] * 1e9:.1f} |")
        ok_r = abs(s_r - 2) <= 0.25 and not (e_r > 0.25)
        timed = n.max() >= 150  # below, a step takes microseconds: fixed costs dominate
        judged = len(pts) > 2  # a two-point slope has no uncertainty: no verdict (quick mode)
        judged_f = len(fx) > 2
        ok_tc = abs(s_tc - exp_t) <= 0.3
        ok_tf = abs(s_tf - 1) <= 0.2
        verdicts += ([ok_r] if judged else []) + ([ok_tc] if timed and judged else []) + ([ok_tf] if judged_f else [])
        na = "n/a (two sizes)" if not judged else "n/a (too small to time)"
        v_r = ("pass" if ok_r else "FAIL") if judged else na
        v_tc = ("pass" if ok_tc else "FAIL") if timed and judged else na
        v_tf = ("pass" if ok_tf else "FAIL") if judged_f else "n/a (two sizes)"
        rows_c += [f"| {dim}D | sweeps to reach the base ∝ L^{s_r:.2f} ± {e_r:.2f} | 2 (eq. 48), ± 0.25 | {v_r} |",
                   f"| {dim}D | local ε = 1e-4 stops after ∝ L^{s_l:.2f} ± {e_l:.2f} sweeps | (reported) | – |",
                   f"| {dim}D | time per converged step ∝ n^{s_tc:.2f} ± {e_tc:.2f} | {exp_t:.2f} (eqs. 49–50), ± 0.3 | {v_tc} |",
                   f"| {dim}D | time per step at fixed N_I = 50 ∝ n^{s_tf:.2f} ± {e_tf:.2f} | 1, ± 0.2 | {v_tf} |"]
        axs[0].loglog(L, nr, mk + "-", label=f"{dim}D: to reach the base (slope {s_r:.2f})")
        axs[0].loglog(L, nl, mk + ":", mfc="none", label=f"{dim}D: local ε = 1e-4 stops (slope {s_l:.2f})")
        axs[1].loglog(n, tc, mk + "-", label=f"{dim}D converged (slope {s_tc:.2f})")
        axs[1].loglog(nf, tf, mk + ":", mfc="none", label=f"{dim}D fixed N_I = 50 (slope {s_tf:.2f})")
    axs[0].set_xlabel("L/d (particles along the loading direction)")
    axs[0].set_ylabel("sweeps in the step")
    axs[0].set_title("sweeps after a force step (eq. 48: ~ (L/d)²)", fontsize=10)
    axs[0].legend(fontsize=7)
    axs[1].set_xlabel("particles n")
    axs[1].set_ylabel("wall seconds per step")
    axs[1].set_title("time per step (eqs. 49–50; fixed N_I: ~ n)", fontsize=10)
    axs[1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, f"scaling_{tag}.png"), dpi=120)
    md += ["## Sweeps after a force step and time per step against system size", "",
           "Regular lattices of touching unit particles (a chain with a wall; a square lattice of disks; a simple "
           "cubic lattice of spheres), frictionless, walls around, a piston pushing from the first step with a force "
           "of 1 per column. In one step from rest the converged answer is that the base carries the whole piston "
           "force. Measured: the fewest sweeps (fixed N_I, bisection to 2%) after which the base carries 99% of it "
           "— the quantity of eq. (48) — and the sweeps after which the local criterion (ε = 1e-4, δ = 1e-12) stops.", "",
           "| lattice | L/d | n | sweeps to reach the base | local ε = 1e-4 stops after | s per converged step (engine only) |",
           "|---|---|---|---|---|---|", *rows_b, "",
           "At a fixed N_I = 50 a step visits every contact 50 times: its time should grow as n. Timed on larger "
           "lattices (steps 21–120 of 120, engine only): on the small ones a step's fixed costs, about 12 µs here, "
           "were half of a 10-particle step, and the slope from n = 10 to 160 measured those (0.78 to 0.88 from "
           "one day to another, the 1D verdict failing in results epoch 7's first summary).", "",
           "| lattice | n | s per step, N_I = 50 | ns per contact update |", "|---|---|---|---|", *rows_f, "",
           "| lattice | measured | expected, tolerance | result |", "|---|---|---|---|", *rows_c, "",
           "The load needs ~(L/d)² sweeps to reach the base (in the frictionless square and cubic lattices each "
           "column is a chain), so a converged step costs n (L/d)²: n³ for a chain, n² in 2D, n^(5/3) in 3D. "
           "The local criterion with a fixed ε stops earlier in larger systems: it bounds the change per sweep, which "
           "in a diffusive relaxation is the remaining error divided by the relaxation time ~ (L/d)², so the error "
           "it leaves grows with the system. A fixed ε is not a fixed accuracy.",
           "", f"![scaling]({sub}/scaling_{tag}.png)", ""]
    runs = sorted(glob.glob(os.path.join(out, "*", "rows", "*.h5")) +
                  glob.glob(os.path.join(out, f"reach_{tag}_*.h5")))
    inputs = [os.path.join(here, "settle.ini"), os.path.join(here, "lattice.ini"),
              os.path.join(root, "experiments", "piston2d", "ring.ini"),
              os.path.join(root, "experiments", "piston2d", sub, f"packing_{tag}_mu0.05.txt")]
    md += stamp(CDLAB, inputs=inputs, runs=runs)
    write_text(os.path.join(here, "summary_quick.md" if a.quick else "summary.md"), "\n".join(md))
    print("\n".join(md))
    print(f"convergence: {'pass' if all(verdicts) else 'FAIL'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

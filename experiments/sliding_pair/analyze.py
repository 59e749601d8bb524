#!/usr/bin/python3
"""Sliding pair: normal and shear force over time (out/sliding_pair.csv) -> PNG and summary.md."""
import argparse
import os

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
from cdlab.stamp import stamp
from cdlab.textfile import write_text

CDLAB = os.environ.get("CDLAB", os.path.join(root, "build", "cdlab"))
MU, KN, KT, V, DT = 0.3, 1e9, 1e9, 1e-3, 5e-3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true",
                    help="write summary_quick.md (the computation is the full one: it takes about a second)")
    a = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    d = np.genfromtxt(os.path.join(here, "out", "sliding_pair.csv"), delimiter=",", names=True)
    t, fn, fs, delta, sl = d["t_s"], d["normal_force_N"], d["shear_force_N"], d["overlap_m"], d["sliding"]
    limit = MU * KN * np.maximum(delta, 0)
    over = np.max(np.abs(fs) - limit)
    slide_dev = np.max(np.abs(np.abs(fs[sl == 1]) - limit[sl == 1]) / limit[sl == 1])
    apart = delta < 0
    k_rev = int(np.argmax(t > 1.0 + 1e-9))
    k_sign = k_rev + int(np.argmax(fs[k_rev:] * fs[k_rev - 1] < 0))
    expect_steps = MU * KN * delta[k_rev] / (KT * V * DT)
    fig, ax = plt.subplots(figsize=(7.5, 4))
    ax.plot(t, fn / 1e3, "-", color="tab:red", label="normal force F_n")
    ax.plot(t, fs / 1e3, "-", color="tab:blue", label="shear force F_s (signed, along x)")
    ax.plot(t, MU * fn / 1e3, ":", color="tab:blue", lw=1, label="± μ F_n")
    ax.plot(t, -MU * fn / 1e3, ":", color="tab:blue", lw=1)
    for tr in (0.5, 1.0):
        ax.axvline(tr, color="0.6", lw=0.8, ls="--")
    ax.set_xlabel("t (s)")
    ax.set_ylabel("force on the upper sphere (kN)")
    ax.set_title("Sliding pair: d = 1 mm, overlap 0.1 d, μ = 0.3, k_n = k_t = 10⁹ N/m", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(here, "out", "sliding_pair.png"), dpi=120)
    checks = [
        ("shear never above μ k_n δ", f"max(|F_s| − μ k_n δ) = {over:.2e} N", "≤ 1e-3 N", over <= 1e-3),
        ("shear at the limit while sliding", f"max relative deviation {slide_dev:.1e}", "≤ 1e-9", slide_dev <= 1e-9),
        ("zero force while apart", f"{int(apart.sum())} steps apart, max |F| {np.max(np.abs(fs[apart]) + np.abs(fn[apart])) if apart.any() else 0:.1e} N", "= 0", apart.any() and np.all(fs[apart] == 0)),
        ("sign change after the reversal at t = 1 s", f"{k_sign - k_rev} steps", f"≤ {expect_steps:.1f} + 2 (elastic unloading μF_n/k_t at v Δt a step)", k_sign - k_rev <= expect_steps + 2),
        ("peak shear force", f"{np.max(np.abs(fs)) / 1e3:.2f} kN", "≈ 30 kN (μ k_n · 0.1 d, the reference's value)", abs(np.max(np.abs(fs)) - 3e4) < 1e3),
    ]
    md = ["# sliding_pair: normal and shear force of two spheres sliding past each other", "",
          "The case of docs/physics.md (the tangential-force verification text): the lower sphere fixed, the upper "
          "driven kinematically (DEM law of Kuhn et al., dt = 5 ms). The shear force rises to μ k_n δ, follows "
          "the falling normal force while sliding, is zero while the spheres are apart (t ≈ 0.44–0.56 s), and "
          "reverses within a few steps when the motion reverses at t = 1 s.", "",
          "| check | measured | expected / tolerance | result |", "|---|---|---|---|"]
    md += [f"| {a} | {b} | {c} | {'pass' if ok else 'FAIL'} |" for a, b, c, ok in checks]
    md += ["", "![sliding pair](out/sliding_pair.png)", ""]
    if a.quick:
        md[0] += " — QUICK run (the same computation as the full one, which takes about a second)"
    # the data of cdlab-lab (built with cdlab from the same commit; its cases are in cd/dem/dem_lab.c)
    md += stamp(CDLAB, inputs=[os.path.join(here, "out", f) for f in ["sliding_pair.csv"]])
    write_text(os.path.join(here, "summary_quick.md" if a.quick else "summary.md"), "\n".join(md))
    print("\n".join(md))
    print(f"sliding_pair: {'pass' if all(c[3] for c in checks) else 'FAIL'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/python3
"""cdlab's DEM beside LAMMPS on the chute (run.sh): kinetic and rotational energies and contacts
every 100 steps, LAMMPS's thermo against cdlab's series -> PNG and summary.md."""
import argparse
import os
import re
import subprocess

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
from cdlab import Run
from cdlab.scan import row_file
from cdlab.stamp import stamp
from runs import CHUTE_ROWS  # (this study's runs.py: its scans)
from cdlab.textfile import write_text

CDLAB = os.environ.get("CDLAB", os.path.join(root, "build", "cdlab"))
DT = 1e-4
ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$")


def lammps_rows(path):
    """{step: (kinetic, rotational, contacts)} from a log's thermo lines (Step Atoms KinEng
    c_1 c_cns: c_cns is the mean contacts per atom, times N/2 the contacts)."""
    rows = {}
    for line in open(path):
        m = ROW.match(line)
        if m:
            n = int(m.group(2))
            rows[int(m.group(1))] = (float(m.group(3)), float(m.group(4)), float(m.group(5)) * n / 2)
    return rows


def lammps_version(path):
    first = open(path).readline().strip()
    try:
        pkg = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "lammps"], capture_output=True,
                             text=True).stdout.strip()
    except OSError:
        pkg = ""
    return first + (f" (Debian package {pkg})" if pkg else "")


def chute(out, name):
    """The file of runs.py's chute run `name` (its scan's row)."""
    return row_file(os.path.join(out, "chute"), CHUTE_ROWS[name])


def cdlab_rows(path):
    r = Run(path)
    t, a = r.series("t"), r.series("active_contacts")
    kt, kr = r.series("energy/kinetic_translational"), r.series("energy/kinetic_rotational")
    return {int(round(ti / DT)): (kt[i], kr[i], float(a[i])) for i, ti in enumerate(t)}


def compare(ref, got):
    """steps, relative differences of the two energies, differences of the contacts"""
    steps = sorted(set(ref) & set(got))
    rel = np.array([[got[s][q] / ref[s][q] - 1.0 for q in (0, 1)] for s in steps])
    dc = np.array([got[s][2] - ref[s][2] for s in steps])
    return np.array(steps), rel, dc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(here, "out"))
    ap.add_argument("--quick", action="store_true", help="the one-cell run: write summary_quick.md")
    a = ap.parse_args()
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    lmp = [lammps_rows(os.path.join(a.out, f"lammps_damp{d}.log")) for d in (0, 1)]
    runs = {"lammps_damp0": (0, "cdlab lammps law, γ_t = 0"),
            "lammps_damp1": (1, "cdlab lammps law, γ_t = 25"),
            "kuhn": (0, "cdlab kuhn law (default)"),
            "conventional": (0, "cdlab conventional law")}
    res = {}
    for name, (d, label) in runs.items():
        res[name] = compare(lmp[d], cdlab_rows(chute(a.out, name)))
    last = max(lmp[0])
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    st = sorted(lmp[0])
    ax[0].plot(st, [lmp[0][s][0] for s in st], "-", color="k", lw=1, label="LAMMPS, γ_t = 0")
    ax[0].plot(st, [lmp[1][s][0] for s in st], "--", color="k", lw=1, label="LAMMPS, γ_t = 25")
    marks = {"lammps_damp0": "o", "lammps_damp1": "s", "kuhn": "^", "conventional": "v"}
    for name, (d, label) in runs.items():
        got = cdlab_rows(chute(a.out, name))
        ss = sorted(got)
        ax[0].plot(ss, [got[s][0] for s in ss], marks[name], ms=4, mfc="none", label=label)
        steps, rel, _ = res[name]
        ax[1].semilogy(steps[1:], np.maximum(np.abs(rel[1:, 0]), 1e-17), "-" + marks[name], ms=4,
                       mfc="none", label=label)
    ax[0].set_xlabel("step")
    ax[0].set_ylabel("translational kinetic energy")
    ax[0].legend(fontsize=7)
    ax[1].set_xlabel("step")
    ax[1].set_ylabel("|cdlab / LAMMPS − 1|, translational kinetic energy")
    ax[1].legend(fontsize=7)
    fig.suptitle("Chute flow from the same state: cdlab beside LAMMPS (gran/hooke/history)", fontsize=10)
    fig.tight_layout()
    png = "lammps_quick.png" if a.quick else "lammps.png"
    fig.savefig(os.path.join(a.out, png), dpi=120)

    def worst(name, upto):
        steps, rel, dc = res[name]
        k = steps <= upto
        return np.max(np.abs(rel[k, 0])), np.max(np.abs(rel[k, 1])), np.max(np.abs(dc[k]))

    checks = []
    for name in ("lammps_damp0", "lammps_damp1"):
        et, er, dc = worst(name, 1000)
        checks.append((f"{runs[name][1]} against LAMMPS (dampflag {runs[name][0]}), steps 0–1000",
                       f"energies {et:.1e}, {er:.1e}; contacts {dc:+.0f}",
                       "energies ≤ 1e-9 relative, the same contacts (round-off)",
                       et <= 1e-9 and er <= 1e-9 and dc == 0))
        if last > 1000:
            et, er, dc = worst(name, last)
            ref_c = lmp[runs[name][0]][last][2]
            checks.append((f"{runs[name][1]} against LAMMPS, steps 0–{last}",
                           f"energies {et:.1e}, {er:.1e}; contacts ±{dc:.0f} of {ref_c:.0f}",
                           "energies ≤ 1e-4 relative, contacts within 0.1% (round-off grown by the "
                           "flow's chaos; cdlab's own laws differ by 10⁻³–10⁻²)",
                           et <= 1e-4 and er <= 1e-4 and dc <= 1e-3 * ref_c))
    boxes = {"walls": ("360 spheres in a box of five frictional walls", "fix wall/gran", 1.0),
             # LAMMPS's compute erotate/sphere takes 0.4 m r^2 in 2D too: the discs' is 5/4 of it
             "discs": ("120 discs (2D) in a box of three frictional walls", "fix nve/sphere disc, fix wall/gran",
                       1.25)}
    for case, (what, how, rot) in boxes.items():
        ref = {s: (e[0], rot * e[1], e[2]) for s, e in lammps_rows(os.path.join(a.out, f"lammps_{case}.log")).items()}
        wsteps, wrel, _ = compare(ref, cdlab_rows(row_file(os.path.join(a.out, case), {})))
        we, wr = np.max(np.abs(wrel[:, 0])), np.max(np.abs(wrel[:, 1]))
        checks.append((f"{case}: {what}, lammps law against LAMMPS ({how}, dampflag 1), steps 0–{wsteps[-1]}",
                       f"energies {we:.1e}, {wr:.1e}", "≤ 1e-9 relative (round-off)", we <= 1e-9 and wr <= 1e-9))
    for name in ("kuhn", "conventional"):
        steps, rel, dc = res[name]
        k = int(np.argmax(np.abs(rel[:, 0])))
        kr, kc = int(np.argmax(np.abs(rel[:, 1]))), int(np.argmax(np.abs(dc)))
        checks.append((f"{runs[name][1]} against LAMMPS, steps 0–{last}: the same flow",
                       f"translational energy at most {rel[k, 0]:+.1e} (step {steps[k]}); "
                       f"reported: rotational at most {rel[kr, 1]:+.1e} (step {steps[kr]}), contacts "
                       f"{dc[kc]:+.0f} ({dc[kc] / lmp[0][steps[kc]][2]:+.1%}, step {steps[kc]})",
                       "translational energy within 1% at every row (the models differ: no tolerance "
                       "on the others)",
                       np.max(np.abs(rel[:, 0])) <= 1e-2))
    rows = ["| step | LAMMPS kinetic | lammps law | kuhn | conventional | LAMMPS rotational | lammps law | kuhn "
            "| conventional | LAMMPS contacts | lammps law | kuhn | conventional |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for i, s in enumerate(res["lammps_damp0"][0]):
        if s % (500 if not a.quick else 200) and s != last:
            continue
        cells = [str(s), f"{lmp[0][s][0]:.10g}"]
        cells += [f"{res[k][1][i, 0]:+.1e}" for k in ("lammps_damp0", "kuhn", "conventional")]
        cells += [f"{lmp[0][s][1]:.10g}"]
        cells += [f"{res[k][1][i, 1]:+.1e}" for k in ("lammps_damp0", "kuhn", "conventional")]
        cells += [f"{lmp[0][s][2]:.0f}"]
        cells += [f"{res[k][2][i]:+.0f}" for k in ("lammps_damp0", "kuhn", "conventional")]
        rows.append("| " + " | ".join(cells) + " |")
    ver = lammps_version(os.path.join(a.out, "lammps_damp0.log"))
    size = "one cell of the chute, 4,100 spheres (100 frozen), 1,000 steps" if a.quick else \
        "the chute of `make bench`, 65,600 spheres (1,600 frozen), 2,100 steps"
    md = ["# lammps: cdlab's DEM beside LAMMPS on the chute" + (" — QUICK run" if a.quick else ""), "",
          f"{size}, from the same flowing state (`bench/chute.ini`, `bench/lammps/in.chute3d`), run by {ver} "
          "with `pair_style gran/hooke/history` and by cdlab; the translational and rotational kinetic energies "
          "and the contacts every 100 steps; and 360 spheres thrown about in a box of five frictional walls "
          "(`walls.ini`, LAMMPS's `fix wall/gran`) and 120 discs in 2D (`discs.ini`), 4,000 steps each. "
          "`dem.tangential = lammps` is LAMMPS's law in cdlab (docs/physics.md): "
          "lever arms of the radii, the tangential history turned into the new tangent plane, the friction limit "
          "on the normal force with its dashpot, capping the tangential spring and dashpot together, and a run's "
          "first forces with the initial velocities in the dashpots. With it the two codes agree to round-off "
          "(until round-off differences, grown by the flow's chaos, reach 10⁻⁷–10⁻⁵ by step 2,100): every part of the step (gravity, the frozen base, the periodic "
          "images, the neighbour list, velocity Verlet, the dashpots, the friction cap) is the same computation. "
          "cdlab's own laws (Kuhn et al.'s, and the conventional one) differ from it by their model (the contact "
          "point in the middle of the overlap, the friction limit on the elastic force, the first forces without "
          "dashpots; Kuhn's law also by its onset of slip, the rotation of the sliding direction and the twirl): "
          "the same flow, the translational energy 10⁻⁴–10⁻³ apart, the rotational one and the contacts "
          "a few percent as the flow dilates (a transient: the state is one cell tiled 4 × 4).", "",
          "| check | measured | expected / tolerance | result |", "|---|---|---|---|"]
    md += [f"| {c} | {m} | {e} | {'pass' if ok else 'FAIL'} |" for c, m, e, ok in checks]
    md += ["", "Relative differences from LAMMPS (γ_t = 0):", ""] + rows
    md += ["", f"![cdlab beside LAMMPS]({os.path.relpath(os.path.join(a.out, png), here)})", ""]
    inputs = [os.path.join(root, "bench", "chute.ini"), os.path.join(root, "bench", "data", "chute_cell.txt"),
              os.path.join(root, "bench", "lammps", "in.chute3d"), os.path.join(root, "bench", "lammps", "data.chute3d")]
    inputs += [os.path.join(here, f) for f in ("walls.ini", "walls.txt", "in.walls", "discs.ini", "discs.txt",
                                                "in.discs")]
    md += stamp(CDLAB, inputs=inputs,
                runs=[chute(a.out, k) for k in runs] + [row_file(os.path.join(a.out, k), {}) for k in boxes])
    write_text(os.path.join(here, "summary_quick.md" if a.quick else "summary.md"), "\n".join(md))
    print("\n".join(md))
    print(f"lammps: {'pass' if all(c[3] for c in checks) else 'FAIL'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

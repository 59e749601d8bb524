#!/usr/bin/python3
"""cdlab benchmarks (make bench): CD sweep throughput on dense packings, fixed N_I = 50, random
sweep; contact updates per second (contacts x sweeps / solver time) and whole-step time per
particle; medians of 3 runs at 1 and 2 threads. Writes bench/results/<date>-<commit>.md.

Packings: regular lattices of touching unit particles (2D square, 3D simple cubic; every
particle in contact with its neighbours, walls around, gravity), with the particles stored in a
random order, so that the sweep's memory access is as scattered as in an unsorted real packing.
This is the first baseline of issue 5; the DEM chute and LAMMPS comparison come next."""
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile

import numpy as np

root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(root, "tools"))
from cdlab_h5 import Run  # noqa: E402

CDLAB = os.environ.get("CDLAB", os.path.join(root, "build-release", "cdlab"))


def lattice(dim, ns, path, seed=1):
    g = np.arange(ns) + 0.5
    if dim == 2:
        X, Y = np.meshgrid(g, g, indexing="ij")
        pts = np.column_stack([X.ravel(), Y.ravel(), np.zeros(X.size)])
    else:
        X, Y, Z = np.meshgrid(g, g, g, indexing="ij")
        pts = np.column_stack([X.ravel(), Y.ravel(), Z.ravel()])
    pts = pts[np.random.default_rng(seed).permutation(len(pts))]
    np.savetxt(path, np.column_stack([pts, np.full(len(pts), 0.5)]), fmt="%.17g")
    return len(pts)


def config(dim, ns, n, path):
    walls = ["[plane.base]", "point = 0 0 0", "normal = 0 1 0",
             "[plane.left]", "point = 0 0 0", "normal = 1 0 0",
             "[plane.right]", f"point = {ns} 0 0", "normal = -1 0 0"]
    if dim == 3:
        walls += ["[plane.front]", "point = 0 0 0", "normal = 0 0 1",
                  "[plane.back]", f"point = 0 0 {ns}", "normal = 0 0 -1"]
    return "\n".join(["[system]", f"dimension = {dim}", "dt = 0.01", "steps = 3", "gravity = 0 -1 0",
                      "[solver]", "sweep = random", "criterion = fixed", "iterations = 50",
                      "[particles]", "source = file", f"file = {path}", f"count = {n}", "mass = 1",
                      "[contact]", "friction = 0.3", "detect_gap = 0.1", *walls,
                      "[output]", "every = 0"]) + "\n"


def main():
    cases = [(2, 100), (2, 316), (3, 22), (3, 46)]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for dim, ns in cases:
            lat = os.path.join(tmp, f"lat{dim}_{ns}.txt")
            n = lattice(dim, ns, lat)
            ini = os.path.join(tmp, f"b{dim}_{ns}.ini")
            open(ini, "w").write(config(dim, ns, n, lat))
            for threads in (1, 2):
                ups, per = [], []
                for rep in range(3):
                    out = os.path.join(tmp, f"o{dim}_{ns}_{threads}_{rep}.h5")
                    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
                    subprocess.run([CDLAB, "run", ini, "-o", out, "--quiet"], check=True, env=env)
                    r = Run(out)
                    s = r.summary
                    ups.append(float(s["contact_updates"]) / float(s["solve_seconds"]))
                    per.append(float(s["step_seconds"]) / (int(s["steps_done"]) * n))
                    contacts = int(r.series("contacts")[-1])
                rows.append((dim, n, contacts, threads, statistics.median(ups), statistics.median(per)))
                print(f"{dim}D n = {n}: {contacts} contacts, {threads} thread(s): "
                      f"{statistics.median(ups):.3e} contact updates/s, {1e9 * statistics.median(per):.1f} ns per particle-step",
                      flush=True)
    commit = subprocess.run(["git", "-C", root, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", root, "diff", "--quiet", "HEAD"]).returncode != 0
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
    cc = subprocess.run(["gcc", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    flags = os.environ.get("BENCH_FLAGS", "?")
    date = datetime.date.today().isoformat()
    md = [f"# cdlab benchmark {date}, commit {commit}{'-dirty' if dirty else ''}", "",
          f"- machine: {cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}",
          f"- compiler: {cc}; flags: `{flags}`",
          "- case: CD, fixed N_I = 50, random sweep, 3 steps, friction 0.3, gravity; lattice packings of touching unit "
          "particles (2D square, 3D simple cubic) stored in random order; medians of 3 runs",
          "- contact updates/s = Σ (contacts × sweeps) / time in the sweeps; ns per particle-step = whole step "
          "(detection, free motion, sweeps, update) / (steps × particles)", "",
          "| case | particles | contacts (candidates) | threads | contact updates/s | ns per particle-step |",
          "|---|---|---|---|---|---|"]
    for dim, n, c, th, u, p in rows:
        md.append(f"| CD {dim}D | {n} | {c} | {th} | {u:.3e} | {1e9 * p:.1f} |")
    md += ["", "Targets of issue 5: ≥ 3·10⁷ updates/s on the 2D 10⁴ packing and ≥ 1.5·10⁷ on the 3D 10⁵ packing, one "
           "thread. The sweep is serial so far: the second thread only runs the per-particle loops.", ""]
    os.makedirs(os.path.join(root, "bench", "results"), exist_ok=True)
    path = os.path.join(root, "bench", "results", f"{date}-{commit}.md")
    open(path, "w").write("\n".join(md))
    print("\n".join(md))
    print(f"written: {path}")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Runs of the convergence study (see run.sh)."""
import argparse
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
CDLAB = os.environ.get("CDLAB", os.path.join(root, "build", "cdlab"))
PISTON = os.path.join(root, "experiments", "piston2d")


def sh(job):
    cmd, out = job
    if not os.path.exists(out):
        subprocess.run(cmd + ["-o", out, "--quiet"], check=True)


def lattice(dim, n_side, path):
    """Touching unit-diameter particles: n_side^dim on a square / simple cubic lattice."""
    g = np.arange(n_side) + 0.5
    if dim == 1:
        pts = np.column_stack([g, np.zeros(n_side), np.zeros(n_side)])
    elif dim == 2:
        X, Y = np.meshgrid(g, g, indexing="ij")
        pts = np.column_stack([X.ravel(), Y.ravel(), np.zeros(X.size)])
    else:
        X, Y, Z = np.meshgrid(g, g, g, indexing="ij")
        pts = np.column_stack([X.ravel(), Z.ravel(), Y.ravel()])  # y is the loading axis
    np.savetxt(path, np.column_stack([pts, np.full(len(pts), 0.5)]), fmt="%.17g")
    return len(pts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    out = os.path.join(here, "out")
    os.makedirs(out, exist_ok=True)
    tag = "quick" if a.quick else "full"
    eps = [1e-2, 1e-4] if a.quick else [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6]
    nis = [10, 100] if a.quick else [5, 10, 20, 50, 100, 200, 500, 1000]
    jobs = []
    # (a) accuracy against cost: the piston force step and the settling pile
    packing = os.path.join(PISTON, "out", f"packing_{tag}_mu0.05.txt")
    height = open(os.path.join(PISTON, "out", f"piston_{tag}_mu0.05.txt")).read().strip()
    count, width = (300, 26) if a.quick else (1000, 47)
    piston = [os.path.join(PISTON, "ring.ini"), "--set", f"particles.file={packing}",
              "--set", f"particles.count={count}", "--set", f"plane.right.point={width} 0 0",
              "--set", f"piston.top.point=0 {height} 0", "--set", "piston.top.step_time=2",
              "--set", f"system.steps={60 if a.quick else 200}"]
    settle = [os.path.join(here, "settle.ini"), "--set", f"system.steps={150 if a.quick else 400}"]
    for scen, base in (("piston", piston), ("settle", settle)):
        for crit in ("local", "global"):
            for e in eps:
                jobs.append(([CDLAB, "run"] + base + ["--set", f"solver.criterion={crit}", "--set", f"solver.epsilon={e}",
                              "--set", "solver.delta=1e-9", "--set", "solver.iterations=100000"],
                             os.path.join(out, f"acc_{tag}_{scen}_{crit}_{e:g}.h5")))
        for ni in nis:
            jobs.append(([CDLAB, "run"] + base + ["--set", "solver.criterion=fixed", "--set", f"solver.iterations={ni}"],
                         os.path.join(out, f"acc_{tag}_{scen}_fixed_{ni}.h5")))
    # (b) sweeps of the local criterion after a force step against chain length, and
    # (c) time per step against particle count: converged (local) and fixed N_I = 50
    sizes = {1: [10, 20, 40] if a.quick else [10, 20, 40, 80, 160],
             2: [5, 10] if a.quick else [5, 10, 20, 30, 40],
             3: [3, 5] if a.quick else [3, 5, 8, 11]}
    for dim, ns in sizes.items():
        for ns_ in ns:
            f = os.path.join(out, f"lattice_{tag}_{dim}d_{ns_}.txt")
            n = lattice(dim, ns_, f)
            base = [os.path.join(here, "lattice.ini"), "--set", f"particles.file={f}", "--set", f"particles.count={n}",
                    "--set", f"system.dimension={dim}", "--set", f"piston.top.point=0 {ns_} 0",
                    "--set", f"piston.top.mass={ns_ ** (dim - 1)}", "--set", f"piston.top.force={ns_ ** (dim - 1)}"]
            if dim == 1:  # the chain: the wall at x = 0, the piston at the free end along x
                base += ["--set", "plane.base.normal=1 0 0", "--set", f"piston.top.point={ns_} 0 0",
                         "--set", "piston.top.normal=-1 0 0"]
            if dim >= 2:  # side walls
                base += ["--set", "plane.left.point=0 0 0", "--set", "plane.left.normal=1 0 0",
                         "--set", f"plane.right.point={ns_} 0 0", "--set", "plane.right.normal=-1 0 0"]
            if dim == 3:
                base += ["--set", "plane.front.point=0 0 0", "--set", "plane.front.normal=0 0 1",
                         "--set", f"plane.back.point=0 0 {ns_}", "--set", "plane.back.normal=0 0 -1"]
            jobs.append(([CDLAB, "run"] + base, os.path.join(out, f"scal_{tag}_{dim}d_{ns_}_local.h5")))
            jobs.append(([CDLAB, "run"] + base + ["--set", "solver.criterion=fixed", "--set", "solver.iterations=50",
                                                    "--set", "system.steps=20"],
                         os.path.join(out, f"scal_{tag}_{dim}d_{ns_}_fixed.h5")))
    with ThreadPoolExecutor(2) as ex:
        list(ex.map(sh, jobs))


if __name__ == "__main__":
    main()

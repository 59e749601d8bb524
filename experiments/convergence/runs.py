#!/usr/bin/python3
"""Runs of the convergence study (see run.sh)."""
import argparse
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
from cdlab.stamp import clear_output, fresh
from cdlab.textfile import write_text
from cdlab import in_step_order

CDLAB = os.environ.get("CDLAB", os.path.join(root, "build", "cdlab"))
PISTON = os.path.join(root, "experiments", "piston2d")


def sh(job):
    """Exit status 1 (the run stopped itself: NaN or exploding overlap) is a result of the study,
    recorded in the file's /summary; 2 (bad input) is an error."""
    cmd, out = job
    if not fresh(out, CDLAB):
        clear_output(out)
        rc = subprocess.run(cmd + ["-o", out, "--quiet"]).returncode
        if rc not in (0, 1):
            raise SystemExit(f"convergence: {' '.join(cmd)} failed with status {rc}")


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


def lattice_run(dim, ns_, f, n):
    """The cdlab arguments of a lattice of ns_ particles a side (n in all) in file f."""
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
    return base


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
    # (c) time per step against particle count: converged (local), and
    # (d) at fixed N_I = 50, on larger lattices: the step's fixed costs (~12 us here) are half of
    #     a 10-particle step, so the small lattices of (b) timed them, not the cost per particle
    #     (their slope from n = 10 to 160 was 0.78 to 0.88 from day to day); 100 timed steps after
    #     20
    sizes = {1: [10, 20, 40] if a.quick else [10, 20, 40, 80, 160],
             2: [5, 10] if a.quick else [5, 10, 20, 30, 40, 60],
             3: [3, 5] if a.quick else [3, 5, 8, 11, 16, 22]}
    sizes_fixed = {1: [160, 320] if a.quick else [160, 320, 640, 1280, 2560],
                   2: [20, 28] if a.quick else [20, 28, 40, 57, 80],
                   3: [8, 11] if a.quick else [8, 11, 16, 22, 30]}
    for dim, ns in sizes.items():
        for ns_ in ns:
            f = os.path.join(out, f"lattice_{tag}_{dim}d_{ns_}.txt")
            n = lattice(dim, ns_, f)
            jobs.append(([CDLAB, "run"] + lattice_run(dim, ns_, f, n),
                         os.path.join(out, f"scal_{tag}_{dim}d_{ns_}_local.h5")))
    for dim, ns in sizes_fixed.items():
        for ns_ in ns:
            f = os.path.join(out, f"lattice_{tag}_{dim}d_{ns_}.txt")
            n = lattice(dim, ns_, f)
            jobs.append(([CDLAB, "run"] + lattice_run(dim, ns_, f, n) +
                         ["--set", "solver.criterion=fixed", "--set", "solver.iterations=50",
                          "--set", "system.steps=120", "--set", "output.timing_warmup=20"],
                         os.path.join(out, f"fixed_{tag}_{dim}d_{ns_}.h5")))
    with ThreadPoolExecutor(2) as ex:
        list(ex.map(sh, jobs))
    # (b') eq. (48) measured directly: the fewest sweeps (fixed N_I, one step from rest) for which
    # the base carries 99% of the piston force (the converged answer for a rigid lattice is all of it)
    reach = {}

    def reach_one(key):
        dim, ns_, base, F = key

        def base_force(ni):
            f = os.path.join(out, f"reach_{tag}_{dim}d_{ns_}_{ni}.h5")
            if not fresh(f, CDLAB):
                clear_output(f)
                subprocess.run([CDLAB, "run"] + base + ["--set", "solver.criterion=fixed", "--set", f"solver.iterations={ni}",
                                                        "-o", f, "--quiet"], check=True)
            import h5py
            with h5py.File(f, "r") as h:
                g = h["snapshots"][in_step_order(h["snapshots"])[-1]]
                pair, force, normal = g["contacts/pair"][:], g["contacts/force"][:], g["contacts/normal"][:]
            on_base = pair[:, 0] == -1  # wall 0 is the base
            return float(np.sum(np.einsum("ij,ij->i", force[on_base], normal[on_base])))

        lo, hi = 1, 2
        while base_force(hi) < 0.99 * F:
            lo, hi = hi, hi * 2
        while hi - lo > max(1, lo // 50):  # 2% resolution
            mid = (lo + hi) // 2
            if base_force(mid) >= 0.99 * F:
                hi = mid
            else:
                lo = mid
        return key[:2], hi

    keys = []
    for dim, ns in sizes.items():
        for ns_ in ns:
            f = os.path.join(out, f"lattice_{tag}_{dim}d_{ns_}.txt")
            n = sum(1 for _ in open(f))
            keys.append((dim, ns_, lattice_run(dim, ns_, f, n), float(ns_ ** (dim - 1))))
    with ThreadPoolExecutor(2) as ex:
        for (dim, ns_), ni in ex.map(reach_one, keys):
            reach[f"{dim}d_{ns_}"] = ni
    import json
    write_text(os.path.join(out, f"reach_{tag}.json"), json.dumps(reach, indent=1))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Runs of the convergence study (see run.sh): scans (cdlab.scan, docs/howto/scan.md) into
out/acc_piston and out/acc_settle (the criteria and their parameters; a run that stopped itself
is a result), out/scal (the lattices, converged) and out/fixed (N_I = 50, timed), out_quick/
with --quick; and the bisection of (b'), whose runs depend on the previous ones, out/reach_*.h5.
analyze.py reads the scans' results.csv."""
import argparse
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
from cdlab.scan import run_rows
from cdlab.stamp import clear_output, fresh
from cdlab.textfile import write_text
from cdlab import in_step_order

CDLAB = os.environ.get("CDLAB", os.path.join(root, "build", "cdlab"))
PISTON = os.path.join(root, "experiments", "piston2d")


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


def lattice_sets(dim, ns_, f, n):
    """The --set values of lattice.ini for a lattice of ns_ particles a side (n in all) in f."""
    sets = {"particles.file": f, "particles.count": n, "system.dimension": dim,
            "piston.top.point": f"0 {ns_} 0", "piston.top.mass": ns_ ** (dim - 1),
            "piston.top.force": ns_ ** (dim - 1)}
    if dim == 1:  # the chain: the wall at x = 0, the piston at the free end along x
        sets.update({"plane.base.normal": "1 0 0", "piston.top.point": f"{ns_} 0 0",
                     "piston.top.normal": "-1 0 0"})
    if dim >= 2:  # side walls
        sets.update({"plane.left.point": "0 0 0", "plane.left.normal": "1 0 0",
                     "plane.right.point": f"{ns_} 0 0", "plane.right.normal": "-1 0 0"})
    if dim == 3:
        sets.update({"plane.front.point": "0 0 0", "plane.front.normal": "0 0 1",
                     "plane.back.point": f"0 0 {ns_}", "plane.back.normal": "0 0 -1"})
    return sets


def lattice_run(dim, ns_, f, n):
    """The cdlab arguments of that lattice."""
    return [os.path.join(here, "lattice.ini")] + [
        a for k, v in lattice_sets(dim, ns_, f, n).items() for a in ("--set", f"{k}={v}")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    sub = "out_quick" if a.quick else "out"  # a quick run has its own folders
    out = os.path.join(here, sub)
    os.makedirs(out, exist_ok=True)
    tag = "quick" if a.quick else "full"
    eps = [1e-2, 1e-4] if a.quick else [1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6]
    nis = [10, 100] if a.quick else [5, 10, 20, 50, 100, 200, 500, 1000]
    # (a) accuracy against cost: the piston force step and the settling pile
    packing = os.path.join(PISTON, sub, f"packing_{tag}_mu0.05.txt")
    height = open(os.path.join(PISTON, sub, f"piston_{tag}_mu0.05.txt")).read().strip()
    count, width = (300, 26) if a.quick else (1000, 47)
    piston = {"particles.file": packing, "particles.count": count,
              "plane.right.point": f"{width} 0 0", "piston.top.point": f"0 {height} 0",
              "piston.top.step_time": 2, "system.steps": 60 if a.quick else 200}
    settle = {"system.steps": 150 if a.quick else 400}
    rows = [{"solver.criterion": crit, "solver.epsilon": e, "solver.delta": 1e-9,
             "solver.iterations": 100000} for crit in ("local", "global") for e in eps]
    rows += [{"solver.criterion": "fixed", "solver.iterations": ni} for ni in nis]
    for scen, ini, sets in (("piston", os.path.join(PISTON, "ring.ini"), piston),
                            ("settle", os.path.join(here, "settle.ini"), settle)):
        run_rows(ini, rows, os.path.join(out, f"acc_{scen}"), sets=sets, jobs=2, cdlab=CDLAB,
                 accept_failed=True)
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

    def lattice_rows(sizes):
        rows = []
        for dim, ns in sizes.items():
            for ns_ in ns:
                f = os.path.join(out, f"lattice_{tag}_{dim}d_{ns_}.txt")
                rows.append(lattice_sets(dim, ns_, f, lattice(dim, ns_, f)))
        return rows
    ini = os.path.join(here, "lattice.ini")
    run_rows(ini, lattice_rows(sizes), os.path.join(out, "scal"), jobs=2, cdlab=CDLAB)
    run_rows(ini, lattice_rows(sizes_fixed), os.path.join(out, "fixed"), jobs=2, cdlab=CDLAB,
             sets={"solver.criterion": "fixed", "solver.iterations": 50, "system.steps": 120,
                   "output.timing_warmup": 20})
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

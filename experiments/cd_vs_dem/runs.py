#!/usr/bin/python3
"""Runs of cd_vs_dem (see run.sh): CD and DEM twins of the chain and the piston packing, as
three scans (cdlab.scan, docs/howto/scan.md) into out/chain_cd, out/chain_dem and
out/piston_dem (out_quick/ with --quick): rows/NNNN.h5, results.csv; a rerun skips the rows
done by this build. analyze.py finds a row's file by its values (cdlab.scan.row_file)."""
import argparse
import math
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
from cdlab.scan import ScanError, row_file, run_rows
from cdlab.stamp import fresh

CDLAB = os.environ.get("CDLAB", os.path.join(root, "build", "cdlab"))
Q = (4 * math.sqrt(math.e) - 5) / 2
CHAIN = os.path.join(root, "experiments", "chain1d")
PISTON = os.path.join(root, "experiments", "piston2d")


def dem_dt(N_I, cd_dt, m_mean, m_min, safety=0.5):
    """Half the critical time step of the twin (equiv_critical_dt in cd/engine/equiv.c)."""
    k = Q * m_mean * N_I / cd_dt ** 2
    c = Q * m_mean * N_I / cd_dt
    omega = 2 * math.sqrt(k / m_min)
    xi = c * omega / (2 * k)
    return safety * 2 / omega * (math.sqrt(1 + xi * xi) - xi)


def piston_cd(ni):
    """piston2d's frictionless CD run at N_I with the 20 % force step (its scan's row)."""
    return row_file(os.path.join(PISTON, "out", "ring_mu0"),
                    {"solver.iterations": ni, "piston.top.force_after": 60.0})


def nice(dt, unit):
    """The largest unit / 2^k not above dt, so that DEM samples fall on the CD steps."""
    k = max(0, math.ceil(math.log2(unit / dt)))
    return unit / 2 ** k


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    out = os.path.join(here, "out_quick" if a.quick else "out")  # quick: a folder of its own
    os.makedirs(out, exist_ok=True)
    chain_cd, chain_dem, piston_dem = [], [], []
    for ni in ([20, 80] if a.quick else [10, 20, 40, 80, 160]):
        steps = max(1500, int(60 * 254 / ni) + 600)
        chain_cd.append({"solver.iterations": ni, "system.steps": steps})
        dt = nice(dem_dt(ni, 1.0, 1.0, 1.0), 1.0)
        chain_dem.append({"dem.stiffness_from_cd": ni, "system.dt": dt,
                          "system.steps": int(round(steps / dt)),
                          "output.series_every": max(1, int(round(0.125 / dt)))})
    run_rows(os.path.join(CHAIN, "chain1d.ini"), chain_cd, os.path.join(out, "chain_cd"),
             sets={"output.every": 0, "system.seed": 1}, jobs=2, cdlab=CDLAB)
    run_rows(os.path.join(CHAIN, "chain1d_dem.ini"), chain_dem, os.path.join(out, "chain_dem"),
             sets={"output.every": 0}, jobs=2, cdlab=CDLAB)
    if not a.quick:
        packing = os.path.join(PISTON, "out", "packing_full_mu0.txt")
        height = open(os.path.join(PISTON, "out", "piston_full_mu0.txt")).read().strip()
        common = {"particles.file": packing, "piston.top.point": f"0 {height} 0",
                  "contact.friction": 0, "piston.top.step_time": 20}
        m_mean, m_min = 1.8326, math.pi * 0.25  # density 1, radii uniform in [0.5, 1]
        for ni in [10, 20]:
            # the CD runs are piston2d's (F -> 1.2 F after 2000 steps at F): run.sh checks them
            try:
                cd = piston_cd(ni)
            except ScanError as e:
                sys.exit(f"cd_vs_dem: {e}: run experiments/piston2d first")
            if not fresh(cd, CDLAB):
                sys.exit(f"cd_vs_dem: {cd} is missing or older than the binary: run experiments/piston2d first")
            # the twin: settle 20 time units (its transient is damped like the CD one), step,
            # and 40 time units after it. Its step is small (the overdamped contacts): cost
            # ~ N_I^2, which limits the twin to N_I <= 20 here.
            T = 60.0
            dt = nice(dem_dt(ni, 0.02, m_mean, m_min), 0.02)
            piston_dem.append({"dem.stiffness_from_cd": ni, "system.dt": dt,
                               "system.steps": int(round(T / dt)),
                               "output.series_every": max(1, int(round(0.02 / dt)))})
        run_rows(os.path.join(here, "piston_dem.ini"), piston_dem, os.path.join(out, "piston_dem"),
                 sets=common, jobs=2, cdlab=CDLAB)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Runs of piston2d (see run.sh), after prepare.py's packings: per friction, two scans
(cdlab.scan, docs/howto/scan.md) of ring.ini into out/ (out_quick/ with --quick):
  pre_mu<mu>/   2000 steps at the piston force F, one row per N_I, each ending in a checkpoint;
  ring_mu<mu>/  each continued from its N_I's checkpoint (the row's "restart") with the force
                stepped to F (1 + dF/F), one row per N_I and dF/F; dF/F = 0 is the unstepped
                baseline that analyze.py subtracts.
A rerun skips the rows done by this build from the current packing and checkpoints."""
import argparse
import os

here = os.path.dirname(os.path.abspath(__file__))
from cdlab.scan import run_rows

CDLAB = os.environ.get("CDLAB", os.path.join(here, "..", "..", "build", "cdlab"))
F = 50.0


def plan(quick):
    """(N_I values, frictions, particle count, box width, steps after the step, dF/F values)."""
    if quick:  # 300 disks, friction 0.05, dF/F = 0.5 % (a smoke test of the scripts)
        return [20, 80], [0.05], 300, 26, (lambda ni: 3500), (lambda mu: [0, 0.005])
    # after the step: at least 1500 steps, and about ten damping times at small N_I (tau ~ 1/N_I);
    # friction 0.05: the small steps of the main result and the amplitude scan; frictionless:
    # the main result and the old 20 % step
    return ([10, 20, 40, 80, 160, 320], [0.05, 0], 1000, 47,
            lambda ni: 2000 + max(50000 // ni, 1500),
            lambda mu: [0, 0.005, 0.2] if mu == 0 else [0, 0.001, 0.005, 0.02, 0.2])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    tag = "quick" if a.quick else "full"
    out = os.path.join(here, "out_quick" if a.quick else "out")  # quick: its own folder
    nis, frictions, count, width, steps_for, amps_for = plan(a.quick)
    ring = os.path.join(here, "ring.ini")
    for mu in frictions:
        packing = os.path.join(out, f"packing_{tag}_mu{mu:g}.txt")
        height = open(os.path.join(out, f"piston_{tag}_mu{mu:g}.txt")).read().strip()
        common = {"particles.file": packing, "particles.count": count,
                  "plane.right.point": f"{width} 0 0", "piston.top.point": f"0 {height} 0",
                  "contact.friction": mu, "piston.top.force": F}
        print(f"== piston2d: 2000 steps at F (N_I = {nis}; friction {mu:g}) ==", flush=True)
        pre = run_rows(ring, [{"solver.iterations": ni} for ni in nis],
                       os.path.join(out, f"pre_mu{mu:g}"), jobs=2, cdlab=CDLAB,
                       sets={**common, "system.steps": 2000, "piston.top.force_after": F})
        print(f"== piston2d: force steps dF/F {amps_for(mu)} (0: baseline) ==", flush=True)
        rows = [{"solver.iterations": ni, "restart": f, "system.steps": steps_for(ni),
                 "piston.top.force_after": F * (1 + amp)}
                for ni, f in zip(nis, pre) for amp in amps_for(mu)]
        run_rows(ring, rows, os.path.join(out, f"ring_mu{mu:g}"), sets=common, jobs=2,
                 cdlab=CDLAB)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""cdlab's runs of the lammps study (see run.sh), as scans (cdlab.scan, docs/howto/scan.md):
  OUT/chute/   bench/chute.ini with each tangential law: lammps (gamma_t = 0 and 25), kuhn,
               conventional; STEPS steps (--cell: one cell of 4,100 spheres);
  OUT/walls/, OUT/discs/   walls.ini and discs.ini, a row each.
analyze.py finds each by its values (CHUTE_ROWS). Usage: runs.py OUT STEPS [--cell]"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
from cdlab.scan import run_rows

CDLAB = os.environ.get("CDLAB", os.path.join(root, "build", "cdlab"))
CHUTE_ROWS = {"lammps_damp0": {"dem.tangential": "lammps", "dem.damping_tangential": 0},
              "lammps_damp1": {"dem.tangential": "lammps", "dem.damping_tangential": 25},
              "kuhn": {"dem.tangential": "kuhn", "dem.damping_tangential": 0},
              "conventional": {"dem.tangential": "conventional", "dem.damping_tangential": 0}}


def main(argv):
    out, steps, cell = argv[0], int(argv[1]), "--cell" in argv
    sets = {"system.steps": steps}
    if cell:
        sets.update({"particles.tile": "1 1 1", "particles.count": 4100,
                     "system.box_max": "10 10 42"})
    run_rows(os.path.join(root, "bench", "chute.ini"), list(CHUTE_ROWS.values()),
             os.path.join(out, "chute"), sets=sets, cdlab=CDLAB)
    for case in ("walls", "discs"):
        run_rows(os.path.join(here, f"{case}.ini"), [{}], os.path.join(out, case), cdlab=CDLAB)


if __name__ == "__main__":
    main(sys.argv[1:])

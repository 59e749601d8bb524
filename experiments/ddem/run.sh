#!/usr/bin/env bash
# ddem: Rojek et al.'s deformable discs, the uniaxial compression of 20 x 9 bonded discs
# (specimen.ini): Figs. 5 and 6 (displacement fields, DEM and DDEM), Fig. 7 (E_DDEM/E_DEM and
# nu_DDEM against k_n/(t E_p), with the series estimate of docs/physics.md), independence of the
# damping and the time step, the energy ledger against dt, the critical time step. Runs and
# analysis in study.py (about two minutes; QUICK=1: fewer ratios, about 15 s).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export CDLAB="${CDLAB:-$root/build/cdlab}"
PYTHON="${PYTHON:-/usr/bin/python3}"
# the shared analysis package tools/cdlab (fits, stamps, file comparison)
export PYTHONPATH="$root/tools${PYTHONPATH:+:$PYTHONPATH}"
export OMP_NUM_THREADS=1
"$PYTHON" "$here/study.py" $([ "${QUICK:-}" = 1 ] && echo --quick)
echo "summary: $here/summary$([ "${QUICK:-}" = 1 ] && echo _quick).md"

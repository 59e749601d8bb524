#!/usr/bin/env bash
# cd_vs_dem: every CD run beside its DEM twin with the kappa, gamma of Unger & Kertesz
# eqs. (67)-(68). The 1D chain for N_I = 10 ... 160 (chain1d.ini / chain1d_dem.ini), and the
# frictionless piston packing of piston2d for N_I = 10, 20 (the DEM twin's time step falls
# like 1/N_I: the stiff, overdamped contacts need dt ~ 2 m/(dt_CD 4 kappa), so its cost grows
# like N_I^2).
# QUICK=1: the chain at N_I = 20 and 80 only.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export CDLAB="${CDLAB:-$root/build/cdlab}"
PYTHON="${PYTHON:-/usr/bin/python3}"
# the shared analysis package tools/cdlab (fits, stamps, file comparison)
export PYTHONPATH="$root/tools${PYTHONPATH:+:$PYTHONPATH}"
export OMP_NUM_THREADS=1
mkdir -p "$here/out"
"$PYTHON" "$here/runs.py" $([ "${QUICK:-}" = 1 ] && echo --quick)
"$PYTHON" "$here/cost.py" $([ "${QUICK:-}" = 1 ] && echo --quick) > /dev/null
"$PYTHON" "$here/analyze.py" $([ "${QUICK:-}" = 1 ] && echo --quick)
echo "summary: $here/summary$([ "${QUICK:-}" = 1 ] && echo _quick).md"

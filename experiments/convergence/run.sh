#!/usr/bin/env bash
# convergence: accuracy (overlap) against cost (sweeps) of the local, global and fixed criteria
# on the piston packing (needs experiments/piston2d's prepared packing) and on a settling pile;
# sweeps after a force step against system size (eq. 48); time per step against n.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export CDLAB="${CDLAB:-$root/build/cdlab}"
PYTHON="${PYTHON:-/usr/bin/python3}"
# the shared analysis package tools/cdlab (fits, stamps, file comparison)
export PYTHONPATH="$root/tools${PYTHONPATH:+:$PYTHONPATH}"
export OMP_NUM_THREADS=1
tag=$([ "${QUICK:-}" = 1 ] && echo quick || echo full)
[ -s "$root/experiments/piston2d/$([ $tag = quick ] && echo out_quick || echo out)/packing_${tag}_mu0.05.txt" ] || { echo "convergence: run experiments/piston2d first (its packing)"; exit 1; }
"$PYTHON" "$here/runs.py" $([ "${QUICK:-}" = 1 ] && echo --quick)
"$PYTHON" "$here/analyze.py" $([ "${QUICK:-}" = 1 ] && echo --quick)
echo "summary: $here/summary$([ "${QUICK:-}" = 1 ] && echo _quick).md"

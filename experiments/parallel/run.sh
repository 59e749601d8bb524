#!/usr/bin/env bash
# parallel: what splitting the contact dynamics solver over MPI ranks does to its spurious
# elasticity (issue 18): the 1D wave test on a 200-disk chain on 1, 2 and 4 ranks (omega, tau and
# the q they imply), and the sweeps the local criterion needs on a 2D settling pile, domain-wise
# random and colored. Runs and analysis in study.py (about five minutes on 2 cores; QUICK=1: one
# seed, 2 ranks, about a minute). Needs mpirun (make deps).
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

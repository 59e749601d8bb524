#!/usr/bin/env bash
# The CD step's solvers beyond Gauss-Seidel (issue 63): the spurious elasticity of the relaxed
# sweeps (q(omega) of every order from the 1D wave test, against its derivation in
# docs/physics.md; the exponent of c(N_I)), and the cost of a converged step (exported FCLIB
# steps solved again by `cdlab solve` from zero, for several omega and every method), the 1D wave
# test with APGD and Newton's method, the 2D piston test (experiments/piston2d's packing, prepared
# here when missing) with every solver, and the newest bench peers section (Siconos beside cdlab)
# read back and plotted. Everything in study.py; writes out/ and summary.md (summary_quick.md
# with QUICK=1). Sections 3 and 4 are timed: run it with nothing else beside it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
PYTHON="${PYTHON:-/usr/bin/python3}"
# the shared analysis package tools/cdlab (fits, stamps, file comparison)
export PYTHONPATH="$root/tools${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$here/out"
"$PYTHON" "$here/study.py" $([ "${QUICK:-}" = 1 ] && echo --quick)
echo "summary: $here/summary$([ "${QUICK:-}" = 1 ] && echo _quick).md"

#!/usr/bin/env bash
# The CD step's solvers beyond Gauss-Seidel (issue 63): the spurious elasticity of the relaxed
# sweeps (q(omega) of every order from the 1D wave test, against its derivation in
# docs/physics.md; the exponent of c(N_I)), and the cost of a converged step (exported FCLIB
# steps solved again by `cdlab solve` from zero and warm, for several omega). Everything in
# study.py; writes out/ and summary.md (summary_quick.md with QUICK=1).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
PYTHON="${PYTHON:-/usr/bin/python3}"
# the shared analysis package tools/cdlab (fits, stamps, file comparison)
export PYTHONPATH="$root/tools${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$here/out"
"$PYTHON" "$here/study.py" $([ "${QUICK:-}" = 1 ] && echo --quick)
echo "summary: $here/summary$([ "${QUICK:-}" = 1 ] && echo _quick).md"

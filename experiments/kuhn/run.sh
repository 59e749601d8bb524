#!/usr/bin/env bash
# Kuhn, Suzuki & Daouadji: Fig. 4 (final direction of the tangential force after a movement
# orthogonal to it, refined and conventional law, against 1e5 elastic-plastic sub-steps) and the
# Fig. 6 table (stress after a rigid 90 deg rotation, four variants). Data from cdlab-lab
# (the routines of cd/dem/dem_lab.c, which the Check tests assert); analysis in analyze.py.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
LAB="${CDLAB_LAB:-$root/build/cdlab-lab}"
PYTHON="${PYTHON:-/usr/bin/python3}"
# the shared analysis package tools/cdlab (fits, stamps, file comparison)
export PYTHONPATH="$root/tools${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$here/out"
rm -f "$here"/out/fig6_n*.csv   # no stale increment file from an earlier list
"$LAB" fig4 > "$here/out/fig4.csv"            # constant normal force (the paper's case)
"$LAB" fig4 0.7 > "$here/out/fig4_unloading.csv"  # normal force falling by 30% in the step
"$LAB" fig6 > "$here/out/fig6.csv"
# the objectivity error against the rotation per increment (the same 90 deg in fewer steps)
for n in 4000 300 100 50 22 10 5; do "$LAB" fig6 $n > "$here/out/fig6_n$n.csv"; done
"$PYTHON" "$here/analyze.py" $([ "${QUICK:-}" = 1 ] && echo --quick)
echo "summary: $here/summary$([ "${QUICK:-}" = 1 ] && echo _quick).md"

#!/usr/bin/env bash
# The sliding pair of docs/physics.md: two spheres (d = 1 mm), the lower fixed, initial overlap
# 0.1 d, friction 0.3; the upper moves right at 1 mm/s for 0.5 s, left for 0.5 s, right for
# 0.5 s (kinematic drive, DEM law). Data from cdlab-lab; plot and summary in analyze.py.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
LAB="${CDLAB_LAB:-$root/build/cdlab-lab}"
PYTHON="${PYTHON:-/usr/bin/python3}"
# the shared analysis package tools/cdlab (fits, stamps, file comparison)
export PYTHONPATH="$root/tools${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$here/out"
"$LAB" sliding-pair > "$here/out/sliding_pair.csv"
"$PYTHON" "$here/analyze.py" $([ "${QUICK:-}" = 1 ] && echo --quick)
echo "summary: $here/summary$([ "${QUICK:-}" = 1 ] && echo _quick).md"

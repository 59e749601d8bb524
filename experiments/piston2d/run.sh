#!/usr/bin/env bash
# piston2d (Unger & Kertesz sec. 3.3.2, Fig. 8): prepare the 1000-disk packing once per friction
# (prepare.py); for N_I = 10 ... 320 run 2000 steps at the piston force F (runs.py's scans
# out/pre_mu*/, each row ending in a checkpoint), then continue from it (out/ring_mu*/) with the force stepped to F (1 + dF/F) for each relative
# step dF/F, dF/F = 0 being the unstepped baseline that analyze.py subtracts before fitting a
# damped sine to the piston's response. The main result is the small step (0.5 %); the others
# show how the response depends on the amplitude (Coulomb sliding).
# QUICK=1: 300 disks, N_I = 20, 80, friction 0.05, dF/F = 0.5 % (a smoke test of the scripts).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export CDLAB="${CDLAB:-$root/build/cdlab}"
PYTHON="${PYTHON:-/usr/bin/python3}"
# the shared analysis package tools/cdlab (fits, stamps, file comparison)
export PYTHONPATH="$root/tools${PYTHONPATH:+:$PYTHONPATH}"
export OMP_NUM_THREADS=1   # two runs at a time on the two cores
# a quick run has its own folder (out_quick/): it never replaces the full study's files
out="$here/$([ "${QUICK:-}" = 1 ] && echo out_quick || echo out)"
mkdir -p "$out"
if [ "${QUICK:-}" = 1 ]; then
    tag=quick
    prep_set=(--set particles.count=300 --set particles.box_max="26 50 0" --set plane.right.point="26 0 0"
              --set piston.top.point="0 50 0" --set system.steps=2500 --set solver.iterations=100)
    FRICTIONS="0.05"   # (runs.py has the N_I and dF/F of each)
else
    tag=full
    prep_set=()
    FRICTIONS="0.05 0"
fi
# newer than the binary and than every input: a run of an older build is never reused
fresh() {
    local f=$1; shift
    [ -s "$f" ] && [ "$f" -nt "$CDLAB" ] || return 1
    for d in "$@"; do [ "$f" -nt "$d" ] || return 1; done
    # a run file: written by this very build (not by another one, e.g. make test's)
    case "$f" in *.h5) "$PYTHON" -m cdlab fresh "$f" "$CDLAB" ;; esac
}
# one packing per friction coefficient: a frictional packing loses its stability without
# friction (measured: the piston sinks by 0.16 before the step), so the control has its own
for mu in $FRICTIONS; do
    if ! fresh "$out/packing_${tag}_mu$mu.txt" "$here/prepare.ini"; then
        echo "== piston2d: preparing the $tag packing, friction $mu =="
        # without friction the packing creeps longer: 16000 steps bring its piston to rest
        # (8000 left it at 1.5e-6 of its peak velocity, above the 1e-6 required)
        more=(); [ "$mu" = 0 ] && [ "$tag" = full ] && more=(--set system.steps=16000)
        "$PYTHON" "$here/prepare.py" --tag ${tag}_mu$mu "${prep_set[@]}" "${more[@]}" --set contact.friction=$mu
    fi
done
# the runs at F and the force steps from their checkpoints: scans (runs.py)
"$PYTHON" "$here/runs.py" $([ "$tag" = quick ] && echo --quick)
"$PYTHON" "$here/analyze.py" --tag $tag
echo "summary: $here/summary$([ "$tag" = quick ] && echo _quick).md"

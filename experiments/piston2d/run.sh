#!/usr/bin/env bash
# piston2d (Unger & Kertesz sec. 3.3.2, Fig. 8): prepare the 1000-disk packing once
# (prepare.py), then for N_I = 10 ... 320 and friction 0.05 (the paper's) and 0 (control) step
# the piston force from F to 1.2 F and record the ringing piston (ring.ini); analyze.py fits
# damped sines and the log-log slopes of omega and tau against N_I.
# QUICK=1: 300 disks, N_I = 20, 80, friction 0.05 only (a smoke test of the scripts).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export CDLAB="${CDLAB:-$root/build/cdlab}"
PYTHON="${PYTHON:-/usr/bin/python3}"
export OMP_NUM_THREADS=1   # two runs at a time on the two cores
out="$here/out"
mkdir -p "$out"
if [ "${QUICK:-}" = 1 ]; then
    tag=quick
    prep_set=(--set particles.count=300 --set particles.box_max="26 50 0" --set plane.right.point="26 0 0"
              --set piston.top.point="0 50 0" --set system.steps=2500 --set solver.iterations=100)
    NIS="20 80"; FRICTIONS="0.05"; count=300; width=26
else
    tag=full
    prep_set=()
    NIS="10 20 40 80 160 320"; FRICTIONS="0.05 0"; count=1000; width=47
fi
# one packing per friction coefficient: a frictional packing loses its stability without
# friction (measured: the piston sinks by 0.16 before the step), so the control has its own
for mu in $FRICTIONS; do
    if [ ! -s "$out/packing_${tag}_mu$mu.txt" ] || [ "$here/prepare.ini" -nt "$out/packing_${tag}_mu$mu.txt" ]; then
        echo "== piston2d: preparing the $tag packing, friction $mu =="
        "$PYTHON" "$here/prepare.py" --tag ${tag}_mu$mu "${prep_set[@]}" --set contact.friction=$mu
    fi
done
echo "== piston2d: force steps (N_I = $NIS; friction $FRICTIONS) =="
jobs=()
for mu in $FRICTIONS; do
    for ni in $NIS; do
        # after the step: about six damping times of the frictionless mode (tau ~ 1/N_I)
        steps=$(( 2000 + (100000 / ni > 1500 ? 100000 / ni : 1500) ))
        [ "${QUICK:-}" = 1 ] && steps=$(( 2000 + 1500 ))
        jobs+=("$ni $mu $steps $(cat "$out/piston_${tag}_mu$mu.txt")")
    done
done
printf '%s\n' "${jobs[@]}" | xargs -P 2 -L 1 bash -c '
    ni=$0; mu=$1; steps=$2; height=$3
    f="'"$out"'/ring_'"$tag"'_NI${ni}_mu${mu}.h5"
    pk="'"$out"'/packing_'"$tag"'_mu${mu}.txt"
    [ -s "$f" ] && [ "$f" -nt "'"$here"'/ring.ini" ] && [ "$f" -nt "$pk" ] && exit 0
    "$CDLAB" run "'"$here"'/ring.ini" -o "$f" --quiet \
        --set particles.file="$pk" --set particles.count='"$count"' \
        --set plane.right.point="'"$width"' 0 0" --set piston.top.point="0 $height 0" \
        --set solver.iterations=$ni --set contact.friction=$mu --set system.steps=$steps
    echo "   N_I = $ni, friction $mu: done"'
"$PYTHON" "$here/analyze.py" --tag $tag
echo "summary: $here/summary.md"

#!/usr/bin/env bash
# piston2d (Unger & Kertesz sec. 3.3.2, Fig. 8): prepare the 1000-disk packing once per friction
# (prepare.py); for N_I = 10 ... 320 run 2000 steps at the piston force F (pre_*.h5, ending in a
# checkpoint), then continue from it with the force stepped to F (1 + dF/F) for each relative
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
F=50
if [ "${QUICK:-}" = 1 ]; then
    tag=quick
    prep_set=(--set particles.count=300 --set particles.box_max="26 50 0" --set plane.right.point="26 0 0"
              --set piston.top.point="0 50 0" --set system.steps=2500 --set solver.iterations=100)
    NIS="20 80"; FRICTIONS="0.05"; count=300; width=26
    steps_for() { echo 3500; }
    amps_for() { echo "0 0.005"; }
else
    tag=full
    prep_set=()
    NIS="10 20 40 80 160 320"; FRICTIONS="0.05 0"; count=1000; width=47
    # after the step: at least 1500 steps, and about ten damping times at small N_I (tau ~ 1/N_I)
    steps_for() { local a=$(( 50000 / $1 )); echo $(( 2000 + (a > 1500 ? a : 1500) )); }
    # friction 0.05: the small steps of the main result and the amplitude scan; frictionless:
    # the main result and the old 20 % step
    amps_for() { [ "$1" = 0 ] && echo "0 0.005 0.2" || echo "0 0.001 0.005 0.02 0.2"; }
fi
# newer than the binary and than every input: a run of an older build is never reused
fresh() {
    local f=$1; shift
    [ -s "$f" ] && [ "$f" -nt "$CDLAB" ] || return 1
    for d in "$@"; do [ "$f" -nt "$d" ] || return 1; done
    # a run file: written by this very build (not by another one, e.g. make test's)
    case "$f" in *.h5) "$PYTHON" -m cdlab fresh "$f" "$CDLAB" ;; esac
}
# a run to be redone: its old output removed first (cdlab keeps existing outputs)
clear() { rm -f "$1" "${1%.h5}.xmf" "$1.partial" "${1%.h5}.xmf.partial"; }
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
common() { # the ring.ini overrides shared by the runs of one (N_I, friction)
    echo "--set particles.file=\"$out/packing_${tag}_mu$2.txt\" --set particles.count=$count" \
         "--set plane.right.point=\"$width 0 0\" --set piston.top.point=\"0 $(cat "$out/piston_${tag}_mu$2.txt") 0\"" \
         "--set solver.iterations=$1 --set contact.friction=$2 --set piston.top.force=$F"
}
echo "== piston2d: 2000 steps at F (N_I = $NIS; friction $FRICTIONS) =="
for mu in $FRICTIONS; do for ni in $NIS; do
    f="$out/pre_${tag}_NI${ni}_mu${mu}.h5"
    fresh "$f" "$here/ring.ini" "$out/packing_${tag}_mu$mu.txt" && continue
    clear "$f"
    echo "\"$CDLAB\" run \"$here/ring.ini\" -o \"$f\" --quiet $(common $ni $mu) --set system.steps=2000 --set piston.top.force_after=$F && echo '   $(basename "$f")'"
done; done | xargs -r -d '\n' -n 1 -P 2 bash -c 'eval "$0"'
echo "== piston2d: force steps dF/F (0: baseline) =="
for mu in $FRICTIONS; do for ni in $NIS; do for a in $(amps_for $mu); do
    pre="$out/pre_${tag}_NI${ni}_mu${mu}.h5"
    f="$out/ring_${tag}_NI${ni}_mu${mu}_dF${a}.h5"
    fresh "$f" "$pre" && continue
    clear "$f"
    fa=$("$PYTHON" -c "print(repr($F * (1 + $a)))")
    echo "\"$CDLAB\" run \"$here/ring.ini\" -o \"$f\" --quiet --restart \"$pre\" $(common $ni $mu) --set system.steps=$(steps_for $ni) --set piston.top.force_after=$fa && echo '   $(basename "$f")'"
done; done; done | xargs -r -d '\n' -n 1 -P 2 bash -c 'eval "$0"'
"$PYTHON" "$here/analyze.py" --tag $tag
echo "summary: $here/summary$([ "$tag" = quick ] && echo _quick).md"

#!/usr/bin/env bash
# ThreadSanitizer on cdlab's threaded code (make check-tsan; CI runs it): the binaries of BUILD
# (clang -fsanitize=thread, LLVM's OpenMP runtime libomp) run with LLVM's Archer tool, which
# makes OpenMP's own synchronisation (barriers, reductions, task waits) visible to TSan so that
# only real races are reported. Every run below at 2 and at 4 threads, and the Check tests that
# compare thread counts; any report fails (TSan's exit code 66).
#
#   tools/tsan.sh BUILD
set -euo pipefail
build="${1:?usage: tools/tsan.sh BUILD}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
archer="$(ls /usr/lib/llvm-*/lib/libarcher.so 2>/dev/null | sort -V | tail -1)"
[ -n "$archer" ] || { echo "tsan: no libarcher.so (Debian's libomp-14-dev)" >&2; exit 1; }
export OMP_TOOL_LIBRARIES="$archer"
# ignore_noninstrumented_modules: the uninstrumented libraries' own memory (libhdf5, libc)
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 ignore_noninstrumented_modules=1 second_deadlock_stack=1"
symbolizer="$(dirname "$archer")/../bin/llvm-symbolizer" # stack traces with names, when present
[ -x "$symbolizer" ] && TSAN_OPTIONS="$TSAN_OPTIONS external_symbolizer_path=$symbolizer"
export ARCHER_OPTIONS="verbose=0"
out="$build/tsan"
mkdir -p "$out"
cdlab="$build/cdlab"
# name | config | extra arguments: each exercises a threaded path (small, for TSan's ~10x)
runs=(
  "dem_chute_tile|bench/chute.ini|--set particles.tile=1,1,1 --set particles.count=4100 --set system.box_max=10,10,42 --set system.steps=60 --set output.every=30"
  "dem_piston|tests/memcheck/dem.ini|--set system.steps=300 --set output.every=100"
  "dem_bonded_deformable|tests/mpi/bonded.ini|--set system.steps=300 --set output.every=100"
  "dem_drive|tests/memcheck/dem.ini|--set system.steps=40 --set drive.motion=rotation --set drive.rotation=0,0.01,0.02"
  "cd_colored_3d|tests/mpi/cdpile.ini|--set system.steps=60 --set output.every=30"
  "cd_colored_global|tests/mpi/cdpile.ini|--set system.steps=40 --set solver.criterion=global --set solver.epsilon=1e-3 --set solver.iterations=60"
  "cd_colored_2d|experiments/convergence/settle.ini|--set solver.sweep=colored --set system.steps=60 --set output.every=30"
  "cd_random_piston|tests/memcheck/cd.ini|--set system.steps=60"
)
for threads in 2 4; do
    for r in "${runs[@]}"; do
        IFS='|' read -r name cfg extra <<<"$r"
        log="$out/$name-$threads.log"
        # shellcheck disable=SC2086
        if ! "$cdlab" run "$cfg" -o "$out/$name-$threads.h5" --overwrite --quiet --threads "$threads" \
             $extra > "$log" 2>&1; then
            echo "tsan: $name at $threads threads: FAILED (exit $?)"; tail -40 "$log"; exit 1
        fi
        grep -q "WARNING: ThreadSanitizer" "$log" && { echo "tsan: $name: report"; cat "$log"; exit 1; }
        echo "tsan: $name at $threads threads: no report"
    done
done
# the Check tests that run several thread counts (1 and 2; system.threads settings)
( cd tests && CDLAB_BIN="../$cdlab" CK_FORK=no CK_RUN_SUITE=cd CK_RUN_CASE=determinism \
      "../$build/check_all" > "../$out/check_cd.log" 2>&1 ) || { tail -40 "$out/check_cd.log"; exit 1; }
( cd tests && CDLAB_BIN="../$cdlab" CK_FORK=no CK_RUN_SUITE=dem CK_RUN_CASE=io \
      "../$build/check_all" > "../$out/check_dem.log" 2>&1 ) || { tail -40 "$out/check_dem.log"; exit 1; }
( cd tests && CDLAB_BIN="../$cdlab" CK_FORK=no CK_RUN_SUITE=periodic \
      "../$build/check_all" > "../$out/check_periodic.log" 2>&1 ) ||
    { tail -40 "$out/check_periodic.log"; exit 1; }
grep -h "Checks" "$out"/check_*.log | sed 's/^/tsan: check suites: /'
echo "tsan: no data race reported"

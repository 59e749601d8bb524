#!/usr/bin/env bash
# Runs cdlab's libFuzzer targets (built by `make fuzz`: the config reader, the particle-file
# reader, the checkpoint restore): first every saved input in
# tests/fuzz/regress/TARGET/ (failures found earlier, now fixed), then SECONDS of fuzzing per
# target from the seeds (the repository's configs and particle files) plus the corpus kept in
# BUILD/corpus/. Fails if any input crashes, leaks, trips a sanitizer, hangs (> 10 s) or needs
# more than 2 GB; the input is saved as BUILD/failures/TARGET-*: copy it into
# tests/fuzz/regress/TARGET/ when fixing the bug.
set -euo pipefail
build=${1:-build-fuzz}
seconds=${2:-150}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
mkdir -p "$build/failures"
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

# seeds: configs of the experiments, benchmark and docs; particle files (first byte: format)
seed_config="$build/seeds/config"
seed_particles="$build/seeds/particles"
rm -rf "$build/seeds"
mkdir -p "$seed_config" "$seed_particles"
for f in experiments/*/*.ini bench/*.ini tests/fuzz/regress/config/*; do
    [ -f "$f" ] && cp "$f" "$seed_config/$(echo "$f" | tr / _)"
done
{ printf '\001'; head -n 40 bench/data/chute_cell.txt; } > "$seed_particles/chute_head"
{ printf '\000'; printf '# x y z r\n0 0 0 0.5\n1.1 0 0 0.5\n0.5 1 0 0.45\n'; } > "$seed_particles/xyzr"
for f in tests/fuzz/regress/particles/*; do
    [ -f "$f" ] && cp "$f" "$seed_particles/"
done
# checkpoints: the two unmutated templates, and the hostile mutations written by hand
seed_checkpoint="$build/seeds/checkpoint"
mkdir -p "$seed_checkpoint"
printf '\000' > "$seed_checkpoint/cd"
printf '\001' > "$seed_checkpoint/dem"
for f in tests/fuzz/regress/checkpoint/*; do
    [ -f "$f" ] && cp "$f" "$seed_checkpoint/"
done
# a dictionary of the config vocabulary: every `name` of docs/config.md and the sections
dict="$build/config.dict"
{
    grep -o '`[a-z_][a-z_.0-9]*`' docs/config.md | tr -d '`' | sort -u | sed 's/.*/"&"/'
    for s in system solver particles contact output dem probe load plane.a piston.a cylinder.a; do
        printf '"[%s]"\n' "$s"
    done
    printf '"="\n"\\x0A"\n"#"\n"nan"\n"inf"\n"-1e308"\n"1e308"\n'
} > "$dict"

status=0
for target in config particles checkpoint; do
    bin="$build/fuzz_$target"
    corpus="$build/corpus/$target"
    mkdir -p "$corpus"
    regress=(tests/fuzz/regress/$target/*)
    if [ -e "${regress[0]}" ]; then
        echo "fuzz: $target: replaying ${#regress[@]} saved inputs"
        "$bin" -runs=0 "${regress[@]}" > "$build/replay_$target.log" 2>&1 || {
            echo "fuzz: $target: a saved input fails again (see $build/replay_$target.log)" >&2
            status=1
        }
    fi
    extra=()
    [ "$target" = config ] && extra+=(-dict="$dict")
    echo "fuzz: $target: ${seconds} s"
    if ! "$bin" "$corpus" "$build/seeds/$target" -max_total_time="$seconds" -timeout=10 \
        -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 "${extra[@]}" \
        -artifact_prefix="$build/failures/$target-" > "$build/fuzz_$target.log" 2>&1; then
        echo "fuzz: $target: FAILED, see $build/fuzz_$target.log and $build/failures/" >&2
        grep -E "ERROR|SUMMARY|Test unit written" "$build/fuzz_$target.log" | head -5 >&2 || true
        status=1
    fi
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb|cov: " "$build/fuzz_$target.log" |
        tail -3 | sed "s/^/fuzz: $target: /"
done
rm -rf /tmp/cdlab-fuzz-ck-* /tmp/cdlab-fuzz-*.txt 2>/dev/null || true
exit $status

#!/bin/bash
# Issue 19's many-core figures (1 to N threads) on a machine that has none of cdlab's packages.
#
#   bash bench/many-core.sh pack        # here: a portable release build in build-dev/ (x86-64-v3,
#                                       # not native) with its shared libraries in build-dev/lib
#   (copy the tree with build-dev/cdlab and build-dev/lib to the many-core machine; it needs
#    python3 with numpy and h5py)
#   bash bench/many-core.sh run OUTDIR  # there: machine facts, bit-identity of 1 and N threads,
#                                       # then tools/bench.py's threads section; all into OUTDIR
#
# The results file (OUTDIR/<date>-<commit>-threads.md) names the machine; copy it to bench/results/.
set -u
cd "$(dirname "$0")/.."
case "${1:-}" in
pack)
    make --no-print-directory BUILD=build-dev OPT="-O3 -march=x86-64-v3 -g" build-dev/cdlab || exit 1
    rm -rf build-dev/lib && mkdir -p build-dev/lib
    # every shared library but the C library's own (the other machine has a newer glibc)
    for l in $(ldd build-dev/cdlab | awk '$3 ~ /^\// {print $3}'); do
        case $(basename "$l") in libc.so* | libm.so* | libresolv.so*) ;; *) cp -L "$l" build-dev/lib/ ;; esac
    done
    git rev-parse --short=12 HEAD >build-dev/commit
    git diff --quiet HEAD || echo dirty >>build-dev/commit
    gcc --version | head -1 >build-dev/compiler
    du -sh build-dev/cdlab build-dev/lib
    ;;
run)
    out=${2:?"usage: bench/many-core.sh run OUTDIR"}
    mkdir -p "$out"
    export LD_LIBRARY_PATH=$PWD/build-dev/lib
    cdlab=$PWD/build-dev/cdlab
    py=${PYTHON:-python3}
    { date -u; nproc; lscpu; grep -m1 MemTotal /proc/meminfo; uname -a; } >"$out/machine.txt" 2>&1
    head -20 "$out/machine.txt"
    if ldd "$cdlab" | grep -q "not found"; then ldd "$cdlab"; exit 1; fi
    "$cdlab" --version | head -3
    n=$(nproc)
    tmp=$(mktemp -d)
    # results do not depend on the thread count: the chute through a neighbour rebuild (600 steps)
    # and a colored CD step on 10^5 disks, at 1 and at every core, bit for bit
    PYTHONPATH=tools $py -c "import bench; bench.lattice(2, 316, '$tmp/l.txt'); \
open('$tmp/c.ini', 'w').write(bench.config(2, 316, 99856, '$tmp/l.txt', 'colored', 10, 4))" || exit 1
    for t in 1 "$n"; do
        OMP_NUM_THREADS=$t "$cdlab" run bench/chute.ini -o "$tmp/chute$t.h5" --overwrite --quiet \
            --set system.steps=600 --set output.every=100 || exit 1
        OMP_NUM_THREADS=$t "$cdlab" run "$tmp/c.ini" -o "$tmp/cd$t.h5" --overwrite --quiet || exit 1
    done
    for c in chute cd; do
        echo "bit-identity 1 vs $n threads, $c:"
        $py tools/h5compare.py "$tmp/${c}1.h5" "$tmp/$c$n.h5" | tail -2 | tee -a "$out/identity.txt"
    done
    rm -rf "$tmp"
    commit=$(head -1 build-dev/commit)
    set -o pipefail
    BENCH_SECONDS=${BENCH_SECONDS:-inf} BENCH_ONLY=threads BENCH_COMMIT=$commit BENCH_DIRTY=$(grep -c dirty build-dev/commit) \
        BENCH_CC="$(cat build-dev/compiler)" BENCH_FLAGS="-O3 -march=x86-64-v3 -g -fopenmp" \
        BENCH_RESULTS="$out" CDLAB=$cdlab PYTHONUNBUFFERED=1 $py tools/bench.py 2>&1 |
        grep -v "^$" | tee "$out/bench.log" | awk "/^## Profile/ {s = 1} /^written/ {s = 0} !s" | grep -E "^threads:|^\| [0-9]+ \||^\| DEM|^\| CD|written"
    ;;
*)
    sed -n 2,12p "$0"
    exit 2
    ;;
esac

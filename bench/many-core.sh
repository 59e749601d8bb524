#!/bin/bash
# Issue 19's many-core figures (1 to N threads, 1 to N MPI ranks) on a machine without cdlab's
# packages.
#
#   bash bench/many-core.sh pack          # here: a portable release build in build-dev/ (x86-64-v3,
#                                         # not native) and the machine probe (bench/probe.c, in the
#                                         # results' header) with their shared libraries in build-dev/lib;
#                                         # with Open MPI's runtime (build-dev/ompi: mpirun, its
#                                         # components and help files) and Debian's LAMMPS
#                                         # (build-dev/lammps.tar.xz) when they are installed here
#   (copy the tree with build-dev to the many-core machine; it needs python3 with numpy and h5py)
#   bash bench/many-core.sh run OUTDIR    # there: machine facts, bit-identity of 1 and N threads,
#                                         # then tools/bench.py's threads section; all into OUTDIR
#   bash bench/many-core.sh ranks OUTDIR  # there: bit-identity of one process and N MPI ranks, then
#                                         # tools/bench.py's MPI section at 1, 2, 4, ... N ranks
#   bash bench/many-core.sh order OUTDIR  # there: the threads section's CD case (10^6 disks written
#                                         # in random order) at 1 and N threads with
#                                         # particles.order = given and auto (renumbered), 3 reps
#
# The results files (OUTDIR/<date>-<commit>-threads.md, -mpi.md) name the machine; copy them to
# bench/results/.
set -u
cd "$(dirname "$0")/.."
# copy_libs FILE DEST: the shared libraries FILE loads into DEST, but the C library's own (the
# other machine has a newer glibc)
copy_libs() {
    for l in $(ldd "$1" | awk '$3 ~ /^\// {print $3}'); do
        case $(basename "$l") in libc.so* | libm.so* | libresolv.so*) ;; *) cp -L "$l" "$2"/ ;; esac
    done
}
# begin COMMAND OUTDIR: the results folder, the packed program with its libraries, python, and
# the machine's facts in OUTDIR/machine.txt
begin() {
    out=${2:?"usage: bench/many-core.sh $1 OUTDIR"}
    mkdir -p "$out"
    export LD_LIBRARY_PATH=$PWD/build-dev/lib
    cdlab=$PWD/build-dev/cdlab
    py=${PYTHON:-python3}
    { date -u; nproc; lscpu; grep -m1 MemTotal /proc/meminfo; uname -a; } >"$out/machine.txt" 2>&1
}
case "${1:-}" in
pack)
    make --no-print-directory BUILD=build-dev OPT="-O3 -march=x86-64-v3 -g" build-dev/cdlab build-dev/probe || exit 1
    rm -rf build-dev/lib && mkdir -p build-dev/lib
    copy_libs build-dev/cdlab build-dev/lib
    # Open MPI's runtime, moved (OPAL_PREFIX; PMIx's components by path): orterun, the components
    # (not those for InfiniBand, UCX, libfabric or PSM: a node's shared memory is all the ranks
    # use) and their libraries, the help files
    rm -rf build-dev/ompi
    if command -v orterun >/dev/null && command -v orted >/dev/null && [ -d /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3 ]; then
        o=build-dev/ompi
        mca=$o/lib/x86_64-linux-gnu/openmpi/lib/openmpi3 pmix=$o/lib/x86_64-linux-gnu/pmix2
        mkdir -p $o/bin $o/share $mca $pmix/lib/pmix
        # orted: a singleton (LAMMPS on one process, not under mpirun) starts one
        cp -L "$(command -v orterun)" "$(command -v orted)" $o/bin/
        for f in /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/*.so; do
            ldd "$f" | grep -q -E "libuc[mpst]|libfabric|libibverbs|libpsm" || cp "$f" $mca/
        done
        cp -r /usr/share/openmpi $o/share/
        cp /usr/lib/x86_64-linux-gnu/pmix2/lib/pmix/*.so $pmix/lib/pmix/ 2>/dev/null
        for f in $o/bin/* $mca/*.so $pmix/lib/pmix/*.so; do
            copy_libs "$f" build-dev/lib
        done
    fi
    # Debian's LAMMPS with its libraries (about 50 MB; 15 MB compressed)
    rm -f build-dev/lammps.tar.xz
    if command -v lmp >/dev/null; then
        rm -rf build-dev/lammps && mkdir -p build-dev/lammps/lib
        cp -L "$(command -v lmp)" build-dev/lammps/
        copy_libs "$(command -v lmp)" build-dev/lammps/lib
        tar -C build-dev -cJf build-dev/lammps.tar.xz lammps && rm -rf build-dev/lammps
    fi
    git rev-parse --short=12 HEAD >build-dev/commit
    git diff --quiet HEAD || echo dirty >>build-dev/commit
    gcc --version | head -1 >build-dev/compiler
    du -sh build-dev/cdlab build-dev/lib build-dev/ompi build-dev/lammps.tar.xz 2>/dev/null
    ;;
run)
    begin run "${2:-}"
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
        BENCH_RESULTS="$out" CDLAB=$cdlab PROBE=$PWD/build-dev/probe PYTHONUNBUFFERED=1 $py tools/bench.py 2>&1 |
        grep -v "^$" | tee "$out/bench.log" | awk "/^## Profile/ {s = 1} /^written/ {s = 0} !s" | grep -E "^threads:|^\| [0-9]+ \||^\| DEM|^\| CD|written"
    ;;
ranks)
    [ -x build-dev/ompi/bin/orterun ] || { echo "no Open MPI in build-dev (pack where it is installed)"; exit 1; }
    begin ranks "${2:-}"
    o=$PWD/build-dev/ompi
    # PMIx also looks where Debian installs its components: a machine with another PMIx there
    # made every rank print that its zlib component would not load (2026-11-27); PMIx's
    # compression (of large start-up messages) is not used
    export OPAL_PREFIX=$o PMIX_INSTALL_PREFIX=$o/lib/x86_64-linux-gnu/pmix2 \
        PMIX_MCA_mca_base_component_path=$o/lib/x86_64-linux-gnu/pmix2/lib/pmix \
        PMIX_MCA_pcompress=^zlib PMIX_MCA_pcompress_base_silence_warning=1 \
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    mpirun=$o/bin/orterun
    head -3 "$out/machine.txt"
    n=$(nproc)
    tmp=$(mktemp -d)
    lmp=
    if [ -f build-dev/lammps.tar.xz ]; then
        tar -C "$tmp" -xJf build-dev/lammps.tar.xz
        # LAMMPS's own libraries first, and the packed Open MPI's
        printf '#!/bin/sh\nLD_LIBRARY_PATH=%s:%s exec %s "$@"\n' "$tmp/lammps/lib" "$LD_LIBRARY_PATH" \
            "$tmp/lammps/lmp" >"$tmp/lmp" && chmod +x "$tmp/lmp" && lmp=$tmp/lmp
    fi
    # a distributed run writes the one-process file: the chute through a rebuild (600 steps) and
    # the CD colored sweep on 97,336 spheres, one process against every core as ranks
    PYTHONPATH=tools $py -c "import bench; bench.lattice(3, 46, '$tmp/l.txt'); \
open('$tmp/c.ini', 'w').write(bench.config(3, 46, 97336, '$tmp/l.txt', 'colored', 50, 3))" || exit 1
    for r in 1 "$n"; do
        pre=() && [ "$r" -gt 1 ] && pre=("$mpirun" --oversubscribe -np "$r")
        OMP_NUM_THREADS=1 "${pre[@]}" "$cdlab" run bench/chute.ini -o "$tmp/chute$r.h5" --overwrite --quiet \
            --set system.steps=600 --set output.every=100 || exit 1
        OMP_NUM_THREADS=1 "${pre[@]}" "$cdlab" run "$tmp/c.ini" -o "$tmp/cd$r.h5" --overwrite --quiet || exit 1
    done
    for c in chute cd; do
        echo "bit-identity one process vs $n ranks, $c:"
        $py tools/h5compare.py "$tmp/${c}1.h5" "$tmp/$c$n.h5" | tail -2 | tee -a "$out/identity.txt"
    done
    ranks=1 && r=2 && while [ "$r" -le "$n" ]; do ranks="$ranks $r" && r=$((r * 2)); done
    commit=$(head -1 build-dev/commit)
    set -o pipefail
    BENCH_ONLY=mpi BENCH_RANKS="$ranks" BENCH_MPIRUN=$mpirun BENCH_LMP=$lmp BENCH_COMMIT=$commit \
        BENCH_DIRTY=$(grep -c dirty build-dev/commit) BENCH_CC="$(cat build-dev/compiler)" \
        BENCH_FLAGS="-O3 -march=x86-64-v3 -g -fopenmp" BENCH_RESULTS="$out" CDLAB=$cdlab PROBE=$PWD/build-dev/probe \
        PYTHONUNBUFFERED=1 $py tools/bench.py 2>&1 | grep -v "^$" | tee "$out/bench.log" |
        awk "/^## Profile/ {s = 1} /^written/ {s = 0} !s" | grep -E "^mpi:|^\| DEM|^\| CD|written"
    rc=$?
    rm -rf "$tmp"
    exit $rc
    ;;
order)
    # Since particles.order = auto (2026-11-27) the threads section's CD case is renumbered along
    # a space-filling curve; on the 2-core VM that made its step 1.3x faster at 1 and 2 threads
    # (bench/PROFILE.md, session 31). At N threads it was measured only in the given order.
    begin order "${2:-}"
    head -3 "$out/machine.txt"
    n=$(nproc)
    tmp=$(mktemp -d)
    PYTHONPATH=tools $py -c "import bench; bench.lattice(2, 1000, '$tmp/l.txt'); \
open('$tmp/c.ini', 'w').write(bench.config(2, 1000, 1000000, '$tmp/l.txt', 'colored', 10, 4))" || exit 1
    echo "commit $(head -1 build-dev/commit); CD colored 10^6 disks, s per step (steps 2-4 of 4)" |
        tee "$out/order.txt"
    for rep in 1 2 3; do
        for t in 1 "$n"; do
            for order in given auto; do
                OMP_NUM_THREADS=$t "$cdlab" run "$tmp/c.ini" -o "$tmp/o.h5" --overwrite --quiet \
                    --set output.timing_warmup=1 --set particles.order=$order || exit 1
                $py -c "import h5py; s = h5py.File('$tmp/o.h5')['summary'].attrs; \
print('rep $rep, $t thread(s), order $order:', round(s['timed_step_seconds'] / s['timed_steps'], 4))" |
                    tee -a "$out/order.txt"
            done
        done
    done
    rm -rf "$tmp"
    ;;
*)
    sed -n 2,20p "$0"
    exit 2
    ;;
esac

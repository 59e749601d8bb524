# cdlab — one Makefile, out-of-tree objects in build/, automatic header dependencies.
#
#   make            build build/cdlab (OpenMP on; OPENMP=0 builds without it)
#   make deps       install missing Debian packages (apt-get), nothing if all present
#   make test       install deps, check the layers, build, run the quick Check suites (slow
#                   ones excluded)
#   make check-layers  the includes against the layers (tools/check_layers.py)
#   make test-slow  run only the tests tagged "slow" (long physics regressions; CI runs them)
#   make demo       install deps, build, run the 1D wave test experiment end to end
#   make check-asan the whole suite under AddressSanitizer + UBSan (build-debug/); `debug` too
#   make check-tsan ThreadSanitizer (clang, libomp + Archer) on the threaded runs at 2 and 4 threads
#   make fuzz       libFuzzer on the config and particle-file readers (FUZZ_SECONDS each)
#   make check-faults one failed write at a time over every write of a short CD and DEM run
#   make memcheck   valgrind on a short CD, a short DEM and a short bonded deformable-disc run
#   make render     a 2D packing rendered with ParaView from its XDMF sidecar (build/render/)
#   make format     clang-format the tree
#   make install    build, then put the programs, the Python package and the docs under PREFIX
#                   (/usr/local; DESTDIR for staging); install-built: what BUILD holds, no build

OPENMP ?= 1
BUILD  ?= build
PYTHON ?= /usr/bin/python3

PKGS    := hdf5 check inih fclib ompi-c
CC      ?= gcc
CSTD    := -std=c11
# -Wno-psabi: GCC's note that a 32-byte vector argument's ABI depends on AVX (common/vec3x4.h's
# lanes pass between inline functions only, never across a call; the note came in every default
# build's output, which a pragma in the header did not silence)
WARN    := -Wall -Wextra -Wpedantic -Wshadow -Wno-psabi
OPT     ?= -O2 -g
OMPFLAG := $(if $(filter 1,$(OPENMP)),-fopenmp,)
# -dirty: uncommitted changes to what goes into the binaries (not summaries, docs or scripts)
GIT_COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)$(shell git diff --quiet HEAD -- common cd tools/cdlab.c tools/cdlab_lab.c Makefile 2>/dev/null || echo -dirty)
DEFS    := -D_POSIX_C_SOURCE=200809L
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CFLAGS_ALL = $(CSTD) $(OPT) $(WARN) $(OMPFLAG) $(DEFS) -I$(BUILD) -Icommon -Icd $(PKG_CFLAGS) -MMD -MP $(EXTRA_CFLAGS)
# SuiteSparse's UMFPACK (libsuitesparse-dev; no pkg-config file): the Newton solver's sparse LU
SPARSE_LIBS := -lumfpack
LDLIBS_ALL = $(OMPFLAG) $(PKG_LIBS) $(SPARSE_LIBS) -lm $(EXTRA_LDFLAGS)
# The programs (cdlab, cdlab-lab) link Debian's static libhdf5.a: the shared one brings the
# curl/TLS/Kerberos chain of its S3 driver (6 MB resident, 33 more libraries loaded at every
# start), which cdlab never uses. They do not link libfclib (loaded with dlopen for
# --export-fclib, with its own shared HDF5) nor Check. HDF5_STATIC=0 links the shared HDF5.
HDF5_STATIC ?= 1
ifeq ($(HDF5_STATIC),1)
HDF5_PROG  = $(shell pkg-config --libs-only-L hdf5 2>/dev/null) -Wl,-Bstatic -lhdf5 -Wl,-Bdynamic -lsz -laec -lz
else
HDF5_PROG  = $(shell pkg-config --libs hdf5 2>/dev/null)
endif
LDLIBS_PROG = $(OMPFLAG) $(HDF5_PROG) $(shell pkg-config --libs inih ompi-c 2>/dev/null) $(SPARSE_LIBS) -lm $(EXTRA_LDFLAGS)

LIB_SRC  := $(wildcard common/*.c) $(wildcard cd/*.c) $(wildcard cd/*/*.c)
TOOL_SRC := tools/cdlab.c tools/cdlab_lab.c
TEST_SRC := $(filter-out tests/mpi_selftest.c,$(wildcard tests/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
TOOL_OBJ := $(TOOL_SRC:%.c=$(BUILD)/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o)

.PHONY: bench-table install install-built experiments-status FORCE all deps check-layers check-faults check-tsan fuzz render memcheck experiments gallery bench test test-slow test-all demo debug check-asan clean format experiments-chain1d
all: $(BUILD)/cdlab $(BUILD)/cdlab-lab

# Provenance stamp: rewritten only when the commit or the flags change, so that objects that
# include it are rebuilt exactly then.
$(BUILD)/build_stamp.h: FORCE
	@mkdir -p $(BUILD)
	@printf '#define CDLAB_GIT_COMMIT "%s"\n#define CDLAB_CFLAGS "%s"\n' \
	    '$(GIT_COMMIT)' '$(CSTD) $(OPT) $(OMPFLAG)' > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(BUILD)/common/build_info.o: $(BUILD)/build_stamp.h
FORCE:

# The configuration's keys, generated from docs/config.md's tables: cdlab help config prints
# them, and the reader refuses a key they lack (tools/config_schema.py).
$(BUILD)/config_schema.h: docs/config.md tools/config_schema.py
	@mkdir -p $(BUILD)
	$(PYTHON) tools/config_schema.py docs/config.md > $@.tmp && mv $@.tmp $@
$(BUILD)/cd/run/run_setup.o $(BUILD)/tools/cdlab.o $(BUILD)/tests/check_engine.o: $(BUILD)/config_schema.h

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/libcdlab.a: $(LIB_OBJ)
	ar rcs $@ $^

$(BUILD)/cdlab: $(BUILD)/tools/cdlab.o $(BUILD)/libcdlab.a
	$(CC) -o $@ $^ $(LDLIBS_PROG)

$(BUILD)/cdlab-lab: $(BUILD)/tools/cdlab_lab.o $(BUILD)/libcdlab.a
	$(CC) -o $@ $^ $(LDLIBS_PROG)

# Stand-ins for libfclib.so.0 that the fclib suite puts first on LD_LIBRARY_PATH (the program
# must refuse an export it cannot write before it touches a file): one without FCLIB's
# functions, one that needs a library that is not there (linked to one, which is then removed).
FAKE_FCLIB := $(BUILD)/fakefclib/nosym/libfclib.so.0 $(BUILD)/fakefclib/nodep/libfclib.so.0
$(BUILD)/fakefclib/nosym/libfclib.so.0: tests/fakelib/fake_fclib.c
	@mkdir -p $(dir $@)
	$(CC) -shared -fPIC -o $@ $<
$(BUILD)/fakefclib/nodep/libfclib.so.0: tests/fakelib/fake_fclib.c
	@mkdir -p $(dir $@)
	$(CC) -shared -fPIC -o $(dir $@)libcdlab_gone.so $<
	$(CC) -shared -fPIC -o $@ $< -Wl,--no-as-needed -L$(dir $@) -lcdlab_gone
	rm -f $(dir $@)libcdlab_gone.so

$(BUILD)/check_all: $(TEST_OBJ) $(BUILD)/libcdlab.a | $(FAKE_FCLIB) $(BUILD)/mpi_selftest
	$(CC) -o $@ $(filter-out $(BUILD)/mpi_selftest,$^) $(LDLIBS_ALL)

# The MPI self-tests that tests/check_mpi.c runs under mpirun (a program of its own: they use
# the engines' internals, which the programs of tools/ do not see)
$(BUILD)/mpi_selftest: $(BUILD)/tests/mpi_selftest.o $(BUILD)/libcdlab.a
	$(CC) -o $@ $^ $(LDLIBS_ALL)

deps:
	@bash tools/deps.sh

# make install: PREFIX/bin, the package where Debian's python3 finds it (/usr/lib/python3/
# dist-packages for PREFIX=/usr, PREFIX/lib/python3.X/dist-packages otherwise, as /usr/local),
# PREFIX/share/doc/cdlab (tools/install.sh)
PREFIX  ?= /usr/local
PYVER   := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
PYDIR   ?= $(if $(filter /usr,$(PREFIX)),$(PREFIX)/lib/python3/dist-packages,$(PREFIX)/lib/python$(PYVER)/dist-packages)
install: deps
	$(MAKE) --no-print-directory all
	$(MAKE) --no-print-directory install-built
install-built:
	@bash tools/install.sh "$(DESTDIR)$(PREFIX)" "$(DESTDIR)$(PYDIR)" "$(BUILD)"

# Quick suites only; CK_EXCLUDE_TAGS is Check's own tag filter. The layers first.
test: deps check-layers
	$(MAKE) --no-print-directory $(BUILD)/check_all $(BUILD)/cdlab $(BUILD)/cdlab-lab
	cd tests && CK_EXCLUDE_TAGS=slow ../$(BUILD)/check_all

# The includes follow the layers tools -> cd/run -> cd/engine <- engines -> common, and the run
# pipeline names no engine (README, "Layout"; tools/check_layers.py); no function over 90 lines
# without its reason, no file of cd/ or common/ over 900 (tools/long_functions.py).
check-layers:
	@$(PYTHON) tools/check_layers.py
	@out=$$($(PYTHON) tools/long_functions.py) || { echo "$$out"; exit 1; }; echo "$$out" | tail -1
	@$(PYTHON) tools/bench_table.py --check
	@$(PYTHON) tools/experiments_status.py || echo "(informational: make test does not fail on stale studies)"

# Which committed study summaries were made before the last change to the engines' results
# (results epoch, common/build_info.h); exit 1 if any is stale. Runs nothing.
experiments-status:
	@$(PYTHON) tools/experiments_status.py

test-slow: deps
	$(MAKE) --no-print-directory $(BUILD)/check_all $(BUILD)/cdlab $(BUILD)/cdlab-lab
	cd tests && CK_INCLUDE_TAGS=slow ../$(BUILD)/check_all

test-all: test test-slow

demo: deps
	$(MAKE) --no-print-directory $(BUILD)/cdlab
	PYTHON=$(PYTHON) CDLAB=$(CURDIR)/$(BUILD)/cdlab bash experiments/chain1d/run.sh

# The studies of experiments/*/ (docs/experiments.md); QUICK=1 runs small versions.
EXPERIMENTS ?= chain1d piston2d cd_vs_dem convergence kuhn sliding_pair ddem solvers lammps
experiments: deps
	$(MAKE) --no-print-directory $(BUILD)/cdlab $(BUILD)/cdlab-lab
	@for e in $(EXPERIMENTS); do \
	    echo "=== experiment $$e ==="; \
	    QUICK=$(QUICK) PYTHON=$(PYTHON) CDLAB=$(CURDIR)/$(BUILD)/cdlab CDLAB_LAB=$(CURDIR)/$(BUILD)/cdlab-lab \
	        bash experiments/$$e/run.sh --study || exit 1; \
	done
	@echo "=== verdicts (experiments/*/summary$(if $(filter 1,$(QUICK)),_quick,).md) ==="
	@for e in $(EXPERIMENTS); do \
	    f=experiments/$$e/summary$(if $(filter 1,$(QUICK)),_quick,).md; [ -f $$f ] || f=experiments/$$e/summary.md; \
	    printf '%-14s pass %3s   FAIL %3s\n' $$e "$$(grep -o '\bpass\b' $$f | wc -l)" "$$(grep -o '\bFAIL\b' $$f | wc -l)"; \
	done

# Benchmarks with release flags in build-release/ (tools/bench.py; results in bench/results/).
BENCH_OPT := -O3 -march=native -g
bench:
	@CDLAB_EXTRA_PKGS="lammps libsiconos-numerics-dev" bash tools/deps.sh
	$(MAKE) --no-print-directory BUILD=build-release OPT="$(BENCH_OPT)" build-release/cdlab build-release/probe \
	    build-release/siconos_solve
	BENCH_FLAGS="$(CSTD) $(BENCH_OPT) $(OMPFLAG)" CDLAB=$(CURDIR)/build-release/cdlab \
	    PROBE=$(CURDIR)/build-release/probe SICONOS_SOLVE=$(CURDIR)/build-release/siconos_solve \
	    $(PYTHON) tools/bench.py
	$(PYTHON) tools/bench_table.py

# docs/benchmarks.md from bench/results/ (make test fails when it is older than the files)
bench-table:
	$(PYTHON) tools/bench_table.py

# Siconos's solvers on an FCLIB file, the bench's peer of cdlab solve (bench/siconos_solve.c;
# Debian's libsiconos-numerics-dev, which make bench installs; not part of cdlab).
$(BUILD)/siconos_solve: bench/siconos_solve.c
	@mkdir -p $(BUILD)
	$(CC) $(CSTD) $(OPT) $(WARN) -I/usr/include/siconos -I/usr/include/siconos/numerics $< -o $@ \
	    -lsiconos_numerics -lfclib

# The machine's memory and core figures beside each bench run (bench/probe.c, tools/bench.py).
$(BUILD)/probe: bench/probe.c
	@mkdir -p $(BUILD)
	$(CC) $(CSTD) $(OPT) $(WARN) $(OMPFLAG) $< -o $@ -lm

gallery:
	$(PYTHON) tools/gallery.py

# The whole test suite (quick and slow) under AddressSanitizer and UndefinedBehaviorSanitizer,
# the cdlab binary the tests call included; any report fails (halt_on_error). CI runs it.
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
check-asan: deps
	$(MAKE) --no-print-directory BUILD=build-debug OPT="$(SAN_FLAGS)" \
	    EXTRA_LDFLAGS="-fsanitize=address,undefined" build-debug/check_all build-debug/cdlab build-debug/cdlab-lab
	cd tests && ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	    CDLAB_BIN=../build-debug/cdlab CK_FORK=no ../build-debug/check_all
debug: check-asan

# ThreadSanitizer on the threaded code (tools/tsan.sh: DEM, CD colored and random, bonds and
# deformable discs, the drive, at 2 and 4 threads, and the thread-comparing Check tests): clang
# with LLVM's OpenMP runtime and its Archer tool (Debian's libomp-14-dev), which TSan needs to see
# OpenMP's synchronisation; any report fails. CI runs it.
TSAN_FLAGS := -O1 -g -fsanitize=thread -fno-omit-frame-pointer
check-tsan:
	@CDLAB_EXTRA_PKGS="clang libomp-14-dev" bash tools/deps.sh
	$(MAKE) --no-print-directory BUILD=build-tsan CC=clang OPT="$(TSAN_FLAGS)" \
	    EXTRA_LDFLAGS="-fsanitize=thread" build-tsan/cdlab build-tsan/check_all
	bash tools/tsan.sh build-tsan

# Fuzzing (libFuzzer, from Debian's clang and libclang-rt-14-dev): the config reader, the
# particle-file reader and the checkpoint restore (mutated HDF5 datasets and attributes),
# FUZZ_SECONDS each, under ASan + UBSan; saved failures fail the target.
# Known failures are replayed first from tests/fuzz/regress/ (also a Check test).
FUZZ_SECONDS ?= 300
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
fuzz:
	@CDLAB_EXTRA_PKGS="clang libclang-rt-14-dev" bash tools/deps.sh
	$(MAKE) --no-print-directory BUILD=build-fuzz CC=clang OPENMP=0 OPT="-O1 -g" \
	    EXTRA_CFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_SAN)" EXTRA_LDFLAGS="$(FUZZ_SAN)" \
	    build-fuzz/fuzz_config build-fuzz/fuzz_particles build-fuzz/fuzz_checkpoint
	bash tools/fuzz.sh build-fuzz $(FUZZ_SECONDS)

# Every write of a short CD and a short DEM run made to fail in turn (strace's fault injection:
# EIO at every write, ENOSPC at every FAULT_EVERY-th; two runs at a time): no run may end
# "completed" with a file other than the fault-free run's, and a failed one says what its file
# holds (tools/faultsweep.py). CI runs it.
FAULT_EVERY ?= 3
check-faults: deps
	$(MAKE) --no-print-directory $(BUILD)/cdlab
	$(PYTHON) tools/faultsweep.py $(BUILD)/cdlab --errors EIO
	$(PYTHON) tools/faultsweep.py $(BUILD)/cdlab --errors ENOSPC --every $(FAULT_EVERY)

# valgrind memcheck on a short CD run (with an FCLIB export), a short DEM run and a short bonded
# deformable-disc run (its particles renumbered: particles.order = spatial); any error or leak
# fails. One OpenMP thread: libgomp's pool threads are still alive at exit and valgrind
# counts their stacks as "possibly lost".
memcheck: deps
	@CDLAB_EXTRA_PKGS=valgrind bash tools/deps.sh
	$(MAKE) --no-print-directory $(BUILD)/cdlab
	@mkdir -p $(BUILD)/memcheck
	for m in cd dem ddem; do \
	    OMP_NUM_THREADS=1 valgrind --leak-check=full --errors-for-leak-kinds=definite,possible \
	        --error-exitcode=9 $(BUILD)/cdlab run tests/memcheck/$$m.ini \
	        -o $(BUILD)/memcheck/$$m.h5 --overwrite --quiet $$( [ $$m = cd ] && echo --export-fclib 60 ) \
	        $$( [ $$m = ddem ] && echo --set particles.order=spatial ) \
	        2> $(BUILD)/memcheck/$$m.log || { tail -30 $(BUILD)/memcheck/$$m.log; exit 1; }; \
	    grep -E "ERROR SUMMARY|definitely lost" $(BUILD)/memcheck/$$m.log | sed "s/^/memcheck $$m: /"; \
	done

# ParaView: a 2D packing settled under gravity (experiments/convergence/settle.ini, 1500 steps),
# rendered from its XDMF sidecar by pvpython under a virtual X server (Debian's pvpython needs
# X). Writes build/render/settle.png; docs/img/settle_forces.png is a copy of it. pvpython is in
# python3-paraview, only a Recommends of paraview (deps.sh installs without recommends).
render:
	@CDLAB_EXTRA_PKGS="paraview python3-paraview xvfb xauth libgl1-mesa-dri" bash tools/deps.sh
	$(MAKE) --no-print-directory $(BUILD)/cdlab
	@mkdir -p $(BUILD)/render
	$(BUILD)/cdlab run experiments/convergence/settle.ini -o $(BUILD)/render/settle.h5 --overwrite --quiet \
	    --set system.steps=1500 --set output.every=100
	xvfb-run -a pvpython tools/render.py $(BUILD)/render/settle.xmf \
	    --png $(BUILD)/render/settle.png --size 900 900

$(BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/targets.h $(BUILD)/libcdlab.a
	$(CC) $(CFLAGS_ALL) -fsanitize=fuzzer $< $(BUILD)/libcdlab.a -o $@ $(LDLIBS_ALL)

format:
	clang-format -i common/*.[ch] cd/*.[ch] cd/*/*.[ch] tools/*.c tests/*.[ch] bench/*.c

clean:
	rm -rf build build-debug build-fuzz

-include $(LIB_OBJ:.o=.d) $(TOOL_OBJ:.o=.d) $(TEST_OBJ:.o=.d) $(BUILD)/tests/mpi_selftest.d

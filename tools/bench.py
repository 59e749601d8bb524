#!/usr/bin/python3
"""cdlab benchmarks (make bench), issue 5. Writes bench/results/<date>-<commit>.md.

0. The machine (bench/probe.c, at the bench's start and end, in the results' header): memory
   bandwidth (a triad) on one and on all threads, random 64-byte lines read per second, load
   latency, a dependent arithmetic chain. This VM's speed changes from day to day (threefold
   between 2026-11-28 and 2026-11-29); these say by how much, beside the figures.
1. CD sweep throughput: contact updates per second (contacts x sweeps / solver time) on dense
   packings, 2D 1e4 and 1e5 disks, 3D 1e4 and 1e5 spheres, fixed N_I = 50, random sweep (the
   reference) and colored sweep, at 1 and 2 threads; whole step per particle.
   Packings: regular lattices of touching unit particles (2D square, 3D simple cubic; walls
   around, gravity), written in a random order, as an unsorted real packing would be; runs of
   50,000 particles or more are renumbered along a space-filling curve at their start (the
   default particles.order = auto), smaller ones keep the random order.
2. DEM chute (bench/chute.ini, the LAMMPS "chute" system tiled 4 x 4: 65,600 spheres),
   particle-steps per second of the 64,000 mobile spheres over 2000 steps after 100 warm-up
   steps, Kuhn law (projection, twirl) and conventional law, 1 and 2 threads, and the lammps
   law (LAMMPS's own computation in cdlab, no goal) at 1 thread; the same system in LAMMPS
   (bench/lammps/in.chute3d, Debian's lmp, one process) when lmp is installed; after
   each Kuhn pair, two one-thread runs side by side against one alone (what the machine's two
   cores give: the 2-thread ratio's ceiling in the same minutes).
3. Scaling: CD step time against particle count, 2D lattices of 1e3 to 1e6 disks, N_I = 10;
   log-log slope; peak memory (max RSS) per particle and per contact; the colored sweep's whole
   step at 10^6 disks (steps 2-4 of 4) at 1 and 2 threads, and after each pair two one-thread
   runs of it side by side against one alone (the 2-thread ratio's ceiling in the same minutes).
4. MPI: 1 -> 2 ranks (one thread each) for the DEM chute and the CD colored sweep on 97,336
   spheres, and LAMMPS's chute at 1 and 2 ranks (issue 18). BENCH_RANKS="1 2 4 8 16" runs those
   rank counts instead (a many-core machine: bench/many-core.sh ranks); BENCH_MPIRUN and
   BENCH_LMP name mpirun and lmp where they are not on the PATH. Then the memory per rank: the
   chute tiled to 1,049,600 spheres on BENCH_MEM_RANKS (8) ranks, each rank's peak
   (/parallel/ranks) against the one-process peak over the ranks (issue 66); then the bits and
   the message pattern of small DEM and CD piles on 2 to 16 ranks (BENCH_PATTERN_RANKS; issue 66).
Every figure is the median of 3 runs; the 2-thread ratios (chute, colored 10^6 step) are the
medians of 3 paired runs, 1 and 2 threads alternating, with their range.
5. Threads (machines of more than 2 cores): the DEM chute (Kuhn) and the CD colored sweep's whole
   step at 10^6 disks at 1, 2, 4, ... threads up to the cores; speed-ups against 1 thread.
6. Peers (issue 63): over 30 exported CD steps solved by cdlab's solvers and Siconos's, to three
   tolerances from zero and warm; tables, Dolan-More profiles (BENCH_PEERS_CAP seconds a run, 20).
BENCH_ONLY=small|cd|chute|scaling|mpi|mpi_memory|mpi_pattern|threads|peers runs one section (written to
bench/results/<date>-<commit>-<section>.md). On a copy without .git, BENCH_COMMIT (and
BENCH_DIRTY=1), BENCH_CC and BENCH_RESULTS (the folder) say what git, gcc and the tree would.

`tools/bench.py --against OLD_BINARY` runs only the CD and DEM rows, with OLD_BINARY and
$CDLAB alternating, for a change that should not cost time (bench/results/*-side-by-side.md);
with it BENCH_ROWS=cd or dem runs those rows only (cd with the 10^6 cases), BENCH_ROWS=goals the figures of issue 19's
goals (the chute at 1 and 2 threads with its peak memory, the random sweep and the colored
step at 10^6 disks), so that a goal a run reads "no" can be told the machine's or the code's."""
import datetime
import os
import platform
import signal
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cdlab.textfile import write_text
from cdlab import Run

CDLAB = os.environ.get("CDLAB", os.path.join(root, "build-release", "cdlab"))
PROBE = os.environ.get("PROBE", os.path.join(root, "build-release", "probe"))

# The figures each section measures that a goal names (issue 19); main() puts them beside their
# goals at the top of the results file.
FIG = {}
# For the 2-thread ratios: the smallest and largest of the paired runs' ratios (shown beside the
# median in the goals table: this VM's speed drifts by tens of percent between minutes).
SPREAD = {}


def lattice(dim, ns, path, seed=1):
    g = np.arange(ns) + 0.5
    if dim == 2:
        X, Y = np.meshgrid(g, g, indexing="ij")
        pts = np.column_stack([X.ravel(), Y.ravel(), np.zeros(X.size)])
    else:
        X, Y, Z = np.meshgrid(g, g, g, indexing="ij")
        pts = np.column_stack([X.ravel(), Y.ravel(), Z.ravel()])
    pts = pts[np.random.default_rng(seed).permutation(len(pts))]
    np.savetxt(path, np.column_stack([pts, np.full(len(pts), 0.5)]), fmt="%.17g")
    return len(pts)


def config(dim, ns, n, path, sweep="random", iters=50, steps=3):
    walls = ["[plane.base]", "point = 0 0 0", "normal = 0 1 0",
             "[plane.left]", "point = 0 0 0", "normal = 1 0 0",
             "[plane.right]", f"point = {ns} 0 0", "normal = -1 0 0"]
    if dim == 3:
        walls += ["[plane.front]", "point = 0 0 0", "normal = 0 0 1",
                  "[plane.back]", f"point = 0 0 {ns}", "normal = 0 0 -1"]
    return "\n".join(["[system]", f"dimension = {dim}", "dt = 0.01", f"steps = {steps}", "gravity = 0 -1 0",
                      "[solver]", f"sweep = {sweep}", "criterion = fixed", f"iterations = {iters}",
                      "[particles]", "source = file", f"file = {path}", f"count = {n}", "mass = 1",
                      "[contact]", "friction = 0.3", "detect_gap = 0.1", *walls,
                      "[output]", "every = 0"]) + "\n"


def wait_sampling(p, memory):
    """Waits for process p; with memory (a dict), samples its /proc status every 0.25 s into
    memory["hwm"] (VmHWM, KiB: the high-water mark of its own address space, as last read) and
    memory["file"] (the largest RssFile, KiB: resident pages of mapped files, which for these
    programs are the program and its shared libraries). Returns the exit status."""
    while True:
        pid, status, _ = os.wait4(p.pid, os.WNOHANG if memory is not None else 0)
        if pid == p.pid:
            p.returncode = status
            return status
        try:
            for line in open(f"/proc/{p.pid}/status"):
                if line.startswith("VmHWM:"):
                    memory["hwm"] = int(line.split()[1])
                elif line.startswith("RssFile:"):
                    memory["file"] = max(memory.get("file", 0), int(line.split()[1]))
        except (OSError, ValueError):
            pass
        time.sleep(0.25)


def die_with_parent():
    """Every child's preexec_fn: the kernel kills it when this process ends, however it ends (a
    bench stopped with kill once left its busy process of the small-runs section running, and
    every run after it on the machine read half speed at 2 threads)."""
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def wait_or_kill(p, memory):
    """wait_sampling, the process killed if the wait ends otherwise (SystemExit on SIGTERM: main)."""
    try:
        return wait_sampling(p, memory)
    except BaseException:
        p.kill()
        p.wait()
        raise


def run(args, threads, memory=None):
    """Runs cdlab (threads None: its own choice, OMP_NUM_THREADS unset). A run's peak memory is
    its summary's peak_rss_kib (the high-water mark of its own address space), not wait4's
    ru_maxrss: Linux counts in that this Python process's memory up to the exec (58 MB with numpy
    and h5py loaded), which made every chute run at 65,600 spheres read 913 bytes per particle
    whatever it used. memory: see wait_sampling (the program's and libraries' share)."""
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    p = subprocess.Popen(args, env=env, preexec_fn=die_with_parent)
    status = wait_or_kill(p, memory)
    if status != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({status})")


def probe():
    """The machine's figures now (bench/probe.c), or None where the probe is not built or fails."""
    if not os.path.exists(PROBE):
        return None
    p = subprocess.run([PROBE], capture_output=True, text=True, preexec_fn=die_with_parent)
    if p.returncode != 0:
        print(f"bench: {PROBE} failed: {p.stderr.strip()}", flush=True)
        return None
    return {k: float(v) for k, v in (line.split() for line in p.stdout.strip().split("\n"))}


def probe_lines(start, end):
    """The results header's line on the machine, from the probe at the bench's start and end."""
    if not start:
        return [f"- the machine's own figures: not measured ({PROBE} " +
                ("failed: see the bench's output)" if os.path.exists(PROBE) else "not built; make bench builds it)")]

    def both(key, fmt):
        return fmt.format(start[key]) + (f" → {fmt.format(end[key])}" if end else "")
    return [f"- the machine in this run (bench/probe.c at the bench's start → its end; compare them between "
            f"results files before taking a figure's move for the code's): memory triad {both('triad_1', '{:.1f}')} "
            f"GB/s on one thread, {both('triad_all', '{:.1f}')} GB/s on {int(start['threads'])}; random 64-byte lines "
            f"{both('lines_1', '{:.3g}')} per s; load latency {both('latency_ns', '{:.0f}')} ns; a dependent "
            f"division and root {both('chain_ns', '{:.2f}')} ns"]


def cd_cases(tmp, out):
    rows = []
    for dim, ns in [(2, 100), (2, 316), (3, 22), (3, 46)]:
        lat = os.path.join(tmp, f"lat{dim}_{ns}.txt")
        n = lattice(dim, ns, lat)
        for sweep in ("random", "colored"):
            ini = os.path.join(tmp, f"b{dim}_{ns}_{sweep}.ini")
            write_text(ini, config(dim, ns, n, lat, sweep, 50, 2))
            for threads in (1, 2):
                ups, per = [], []
                for rep in range(3):
                    h5 = os.path.join(tmp, "o.h5")
                    run([CDLAB, "run", ini, "-o", h5, "--overwrite", "--quiet"], threads)
                    r = Run(h5)
                    s = r.summary
                    ups.append(float(s["contact_updates"]) / float(s["solve_seconds"]))
                    per.append(float(s["step_seconds"]) / (int(s["steps_done"]) * n))
                    contacts = int(r.series("contacts")[-1])
                row = (dim, n, contacts, sweep, threads, statistics.median(ups), statistics.median(per))
                rows.append(row)
                print(f"CD {dim}D n = {n}, {contacts} contacts, {sweep}, {threads} thread(s): "
                      f"{row[5]:.3e} updates/s, {1e9 * row[6]:.1f} ns per particle-step", flush=True)
    out += ["## 1. CD sweep throughput", "",
            "Fixed N_I = 50, 2 steps, friction 0.3, gravity; lattices of touching unit particles written in random "
            "order (renumbered in space-filling-curve order from 50,000 particles on: the default "
            "particles.order = auto). Contact updates/s = Σ(contacts × sweeps) / time in the sweeps; ns per particle-step = whole "
            "step (detection, free motion, sweeps, update) / (steps × particles).", "",
            "| case | particles | contacts | sweep | threads | contact updates/s | ns per particle-step |",
            "|---|---|---|---|---|---|---|"]
    for dim, n, c, sw, th, u, p in rows:
        out.append(f"| CD {dim}D | {n} | {c} | {sw} | {th} | {u:.3e} | {1e9 * p:.1f} |")
    ref = {(r[0], r[1]): r[5] for r in rows if r[3] == "random" and r[4] == 1}
    col2 = {(r[0], r[1]): r[5] for r in rows if r[3] == "colored" and r[4] == 2}
    out += ["", "Colored sweep at 2 threads over the random sweep at 1 thread: " +
            ", ".join(f"{d}D {n}: {col2[(d, n)] / ref[(d, n)]:.2f}×" for (d, n) in ref), ""]
    return rows


def chute_cases(tmp, out):
    ini = os.path.join(root, "bench", "chute.ini")
    mobile = 64000
    rows = []
    paired = {}
    file_kib = []
    side = []  # per rep: two one-thread runs side by side, each over one alone (lone_and_together)
    # the lammps law (LAMMPS's gran/hooke/history in cdlab: the same computation as LAMMPS's run
    # below) at one thread: no goal, the like-for-like figure beside the Kuhn law's
    for law, counts in (("kuhn", (1, 2)), ("conventional", (1, 2)), ("lammps", (1,))):
        # 1 and 2 threads alternate, rep by rep, so that a drift of the machine's speed over the
        # minutes weighs on both alike; the 2-thread figure is the median of the reps' ratios
        rates, rss = {t: [] for t in counts}, {t: [] for t in counts}
        for rep in range(3):
            for threads in counts:
                h5 = os.path.join(tmp, "chute.h5")
                # the program's and its libraries' pages, sampled in the one-thread Kuhn runs
                memory = {} if law == "kuhn" and threads == 1 else None
                run([CDLAB, "run", ini, "-o", h5, "--overwrite", "--quiet", "--set", f"dem.tangential={law}",
                     "--set", "system.steps=2100", "--set", "output.timing_warmup=100"], threads, memory)
                if memory and "file" in memory:
                    file_kib.append(memory["file"])
                s = Run(h5).summary
                rates[threads].append(mobile * int(s["timed_steps"]) / float(s["timed_step_seconds"]))
                rss[threads].append(int(s["peak_rss_kib"]))
                rebuilds = int(s["neighbour_rebuilds"])
            if law == "kuhn":
                # what the machine's two cores give the same program at the same minutes: the
                # 2-thread ratio's ceiling (this VM's second core has at times added no memory
                # bandwidth, and the ratio swung by 20% from one hour to the next)
                side.append(lone_and_together(tmp, 2))
        if 2 in counts:
            paired[law] = [b / a for a, b in zip(rates[1], rates[2])]
        for threads in counts:
            row = (law, threads, statistics.median(rates[threads]), statistics.median(rss[threads]), rebuilds)
            rows.append(row)
            print(f"DEM chute {law}, {threads} thread(s): {row[2]:.3e} particle-steps/s, peak RSS {row[3] / 1024:.0f} MiB",
                  flush=True)
    lmp = shutil.which("lmp")
    lrate = []
    if lmp:
        ldir = os.path.join(tmp, "lammps")
        shutil.copytree(os.path.join(root, "bench", "lammps"), ldir)
        lmem = []
        for rep in range(3):
            # its memory sampled as cdlab's program share is (VmHWM as last read, every 0.25 s)
            log = os.path.join(ldir, "stdout.txt")
            memory = {}
            with open(log, "w") as f:
                p = subprocess.Popen([lmp, "-in", "in.chute3d", "-var", "nsteps", "2000"], cwd=ldir,
                                     preexec_fn=die_with_parent,
                                     stdout=f, stderr=subprocess.STDOUT)
                if wait_or_kill(p, memory) != 0:
                    raise RuntimeError(f"lmp failed: {open(log).read()[-2000:]}")
            loops = [l for l in open(log).read().splitlines() if l.startswith("Loop time")]
            lrate.append(mobile * 2000 / float(loops[-1].split()[3]))
            if "hwm" in memory:
                lmem.append((memory["hwm"], memory.get("file", 0)))
            print(f"LAMMPS chute: {lrate[-1]:.3e} particle-steps/s", flush=True)
    out += ["## 2. DEM chute", "",
            "`bench/chute.ini`: 65,600 spheres (64,000 mobile, 1,600 frozen base), periodic x and y, k_n = 2·10⁵, "
            "k_t = 2/7 k_n, normal dashpot m_eff·50, μ = 0.5, Δt = 10⁻⁴, skin 0.1; particle-steps/s of the mobile "
            "spheres over 2000 steps after 100 warm-up steps. Peak memory: the process's own peak RSS (VmHWM, the summary's peak_rss_kib).", "",
            "| code | tangential law | threads | particle-steps/s | peak RSS (MiB) | bytes per particle | neighbour rebuilds |",
            "|---|---|---|---|---|---|---|"]
    for law, th, rate, kib, rb in rows:
        out.append(f"| cdlab | {law} | {th} | {rate:.3e} | {kib / 1024:.0f} | {kib * 1024 / 65600:.0f} | {rb} |")
    k1 = [r[2] for r in rows if r[0] == "kuhn" and r[1] == 1][0]
    c1 = [r[2] for r in rows if r[0] == "conventional" and r[1] == 1][0]
    FIG["dem_2threads"] = statistics.median(paired["kuhn"])
    SPREAD["dem_2threads"] = (min(paired["kuhn"]), max(paired["kuhn"]))
    two_cores = side_by_side_figures("side_by_side_2", side, "two one-thread chute runs side by side, 500 timed "
                                     "steps after 100")
    FIG["dem_conventional_over_kuhn"] = c1 / k1
    FIG["dem_bytes_65600"] = [r[3] for r in rows if r[0] == "kuhn" and r[1] == 1][0] * 1024 / 65600
    FIG["dem_kuhn_rate"] = k1
    # memory at 10^6: the chute tiled 16 x 16 (1,049,600 spheres), through its first neighbour
    # rebuild after the start (about step 500: the rebuild, not the start, makes the peak; 5 steps
    # showed 602 bytes per particle where a run through a rebuild took 951), on 2 threads (the
    # threaded contact search joins its shares' lists: the larger peak)
    h5 = os.path.join(tmp, "chute1e6.h5")
    run([CDLAB, "run", ini, "-o", h5, "--overwrite", "--quiet"] + CHUTE_1E6, 2)
    s = Run(h5).summary
    kib, rebuilds_1e6 = int(s["peak_rss_kib"]), int(s["neighbour_rebuilds"])
    FIG["dem_bytes_1e6"] = kib * 1024 / 1049600
    print(f"DEM chute 1,049,600 spheres: peak RSS {kib / 1024:.0f} MiB, {rebuilds_1e6} rebuilds", flush=True)
    if lrate:
        lkib = statistics.median([m[0] for m in lmem]) if lmem else None
        out.append(f"| LAMMPS (Debian lmp, gran/hooke/history) | history | 1 | {statistics.median(lrate):.3e} | "
                   + (f"{lkib / 1024:.0f} | {lkib * 1024 / 65600:.0f} | |" if lkib else "| | |"))
        if lkib:
            FIG["lammps_bytes_65600"] = lkib * 1024 / 65600
            FIG["lammps_file_bytes_65600"] = statistics.median([m[1] for m in lmem]) * 1024 / 65600
        FIG["dem_over_lammps"] = k1 / statistics.median(lrate)
        FIG["dem_conventional_over_lammps"] = c1 / statistics.median(lrate)
        l1 = [r[2] for r in rows if r[0] == "lammps"][0]
        FIG["dem_lammps_law_over_lammps"] = l1 / statistics.median(lrate)
        out += ["", f"cdlab (Kuhn, 1 thread) / LAMMPS: {k1 / statistics.median(lrate):.2f}× (guard ≥ 0.6×). "
                f"The same computation as LAMMPS (`dem.tangential = lammps`, 1 thread; guard ≥ 0.9×): "
                f"{FIG['dem_lammps_law_over_lammps']:.2f}×.", ""]
    else:
        out += ["", "LAMMPS not installed (lmp not found): no side-by-side figure.", ""]
    out += [f"2 threads / 1 thread (Kuhn): {FIG['dem_2threads']:.2f}× (target ≥ 1.8×; median of 3 paired runs, "
            f"{SPREAD['dem_2threads'][0]:.2f}–{SPREAD['dem_2threads'][1]:.2f}×). {two_cores}, the ceiling of a "
            f"2-thread step that waits for its slower thread.", ""]
    if file_kib:
        FIG["dem_file_bytes_65600"] = statistics.median(file_kib) * 1024 / 65600
        out += [f"Of the peak RSS per particle at 65,600 spheres, the program's and its shared libraries' "
                f"resident pages (RssFile, sampled every 0.25 s in the one-thread Kuhn runs): cdlab "
                f"{FIG['dem_file_bytes_65600']:.0f} B"
                + (f", LAMMPS {FIG['lammps_file_bytes_65600']:.0f} B of its {FIG['lammps_bytes_65600']:.0f} B "
                   f"(its VmHWM sampled the same way)" if "lammps_bytes_65600" in FIG else "") + ".", ""]
    out += [f"Peak RSS of the chute tiled 16 × 16 (1,049,600 spheres, 700 steps, 2 threads, {rebuilds_1e6} "
            f"neighbour-list builds): {kib / 1024:.0f} MiB, {FIG['dem_bytes_1e6']:.0f} bytes per particle.", ""]
    return rows, lrate


def scaling(tmp, out):
    rows = []
    for ns in (32, 100, 316, 1000):
        lat = os.path.join(tmp, f"s{ns}.txt")
        n = lattice(2, ns, lat)
        ini = os.path.join(tmp, f"s{ns}.ini")
        write_text(ini, config(2, ns, n, lat, "random", 10, 2))
        per, rss, ups = [], [], []
        for rep in range(3):
            h5 = os.path.join(tmp, "s.h5")
            run([CDLAB, "run", ini, "-o", h5, "--overwrite", "--quiet"], 1)
            r = Run(h5)
            rss.append(int(r.summary["peak_rss_kib"]))
            per.append(float(r.summary["step_seconds"]) / int(r.summary["steps_done"]))
            ups.append(float(r.summary["contact_updates"]) / float(r.summary["solve_seconds"]))
            contacts = int(r.series("contacts")[-1])
        rows.append((n, contacts, statistics.median(per), statistics.median(rss), statistics.median(ups)))
        print(f"scaling: n = {n}: {rows[-1][2]:.4f} s per step, peak RSS {rows[-1][3] / 1024:.0f} MiB", flush=True)
    ln = np.log([r[0] for r in rows])
    lt = np.log([r[2] for r in rows])
    slope = np.polyfit(ln, lt, 1)[0]
    big, small = rows[-1], rows[-2]
    per_particle = big[3] * 1024 / big[0]
    per_contact = (big[3] - small[3]) * 1024 / (big[1] - small[1])
    FIG["cd_slope"] = slope
    FIG["cd_random_1e6"] = rows[-1][4]
    # the colored sweep's whole step at 10^6 disks, 1 and 2 threads: steps 2-4 of a 4-step run
    # (the first step's first touches of the contact records and the sweep's arrays, hundreds
    # of MB of page faults, are paid once in a long run: they made the 2-step figure swing)
    lat = os.path.join(tmp, "s1000.txt")
    write_text(os.path.join(tmp, "c1000.ini"), config(2, 1000, rows[-1][0], lat, "colored", 10, 4))
    # 1 and 2 threads alternate rep by rep (as the chute's); the figure: the median of the ratios.
    # After each pair, two one-thread runs of the case side by side, each against one alone: what
    # the machine's two cores give this step in the same minutes (its sweeps stream the contact
    # records, and this VM's second core has at times added little memory bandwidth)
    # The random sweep's whole step the same way, in the same reps (its rounds on threads give
    # the one-thread bits, cd_sweep.c): its gain beside the colored sweep's.
    write_text(os.path.join(tmp, "r1000.ini"), config(2, 1000, rows[-1][0], lat, "random", 10, 4))
    per = {1: [], 2: []}
    rper = {1: [], 2: []}
    side = []
    for rep in range(3):
        for ini, into in (("c1000.ini", per), ("r1000.ini", rper)):
            for threads in (1, 2):
                h5 = os.path.join(tmp, "c.h5")
                run([CDLAB, "run", os.path.join(tmp, ini), "-o", h5, "--overwrite", "--quiet",
                     "--set", "output.timing_warmup=1"], threads)
                s = Run(h5).summary
                into[threads].append(float(s["timed_step_seconds"]) / int(s["timed_steps"]))
        side.append(lone_and_together(tmp, 2, os.path.join(tmp, "c1000.ini"), ("output.timing_warmup=1",)))
    col = {threads: statistics.median(per[threads]) for threads in (1, 2)}
    rnd = {threads: statistics.median(rper[threads]) for threads in (1, 2)}
    for threads in (1, 2):
        print(f"scaling: colored 10^6, {threads} thread(s): {col[threads]:.3f} s per step; random "
              f"{rnd[threads]:.3f} s", flush=True)
    ratios = [a / b for a, b in zip(per[1], per[2])]
    FIG["cd_colored_1e6_2threads"] = statistics.median(ratios)
    SPREAD["cd_colored_1e6_2threads"] = (min(ratios), max(ratios))
    rratios = [a / b for a, b in zip(rper[1], rper[2])]
    FIG["cd_random_1e6_2threads"] = statistics.median(rratios)
    SPREAD["cd_random_1e6_2threads"] = (min(rratios), max(rratios))
    # its gain's share of the colored sweep's, rep by rep (the gains over one thread, 1 = none)
    shares = [(ra - 1.0) / (ca - 1.0) if ca > 1.0 else float("nan") for ra, ca in zip(rratios, ratios)]
    FIG["cd_random_share_of_colored"] = statistics.median(shares)
    two_cores = side_by_side_figures("cd_side_by_side_2", side, "two one-thread runs of the case side by side")
    out += ["## 3. Scaling (CD, 2D lattices written in random order, renumbered from 10⁵ on by particles.order = auto; N_I = 10, random sweep, 1 thread)", "",
            "| particles | contacts | s per step | ns per particle-step | contact updates/s | peak RSS (MiB) |",
            "|---|---|---|---|---|---|"]
    for n, c, t, kib, u in rows:
        out.append(f"| {n} | {c} | {t:.4f} | {1e9 * t / n:.1f} | {u:.3e} | {kib / 1024:.1f} |")
    out += ["", f"Log-log slope of the step time over 10³–10⁶ particles: **{slope:.3f}** (linear: 1.0 ± 0.1). "
                f"Peak memory at 10⁶: {per_particle:.0f} bytes per particle (all included); between 10⁵ and 10⁶: "
                f"{per_contact:.0f} bytes per added contact (particles' share included).",
            f"The colored sweep's whole step at 10⁶ disks (N_I = 10; steps 2–4 of 4, the first step's page faults "
            f"left out): {col[1]:.3f} s at 1 thread, "
            f"{col[2]:.3f} s at 2 (medians); the median of 3 paired runs' ratios "
            f"{FIG['cd_colored_1e6_2threads']:.2f}× ({SPREAD['cd_colored_1e6_2threads'][0]:.2f}–"
            f"{SPREAD['cd_colored_1e6_2threads'][1]:.2f}×). {two_cores}. The random sweep's whole step, in "
            f"the same reps (its rounds on 2 threads give the one-thread bits): {rnd[1]:.3f} s at 1 thread, "
            f"{rnd[2]:.3f} s at 2; the median of the paired ratios {FIG['cd_random_1e6_2threads']:.2f}× "
            f"({SPREAD['cd_random_1e6_2threads'][0]:.2f}–{SPREAD['cd_random_1e6_2threads'][1]:.2f}×), "
            f"{FIG['cd_random_share_of_colored']:.2f} of the colored sweep's gain (median of the reps' shares).", ""]
    return slope


def thread_counts():
    """1, 2, 4, ... up to the machine's cores (and the cores themselves when not a power of 2)."""
    cores = os.cpu_count() or 1
    counts = [1]
    while counts[-1] * 2 <= cores:
        counts.append(counts[-1] * 2)
    return counts + ([cores] if counts[-1] != cores else [])


def side_by_side_figures(key, side, runs):
    """FIG[key], SPREAD[key] from the reps' lone_and_together(tmp, 2, ...) results: the median of
    the work two copies did over one (its range), and of twice the slower's pace. Returns the
    section's sentence on them; runs: what ran side by side."""
    FIG[key] = (statistics.median([sum(v) for v in side]), statistics.median([2 * min(v) for v in side]))
    SPREAD[key] = (min(sum(v) for v in side), max(sum(v) for v in side))
    return (f"The machine's two cores in the same minutes (after each pair, {runs}, each against one run alone "
            f"just before): together {FIG[key][0]:.2f}× the work of one (median of 3, {SPREAD[key][0]:.2f}–"
            f"{SPREAD[key][1]:.2f}×), {FIG[key][1]:.2f}× at the slower's pace")


def lone_and_together(tmp, n, ini=None, sets=("system.steps=600", "output.timing_warmup=100")):
    """The machine's own ceiling for n threads: n one-thread runs at once, each against one run
    alone just before; by default the chute (500 timed steps after 100), or the config ini with
    the --set values sets (their summaries' timed steps per second). Returns the n runs' speeds
    over the lone run's: their sum is the work n copies of the one-thread program do over one,
    their minimum what a step that waits for its slowest thread could show at best (the cores
    share caches and the bus, and on a virtual machine do not all run alike)."""
    ini = ini or os.path.join(root, "bench", "chute.ini")
    env = dict(os.environ, OMP_NUM_THREADS="1")

    def start(k):
        h5 = os.path.join(tmp, f"side{k}.h5")
        return h5, subprocess.Popen([CDLAB, "run", ini, "-o", h5, "--overwrite", "--quiet"]
                                    + [a for v in sets for a in ("--set", v)], env=env,
                                    preexec_fn=die_with_parent)

    def speeds(runs):
        try:
            for h5, p in runs:
                if p.wait() != 0:
                    raise RuntimeError(f"side-by-side chute run {h5} failed")
        except BaseException:  # the others stop with the bench
            for _, p in runs:
                p.kill()
                p.wait()
            raise
        return [int(s["timed_steps"]) / float(s["timed_step_seconds"]) for s in (Run(h5).summary for h5, _ in runs)]

    alone = speeds([start(0)])[0]
    return [v / alone for v in speeds([start(k) for k in range(n)])]


def threads_cases(tmp, out):
    """Issue 19's many-core goals: the DEM chute (Kuhn law, 65,600 spheres) and the CD colored
    sweep's whole step at 10^6 disks at 1, 2, 4, ... threads up to the machine's cores. Each rep
    runs every thread count in turn (so that a drift of the machine's speed weighs on all alike);
    a count's speed-up is the median over the reps of its time over the same rep's 1-thread time.
    Runs in make bench on machines of more than 2 cores (BENCH_ONLY=threads anywhere)."""
    counts = thread_counts()
    reps = int(os.environ.get("BENCH_REPS", "3"))
    ini = os.path.join(root, "bench", "chute.ini")
    lat = os.path.join(tmp, "t1000.txt")
    n = lattice(2, 1000, lat)
    cini = os.path.join(tmp, "t1000.ini")
    write_text(cini, config(2, 1000, n, lat, "colored", 10, 4))
    dem = {t: [] for t in counts}   # particle-steps/s
    cd = {t: [] for t in counts}    # s per step (steps 2-4 of 4)
    # BENCH_SECONDS: no rep is begun that would end past this many seconds (a lent machine's lease)
    budget, t0 = float(os.environ.get("BENCH_SECONDS", "inf")), time.time()
    for rep in range(reps):
        if rep and (time.time() - t0) * (rep + 1) / rep > budget:
            print(f"threads: {rep} reps done, a further one would end past BENCH_SECONDS = {budget:g}", flush=True)
            reps = rep
            break
        for t in counts:
            h5 = os.path.join(tmp, "tchute.h5")
            run([CDLAB, "run", ini, "-o", h5, "--overwrite", "--quiet", "--set", "dem.tangential=kuhn",
                 "--set", "system.steps=2100", "--set", "output.timing_warmup=100"], t)
            s = Run(h5).summary
            dem[t].append(64000 * int(s["timed_steps"]) / float(s["timed_step_seconds"]))
            print(f"threads: rep {rep + 1}, DEM chute, {t} thread(s): {dem[t][-1]:.3e} particle-steps/s", flush=True)
        for t in counts:
            h5 = os.path.join(tmp, "tc.h5")
            run([CDLAB, "run", cini, "-o", h5, "--overwrite", "--quiet", "--set", "output.timing_warmup=1"], t)
            s = Run(h5).summary
            cd[t].append(float(s["timed_step_seconds"]) / int(s["timed_steps"]))
            print(f"threads: rep {rep + 1}, CD colored 10^6, {t} thread(s): {cd[t][-1]:.3f} s per step", flush=True)
    top = counts[-1]
    side = lone_and_together(tmp, top)
    FIG["side_by_side"] = (sum(side), min(side))
    print(f"threads: {top} one-thread chute runs side by side: each at {min(side):.2f}–{max(side):.2f} of one alone, "
          f"together {sum(side):.1f}× the work of one", flush=True)
    dem_up = {t: [b / a for a, b in zip(dem[1], dem[t])] for t in counts}
    cd_up = {t: [a / b for a, b in zip(cd[1], cd[t])] for t in counts}
    FIG["dem_top_threads"] = statistics.median(dem_up[top])
    SPREAD["dem_top_threads"] = (min(dem_up[top]), max(dem_up[top]))
    FIG["cd_colored_1e6_top_threads"] = statistics.median(cd_up[top])
    SPREAD["cd_colored_1e6_top_threads"] = (min(cd_up[top]), max(cd_up[top]))
    FIG["top_threads"] = top
    FIG["threads_reps"] = reps
    out += [f"## Threads: 1 to {top} (issue 19's many-core goals)", "",
            "DEM chute (`bench/chute.ini`, Kuhn law, 2000 timed steps after 100) and the CD colored sweep's whole "
            "step at 10⁶ disks (2D lattice written in random order, renumbered by particles.order = auto; N_I = 10, steps 2–4 of 4); "
            f"{reps} reps, each running every thread count in turn; speed-up: the median of the reps' ratios to "
            "the same rep's 1-thread run (range in brackets); parallel efficiency: speed-up over threads.", "",
            f"The machine: {top} one-thread chute runs side by side (500 timed steps after 100) each ran at "
            f"{min(side):.2f}–{max(side):.2f} of one run alone: together {sum(side):.1f}× the work of one, and "
            f"{top * min(side):.1f}× at the pace of the slowest, which bounds a step that waits for its slowest "
            "thread on this machine.", "",
            "| threads | DEM particle-steps/s | DEM speed-up | DEM efficiency | CD colored 10⁶ s per step | "
            "CD speed-up | CD efficiency |", "|---|---|---|---|---|---|---|"]
    for t in counts:
        du, cu = statistics.median(dem_up[t]), statistics.median(cd_up[t])
        out.append(f"| {t} | {statistics.median(dem[t]):.3e} | {du:.2f}× ({min(dem_up[t]):.2f}–{max(dem_up[t]):.2f}) | "
                   f"{du / t:.2f} | {statistics.median(cd[t]):.3f} | {cu:.2f}× ({min(cd_up[t]):.2f}–{max(cd_up[t]):.2f}) "
                   f"| {cu / t:.2f} |")
    out.append("")


# the chute tiled 16 x 16 (1,049,600 spheres) through its first neighbour rebuild: the
# one-process memory figure and its distributed twin (mpi_memory)
CHUTE_1E6 = ["--set", "particles.tile=16,16,1", "--set", "particles.count=1049600",
             "--set", "system.box_max=160,160,42", "--set", "system.steps=700", "--set", "output.every=0"]


MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def mpi_prefix(ranks):
    return [] if ranks == 1 else [os.environ.get("BENCH_MPIRUN", "mpirun"), "--oversubscribe", "-np", str(ranks)]


def comm_figures(h5):
    """A distributed run's communication (/parallel/ranks): share of the step time inside MPI
    (mean over the ranks), messages and bytes sent per rank and step (means over the ranks)."""
    import h5py
    with h5py.File(h5, "r") as f:
        if "parallel/ranks" not in f:
            return ""
        g = f["parallel/ranks"]
        t, c = g["step_seconds"][:], g["step_comm_seconds"][:]
        n = np.maximum(g["steps"][:], 1)
        return (f"{100 * np.mean(c / t):.1f}% | {np.mean(g['step_messages'][:] / n):.0f} | "
                f"{np.mean(g['step_bytes'][:] / n) / 1e3:.1f} kB")


def mpi_cases(tmp, out):
    """Strong scaling 1 -> 2 MPI ranks (one OpenMP thread each; BENCH_RANKS: other counts), side
    by side with LAMMPS at the same rank counts (issue 18): the DEM chute (65,600 spheres) and CD
    colored 3D 97,336."""
    os.environ.update(MPI_ENV)
    mobile, steps, warm = 64000, 400, 100
    rows = []
    ini = os.path.join(root, "bench", "chute.ini")
    counts = [int(c) for c in os.environ.get("BENCH_RANKS", "1 2").split()]
    if not counts or counts[0] != 1 or any(c < 1 for c in counts):
        sys.exit(f"BENCH_RANKS must start at 1 (the speed-ups are over one process): {counts}")
    for ranks in counts:
        rates = []
        for rep in range(3):
            h5 = os.path.join(tmp, "chute_mpi.h5")
            run(mpi_prefix(ranks) + [CDLAB, "run", ini, "-o", h5, "--overwrite", "--quiet",
                                     "--set", f"system.steps={steps}", "--set", "output.every=0",
                                     "--set", f"output.timing_warmup={warm}"], 1)
            s = Run(h5).summary
            rates.append(mobile * int(s["timed_steps"]) / float(s["timed_step_seconds"]))
        rows.append(("DEM chute 65,600 spheres", "cdlab", ranks, statistics.median(rates), "particle-steps/s",
                     comm_figures(h5)))
        print(f"mpi: cdlab chute {ranks} rank(s): {rows[-1][3]:.3e} particle-steps/s", flush=True)
    lmp = os.environ.get("BENCH_LMP") or shutil.which("lmp")
    if lmp:
        ldir = os.path.join(tmp, "lammps_mpi")
        shutil.copytree(os.path.join(root, "bench", "lammps"), ldir, dirs_exist_ok=True)
        for ranks in counts:
            rates = []
            for rep in range(3):
                p = subprocess.run(mpi_prefix(ranks) + [lmp, "-in", "in.chute3d", "-var", "nsteps",
                                                        str(steps - warm)],
                                   cwd=ldir, capture_output=True, text=True, check=True,
                                   env={**os.environ, "OMP_NUM_THREADS": "1"})
                loops = [l for l in p.stdout.splitlines() if l.startswith("Loop time")]
                rates.append(mobile * (steps - warm) / float(loops[-1].split()[3]))
            rows.append(("DEM chute 65,600 spheres", "LAMMPS (Debian lmp)", ranks,
                         statistics.median(rates), "particle-steps/s", ""))
            print(f"mpi: LAMMPS chute {ranks} rank(s): {rows[-1][3]:.3e} particle-steps/s", flush=True)
    lat = os.path.join(tmp, "lat3_46_mpi.txt")
    n = lattice(3, 46, lat)
    cini = os.path.join(tmp, "b3_46_colored_mpi.ini")
    write_text(cini, config(3, 46, n, lat, "colored", 50, 3))
    for ranks in counts:
        per = []
        for rep in range(3):
            h5 = os.path.join(tmp, "cd_mpi.h5")
            run(mpi_prefix(ranks) + [CDLAB, "run", cini, "-o", h5, "--overwrite", "--quiet"], 1)
            s = Run(h5).summary
            per.append(float(s["step_seconds"]) / int(s["steps_done"]))
        rows.append((f"CD colored 3D {n} spheres, N_I = 50", "cdlab", ranks, 1.0 / statistics.median(per),
                     "steps/s", comm_figures(h5)))
        print(f"mpi: cdlab CD colored 3D {ranks} rank(s): {rows[-1][3]:.3f} steps/s", flush=True)
    shown = " → ".join(str(c) for c in counts)
    out += [f"## 4. MPI ranks ({shown}, one thread each)", "",
            "The DEM chute (`bench/chute.ini`, 300 timed steps after 100) and the CD colored sweep on a 3D "
            f"lattice of 97,336 spheres (N_I = 50, 3 steps, whole step time), in one process and as "
            f"{', '.join(str(c) for c in counts[1:])} MPI "
            "ranks (`mpirun -np N`, Open MPI's default binding), one OpenMP thread per process; LAMMPS the same "
            "way (`mpirun -np N lmp`). The distributed cdlab runs write the one-process file bit for bit. Communication (cdlab, "
            "from /parallel/ranks of the last of the 3 runs): the share of the step time inside MPI "
            "calls (waiting for the other ranks included), and the messages and bytes a rank sends per "
            "step (means over the ranks; docs/parallel.md).", "",
            "| case | code | ranks | rate | unit | speed-up | communication | messages per step | sent per step |",
            "|---|---|---|---|---|---|---|---|---|"]
    for case, code, ranks, rate, unit, comm in rows:
        one = [r[3] for r in rows if r[0] == case and r[1] == code and r[2] == 1][0]
        comm = comm or " |  | "
        out.append(f"| {case} | {code} | {ranks} | {rate:.3e} | {unit} | {rate / one:.2f}× | {comm} |")
    out.append("")
    return rows


def mpi_memory(tmp, out):
    """Peak resident memory per rank of the DEM chute tiled 16 x 16 (1,049,600 spheres, 700
    steps: through the first neighbour rebuild, as the one-process figure) on BENCH_MEM_RANKS
    (8) ranks of one thread, from /parallel/ranks, against the one-process peak over the ranks
    plus the program's fixed pages (a rank's peak in the 600-sphere pile of tests/mpi/pile.ini
    on as many ranks). Issue 66's goal: (largest rank - fixed) / (one process / ranks) <= 1.5."""
    import h5py
    os.environ.update(MPI_ENV)
    ranks = int(os.environ.get("BENCH_MEM_RANKS", "8"))
    ini = os.path.join(root, "bench", "chute.ini")
    sets = CHUTE_1E6
    h5 = os.path.join(tmp, "chute1e6_mem.h5")
    if "dem_bytes_1e6" in FIG:  # the chute section's run (2 threads)
        one = FIG["dem_bytes_1e6"] * 1049600 / 1024
    else:
        run([CDLAB, "run", ini, "-o", h5, "--overwrite", "--quiet"] + sets, 2)
        one = int(Run(h5).summary["peak_rss_kib"])

    def rank_peaks(args):
        run(mpi_prefix(ranks) + [CDLAB, "run"] + args + ["-o", h5, "--overwrite", "--quiet"], 1)
        with h5py.File(h5, "r") as f:
            return f["parallel/ranks/peak_rss_kib"][:]
    fixed = float(max(rank_peaks([os.path.join(root, "tests", "mpi", "pile.ini"), "--set", "output.every=0"])))
    peaks = rank_peaks([ini] + sets)
    FIG["mpi_rss_share_1e6"] = (max(peaks) - fixed) / (one / ranks)
    others = peaks[1:] if len(peaks) > 1 else peaks
    print(f"mpi memory: {ranks} ranks at 1,049,600 spheres: peak of rank 0 {peaks[0] / 1024:.0f} MiB, of the others "
          f"{min(others) / 1024:.0f}-{max(others) / 1024:.0f} MiB, one process {one / 1024:.0f} MiB, fixed "
          f"{fixed / 1024:.0f} MiB", flush=True)
    out += [f"## MPI memory per rank ({ranks} ranks, one thread each)", "",
            f"The DEM chute tiled 16 × 16 (1,049,600 spheres, 700 steps, through the first neighbour rebuild) on "
            f"{ranks} ranks: each rank's peak resident memory (`/parallel/ranks/peak_rss_kib`, set-up included), "
            f"against the one-process peak shared over the ranks plus the program's fixed pages (a rank's peak in "
            f"the 600-sphere pile of tests/mpi/pile.ini on {ranks} ranks). Rank 0 also gathers and writes the "
            f"output (the first and last snapshots and a checkpoint); every rank builds the whole world at set-up "
            f"(docs/parallel.md).", "",
            "| one process | one process / ranks | fixed pages | rank 0 | the other ranks | (largest − fixed) / (one / ranks) |",
            "|---|---|---|---|---|---|",
            f"| {one / 1024:.0f} MiB | {one / ranks / 1024:.0f} MiB | {fixed / 1024:.0f} MiB | {peaks[0] / 1024:.0f} MiB | "
            f"{min(others) / 1024:.0f}–{max(others) / 1024:.0f} MiB | {FIG['mpi_rss_share_1e6']:.2f} |", ""]


def mpi_pattern(tmp, out):
    """Issue 66: the distributed runs' bits and message pattern against the rank count, on this
    machine's cores oversubscribed (counts, not speed): the DEM pile (tests/mpi/pile.ini, 400
    steps) and the CD pile (tests/mpi/cdpile.ini, 200 steps, N_I = 20) with the colored sweep and
    with the domain-wise random sweep on BENCH_PATTERN_RANKS (2 4 8 16) ranks; each run against
    the one-process file (tools/h5compare: bit for bit, /parallel and provenance aside) and its
    /parallel/ranks per step: MPI calls, reductions in rank order through rank 0, messages and
    bytes sent by rank 0 and by the busiest other rank."""
    import h5py
    from cdlab import h5compare
    os.environ.update(MPI_ENV)
    counts = [int(c) for c in os.environ.get("BENCH_PATTERN_RANKS", "2 4 8 16").split()]
    tests = os.path.join(root, "tests")
    cases = [("DEM pile, 600 spheres", os.path.join(tests, "mpi", "pile.ini"), [], True),
             ("CD pile, 600 spheres, colored", os.path.join(tests, "mpi", "cdpile.ini"),
              ["--set", "system.steps=200", "--set", "output.every=10"], True),
             ("CD pile, 600 spheres, colored, hashed order", os.path.join(tests, "mpi", "cdpile.ini"),
              ["--set", "system.steps=200", "--set", "output.every=10", "--set", "solver.color_priority=hashed"], True),
             ("CD pile, 600 spheres, random (domain-wise)", os.path.join(tests, "mpi", "cdpile.ini"),
              ["--set", "system.steps=200", "--set", "solver.sweep=random"], False)]
    rows = []
    for name, ini, sets, same in cases:
        one = os.path.join(tmp, "pattern_one.h5")
        run([CDLAB, "run", ini, "-o", one, "--overwrite", "--quiet"] + sets, 1)
        for ranks in counts:
            h5 = os.path.join(tmp, "pattern_many.h5")
            run(mpi_prefix(ranks) + [CDLAB, "run", ini, "-o", h5, "--overwrite", "--quiet"] + sets, 1)
            with open(os.devnull, "w") as quiet:
                identical = h5compare.compare(one, h5, out=quiet) == 0
            with h5py.File(h5, "r") as f:
                g = f["parallel/ranks"]
                n = np.maximum(g["steps"][:], 1)
                per = {k: g[k][:] / n for k in ("step_calls", "step_ordered_reductions", "step_messages",
                                                "step_bytes")}
                # the colouring's rounds a step, the rows after step 0's (colored only)
                cr = f["series/parallel/colour_rounds"][1:] if "series/parallel/colour_rounds" in f else []
            rows.append((name, ranks, "yes" if identical else ("**no**" if same else "no (domain-wise)"),
                         per["step_calls"].max(), per["step_ordered_reductions"].max(),
                         per["step_messages"][0], per["step_messages"][1:].max(),
                         per["step_bytes"][0] / 1e3, per["step_bytes"][1:].max() / 1e3,
                         f"{np.mean(cr):.1f}" if len(cr) else "–"))
            if same:
                FIG["mpi_identical_top"] = FIG.get("mpi_identical_top", 1.0) * (1.0 if identical else 0.0)
            print(f"mpi pattern: {name}, {ranks} ranks: bit-identical {identical}, "
                  f"{rows[-1][4]:.2f} rank-order reductions a step, messages rank 0 {rows[-1][5]:.0f}, "
                  f"others up to {rows[-1][6]:.0f}", flush=True)
    FIG["mpi_identical_ranks"] = max(counts)
    out += [f"## MPI bits and messages against the rank count ({', '.join(str(c) for c in counts)} ranks, "
            "oversubscribed)", "",
            "The DEM pile of tests/mpi/pile.ini (600 spheres, 400 steps) and the CD pile of tests/mpi/cdpile.ini "
            "(600 spheres, 200 steps, N_I = 20), colored (its colouring in key order, and in hashed order: "
            "solver.color_priority) and domain-wise random, on this machine's cores "
            "oversubscribed (a test of bits and counts, not of speed). \"bit-identical\": the file against the "
            "one-process file of the same config (tools/h5compare, /parallel and provenance aside). Per step, from "
            "/parallel/ranks: the MPI calls of the busiest rank, the reductions made in rank order through rank 0, "
            "and the messages and bytes sent (logical pattern: docs/parallel.md) by rank 0 and by the busiest "
            "other rank; for the colored sweep the mean rounds of its colouring (/series/parallel/colour_rounds, "
            "the rows of output.every).", "",
            "| case | ranks | bit-identical | MPI calls | rank-order reductions | messages, rank 0 | "
            "messages, others (max) | sent, rank 0 | sent, others (max) | colouring rounds |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.1f} | {r[4]:.2f} | {r[5]:.0f} | {r[6]:.0f} | "
                   f"{r[7]:.1f} kB | {r[8]:.1f} kB | {r[9]} |")
    out.append("")


def peers(tmp, out):
    """Issue 63's benchmark set (tools/solver_set.py): 34 steps exported from cdlab's own runs,
    each solved from zero and warm by every `cdlab solve` method and by Siconos's solvers
    (SICONOS_SOLVE: bench/siconos_solve.c), to natural-map 1e-4, 1e-6 and 1e-8, at most
    BENCH_PEERS_CAP (20) seconds a run; tables, Dolan-Moré profiles and the goals."""
    import solver_set
    cap = float(os.environ.get("BENCH_PEERS_CAP", "20"))
    driver = os.environ.get("SICONOS_SOLVE", os.path.join(root, "build-release", "siconos_solve"))
    problems = solver_set.export_set(root, CDLAB, os.path.join(tmp, "peers"))
    rows = solver_set.run_set(CDLAB, driver, problems, cap, os.path.join(tmp, "peer_answer.fclib.h5"))
    n = len(problems)
    sizes = sorted(r["contacts"] for r in rows)
    out += ["## cdlab's solvers beside Siconos's on a set of exported steps (issue 63)", "",
            f"{n} steps exported from cdlab's own runs (tools/solver_set.py: the 1D chain, 3D piles under a "
            f"piston of 60 to 3,000 spheres, settling 2D boxes of 400 to 10,000 disks, the 2D piston packing "
            f"of experiments/piston2d at rest, the CD chute of 4,100 and 36,900 spheres; frictional and "
            f"frictionless; {sizes[0]} to {sizes[-1]} contacts), each solved from zero and warm (from the "
            f"file's stored solution: the engine's impulses of that step) by every `cdlab solve` method and by "
            f"Siconos {siconos_version()}'s NSGS (ω = 1 and 1.5), PROX, ADMM and NSN-AC (fc3d; a 2D step given "
            f"a decoupled second tangent), and for 2D steps fc2d's NSGS and Lemke (on a dense W: up to "
            f"{solver_set.FC2D_MAX_CONTACTS['fc2d-nsgs']:,} and {solver_set.FC2D_MAX_CONTACTS['fc2d-lemke']:,} "
            f"contacts), from the same files in the same run, one thread, one run at a time, "
            f"at most {cap:g} s each. Every answer is measured with cdlab's natural-map residual (ρ = 1, "
            f"relative to |r|); Siconos stops at its own error, so it is run again with a tighter tolerance (up "
            f"to three times) until that residual reaches the tolerance, and the time of that run counts "
            f"(Siconos's set-up excluded).", ""]
    out += solver_set.markdown(rows, cap)


def siconos_version():
    p = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libsiconos-numerics-dev"],
                       capture_output=True, text=True)
    return p.stdout.split("+")[0] if p.returncode == 0 else "(version unknown)"


def small_runs(tmp, out):
    """Small runs must never be slower for more cores: cdlab's automatic thread count against
    one and two threads, idle and with a second busy process on the machine (issue 15). Wall
    time of the whole command, median of 3; each rep runs the three settings in turn (run three
    times each in a row, the first setting read 10-15% slower than alternated: 1.10-1.15 against
    0.93-0.99, the machine's drift and a cold start weighing on it alone)."""
    cases = [("DEM chain, 50 disks, 20,000 steps", [os.path.join(root, "experiments", "chain1d", "chain1d_dem.ini"),
                                                   "--set", "system.steps=20000", "--set", "output.every=0"]),
             ("CD settling pile, 400 disks, 400 steps", [os.path.join(root, "experiments", "convergence", "settle.ini"),
                                                        "--set", "system.steps=400", "--set", "output.every=0"]),
             ("DEM pile, 1000 spheres, 2000 steps", None)]
    ini = os.path.join(tmp, "pile1000.ini")
    write_text(ini, "\n".join(["[system]", "mode = dem", "dimension = 3", "dt = 5e-4", "steps = 2000",
                                    "gravity = 0 0 -10", "seed = 1", "[dem]", "k_n = 1e4", "k_t = 5e3",
                                    "damping_normal = 0.3", "[particles]", "source = random", "count = 1000",
                                    "radius_min = 0.4", "radius_max = 0.5", "box_min = 0 0 0", "box_max = 12 12 12",
                                    "[contact]", "friction = 0.4", "[plane.floor]", "point = 0 0 0",
                                    "normal = 0 0 1", "[output]", "every = 0"]) + "\n")
    cases[2] = (cases[2][0], [ini])
    rows = []
    for busy in (False, True):
        hog = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                               preexec_fn=die_with_parent) if busy else None
        try:
            for name, args in cases:
                settings = (("automatic", None), ("1 thread", 1), ("2 threads", 2))
                ts = {label: [] for label, _ in settings}
                for rep in range(3):
                    for label, threads in settings:
                        h5 = os.path.join(tmp, "small.h5")
                        t0 = time.time()
                        run([CDLAB, "run"] + args + ["-o", h5, "--overwrite", "--quiet"], threads)
                        ts[label].append(time.time() - t0)
                times = {label: statistics.median(v) for label, v in ts.items()}
                rows.append((name, busy, times))
                print(f"small: {name}, {'busy' if busy else 'idle'}: " +
                      ", ".join(f"{k} {v:.3f} s" for k, v in times.items()), flush=True)
        finally:
            if hog:
                hog.kill()
    out += ["## Small runs: more cores never slower", "",
            "Wall time of the whole command (median of 3, the three settings alternating), with cdlab's automatic thread count (`system.threads = 0`, "
            "OMP_NUM_THREADS unset), and forced to 1 and 2 threads; on the idle machine and beside a busy process "
            "(a Python loop on one core). Goal: the automatic choice no slower than 1 thread.", "",
            "| run | machine | automatic | 1 thread | 2 threads | automatic / 1 thread |", "|---|---|---|---|---|---|"]
    for name, busy, t in rows:
        out.append(f"| {name} | {'one busy process' if busy else 'idle'} | {t['automatic']:.3f} s | {t['1 thread']:.3f} s | "
                   f"{t['2 threads']:.3f} s | {t['automatic'] / t['1 thread']:.2f} |")
    out.append("")


def side_by_side(old, tmp):
    """The CD and DEM rows with two builds, alternating run by run (the machine's drift hits
    both alike): `tools/bench.py --against OLD_BINARY` (a change that should not cost time, or a
    figure that moved between two bench runs). BENCH_ROWS: all (the default), cd (the CD
    lattices and the 10^6 cases), dem (the chute), goals (the goals' figures: the chute, its
    one-thread peak memory, the 10^6 cases); each build's 2-thread ratios where both counts ran."""
    builds = [("old", old), ("new", CDLAB)]
    # (name, config, extra arguments, threads, [(figure, function of the summary)], a goal's)
    cases = []
    updates = ("contact updates/s", lambda s: float(s["contact_updates"]) / float(s["solve_seconds"]))
    for dim, ns in [(2, 100), (2, 316), (3, 22), (3, 46)]:
        lat = os.path.join(tmp, f"lat{dim}_{ns}.txt")
        n = lattice(dim, ns, lat)
        for sweep, threads in (("random", 1), ("colored", 2)):
            ini = os.path.join(tmp, f"b{dim}_{ns}_{sweep}.ini")
            write_text(ini, config(dim, ns, n, lat, sweep, 50, 2))
            cases.append((f"CD {dim}D {n}, {sweep}, {threads} thread(s)", ini, [], threads, [updates], False))
    chute = os.path.join(root, "bench", "chute.ini")
    chute_rate = ("particle-steps/s", lambda s: 64000 * int(s["timed_steps"]) / float(s["timed_step_seconds"]))
    chute_bytes = ("peak RSS, bytes per particle", lambda s: int(s["peak_rss_kib"]) * 1024 / 65600)
    for law in ("kuhn", "conventional"):
        for threads in (1, 2):
            cases.append((f"DEM chute, {law}, {threads} thread(s)", chute,
                          ["--set", f"dem.tangential={law}", "--set", "system.steps=2100",
                           "--set", "output.timing_warmup=100"], threads,
                          [chute_rate] + ([chute_bytes] if threads == 1 else []), True))
    only = os.environ.get("BENCH_ROWS", "all")
    if only not in ("all", "cd", "dem", "goals"):
        raise SystemExit(f"BENCH_ROWS={only}: it takes all, cd, dem or goals")
    if only in ("all", "cd", "goals"):
        # the scaling section's 10^6 cases: the random sweep (2 steps) and the colored sweep's
        # whole step (steps 2-4 of 4)
        lat = os.path.join(tmp, "lat2_1000.txt")
        n = lattice(2, 1000, lat)
        ini = os.path.join(tmp, "b2_1000_random.ini")
        write_text(ini, config(2, 1000, n, lat, "random", 10, 2))
        cases.append((f"CD 2D {n}, random, 1 thread(s)", ini, [], 1, [updates], True))
        ini = os.path.join(tmp, "b2_1000_colored.ini")
        write_text(ini, config(2, 1000, n, lat, "colored", 10, 4))
        for threads in (1, 2):
            cases.append((f"CD 2D {n}, colored whole step, {threads} thread(s)", ini,
                          ["--set", "output.timing_warmup=1"], threads,
                          [("steps/s", lambda s: int(s["timed_steps"]) / float(s["timed_step_seconds"]))], True))
    # BENCH_ROWS=cd or dem: only those, goals: the goals' figures; BENCH_REPS: runs per build
    cases = [c for c in cases if only == "all" or (c[5] if only == "goals" else c[0].lower().startswith(only))]
    reps = int(os.environ.get("BENCH_REPS", "3"))
    rows = []
    speeds = {}  # name: (old build's runs, new build's runs) of its first figure, for the ratios
    for name, ini, extra, threads, figures, _ in cases:
        got = {(b, f): [] for b, _ in builds for f, _ in figures}
        for rep in range(reps):
            for b, binary in builds:
                h5 = os.path.join(tmp, "o.h5")
                run([binary, "run", ini, "-o", h5, "--overwrite", "--quiet"] + extra, threads)
                summary = Run(h5).summary
                for f, fn in figures:
                    got[(b, f)].append(fn(summary))
        for f, _ in figures:
            old_runs, new_runs = got[("old", f)], got[("new", f)]
            o, n_ = statistics.median(old_runs), statistics.median(new_runs)
            spread = max(old_runs + new_runs) / min(old_runs + new_runs)
            rows.append((f"{name}, {f}", o, n_, n_ / o, spread))
            print(f"{name}, {f}: old {o:.3e}, new {n_:.3e}, new/old {n_ / o:.3f} "
                  f"(all {2 * reps} runs within {spread:.2f}x)", flush=True)
        speeds[name] = (got[("old", figures[0][0])], got[("new", figures[0][0])])
    # 2 threads over 1 for each build: the ratio of the medians (the two counts' runs are minutes
    # apart here, not paired as in the bench's sections); spread: the two builds' ratios
    for name in list(speeds):
        if "2 thread(s)" not in name or name.replace("2 thread(s)", "1 thread(s)") not in speeds:
            continue
        one, two = speeds[name.replace("2 thread(s)", "1 thread(s)")], speeds[name]
        ratio = [statistics.median(two[k]) / statistics.median(one[k]) for k in (0, 1)]
        spread = max(ratio) / min(ratio)
        label = name.replace("2 thread(s)", "2 threads over 1 (ratio of the medians)")
        rows.append((label, ratio[0], ratio[1], ratio[1] / ratio[0], spread))
        print(f"{label}: old {ratio[0]:.3f}, new {ratio[1]:.3f}", flush=True)
    return rows


def binary_build(binary):
    """The commit and compiler flags a cdlab binary says it was built from (`cdlab --version`)."""
    version = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout.split("\n")
    field = {l.split(" ", 1)[0]: l.split(" ", 1)[1] for l in version[1:] if " " in l}
    return field.get("commit", "?"), field.get("cflags", "?")


def main_against(old):
    t_start = time.time()
    (commit, flags), (old_commit, old_flags) = binary_build(CDLAB), binary_build(old)
    machine = probe()
    with tempfile.TemporaryDirectory() as tmp:
        rows = side_by_side(old, tmp)
    machine_end = probe() if machine else None
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
               platform.processor())
    date = datetime.date.today().isoformat()
    md = [f"# cdlab side by side {date}: commit {commit} ({CDLAB}) against commit {old_commit} ({old})", "",
          f"- machine: {cpu}, {os.cpu_count()} cores; flags: new `{flags}`, old `{old_flags}`",
          f"- each row: median of {os.environ.get('BENCH_REPS', '3')} runs per build, the builds alternating run by "
          f"run; spread: the largest over the smallest of all runs of the row; rows: "
          f"{os.environ.get('BENCH_ROWS', 'all')}; wall time {(time.time() - t_start) / 60:.1f} min",
          *probe_lines(machine, machine_end), "",
          "| case | old | new | new/old | spread |", "|---|---|---|---|---|"]
    md += [f"| {r[0]} | {r[1]:.4g} | {r[2]:.4g} | {r[3]:.3f} | {r[4]:.2f} |" for r in rows]
    path = os.path.join(root, "bench", "results",
                        f"{date}-{commit}-side-by-side{'-' + os.environ['BENCH_ROWS'] if 'BENCH_ROWS' in os.environ else ''}.md")
    write_text(path, "\n".join(md) + "\n")
    print("\n".join(md))
    print(f"written: {path}")


def goals_table(machine=None, machine_end=None):
    """Issue 19's goals beside this run's figures (those its sections measured); machine and
    machine_end: the probe's figures at the bench's start and end (None: not measured)."""
    probes = [m for m in (machine, machine_end) if m]
    lines = " → ".join(f"{m['lines_1']:.3g}" for m in probes)
    cap = " → ".join(f"{m['lines_1'] / 4:.3g}" for m in probes)

    def two_copies(key):  # the 2-thread rows' ceiling in the same minutes (side_by_side_figures)
        return (f"; here 2 one-thread runs side by side do {FIG[key][0]:.2f}× the work of one, "
                f"{FIG[key][1]:.2f}× at the slower's pace" if key in FIG else "")
    ceiling = ""
    if "side_by_side" in FIG:
        total, slowest = FIG["side_by_side"]
        n = FIG.get("top_threads", 16)
        ceiling = f"; here {n} one-thread runs side by side do {total:.1f}× the work of one, {n * slowest:.1f}× at the slowest's pace"
    # one-thread DEM speed and the memory at 65,600 are guards now, not goals (2026-12 decisions)
    goals = [("DEM chute, Kuhn law, 1 thread, over LAMMPS (same run; a guard)", "dem_over_lammps", ">=", 0.6, "{:.2f}×"),
             ("DEM chute, lammps law, 1 thread, over LAMMPS (same computation; a guard)",
              "dem_lammps_law_over_lammps", ">=", 0.9, "{:.2f}×"),
             ("DEM chute, conventional law over Kuhn (faster still)", "dem_conventional_over_kuhn", ">", 1.0, "{:.2f}×"),
             ("DEM memory at 65,600 spheres, bytes per particle (peak RSS; ≈ 630 accepted, a guard)",
              "dem_bytes_65600", "<=", 700, "{:.0f}"),
             ("DEM memory at 1,049,600 spheres, bytes per particle (peak RSS)", "dem_bytes_1e6", "<=", 500, "{:.0f}"),
             ("DEM chute, 2 threads over 1 (stands in for 13× at 16)" + two_copies("side_by_side_2"),
              "dem_2threads", ">=", 1.8, "{:.2f}×"),
             ("CD colored, whole step at 10⁶ disks, 2 threads over 1 (stands in for 10× at 16)"
              + two_copies("cd_side_by_side_2"),
              "cd_colored_1e6_2threads", ">=", 1.8, "{:.2f}×"),
             ("CD random sweep (rounds, the one-thread bits), whole step at 10⁶ disks, 2 threads over 1 (issue 64)",
              "cd_random_1e6_2threads", ">=", 1.6, "{:.2f}×"),
             ("CD random sweep's 2-thread gain as a share of the colored sweep's, same reps (issue 64)",
              "cd_random_share_of_colored", ">=", 0.9, "{:.2f}"),
             (f"DEM chute, {FIG.get('top_threads', 16)} threads over 1 (goal at 16){ceiling}", "dem_top_threads", ">=", 13,
              "{:.2f}×"),
             (f"CD colored, whole step at 10⁶ disks, {FIG.get('top_threads', 16)} threads over 1 (goal at 16)",
              "cd_colored_1e6_top_threads", ">=", 10, "{:.2f}×"),
             ("CD random sweep at 10⁶ disks written in random order (particles.order = auto), updates/s"
              + (f"; the machine's random 64-byte lines (the probe at the bench's start → end: {lines}), 4 per "
                 f"update (a 128-byte contact record, two 64-byte bodies), allow at most {cap}" if lines else ""),
              "cd_random_1e6", ">=", 1.5e7, "{:.3g}"),
             ("CD step time over 10³–10⁶ disks, log-log slope", "cd_slope", "within", (0.9, 1.1), "{:.3f}"),
             ("DEM at 10⁶ spheres on 8 ranks: a rank's peak memory less the fixed pages, over the one-process "
              "peak / 8 (issue 66)", "mpi_rss_share_1e6", "<=", 1.5, "{:.2f}"),
             (f"DEM and CD colored bit-identical to one process on {FIG.get('mpi_identical_ranks', 16)} ranks "
              "and every count below (1: yes; issue 66)", "mpi_identical_top", ">=", 1, "{:.0f}")]
    rows = ["## Goals (issue 19) beside this run's figures", "",
            "| goal | target | measured | met |", "|---|---|---|---|"]
    for name, key, op, target, fmt in goals:
        if key not in FIG:
            continue
        v = FIG[key]
        met = {">=": lambda: v >= target, "<=": lambda: v <= target, ">": lambda: v > target,
               "within": lambda: target[0] <= v <= target[1]}[op]()
        tgt = f"{target[0]}–{target[1]}" if op == "within" else f"{op.replace('>=', '≥').replace('<=', '≤')} {target:g}"
        shown = fmt.format(v) + (f" ({fmt.format(SPREAD[key][0])}–{fmt.format(SPREAD[key][1])})"
                                 if key in SPREAD else "")
        rows.append(f"| {name} | {tgt} | {shown} | {'yes' if met else '**no**'} |")
    missing = ([] if "dem_top_threads" in FIG else
               ["16 threads (a machine of 2 cores, or BENCH_ONLY left the threads section out; the 2-thread "
                "figures stand in)"]) + ([] if "lammps_bytes_65600" in FIG else
                                         ["LAMMPS's memory per particle (≈ 1.1 kB in an earlier run)"])
    notes = []
    if "lammps_bytes_65600" in FIG and "dem_bytes_65600" in FIG:
        notes.append(f"Memory at 65,600 spheres beside LAMMPS in this run: cdlab {FIG['dem_bytes_65600']:.0f} B per "
                     f"particle, LAMMPS {FIG['lammps_bytes_65600']:.0f} B"
                     + (f"; without the program's and shared libraries' pages (RssFile) "
                        f"{FIG['dem_bytes_65600'] - FIG['dem_file_bytes_65600']:.0f} B against "
                        f"{FIG['lammps_bytes_65600'] - FIG['lammps_file_bytes_65600']:.0f} B"
                        if "dem_file_bytes_65600" in FIG else "") + ".")
    tail = (["", "Not measured here: " + "; ".join(missing) + "."] if missing else []) + \
        (["", *notes] if notes else [])
    return rows + tail + [""] if len(rows) > 4 else []


def main():
    # a bench stopped by SIGTERM or SIGHUP ends as by an exception: the runs under way are
    # killed, the busy process too, the temporary folder removed
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, frame: sys.exit(128 + signum))
    if len(sys.argv) == 3 and sys.argv[1] == "--against":
        return main_against(os.path.abspath(sys.argv[2]))
    t_start = time.time()
    out = []
    only = os.environ.get("BENCH_ONLY")  # e.g. BENCH_ONLY=mpi: that section alone
    machine = probe()
    with tempfile.TemporaryDirectory() as tmp:
        for name, section in (("small", small_runs), ("cd", cd_cases), ("chute", chute_cases),
                              ("scaling", scaling), ("mpi", mpi_cases), ("mpi_memory", mpi_memory),
                              ("mpi_pattern", mpi_pattern),
                              ("threads", threads_cases), ("peers", peers)):
            if only == name or (not only and (name != "threads" or (os.cpu_count() or 1) > 2)):
                section(tmp, out)
    machine_end = probe() if machine else None
    if "BENCH_COMMIT" in os.environ:  # a copy without .git (a lent machine): the commit built, and how
        commit, dirty = os.environ["BENCH_COMMIT"], os.environ.get("BENCH_DIRTY") == "1"
    else:
        commit = subprocess.run(["git", "-C", root, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                                text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "diff", "--quiet", "HEAD"]).returncode != 0
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
    cc = os.environ.get("BENCH_CC") or subprocess.run(["gcc", "--version"], capture_output=True,
                                                      text=True).stdout.split("\n")[0]
    flags = os.environ.get("BENCH_FLAGS", "?")
    date = datetime.date.today().isoformat()
    head = [f"# cdlab benchmark {date}, commit {commit}{'-dirty' if dirty else ''}", "",
            f"- machine: {cpu}, {os.cpu_count()} cores, {os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB, "
            f"{platform.system()} {platform.release()}",
            f"- compiler: {cc}; flags: `{flags}`",
            f"- every figure: median of 3 runs (the thread ratios: of 3 paired runs, the thread counts "
            f"alternating, with their range; the threads section: of {FIG.get('threads_reps', os.environ.get('BENCH_REPS', '3'))}); "
            f"`make bench` wall time {(time.time() - t_start) / 60:.1f} min",
            *probe_lines(machine, machine_end), ""]
    md = head + goals_table(machine, machine_end) + out
    notes = os.path.join(root, "bench", "PROFILE.md")
    if os.path.exists(notes):  # the profile and what was tried, for the targets not met
        md += ["", "## Profile, what was tried, best figures (bench/PROFILE.md)", "",
               open(notes).read().rstrip()]
    results = os.environ.get("BENCH_RESULTS", os.path.join(root, "bench", "results"))
    os.makedirs(results, exist_ok=True)
    path = os.path.join(results, f"{date}-{commit}{'-' + only if only else ''}.md")
    write_text(path, "\n".join(md) + "\n")
    print("\n".join(md))
    print(f"written: {path}")


if __name__ == "__main__":
    main()

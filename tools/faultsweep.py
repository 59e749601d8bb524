#!/usr/bin/python3
"""One failed write at a time, over every write of a short run: no run may end "completed" with
a file other than the fault-free run's (docs/output.md, "Verified files").

    tools/faultsweep.py CDLAB [--runs cd,dem] [--errors EIO,ENOSPC] [--every K] [--dir D]

For each run (a short CD and a short DEM run, each with snapshots, checkpoints and the
checkpoint's copy), the fault-free run is made first and its pwrite64 calls counted (strace:
HDF5's writes, the XDMF sidecar's). Then, for each write k (every K-th with --every), the run is
made again with write k failing (strace -e inject=pwrite64:error=E:when=k), and:

- exit 0: the output must say "completed" and hold what the fault-free run's does, dataset by
  dataset and attribute by attribute (tools/h5compare.py, provenance and timings skipped);
- exit 1: a message on stderr; no file named as the output may say "completed"; where the
  output can be read, its /summary says how the run ended (and, where a failed write left it
  short, what it was proven to hold); where it holds a checkpoint, a restart from it (for
  every fifth fault) must complete;
- exit 2 (refused before it started: the output could not be created): nothing left behind;
- any other exit (a crash, a signal): a failure.

Exit 0 when every fault ended so; the failures are listed, one line each."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
from cdlab import h5compare

import h5py

# name: (config, arguments): short, with every kind of output
RUNS = {
    "cd": ("tests/memcheck/cd.ini",
           ["--set", "system.steps=40", "--set", "output.every=10",
            "--set", "output.checkpoint_every=20"]),
    "dem": ("tests/memcheck/dem.ini",
            ["--set", "system.steps=600", "--set", "output.every=100",
             "--set", "output.checkpoint_every=200"]),
}


def run(cdlab, name, out, inject=None, restart=None, steps_set=True, more_steps=0):
    cfg, args = RUNS[name]
    if more_steps:  # a restart from the last step's checkpoint: run on past it
        args = [a if not a.startswith("system.steps=") else
                f"system.steps={int(a.split('=')[1]) + more_steps}" for a in args]
    cmd = [cdlab, "run", os.path.join(ROOT, cfg), "-o", out, "-q", "--threads", "1"] + args
    if restart:
        cmd += ["--restart", restart]
    if inject:
        cmd = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=pwrite64",
               "-e", f"inject=pwrite64:{inject}"] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, errors="replace")


def count_writes(cdlab, name, out):
    log = out + ".strace"
    cfg, args = RUNS[name]
    cmd = ["strace", "-f", "-qq", "-o", log, "-e", "trace=pwrite64", cdlab, "run",
           os.path.join(ROOT, cfg), "-o", out, "-q", "--threads", "1"] + args
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"faultsweep: the fault-free {name} run failed: {p.stderr.strip()}")
    with open(log) as f:
        n = sum(1 for line in f if "pwrite64(" in line)
    os.remove(log)
    return n


def status_of(path):
    """The output's /summary@status, '' where there is none, None where it cannot be read."""
    try:
        with h5py.File(path, "r") as f:
            if "summary" not in f or "status" not in f["summary"].attrs:
                return ""
            v = f["summary"].attrs["status"]
            return v.decode(errors="replace") if isinstance(v, bytes) else str(v)
    except Exception:
        return None


def same(ref, path):
    with open(os.devnull, "w") as sink:
        return h5compare.compare(ref, path, out=sink) == 0


def clean(d):
    for f in os.listdir(d):
        os.remove(os.path.join(d, f))


def one_fault(cdlab, name, ref, work, err, k, try_restart):
    """The run with write k failing with err, in folder work: its failures (a list of lines) and
    whether it left a checkpoint to restart from."""
    failures = []
    os.makedirs(work, exist_ok=True)
    clean(work)
    out = os.path.join(work, "out.h5")
    p = run(cdlab, name, out, inject=f"error={err}:when={k}")
    tag = f"{name} {err} at write {k}"
    files = sorted(os.listdir(work))
    if p.returncode == 0:
        st = status_of(out)
        if st != "completed":
            failures.append(f"{tag}: exit 0 but /summary@status {st!r}")
        elif not same(ref, out):
            failures.append(f"{tag}: exit 0, completed, but the file differs from the fault-free "
                            "run's")
        return failures, False
    if p.returncode == 2 and not files:
        return failures, False  # refused before it started (the output's creation): nothing left
    if p.returncode != 1:
        return failures + [f"{tag}: exit {p.returncode}: {p.stderr.strip()[-300:]}"], False
    if not p.stderr.strip():
        failures.append(f"{tag}: exit 1 without a message")
    for f in files:
        if f.endswith(".h5") or f.endswith(".partial") and ".h5" in f:
            if status_of(os.path.join(work, f)) == "completed":
                failures.append(f"{tag}: exit 1 but {f} says completed")
    # a file that can be read says how the run ended (a file left whole: the error; one a failed
    # write cut short: "failed: ..., the file holds ...")
    st = status_of(out) if os.path.exists(out) else None
    if st == "":
        failures.append(f"{tag}: {os.path.basename(out)} has no /summary@status")
    held = None
    try:
        with h5py.File(out, "r") as f:
            held = int(f["summary"].attrs.get("checkpoint_held", -1))
    except Exception:
        pass
    if held is not None and held >= 0 and try_restart:
        # a restart from the file that failed continues to the fault-free end
        again = os.path.join(work, "again.h5")
        steps = int(next(a for a in RUNS[name][1] if a.startswith("system.steps=")).split("=")[1])
        # from the last step's checkpoint nothing is left to do (refused, rightly): run on by 10
        q = run(cdlab, name, again, restart=out, more_steps=10 if held >= steps else 0)
        if q.returncode != 0:
            failures.append(f"{tag}: --restart from its checkpoint of step {held} failed: "
                            f"{q.stderr.strip()[-300:]}")
        elif status_of(again) != "completed":
            failures.append(f"{tag}: the restart did not complete")
    return failures, held is not None and held >= 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cdlab")
    ap.add_argument("--runs", default="cd,dem")
    ap.add_argument("--errors", default="EIO,ENOSPC")
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2, help="faulty runs at a time (default 2)")
    ap.add_argument("--dir")
    a = ap.parse_args()
    if not shutil.which("strace"):
        sys.exit("faultsweep: needs strace (apt-get install strace; make deps installs it)")
    top = a.dir or tempfile.mkdtemp(prefix="cdlab-faults-")
    failures, tried = [], 0
    for name in a.runs.split(","):
        refdir = os.path.join(top, name + "-ref")
        os.makedirs(refdir, exist_ok=True)
        clean(refdir)
        ref = os.path.join(refdir, "ref.h5")
        n = count_writes(a.cdlab, name, ref)
        print(f"faultsweep: {name}: {n} writes, each failed in turn with {a.errors}", flush=True)
        tasks = [(err, k) for err in a.errors.split(",") for k in range(1, n + 1, a.every)]
        # every fifth fault (by its place in the list) that leaves a checkpoint is restarted
        with ThreadPoolExecutor(max(1, a.jobs)) as ex:
            futures = [ex.submit(one_fault, a.cdlab, name, ref,
                                 os.path.join(top, f"{name}-{i % max(1, a.jobs)}-{i}"), err, k,
                                 i % 5 == 0)
                       for i, (err, k) in enumerate(tasks)]
            for fut in futures:
                got, _ = fut.result()
                failures += got
                tried += 1
        for d in os.listdir(top):
            if d.startswith(f"{name}-") and not d.endswith("-ref"):
                shutil.rmtree(os.path.join(top, d), ignore_errors=True)
        print(f"faultsweep: {name}: done, {len(failures)} failure(s) so far", flush=True)
    for f in failures:
        print("FAIL " + f)
    print(f"faultsweep: {tried} faulty runs, {len(failures)} failure(s)")
    if not a.dir:
        shutil.rmtree(top, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Run by tests/check_python.c (python_h5compare_continued): h5compare --continued holds a run
continued from a checkpoint (--restart) against the uninterrupted one.

    compare_continued.py CDLAB DIR
The chain for 3000 steps whole; the same for 1700 steps, continued to 3000: --continued finds
them bit-identical (exit 0; the whole run's earlier snapshots and the continued run's first one,
at its checkpoint's step, listed as allowed); the continuation at another N_I differs (exit 1);
a file that is no continued run is refused (exit 2); without --continued the pair differs.
Prints "compare continued: ok" and exits 0, else an AssertionError."""
import os
import subprocess
import sys

cdlab, top = sys.argv[1], sys.argv[2]
root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ini = os.path.join(root, "experiments", "chain1d", "chain1d.ini")
tool = [sys.executable, os.path.join(root, "tools", "h5compare.py")]


def run(out, steps, *more):
    subprocess.run([cdlab, "run", ini, "-o", os.path.join(top, out), "--quiet", "--set",
                    f"system.steps={steps}", "--set", "output.every=500", *more], check=True)
    return os.path.join(top, out)


def compare(*args):
    return subprocess.run(tool + list(args), capture_output=True, text=True)


whole = run("whole.h5", 3000)
half = run("half.h5", 1700)
cont = run("cont.h5", 3000, "--restart", half)
other = run("other.h5", 3000, "--restart", half, "--set", "solver.iterations=50")
p = compare(whole, cont, "--continued")
assert p.returncode == 0 and "bit-identical" in p.stdout, p.stdout + p.stderr
assert "against the first file's from row 1700" in p.stdout, p.stdout
assert "/snapshots/00001700: the continued run's first snapshot" in p.stdout, p.stdout
assert "/snapshots/00001500: before the continued run" in p.stdout, p.stdout
p = compare(whole, other, "--continued")
assert p.returncode == 1 and "/series/probe_position: differs" in p.stdout, p.stdout + p.stderr
p = compare(whole, half, "--continued")
assert p.returncode == 2 and "not a continued run" in p.stderr, p.stdout + p.stderr
p = compare(whole, cont)
assert p.returncode == 1, p.stdout
print("compare continued: ok")

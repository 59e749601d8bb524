#!/usr/bin/python3
"""Run by tests/check_python.c (python_colour_rounds): tools/colour_rounds.py on snapshots whose
answers are known by hand.

    colour_rounds.py DIR
A chain of 8 disks along x, contacts (k, k+1), ids in chain order: the key-order colouring
alternates 2 colours; on P ranks cut by count along x each contact waits for the one before
it, so the rounds are the ranks the chain crosses: 1 on 1 rank, 2 on 2, 7 on 8 (a disk a
rank, a contact on its body 1's rank). Disk 3 frozen: the chain is cut there, 4 rounds on 8
ranks. Three disks all touching: 3 colours in either order. A file without snapshots, a
snapshot without contacts and a bad --ranks are refused with a message and exit status 1.
Prints "colour rounds: ok" and exits 0, else an AssertionError."""
import os
import subprocess
import sys

import h5py
import numpy as np

top = sys.argv[1]
root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(root, "tools"))
import colour_rounds  # noqa: E402

tool = [sys.executable, os.path.join(root, "tools", "colour_rounds.py")]


def snapshot(path, positions, pairs, frozen=None):
    with h5py.File(path, "w") as f:
        s = f.create_group("snapshots/00000010")
        n = len(positions)
        s["id"] = np.arange(n, dtype=np.int64)[::-1]  # stored in reverse: read by id
        s["position"] = np.array(positions, dtype=float)[::-1]
        s["contacts/pair"] = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        if frozen is not None:
            s["frozen"] = np.array(frozen, dtype=np.uint8)[::-1]
    return path


def report(path, *more):
    p = subprocess.run(tool + [path] + list(more), capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


chain = [(float(k), 0.0, 0.0) for k in range(8)]
links = [(k, k + 1) for k in range(7)]
rc, out = report(snapshot(os.path.join(top, "chain.h5"), chain, links), "--ranks", "1,2,8")
assert rc == 0, out
key = [line for line in out.splitlines() if line.startswith("priority key")]
assert key and "2 colours" in key[0] and "rounds on 1: 1, 2: 2, 8: 7 ranks" in key[0], out
assert "8 particles (0 frozen), 7 contacts" in out, out

rc, out = report(snapshot(os.path.join(top, "cut.h5"), chain, links, [k == 3 for k in range(8)]),
                 "--ranks", "8")
assert rc == 0, out
key = [line for line in out.splitlines() if line.startswith("priority key")]
assert key and "rounds on 8: 4 ranks" in key[0] and "(1 frozen)" in out, out

movable = np.ones(3, bool)
assert colour_rounds.colours([(0, 1), (1, 2), (0, 2)], movable) == 3
assert colour_rounds.colours([(0, 2), (0, 1), (1, 2)], movable) == 3
assert colour_rounds.colours([(-1, 0), (-1, 1), (-1, 2)], movable) == 1  # a fixed wall shared

with h5py.File(os.path.join(top, "empty.h5"), "w") as f:
    f.create_group("series")
rc, out = report(os.path.join(top, "empty.h5"))
assert rc == 1 and "has no snapshots" in out, out
rc, out = report(snapshot(os.path.join(top, "none.h5"), chain, []))
assert rc == 1 and "has no contacts" in out, out
rc, out = report(os.path.join(top, "chain.h5"), "--ranks", "2,x")
assert rc == 1 and "--ranks" in out, out
rc, out = report(os.path.join(top, "chain.h5"), "--snapshot", "11")
assert rc == 1 and "no snapshot of step 11" in out, out
print("colour rounds: ok")

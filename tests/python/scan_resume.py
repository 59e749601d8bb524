#!/usr/bin/python3
"""Run by tests/check_python.c (python_scan_resume): a scan of 12 rows (N_I x sweep on the 1D
chain) is killed (SIGKILL) once some rows are done, resumed, and its table checked.

    scan_resume.py CDLAB DIR
Checks, each an assertion with its message:
  - the killed scan's rows end cleanly (their cdlab got SIGTERM from the scan's death): no
    .partial is left, and the table written before the kill is whole and lists the rows done;
  - the resumed scan skips the rows done (their files are the same inode and mtime) and runs
    the others: all 12 completed, steps_done = the config's steps in every row;
  - results.csv and results.h5 hold the same 12 rows, the figures read from each row's file
    (elasticity.q: 0.797 for random, 0.5 for jacobi, to 1e-12), and a row's final chain
    position equals that of a direct cdlab run of the same --set values, bit for bit;
  - a second resume runs nothing; another grid on the folder is refused (exit 2) and leaves
    results.csv byte for byte;
  - a row completed by another build runs again, its file replaced in place (none to stale/);
  - rows that continue a checkpoint (a row's "restart") are continued runs of that file, kept
    on a rerun, and run again once the file is newer than they are.
Prints "scan resume: ok (K rows done before the kill)" and exits 0, else an AssertionError."""
import csv
import glob
import os
import re
import signal
import subprocess
import sys
import time

import h5py
import numpy as np

from cdlab import Run

cdlab, top = sys.argv[1], sys.argv[2]
root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ini = os.path.join(root, "experiments", "chain1d", "chain1d.ini")
folder = os.path.join(top, "scan")
STEPS = 3000
args = [sys.executable, "-m", "cdlab", "scan", ini, folder,
        "--grid", "solver.iterations=10,20,40,80,160,320", "--grid", "solver.sweep=random,jacobi",
        "--set", f"system.steps={STEPS}", "--set", "output.every=0", "--jobs", "2",
        "--figure", "elasticity.q", "--figure", "series.probe_position.last",
        "--figure", "summary.steps_done"]
env = dict(os.environ, CDLAB=cdlab)


def table():
    with open(os.path.join(folder, "results.csv"), newline="") as f:
        return list(csv.DictReader(f))


p = subprocess.Popen(args, env=env, stderr=subprocess.DEVNULL)
done_before = []
deadline = time.time() + 300
while time.time() < deadline and p.poll() is None:
    try:
        done_before = [r["row"] for r in table() if r["status"] == "completed"]
    except (OSError, KeyError):
        done_before = []
    if len(done_before) >= 2:
        break
    time.sleep(0.02)
assert p.poll() is None, f"the scan ended (exit {p.returncode}) before it could be killed"
p.send_signal(signal.SIGKILL)
p.wait()
# its rows' cdlab processes end after their current step (SIGTERM on the scan's death)
deadline = time.time() + 120
while glob.glob(os.path.join(folder, "rows", "*.partial")) and time.time() < deadline:
    time.sleep(0.05)
assert not glob.glob(os.path.join(folder, "rows", "*.partial")), "a row's .partial was left"
time.sleep(0.2)
before = table()
assert len(before) == 12, f"the table before the kill has {len(before)} rows"
done_before = [r["row"] for r in before if r["status"] == "completed"]
assert 2 <= len(done_before) < 12, f"{len(done_before)} rows done at the kill"
kept = {r: os.stat(os.path.join(folder, "rows", f"{int(r):04d}.h5")) for r in done_before}

rc = subprocess.run(args, env=env, stderr=subprocess.PIPE, text=True)
assert rc.returncode == 0, f"resume: exit {rc.returncode}: {rc.stderr}"
# a row whose cdlab finished its last step as the scan died is completed on disk though the
# table never said so: the resume counts it done as well
m = re.search(r"(\d+) already done", rc.stderr)
assert m and len(done_before) <= int(m.group(1)) < 12, rc.stderr
after = table()
assert [r["status"] for r in after] == ["completed"] * 12, [r["status"] for r in after]
for r in done_before:
    st = os.stat(os.path.join(folder, "rows", f"{int(r):04d}.h5"))
    assert (st.st_ino, st.st_mtime_ns) == (kept[r].st_ino, kept[r].st_mtime_ns), f"row {r} rerun"
with h5py.File(os.path.join(folder, "results.h5"), "r") as f:
    t = f["table"]
    assert list(t["row"][()]) == list(range(12))
    assert list(t["solver.iterations"][()]) == [10, 10, 20, 20, 40, 40, 80, 80, 160, 160, 320, 320]
    q = t["elasticity.q"][()]
    steps = t["summary.steps_done"][()]
    xlast = t["series.probe_position.last[0]"][()]
for i, r in enumerate(after):
    assert int(r["summary.steps_done"]) == STEPS and steps[i] == STEPS, r
    want = 0.5 if r["solver.sweep"] == "jacobi" else (4 * np.sqrt(np.e) - 5) / 2
    assert abs(q[i] - want) <= 1e-12 and abs(float(r["elasticity.q"]) - want) <= 1e-12, (i, q[i])
    run = Run(os.path.join(folder, r["file"]))
    assert run.value("solver.iterations") == int(r["solver.iterations"])
    assert run.series("probe_position")[-1].ravel()[0] == xlast[i], i
# a row against a direct run of the same values (a resumed row among them)
row = next(int(r["row"]) for r in after if r["row"] not in done_before)
direct = os.path.join(top, "direct.h5")
r = after[row]
subprocess.run([cdlab, "run", ini, "-o", direct, "--quiet", "--threads", "1",
                "--set", f"solver.iterations={r['solver.iterations']}",
                "--set", f"solver.sweep={r['solver.sweep']}", "--set", f"system.steps={STEPS}",
                "--set", "output.every=0"], check=True)
a = Run(direct).series("probe_position")
b = Run(os.path.join(folder, r["file"])).series("probe_position")
assert np.array_equal(a, b), f"row {row} differs from a direct run"
# nothing left to run; another grid is refused and changes nothing
again = subprocess.run(args, env=env, stderr=subprocess.PIPE, text=True)
assert again.returncode == 0 and "12 already done" in again.stderr, again.stderr
csv_bytes = open(os.path.join(folder, "results.csv"), "rb").read()
other = [a.replace("solver.sweep=random,jacobi", "solver.sweep=random") for a in args]
refused = subprocess.run(other, env=env, stderr=subprocess.PIPE, text=True)
assert refused.returncode == 2 and "holds another scan" in refused.stderr, refused.stderr
assert open(os.path.join(folder, "results.csv"), "rb").read() == csv_bytes
# a row completed by another build runs again in place: cdlab replaces its file once the new
# run completes, and nothing of it goes to stale/
with h5py.File(os.path.join(folder, "rows", "0003.h5"), "a") as f:
    f["build"].attrs["git_commit"] = "0000000another"
stale_before = sorted(os.listdir(os.path.join(folder, "stale"))) \
    if os.path.isdir(os.path.join(folder, "stale")) else []
rc = subprocess.run(args, env=env, stderr=subprocess.PIPE, text=True)
assert rc.returncode == 0 and "11 already done" in rc.stderr, rc.stderr
stale_after = sorted(os.listdir(os.path.join(folder, "stale"))) \
    if os.path.isdir(os.path.join(folder, "stale")) else []
assert stale_after == stale_before, (stale_before, stale_after)
assert Run(os.path.join(folder, "rows", "0003.h5")).build["git_commit"] != "0000000another"
# rows that continue a checkpoint (a row's "restart"): each is the continued run of its file,
# done while newer than that file; the file made again reruns them
from cdlab.scan import run_rows, row_file  # noqa: E402
pre = os.path.join(top, "pre.h5")
subprocess.run([cdlab, "run", ini, "-o", pre, "--quiet", "--set", "system.steps=1000",
                "--set", "output.every=0"], check=True)
cont_rows = [{"restart": pre, "system.steps": 1500, "solver.iterations": n} for n in (40, 80)]
cont = os.path.join(top, "cont")
files = run_rows(ini, cont_rows, cont, sets={"output.every": 0}, cdlab=cdlab, progress=False)
for f in files:
    r = Run(f)
    assert int(r.restart["from_step"]) == 1000 and r.summary["steps_done"] == 1500, f
assert row_file(cont, {"solver.iterations": 80}) == files[1]
kept = [os.stat(f).st_mtime_ns for f in files]
run_rows(ini, cont_rows, cont, sets={"output.every": 0}, cdlab=cdlab, progress=False)
assert [os.stat(f).st_mtime_ns for f in files] == kept, "rows continued again from the same file"
time.sleep(0.05)
os.utime(pre)  # the checkpoint's file made again: the rows continue it again
run_rows(ini, cont_rows, cont, sets={"output.every": 0}, cdlab=cdlab, progress=False)
assert all(os.stat(f).st_mtime_ns > k for f, k in zip(files, kept)), "rows older than their restart kept"
print(f"scan resume: ok ({len(done_before)} rows done before the kill)")

#!/usr/bin/python3
"""Run by tests/check_python.c (python_config_run): cdlab driven from Python (cdlab/runs.py).

    drive.py DIR          (CDLAB names the program)
Checks: a config file with overrides runs and returns its Run, the overrides in its parameters
(typed) and its banner passed on; a config from scratch runs as its INI text says; a refused
key raises RunError with cdlab's "did you mean" line and exit status 2, and an existing output
is kept (RunError, the file byte for byte). Prints "drive: ok" and exits 0."""
import io
import os
import sys

from cdlab import Config, RunError

top = sys.argv[1]
root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
chain = os.path.join(root, "experiments", "chain1d", "chain1d.ini")

banner = io.StringIO()
sys_stderr, sys.stderr = sys.stderr, banner
try:
    r = Config(chain, {"solver.iterations": 80, "system.steps": 50}).set("solver.sweep", "jacobi") \
        .run(os.path.join(top, "a.h5"))
finally:
    sys.stderr = sys_stderr
assert r.value("solver.iterations") == 80 and r.value("solver.sweep") == "jacobi", r.params
assert r.summary["steps_done"] == 50, r.summary
assert "N_I = 80" in banner.getvalue() or "80 sweeps" in banner.getvalue(), banner.getvalue()[:2000]

scratch = Config.new({"system.dimension": 1, "system.dt": 1.0, "system.steps": 12,
                      "particles.count": 5, "particles.radius": 0.5, "particles.mass": 1,
                      "particles.origin": [1.5, 0, 0], "plane.wall.point": [0, 0, 0],
                      "plane.wall.normal": [1, 0, 0], "load.particles": -1,
                      "load.force": [-0.05, 0, 0], "output.every": 0})
assert "[plane.wall]\npoint = 0 0 0\n" in scratch.text(), scratch.text()
s = scratch.run(os.path.join(top, "b.h5"), progress=False)
assert s.summary["steps_done"] == 12 and s.value("particles.origin") == [1.5, 0, 0], s.params

try:
    Config(chain, {"solver.iteration": 3}).run(os.path.join(top, "c.h5"), progress=False)
    raise AssertionError("a misspelt key ran")
except RunError as e:
    assert e.returncode == 2 and "did you mean 'iterations'" in e.message, (e.returncode, e.message)
assert not os.path.exists(os.path.join(top, "c.h5"))

before = open(os.path.join(top, "a.h5"), "rb").read()
try:
    Config(chain).run(os.path.join(top, "a.h5"), progress=False)
    raise AssertionError("an existing output was replaced")
except RunError as e:
    assert e.returncode == 2 and "exists" in e.message, e.message
assert open(os.path.join(top, "a.h5"), "rb").read() == before
print("drive: ok")

"""cdlab's outputs (docs/output.md) in Python: numpy arrays from an HDF5 file, and a command line.

With Debian's python3 and its python3-h5py, python3-numpy (python3-matplotlib for plots):

    # PYTHONPATH=tools (from the repository's root), or `make install`
    from cdlab import Run
    r = Run("out.h5")
    r.params["solver.iterations"]          # resolved parameters, as strings
    r.value("solver.iterations")           # ... typed: 40, 0.01, True, [0, 0, -9.81], "random"
    r.p("system.dt", float)                # ... converted
    r.series("t"), r.series("kinetic_energy"), r.series("probe_position")
    r.probe_path()                         # the probes' positions, unwrapped in a periodic box
    r.series_names()                        # what the file has
    r.energy()                             # DEM ledger: dict of arrays
    r.snapshot()                           # last snapshot: dict with positions, contacts, ...
    r.snapshot(input_order=True)           # ... rows and contact ids in the input's order
    r.input_index                          # particles.order = spatial: each id's input index

Running cdlab from Python (cdlab/runs.py) and parameter scans (cdlab/scan.py):

    from cdlab import Config, scan
    r = Config("experiments/chain1d/chain1d.ini", {"solver.iterations": 80}).run("c80.h5")
    table = scan("experiments/chain1d/chain1d.ini", [{"solver.iterations": n} for n in (10, 20)],
                 "scan1", figures=["elasticity.q", "series.kinetic_energy.max"])

The command line (tools/cdlab-py runs Debian's /usr/bin/python3 whatever is first on PATH):

    tools/cdlab-py summary OUT.h5           # what the run was and how it ended
    tools/cdlab-py series OUT.h5 kinetic_energy [--every K]   # columns t, value(s)
    tools/cdlab-py plot OUT.h5 kinetic_energy mean_overlap --png out.png
    PYTHONPATH=tools /usr/bin/python3 -m cdlab summary OUT.h5  # the same
"""
import sys

try:
    import h5py
    import numpy as np
except ImportError as _e:  # another python3 first on PATH: one line that says what to do
    raise ImportError(f"cdlab needs numpy and h5py, and this python ({sys.executable}) has no "
                      f"{_e.name}: run Debian's /usr/bin/python3 (make deps installs "
                      "python3-numpy and python3-h5py)") from None


def _text(v):
    """An attribute's text as cdlab stores it (bytes, meant as UTF-8): a byte that is no UTF-8
    (a Latin-1 config comment or output name) is kept in the file and shown as U+FFFD."""
    if isinstance(v, np.ndarray) and v.shape == ():
        v = v[()]
    return v.decode("utf-8", errors="replace") if isinstance(v, (bytes, np.bytes_)) else str(v)


def in_step_order(names):
    """Snapshot or checkpoint group names in step order: zero-padded to 8 digits, longer past
    step 99,999,999 (as text "100000000" sorts before "99999999")."""
    return sorted(names, key=lambda s: (len(s), s))


def typed(text):
    """A parameter's text as cdlab writes it (docs/output.md: /parameters) as a Python value."""
    if text in ("true", "false"):
        return text == "true"
    parts = text.replace(",", " ").split()

    def number(w):
        try:
            return int(w)
        except ValueError:
            return float(w)
    try:
        values = [number(w) for w in parts]
    except ValueError:
        return text
    if not values:
        return text
    return values[0] if len(values) == 1 else values


class NotCdlabOutput(ValueError):
    """An HDF5 file that is no cdlab output (an FCLIB export, another program's file)."""


class MissingData(KeyError):
    """A cdlab output without what was asked of it (a CD run's energy ledger, a series the
    run did not write); str() is the message."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


class Run:
    def __init__(self, path):
        self.path = path
        with h5py.File(path, "r") as f:
            if "parameters" not in f or "build" not in f:
                raise NotCdlabOutput(f"{path}: an HDF5 file, but not a cdlab output "
                                     "(no /parameters and /build)")
            self.params = {k: _text(v) for k, v in f["parameters"].attrs.items()}
            self.attrs = {k: _text(v) for k, v in f.attrs.items()}
            # the build that wrote it: git_commit, results_epoch, compiler, cflags, ...
            self.build = {k: (_text(v) if isinstance(v, (bytes, np.bytes_)) else v.item()
                              if hasattr(v, "item") else v) for k, v in f["build"].attrs.items()}
            self.summary = {k: v for k, v in f["summary"].attrs.items()} if "summary" in f else {}
            self.elasticity = dict(f["elasticity"].attrs) if "elasticity" in f else {}
            # a continued run: from_file, from_step (its summary's figures are over its own steps)
            self.restart = dict(f["restart"].attrs) if "restart" in f else {}
            self.snapshot_names = in_step_order(f["snapshots"].keys()) if "snapshots" in f else []
            # particles.order = spatial: the ids are the storage order, input_index[id] the
            # particle's input index (docs/output.md); None where ids are input indices
            self.input_index = f["input_index"][()] if "input_index" in f else None
        self.mode = self.params.get("system.mode", "cd")

    def value(self, key, default=None):
        """A parameter as a typed value: True/False for true/false, an int or a float for one
        number, a list of numbers for a vector or a list (`0 0 -9.81`), else the text; default
        (or KeyError naming the key) when the file has no such parameter."""
        if key not in self.params:
            if default is not None:
                return default
            raise KeyError(f"{self.path}: no parameter {key}")
        return typed(self.params[key])

    def p(self, key, conv=str, default=None):
        if key not in self.params:
            if default is not None:
                return default
            raise KeyError(f"{self.path}: no parameter {key}")
        v = self.params[key]
        return conv(v) if conv is not bool else v == "true"

    def series(self, name):
        with h5py.File(self.path, "r") as f:
            if "series/" + name not in f or not isinstance(f["series/" + name], h5py.Dataset):
                raise MissingData(f"{self.path}: no series {name!r}")
            return f["series/" + name][()]

    def period(self):
        """The periodic box's length along each axis, 0 along the others (system.periodic)."""
        axes = self.params.get("system.periodic", "none").split()
        if axes in ([], ["none"]):
            return np.zeros(3)
        lo = np.array(self.p("system.box_min").split(), dtype=float)
        hi = np.array(self.p("system.box_max").split(), dtype=float)
        return np.array([hi[a] - lo[a] if "xyz"[a] in axes else 0.0 for a in range(3)])

    def probe_path(self):
        """The probes' positions, rows x probes x 3, unwrapped in a periodic box (position +
        probe_image x period; series/probe_position is wrapped into the box)."""
        x = self.series("probe_position")
        if self.has_series("probe_image"):
            x = x + self.series("probe_image") * self.period()
        return x

    def mean_stress(self):
        """The particles' mean stress per row, rows x 3 x 3: /series/stress (the contacts
        between particles) plus /series/stress_walls (those with walls, pistons, cylinders).
        A file written before 2026-11-29 has no stress_walls: KeyError, not its stress alone."""
        if not self.has_series("stress_walls"):
            raise KeyError(f"{self.path}: no /series/stress_walls (written before 2026-11-29), so "
                           "its mean stress is not known from the series")
        return self.series("stress") + self.series("stress_walls")

    def series_names(self):
        """Every per-step series of the file (those of /series/energy as energy/NAME)."""
        names = []
        with h5py.File(self.path, "r") as f:
            f["series"].visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
        return sorted(n for n in names if n not in ("probe_ids",))

    def has_series(self, name):
        """A per-step series: not a group ("energy" gave a traceback), not /series/probe_ids."""
        return name in self.series_names()

    def energy(self):
        """DEM's energy ledger (/series/energy), a dict of arrays; MissingData for a CD run,
        which has none."""
        with h5py.File(self.path, "r") as f:
            if "series/energy" not in f:
                raise MissingData(f"{self.path}: no /series/energy: the energy ledger is written "
                                  f"by DEM runs (this is a system.mode = {self.mode} run)")
            g = f["series/energy"]
            return {k: g[k][()] for k in g}

    def snapshot(self, name=None, input_order=False):
        """A snapshot's datasets (the last one's unless name is given) and attributes. With
        input_order and a run in particles.order = spatial, the per-particle rows are put in the
        input's order (row k: input particle k) and the particle ids of `id` and
        `contacts/pair` become input indices (walls, negative, stay as they are); the
        contacts keep their order. Without that order the file's ids are input indices
        already and input_order changes nothing."""
        name = name or self.snapshot_names[-1]
        with h5py.File(self.path, "r") as f:
            g = f["snapshots/" + name]
            out = {k: g[k][()] for k in g if isinstance(g[k], h5py.Dataset)}
            out.update({"contacts/" + k: g["contacts"][k][()] for k in g["contacts"]})
            out.update({k: v for k, v in g.attrs.items()})
        ix = self.input_index
        if input_order and ix is not None:
            n = len(ix)
            rows = np.empty(n, dtype=np.int64)
            rows[ix] = np.arange(n)  # rows[k]: the id of input particle k
            for k, v in list(out.items()):
                if not k.startswith("contacts/") and isinstance(v, np.ndarray) and v.ndim >= 1 \
                        and v.shape[0] == n:
                    out[k] = v[rows]
            out["id"] = ix[out["id"]]
            pair = out["contacts/pair"].copy()
            body = pair >= 0
            pair[body] = ix[pair[body]]
            out["contacts/pair"] = pair
        return out


from .runs import Config, RunError, program  # noqa: E402 (they use Run)
from .scan import scan  # noqa: E402

"""Load a cdlab HDF5 output file (layout: docs/output.md) into numpy arrays.

    from cdlab_h5 import Run
    r = Run("out.h5")
    r.params["solver.iterations"]          # resolved parameters, as strings
    r.p("system.dt", float)                # ... converted
    r.series("t"), r.series("probe_position")
    r.energy()                             # DEM ledger: dict of arrays
    r.snapshot()                           # last snapshot: dict with positions, contacts, ...
"""
import h5py
import numpy as np


def _text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


class Run:
    def __init__(self, path):
        self.path = path
        with h5py.File(path, "r") as f:
            self.params = {k: _text(v) for k, v in f["parameters"].attrs.items()}
            self.attrs = {k: _text(v) for k, v in f.attrs.items()}
            self.summary = {k: v for k, v in f["summary"].attrs.items()} if "summary" in f else {}
            self.elasticity = dict(f["elasticity"].attrs) if "elasticity" in f else {}
            self.snapshot_names = sorted(f["snapshots"].keys()) if "snapshots" in f else []
        self.mode = self.params.get("system.mode", "cd")

    def p(self, key, conv=str, default=None):
        if key not in self.params:
            if default is not None:
                return default
            raise KeyError(f"{self.path}: no parameter {key}")
        v = self.params[key]
        return conv(v) if conv is not bool else v == "true"

    def series(self, name):
        with h5py.File(self.path, "r") as f:
            return f["series/" + name][()]

    def has_series(self, name):
        with h5py.File(self.path, "r") as f:
            return ("series/" + name) in f

    def energy(self):
        with h5py.File(self.path, "r") as f:
            g = f["series/energy"]
            return {k: g[k][()] for k in g}

    def snapshot(self, name=None):
        name = name or self.snapshot_names[-1]
        with h5py.File(self.path, "r") as f:
            g = f["snapshots/" + name]
            out = {k: g[k][()] for k in g if isinstance(g[k], h5py.Dataset)}
            out.update({"contacts/" + k: g["contacts"][k][()] for k in g["contacts"]})
            out.update({k: v for k, v in g.attrs.items()})
        return out

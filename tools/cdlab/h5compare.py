#!/usr/bin/python3
"""Compare two cdlab output files dataset by dataset (series, snapshots, checkpoints, every
other dataset and the attributes that are results), bit for bit or to a relative tolerance.

    tools/h5compare.py OLD.h5 NEW.h5              # bit-identical? first difference of each
    tools/h5compare.py OLD.h5 NEW.h5 --rtol 1e-12  # equal to round-off?
    tools/h5compare.py WHOLE.h5 CONTINUED.h5 --continued  # a restart against the run it continues

--continued: the second file continues (--restart) a run that the first holds whole: its series
rows are compared with the first file's rows from the checkpoint's step on, the snapshots and
checkpoints both files hold are compared (the first file's earlier ones are listed, not
counted), and of /summary only status and steps_done (its other figures are over the continued
run's own steps); /restart is skipped.

Provenance that differs between any two runs (build, run time, wall-clock timings, peak memory,
file names) is skipped. Exit status 0 when the files agree, 1 when they differ, 2 on a read
error. Every dataset that differs is reported with its first differing element and the largest
relative difference."""
import argparse
import sys

import h5py
import numpy as np

# attributes that describe the run's circumstances, not its results
SKIP_ATTRS = {"/build", "/summary@wall_seconds", "/summary@step_seconds", "/summary@solve_seconds",
              "/summary@timed_step_seconds", "/summary@peak_rss_kib", "/@config_file",
              "/restart@from_file", "/summary@threads", "/parameters@output.file",
              "/@command_line",
              # a distributed run's ranks and partition (docs/parallel.md)
              "/parallel", "/series/parallel"}


def skipped(path, attr=None):
    key = f"{path}@{attr}" if attr is not None else path
    # everything under /parallel (the ranks' step times and communication: /parallel/ranks) and
    # /series/parallel (the boundary's share, the colouring's rounds)
    return (key in SKIP_ATTRS or path in SKIP_ATTRS or path.startswith("/parallel/")
            or path.startswith("/series/parallel/"))


def walk(f):
    items = {}

    def visit(name, obj):
        items["/" + name] = obj
    f.visititems(visit)
    items["/"] = f
    return items


def bits_equal(a, b):
    """Element by element, whether a and b hold the same bytes (floats of two widths: none)."""
    if a.dtype != b.dtype:
        return np.zeros(a.shape, dtype=bool)
    ua, ub = (np.ascontiguousarray(x).reshape(-1).view(np.uint8).reshape(x.shape + (x.itemsize,))
              for x in (a, b))
    return (ua == ub).all(axis=-1)


def compare_values(a, b, rtol):
    """(equal, index of the first difference, largest relative difference)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False, f"shape {a.shape} vs {b.shape}", float("inf")
    if a.dtype.kind not in "fc":
        eq = np.array_equal(a, b)
        if eq:
            return True, None, 0.0
        idx = np.argwhere(a != b)[0] if a.ndim else ()
        return False, tuple(int(i) for i in idx), float("inf")
    if rtol > 0:
        same = (a == b) | (np.isnan(a) & np.isnan(b))
        scale = np.maximum(np.abs(a), np.abs(b))
        scale = np.where(scale > 0, scale, 1.0)
        rel = np.where(same, 0.0, np.abs(a - b) / scale)
        ok = rel <= rtol
    else:  # bit for bit: -0.0 is not 0.0 (== took them for equal), nor one NaN another
        same = bits_equal(a, b)
        rel = np.where(same, 0.0, np.inf)
        ok = same
    if ok.all():
        return True, None, float(rel.max()) if rel.size else 0.0
    idx = np.argwhere(~ok)[0] if a.ndim else ()
    with np.errstate(invalid="ignore"):
        d = np.abs(a - b) / np.maximum(np.maximum(np.abs(a), np.abs(b)), 1e-300)
    return False, tuple(int(i) for i in idx), float(np.nanmax(np.where(same, 0.0, d)))


def continued_rows(fa, fb):
    """The row of the first file's series where the second's (a continued run's) begin."""
    if "restart" not in fb:
        raise ValueError("--continued: the second file is not a continued run (no /restart)")
    ta, tb = fa["series/t"][()], fb["series/t"][()]
    hits = np.nonzero(bits_equal(ta, np.full_like(ta, tb[0])))[0] if len(tb) else []
    if len(hits) != 1:
        raise ValueError(f"--continued: the continued run's first row (t = {tb[0] if len(tb) else '?'}) "
                         "is not one row of the first file's series")
    return int(hits[0]), len(tb)


def compare(path_a, path_b, rtol=0.0, out=sys.stdout, new_keys=(), new_attrs=(), new_datasets=(),
            gone_attrs=(), continued=False):
    """Differences between two files (0: identical). new_keys: config keys that only the second
    file's /parameters echoes (keys a change added, with their defaults): listed, not counted.
    new_attrs: attribute names that a change added elsewhere (a checkpoint's recorded constants):
    where only the second file has one, listed, not counted. new_datasets: the same for datasets
    by their last name (a snapshot's `frozen`). gone_attrs: attribute names that a change removed
    (a CD checkpoint's zeros of the DEM law's constants): where only the first file has one,
    listed, not counted. continued: the second file continues the first's run (see the module)."""
    n_diff = 0
    with h5py.File(path_a, "r") as fa, h5py.File(path_b, "r") as fb:
        ia, ib = walk(fa), walk(fb)
        if continued:
            row0, nrows = continued_rows(fa, fb)
            first = int(fb["restart"].attrs["from_step"])
            out.write(f"continued run: its {nrows} series rows against the first file's from row "
                      f"{row0}\n")
        for name in sorted(set(ia) | set(ib)):
            if skipped(name) or (continued and (name == "/restart" or
                                                name.startswith("/restart/"))):
                continue
            if continued and name in ia and name not in ib and \
                    name.startswith(("/snapshots/", "/checkpoints/")):
                if name.count("/") == 2:
                    out.write(f"{name}: before the continued run, only in the first file (allowed)\n")
                continue
            if continued and name in ib and name not in ia and \
                    name.split("/")[1:3] == ["snapshots", f"{first:08d}"]:
                if name.count("/") == 2:  # the state it started from, the checkpoint's
                    out.write(f"{name}: the continued run's first snapshot, at its checkpoint's "
                              "step, only in the second file (allowed)\n")
                continue
            if name not in ia and name.rsplit("/", 1)[-1] in new_datasets \
                    and isinstance(ib[name], h5py.Dataset):
                out.write(f"{name}: a new dataset, only in the second file (allowed)\n")
                continue
            if name not in ia or name not in ib:
                out.write(f"{name}: only in {'the first' if name in ia else 'the second'} file\n")
                n_diff += 1
                continue
            oa, ob = ia[name], ib[name]
            if isinstance(oa, h5py.Dataset) != isinstance(ob, h5py.Dataset):
                out.write(f"{name}: a dataset in one file, a group in the other\n")
                n_diff += 1
                continue
            if isinstance(oa, h5py.Dataset):
                va = oa[()]
                if continued and name.startswith("/series/") and va.ndim and \
                        ob.shape[:1] == (nrows,) and va.shape[0] >= row0 + nrows:
                    va = va[row0:row0 + nrows]  # a per-row series: the continued run's rows
                ok, where, rel = compare_values(va, ob[()], rtol)
                if not ok:
                    bits = " (in the bits only: a zero's sign or a NaN's payload)" if rel == 0 else ""
                    out.write(f"{name}: differs first at {where}; largest relative difference {rel:.3g}{bits}\n")
                    n_diff += 1
            for attr in sorted(set(oa.attrs) | set(ob.attrs)):
                if skipped(name, attr):
                    continue
                if continued and name == "/summary" and attr not in ("status", "steps_done"):
                    continue
                if name == "/parameters" and attr in new_keys and attr in ob.attrs \
                        and attr not in oa.attrs:
                    out.write(f"{name}@{attr}: a new key, only in the second file "
                              f"({ob.attrs[attr]!r}; allowed)\n")
                    continue
                if attr in new_attrs and attr in ob.attrs and attr not in oa.attrs:
                    out.write(f"{name}@{attr}: a new attribute, only in the second file "
                              f"({ob.attrs[attr]!r}; allowed)\n")
                    continue
                if attr in gone_attrs and attr in oa.attrs and attr not in ob.attrs:
                    out.write(f"{name}@{attr}: removed, only in the first file "
                              f"({oa.attrs[attr]!r}; allowed)\n")
                    continue
                if attr not in oa.attrs or attr not in ob.attrs:
                    out.write(f"{name}@{attr}: only in one file\n")
                    n_diff += 1
                    continue
                va, vb = oa.attrs[attr], ob.attrs[attr]
                if isinstance(va, (bytes, str)) or isinstance(vb, (bytes, str)):
                    if va != vb:
                        out.write(f"{name}@{attr}: {va!r} vs {vb!r}\n")
                        n_diff += 1
                    continue
                ok, where, rel = compare_values(va, vb, rtol)
                if not ok:
                    out.write(f"{name}@{attr}: {va} vs {vb}\n")
                    n_diff += 1
    return n_diff


def report(a, b, rtol=0.0, continued=False):
    """Compare and print the verdict line; the exit status: 0 the same, 1 differences, 2 unreadable."""
    try:
        n = compare(a, b, rtol, continued=continued)
    except (OSError, ValueError) as e:
        print(f"h5compare: {e}", file=sys.stderr)
        return 2
    what = "bit-identical" if rtol == 0 else f"equal within {rtol:g}"
    print(f"{a} vs {b}: {'%d differences' % n if n else what}")
    return 1 if n else 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rtol", type=float, default=0.0, help="relative tolerance (default 0: bit for bit)")
    ap.add_argument("--continued", action="store_true",
                    help="b continues (--restart) the run that a holds whole: compare from its checkpoint on")
    a = ap.parse_args(argv)
    return report(a.a, a.b, a.rtol, a.continued)


if __name__ == "__main__":
    raise SystemExit(main())

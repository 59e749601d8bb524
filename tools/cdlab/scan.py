"""Parameter scans: one config, a table of --set values, a run per row in parallel processes,
one results table (CSV and HDF5) with chosen figures per row, resumable after a crash.

    cdlab scan experiments/chain1d/chain1d.ini DIR \\
        --grid solver.iterations=10,20,40 --grid solver.sweep=random,jacobi --jobs 2

    from cdlab.scan import scan
    table = scan("chain1d.ini", [{"solver.iterations": 10}, ...], "DIR",
                 figures=["elasticity.q", "series.kinetic_energy.max", my_function])

DIR holds (docs/howto/scan.md):
    scan.json            the scan's definition: config (and its SHA-256), fixed --set values, rows
    rows/NNNN.h5, .xmf   each row's output;   rows/NNNN.log   its banner, progress and messages
    results.csv          one line per row: row, status, file, its values, its figures
    results.h5           the same as /table/<column> datasets, the definition as attributes
    stale/               a killed or failed row's leftovers (its .partial, an interrupted or failed
                         file), moved there before it reruns

A row is done when its file says "completed", holds the row's values in its /parameters, was
written by the program that runs the scan (same commit and results epoch) and is newer than
every file its values name (a particle file; the checkpoint file of a row's "restart", which
continues that file's run); a resumed scan skips it and reruns every other row. The tables
are rewritten whole after each row (a kill leaves the last one whole). A folder that holds
another scan's definition is refused, as is a folder that another scan is running in."""
import csv
import fcntl
import functools
import hashlib
import io
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from . import NotCdlabOutput, Run, typed
from .runs import ini_value, program, run_passing_on, split_key
from .textfile import write_text

DEFAULT_FIGURES = ("summary.steps_done", "summary.wall_seconds", "summary.mean_sweeps")


class ScanError(RuntimeError):
    """A scan refused before any row ran (its message says why); nothing was changed."""


def grid(axes):
    """[(key, [v1, v2, ...]), ...] -> the rows of their product, the first key slowest."""
    keys = [k for k, _ in axes]
    return [dict(zip(keys, combo)) for combo in itertools.product(*[vs for _, vs in axes])]


def parse_grid(spec):
    """'solver.iterations=10,20,40' -> ('solver.iterations', [10, 20, 40])."""
    if "=" not in spec:
        raise ScanError(f"--grid {spec}: expected section.key=v1,v2,...")
    key, values = spec.split("=", 1)
    split_key(key)
    vs = [typed(v.strip()) for v in values.split(",") if v.strip()]
    if not vs:
        raise ScanError(f"--grid {spec}: no values")
    return key, vs


def read_table(path):
    """A CSV table of rows: a header of section.key names, a line per row."""
    with open(path, newline="", encoding="utf-8") as f:
        lines = list(csv.reader(f))
    if not lines or not lines[0]:
        raise ScanError(f"{path}: empty (expected a header of section.key names)")
    head = [h.strip() for h in lines[0]]
    for h in head:
        try:
            _check_key(h)
        except ValueError as e:
            raise ScanError(f"{path}: header: {e}") from None
    rows = []
    for n, line in enumerate(lines[1:], 2):
        if not any(c.strip() for c in line):
            continue
        if len(line) != len(head):
            raise ScanError(f"{path}:{n}: {len(line)} values for {len(head)} columns")
        rows.append({h: typed(c.strip()) for h, c in zip(head, line)})
    if not rows:
        raise ScanError(f"{path}: no rows")
    return rows


def _attr(run, group, name):
    table = {"summary": run.summary, "elasticity": run.elasticity}.get(group)
    if table is None:
        import h5py
        with h5py.File(run.path, "r") as f:
            table = dict(f[group].attrs) if group in f else {}
    if name not in table:
        raise KeyError(f"no /{group}@{name}")
    v = table[name]
    return v.decode() if isinstance(v, bytes) else (v.item() if hasattr(v, "item") else v)


REDUCE = {"last": lambda a: a[-1], "first": lambda a: a[0], "max": np.max, "min": np.min,
          "mean": np.mean}


def figure_of(spec):
    """A figure: its column name(s) and a function of a Run giving {name: value}."""
    if callable(spec):
        return getattr(spec, "__name__", "figure"), spec
    if ":" in spec:  # module:function -> {name: value}
        mod, fn = spec.split(":", 1)
        import importlib
        try:
            f = getattr(importlib.import_module(mod), fn)
        except (ImportError, AttributeError) as e:
            raise ScanError(f"--figure {spec}: {e}") from None
        return spec, f
    parts = spec.split(".")
    if parts[0] in ("summary", "elasticity") and len(parts) == 2:
        return spec, lambda r: {spec: _attr(r, parts[0], parts[1])}
    if parts[0] == "param" and len(parts) >= 3:
        key = ".".join(parts[1:])
        return spec, lambda r: {spec: r.value(key)}
    if parts[0] == "series" and len(parts) >= 3 and parts[-1] in REDUCE:
        name, red = ".".join(parts[1:-1]), REDUCE[parts[-1]]

        def f(r):
            a = np.asarray(r.series(name), dtype=float)
            if a.shape[0] == 0:
                raise KeyError(f"series {name} has no rows")
            v = red(a, axis=0) if parts[-1] in ("max", "min", "mean") else red(a)
            v = np.ravel(v)
            return {spec: float(v[0])} if v.size == 1 else \
                {f"{spec}[{i}]": float(x) for i, x in enumerate(v)}
        return spec, f
    raise ScanError(f"--figure {spec}: expected summary.NAME, elasticity.NAME, param.SECTION.KEY, "
                    "series.NAME.last|first|max|min|mean or module:function")


def _sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _same_value(a, b):
    ta, tb = typed(ini_value(a)), typed(ini_value(b))
    if isinstance(ta, float) or isinstance(tb, float):
        try:
            return float(ta) == float(tb)
        except (TypeError, ValueError):
            return False
    return ta == tb


def _lock_free(path):
    """No process holds cdlab's write lock on path (a .partial): its run was killed."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW)
    except OSError:
        return True
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


try:  # resolved in the scan's process, so that a row's process only calls it
    import ctypes
    _PRCTL = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):
    _PRCTL = None


def _pdeathsig(scan_pid):
    """In the row's process, before its exec: SIGTERM when the scan dies (a killed scan ends its
    rows cleanly). A scan that died between the fork and this call sends no signal: then the
    row's process ends itself here, before cdlab starts (else it would run its row beside the
    scan that resumes it)."""
    if _PRCTL is not None:
        _PRCTL(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() != scan_pid:
        os.kill(os.getpid(), signal.SIGTERM)


RESTART = "restart"  # a row's checkpoint file to continue from (cdlab run --restart), not a key


def _check_key(k):
    if k != RESTART:
        split_key(k)


class Scan:
    def __init__(self, config, rows, folder, sets=None, figures=None, jobs=None, threads=1,
                 progress=True, cdlab=None, retry_failed=False, launcher=None, env=None):
        self.config = os.path.abspath(config)
        if not os.path.isfile(self.config):
            raise ScanError(f"{config}: no such config file")
        if not rows:
            raise ScanError("no rows to run")
        self.rows = [dict(r) for r in rows]
        self.sets = dict(sets or {})
        for k in list(self.sets):
            split_key(k)
        for r in self.rows:
            for k in r:
                _check_key(k)
            if RESTART in r:
                r[RESTART] = os.path.abspath(str(r[RESTART]))
                if not os.path.isfile(r[RESTART]):
                    raise ScanError(f"restart {r[RESTART]}: no such file")
        self.folder = os.path.abspath(folder)
        self.figures = [figure_of(f) for f in (figures if figures is not None else DEFAULT_FIGURES)]
        self.jobs = jobs or os.cpu_count() or 1
        self.threads = threads
        self.progress = progress
        self.retry_failed = retry_failed
        self.cdlab = cdlab or program()
        # a launcher before cdlab (mpirun -np P), and variables for the rows' environment
        self.launcher = list(launcher or [])
        self.env = {**os.environ, **(env or {})}
        self.keys = list(dict.fromkeys(k for r in self.rows for k in r))
        self.rowdir = os.path.join(self.folder, "rows")
        self.results = [None] * len(self.rows)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.procs = {}  # row -> its running cdlab
        self.current_row = threading.local()

    # --- the definition -------------------------------------------------------------------
    def definition(self):
        return {"config": self.config, "config_sha256": _sha256(self.config),
                **({"launcher": self.launcher} if self.launcher else {}),
                "sets": {k: ini_value(v) for k, v in self.sets.items()},
                "rows": [{k: ini_value(v) for k, v in r.items()} for r in self.rows]}

    def _check_folder(self):
        """Refusals before anything is written; returns the lock file's descriptor."""
        if os.path.exists(self.folder) and not os.path.isdir(self.folder):
            raise ScanError(f"{self.folder}: exists and is not a folder")
        parent = os.path.dirname(self.folder)
        if not os.path.isdir(parent):
            raise ScanError(f"{parent}: no such folder (the scan's folder is made in it)")
        path = os.path.join(self.folder, "scan.json")
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                old = json.load(f)
            new = self.definition()
            what = [w for w in ("config", "config_sha256", "launcher", "sets", "rows")
                    if old.get(w) != new.get(w)]
            if what:
                raise ScanError(f"{self.folder} holds another scan (its {', '.join(what)} differ: "
                                f"scan.json): give a new folder, or remove that one")
        elif os.path.isdir(self.folder) and os.listdir(self.folder):
            raise ScanError(f"{self.folder}: a folder that is not empty and holds no scan.json; "
                            "give a new or empty folder")
        os.makedirs(self.rowdir, exist_ok=True)
        fd = os.open(os.path.join(self.folder, "scan.lock"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise ScanError(f"{self.folder}: another scan is running in it") from None
        if not os.path.exists(path):
            write_text(path, json.dumps(self.definition(), indent=1) + "\n")
        return fd

    # --- one row --------------------------------------------------------------------------
    def file(self, i):
        return os.path.join(self.rowdir, f"{i:04d}.h5")

    def _version(self):
        out = subprocess.run([self.cdlab, "--version"], capture_output=True, text=True, check=True)
        info = dict(ln.split(" ", 1) for ln in out.stdout.strip().split("\n")[1:] if " " in ln)
        return info.get("commit", "?"), info.get("results", "?").split()[-1]

    def done(self, i):
        """The row's file is whole, completed, of this program and holds the row's values."""
        path = self.file(i)
        if not os.path.exists(path):
            return False
        try:
            r = Run(path)
        except (OSError, NotCdlabOutput, KeyError):
            return False
        status = r.summary.get("status", b"")
        status = status.decode() if isinstance(status, bytes) else str(status)
        # "completed", "interrupted by signal ..." (it runs again), or the reason it failed
        if status.startswith("interrupted") or (status != "completed" and self.retry_failed):
            return False
        if (r.build.get("git_commit"), str(r.build.get("results_epoch"))) != self.version:
            return False
        want = {**self.sets, **self.rows[i]}
        restart = want.pop(RESTART, None)
        if not all(k in r.params and _same_value(r.params[k], v) for k, v in want.items()):
            return False
        came = r.restart.get("from_file")
        came = came.decode() if isinstance(came, bytes) else came
        if restart is not None and not (came is not None and
                                        os.path.abspath(str(came)) == restart):
            return False  # continued from another file
        # older than a file that its values name (a particle file, its checkpoint made again)
        named = [v for v in list(want.values()) + [restart]
                 if isinstance(v, str) and os.path.isfile(v)]
        if any(os.path.getmtime(path) <= os.path.getmtime(v) for v in named):
            return False
        return status

    def _figures(self, i):
        r = Run(self.file(i))
        out, notes = {}, []
        for name, f in self.figures:
            try:
                out.update(f(r))
            except Exception as e:  # noqa: BLE001 (a figure the file cannot give: noted)
                out[name] = float("nan")
                notes.append(f"{name}: {' '.join(str(e).split())}")
        return out, "; ".join(notes)

    @staticmethod
    def _completed(path):
        try:
            status = Run(path).summary.get("status", b"")
        except (OSError, NotCdlabOutput, KeyError):
            return False
        return (status.decode() if isinstance(status, bytes) else str(status)) == "completed"

    def _clear_leftovers(self, i):
        path = self.file(i)
        base = path[:-3]
        left = [p for p in (path + ".partial", base + ".xmf.partial", path + ".checkpoint")
                if os.path.exists(p)]
        if os.path.exists(path) and not self._completed(path):
            # an interrupted or failed try: its file and sidecar too (a completed file of
            # another build or other values stays: cdlab replaces it once the new run completes)
            left += [p for p in (path, base + ".xmf") if os.path.exists(p)]
        if not left:
            return
        if not _lock_free(path + ".partial"):
            raise ScanError(f"{path}.partial is being written by a running cdlab: is another "
                            "process running this scan's rows?")
        stale = os.path.join(self.folder, "stale")
        os.makedirs(stale, exist_ok=True)
        stamp = time.strftime("%Y%m%dT%H%M%S")
        for p in left:
            os.replace(p, os.path.join(stale, f"{stamp}-{os.path.basename(p)}"))
        self.say(f"row {i}: an earlier try's files moved to stale/ "
                 f"({', '.join(os.path.basename(p) for p in left)}); the row runs again")

    def run_row(self, i):
        if self.stop.is_set():
            return
        self._clear_leftovers(i)
        self.current_row.i = i
        cmd = self.launcher + [self.cdlab, "run", self.config, "-o", self.file(i), "--quiet",
                               "--overwrite"]
        if self.threads is not None:
            cmd += ["--threads", str(self.threads)]
        for k, v in {**self.sets, **self.rows[i]}.items():
            cmd += ["--restart", v] if k == RESTART else ["--set", f"{k}={ini_value(v)}"]
        log = os.path.join(self.rowdir, f"{i:04d}.log")
        start = time.time()
        with open(log, "w", encoding="utf-8") as lf:
            lf.write(" ".join(cmd) + "\n")
            lf.flush()
            rc, tail = run_passing_on(cmd, lf, env=self.env,
                                      preexec_fn=functools.partial(_pdeathsig, os.getpid()),
                                      started=self._started)
        secs = time.time() - start
        if rc == 0:
            figs, notes = self._figures(i)
            res = {"status": "completed", "notes": notes, **figs}
        else:
            why = " / ".join(" ".join(ln.split()) for ln in tail.splitlines() if ln.strip()) \
                or f"exit status {rc}"
            state = "interrupted" if rc >= 128 else "refused" if rc == 2 else "failed"
            res = {"status": f"{state}: {why}", "notes": f"exit status {rc}; log rows/{i:04d}.log"}
        with self.lock:
            self.procs.pop(i, None)
            self.results[i] = res
            self.write_tables()
            n_done = sum(1 for x in self.results if x and x["status"] == "completed")
        self.say(f"row {i}: {res['status'].split(':')[0]} in {secs:.1f} s "
                 f"({n_done}/{len(self.rows)} done){self._eta()}")

    def _started(self, p):
        with self.lock:
            self.procs[self.current_row.i] = p
            if self.stop.is_set():  # a signal came while it started
                p.send_signal(signal.SIGTERM)

    # --- the tables -----------------------------------------------------------------------
    def columns(self):
        figs = list(dict.fromkeys(k for r in self.results if r for k in r
                                  if k not in ("status", "notes")))
        return ["row", "status", "file"] + self.keys + figs + ["notes"]

    def table(self):
        out = []
        for i, row in enumerate(self.rows):
            res = self.results[i] or {"status": "pending", "notes": ""}
            out.append({"row": i, "file": os.path.relpath(self.file(i), self.folder),
                        **{k: row.get(k, "") for k in self.keys}, **res})
        return out

    def write_tables(self):
        cols, rows = self.columns(), self.table()
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(cols)
        for r in rows:
            w.writerow([_csv(r.get(c, "")) for c in cols])
        write_text(os.path.join(self.folder, "results.csv"), buf.getvalue())
        self._write_h5(cols, rows)

    def _write_h5(self, cols, rows):
        import h5py
        path = os.path.join(self.folder, "results.h5")
        tmp = path + f".{os.getpid()}.partial"
        try:
            with h5py.File(tmp, "w") as f:
                g = f.create_group("table")
                for c in cols:
                    g.create_dataset(c.replace("/", "|"), data=_column([r.get(c, "") for r in rows]))
                f.attrs["columns"] = json.dumps(cols)
                for k, v in self.definition().items():
                    f.attrs[k] = json.dumps(v) if not isinstance(v, str) else v
                f.attrs["program"] = self.cdlab
                f.attrs["commit"], f.attrs["results_epoch"] = self.version
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    # --- the whole scan -------------------------------------------------------------------
    def say(self, text):
        if self.progress:
            print(f"scan: {text}", file=sys.stderr, flush=True)

    def _eta(self):
        """The time to go at the pace of the rows this scan has finished (rows at once
        included); rows of different cost make it rough, which it says."""
        finished = sum(1 for i in self.todo if self.results[i] is not None)
        left = len(self.todo) - finished
        if not left or not finished:
            return ""
        eta = (time.time() - self.t0) * left / finished
        return f", about {eta:.0f} s to go at the pace of the {finished} finished"

    def _check_config(self):
        """cdlab check on the first row: a config or a key it refuses stops the scan before a
        folder is made (every row would be refused the same)."""
        cmd = [self.cdlab, "check", self.config, "--quiet"]
        for k, v in {**self.sets, **self.rows[0]}.items():
            if k != RESTART:  # (the run checks its checkpoint against the config)
                cmd += ["--set", f"{k}={ini_value(v)}"]
        p = subprocess.run(cmd, capture_output=True, text=True, env=self.env)
        if p.returncode != 0:
            why = " / ".join(ln.strip() for ln in p.stderr.splitlines() if ln.strip())
            raise ScanError(f"row 0 refused by cdlab check: {why or f'exit status {p.returncode}'}")

    def run(self):
        self._check_config()
        lockfd = self._check_folder()
        try:
            self.version = self._version()
            todo = []
            for i in range(len(self.rows)):
                status = self.done(i)
                if status == "completed":
                    figs, notes = self._figures(i)
                    self.results[i] = {"status": "completed", "notes": notes, **figs}
                elif status:  # failed during its run: it would fail again (retry_failed)
                    self.results[i] = {"status": "failed: " + " ".join(status.split()),
                                       "notes": f"kept from an earlier try; log rows/{i:04d}.log"}
                else:
                    todo.append(i)
            kept = sum(1 for x in self.results if x and x["status"] != "completed")
            self.say(f"{len(self.rows)} rows of {os.path.relpath(self.config)} into "
                     f"{self.folder}: {len(self.rows) - len(todo) - kept} already done"
                     + (f", {kept} failed before (kept; --retry-failed runs them)" if kept else "")
                     + (f", {len(todo)} to run on {min(self.jobs, len(todo))} "
                        f"process{'es' if min(self.jobs, len(todo)) > 1 else ''}"
                        if todo else ", nothing to run"))
            self.todo, self.t0 = todo, time.time()
            self.write_tables()
            old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}

            def stop(sig, frame):
                self.stop.set()
                with self.lock:
                    for p in self.procs.values():
                        p.send_signal(signal.SIGTERM)
                self.say(f"signal {sig}: the running rows end after their current step, "
                         "the others are not started; run the scan again to resume")
            for s in old:
                signal.signal(s, stop)
            try:
                with ThreadPoolExecutor(self.jobs) as ex:
                    for fut in [ex.submit(self.run_row, i) for i in todo]:
                        fut.result()
            finally:
                for s, h in old.items():
                    signal.signal(s, h)
            with self.lock:
                self.write_tables()
            failed = [i for i, x in enumerate(self.results) if not x or x["status"] != "completed"]
            self.say(f"{len(self.rows) - len(failed)}/{len(self.rows)} rows completed; table "
                     f"{os.path.join(self.folder, 'results.csv')} (and results.h5)"
                     + (f"; not completed: rows {', '.join(map(str, failed))} (their logs: "
                        "rows/NNNN.log; an interrupted row runs when the scan runs again)"
                        if failed else ""))
            return self.table()
        finally:
            os.close(lockfd)


def _column(vals):
    """A table column as an array: int64 where every value is an integer, float64 where every
    value is a number or missing (NaN), else UTF-8 text."""
    import h5py
    num = (int, float, np.integer, np.floating)
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in vals):
        return np.array(vals, dtype=np.int64)
    if all((isinstance(v, num) and not isinstance(v, bool)) or v == "" for v in vals) and \
            any(v != "" for v in vals):
        return np.array([float("nan") if v == "" else v for v in vals], dtype=float)
    return np.array([v if isinstance(v, str) else ini_value(v) for v in vals],
                    dtype=h5py.string_dtype())


def _csv(v):
    if isinstance(v, float):
        return repr(v)
    return v if isinstance(v, str) else ini_value(v)


def scan(config, rows, folder, **kw):
    """Runs the rows (dicts of section.key -> value) of config into folder; returns the table
    (a list of dicts: row, status, file, the row's values, its figures). See the module text."""
    return Scan(config, rows, folder, **kw).run()


def run_rows(config, rows, folder, accept_failed=False, **kw):
    """A study's runs as a scan: runs (or finds done) every row and returns the rows' files, in
    the rows' order; raises ScanError naming the rows that did not complete (their logs).
    accept_failed: a row whose run stopped itself (exit 1: an overlap abort, say) is a result
    too; its file is returned (its /summary says why it stopped)."""
    table = scan(config, rows, folder, **kw)
    ok = ("completed", "failed") if accept_failed else ("completed",)
    bad = [r for r in table if r["status"].split(":")[0] not in ok]
    if bad:
        logs = os.path.join(folder, "rows")
        raise ScanError("rows not completed: " + "; ".join(
            f"{r['row']} ({r['status']}; log {logs}/{r['row']:04d}.log)" for r in bad))
    return [os.path.join(os.path.abspath(folder), r["file"]) for r in table]


def read_results(folder):
    """The rows of the scan in folder, from its results.csv: dicts of typed values, with "file"
    the row's file as an absolute path."""
    path = os.path.join(folder, "results.csv")
    try:
        with open(path, newline="", encoding="utf-8") as f:
            table = list(csv.DictReader(f))
    except OSError as e:
        raise ScanError(f"{path}: {e.strerror}: run the scan first") from None
    keep = ("status", "file", "notes")
    return [{k: (v if k in keep else typed(v)) for k, v in r.items()}
            | {"file": os.path.join(os.path.abspath(folder), r["file"])} for r in table]


def row_file(folder, values, accept_failed=False):
    """The file of the row of the scan in folder whose values include values (a dict of
    section.key -> value), from its results.csv; ScanError if none or several match or the
    row did not complete (accept_failed: or stopped itself, as for run_rows)."""
    path = os.path.join(folder, "results.csv")
    hits = [r for r in read_results(folder)
            if all(k in r and _same_value(r[k], v) for k, v in values.items())]
    if len(hits) != 1:
        raise ScanError(f"{path}: {len(hits)} rows with {values}")
    if hits[0]["status"].split(":")[0] not in (("completed", "failed") if accept_failed
                                                else ("completed",)):
        raise ScanError(f"{path}: row {hits[0]['row']} with {values}: {hits[0]['status']}")
    return hits[0]["file"]


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(
        prog="cdlab scan",
        description="Runs CONFIG once per row of a grid or a table of --set values, in parallel "
                    "processes, into DIR (rows/NNNN.h5), and writes DIR/results.csv and "
                    "results.h5 with each row's figures. Run it again to resume: rows already "
                    "done are skipped. (docs/howto/scan.md)")
    ap.add_argument("config")
    ap.add_argument("folder", metavar="DIR")
    ap.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2,...",
                    help="a key and its values; several --grid: their product, the first slowest")
    ap.add_argument("--table", metavar="ROWS.csv",
                    help="rows from a CSV file: a header of section.key names, a line per row")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a value for every row")
    ap.add_argument("--figure", action="append", default=None, metavar="SPEC",
                    help="a column of the results: summary.NAME, elasticity.NAME, "
                         "param.SECTION.KEY, series.NAME.last|first|max|min|mean or "
                         f"module:function (default: {', '.join(DEFAULT_FIGURES)})")
    ap.add_argument("--jobs", type=int, default=None, help="rows at once (default: the cores)")
    ap.add_argument("--threads", type=int, default=1, help="threads per row (default 1)")
    ap.add_argument("--retry-failed", action="store_true",
                    help="run again the rows whose run failed (kept as failed by default)")
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    a = ap.parse_args(argv)
    try:
        if bool(a.grid) == bool(a.table):
            raise ScanError("give the rows as --grid KEY=V1,V2,... (one or more) or as --table ROWS.csv")
        rows = grid([parse_grid(g) for g in a.grid]) if a.grid else read_table(a.table)
        sets = {}
        for s in a.set:
            if "=" not in s:
                raise ScanError(f"--set {s}: expected section.key=value")
            k, v = s.split("=", 1)
            sets[k] = typed(v)
        if a.jobs is not None and a.jobs < 1:
            raise ScanError(f"--jobs {a.jobs}: expected 1 or more")
        table = scan(a.config, rows, a.folder, sets=sets, figures=a.figure, jobs=a.jobs,
                     threads=a.threads, progress=not a.quiet, retry_failed=a.retry_failed)
    except (ScanError, ValueError, OSError) as e:
        print(f"cdlab scan: {e}", file=sys.stderr)
        return 2
    if any(r["status"].startswith("interrupted") for r in table):
        return 130
    return 0 if all(r["status"] == "completed" for r in table) else 1

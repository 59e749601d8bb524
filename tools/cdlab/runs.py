"""Running cdlab from Python: a config (a file plus overrides, or built from scratch) run by the
real program in a subprocess, its progress passed on, its refusal raised, its output a Run.

    from cdlab import Config
    cfg = Config("experiments/chain1d/chain1d.ini", {"solver.iterations": 80})
    cfg.set("solver.sweep", "jacobi")
    r = cfg.run("chain80.h5")              # a cdlab.Run; RunError with cdlab's message if refused
    r.elasticity["q"], r.series("probe_position")

    cfg = Config.new({"system.mode": "cd", "system.dimension": 2, ...})  # from scratch
    print(cfg.text())                      # the INI it runs
    cfg.check()                            # cdlab check: what the run would do (text)

Values are written as cdlab reads them: True/False as true/false, a list or tuple of numbers as
`0 0 -9.81`, a float with all its digits (repr). The program is $CDLAB, else the build beside this
package (build/cdlab of the repository, or PREFIX/bin/cdlab of `make install`), else `cdlab` on
PATH."""
import os
import shutil
import subprocess
import sys
import tempfile


class RunError(RuntimeError):
    """cdlab refused a config (exit 2) or a run failed (exit 1) or was ended by a signal:
    .returncode, .command, .message (cdlab's own last lines)."""

    def __init__(self, command, returncode, message):
        self.command, self.returncode, self.message = command, returncode, message
        super().__init__(message or f"cdlab exited with status {returncode}")


def program():
    """The cdlab executable this package drives (see the module's text)."""
    if os.environ.get("CDLAB"):
        return os.environ["CDLAB"]
    here = os.path.dirname(os.path.realpath(__file__))
    for rel in (("..", "..", "build", "cdlab"),  # the repository: tools/cdlab -> build/cdlab
                ("..", "..", "..", "..", "bin", "cdlab")):  # PREFIX/lib/python3/dist-packages
        p = os.path.normpath(os.path.join(here, *rel))
        if os.access(p, os.X_OK) and os.path.isfile(p):
            return p
    found = shutil.which("cdlab")
    if found:
        return found
    raise FileNotFoundError("no cdlab program: build it (make), install it (make install), or set "
                            "CDLAB=/path/to/cdlab")


def ini_value(v):
    """A Python value as cdlab's config text."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return " ".join(ini_value(x) for x in v)
    if isinstance(v, float):
        return repr(v)
    text = str(v)
    if "\n" in text:
        raise ValueError(f"a config value cannot hold a line break: {text!r}")
    return text


def split_key(key):
    """'piston.top.point' -> ('piston.top', 'point'): the section is all before the last dot."""
    if "." not in key:
        raise ValueError(f"{key!r}: a key is section.key (e.g. solver.iterations)")
    section, name = key.rsplit(".", 1)
    return section, name


class Config:
    """A cdlab config: a file and overrides (--set), or keys from scratch (Config.new)."""

    def __init__(self, path=None, overrides=None):
        self.path = path
        self.keys = {}  # from scratch: section.key -> value
        self.sets = {}  # overrides, as --set
        for k, v in (overrides or {}).items():
            self.set(k, v)

    @classmethod
    def new(cls, keys):
        """A config from scratch: every key given (section.key -> value), the others defaults."""
        c = cls()
        for k, v in keys.items():
            split_key(k)
            c.keys[k] = v
        return c

    def set(self, key, value):
        split_key(key)
        self.sets[key] = value
        return self

    def copy(self):
        c = Config(self.path, dict(self.sets))
        c.keys = dict(self.keys)
        return c

    def text(self):
        """A config from scratch as INI text (overrides folded in)."""
        if self.path is not None:
            with open(self.path, encoding="utf-8", errors="replace") as f:
                return f.read()
        sections = {}
        for k, v in {**self.keys, **self.sets}.items():
            s, n = split_key(k)
            sections.setdefault(s, []).append(f"{n} = {ini_value(v)}")
        return "".join(f"[{s}]\n" + "\n".join(lines) + "\n\n" for s, lines in sections.items())

    def _args(self):
        out = []
        for k, v in self.sets.items():
            out += ["--set", f"{k}={ini_value(v)}"]
        return out

    def _with_file(self, fn):
        """fn(config path): the config's own file, or the keys from scratch in a temporary one."""
        if self.path is not None:
            return fn(self.path, self._args())
        with tempfile.NamedTemporaryFile("w", suffix=".ini", prefix="cdlab-config-") as f:
            f.write(self.text())
            f.flush()
            return fn(f.name, [])

    def command(self, out, overwrite=False, threads=None, quiet=False, extra=(), config=None):
        cmd = [program(), "run", config or self.path, "-o", str(out)]
        if overwrite:
            cmd.append("--overwrite")
        if threads is not None:
            cmd += ["--threads", str(threads)]
        if quiet:
            cmd.append("--quiet")
        return cmd + list(extra)

    def run(self, out, overwrite=False, threads=None, quiet=False, progress=True, extra=()):
        """Runs the config into out (an HDF5 file) and returns its cdlab.Run. cdlab's banner and
        progress go to this process's standard error (progress=False keeps them; quiet=True is
        cdlab's --quiet). A refusal or a failed run raises RunError with cdlab's message."""
        from . import Run

        def go(path, sets):
            cmd = self.command(out, overwrite, threads, quiet, list(extra) + sets, config=path)
            tail = run_passing_on(cmd, sys.stderr if progress else None)
            return cmd, tail
        cmd, (rc, tail) = self._with_file(go)
        if rc != 0:
            raise RunError(cmd, rc, tail)
        return Run(out)

    def check(self):
        """cdlab check: what the run would do (its banner), as text; RunError if refused."""
        def go(path, sets):
            cmd = [program(), "check", path] + sets
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                raise RunError(cmd, p.returncode, p.stderr.strip())
            return p.stdout + p.stderr
        return self._with_file(go)


def run_passing_on(cmd, stream, env=None, keep=6, preexec_fn=None, started=None):
    """Runs cmd with its standard error read line by line (written to stream when given) and
    its standard output passed on; returns (exit status, its last `keep` error lines).
    A progress line rewritten in place (\\r) is passed on as it comes; started(process) is
    called once it runs (a scan keeps its rows' processes to pass a signal on)."""
    p = subprocess.Popen(cmd, stderr=subprocess.PIPE, env=env, preexec_fn=preexec_fn)
    if started is not None:
        started(p)
    lines = []
    for raw in iter(p.stderr.readline, b""):
        line = raw.decode("utf-8", "replace")
        if stream is not None:
            stream.write(line)
            stream.flush()
        text = line.rstrip("\n").split("\r")[-1].strip()
        if text:
            lines = (lines + [text])[-keep:]
    p.stderr.close()
    rc = p.wait()
    errors = [ln for ln in lines if ln.startswith("cdlab")] or lines
    return rc, "\n".join(errors)

"""python3 -m cdlab (or tools/cdlab-py): summary, series and plots of a cdlab output file; the
comparison of two outputs (compare, as tools/h5compare.py), the 1D wave test's fit of a chain run
(chain, as experiments/chain1d/analyze.py without its plot) and whether a study's run may be reused
(fresh, for the studies' shell scripts)."""
import argparse
import os
import sys

from .textfile import write_whole

from . import NotCdlabOutput, Run, _text


def cmd_summary(a):
    r = Run(a.file)
    s = r.summary
    text = _text
    print(f"{a.file}: {r.attrs.get('program', 'cdlab run')}")
    print(f"  config      {r.attrs.get('config_file', '?')}")
    if r.attrs.get("overrides"):
        print("  overrides   " + r.attrs["overrides"].strip().replace("\n", ", "))
    print(f"  system      {r.params.get('particles.count', '?')} particles, dimension "
          f"{r.params.get('system.dimension', '?')}, dt = {r.params.get('system.dt', '?')}, "
          f"{r.params.get('system.steps', '?')} steps")
    if r.params.get("particles.format") == "cdlab":  # started from another run's snapshot
        rest = "" if r.params.get("particles.snapshot_velocities", "true") == "true" else ", at rest"
        print(f"  particles   from the snapshot of step {r.params.get('particles.snapshot', '?')} of "
              f"{r.params.get('particles.file', '?')}{rest}")
    if r.input_index is not None:
        print("  order       spatial: particle ids renumbered along a space-filling curve; "
              "/input_index gives each id's input index (snapshot(input_order=True) in Python)")
    if r.mode == "cd":
        print(f"  solver      sweep {r.params.get('solver.sweep')}, criterion {r.params.get('solver.criterion')}, "
              f"iterations {r.params.get('solver.iterations')}")
    else:
        print(f"  DEM         k_n = {r.params.get('dem.k_n')}, k_t = {r.params.get('dem.k_t')}, "
              f"law {r.params.get('dem.tangential')}")
    if s:
        print(f"  status      {text(s.get('status', '?'))}")
        done, first = s.get("steps_done", "?"), r.restart.get("from_step")
        if first is not None:  # a continued run: its own steps, after the checkpoint's
            done = f"{first + 1} to {done} (continued from step {first} of {text(r.restart.get('from_file', '?'))})"
        print(f"  steps done  {done} in {float(s.get('wall_seconds', float('nan'))):.3g} s")
        if r.mode == "cd":
            print(f"  sweeps      {float(s.get('mean_sweeps', float('nan'))):.3g} per step on average, "
                  f"{s.get('unconverged_steps', 0)} steps not converged")
            if s.get("missed_contacts", 0) > 0:
                print(f"  missed      {s['missed_contacts']} contacts met unseen by the detection, "
                      f"overlapping by up to {float(s.get('missed_overlap', float('nan'))):.3g} "
                      "(contact.detect_gap too small for dt)")
        if "energy_residual_max" in s:  # DEM: the energy ledger's balance
            worst = float(s["energy_residual_max"])
            verdict = ("; above 0.5: energy that no term books, a numerical instability "
                       "(docs/config.md, [dem])" if worst > 0.5 else "")
            if str(r.params.get("dem.deformable", "false")).lower() in ("true", "1") and \
                    worst <= 0.5:  # the ddem study measures its order in dt: 0.90
                verdict = ("; expected with deformable discs: a disc's shape follows its forces "
                           "one step late, a residual of first order in dt that vanishes as "
                           "dt -> 0 (experiments/ddem/summary.md)")
            print(f"  energy      the ledger's residual up to {worst:.3g} of the energy given{verdict}")
    else:
        print("  status      no /summary: the run was killed or is still running")
    t = r.series("t")
    ke = r.series("kinetic_energy")
    if len(t) and len(ke):
        print(f"  series      {len(t)} rows, t = {t[0]:.6g} … {t[-1]:.6g}; kinetic energy at the end {ke[-1]:.6g}")
    else:
        print("  series      no rows (the run stopped before its first row)")
    print(f"  snapshots   {len(r.snapshot_names)}")
    return 0


def cmd_series(a):
    r = Run(a.file)
    if not r.has_series(a.name):
        print(f"cdlab-py: {a.file} has no series '{a.name}' (it has: {', '.join(r.series_names())})",
              file=sys.stderr)
        return 2
    t, v = r.series("t"), r.series(a.name)
    v = v.reshape(len(v), -1)
    print(f"# t {a.name}" + ("" if v.shape[1] == 1 else f" ({v.shape[1]} columns)"))
    for k in range(0, len(t), a.every):
        print(" ".join([f"{t[k]:.17g}"] + [f"{x:.17g}" for x in v[k]]))
    return 0


def cmd_plot(a):
    if not a.png.lower().endswith(".png"):
        print(f"cdlab-py: --png {a.png}: the name must end in .png (nothing written)", file=sys.stderr)
        return 2
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    r = Run(a.file)
    fig, axs = plt.subplots(len(a.names), 1, figsize=(8, 2.6 * len(a.names)), sharex=True, squeeze=False)
    t = r.series("t")
    for ax, name in zip(axs[:, 0], a.names):
        if not r.has_series(name):
            print(f"cdlab-py: {a.file} has no series '{name}' (it has: {', '.join(r.series_names())})",
                  file=sys.stderr)
            return 2
        v = r.series(name)
        ax.plot(t, v.reshape(len(v), -1), lw=1)
        ax.set_ylabel(name)
    axs[-1, 0].set_xlabel("t")
    fig.suptitle(a.file, fontsize=9)
    fig.tight_layout()
    # written beside the target and renamed over it: a failed write leaves an existing PNG whole
    write_whole(a.png, lambda out: fig.savefig(out, format="png", dpi=110), binary=True)
    print(f"{a.png} written")
    return 0


def cmd_compare(a):
    from . import h5compare
    return h5compare.report(a.a, a.b, a.rtol)


def cmd_chain(a):
    from . import chain
    try:
        r = chain.analyze(a.file)
    except chain.NotAChain as e:
        print(f"cdlab-py: {e}", file=sys.stderr)
        return 2
    print(f"{a.file}: omega = {r['omega']:.6g} (eq. 58: {r['omega_th']:.6g}), "
          f"tau = {r['tau']:.6g} (eq. 60: {r['tau_th']:.6g}), q = {r['q']:.4f}, N_I = {r['N_I']}, "
          f"sweep {r['sweep']}")
    return 0


def cmd_fresh(a):
    from .stamp import fresh
    return 0 if fresh(a.file, a.cdlab) else 1


def positive(text):
    """argparse type: an integer >= 1 (--every 0 raised ValueError, a negative one printed no rows)."""
    try:
        k = int(text)
    except ValueError:
        k = 0
    if k < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1 (got '{text}')")
    return k


def _run(cmd, a):
    """cmd(a) with its refusals: a damaged or foreign file in one line naming it (exit 2)."""
    try:
        return cmd(a)
    except (OSError, NotCdlabOutput, KeyError, ValueError, TypeError, IndexError, RuntimeError,
            AttributeError) as e:
        # a damaged or foreign file: one line naming it, never a traceback
        what = str(e) if str(e).startswith(a.file) else f"{a.file}: cannot read it ({e})"
        print(f"cdlab-py: {' '.join(what.split())}", file=sys.stderr)
        return 2


def _in_child(cmd, a):
    """_run(cmd, a) in a child process, its output passed on when it ends: some damaged files
    crash Debian's HDF5 library (SIGSEGV in H5A__close), which no Python handler can catch, and
    whether a read crashes depends on the heap (a trial read in a child, then the real one in the
    parent, crashed in the parent). Returns (exit status, standard output, standard error), or
    (None, signal, "") when the child was killed."""
    import io
    import tempfile
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: the command into strings, then out without clean-up
            rc = 1
            try:
                sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
                rc = _run(cmd, a)
                out.write(sys.stdout.getvalue().encode("utf-8", "surrogateescape"))
                err.write(sys.stderr.getvalue().encode("utf-8", "surrogateescape"))
                out.flush()
                err.flush()
            finally:
                os._exit(rc if isinstance(rc, int) and 0 <= rc < 256 else 1)
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            return None, os.WTERMSIG(status), ""
        out.seek(0)
        err.seek(0)
        return (os.WEXITSTATUS(status), out.read().decode("utf-8", "surrogateescape"),
                err.read().decode("utf-8", "surrogateescape"))


def _version():
    """cdlab-py's version line: the package's own, the interpreter's and h5py's."""
    import platform
    try:
        import h5py
        h5 = f"h5py {h5py.__version__} (HDF5 {h5py.version.hdf5_version})"
    except ImportError:
        h5 = "h5py not importable"
    return f"cdlab-py (the tools/cdlab package) on Python {platform.python_version()}, {h5}"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["scan"]:  # cdlab scan: its own options (cdlab/scan.py)
        from cdlab.scan import main as scan_main
        return scan_main(argv[1:])
    ap = argparse.ArgumentParser(prog="cdlab-py", description="Look into a cdlab output file.")
    ap.add_argument("--version", action="version", version=_version())
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("summary", help="what the run was and how it ended")
    p.add_argument("file")
    p = sub.add_parser("series", help="a per-step series as columns (t, values)")
    p.add_argument("file")
    p.add_argument("name", help="e.g. kinetic_energy, mean_overlap, piston_position, energy/balance_residual")
    p.add_argument("--every", type=positive, default=1, help="every K-th row (K >= 1)")
    p = sub.add_parser("plot", help="series against t into a PNG")
    p.add_argument("file")
    p.add_argument("names", nargs="+")
    p.add_argument("--png", required=True, help="the PNG to write (NAME.png; replaced only once written)")
    p = sub.add_parser("compare", help="two outputs dataset by dataset (exit 1 when they differ)")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--rtol", type=float, default=0.0, help="relative tolerance (default 0: bit for bit)")
    p = sub.add_parser("chain", help="the 1D wave test's fit of a chain run against eqs. (58), (60)")
    p.add_argument("file")
    sub.add_parser("scan", help="a run per row of a grid or table of --set values, one results "
                                "table (cdlab-py scan --help)", add_help=False)
    p = sub.add_parser("fresh", help="exit 0 if a study's run FILE was made by the build CDLAB "
                                     "at this results epoch (it may be reused)")
    p.add_argument("file")
    p.add_argument("cdlab")
    a = ap.parse_args(argv)
    if a.cmd in ("compare", "fresh"):  # their own verdicts and messages
        return {"compare": cmd_compare, "fresh": cmd_fresh}[a.cmd](a)
    cmd = {"summary": cmd_summary, "series": cmd_series, "plot": cmd_plot, "chain": cmd_chain}[a.cmd]
    rc, out, err = _in_child(cmd, a)
    if rc is None:
        print(f"cdlab-py: {a.file}: damaged: the HDF5 library was killed by signal {out} "
              "reading it (cdlab info FILE says what cdlab can still read)", file=sys.stderr)
        return 2
    sys.stderr.write(err)
    try:
        sys.stdout.write(out)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at the exit
        return rc
    except BrokenPipeError:  # the reader stopped (| head): no message, as cat would end
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141

if __name__ == "__main__":
    sys.exit(main())

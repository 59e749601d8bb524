#!/usr/bin/python3
"""The benchmark set of CD steps (issue 63) and its solvers beside Siconos's.

Steps exported from cdlab's own runs (`cdlab run --export-fclib`: the 1D chain, 3D piles under a
piston, settling 2D boxes, the 2D piston packing at rest, the CD chute of 4,100 and 36,900
spheres; frictional and frictionless; 49 to about 10⁵ contacts), each solved
from zero impulses and warm (from the file's stored solution: the engine's impulses of that step
after its own sweeps) by every `cdlab solve` method and, from the same files in the same run, by
Siconos's NSGS (ω = 1 and its over-relaxation), PROX, ADMM and NSN-AC, and for 2D steps fc2d's
NSGS and Lemke (bench/siconos_solve.c).
Every answer is measured with one yardstick, cdlab's natural-map residual with ρ = 1 (FCLIB's
error, relative to |r|): Siconos stops at its own error, so it is run again with a tighter
tolerance (up to three times) until cdlab's residual of its answer reaches the goal, and the time
of that run counts.

Used by tools/bench.py (BENCH_ONLY=peers; make bench). Writes the set into DIR and returns the
rows; markdown() makes the tables, the Dolan-Moré performance profiles and the goals' verdicts.
"""
import math
import os
import re
import subprocess

TOLS = (1e-4, 1e-6, 1e-8)
# the timed runs' environment: one thread, cdlab's OpenMP and the BLAS under UMFPACK and Siconos
# alike (Debian's OpenBLAS, which the Siconos package makes the system's BLAS, runs its own
# threads: measured, cdlab's Newton on the 10,000-disk step at 196 % CPU without this)
ONE_THREAD = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
FLOOR = 1e-6  # seconds: a start that already meets a tolerance counts this long (no ratio by 0)
STARTS = ("zero", "stored")

# (name, config relative to the repository, step, --set overrides)
_PILE_600 = ["particles.count=600", "particles.box_max=10 10 16", "piston.top.point=0 0 16.5"]
_PILE_3000 = ["particles.count=3000", "particles.box_max=16 16 30", "piston.top.point=0 0 30.5",
              "system.steps=80"]
_SETTLE_2000 = ["particles.count=2000", "particles.box_max=50 220 0", "plane.right.point=50 0 0"]
_SETTLE_10K = ["particles.count=10000", "system.steps=900", "particles.box_max=125 420 0",
               "plane.right.point=125 0 0"]
CHAIN = "experiments/chain1d/chain1d.ini"
PILE = "tests/memcheck/cd.ini"
SETTLE = "experiments/convergence/settle.ini"
# the 2D piston packing at rest under its force (the last step of its preparation)
PISTON = "experiments/piston2d/prepare.ini"
CHUTE = "bench/chute_cd.ini"
# the cell tiled 3 x 3 (36,900 spheres, about 1.4·10⁵ contacts), 200 sweeps a step
_CHUTE_36900 = ["particles.tile=3 3 1", "particles.count=36900", "system.box_max=30 30 42",
                "system.steps=10", "solver.criterion=fixed", "solver.iterations=200"]
SET = ([("chain_s%d" % s, CHAIN, s, []) for s in (100, 700, 1400)]
       + [("pile60_mu0.4_s%d" % s, PILE, s, []) for s in (10, 30, 60)]
       + [("pile60_mu0_s%d" % s, PILE, s, ["contact.friction=0"]) for s in (30, 60)]
       + [("pile600_mu0.4_s%d" % s, PILE, s, _PILE_600) for s in (20, 40, 60)]
       + [("pile600_mu0_s%d" % s, PILE, s, _PILE_600 + ["contact.friction=0"]) for s in (20, 60)]
       + [("pile3000_mu0.4_s80", PILE, 80, _PILE_3000),
          ("pile3000_mu0_s80", PILE, 80, _PILE_3000 + ["contact.friction=0"])]
       + [("settle400_mu0.3_s%d" % s, SETTLE, s, []) for s in (50, 100, 150, 200, 300, 400)]
       + [("settle400_mu0_s%d" % s, SETTLE, s, ["contact.friction=0"]) for s in (200, 400)]
       + [("settle2000_mu0.3_s%d" % s, SETTLE, s, _SETTLE_2000) for s in (200, 300, 400)]
       + [("settle2000_mu0_s%d" % s, SETTLE, s, _SETTLE_2000 + ["contact.friction=0"])
          for s in (200, 400)]
       + [("settle10k_mu0.3_s900", SETTLE, 900, _SETTLE_10K),
          ("settle10k_mu0_s900", SETTLE, 900, _SETTLE_10K + ["contact.friction=0"])]
       + [("piston1000_mu0.05_s8000", PISTON, 8000, [])]
       + [("chute4100_mu0.5_s20", CHUTE, 20, []),
          ("chute4100_mu0_s20", CHUTE, 20, ["contact.friction=0"]),
          ("chute36900_mu0.5_s10", CHUTE, 10, _CHUTE_36900)])

CDLAB_METHODS = [("cdlab sweeps", ["--method", "sweeps"]),
                 ("cdlab sweeps ω=1.6", ["--method", "sweeps", "--relaxation", "1.6"]),
                 ("cdlab APGD+De Saxcé", ["--method", "apgd"]),
                 ("cdlab Newton", ["--method", "newton"]),
                 ("cdlab Newton after 200 sweeps", ["--method", "newton", "--presweeps", "200"])]
SICONOS_METHODS = [("Siconos NSGS", "nsgs", 1.0), ("Siconos NSGS ω=1.5", "nsgs", 1.5),
                   ("Siconos PROX", "prox", 1.0), ("Siconos ADMM", "admm", 1.0),
                   ("Siconos NSN-AC", "nsn-ac", 1.0), ("Siconos fc2d NSGS", "fc2d-nsgs", 1.0),
                   ("Siconos fc2d Lemke", "fc2d-lemke", 1.0)]
# fc2d's solvers take 2D steps only, on a dense W (Lemke: on the dense LCP made of it, three
# rows a contact); beyond these sizes their matrices alone would not fit the bench machine's
# memory beside the rest (a 4,000-contact W is 0.5 GB, its LCP 1.2 GB), and Lemke's pivots
# (each a pass over the dense tableau) would not end within any cap
FC2D_MAX_CONTACTS = {"fc2d-nsgs": 4000, "fc2d-lemke": 1500}


def applies(solver, contacts, dim):
    """Whether Siconos's SOLVER takes a step of CONTACTS contacts in DIM dimensions."""
    if solver.startswith("fc2d-"):
        return dim == 2 and contacts <= FC2D_MAX_CONTACTS[solver]
    return True


def export_set(root, cdlab, out, jobs=2):
    """Each step of SET exported into OUT as NAME.fclib.h5 (kept when already there); the paths."""
    from concurrent.futures import ThreadPoolExecutor
    os.makedirs(out, exist_ok=True)

    def one(entry):
        name, ini, step, sets = entry
        fc = os.path.join(out, name + ".fclib.h5")
        if not os.path.exists(fc):
            cmd = [cdlab, "run", os.path.join(root, ini), "-o", os.path.join(out, name + ".h5"),
                   "--quiet", "--overwrite", "--export-fclib", str(step), "--fclib-out", fc,
                   "--set", "output.every=0"]
            for s in sets:
                cmd += ["--set", s]
            subprocess.run(cmd, check=True, cwd=os.path.dirname(os.path.join(root, ini)))
        return fc
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        return list(ex.map(one, SET))


def stored_residual(cdlab, fc):
    """cdlab's natural-map residual (rho = 1) of FC's stored solution; its contacts and dimension."""
    p = subprocess.run([cdlab, "solve", fc, "--max-sweeps", "1", "--every", "0"],
                       capture_output=True, text=True)
    head = re.search(r"(\d+) contacts, local dimension (\d)", p.stdout)
    m = re.search(r"its stored solution: natural-map residual (\S+)", p.stdout)
    if not head:
        raise RuntimeError(f"cdlab solve {fc}: {p.stderr.strip()}")
    return (float(m.group(1)) if m else math.nan), int(head.group(1)), int(head.group(2))


def cdlab_times(cdlab, fc, opts, start, cap):
    """Seconds to each of TOLS (None: not within cap) of one cdlab solve run, from its history."""
    p = subprocess.run([cdlab, "solve", fc, *opts, "--start", start, "--tolerance", str(TOLS[-1]),
                        "--max-sweeps", "100000000", "--every", "1", "--max-seconds", str(cap)],
                       capture_output=True, text=True, env=ONE_THREAD)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"cdlab solve {fc} {opts}: {p.stderr.strip()}")
    times = [None] * len(TOLS)
    for m in re.finditer(r"^\s+(?:sweep|iteration)\s+\d+\s+residual (\S+)\s+(\S+) s$", p.stdout,
                         re.M):
        res, t = float(m.group(1)), float(m.group(2))
        for k, tol in enumerate(TOLS):
            if times[k] is None and res <= tol:
                times[k] = max(t, FLOOR)
    return times


_SETUP = {}


class DriverFailed(RuntimeError):
    """siconos_solve stopped without an answer (a signal, or an exit status other than 0): the
    problem's entry for that solver says so, and the set goes on."""


def _driver_failed(fc, solver, p):
    why = (f"signal {-p.returncode}" if p.returncode < 0 else f"exit status {p.returncode}")
    err = p.stderr.strip().splitlines()
    return DriverFailed(f"siconos_solve {solver} on {os.path.basename(fc)}: {why}"
                        + (f" ({err[-1]})" if err else ""))


def setup_seconds(driver, fc, solver, tmp):
    """The wall time of siconos_solve on FC beside its solver's (one iteration): reading the file,
    building the matrix, writing the answer; measured once per file and kind of solver."""
    key = (fc, solver.startswith("fc2d-"))
    if key not in _SETUP:
        import time
        t = time.perf_counter()
        p = subprocess.run([driver, fc, solver, "1e-4", "1", tmp, "1.0", "zero"],
                           capture_output=True, text=True, env=ONE_THREAD)
        m = re.search(r"seconds (\S+)", p.stdout)
        if p.returncode != 0 or not m:
            _SETUP[key] = _driver_failed(fc, solver, p)
        else:
            _SETUP[key] = max(0.0, time.perf_counter() - t - float(m.group(1)))
    if isinstance(_SETUP[key], DriverFailed):
        raise _SETUP[key]
    return _SETUP[key]


def siconos_time(driver, cdlab, fc, solver, omega, start, tol, cap, tmp):
    """Seconds of the Siconos run whose answer has cdlab's residual <= tol (None: none within cap
    in three tries, each with Siconos's tolerance tightened by what the last one missed)."""
    stol = tol
    for _ in range(3):
        try:  # the driver's set-up (reading the file, building Siconos's matrix) is not its time:
            # the run may take cap beyond it; its own seconds are held against cap
            p = subprocess.run([driver, fc, solver, repr(stol), "100000000", tmp, repr(omega), start],
                               capture_output=True, text=True,
                               timeout=cap + 1.5 * setup_seconds(driver, fc, solver, tmp) + 1,
                               env=ONE_THREAD)
        except subprocess.TimeoutExpired:
            return None
        m = re.search(r"seconds (\S+)", p.stdout)
        if p.returncode != 0 or not m:
            raise _driver_failed(fc, solver, p)
        if float(m.group(1)) > cap:
            return None
        res, _, _ = stored_residual(cdlab, tmp)
        if res <= tol:
            return max(float(m.group(1)), FLOOR)
        if not math.isfinite(res) or solver == "fc2d-lemke":  # pivoting has no tolerance
            return None
        stol *= max(1e-3, 0.5 * tol / res)
    return None


def run_set(cdlab, driver, problems, cap, tmp, log=print):
    """Every method on every problem from both starts: a row per (problem, method, start) with
    its seconds to each tolerance (None: not reached within cap). One at a time: they are timed."""
    rows = []
    for fc in problems:
        _, nc, dim = stored_residual(cdlab, fc)
        base = dict(problem=os.path.basename(fc).replace(".fclib.h5", ""), contacts=nc, dim=dim)
        for start in STARTS:
            for name, opts in CDLAB_METHODS:
                rows.append(dict(base, method=name, start=start,
                                 times=cdlab_times(cdlab, fc, opts, start, cap)))
            for name, solver, omega in SICONOS_METHODS:
                if not applies(solver, nc, dim):
                    rows.append(dict(base, method=name, start=start, times=[None] * len(TOLS),
                                     na=True))
                    continue
                times, failed = [], None
                for tol in TOLS:  # a tolerance missed: the tighter ones are not tried
                    try:
                        t = siconos_time(driver, cdlab, fc, solver, omega, start, tol, cap, tmp) \
                            if not times or times[-1] is not None else None
                    except DriverFailed as e:
                        failed, t = str(e), None
                        log(f"  peers: {failed}")
                    times.append(t)
                    if failed:
                        times += [None] * (len(TOLS) - len(times))
                        break
                rows.append(dict(base, method=name, start=start, times=times,
                                 **({"failed": failed} if failed else {})))
        log(f"  peers: {base['problem']} ({nc} contacts) done")
    return rows


def best(rows, problem, start, k, prefix):
    ts = [r["times"][k] for r in rows if r["problem"] == problem and r["start"] == start
          and r["method"].startswith(prefix) and r["times"][k] is not None]
    return min(ts) if ts else None


def profile(rows, start, k, methods, taus):
    """Dolan-Moré: for each method, the fraction of problems it solves within tau times the
    fastest of all methods (including 'cdlab' and 'Siconos' taken together: their best)."""
    problems = sorted({r["problem"] for r in rows})
    fastest = {p: best(rows, p, start, k, "") for p in problems}
    out = {}
    for m in methods:
        frac = []
        for tau in taus:
            n = 0
            for p in problems:
                t = best(rows, p, start, k, m) if m in ("cdlab", "Siconos") else next(
                    (r["times"][k] for r in rows if r["problem"] == p and r["start"] == start
                     and r["method"] == m), None)
                if t is not None and fastest[p] is not None and t <= tau * fastest[p]:
                    n += 1
            frac.append(n / len(problems))
        out[m] = frac
    return out


def fmt(t):
    return "–" if t is None else f"{t:.3g}"


def markdown(rows, cap):
    """The tables per problem (– not within the cap, n/a not taken, failed: the Siconos driver
    stopped without an answer, listed below them), the profiles and the goals' verdicts."""
    problems = []
    for r in rows:
        if r["problem"] not in [p for p, _, _ in problems]:
            problems.append((r["problem"], r["contacts"], r["dim"]))
    methods = [m for m, _ in CDLAB_METHODS] + [m for m, _, _ in SICONOS_METHODS]
    md = []
    for start in STARTS:
        md += [f"### Seconds to natural-map 1e-4 / 1e-6 / 1e-8, {'from zero' if start == 'zero' else 'warm (the stored solution)'}",
               "", "– : not within %g s (one thread, one run at a time); n/a: the solver does not "
               "take the step (fc2d's: 2D steps of at most %s contacts)." % (cap, " and ".join(
                   f"{n:,} ({k})" for k, n in FC2D_MAX_CONTACTS.items())), "",
               "| problem | contacts | " + " | ".join(methods) + " |",
               "|---|---|" + "---|" * len(methods)]
        for p, nc, dim in problems:
            cells = []
            for m in methods:
                r = next(r for r in rows if r["problem"] == p and r["start"] == start
                         and r["method"] == m)
                cells.append("n/a" if r.get("na") else "failed" if r.get("failed") else
                             " / ".join(fmt(t) for t in r["times"]))
            md.append(f"| {p} | {nc} ({dim}D) | " + " | ".join(cells) + " |")
        md.append("")
    failures = sorted({r["failed"] for r in rows if isinstance(r.get("failed"), str)})
    if failures:
        md += ["*failed*: the Siconos driver stopped without an answer (counted as not solved):", ""]
        md += [f"- {f}" for f in failures] + [""]
    taus = (1, 10)
    md += ["### Dolan–Moré performance profiles", "",
           "ρ(τ): the fraction of the set's problems a solver solves within τ times the fastest "
           "of all the solvers on that problem; *cdlab* and *Siconos*: the best of each code's "
           "solvers on each problem.", ""]
    for start in STARTS:
        profs = [profile(rows, start, k, methods + ["cdlab", "Siconos"], taus)
                 for k in range(len(TOLS))]
        md += [f"{'From zero' if start == 'zero' else 'Warm'}:", "",
               "| solver | " + " | ".join(f"{tol:g}: ρ({t})" for tol in TOLS for t in taus) + " |",
               "|---|" + "---|" * (len(taus) * len(TOLS))]
        for m in methods + ["cdlab", "Siconos"]:
            md.append(f"| {m} | " + " | ".join(f"{f:.2f}" for prof in profs for f in prof[m]) + " |")
        md.append("")
    md += goals(rows, problems, cap)
    return md


def rows_from_markdown(text):
    """The rows of a bench results file's peers section (markdown()'s tables read back): a row per
    (problem, method, start) with its seconds to each tolerance (None: "–"), and the cap the
    tables state. Raises ValueError when the text holds no such table."""
    rows, start, methods, cap = [], None, None, None
    for line in text.splitlines():
        m = re.match(r"### Seconds to natural-map .*, (from zero|warm)", line)
        if m:
            start, methods = ("zero" if m.group(1) == "from zero" else "stored"), None
            continue
        m = re.match(r"– : not within (\S+) s", line)
        if m:
            cap = float(m.group(1))
        if start is None or not line.startswith("|"):
            if line.startswith("### ") and methods:
                start = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "problem":
            methods = cells[2:]
            continue
        if methods is None or cells[0].startswith("---"):
            continue
        nc = re.match(r"(\d+) \((\d)D\)", cells[1])
        for name, cell in zip(methods, cells[2:]):
            row = dict(problem=cells[0], contacts=int(nc.group(1)), dim=int(nc.group(2)),
                       method=name, start=start, times=[None] * len(TOLS))
            if cell == "n/a":
                row["na"] = True
            elif cell == "failed":
                row["failed"] = True
            else:
                row["times"] = [None if t.strip() == "–" else float(t) for t in cell.split(" / ")]
            rows.append(row)
    if not rows:
        raise ValueError("no peers table (### Seconds to natural-map ...) in the text")
    return rows, cap


def goals(rows, problems, cap):
    """Issue 63's goals on the set: the speed-up over Siconos's best to 1e-6, rho(10) at 1e-8 of
    cdlab's solvers together, and 1e-8 within 60 s at 3.5·10³-2·10⁴ contacts (here within cap)."""
    md = ["### Goals (issue 63)", ""]
    for start in STARTS:
        ratios, n_both = [], 0
        faster = 0
        for p, _, _ in problems:
            c, s = best(rows, p, start, 1, "cdlab"), best(rows, p, start, 1, "Siconos")
            if c is not None and (s is None or s >= 10 * c):
                faster += 1
            if c is not None and s is not None:
                n_both += 1
                ratios.append(s / c)
        share = faster / len(problems)
        ratio_txt = (f"Siconos's best / cdlab's best where both reach it: median "
                     f"{sorted(ratios)[len(ratios) // 2]:.2g}, range {min(ratios):.2g}–"
                     f"{max(ratios):.2g} on {n_both} problems" if ratios else "no problem that both reach")
        md.append(f"- {'From zero' if start == 'zero' else 'Warm'}: cdlab's best ≥ 10× faster than "
                  f"Siconos's best to 1e-6 (or Siconos does not reach it) on {share:.0%} of the "
                  f"problems (goal ≥ 90 %: {'pass' if share >= 0.9 else 'FAIL'}); {ratio_txt}.")
        rho = profile(rows, start, 2, ["cdlab"], (10,))["cdlab"][0]
        md.append(f"- {'From zero' if start == 'zero' else 'Warm'}: ρ(10) at 1e-8 of cdlab's "
                  f"solvers together {rho:.2f} (goal ≥ 0.95: {'pass' if rho >= 0.95 else 'FAIL'}).")
    big = [(p, nc) for p, nc, _ in problems if 3500 <= nc <= 20000]
    for p, nc in big:
        t = best(rows, p, "zero", 2, "cdlab")
        md.append(f"- {p} ({nc} contacts), from zero to 1e-8: "
                  + (f"{t:.3g} s" if t is not None else f"not within {cap:g} s")
                  + f" (goal: within 60 s; {'pass' if t is not None and t <= 60 else 'FAIL' if cap >= 60 else 'not judged: the cap is under 60 s' if t is None else 'pass'}).")
    md.append("")
    return md

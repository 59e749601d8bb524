#!/usr/bin/python3
"""Bit-identity check of a change that should not move results: the same fixed set of runs with
two cdlab binaries, every output compared dataset by dataset (tools/h5compare.py), the first
difference of each dataset reported.

    tools/identity.py run BINARY DIR              # the runs below with BINARY, outputs in DIR
    tools/identity.py compare OLD_DIR NEW_DIR     # exit 0: every output bit-identical
    tools/identity.py OLD_BINARY NEW_BINARY [--dir D] [--new-keys K1,K2] [--new-attrs A1,A2]
                      [--new-datasets N1,N2] [--gone-attrs G1,G2]
                                                  # both, in D/old and D/new; K: config keys
                                                  # the new build adds (their echo is allowed);
                                                  # A: attributes it adds (e.g. a checkpoint's
                                                  # young_modulus, dem_skin: allowed too);
                                                  # N: datasets it adds, by their last name
                                                  # (a snapshot's frozen: allowed too);
                                                  # G: attributes it no longer writes

The runs (short versions of the repository's configs, about a minute in all on 2 cores):
  cd_3d          CD, 3D, random sweep, local criterion, piston, probes, checkpoints, and an
                 FCLIB export of step 30 (tests/memcheck/cd.ini)
  cd_3d_restart  cd_3d continued from its last checkpoint to step 90
  cd_2d_colored  CD, 2D, colored sweep, fixed N_I (experiments/convergence/settle.ini)
  cd_2d_jacobi   the same pile with the Jacobi sweep
  dem_3d         DEM, Kuhn law, dashpots, piston (tests/memcheck/dem.ini)
  dem_3d_restart dem_3d continued from its last checkpoint to step 900
  dem_drive      DEM kinematic drive (rigid rotation) and dem_affine (affine gradient)
  dem_twin       the DEM twin of the 1D wave test (system.mode = dem on chain1d.ini)
  chute          the periodic DEM chute (bench/chute.ini, one tile of 4,100 spheres)
Each run's output, its checkpoints and the FCLIB file are compared; provenance (build, wall
times, file names) is skipped by h5compare."""
import argparse
import os
import subprocess
import sys
import tempfile

from cdlab import h5compare

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name: (config, extra arguments); "{dir}" is the output folder
RUNS = [
    ("cd_3d", "tests/memcheck/cd.ini",
     ["--set", "output.checkpoint_every=20", "--set", "output.probes=0 7 59",
      "--export-fclib", "30", "--fclib-out", "{dir}/cd_3d.fclib.h5"]),
    ("cd_3d_restart", "tests/memcheck/cd.ini",
     ["--restart", "{dir}/cd_3d.h5", "--set", "system.steps=90"]),
    ("cd_2d_colored", "experiments/convergence/settle.ini",
     ["--set", "solver.sweep=colored", "--set", "system.steps=150", "--set", "output.every=50",
      "--set", "output.checkpoint_every=50"]),
    ("cd_2d_jacobi", "experiments/convergence/settle.ini",
     ["--set", "solver.sweep=jacobi", "--set", "system.steps=100", "--set", "output.every=50"]),
    ("dem_3d", "tests/memcheck/dem.ini",
     ["--set", "system.steps=600", "--set", "output.every=200",
      "--set", "output.checkpoint_every=200", "--set", "output.probes=3"]),
    ("dem_3d_restart", "tests/memcheck/dem.ini",
     ["--restart", "{dir}/dem_3d.h5", "--set", "system.steps=900"]),
    ("dem_drive", "tests/memcheck/dem.ini",
     ["--set", "system.steps=40", "--set", "output.every=10", "--set", "drive.motion=rotation",
      "--set", "drive.rotation=0 0.01 0.02"]),
    ("dem_affine", "tests/memcheck/dem.ini",
     ["--set", "system.steps=40", "--set", "output.every=10", "--set", "drive.motion=affine",
      "--set", "drive.gradient=1e-3 0 0 0 -1e-3 0 0 0 0"]),
    ("dem_twin", "experiments/chain1d/chain1d.ini",
     ["--set", "system.mode=dem", "--set", "system.dt=0.01", "--set", "system.steps=1000"]),
    ("chute", "bench/chute.ini",
     ["--set", "particles.tile=1 1 1", "--set", "particles.count=4100",
      "--set", "system.steps=300", "--set", "output.every=100",
      "--set", "output.checkpoint_every=100"]),
]


def run_all(binary, out):
    os.makedirs(out, exist_ok=True)
    binary = os.path.abspath(binary)
    for name, cfg, extra in RUNS:
        args = [binary, "run", os.path.join(ROOT, cfg), "-o", os.path.join(out, name + ".h5"),
                "--quiet"] + [a.replace("{dir}", out) for a in extra]
        r = subprocess.run(args, cwd=os.path.dirname(os.path.join(ROOT, cfg)),
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"identity: {name}: exit {r.returncode}\n{r.stdout}{r.stderr}")
        print(f"identity: ran {name}", flush=True)


def compare_dirs(old, new, new_keys=(), new_attrs=(), new_datasets=(), gone_attrs=()):
    files = sorted(f for f in os.listdir(old) if f.endswith(".h5"))
    if not files:
        sys.exit(f"identity: no outputs in {old}")
    bad = 0
    for f in files:
        if not os.path.exists(os.path.join(new, f)):
            print(f"{f}: missing in {new}")
            bad += 1
            continue
        n = h5compare.compare(os.path.join(old, f), os.path.join(new, f), new_keys=new_keys,
                              new_attrs=new_attrs, new_datasets=new_datasets,
                              gone_attrs=gone_attrs)
        print(f"{f}: {'bit-identical' if n == 0 else f'{n} differences'}", flush=True)
        bad += n != 0
    # the XDMF sidecars: text, byte for byte (they name the HDF5 file relative to themselves)
    for f in sorted(f for f in os.listdir(old) if f.endswith(".xmf")):
        files.append(f)
        with open(os.path.join(old, f), "rb") as a:
            same = os.path.exists(os.path.join(new, f)) and a.read() == open(
                os.path.join(new, f), "rb").read()
        print(f"{f}: {'byte-identical' if same else 'differs'}")
        bad += not same
    print(f"identity: {len(files) - bad} of {len(files)} outputs identical")
    return 0 if bad == 0 else 1


def names(text):
    """A comma-separated list as a tuple, empty items left out."""
    return tuple(k for k in text.split(",") if k)


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "run":
        ap = argparse.ArgumentParser()
        ap.add_argument("cmd")
        ap.add_argument("binary")
        ap.add_argument("dir")
        a = ap.parse_args()
        run_all(a.binary, os.path.abspath(a.dir))
        return 0
    if len(sys.argv) >= 2 and sys.argv[1] == "compare":
        ap = argparse.ArgumentParser()
        ap.add_argument("cmd")
        ap.add_argument("old")
        ap.add_argument("new")
        ap.add_argument("--new-keys", default="")
        ap.add_argument("--new-attrs", default="")
        ap.add_argument("--new-datasets", default="")
        ap.add_argument("--gone-attrs", default="")
        a = ap.parse_args()
        return compare_dirs(a.old, a.new, names(a.new_keys), names(a.new_attrs),
                            names(a.new_datasets), names(a.gone_attrs))
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old_binary")
    ap.add_argument("new_binary")
    ap.add_argument("--dir", help="where the outputs go (default: a temporary folder)")
    ap.add_argument("--new-keys", default="",
                    help="comma-separated config keys the new build adds: their echo in "
                         "/parameters (with the default) is listed, not counted as a difference")
    ap.add_argument("--new-attrs", default="",
                    help="comma-separated attribute names the new build adds (anywhere but "
                         "/parameters): where only the new file has one, listed, not counted")
    ap.add_argument("--new-datasets", default="",
                    help="comma-separated dataset names (the last part of the path) the new "
                         "build adds: where only the new file has one, listed, not counted")
    ap.add_argument("--gone-attrs", default="",
                    help="comma-separated attribute names the new build no longer writes: where "
                         "only the old file has one, listed, not counted")
    a = ap.parse_args()
    d = os.path.abspath(a.dir) if a.dir else tempfile.mkdtemp(prefix="cdlab-identity-")
    run_all(a.old_binary, os.path.join(d, "old"))
    run_all(a.new_binary, os.path.join(d, "new"))
    return compare_dirs(os.path.join(d, "old"), os.path.join(d, "new"), names(a.new_keys),
                        names(a.new_attrs), names(a.new_datasets), names(a.gone_attrs))


if __name__ == "__main__":
    sys.exit(main())

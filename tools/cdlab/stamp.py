"""Provenance of a study summary: which build made it, when, and on what inputs.

Every experiments/*/analyze script ends its summary with stamp(...):

    from cdlab.stamp import stamp
    md += stamp(cdlab, inputs=[config, packing_file], runs=h5_files)

which gives a visible line and a machine-readable comment

    <!-- cdlab-study commit=... epoch=N date=YYYY-MM-DD fingerprint=... -->

read by tools/experiments_status.py (`make experiments-status`) and by the gallery. The commit
and the results epoch are those of the binary (`cdlab --version`); every run file given is
checked to come from that same build (a cached run of an older build would make the summary
lie about what made it). The fingerprint is a SHA-256 over the input files' bytes (configs,
prepared packings, particle files): two summaries with the same fingerprint rest on the same
inputs."""
import datetime
import hashlib
import os
import re
import subprocess

import h5py

MARK = re.compile(r"<!-- cdlab-study commit=(\S+) epoch=(\d+) date=(\S+) fingerprint=(\S+) -->")


def binary_version(cdlab):
    out = subprocess.run([cdlab, "--version"], check=True, capture_output=True, text=True).stdout
    info = dict(line.split(" ", 1) for line in out.strip().split("\n")[1:])
    return info["commit"], int(info["results"].split()[-1])


def fingerprint(paths):
    h = hashlib.sha256()
    for p in sorted(paths):
        h.update(os.path.basename(p).encode())
        with open(p, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:16]


def stamp(cdlab, inputs=(), runs=()):
    """Markdown lines: the build (commit, results epoch), the date, the inputs' fingerprint.
    Raises if a run file was written by another build."""
    commit, epoch = binary_version(cdlab)
    for r in runs:
        with h5py.File(r, "r") as f:
            c = f["build"].attrs["git_commit"]
            c = c.decode() if isinstance(c, bytes) else str(c)
        if c != commit:
            raise RuntimeError(f"{r} was written by cdlab {c}, not by the binary of this summary "
                               f"({commit}): delete it and rerun the study")
    fp = fingerprint(inputs) if inputs else "none"
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    names = ", ".join(f"`{os.path.relpath(p, root)}`" for p in sorted(inputs)) or "none"
    return ["", "---", "",
            f"Made by cdlab {commit} (results epoch {epoch}) on {date}, from "
            f"{f'{len(runs)} run files' if runs else 'the data'} of that build; inputs fingerprint `{fp}` (SHA-256 of {names}). `make experiments-status` says whether a "
            "later change to the engines' results has made this summary stale.",
            f"<!-- cdlab-study commit={commit} epoch={epoch} date={date} fingerprint={fp} -->", ""]


def clear_output(path):
    """Removes a run's output, its XDMF sidecar and their temporary names before the study
    runs it again (cdlab refuses to replace an existing output without --overwrite)."""
    xmf = (path[:-3] if path.endswith(".h5") else path) + ".xmf"
    for p in (path, xmf, path + ".partial", xmf + ".partial"):
        if os.path.exists(p):
            os.remove(p)


_versions = {}


def fresh(out_path, cdlab):
    """A cached run file may be reused only if it is newer than the binary and was written by a
    binary of the same commit (a run of another build, a quick run of `make test` say, is
    redone)."""
    if not (os.path.exists(out_path) and os.path.getmtime(out_path) > os.path.getmtime(cdlab)):
        return False
    if cdlab not in _versions:
        _versions[cdlab] = binary_version(cdlab)[0]
    try:
        with h5py.File(out_path, "r") as f:
            c = f["build"].attrs["git_commit"]
    except (OSError, KeyError):
        return False
    return (c.decode() if isinstance(c, bytes) else str(c)) == _versions[cdlab]

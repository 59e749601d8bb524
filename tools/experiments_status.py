#!/usr/bin/python3
"""Which study summaries are current? Without running anything: each experiments/*/summary.md
(and summary_quick.md) records the commit and results epoch of the build that made it
(tools/cdlab/stamp.py); the source's epoch is CDLAB_RESULTS_EPOCH in common/build_info.h,
raised by every change that moves results. A summary of an older epoch is STALE.

    tools/experiments_status.py          # table; exit 1 if any full summary is stale or unstamped
    tools/experiments_status.py --quick  # the summary_quick.md files too

Also shown: how many commits have touched the engines (cd/, common/) since the summary's
commit, for a reader who wants to check by hand (such commits need not change results)."""
import argparse
import os
import re
import subprocess
import sys

root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MARK = re.compile(r"<!-- cdlab-study commit=(\S+) epoch=(\d+) date=(\S+) fingerprint=(\S+) -->")
STUDIES = ["chain1d", "piston2d", "cd_vs_dem", "convergence", "kuhn", "sliding_pair", "ddem", "solvers",
           "lammps", "parallel"]


def source_epoch():
    text = open(os.path.join(root, "common", "build_info.h")).read()
    return int(re.search(r"#define CDLAB_RESULTS_EPOCH (\d+)", text).group(1))


def engine_commits_since(commit):
    base = commit.replace("-dirty", "")
    try:
        out = subprocess.run(["git", "-C", root, "rev-list", "--count", f"{base}..HEAD", "--", "cd", "common"],
                             capture_output=True, text=True, check=True).stdout
        return out.strip()
    except (subprocess.CalledProcessError, FileNotFoundError):
        return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="check summary_quick.md files too")
    a = ap.parse_args()
    epoch = source_epoch()
    bad = 0
    print(f"results epoch of the source: {epoch} (common/build_info.h)")
    print(f"{'study':<14} {'summary':<17} {'made by':<20} {'date':<11} {'epoch':>5}  {'engine commits since':>20}  status")
    for name in STUDIES:
        for fname in ["summary.md"] + (["summary_quick.md"] if a.quick else []):
            p = os.path.join(root, "experiments", name, fname)
            if not os.path.exists(p):
                if fname == "summary.md":
                    print(f"{name:<14} {fname:<17} {'-':<20} {'-':<11} {'-':>5}  {'-':>20}  MISSING")
                    bad += 1
                continue
            m = MARK.search(open(p).read())
            if not m:
                print(f"{name:<14} {fname:<17} {'-':<20} {'-':<11} {'-':>5}  {'-':>20}  STALE (no stamp)")
                bad += fname == "summary.md"
                continue
            commit, e, date = m.group(1), int(m.group(2)), m.group(3)
            status = "current" if e == epoch else ("STALE" if e < epoch else "newer than the source?")
            if commit.endswith("-dirty"):
                status += " (made by a build with uncommitted changes)"
            if e != epoch and fname == "summary.md":
                bad += 1
            print(f"{name:<14} {fname:<17} {commit:<20} {date:<11} {e:>5}  {engine_commits_since(commit):>20}  {status}")
    print("(engine commits since: commits to cd/ or common/ after the summary's build. Beside "
          "'current' they are fine: a change that moves results raises the epoch, which makes "
          "the summary STALE, and one that should not proves it bit for bit with "
          "tools/identity.py in its commit message.)")
    if bad:
        print(f"{bad} full summar{'y is' if bad == 1 else 'ies are'} stale or missing: `make experiments` regenerates them")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Runs the command blocks of the user docs as printed, so that they never go stale.

    tools/doc_commands.py [--build DIR] [--keep] FILE.md ...

Every fenced block opened with ```sh is run, in the order of the files and of the blocks, by
`bash -e` in one scratch folder whose build/, experiments/, tools/, docs/, tests/ and bench/
point at the repository's (build/ at DIR, default the repository's build/, so that a test can
run the docs against the build under test). Blocks opened with ``` alone (make demo, make test,
snippets of Python or of a config) are shown, not run. A block fails on a non-zero exit or on a
Python traceback in its output; the first failure ends the run with the block's file and line
and the last lines of its output (exit 1). Prints one line per block and "docs: N blocks ran".
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPEN = re.compile(r"^```(\S*)\s*$")


def blocks(path):
    """(line, language, text) of each fenced block of path."""
    out, lang, start, body = [], None, 0, []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if lang is None:
                m = OPEN.match(line)
                if m:
                    lang, start, body = m.group(1), n, []
            elif line.rstrip() == "```":
                out.append((start, lang, "".join(body)))
                lang = None
            else:
                body.append(line)
    if lang is not None:
        raise SystemExit(f"{path}:{start}: a fenced block that never closes")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--build", default=os.path.join(root, "build"),
                    help="the folder of the cdlab programs (default: the repository's build/)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="cdlab-docs-")
    os.symlink(os.path.abspath(a.build), os.path.join(work, "build"))
    for d in ("experiments", "tools", "docs", "tests", "bench"):
        os.symlink(os.path.join(root, d), os.path.join(work, d))
    env = dict(os.environ)
    env.pop("CDLAB", None)  # the docs' commands find the program as a user's would
    n = 0
    try:
        for path in a.files:
            rel = os.path.relpath(os.path.abspath(path), root)
            for line, lang, text in blocks(path):
                if lang != "sh":
                    continue
                t0 = time.time()
                p = subprocess.run(["bash", "-e", "-c", text], cwd=work, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
                out = p.stdout.decode("utf-8", "replace")
                n += 1
                if p.returncode != 0 or "Traceback (most recent call last)" in out:
                    tail = "\n".join(out.rstrip().splitlines()[-25:])
                    print(f"FAIL {rel}:{line}: exit {p.returncode}\n{tail}")
                    return 1
                print(f"ok   {rel}:{line} ({time.time() - t0:.1f} s)")
    finally:
        if a.keep:
            print(f"scratch folder: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"docs: {n} blocks ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())

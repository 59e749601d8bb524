#!/usr/bin/python3
"""Builds docs/experiments.md from experiments/*/summary.md and copies their plots into
docs/experiments/ (run after `make experiments`; `make gallery`)."""
import os
import re
import shutil

from cdlab.textfile import write_text
from experiments_status import MARK, STUDIES, source_epoch

root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def main():
    dst = os.path.join(root, "docs", "experiments")
    os.makedirs(dst, exist_ok=True)
    parts = ["# Experiments gallery", "",
             "Every study records the build that made it (commit and results epoch, under each title); "
             "`make experiments-status` lists them and says which are stale, without running anything. "
             "The physics they rest on: [physics.md](physics.md).", "",
             "Each study lives in `experiments/<name>/` (config, run script, analysis script) and writes its "
             "`summary.md` with measured numbers beside the paper's or the theory's, the tolerance and a pass/fail "
             "word. `make experiments` reruns all of them (`QUICK=1`: small versions, into each study's `out_quick/` and `summary_quick.md`, never over the full study's files); `make gallery` rebuilds this "
             "page. The sections below are those summaries, with their plots.", ""]
    for name in STUDIES:
        p = os.path.join(root, "experiments", name, "summary.md")
        if not os.path.exists(p):
            parts += [f"## {name}", "", "(not run yet)", ""]
            continue
        text = open(p).read()

        def repl(m):
            src = os.path.join(root, "experiments", name, m.group(2))
            target = f"{name}_{os.path.basename(src)}"
            if os.path.exists(src):
                shutil.copy(src, os.path.join(dst, target))
            elif not os.path.exists(os.path.join(dst, target)):
                return m.group(0)  # neither the study's plot (out/ of a run) nor an earlier copy
            return f"![{m.group(1)}](experiments/{target})"

        text = re.sub(r"!\[([^\]]*)\]\(([^)]+\.png)\)", repl, text)
        text = re.sub(r"^(#+) ", r"#\1 ", text, flags=re.M)  # one level down
        # under the study's title: the build that made it, and whether it is current
        m = MARK.search(text)
        if m:
            state = "current" if int(m.group(2)) == source_epoch() else "**STALE**: made before the last change of results"
            line = f"*Made by cdlab {m.group(1)} on {m.group(3)}, results epoch {m.group(2)} ({state}).*"
        else:
            line = "*No provenance stamp: made by a build before the studies recorded one (stale).*"
        text = re.sub(r"^(## [^\n]*\n)", lambda t: t.group(1) + "\n" + line + "\n", text, count=1)
        parts += [f"<!-- from experiments/{name}/summary.md -->", text, ""]
    write_text(os.path.join(root, "docs", "experiments.md"), "\n".join(parts))
    print("docs/experiments.md written")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""The functions of cdlab's C code longer than a limit (lines from the signature to the closing
brace), for the review rule "no function over about 80 lines without a comment that says why"
(issue 62), and the files of cd/ and common/ longer than FILE_LIMIT lines. Prints `lines
file:line name` per function over the limit; a function whose comment above it contains "Long:"
says why and is marked so. Exit 1 when a long function does not say why or a file is too long
(make check-layers runs it).

    tools/long_functions.py [LIMIT] [ROOT]    (default 90)"""
import os
import re
import sys

FILE_LIMIT = 900

SIG = re.compile(r"^(?!static_assert)[A-Za-z_][\w \*]*?\b(\w+)\s*\([^;]*$")


def functions(path):
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    k = 0
    while k < len(lines):
        m = SIG.match(lines[k])
        if m and not lines[k].startswith(("typedef", "#", "return", "else", "if ")):
            start = k
            # the body starts at the first line that is "{" at column 0
            j = k
            while j < len(lines) and lines[j] != "{" and not lines[j].endswith(";"):
                j += 1
            if j < len(lines) and lines[j] == "{":
                end = j
                while end < len(lines) and lines[end] != "}":
                    end += 1
                above = "\n".join(lines[max(0, start - 30):start])
                comment = above[above.rfind("/*"):] if "/*" in above else ""
                yield m.group(1), start + 1, end - start + 1, "Long:" in comment
                k = end
        k += 1


def main():
    limit = int(sys.argv[1]) if len(sys.argv) > 1 else 90
    root = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "..")
    rows, long_files = [], []
    for top in ("common", "cd", "tools"):
        for dp, _, fs in os.walk(os.path.join(root, top)):
            for f in fs:
                if f.endswith((".c", ".h")):
                    p = os.path.join(dp, f)
                    for name, line, n, why in functions(p):
                        if n > limit:
                            rows.append((n, os.path.relpath(p, root), line, name, why))
                    n_lines = sum(1 for _ in open(p, encoding="utf-8", errors="replace"))
                    if top != "tools" and n_lines > FILE_LIMIT:
                        long_files.append((n_lines, os.path.relpath(p, root)))
    for n, p, line, name, why in sorted(rows, reverse=True):
        print(f"{n:5d} {p}:{line} {name}{'  (its comment says why)' if why else ''}")
    for n, p in sorted(long_files, reverse=True):
        print(f"{n:5d} {p}: a file over {FILE_LIMIT} lines")
    bad = sum(1 for r in rows if not r[4]) + len(long_files)
    print(f"long functions: {len(rows)} over {limit} lines, {sum(1 for r in rows if not r[4])} "
          f"without a reason; {len(long_files)} files over {FILE_LIMIT} lines")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

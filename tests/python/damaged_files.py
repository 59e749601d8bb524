#!/usr/bin/python3
"""Run by tests/check_safety.c (io_damaged_files_one_line): cdlab-py's summary and series on
damaged copies of a cdlab output, in one process. Every copy must end in exit 0 or 2, and an
exit 2 in one line on stderr that names the file, never a traceback.

    damaged_files.py GOOD.h5 DIR        # the copies are made in DIR
Prints "damaged: N copies, K refused, 0 failures" and exits 0, or lists the failures (exit 1)."""
import contextlib
import io
import os
import sys

from cdlab.__main__ import main


def copies(good, folder):
    data = open(good, "rb").read()
    n = len(data)
    for k in range(1, 50):  # cut short at 49 places
        path = os.path.join(folder, f"cut{k:02d}.h5")
        with open(path, "wb") as f:
            f.write(data[: n * k // 50])
        yield path
    for k in range(49):  # 64 bytes overwritten at 49 places
        at = n * k // 49
        bad = bytearray(data)
        bad[at:at + 64] = bytes((at + j * 37) % 256 for j in range(len(bad[at:at + 64])))
        path = os.path.join(folder, f"bad{k:02d}.h5")
        with open(path, "wb") as f:
            f.write(bytes(bad))
        yield path


def main_test():
    good, folder = sys.argv[1], sys.argv[2]
    failures, refused, total = [], 0, 0
    for path in copies(good, folder):
        for argv in (["summary", path], ["series", path, "kinetic_energy"]):
            total += 1
            err, out = io.StringIO(), io.StringIO()
            try:
                with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
                    rc = main(argv)
            except BaseException as e:  # a traceback a user would have seen
                failures.append(f"{' '.join(argv)}: {type(e).__name__}: {e}")
                continue
            text = err.getvalue().strip()
            if rc not in (0, 2):
                failures.append(f"{' '.join(argv)}: exit {rc}")
            elif rc == 2:
                refused += 1
                if "\n" in text or path not in text or "Traceback" in text:
                    failures.append(f"{' '.join(argv)}: not one line naming the file: {text!r}")
    for f in failures:
        print("FAIL " + f)
    print(f"damaged: {total} reads of {total // 2} copies, {refused} refused, "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main_test())

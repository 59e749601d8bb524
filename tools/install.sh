#!/usr/bin/env bash
# make install's work (Makefile: install, install-built): puts what BUILD holds under PREFIX.
#   PREFIX/bin/cdlab, cdlab-lab, cdlab-py      the programs
#   PYDIR/cdlab/                               the Python package (import cdlab)
#   PREFIX/share/doc/cdlab/                    README, docs/ (with the how-to pages), images
#   PREFIX/share/doc/cdlab/examples/           the example configs (experiments/*/*.ini)
# Usage: tools/install.sh PREFIX PYDIR BUILD   (DESTDIR is already part of PREFIX and PYDIR)
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: tools/install.sh PREFIX PYDIR BUILD" >&2; exit 2; }
prefix=$1 pydir=$2 build=$3
root="$(cd "$(dirname "$0")/.." && pwd)"
for p in cdlab cdlab-lab; do
    [ -x "$build/$p" ] || { echo "install: $build/$p is not built (make first)" >&2; exit 2; }
done
install -d "$prefix/bin" "$pydir/cdlab" "$prefix/share/doc/cdlab/docs/howto" \
    "$prefix/share/doc/cdlab/docs/img" "$prefix/share/doc/cdlab/examples"
install -m 755 "$build/cdlab" "$build/cdlab-lab" "$root/tools/cdlab-py" "$prefix/bin/"
install -m 644 "$root"/tools/cdlab/*.py "$pydir/cdlab/"
install -m 644 "$root/README.md" "$prefix/share/doc/cdlab/"
install -m 644 "$root"/docs/*.md "$prefix/share/doc/cdlab/docs/"
if compgen -G "$root/docs/howto/*.md" > /dev/null; then
    install -m 644 "$root"/docs/howto/*.md "$prefix/share/doc/cdlab/docs/howto/"
fi
install -m 644 "$root"/docs/img/*.png "$prefix/share/doc/cdlab/docs/img/" 2>/dev/null || true
for ini in "$root"/experiments/*/*.ini; do
    e=$(basename "$(dirname "$ini")")
    install -D -m 644 "$ini" "$prefix/share/doc/cdlab/examples/$e/$(basename "$ini")"
done
echo "installed: $prefix/bin/cdlab (cdlab-lab, cdlab-py), the package in $pydir/cdlab,"
echo "           the docs and example configs in $prefix/share/doc/cdlab"
case ":$(/usr/bin/python3 -c 'import sys; print(":".join(sys.path))' 2>/dev/null):" in
    *":$pydir:"*) ;;
    *) echo "           (this python3 does not look in $pydir: PYTHONPATH=$pydir for import cdlab)" ;;
esac

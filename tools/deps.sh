#!/usr/bin/env bash
# Install the Debian packages cdlab needs, only those missing. Does nothing when all are present.
set -euo pipefail
pkgs=(build-essential pkg-config libhdf5-dev check libinih-dev libfclib-dev libopenmpi-dev openmpi-bin
      libsuitesparse-dev
      python3-numpy python3-scipy python3-matplotlib python3-h5py strace)
# strace: the failed-write tests (a write made to fail: tests/check_safety.c, tools/faultsweep.py)
# extra packages for one target (make bench: lammps for the side-by-side timing; experiments/lammps:
# lammps to compare with)
# shellcheck disable=SC2206
pkgs+=(${CDLAB_EXTRA_PKGS:-})
missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
    echo "deps: all present (${pkgs[*]})"
    exit 0
fi
echo "deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
    SUDO=sudo
    command -v sudo >/dev/null || { echo "deps: not root and no sudo; install: ${missing[*]}" >&2; exit 1; }
else
    SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"

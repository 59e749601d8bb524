#!/usr/bin/env bash
# lammps: cdlab's DEM beside LAMMPS on the chute benchmark (bench/chute.ini and
# bench/lammps/in.chute3d: 65,600 spheres on a frozen rough base, periodic in x and y, gravity
# tilted 26 deg, k_n = 2e5, k_t = 2/7 k_n, normal dashpot m_eff 50, mu = 0.5, dt = 1e-4), 2,100
# steps from the same flowing state: Debian's LAMMPS (pair gran/hooke/history) without and with
# its tangential dashpot (dampflag 0, 1), cdlab's dem.tangential = lammps for both, and cdlab's
# own laws (kuhn, conventional) for the first; and 360 spheres in a box of five frictional walls
# (walls.ini, in.walls: LAMMPS's fix wall/gran) and 120 discs in 2D (discs.ini, in.discs), 4,000
# steps each. Kinetic and rotational energies and
# contacts every 100 (200) steps; analyze.py compares them. Installs Debian's lammps where it is
# missing.
# QUICK=1: one cell of the chute (4,100 spheres), 1,000 steps.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
CDLAB="${CDLAB:-$root/build/cdlab}"
PYTHON="${PYTHON:-/usr/bin/python3}"
# the shared analysis package tools/cdlab (fits, stamps, file comparison)
export PYTHONPATH="$root/tools${PYTHONPATH:+:$PYTHONPATH}"
CDLAB_EXTRA_PKGS=lammps bash "$root/tools/deps.sh"
if [ "${QUICK:-}" = 1 ]; then
    out="$here/out_quick" rx=1 steps=1000 cell=--cell
else
    out="$here/out" rx=4 steps=2100 cell=
fi
mkdir -p "$out"
cp "$root/bench/lammps/in.chute3d" "$root/bench/lammps/data.chute3d" "$out/"
for damp in 0 1; do
    echo "lammps: LAMMPS, dampflag $damp"
    (cd "$out" && lmp -in in.chute3d -var rx $rx -var ry $rx -var nwarm 0 -var nsteps $steps \
        -var thermo 100 -var dampflag $damp -log lammps_damp$damp.log > /dev/null)
done
# a particle file of cdlab's chute format as a LAMMPS data file (the numbers' text copied):
# particles FILE, box lines ("LO HI xlo xhi" ...), data file
lammps_data() {
    awk -v box="$2" '!/^#/ && NF == 11 { n++; a[n] = n " 1 " $4 " 1 " $1 " " $2 " " $3; v[n] = n " " $5 " " $6 " " $7 " " $8 " " $9 " " $10 }
         END { print "experiments/lammps/" FILENAME "\n\n" n " atoms\n1 atom types\n\n" box "\n\nAtoms # sphere\n"
               for (i = 1; i <= n; i++) print a[i]; print "\nVelocities\n"; for (i = 1; i <= n; i++) print v[i] }' "$1" > "$3"
}
# 360 spheres in a box of five frictional walls, 120 discs in a box of three (LAMMPS: fix
# wall/gran; the discs in 2D), the same in both codes
(cd "$here" && lammps_data walls.txt $'-0.5 8.5 xlo xhi\n-0.5 8.5 ylo yhi\n-0.5 16 zlo zhi' "$out/data.walls")
(cd "$here" && lammps_data discs.txt $'-0.5 13.5 xlo xhi\n-0.5 17 ylo yhi\n-0.5 0.5 zlo zhi' "$out/data.discs")
cp "$here/in.walls" "$here/in.discs" "$out/"
for case in walls discs; do
    echo "lammps: LAMMPS, $case"
    (cd "$out" && lmp -in in.$case -log lammps_$case.log > /dev/null)
done
echo "lammps: cdlab's runs (runs.py: the chute with each law, the two boxes)"
CDLAB="$CDLAB" "$PYTHON" "$here/runs.py" "$out" $steps $cell
"$PYTHON" "$here/analyze.py" --out "$out" $([ "${QUICK:-}" = 1 ] && echo --quick)
echo "summary: $here/summary$([ "${QUICK:-}" = 1 ] && echo _quick).md"

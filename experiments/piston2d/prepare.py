#!/usr/bin/python3
"""Prepare the piston2d packing once: run prepare.ini, check that the translational kinetic
energy has dropped by 1e6 from its peak and the piston is at rest, save out/packing.txt
(x y z radius) and out/piston.txt (piston plane height), and write out/prepare.md."""
import os
import subprocess

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
from cdlab import Run
from cdlab.stamp import clear_output
from cdlab.textfile import write_text

CDLAB = os.environ.get("CDLAB", os.path.join(root, "build", "cdlab"))


def main():
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--tag", default="full")
    ap.add_argument("--set", action="append", default=[], help="config override, as for cdlab")
    a = ap.parse_args()
    out = os.path.join(here, "out_quick" if a.tag.startswith("quick") else "out")  # quick: its own
    os.makedirs(out, exist_ok=True)
    h5 = os.path.join(out, f"prepare_{a.tag}.h5")
    clear_output(h5)
    cmd = [CDLAB, "run", os.path.join(here, "prepare.ini"), "-o", h5, "--quiet"]
    for kv in a.set:
        cmd += ["--set", kv]
    subprocess.run(cmd, check=True)
    r = Run(h5)
    snaps = r.snapshot_names
    ke_trans, ke_rot = [], []
    for name in snaps:
        s = r.snapshot(name)
        m, v, w, rad = s["mass"], s["velocity"], s["angular_velocity"], s["radius"]
        ke_trans.append(0.5 * np.sum(m * np.sum(v * v, axis=1)))
        ke_rot.append(0.5 * np.sum(0.5 * m * rad ** 2 * np.sum(w * w, axis=1)))
    ke = r.series("kinetic_energy")
    u = r.series("piston_velocity")[:, 0]
    s_end = float(r.series("piston_position")[-1, 0])
    drop = ke_trans[-1] / ke.max()
    u_rel = abs(u[-1]) / np.abs(u).max()
    last = r.snapshot()
    # unloaded spinning rattlers keep rotational energy (no gravity, nothing to stop them)
    ok = drop < 1e-6 and u_rel < 1e-6
    p0 = float(r.params["piston.top.point"].split()[1])
    height = p0 - s_end  # the plane moves along its normal (0, -1, 0) by s
    # only a packing at rest is saved: the runs reuse it while it is newer than the binary
    packing, piston = os.path.join(out, f"packing_{a.tag}.txt"), os.path.join(out, f"piston_{a.tag}.txt")
    if ok:
        np.savetxt(packing, np.column_stack([last["position"], last["radius"]]),
                   fmt="%.17g", header="x y z radius: piston2d packing prepared by prepare.py (at rest under F)")
        write_text(piston, f"{height:.17g}\n")
    else:
        for f in (packing, piston):
            if os.path.exists(f):
                os.remove(f)
    md = ["## Preparation (prepare.ini)", "",
          f"{r.params['particles.count']} disks, friction {r.params['contact.friction']}. Compressed with F = {r.params['piston.top.force']} for {len(ke) - 1} steps at N_I = "
          f"{r.params['solver.iterations']}: peak kinetic energy {ke.max():.4g}; at the end translational "
          f"{ke_trans[-1]:.3g} (ratio {drop:.2e}, required < 1e-6), rotational {ke_rot[-1]:.3g} (unloaded rattlers "
          f"spinning freely; the saved packing has zero velocities), piston velocity {abs(u[-1]):.2e} "
          f"({u_rel:.1e} of its peak, required < 1e-6). Piston plane at y = {height:.6f}. "
          f"**{'pass' if ok else 'FAIL'}**", ""]
    write_text(os.path.join(out, f"prepare_{a.tag}.md"), "\n".join(md))
    print("\n".join(md))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())

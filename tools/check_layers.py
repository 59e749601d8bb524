#!/usr/bin/python3
"""The layers of cdlab's C code (docs/developing.md, "Layout"): every #include "..." of a file must point
down the direction tools -> cd/run -> cd/engine <- engines (cd/nscd, cd/dem) -> common, and
the run pipeline must name no engine. `make check-layers` (run by `make test`) exits 1 with
one line per violation.

    tools/check_layers.py [ROOT]

The layers, and what each may include (besides itself and the C library):
  common/      common/ only: the geometry layer and shared services
  cd/engine/   common/: the interface every engine implements, and what engines share
               (the CD <-> DEM equivalence, checkpoint records, messages)
  cd/nscd/     cd/engine/, common/: contact dynamics (nonsmooth contact dynamics)
  cd/dem/      cd/engine/, common/: DEM
  cd/run/      cd/engine/, common/: the run pipeline, which knows engines only through
               the interface: no engine's header, and no engine's name in its text
  cd/engines.c the registry: the one place that names every engine (any cd/ header)
  cd/cdlab.h   the public face of cd/ for tools/: run/, engine/ and the engines' public
               headers it names
  tools/       cd/cdlab.h and common/ only
  tests/, bench/  anything (they test the internals)
and hdf5.h and mpi.h are included by their wrappers alone (common/h5io_hdf5.h, common/comm.c).
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SYSTEM_INCLUDE = re.compile(r'^\s*#\s*include\s+<([^>]+)>', re.M)
# third-party APIs that do not leak past their wrapper (STYLE.md): the one file that may
# include each
WRAPPED = {"hdf5.h": os.path.join("common", "h5io_hdf5.h"), "mpi.h": os.path.join("common", "comm.c")}
ENGINE_FOLDERS = ("nscd", "dem")
# words of an engine's that the run pipeline must not say (its code, its comments, its
# strings): the engines' folders and names, their config sections and their types
ENGINE_WORDS = re.compile(r"\b(nscd|dem|DEM|CD|contact dynamics|cd_\w+|dem_\w+|Kuhn|k_n|k_t)\b")
# what each layer may include, by the folder of the included header
# ("build": the headers generated into the build folder, build_stamp.h and config_schema.h)
ALLOWED = {
    "common": {"common", "build"},
    "cd/engine": {"common", "cd/engine", "build"},
    "cd/nscd": {"common", "cd/engine", "cd/nscd", "build"},
    "cd/dem": {"common", "cd/engine", "cd/dem", "build"},
    "cd/run": {"common", "cd/engine", "cd/run", "build"},
    "tools": {"common", "cd/cdlab.h", "build"},
}


def layer_of(path):
    """The layer of a source file (its folder under the root), or None: not checked."""
    parts = path.split(os.sep)
    if parts[0] == "common":
        return "common"
    if parts[0] == "tools":
        return "tools"
    if parts[0] == "cd" and len(parts) >= 3:
        return "cd/" + parts[1]
    return None


def resolve(root, src, name):
    """The folder (layer) a quoted include names: "engine/engine.h" -> cd/engine; a bare name
    is looked up beside the file, then in common/ (the build's -I order); the generated
    headers of the build folder count as "build"; cd/cdlab.h as itself."""
    if name in ("cdlab.h",) or name == "cd/cdlab.h":
        return "cd/cdlab.h"
    if "/" in name:
        top = name.split("/")[0]
        if os.path.isdir(os.path.join(root, "cd", top)):
            return "cd/" + top
        return top
    here = os.path.dirname(src)
    if os.path.exists(os.path.join(root, here, name)):
        return layer_of(os.path.join(here, name)) or here
    if os.path.exists(os.path.join(root, "common", name)):
        return "common"
    return "build"  # build_stamp.h, config_schema.h: generated into the build folder


def sources(root):
    for top in ("common", "cd", "tools"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                if f.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, f), root)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    bad = []
    for src in sources(root):
        text = open(os.path.join(root, src), encoding="utf-8", errors="replace").read()
        for name in SYSTEM_INCLUDE.findall(text):
            if name in WRAPPED and src != WRAPPED[name]:
                bad.append(f"{src}: #include <{name}>: only {WRAPPED[name]} includes it (its "
                           "wrapper)")
        if src in (os.path.join("cd", "engines.c"), os.path.join("cd", "cdlab.h")):
            continue  # the registry and the public face name the engines by design
        layer = layer_of(src)
        if src.startswith("cd" + os.sep) and layer is None:
            bad.append(f"{src}: a file of cd/ outside its folders (run, engine, nscd, dem) "
                       "other than cdlab.h and engines.c")
            continue
        allowed = ALLOWED.get(layer)
        if allowed is None:
            continue
        for name in INCLUDE.findall(text):
            to = resolve(root, src, name)
            if to not in allowed:
                bad.append(f'{src}: #include "{name}" ({to}) runs against the layers: '
                           f"{layer} may include {', '.join(sorted(allowed))}")
        if layer == "cd/run":
            for k, line in enumerate(text.split("\n"), 1):
                m = ENGINE_WORDS.search(line)
                if m:
                    bad.append(f"{src}:{k}: the run pipeline names an engine's '{m.group(0)}'")
    for b in bad:
        print(b)
    print(f"check-layers: {len(bad)} violation{'s' if len(bad) != 1 else ''}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

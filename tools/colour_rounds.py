#!/usr/bin/python3
"""What a colouring made by the ranks themselves costs under an ideal protocol (issue 66,
docs/parallel.md): the rounds of a distributed Jones-Plassmann colouring of one step's
contacts, for two priorities, at rank counts a run cannot reach here. The engine makes the
colouring so since 2026-12-08 (cd/nscd/cd_dist_color.c) and records its real rounds in
/series/parallel/colour_rounds; its hashed order (solver.color_priority = hashed) hashes the
keys with splitmix64's finaliser alone and takes the walls' contacts first, so this tool's
"hashed" is a like order, not the same one.

    tools/colour_rounds.py OUTPUT.h5 [--snapshot STEP] [--ranks 2,16,64,256]

Reads a snapshot's contact pairs (/snapshots/<step>/contacts/pair, particle ids; the last
snapshot by default) and positions. Two contacts conflict when they share a movable body (a
particle that is not frozen; walls are taken as fixed). Greedy colouring in a priority order
gives each contact the smallest colour none of its earlier neighbours has; Jones-Plassmann
computes that colouring in parallel rounds. Priorities:
  key     the contact key (cdlab's contact_key_of_ids: body 0's id, then body 1's), which is
          the colored sweep's colouring today, bit for bit;
  hashed  a 64-bit hash of the key (splitmix64's finaliser): a different colouring.
Rounds on P ranks, with an ideal protocol: the particles cut into P boxes of equal counts by
recursive coordinate bisection (cdlab's cuts weigh the particles; this stand-in does not), a
contact on the rank of its body 1 (as cdlab counts it), local chains of dependencies free
within a round, one round for every dependency that crosses ranks. Prints the colours of each
order and the rounds for each P."""
import argparse
import sys

import h5py
import numpy as np

MASK64 = (1 << 64) - 1


def splitmix64(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def bisect(pos, idx, parts, owner, first):
    """owner[idx] = first .. first + parts - 1: halves by count along the longest extent."""
    if parts == 1:
        owner[idx] = first
        return
    extent = pos[idx].max(axis=0) - pos[idx].min(axis=0)
    axis = int(np.argmax(extent))
    ordered = idx[np.argsort(pos[idx, axis], kind="stable")]
    low = parts // 2
    cut = len(ordered) * low // parts
    bisect(pos, ordered[:cut], low, owner, first)
    bisect(pos, ordered[cut:], parts - low, owner, first + low)


def colours(pairs, movable):
    """The number of colours of the greedy colouring in the order of pairs."""
    used = {}
    count = 0
    for pair in pairs:
        bodies = [b for b in pair if b >= 0 and movable[b]]
        taken = 0
        for b in bodies:
            taken |= used.get(b, 0)
        c = 0
        while taken >> c & 1:
            c += 1
        count = max(count, c + 1)
        for b in bodies:
            used[b] = used.get(b, 0) | (1 << c)
    return count


def rounds(pairs, movable, owner):
    """The Jones-Plassmann rounds of the greedy colouring in the order of pairs on the ranks of
    owner: a contact's round is the latest of its earlier neighbours' (one more where that
    neighbour is on another rank). A body's coloured contacts are always its earliest ones, so
    its latest coloured contact is the one that counts."""
    last = {}  # body -> (round, rank) of its latest contact so far
    worst = 0
    for pair in pairs:
        rank = owner[pair[1]]
        bodies = [b for b in pair if b >= 0 and movable[b]]
        r = 1
        for b in bodies:
            if b in last:
                rb, ob = last[b]
                r = max(r, rb + (ob != rank))
        for b in bodies:
            last[b] = (r, rank)
        worst = max(worst, r)
    return worst


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("output", help="a cdlab output file with a snapshot that has contacts")
    ap.add_argument("--snapshot", help="its step (default: the last snapshot)")
    ap.add_argument("--ranks", default="2,16,64,256", help="rank counts, comma-separated")
    a = ap.parse_args(argv)
    try:
        ranks = [int(p) for p in a.ranks.split(",")]
    except ValueError:
        sys.exit(f"colour_rounds: --ranks: expected whole numbers separated by commas, got '{a.ranks}'")
    if not ranks or min(ranks) < 1:
        sys.exit(f"colour_rounds: --ranks: every count must be at least 1, got '{a.ranks}'")
    with h5py.File(a.output, "r") as f:
        if "snapshots" not in f or not len(f["snapshots"]):
            sys.exit(f"colour_rounds: {a.output} has no snapshots")
        name = a.snapshot.zfill(8) if a.snapshot else sorted(f["snapshots"].keys())[-1]
        if name not in f["snapshots"]:
            sys.exit(f"colour_rounds: {a.output} has no snapshot of step {a.snapshot}")
        s = f["snapshots"][name]
        pairs = s["contacts/pair"][:].astype(np.int64)
        ids = s["id"][:].astype(np.int64)
        pos = np.empty_like(s["position"][:])
        pos[ids] = s["position"][:]
        movable = np.ones(len(ids), bool)
        if "frozen" in s:  # written where some particle is frozen
            movable[ids] = ~s["frozen"][:].astype(bool)
    if len(pairs) == 0:
        sys.exit(f"colour_rounds: snapshot {name} of {a.output} has no contacts")
    keys = [((int(i) + (1 << 16)) << 32) | (int(j) & 0xFFFFFFFF) for i, j in pairs]
    orders = {"key": np.argsort(np.array(keys, dtype=np.uint64), kind="stable"),
              "hashed": np.argsort(np.array([splitmix64(k) for k in keys], dtype=np.uint64), kind="stable")}
    print(f"{a.output}, snapshot {int(name)}: {len(ids)} particles ({int((~movable).sum())} frozen), "
          f"{len(pairs)} contacts")
    owners = {}
    for P in ranks:
        owners[P] = np.zeros(len(ids), int)
        bisect(pos, np.arange(len(ids)), P, owners[P], 0)
    for label, order in orders.items():
        ordered = [tuple(p) for p in pairs[order]]
        per = ", ".join(f"{P}: {rounds(ordered, movable, owners[P])}" for P in ranks)
        print(f"priority {label:6s}: {colours(ordered, movable)} colours; rounds on {per} ranks")


if __name__ == "__main__":
    main()

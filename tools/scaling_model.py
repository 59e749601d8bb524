#!/usr/bin/python3
"""The scaling model of docs/parallel.md: efficiency of a distributed cdlab run at P ranks for N
particles on a network of latency alpha and bandwidth beta, built from measured per-particle and
per-contact compute costs and the communication pattern of each engine: before 2026-12-03
(every exchange an all-to-all, the cuts from a gather of every position), as built (exchanges
to the ranks with data only, point to point, and a nonblocking barrier where the counts are not
known: comm.c's NBX; the cuts from the ranks' shares, decomp_build_shared). For the colored
sweep four: before; with the gather of every contact for the colouring (the build of
2026-12-07); and as built since 2026-12-08, the colouring made by the ranks in rounds of
neighbour messages (cd/nscd/cd_dist_color.c), in key order (solver.color_priority = key, the
default: long chains, hundreds of rounds) and in hashed order (about twenty rounds).

    tools/scaling_model.py [--alpha 2e-6] [--beta 1e10] [--markdown]

Every measured input is a constant below with its source. Per step and rank, with n = N/P
particles in a cube of side s = n^(1/3) particle spacings and a halo of thickness h spacings,
the halo holds g = 6 s^2 h + 12 s h^2 copies (faces and edges; corners neglected). A collective
reduction (cdlab's comm_allreduce: a gather to rank 0 and a broadcast, binomial trees) costs
2 alpha log2 P; an all-to-all exchange (MPI_Alltoallv over every rank, before) alpha (P - 1)
plus its bytes over beta; a neighbour exchange 26 alpha plus its bytes over beta, and where the
receiver does not know its counts the barrier's 2 alpha log2 P; a reduction of many bytes
(the cuts' rounds) adds twice its bytes over beta (reduce-scatter and all-gather).
Efficiency E = compute / (compute + communication); load imbalance is not modelled."""
import argparse
import math

# measured on the 2-core development VM, bench/results/2026-11-24-e59929e8df1e-mpi.md and
# /parallel/ranks of the same runs (one thread per rank, -O3 -march=native)
DEM_SECONDS_PER_PARTICLE_STEP = 1.0 / 3.83e6  # the DEM chute, one process
# MPI calls a step, all of them: the halo refresh (an exchange and its agreement), the rebuild
# test's maximum and the step's agreement, which carries the signal check and the record's
# sums since 2026-12-03 (6 calls before); /parallel/ranks: 4.2 on tests/mpi/pile.ini at 4 ranks
# (its rebuilds included)
DEM_CALLS_PER_STEP = 4
DEM_REFRESH_BYTES = 72  # position and the step's movements of a halo copy (9 doubles)
DEM_REBUILD_EVERY = 20  # steps between neighbour-list rebuilds in a dense flow (chute: 1 in 300)
DEM_REBUILD_BYTES = 248  # a particle's record with its movements (31 doubles), halo or migrant
DEM_MIGRATING = 0.03  # share of a rank's particles that change rank at a rebuild
DEM_REBALANCE_EVERY = 10  # rebuilds between fresh cuts ([parallel] rebalance; an assumption)
CD_SECONDS_PER_UPDATE = 0.428 / (296240 * 50)  # colored, 97,336 spheres, N_I = 50, one process
CD_CONTACTS_PER_PARTICLE = 296240 / 97336
CD_COLOURS = 12  # greedy colouring of a 3D packing (the lattice case: 12)
CD_SWEEPS = 50
CD_VELOCITY_BYTES = 48  # v and w of a halo copy
CD_CONTACT_BYTES = 48  # a warm-start contact record, to the owners every step (6 doubles)
CD_COLOUR_GATHER_BYTES = 24  # a contact's bodies and flags (3 doubles), gathered on every rank
# the colouring's rounds a step (each: an exchange of unknown counts and an agreement), measured
# on the CD chute: key order 256-260 on 4 ranks (3 x 3 tiles, 36,900 spheres,
# /series/parallel/colour_rounds); tools/colour_rounds.py's ideal protocol gives 112, 144 and
# 286 on 16, 64 and 256 ranks (4 x 4 tiles) and grows with P, so 300 is a lower bound at 16,384;
# hashed order 22 on 4 ranks, the ideal 16-18 on 16-256 ranks (slow growth: Jones-Plassmann's
# rounds with random priorities grow as log n / log log n)
CD_COLOUR_ROUNDS = {"key": 300, "hashed": 22}
CD_COLOUR_STATE_BYTES = 40  # a changed body state: its place, next key and mask (5 doubles)
SHARED_CUT_ROUNDS = 19  # decomp_build_shared: stats, <= 17 rounds of 15 keys, the keys beside
SHARED_CUT_BYTES = 128  # a node's values in a round (16 doubles); a level's nodes at once
HALO_SPACINGS = 1.2  # detection gap plus the largest diameter, in mean particle spacings


def halo_copies(n):
    s = n ** (1.0 / 3.0)
    h = HALO_SPACINGS
    return 6 * s * s * h + 12 * s * h * h


def reduction(P, alpha):
    return 2 * alpha * math.log2(P) if P > 1 else 0.0


PATTERNS = ("before", "built")
COLORED_PATTERNS = ("before", "gathered", "key", "hashed")


def exchange(P, nbytes, alpha, beta, pattern, known=True):
    """An exchange before 2026-12-03 (pattern "before": all-to-all) or after (any other)."""
    if P == 1:
        return 0.0
    if pattern == "before":
        return (P - 1) * alpha + nbytes / beta
    return min(26, P - 1) * alpha + nbytes / beta + (0.0 if known else reduction(P, alpha))


def dem(N, P, alpha, beta, pattern):
    n = N / P
    g = halo_copies(n)
    compute = n * DEM_SECONDS_PER_PARTICLE_STEP
    step = exchange(P, g * DEM_REFRESH_BYTES, alpha, beta, pattern) + \
        (DEM_CALLS_PER_STEP - 1) * reduction(P, alpha)
    moved = (g + DEM_MIGRATING * n) * DEM_REBUILD_BYTES
    rebuild = 3 * exchange(P, moved, alpha, beta, pattern, known=False) + 4 * reduction(P, alpha)
    if pattern == "before":  # every rank gathered every position when it cut afresh
        rebuild += ((P - 1) * alpha + 24 * N / beta) / DEM_REBALANCE_EVERY
    else:  # the cuts from the shares: a level of nodes at a time, ~19 reductions a level, whose
        # bytes over the levels add to P - 1 nodes' a round (a large reduction: 2 bytes / beta)
        cuts = math.log2(P) * SHARED_CUT_ROUNDS * reduction(P, alpha) + \
            SHARED_CUT_ROUNDS * (P - 1) * SHARED_CUT_BYTES * 2 / beta
        rebuild += cuts / DEM_REBALANCE_EVERY
    comm = step + rebuild / DEM_REBUILD_EVERY
    return compute, comm


def cd(N, P, alpha, beta, pattern, colored):
    n = N / P
    g = halo_copies(n)
    contacts = CD_CONTACTS_PER_PARTICLE * n
    compute = contacts * CD_SWEEPS * CD_SECONDS_PER_UPDATE
    per_sweep = (CD_COLOURS if colored else 2) * exchange(P, g * CD_VELOCITY_BYTES, alpha, beta,
                                                          pattern) + 2 * reduction(P, alpha)
    # every step: migration, the warm-start forces of the contacts at the cuts to their owners,
    # the halo rebuilt (the copies' whole records), and the detection's agreement
    unknown = dict(known=False)
    per_step = exchange(P, DEM_MIGRATING * n * DEM_REBUILD_BYTES, alpha, beta, pattern, **unknown) + \
        exchange(P, g * CD_CONTACTS_PER_PARTICLE * CD_CONTACT_BYTES, alpha, beta, pattern, **unknown) + \
        exchange(P, g * DEM_REBUILD_BYTES, alpha, beta, pattern, **unknown) + 3 * reduction(P, alpha)
    if colored and pattern in ("before", "gathered"):  # every rank gathers every contact
        per_step += (P - 1) * alpha + CD_COLOUR_GATHER_BYTES * CD_CONTACTS_PER_PARTICLE * N / beta
    elif colored:  # the rounds: each body's state sent about as often as it has contacts
        rounds = CD_COLOUR_ROUNDS[pattern]
        state_bytes = g * CD_CONTACTS_PER_PARTICLE * CD_COLOUR_STATE_BYTES / rounds
        per_step += rounds * (exchange(P, state_bytes, alpha, beta, pattern, **unknown) +
                              reduction(P, alpha))
    return compute, CD_SWEEPS * per_sweep + per_step


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--alpha", type=float, default=2e-6, help="latency per message, s")
    ap.add_argument("--beta", type=float, default=1e10, help="bandwidth per rank, bytes/s")
    a = ap.parse_args()
    rows = []
    for N in (1e8, 1e9):
        for P in (64, 1024, 16384):
            n = N / P
            r = [f"{N:.0e}".replace("e+0", "·10^"), f"{P:,}", f"{n:.2g}", f"{halo_copies(n):.2g}"]
            c, _ = dem(N, P, a.alpha, a.beta, "built")
            r.append(f"{c * 1e3:.3g} ms")
            for f, pats in ((lambda pat: dem(N, P, a.alpha, a.beta, pat), PATTERNS),
                            (lambda pat: cd(N, P, a.alpha, a.beta, pat, True), COLORED_PATTERNS),
                            (lambda pat: cd(N, P, a.alpha, a.beta, pat, False), PATTERNS)):
                r.append(" / ".join(f"{comp / (comp + comm):.2f}"
                                    for comp, comm in (f(pat) for pat in pats)))
            rows.append(r)
    print(f"alpha = {a.alpha:g} s, beta = {a.beta:g} bytes/s")
    print("E: before (all-to-all, gathers) / as built (neighbour exchanges, cuts from the shares); "
          "CD colored: before / the colouring from a gather of every contact (2026-12-07) / "
          "made in rounds, key order / made in rounds, hashed order")
    print("| N | P | particles per rank | halo copies | DEM compute per step | DEM | CD colored | "
          "CD domain-wise |")
    print("|" + "---|" * 8)
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()

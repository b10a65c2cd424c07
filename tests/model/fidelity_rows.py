#!/usr/bin/python3
"""Every row of `wafer fidelity`, recomputed from docs/model.md's formulas.

usage: fidelity_rows.py FIDELITY.json            the published table (inputs/fidelity)
       fidelity_rows.py --checks FIDELITY.json   the e2e test's own kernel cases

The hardware figures are literals here (docs/model.md, "Hardware
parameters"), and every formula is written again from the docs, without the
model's code: the SIMD and port limits of a vector instruction, the phase
convention ("What overlaps what"), the collectives, each case's own steps.
The lattice counts of the EAM rows come from a brute force over the
lattice. Each row's model range must agree to 2e-8 (the JSON keeps 9
digits); a row of the table that is not recomputed here fails too. Exits 1
with the differences.
"""
import json
import math
import sys

# ---- hardware (docs/model.md) ----
WSE1 = dict(clock=(0.94e9, 1.03e9), rect=(600, 595))
WSE2 = dict(clock=(0.85e9, 1.1e9), rect=(750, 994))
READ, WRITE = 16.0, 8.0           # SRAM bytes a cycle, WSE-1 and WSE-2
SIMD = {("fp16", op): 4 for op in ("fmac", "mul", "add", "mov")}
SIMD.update({("fp32", "fmac"): 1, ("fp32", "mul"): 1, ("fp32", "add"): 2, ("fp32", "mov"): 2})
BYTES = {"fp16": 2, "fp32": 4}
RAMP, HOP = 2, 1                  # cycles into or out of a core; a cycle a hop


def vec(op, p, n, reads, writes):
    """n elements of a vector instruction: SIMD width and the two ports."""
    b = BYTES[p]
    return n * max(1 / SIMD[(p, op)], reads * b / READ, writes * b / WRITE)


def phase(sram, fabric, words_in, words_out):
    """What overlaps what: [fast, slow] cycles of a PE's phase."""
    return (max(sram + fabric, words_in, words_out), sram + max(fabric, words_in) + words_out)


def seconds(hw, cycles, clock=None):
    """[fast, slow] seconds: over the preset's clock range, or at the one clock a source
    converts its cycles at (docs/model.md, "Time bases")."""
    if clock:
        return (cycles[0] / clock, cycles[1] / clock)
    return (cycles[0] / hw["clock"][1], cycles[1] / hw["clock"][0])


def levels(far):
    """Levels of a reduction tree whose farthest leaf is `far` hops away."""
    return math.ceil(math.log2(far + 1)) if far > 0 else 0


def segment_reduce(n, root, words):
    """A segment of `words` into `root` as a tree: each level takes in a segment from each
    side (the sum leaves as the add's result, no send of its own); [fast, slow]."""
    far = max(root, n - 1 - root)
    streams = (root > 0) + (root < n - 1)
    return [levels(far) * (c + 2 * RAMP + 1) + far * HOP for c in phase(0, 0, streams * words, 0)]


def chain_reduce(n, root, words):
    """The same as a chain: every hop through a core (2 ramps, an add, the link)."""
    far = max(root, n - 1 - root)
    return far * (2 * RAMP + 1 + HOP) + ((root > 0) + (root < n - 1)) * words


def allreduce(nx, ny, k):
    """Rows into their middles, the middle column into its middle, the multicast back."""
    down = k + 2 * RAMP + (math.ceil((nx - 1) / 2) + math.ceil((ny - 1) / 2)) * HOP
    rows, cols = segment_reduce(nx, (nx - 1) // 2, k), segment_reduce(ny, (ny - 1) // 2, k)
    return [r + c + down for r, c in zip(rows, cols)]


def sc20():
    """BiCGStab, WSE-1, one column of 1536 fp16 cells a PE, stored operator, as the SDK's
    published BiCGSTAB and 7-point SpMV run it (docs/model.md, "Stencil solvers")."""
    nz, nx, ny = 1536, 600, 595
    zero = vec("mov", "fp16", nz, 0, 1)
    receive = vec("mov", "fp32", 4 * nz, 0, 1)           # the neighbours' columns into buffers
    exchange = phase(zero, receive, 4 * nz, 4 * nz)       # and the column sent each way
    terms = vec("fmac", "fp16", 7 * nz, 3, 1)            # 7 FMACs on SRAM operands
    spmvs = [2 * (e + terms + 2 * RAMP + HOP) for e in exchange]
    dots = 5 * vec("fmac", "fp32", 1, 2, 0)
    updates = 6 * vec("fmac", "fp16", 1, 2, 1)
    vectors = nz * (dots + updates)
    reduces = 5 * allreduce(nx, ny, 1)[0]
    cycles = [s + vectors + reduces for s in spmvs]
    flops = (2 * 14 + 2 * 5 + 2 * 6) * nx * ny * nz
    t = seconds(WSE1, cycles)
    return (flops / t[1], flops / t[0])


def sc22():
    """SC22's kernel on a column of 1000 fp32 cells, WSE-2: 3 chunks of 334."""
    cells, nz, chunks = 1002, 1000, 3
    turns = chunks * 5 * (4 * HOP + 2 * RAMP)
    # 5 senders a direction, the PE itself among them: 20 words a cell in, each multiplied
    # on arrival; the chunk out 4 ways and 2 control words a direction a chunk
    ex = phase(0, vec("mul", "fp32", 20 * cells, 1, 1), 20 * cells, 4 * cells + 8 * chunks)
    rest = vec("add", "fp32", 20 * cells, 2, 1) + vec("mov", "fp32", nz, 0, 1) + \
        vec("fmac", "fp32", 9 * nz, 2, 1) + vec("mul", "fp32", nz, 2, 1) + vec("add", "fp32", nz, 2, 1)
    return seconds(WSE2, [e + turns + rest for e in ex])


def ics23():
    """512^3 complex fp32 on 512 x 512 PEs: three stages of 512-point lines, two transposes,
    as the SDK's published FFT kernel does them (docs/model.md, "FFT")."""
    n = 512
    passes = 9
    butterflies = vec("mul", "fp32", n, 1, 1) + vec("fmac", "fp32", n, 2, 1) + \
        vec("add", "fp32", 2 * n, 2, 1)
    line = passes * butterflies + (passes - 1) * vec("mov", "fp32", 3 * n, 1, 1)
    w = 2                                   # a complex fp32 value, one chunk
    # each direction: n - 1 senders in turn, n - 1 chunks and 2 control words a turn,
    # then the next sender's first word: 2 ramps and a hop
    links = (n - 1) * ((n - 1) * w + 2 + 2 * RAMP + HOP)
    core = phase(0, 0, (n - 1) * w, 2 * (n - 1) * w)
    transpose = [max(c, links) for c in core]
    return seconds(WSE2, [3 * line + 2 * t for t in transpose])


def lattice(kind, a, cells, cut, skin):
    """Brute force over the perfect lattice: neighbours within cut, listed within cut + skin,
    the reach in hops of the fold (docs/model.md, "EAM molecular dynamics")."""
    fcc = kind == "fcc"
    basis = [(0, 0, 0), (.5, .5, 0), (.5, 0, .5), (0, .5, .5)] if fcc else [(0, 0, 0), (.5, .5, .5)]
    nz = cells[2]
    fx = math.ceil(math.sqrt(nz))
    fy = math.ceil(nz / fx)
    cols = (2 * cells[0], (2 if fcc else 1) * cells[1])
    pe = (cols[0] * fx, cols[1] * fy)

    def where(i, j, k, b):
        cx = 2 * i + (int(2 * basis[b][0]) if fcc else b)
        cy = (2 * j + int(2 * basis[b][1])) if fcc else j
        return (cx * fx + k % fx, cy * fy + k // fx)

    def hops(d, n):
        d = abs(d) % n
        return min(d, n - d)

    rl, span = cut + skin, math.ceil((cut + skin) / a) + 1
    ncut = nlist = sources = hx = hy = 0
    for k in range(nz):
        for b in range(len(basis)):
            sources += 1
            x0, y0 = where(0, 0, k, b)
            for dk in range(-span, span + 1):
                for dj in range(-span, span + 1):
                    for di in range(-span, span + 1):
                        for b2 in range(len(basis)):
                            d = [(dd + basis[b2][c] - basis[b][c]) * a
                                 for c, dd in enumerate((di, dj, dk))]
                            r2 = sum(v * v for v in d)
                            if r2 == 0 or r2 >= rl * rl:
                                continue
                            nlist += 1
                            ncut += r2 < cut * cut
                            x1, y1 = where(di % cells[0], dj % cells[1], (k + dk) % nz, b2)
                            hx, hy = max(hx, hops(x1 - x0, pe[0])), max(hy, hops(y1 - y0, pe[1]))
    return ncut / sources, nlist / sources, hx, hy


def gb24(kind, a, cells, cut):
    """One atom a PE: the two multicast phases and the per-atom work, scalar fp32."""
    ncut, nlist, hx, hy = lattice(kind, a, cells, cut, 1.0)
    cand = (2 * hx + 1) * (2 * hy + 1) - 1
    latency = 2 * RAMP + (hx + hy) * HOP

    def multicast(w, work):
        """its own w words east and west, its row's north and south (a send a direction);
        its neighbourhood's words moved into SRAM as they come in"""
        links = w * hx + w * (2 * hx + 1) * hy
        words_in, out = w * cand, 2 * w + 2 * (2 * hx + 1) * w
        receive = vec("mov", "fp32", words_in, 0, 1)
        return [max(c, links) + latency for c in phase(work, receive, words_in, out)]

    # Per neighbour a square root (density) and a division (1/r, force): 1 cycle each at
    # the fast end, 11 and 8 at the slow (a library routine; docs/model.md).
    pos = [m for m in zip(*[multicast(3, 7 * nlist + (10 + sq) * ncut) for sq in (1, 11)])]
    pos = [pos[0][0], pos[1][1]]
    forces = [m for m in zip(*[multicast(1, (25 + dv) * ncut) for dv in (1, 8)])]
    forces = [forces[0][0], forces[1][1]]
    cycles = [p + f + 25 for p, f in zip(pos, forces)]
    t = seconds(WSE2, cycles)
    return (1 / t[1], 1 / t[0])


def gb23():
    """The ceiling: every PE of 48 CS-2 streaming fp32 complex bases (8 B in four FMACs)."""
    per_cycle = 48 * 750 * 994 * 8 / vec("fmac", "fp32", 4, 2, 1)
    return (per_cycle * WSE2["clock"][0], per_cycle * WSE2["clock"][1])


def gemv(rows=16384, cols=16384, nx=750, ny=994, p="fp16", clock=None):
    """rows x cols, one vector, on nx x ny PEs from the grid's middle: its range, and the
    busiest PE's bytes (its tile and both segments)."""
    ins, outs = math.ceil(cols / nx), math.ceil(rows / ny)
    fmac = vec("fmac", p, ins * outs, 2, 1)
    first = phase(0, fmac, ins, 0)        # one vector: its tile's FMACs on its x as it arrives
    mid_y, mid_x = (ny - 1) // 2, (nx - 1) // 2
    down = 1 + 2 * RAMP + max(mid_y, ny - 1 - mid_y) * HOP
    tree, chain = segment_reduce(nx, mid_x, outs), chain_reduce(nx, mid_x, outs)
    t = seconds(WSE2, [down + f + min(r, chain) for f, r in zip(first, tree)], clock)
    return t, dict(bytes_per_pe=(ins * outs + ins + outs) * BYTES[p], pes_needed=nx * ny,
                   pes_offered=WSE2["rect"][0] * WSE2["rect"][1])


ROWS = {
    "SC20 BiCGStab": sc20,
    "SC22 wave stencil": sc22,
    "ICS23 FFT 512^3": ics23,
    "GB24 EAM Cu": lambda: gb24("fcc", 3.615, (192, 261, 4), 4.9499999999999886),
    "Perez24 EAM 200k": lambda: gb24("fcc", 3.615, (125, 100, 4), 4.9499999999999886),
    "GB23 TLR-MVM bound": gb23,
    "WaferLLM GEMV 16K": lambda: gemv(clock=1.1e9),     # WaferLLM converts at 1.1 GHz
}
# Cases of the e2e test's own (tests/e2e/cli.sh), not of the published table.
CHECKS = {
    "GEMV 3000 x 1000 on 20 x 10": lambda: gemv(3000, 1000, 20, 10, "fp32"),
}


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    checks = "--checks" in sys.argv            # the e2e test's own cases, not the table
    rows = CHECKS if checks else ROWS
    cases = {c["case"]: c for c in json.load(open(args[0]))["cases"]}
    bad = []
    for name, case in sorted(cases.items()):
        if name not in rows:
            bad.append(f"{name}: no recomputation in {sys.argv[0]}")
            continue
        want, extra = rows[name](), {}
        if isinstance(want[0], (list, tuple)):     # a range and other figures
            want, extra = want
        got = case["model"]
        ok = all(abs(g / w - 1) <= 2e-8 for g, w in zip(got, want))
        ok = ok and all(abs(case[k] / v - 1) <= 2e-8 for k, v in extra.items())
        print(f"{name:20s} model {got[0]:.6g} - {got[1]:.6g}, recomputed {want[0]:.6g} - "
              f"{want[1]:.6g}{''.join(f', {k} {case[k]:.6g} ({v:.6g})' for k, v in extra.items())}: "
              f"{'same' if ok else 'DIFFERENT'}")
        if not ok:
            bad.append(name)
    for name in rows:
        if name not in cases:
            bad.append(f"{name}: not in the table")
    if bad:
        print("differ:", "; ".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

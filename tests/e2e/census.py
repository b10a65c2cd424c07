#!/usr/bin/env python3
"""The communication structure of a workload's main loop, counted twice.

usage: census.py WORKLOAD RANKS WAFER LIBMPI_CENSUS

Runs WORKLOAD on RANKS ranks twice, a short and a long run of the same deck,
with the MPI profiling library tests/support/mpi_census.c preloaded: the
difference between the two runs is what the extra units of work (steps,
iterations, transforms, products) cost, set-up, checks and reports taken
out. Asserted per unit of work:

* every point-to-point message and every blocking collective the loop sends
  is one the fabric counted (the census equals the run's own "fabric"
  "per_unit" counts): nothing bypasses the counted fabric;
* the workload's structural target (docs/scaling.md): EAM between neighbour
  list builds at most one global reduction a step and one message per swap
  (two ghost refreshes of four swaps: 8); CG its algorithm's reductions an
  iteration; a collective-free step for the explicit stencils; training's
  collectives a step by hand.

The signal poll's nonblocking reductions (at most one per 10 ms of run,
wf_signal.h) are counted apart: they are time-based, so not part of a
unit's fixed cost. Exit 77 (skipped) when the preload is not possible."""
import json
import os
import subprocess
import sys
import tempfile

WORKLOAD, RANKS, WAFER, CENSUS = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]

# Per workload: the deck (--set), the key that sets the units of work with
# the short and long values, and how a run's units are read from its JSON.
CASES = {
    # cold (10 K) so that no list is rebuilt in either run: the steps are
    # all between builds; thermo rows only at the first and last step
    "eam": (["eam.temperature=10", "eam.thermo=0", "eam.crosscheck=none"],
            "eam.steps", (30, 90)),
    "stencil": (["stencil.nx=32", "stencil.ny=32", "stencil.nz=32", "wafer.pe_grid=32x32", "stencil.rtol=0", "stencil.crosscheck=none", "stencil.stream=false"],
                "stencil.max_iterations", (20, 60)),
    "fft": (["fft.nx=32", "fft.ny=32", "fft.nz=32", "wafer.pe_grid=32x32", "fft.crosscheck=none", "fft.stream=false"],
            "fft.repeat", (2, 6)),
    # a wave from a source (no standing mode's amplitude to follow each step)
    "cfd": (["cfd.nx=32", "cfd.ny=32", "cfd.nz=32", "wafer.pe_grid=32x32", "cfd.stream=false",
             "cfd.init=source", "cfd.energy_every=10"],
            "cfd.steps", (20, 60)),
    "convection": (["cfd.problem=convection", "cfd.nx=32", "cfd.ny=16", "cfd.nz=16",
                    "wafer.pe_grid=16x16", "cfd.dt=1e-4", "cfd.t_end=0"],
                   "cfd.steps", (10, 30)),
    "tlrmvm": (["tlrmvm.stream=false"], "tlrmvm.repeat", (3, 9)),
    "halo": ([], "halo.iterations", (50, 150)),
    # one wafer over all the ranks; the first and last steps' checks and
    # the start's validation are in both runs
    "train": (["train.channels=64", "train.heads=4", "train.layers=2", "train.batch=4",
               "train.warmup=0", "train.eval_every=1000", "train.sgemm=false"],
              "train.steps", (3, 9)),
    # the SDK's example kernels (src/sdk/): small decks, their checks off
    "mandelbrot": (["mandelbrot.width=128", "mandelbrot.height=96", "wafer.pe_grid=16x16",
                    "mandelbrot.check=false"], "mandelbrot.repeat", (2, 6)),
    "life": (["wafer.pe_grid=16x16", "life.cells_per_pe=4x4", "life.check=false"],
             "life.generations", (10, 30)),
    "gemm": (["wafer.pe_grid=8x8", "gemm.m=64", "gemm.n=64", "gemm.k=64", "gemm.check=false"],
             "gemm.repeat", (2, 6)),
    "gemv": (["wafer.pe_grid=8x8", "gemv.m=64", "gemv.n=64", "gemv.check=false"],
             "gemv.repeat", (2, 6)),
    "histogram": (["wafer.pe_grid=8x8", "histogram.values_per_pe=32", "histogram.check=false"],
                  "histogram.repeat", (2, 6)),
    "widemul": (["wafer.pe_grid=8x8", "widemul.bits=2048", "widemul.check=false"],
                "widemul.repeat", (2, 6)),
    "cholesky": (["wafer.pe_grid=8x8", "cholesky.n=64", "cholesky.check=false"],
                 "cholesky.repeat", (2, 6)),
    "spmv": (["wafer.pe_grid=8x8", "spmv.scale=8", "spmv.check=false", "spmv.crosscheck=none"],
             "spmv.repeat", (2, 6)),
}

# The blocking collectives (over every rank) a unit of work may make, and
# its messages a rank (None: not asserted beyond the fabric's own count).
TARGETS = {
    "eam": {"global": (0, 1), "sends": (0, 8)},
    "stencil": {"global": (2, 2)},  # CG: r.r and p.Ap (st_krylov.c)
    # the energy every 10 steps, the finite check every 50: 0.1 to 0.125
    "cfd": {"global": (0.1, 0.125)},
    # the timing barrier of each exchange
    "halo": {"global": (1, 1)},
    # 2 x 2 ranks, 2 layers: 18 products (4 a layer and the LM head, each
    # way) of 3 collectives along lines (reduce-scatter, allgather of the
    # reduced pieces, gather of the blocks), the embedding's sum, 2 head
    # shares a layer, the gradient norm's sum, and the loop's barrier,
    # slowest time and loss: 54 + 1 + 4 + 1 + 3
    "train": {"global": (63, 63), "sends": (0, 0)},
    # the SDK's kernels on 2 x 2 ranks: the timing barrier of each unit and
    # their multicasts along lines, no other collective. GEMM's 8 SUMMA
    # steps in 2 groups (a rank row's and column's roots), a multicast each
    # way a group; GEMV's x down the columns and the row reduction;
    # Cholesky's 8 tile columns, each the diagonal tile down its column
    # (the column's ranks) and the panel east and south (every rank, while
    # it has rows or columns below the step); the SpMV's messages: x to the
    # other rank of the column, partial sums to the other rank of the row.
    "mandelbrot": {"global": (1, 1), "sends": (0, 0)},
    "gemm": {"global": (5, 5)},
    "gemv": {"global": (3, 3)},
    "cholesky": {"global": (1, 25)},  # at most 3 a tile column
    "spmv": {"global": (1, 1), "sends": (2, 2)},
}


def run(workdir, sets, key, units):
    prefix = os.path.join(workdir, "census_%s_%d" % (key, units))
    out = os.path.join(workdir, "run_%d.json" % units)
    cmd = ["mpiexec", "--oversubscribe", "-n", str(RANKS)]
    env = dict(os.environ, WAFER_CENSUS=prefix)
    version = subprocess.run(["mpiexec", "--version"], capture_output=True, text=True)
    if "Open MPI" in version.stdout + version.stderr or "OpenRTE" in version.stdout:
        cmd += ["-x", "LD_PRELOAD=" + CENSUS, "-x", "WAFER_CENSUS"]
    else:  # Hydra passes its whole environment on (the launcher gets the preload too)
        env["LD_PRELOAD"] = CENSUS
    workload = "cfd" if WORKLOAD == "convection" else WORKLOAD
    cmd += [WAFER, workload, "--quiet", "--json", out]
    for s in sets + ["%s=%d" % (key, units)]:
        cmd += ["--set", s]
    p = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=500)
    if p.returncode != 0:
        sys.exit("FAIL: %s exited %d\n%s%s" % (" ".join(cmd), p.returncode, p.stdout[-2000:],
                                                p.stderr[-2000:]))
    ranks = []
    for r in range(RANKS):
        path = "%s.%d" % (prefix, r)
        if not os.path.exists(path):
            print("SKIP: the census library was not loaded (no %s)" % path)
            sys.exit(77)
        ranks.append(json.load(open(path)))
    return ranks, json.load(open(out))


def busiest(ranks, what):
    if what == "blocking":  # collectives but the signal poll's nonblocking ones
        return max(r["global"] + r["partial"] - r["by_call"].get("Iallreduce", 0) for r in ranks)
    return max(r[what] for r in ranks)


def fabric_total(summary, kind):
    u = summary["fabric"].get("per_unit")
    return 0 if u is None else u[kind] * u["units"]


def main():
    sets, key, (short, long_) = CASES[WORKLOAD]
    failures = []
    with tempfile.TemporaryDirectory() as d:
        a, ja = run(d, sets, key, short)
        b, jb = run(d, sets, key, long_)
    units = fabric_units = jb["fabric"]["per_unit"]["units"] - ja["fabric"]["per_unit"]["units"]
    if WORKLOAD == "eam" and ja["eam"]["neighbor_builds"] != jb["eam"]["neighbor_builds"]:
        failures.append("the runs rebuilt their lists %d and %d times: not all steps between "
                        "builds" % (ja["eam"]["neighbor_builds"], jb["eam"]["neighbor_builds"]))
    census = {w: (busiest(b, w) - busiest(a, w)) / units for w in ("blocking", "sends")}
    polls = (max(r["by_call"].get("Iallreduce", 0) for r in b) -
             max(r["by_call"].get("Iallreduce", 0) for r in a)) / units
    fabric = {
        "blocking": (fabric_total(jb, "collectives") + fabric_total(jb, "line_collectives") -
                     fabric_total(ja, "collectives") - fabric_total(ja, "line_collectives")) / units,
        "sends": (fabric_total(jb, "messages") - fabric_total(ja, "messages")) / fabric_units,
    }
    unit = jb["fabric"]["per_unit"]["unit"]
    print("%s on %d ranks, per %s (census / fabric): collectives %.3g / %.3g, messages a rank "
          "%.3g / %.3g; signal polls %.3g" % (WORKLOAD, RANKS, unit, census["blocking"],
                                              fabric["blocking"], census["sends"],
                                              fabric["sends"], polls))
    for w in ("blocking", "sends"):
        if abs(census[w] - fabric[w]) > 1e-6 * max(1, census[w]):  # (the JSON's digits)
            failures.append("%s per %s: MPI saw %.4g, the fabric counted %.4g: a call outside "
                            "the counted fabric" % (w, unit, census[w], fabric[w]))
    for w, (lo, hi) in TARGETS.get(WORKLOAD, {}).items():
        got = census["blocking" if w == "global" else w]
        if not lo - 1e-9 <= got <= hi + 1e-9:
            failures.append("%s per %s: %.4g, the target is %g to %g" % (w, unit, got, lo, hi))
    if failures:  # which calls the extra units made, the busiest rank's
        calls = sorted(set(k for r in a + b for k in r["by_call"]))
        diff = {k: (max(r["by_call"].get(k, 0) for r in b) -
                    max(r["by_call"].get(k, 0) for r in a)) / units for k in calls}
        print("MPI calls per %s: %s" % (unit, ", ".join(
            "%s %.3g" % (k, v) for k, v in diff.items() if v)))
    for f in failures:
        print("FAIL: " + f)
    sys.exit(1 if failures else 0)


main()

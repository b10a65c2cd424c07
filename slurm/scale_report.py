#!/usr/bin/python3
"""The scaling study's CSV and plot from its runs' JSON summaries.

usage: scale_report.py DIR WORKLOAD [weak] RANKS...

DIR/N.json for each rank count N (missing runs are left out, and said so).
Writes DIR/scaling.csv (one row a rank count) and DIR/scaling.png (speedup
or weak-scaling efficiency, parallel efficiency, and the time per unit of
work measured, modelled on the wafer, and measured for the reference code
where the workload runs one). Needs python3-matplotlib.
"""
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Time per unit of work, measured: wafer's and the reference code's. PETSc
# and FFTW-MPI run inside wafer's job on the same ranks, so their scaling is
# theirs; the EAM cross-check runs LAMMPS as one process whatever the ranks,
# so its time is a serial reference, not LAMMPS's scaling (bench/eam runs
# LAMMPS on as many ranks as wafer).
SERIAL_REFERENCE = {"eam"}
UNITS = {
    "stencil": ("iteration", lambda j: j["stencil"]["seconds_per_iteration"],
                lambda j: j.get("petsc", {}).get("seconds_per_iteration"), "PETSc"),
    "eam": ("step", lambda j: j["eam"]["us_per_atom_step"] * 1e-6 * j["eam"]["atoms"],
            lambda j: j.get("lammps", {}).get("us_per_atom_step", 0) * 1e-6 * j["eam"]["atoms"] or None,
            "LAMMPS (1 process)"),
    "fft": ("transform", lambda j: j["fft"]["forward_seconds"],
            lambda j: j.get("fftw_mpi", {}).get("forward_seconds"), "FFTW-MPI"),
    "tlrmvm": ("product", lambda j: j["tlrmvm"]["mvm_seconds"], lambda j: None, ""),
    "halo": ("exchange", lambda j: j["halo"]["seconds_per_exchange"], lambda j: None, ""),
    "train": ("step", lambda j: j["train"]["seconds"] / j["train"]["steps"], lambda j: None, ""),
}


def per_unit(j):
    """The run's main computation per unit of work (the fabric's count of
    units): cfd's steps, train's steps, any workload without an entry above."""
    u = j.get("fabric", {}).get("per_unit")

    def seconds(j):  # (a summary without the fabric's units: its workload's steps)
        units = j.get("fabric", {}).get("per_unit", {}).get("units")
        return j["seconds"] / (units or j[j["workload"]]["steps"])
    return ("step" if not u else u["unit"], seconds, lambda j: None, "")


# The fabric's counts per unit of work on the busiest rank (JSON
# fabric.per_unit): what the efficiency's fall is made of.
COUNTS = ("collectives", "line_collectives", "messages", "mpi_bytes")


def fmt(v):
    return "-" if v == "" else "%.3g" % v


def main():
    out, workload = sys.argv[1], sys.argv[2]
    args = sys.argv[3:]
    weak = bool(args) and args[0] == "weak"
    ranks = [int(a) for a in (args[1:] if weak else args) if a]
    rows, first = [], None
    for n in ranks:
        path = os.path.join(out, "%d.json" % n)
        if os.path.exists(path):
            first = json.load(open(path))
            break
    unit, ours, ref, ref_name = UNITS.get(workload) or (per_unit(first) if first else
                                                         ("run", None, None, ""))
    platform = os.environ.get("SCALE_PLATFORM", "")
    for n in ranks:
        path = os.path.join(out, "%d.json" % n)
        if not os.path.exists(path):
            print("scale_report.py: no summary for %d ranks (%s)" % (n, path))
            continue
        j = json.load(open(path))
        model = j.get("model", {}).get("seconds_per_unit", [float("nan")] * 2)
        rows.append({"ranks": n, "status": j["status"], "seconds": j["seconds"],
                     "seconds_per_" + unit.replace("-", "_"): ours(j), "reference": ref_name if ref(j) else "",
                     "reference_seconds_per_unit": ref(j) if ref(j) else "",
                     "wafer_fast": model[0], "wafer_slow": model[1],
                     "shared_core": j.get("binding", {}).get("shared_core", "")})
        counts = j.get("fabric", {}).get("per_unit") or {}
        for c in COUNTS:
            rows[-1][c + "_per_unit"] = counts.get(c, "")
    if not rows:
        sys.exit("scale_report.py: no runs to report")
    key = "seconds_per_" + unit.replace("-", "_")
    base, base_ref = rows[0], rows[0]["reference_seconds_per_unit"]
    for r in rows:
        factor = r["ranks"] / base["ranks"]
        t = r[key]
        # Strong: speedup t1/tN and efficiency speedup/N. Weak (work per rank
        # fixed): efficiency t1/tN, speedup efficiency x N.
        r["speedup"] = base[key] / t * (factor if weak else 1)
        r["efficiency"] = r["speedup"] / factor
        if base_ref and r["reference_seconds_per_unit"] and workload not in SERIAL_REFERENCE:
            rt = r["reference_seconds_per_unit"]
            r["reference_speedup"] = base_ref / rt * (factor if weak else 1)
            r["reference_efficiency"] = r["reference_speedup"] / factor
            r["ratio_wafer_to_reference"] = t / rt
    fields = list(dict.fromkeys(k for r in rows for k in r))
    with open(os.path.join(out, "scaling.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    n = [r["ranks"] for r in rows]
    fig, ax = plt.subplots(1, 3, figsize=(13, 4))
    ax[0].plot(n, [r["speedup"] for r in rows], "o-", label="wafer")
    if any("reference_speedup" in r for r in rows):
        ax[0].plot(n, [r.get("reference_speedup", float("nan")) for r in rows], "s--", label=ref_name)
    ax[0].plot(n, [k / n[0] for k in n], ":", color="grey", label="ideal")
    ax[0].set_title("speedup" + (" (weak: efficiency x ranks)" if weak else ""))
    ax[1].plot(n, [r["efficiency"] for r in rows], "o-", label="wafer")
    if any("reference_efficiency" in r for r in rows):
        ax[1].plot(n, [r.get("reference_efficiency", float("nan")) for r in rows], "s--", label=ref_name)
    ax[1].axhline(1, color="grey", ls=":")
    ax[1].set_ylim(0, 1.1)
    ax[1].set_title("parallel efficiency")
    ax[2].semilogy(n, [r[key] for r in rows], "o-", label="wafer, measured")
    if base_ref:
        ax[2].semilogy(n, [r["reference_seconds_per_unit"] or float("nan") for r in rows], "s--",
                       label=ref_name + ", measured")
    ax[2].fill_between(n, [r["wafer_fast"] for r in rows], [r["wafer_slow"] for r in rows],
                       alpha=0.3, label="wafer model [fast, slow]")
    ax[2].set_title("seconds per " + unit)
    for a in ax:
        a.set_xlabel("ranks")
        a.legend(fontsize=8)
    fig.suptitle("%s %s scaling%s" % (workload, "weak" if weak else "strong",
                                      ", simulated on %s (SimGrid SMPI)" % platform if platform else ""))
    fig.tight_layout()
    fig.savefig(os.path.join(out, "scaling.png"), dpi=100)
    for r in rows:
        print("%4d ranks: %.4g s/%s, speedup %.3g, efficiency %.2f; wafer [%.3g, %.3g] s/%s; "
              "a %s: %s collectives, %s messages, %s MPI bytes (busiest rank)%s" %
              (r["ranks"], r[key], unit, r["speedup"], r["efficiency"], r["wafer_fast"],
               r["wafer_slow"], unit, unit, *(fmt(r[c + "_per_unit"]) for c in
                                              ("collectives", "messages", "mpi_bytes")),
               (", %s %.4g s/%s" % (ref_name, r["reference_seconds_per_unit"], unit))
               if r["reference_seconds_per_unit"] else ""))
    print("scale_report.py: %s and %s" % (os.path.join(out, "scaling.csv"), os.path.join(out, "scaling.png")))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Plot an MD run's thermo rows as a PNG: temperature, and the total energy's
change per atom (the drift a timestep or a force bug shows first), with
LAMMPS's rows on top when the cross-check ran.

usage: plot_thermo.py THERMO.txt OUT.png TITLE

THERMO.txt: rows "code step time temp pe ke etotal press natoms", code 0 for
wafer and 1 for LAMMPS; `wafer eam` writes it when [eam] plot is set. Needs
Debian's python3-matplotlib (installed by scripts/setup).
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    rows = [[float(v) for v in line.split()] for line in open(sys.argv[1]) if line.strip()]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6, 6), sharex=True)
    for code, label, style in ((0, "wafer", "-"), (1, "LAMMPS", "o")):
        r = [row for row in rows if row[0] == code]
        if not r:
            continue
        time = [row[2] for row in r]
        top.plot(time, [row[3] for row in r], style, label=label, markerfacecolor="none")
        e0, natoms = r[0][6], r[0][8]
        bottom.plot(time, [(row[6] - e0) / natoms * 1e3 for row in r], style, label=label,
                    markerfacecolor="none")
    top.set_ylabel("temperature (K)")
    bottom.set_ylabel("total energy - initial (meV/atom)")
    bottom.set_xlabel("time (ps)")
    top.set_title(sys.argv[3])
    for ax in (top, bottom):
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=100, format="png")  # into its temporary (NAME.png.part.XXXXXX), then renamed


if __name__ == "__main__":
    main()

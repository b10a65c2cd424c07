#!/usr/bin/python3
"""Plot a shot gather: receivers along x against time.

usage: plot_gather.py GATHER.txt OUT.png TITLE

GATHER.txt: "nt nx dt h" on the first line, then one line of nx values a
time step; `wafer cfd` writes it when [cfd] gather_plot is set. Needs
Debian's python3-matplotlib (installed by scripts/setup).
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        nt, nx, dt, h = f.readline().split()
        nt, nx, dt, h = int(nt), int(nx), float(dt), float(h)
        data = np.loadtxt(f, ndmin=2).reshape(nt, nx)
    clip = np.percentile(np.abs(data), 99.5) or 1.0
    fig, ax = plt.subplots(figsize=(7, 6))
    image = ax.imshow(data, cmap="seismic", vmin=-clip, vmax=clip, aspect="auto",
                      extent=(0, nx * h, nt * dt, 0))
    ax.set_xlabel("receiver position x (m)")
    ax.set_ylabel("time (s)")
    fig.colorbar(image, ax=ax, label="pressure (clipped at the 99.5th percentile)")
    ax.set_title(sys.argv[3], fontsize=9)
    fig.savefig(sys.argv[2], dpi=100, format="png")  # into its temporary (NAME.png.part.XXXXXX), then renamed


if __name__ == "__main__":
    main()

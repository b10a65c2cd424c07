#!/usr/bin/python3
"""Plot a multi-dimensional deconvolution's recovered wavefield next to the true one.

usage: plot_mdd.py MDD.txt OUT.png TITLE

MDD.txt: "nx ny hz" on the first line, then "ix iy true tlr dense" (real
parts at source grid point ix, iy); `wafer tlrmvm` writes it when [tlrmvm]
mdd_plot is set. Needs Debian's python3-matplotlib (installed by
scripts/setup).
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    lines = [line.split() for line in open(sys.argv[1]) if line.strip()]
    nx, ny = int(lines[0][0]), int(lines[0][1])
    fields = [[[0.0] * nx for _ in range(ny)] for _ in range(3)]
    for row in lines[1:]:
        ix, iy = int(row[0]), int(row[1])
        for k in range(3):
            fields[k][iy][ix] = float(row[2 + k])
    peak = max(abs(v) for f in fields for line in f for v in line) or 1.0
    fig, axes = plt.subplots(1, 3, figsize=(11, 4), sharey=True)
    names = ("true wavefield", "recovered, TLR operators", "recovered, dense operators")
    for ax, field, name in zip(axes, fields, names):
        image = ax.imshow(field, cmap="seismic", vmin=-peak, vmax=peak, origin="lower")
        ax.set_title(name, fontsize=10)
        ax.set_xlabel("source x index")
    axes[0].set_ylabel("source y index")
    fig.colorbar(image, ax=axes, shrink=0.8, label="real part")
    fig.suptitle(sys.argv[3], fontsize=10)
    fig.savefig(sys.argv[2], dpi=100, format="png")  # into its temporary (NAME.png.part.XXXXXX), then renamed


if __name__ == "__main__":
    main()

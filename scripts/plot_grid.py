#!/usr/bin/python3
"""Plot a 2D result of an SDK example kernel (a Mandelbrot image, a game of
life grid) as a PNG.

usage: plot_grid.py GRID.txt OUT.png TITLE

GRID.txt: "ny nx items_y items_x LABEL" on the first line, then ny lines of nx values (a
downsampled copy: each value the largest of the items it covers); `wafer
mandelbrot` and `wafer life` write it when their `plot` key is set. Needs
Debian's python3-matplotlib (installed by scripts/setup).
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import colors  # noqa: E402


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        head = f.readline().split(None, 4)
        ny, nx, items_y, items_x = (int(v) for v in head[:4])
        label = head[4].strip()
        rows = [[float(v) for v in line.split()] for line in f if line.strip()]
    if len(rows) != ny or any(len(row) != nx for row in rows):
        sys.exit("plot_grid.py: %s is not %d rows of %d values" % (sys.argv[1], ny, nx))
    fig, ax = plt.subplots(figsize=(7, 7 * items_y / max(items_x, 1) + 0.8))
    top = max(max(row) for row in rows)
    norm = colors.PowerNorm(0.4, vmin=0, vmax=top) if top > 1 else None  # the rim's detail
    image = ax.imshow(rows, cmap="magma", interpolation="nearest", origin="lower", norm=norm,
                      extent=(0, items_x, 0, items_y))
    fig.colorbar(image, ax=ax, label=label, shrink=0.8)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.set_title(sys.argv[3], fontsize=9)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=100, format="png")  # into its temporary, then renamed


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Plot a convection run: a temperature slice and the Nusselt numbers in time.

usage: plot_convection.py DATA.txt OUT.png TITLE

DATA.txt: "nx nz rows" on the first line, then nz lines of nx temperatures
(the x-z plane through the middle of y, bottom first), then `rows` lines of
"t nu_bottom nu_top nu_volume kinetic max_div"; `wafer cfd` writes it when
[cfd] plot is set. Needs Debian's python3-matplotlib (scripts/setup).
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
        nx, nz, rows = (int(v) for v in f.readline().split())
        lines = f.read().splitlines()
    plane = np.loadtxt(lines[:nz], ndmin=2).reshape(nz, nx)
    history = np.loadtxt(lines[nz:nz + rows], ndmin=2).reshape(rows, 6)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 7), height_ratios=(1.2, 1))
    image = top.imshow(plane, origin="lower", cmap="RdBu_r", vmin=0, vmax=1,
                       extent=(0, nx / nz, 0, 1), aspect="equal")
    top.set_xlabel("x")
    top.set_ylabel("z")
    fig.colorbar(image, ax=top, label="temperature", shrink=0.8)
    for col, name in ((1, "bottom wall"), (2, "top wall"), (3, "volume (1 + <w T>)")):
        bottom.plot(history[:, 0], history[:, col], label=name)
    bottom.set_xlabel("t (thermal diffusion times)")
    bottom.set_ylabel("Nusselt number")
    bottom.legend(fontsize=8)
    bottom.grid(alpha=0.3)
    top.set_title(sys.argv[3], fontsize=9)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=100, format="png")  # into its temporary (NAME.png.part.XXXXXX), then renamed


if __name__ == "__main__":
    main()

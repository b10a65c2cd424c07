#!/usr/bin/python3
"""Plot the ranks of a tile low-rank matrix's tiles as a PNG.

usage: plot_ranks.py RANKS.txt OUT.png TITLE

RANKS.txt: "mt nt hz" on the first line, then one row of tile ranks a line;
`wafer tlrmvm` writes it when [tlrmvm] plot is set. Needs Debian's
python3-matplotlib (installed by scripts/setup).
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    lines = [line.split() for line in open(sys.argv[1]) if line.strip()]
    mt, nt = int(lines[0][0]), int(lines[0][1])
    ranks = [[int(v) for v in row] for row in lines[1:1 + mt]]
    if len(ranks) != mt or any(len(row) != nt for row in ranks):
        sys.exit("plot_ranks.py: %s is not %d rows of %d ranks" % (sys.argv[1], mt, nt))
    fig, ax = plt.subplots(figsize=(6, 5))
    image = ax.imshow(ranks, cmap="viridis", interpolation="nearest")
    fig.colorbar(image, ax=ax, label="tile rank")
    ax.set_xlabel("tile column (sources, Hilbert order)")
    ax.set_ylabel("tile row (receivers)")
    total = sum(map(sum, ranks))
    ax.set_title("%s\nR = %d" % (sys.argv[3], total), fontsize=9)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=100, format="png")  # into its temporary (NAME.png.part.XXXXXX), then renamed


if __name__ == "__main__":
    main()

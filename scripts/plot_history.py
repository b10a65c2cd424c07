#!/usr/bin/python3
"""Plot a solver's convergence history as a PNG.

usage: plot_history.py HISTORY.txt OUT.png TITLE

HISTORY.txt: one value per line (residual norm per iteration, or eigenvalue
estimate for the power method); `wafer stencil` writes it when [stencil] plot
is set. Needs Debian's python3-matplotlib (installed by scripts/setup).
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    values = [float(v) for v in open(sys.argv[1]) if v.strip()]
    title = sys.argv[3]
    fig, ax = plt.subplots(figsize=(6, 4))
    iterations = range(len(values))
    if "power" in title:
        ax.plot(iterations, values, "-")
        ax.set_ylabel("largest eigenvalue estimate")
    else:
        ax.semilogy(iterations, [max(v, 1e-300) for v in values], "-")
        ax.set_ylabel("residual norm")
    ax.set_xlabel("iteration")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=100, format="png")  # into its temporary (NAME.png.part.XXXXXX), then renamed


if __name__ == "__main__":
    main()

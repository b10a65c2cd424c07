#!/usr/bin/python3
"""Plot a training run's loss curve as a PNG.

usage: plot_loss.py LOSS.txt OUT.png TITLE

LOSS.txt: "train STEP LOSS" and "val STEP LOSS" lines; `wafer train` writes
it when [train] plot is set. Needs Debian's python3-matplotlib (installed
by scripts/setup).
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    curves = {"train": ([], []), "val": ([], [])}
    for line in open(sys.argv[1]):
        kind, step, loss = line.split()
        curves[kind][0].append(int(step))
        curves[kind][1].append(float(loss))
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(*curves["train"], "-", lw=1, label="training batch")
    ax.plot(*curves["val"], "o-", label="validation")
    ax.axhline(5.545, color="grey", ls=":", lw=1, label="uniform bytes (ln 256)")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats a byte)")
    ax.set_title(sys.argv[3], fontsize=9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=100, format="png")  # into its temporary (NAME.png.part.XXXXXX), then renamed


if __name__ == "__main__":
    main()

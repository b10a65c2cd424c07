#!/usr/bin/env python3
"""The picture of docs/train.md: a layer's weight matrix in 2D tiles on a
wafer of 2 x 2 ranks (ws_grid.h), and the flow of one product out = in W^T.

usage: scripts/plot_tiles.py OUT.png
"""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, Rectangle

colours = ["#8ecae6", "#ffb703", "#90be6d", "#f28482"]
fig, ax = plt.subplots(figsize=(8.4, 5.2))
ax.set_xlim(-3.2, 9.6)
ax.set_ylim(-1.2, 7.4)
ax.set_aspect("equal")
ax.axis("off")

# W (OC x IC) of 6 x 4 cells, cut into blocks of rows (cy) and columns (cx).
x0, y0, cell = 0.0, 0.0, 1.0
rows, cols = 6, 4
for cy in range(2):
    for cx in range(2):
        r = 3 * cy
        rect = Rectangle((x0 + 2 * cx * cell, y0 + (rows - r - 3) * cell), 2 * cell, 3 * cell,
                         facecolor=colours[2 * cx + cy], edgecolor="black", lw=1.5)
        ax.add_patch(rect)
        ax.text(x0 + (2 * cx + 1) * cell, y0 + (rows - r - 1.5) * cell,
                f"rank ({cx}, {cy})\nW rows {r}-{r + 2}\ncolumns {2 * cx}-{2 * cx + 1}",
                ha="center", va="center", fontsize=9)
for i in range(rows + 1):
    ax.plot([x0, x0 + cols * cell], [y0 + i * cell] * 2, color="grey", lw=0.4)
for j in range(cols + 1):
    ax.plot([x0 + j * cell] * 2, [y0, y0 + rows * cell], color="grey", lw=0.4)
ax.text(x0 + 2 * cell, y0 + rows * cell + 1.05,
        "one layer's W (OC x IC), a tile per rank", ha="center", fontsize=10, weight="bold")


def arrow(a, b, colour, text, where, **kw):
    ax.add_patch(FancyArrowPatch(a, b, arrowstyle="-|>", mutation_scale=14, lw=2, color=colour))
    ax.text(*where, text, color=colour, fontsize=9, **kw)


# Input activations: columns block cx multicast down grid column cx.
for cx in range(2):
    xc = x0 + (2 * cx + 1) * cell
    arrow((xc, y0 + rows * cell + 0.7), (xc, y0 + rows * cell + 0.05), "#1d3557", "", (0, 0))
ax.text(x0 - 0.2, y0 + rows * cell + 0.35, "in[:, cols of cx]\nmulticast down\neach grid column",
        color="#1d3557", fontsize=8.5, ha="right", va="center")
# Partial sums reduced along each grid row, in cx order.
for cy in range(2):
    yc = y0 + (rows - 3 * cy - 1.5) * cell
    arrow((x0 + cols * cell + 0.05, yc), (x0 + cols * cell + 1.4, yc), "#e63946", "", (0, 0))
    ax.text(x0 + cols * cell + 1.5, yc,
            f"sum over cx of\nin W_tile^T\n= out[:, rows {3 * cy}-{3 * cy + 2}]",
            color="#e63946", fontsize=8.5, va="center")
# Reduced blocks multicast along grid columns: every rank has all of out.
arrow((x0 + cols * cell + 2.2, y0 + 3.6), (x0 + cols * cell + 2.2, y0 + 2.4), "#6a4c93", "", (0, 0))
ax.text(x0 + cols * cell + 2.4, y0 + 3.0, "blocks multicast\nalong grid columns",
        color="#6a4c93", fontsize=8.5, va="center")
ax.text(x0 + 2 * cell, y0 - 0.75,
        "backward: dW of a tile is local; din = dout W reduced along grid columns, "
        "multicast along rows", ha="center", fontsize=8.5)
fig.savefig(sys.argv[1], dpi=110, bbox_inches="tight")

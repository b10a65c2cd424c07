"""The table of `bench/all.sh --quick`: its rows (tab-separated: workload,
case, ranks, unit, ours, reference, ours/reference, fraction of the limit,
the limit) as Markdown, each ratio set against the table last recorded
(bench/quick.md) when that was measured on the same CPU: a ratio more than
20% worse is flagged REGRESSION when our own time is also more than 20%
worse (else the reference ran faster: a note, not ours). With `record`
true the table becomes the new bench/quick.md.
    python3 bench/quick_table.py ROWS RECORDED REPEATS RECORD   (MACHINE in the environment)
"""
import datetime
import math
import os
import re
import sys

WORSE = 1.2  # a ratio this much above the recorded one is a regression


def recorded(path):
    """The CPU line and {(workload, ranks): (ours, ratio)} of a recorded table."""
    if not os.path.exists(path):
        return None, {}
    text = open(path).read()
    cpu = re.search(r"^CPU: (.*?)  $", text, re.M)
    ratios = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 8 and cells[0] not in ("workload", "---"):
            try:
                ratios[(cells[0], cells[2])] = (float(cells[4]), float(cells[6]))
            except ValueError:
                pass
    return (cpu.group(1) if cpu else None), ratios


def main():
    rows_path, table_path, repeats, record = sys.argv[1:5]
    cpu = os.environ["MACHINE"]
    old_cpu, old = recorded(table_path)
    same = old_cpu == cpu
    lines = [
        "# bench/all.sh --quick: every workload against its reference",
        "",
        f"Command: `bench/all.sh --quick` (medians of {repeats} runs)  ",
        f"CPU: {cpu}  ",
        f"Date: {datetime.date.today()}  ",
        "",
        "Ratio: our time over the reference's, from the same runs (below 1: faster). Fraction:",
        "of the machine's limit named, measured in the same runs. Regressions are against the",
        "table recorded in bench/quick.md, on the same CPU model only (more than 20% worse).",
        "",
        "| workload | case | ranks | unit | ours | reference | ratio | fraction of limit | limit |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    flags = []
    for line in open(rows_path):
        name, case, ranks, unit, ours, ref, ratio, frac, limit = line.rstrip("\n").split("\t")
        ratio, frac = float(ratio), float(frac)
        fr = "-" if math.isnan(frac) else f"{100 * frac:.0f}%"
        lines.append(f"| {name} | {case} | {ranks} | {unit} | {float(ours):.4g} | {float(ref):.4g} "
                     f"| {ratio:.3f} | {fr} | {limit} |")
        was = old.get((name, ranks))
        if same and was and ratio > WORSE * was[1]:
            slower = float(ours) > WORSE * was[0]
            flags.append(f"{'REGRESSION' if slower else 'note'}: {name} on {ranks} rank(s): ratio "
                         f"{ratio:.3f}, recorded {was[1]:.3f} ({ratio / was[1]:.2f}x); ours "
                         f"{float(ours) / was[0]:.2f}x the recorded time"
                         + ("" if slower else ": the reference ran faster, ours did not slow"))
    table = "\n".join(lines) + "\n"
    print(table)
    if not old:
        print("(no recorded table: bench/all.sh --quick --record writes bench/quick.md)")
    elif not same:
        print(f"(the recorded table was measured on another CPU: {old_cpu}; no comparison)")
    else:
        print("\n".join(flags) if flags else "no ratio 20% worse than in bench/quick.md")
    if record == "true":
        open(table_path, "w").write(table)
        print(f"recorded in {table_path}")


if __name__ == "__main__":
    main()

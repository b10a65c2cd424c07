"""Whether two runs of one workload agree: agree.py RUN.json REFERENCE.json

What must agree between runs of the same deck on another rank count or
another MPI library, per workload, at the tolerance its arithmetic allows:
sums reduced in another order move the last bits, chaotic dynamics and
iterative solvers amplify that a little, and the JSON keeps 9 significant
digits. Exit 0 when they agree; prints what
differs otherwise. Used by scale.sh (1 rank against 16 and 64) and
two_mpis.sh (Open MPI against MPICH).
"""
import json
import sys


def close(a, b, rel):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


SAME = {
    "halo": lambda x, o: x["halo"]["checksum"] == o["halo"]["checksum"] and x["halo"]["bad_elements"] == 0,
    "stencil": lambda x, o: abs(x["stencil"]["iterations"] - o["stencil"]["iterations"]) <= 1
    and close(x["stencil"]["rnorm"], o["stencil"]["rnorm"], 1e-3),
    "eam": lambda x, o: close(x["eam"]["etotal_final"], o["eam"]["etotal_final"], 1e-8)
    and close(x["eam"]["temp_final"], o["eam"]["temp_final"], 1e-6),
    # The JSON holds no figure of the transform itself: each run's own
    # Parseval and round trip at round-off, and both runs checked alike.
    "fft": lambda x, o: x["fft"]["parseval_rel_error"] < 1e-12 and x["fft"]["roundtrip_rel_error"] < 1e-12
    and x["checks"]["passed"] == o["checks"]["passed"],
    "tlrmvm": lambda x, o: x["tlrmvm"]["total_rank"] == o["tlrmvm"]["total_rank"]
    and close(x["tlrmvm"]["error"], o["tlrmvm"]["error"], 1e-3),
    "cfd": lambda x, o: close(x["cfd"]["arrival_error_periods"], o["cfd"]["arrival_error_periods"], 1e-9),
    "train": lambda x, o: close(x["train"]["last_loss"], o["train"]["last_loss"], 1e-4),
}

x, o = (json.load(open(f)) for f in sys.argv[1:3])
w = x["workload"]
ok = all(r["status"] in ("ok", "unchecked") for r in (x, o)) and o["workload"] == w and SAME[w](x, o)
if not ok:
    print(f"{w}: {x['status']} {x.get(w)}\n   against {o['status']} {o.get(w)}")
sys.exit(0 if ok else 1)

"""h5same.py [--rtol R] A.h5 B.h5 [DATASET ...]: exit 0 when the datasets
(all of both files' when none is named) exist in both files with the same
shape and the same values (bit for bit, or within a relative tolerance R
of the largest magnitude); else print what differs and exit 1.

h5diff is not enough: it exits 0 when two datasets have different shapes
("not comparable"), so a series with an extra or a missing row passes."""
import sys

import h5py
import numpy as np


def datasets(f):
    names = []
    f.visititems(lambda name, obj: names.append("/" + name) if isinstance(obj, h5py.Dataset) else None)
    return set(names)


def main(argv):
    rtol = 0.0
    if argv[:1] == ["--rtol"]:
        rtol, argv = float(argv[1]), argv[2:]
    a, b = h5py.File(argv[0], "r"), h5py.File(argv[1], "r")
    names = argv[2:]
    if not names:
        only = datasets(a) ^ datasets(b)
        if only:
            print(f"datasets in one file only: {sorted(only)}")
            return 1
        names = sorted(datasets(a))
    bad = 0
    for n in names:
        if n not in a or n not in b:
            print(f"{n}: missing from {argv[0] if n not in a else argv[1]}")
            bad += 1
            continue
        x, y = a[n][()], b[n][()]
        if np.shape(x) != np.shape(y):
            print(f"{n}: shape {np.shape(x)} against {np.shape(y)}")
            bad += 1
        elif rtol == 0 and not np.array_equal(x, y, equal_nan=x.dtype.kind == "f"):
            print(f"{n}: values differ")
            bad += 1
        elif rtol > 0:
            d = np.max(np.abs(x - y)) if np.size(x) else 0.0
            if not d <= rtol * max(np.max(np.abs(x)) if np.size(x) else 0.0, 1e-300):
                print(f"{n}: differs by {d:.3e} (relative limit {rtol:g})")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""frames_ok.py FILE MIN: an H5MD trajectory that a killed run left is
readable and holds only frames it wrote, at least MIN of them: steps
increasing, as many position frames as steps, the last frame's positions
finite and not the fill value (exit 0; 1 otherwise)."""
import sys

import h5py
import numpy as np

try:
    with h5py.File(sys.argv[1], "r") as f:
        pos = f["particles/all/position"]
        step, value = pos["step"][:], pos["value"][:]
        ok = len(step) >= int(sys.argv[2]) and len(value) == len(step) \
            and bool(np.all(np.diff(step) > 0)) and bool(np.all(np.isfinite(value))) \
            and bool(np.any(value[-1] != 0))
        print(f"{sys.argv[1]}: {len(step)} frames, steps {step[:3]}...{step[-1:]}")
except (OSError, KeyError) as e:
    print(f"{sys.argv[1]}: {e}", file=sys.stderr)
    ok = False
sys.exit(0 if ok else 1)

# Compare what ParaView read from an XDMF sidecar (xdmf_paraview.py's OUTDIR)
# with the HDF5 datasets the sidecar names, and check each render shows the field.
# Usage: python3 xdmf_check.py XMF OUTDIR   (exit 1 with a message on a mismatch)
import os
import sys
import xml.etree.ElementTree as ET

import h5py
import matplotlib.image
import numpy as np

xmf, out = sys.argv[1], sys.argv[2]
problems, fields = [], 0
for attr in ET.parse(xmf).getroot().iter("Attribute"):
    name, item = attr.get("Name"), attr.find("DataItem")
    h5name, dataset = item.text.strip().split(":")
    with h5py.File(os.path.join(os.path.dirname(xmf), h5name), "r") as f:
        want = f[dataset][...]
    npy = os.path.join(out, name + ".npy")
    if not os.path.exists(npy):
        problems.append(f"{name}: ParaView did not load it")
        continue
    got = np.load(npy)
    fields += 1
    if got.shape != want.shape or not np.array_equal(got, want):
        problems.append(f"{name}: ParaView's values {got.shape} differ from {h5name}:{dataset} {want.shape}")
    # A render that shows the field has many colours; a blank or a solid one has one or two.
    image = matplotlib.image.imread(os.path.join(out, name + ".png"))
    colours = len(np.unique(image.reshape(-1, image.shape[-1]), axis=0))
    if colours < 16:
        problems.append(f"{name}: the render has {colours} colours: the field is not shown")
if fields == 0:
    problems.append("no field read")
print("\n".join(problems) or f"ParaView read and rendered {fields} fields as written")
sys.exit(1 if problems else 0)

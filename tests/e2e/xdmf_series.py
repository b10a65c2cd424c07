# Open an XDMF time series in ParaView as a user would and save, at every
# time step ParaView offers, the temperature it loaded, for the test to
# compare with each snapshot's HDF5 file.
# Run under pvbatch, headless: xvfb-run -a pvbatch THIS SERIES.xmf OUTDIR
#   OUTDIR/times.txt          one time a line, as ParaView lists them
#   OUTDIR/temperature_N.npy  the cell values at time N, shaped (z, y, x)
import os
import sys

import numpy as np
from paraview import servermanager as sm
from paraview.simple import OpenDataFile
from vtk.numpy_interface import dataset_adapter as dsa

xmf, out = os.path.abspath(sys.argv[1]), sys.argv[2]
reader = OpenDataFile(xmf)
if reader is None:
    sys.exit(f"ParaView has no reader for {xmf}")
times = list(reader.TimestepValues)
with open(os.path.join(out, "times.txt"), "w") as f:
    f.write("".join(f"{t!r}\n" for t in times))
for n, t in enumerate(times):
    reader.UpdatePipeline(t)
    data = sm.Fetch(reader)
    if data.IsA("vtkCompositeDataSet"):
        it = data.NewIterator()
        it.InitTraversal()
        data = it.GetCurrentDataObject()
    block = dsa.WrapDataObject(data)
    points = block.GetDimensions()
    cells = [p - 1 for p in points][::-1]
    np.save(os.path.join(out, f"temperature_{n}.npy"),
            np.asarray(block.CellData["temperature"]).reshape(cells))

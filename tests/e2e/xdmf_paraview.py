# Open an XDMF sidecar in ParaView as a user would, render every field, and
# save what ParaView read, for xdmf_check.py to compare with the HDF5 file.
# Run under pvbatch (ParaView's Python), headless: xvfb-run -a pvbatch THIS XMF OUTDIR
#   OUTDIR/<field>.npy  the cell values ParaView loaded, shaped like the grid (z, y, x)
#   OUTDIR/<field>.png  a slice through the middle (3D) or the plane (2D), coloured by the field
#   OUTDIR/fields.txt   one line per field: name, dimensions, value range
# ParaView 5.11's XDMF3 reader resolves the HDF5 path against the sidecar's directory and
# fails on a bare file name ('x.xmf' reads 'x.xmfx.h5'), so the path is made absolute.
import os
import sys

import numpy as np
from paraview import servermanager as sm
from paraview.simple import (ColorBy, CreateView, GetDisplayProperties, OpenDataFile,
                             ResetCamera, SaveScreenshot, Show, Slice)
from vtk.numpy_interface import dataset_adapter as dsa

xmf, out = os.path.abspath(sys.argv[1]), sys.argv[2]
reader = OpenDataFile(xmf)
if reader is None:
    sys.exit(f"ParaView has no reader for {xmf}")
reader.UpdatePipeline()

# One XDMF grid is one dataset; several come as the leaves of a composite one.
data = sm.Fetch(reader)
blocks = []
if data.IsA("vtkCompositeDataSet"):
    it = data.NewIterator()
    it.InitTraversal()
    while not it.IsDoneWithTraversal():
        blocks.append(dsa.WrapDataObject(it.GetCurrentDataObject()))
        it.GoToNextItem()
else:
    blocks.append(dsa.WrapDataObject(data))
if not blocks:
    sys.exit(f"ParaView read no grid from {xmf}")

view = CreateView("RenderView")
view.ViewSize = [400, 300]
with open(os.path.join(out, "fields.txt"), "w") as summary:
    for block in blocks:
        for name in block.CellData.keys():
            points = block.GetDimensions()  # x, y, z point counts
            cells = [n - 1 for n in points if n > 1][::-1]  # z, y, x cell counts
            values = np.asarray(block.CellData[name]).reshape(cells)
            np.save(os.path.join(out, name + ".npy"), values)
            summary.write(f"{name} {'x'.join(map(str, cells))} {values.min():.6g} {values.max():.6g}\n")

            # Render: a slice normal to z through the middle, coloured by this field.
            for source in list(view.Representations):
                source.Visibility = 0
            shown = reader
            if len(cells) == 3:
                shown = Slice(Input=reader)
                shown.SliceType.Normal = [0, 0, 1]
                shown.SliceType.Origin = [points[0] / 2, points[1] / 2, cells[0] / 2]
            display = Show(shown, view)
            ColorBy(display, ("CELLS", name))
            GetDisplayProperties(shown, view).RescaleTransferFunctionToDataRange(True)
            ResetCamera(view)
            SaveScreenshot(os.path.join(out, name + ".png"), view, ImageResolution=[400, 300])

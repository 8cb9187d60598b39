"""The main job: the Euler characteristic curve of a CT head volume shipped
with TopoVox (Testing/Data/headsq_64x64x93: int16, 64x64x93, VTKData BSD),
read by ParaView's raw image reader, written as CSV and drawn as a line chart.

    xvfb-run -a pvbatch Examples/euler_curve_demo.py [OUTPUT_DIR]

Needs PV_PLUGIN_PATH to point at the TopoVox plugin (scripts/run-default.sh
sets it). Writes OUTPUT_DIR/euler_curve.csv and OUTPUT_DIR/euler_curve.png.
"""
import gzip
import json
import os
import shutil
import sys

from paraview.simple import (CreateView, EulerCharacteristicCurve, ImageReader, SaveData,
                             SaveScreenshot, Show)

here = os.path.dirname(os.path.abspath(__file__))
data_dir = os.path.join(here, "..", "Testing", "Data")
out_dir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "out")
os.makedirs(out_dir, exist_ok=True)

meta = json.load(open(os.path.join(data_dir, "headsq_64x64x93.json")))
raw_path = os.path.join(out_dir, "headsq_64x64x93.raw")
with gzip.open(os.path.join(data_dir, meta["file"])) as src, open(raw_path, "wb") as dst:
    shutil.copyfileobj(src, dst)

nx, ny, nz = meta["dims"]
reader = ImageReader(FileNames=[raw_path])
reader.DataScalarType = "short"
reader.DataByteOrder = "LittleEndian"
reader.DataExtent = [0, nx - 1, 0, ny - 1, 0, nz - 1]
reader.DataSpacing = meta["spacing"]

curve = EulerCharacteristicCurve(Input=reader)
curve.Scalars = ["POINTS", "ImageFile"]
curve.ThresholdMode = "Bins"
curve.NumberOfBins = 256
curve.UpdatePipeline()

csv_path = os.path.join(out_dir, "euler_curve.csv")
SaveData(csv_path, proxy=curve, FieldAssociation="Row Data")

view = CreateView("XYChartView")
view.ViewSize = [1000, 600]
view.ChartTitle = "Euler characteristic curve of headsq (CT, 64x64x93), V construction"
view.LeftAxisTitle = "Euler characteristic"
view.BottomAxisTitle = "threshold (CT value)"
display = Show(curve, view)
display.UseIndexForXAxis = 0
display.XArrayName = "Threshold"
display.SeriesVisibility = ["EulerCharacteristic"]
png_path = os.path.join(out_dir, "euler_curve.png")
SaveScreenshot(png_path, view, ImageResolution=[1000, 600])
os.remove(raw_path)
print("wrote", csv_path, "and", png_path)

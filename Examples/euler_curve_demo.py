"""The main job: the Euler characteristic curve of a CT head volume shipped
with TopoVox (Testing/Data/headsq_64x64x93: int16, 64x64x93, VTKData BSD),
read by ParaView's raw image reader, written as CSV and drawn as a line chart.

    xvfb-run -a pvbatch Examples/euler_curve_demo.py [OUTPUT_DIR]

Needs PV_PLUGIN_PATH to point at the TopoVox plugin (scripts/run-default.sh
sets it). Writes OUTPUT_DIR/euler_curve.csv and OUTPUT_DIR/euler_curve.png.
"""
import os
import sys

from paraview.simple import CreateView, EulerCharacteristicCurve, SaveData, SaveScreenshot, Show

from headsq_reader import open_headsq

out_dir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "out")
os.makedirs(out_dir, exist_ok=True)
reader, meta, raw_path = open_headsq(out_dir)


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

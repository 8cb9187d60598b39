"""Where is the topology of an image sensitive? The differentiable Euler
curve of a CT slice stack (Testing/Data/headsq_64x64x93, VTKData BSD) and its
gradient with respect to every voxel, as the point array EulerSensitivity:
written as a .vti (open it in ParaView and colour by EulerSensitivity) and
drawn on the middle slice.

    xvfb-run -a pvbatch Examples/euler_sensitivity_demo.py [OUTPUT_DIR]

Needs PV_PLUGIN_PATH to point at the TopoVox plugin. Writes
OUTPUT_DIR/euler_sensitivity.vti, OUTPUT_DIR/soft_euler_curve.csv and
OUTPUT_DIR/euler_sensitivity.png.
"""
import os
import sys

from paraview.simple import (ColorBy, CreateView, EulerCharacteristicSensitivity, GetColorTransferFunction,
                             OutputPort, SaveData, SaveScreenshot, Show, Slice)

from headsq_reader import open_headsq

out_dir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "out")
os.makedirs(out_dir, exist_ok=True)
reader, meta, raw_path = open_headsq(out_dir)
nz = meta["dims"][2]

# Soft Euler curve of the CT values: 24 thresholds over the range, a sigmoid
# about 100 CT units wide.
sensitivity = EulerCharacteristicSensitivity(Input=reader)
sensitivity.Scalars = ["POINTS", "ImageFile"]
sensitivity.NumberOfThresholds = 24
sensitivity.Lambda = 0.01
sensitivity.UpdatePipeline()
SaveData(os.path.join(out_dir, "soft_euler_curve.csv"), proxy=OutputPort(sensitivity, 0),
         FieldAssociation="Row Data")
SaveData(os.path.join(out_dir, "euler_sensitivity.vti"), proxy=OutputPort(sensitivity, 1))

view = CreateView("RenderView")
view.ViewSize = [800, 800]
view.OrientationAxesVisibility = 0
view.CameraParallelProjection = 1
middle = Slice(Input=OutputPort(sensitivity, 1))
middle.SliceType = "Plane"
middle.SliceType.Origin = [0, 0, meta["spacing"][2] * (nz // 2)]
middle.SliceType.Normal = [0, 0, 1]
display = Show(middle, view)
ColorBy(display, ("POINTS", "EulerSensitivity"))
lut = GetColorTransferFunction("EulerSensitivity")
lut.ApplyPreset("Cool to Warm", True)
display.SetScalarBarVisibility(view, True)
view.ResetCamera()
view.CameraPosition = [view.CameraFocalPoint[0], view.CameraFocalPoint[1], 500]
view.CameraViewUp = [0, 1, 0]
view.ResetCamera()
png_path = os.path.join(out_dir, "euler_sensitivity.png")
SaveScreenshot(png_path, view, ImageResolution=[800, 800])
os.remove(raw_path)
print("wrote", out_dir + "/euler_sensitivity.vti, soft_euler_curve.csv and euler_sensitivity.png")

"""The persistence part of the main job: the persistence diagram of the CT
head volume shipped with TopoVox (Testing/Data/headsq_64x64x93, int16,
VTKData BSD), its barcode, and the regions of its most persistent
components in 3D, as PNG and CSV.

    xvfb-run -a pvbatch Examples/persistence_demo.py [OUTPUT_DIR [MIN_PERSISTENCE]]

Needs PV_PLUGIN_PATH to point at the TopoVox plugin and PYTHONPATH at its
Python package (scripts/run-default.sh sets both). Writes, in OUTPUT_DIR:
  persistence_pairs.csv   every pair: dimension, birth, death, voxels
  persistence_diagram.png points (birth, death) by dimension, with the band
                          of pairs persisting less than MIN_PERSISTENCE
  persistence_barcode.png the bars of the pairs above MIN_PERSISTENCE
  persistence_analysis.pvsm  the pipeline and views as a ParaView state (with
                          headsq_64x64x93.raw, the volume it reads)
  persistent_features.png the regions of the components above it (colour:
                          PairIdentifier) inside the head's outline, with
                          the birth and death voxels of the strongest
"""
import os
import sys

from paraview import simple

import topovox  # noqa: F401  (the wrapped filters, before any proxy)
from topovox import views

from headsq_reader import open_headsq

out_dir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "out")
min_persistence = float(sys.argv[2]) if len(sys.argv) > 2 else 150.0
os.makedirs(out_dir, exist_ok=True)
reader, meta, raw_path = open_headsq(out_dir)

# Every pair, for the CSV.
everything = simple.PersistenceDiagram(Input=reader)
everything.Scalars = ["POINTS", "ImageFile"]
csv_path = os.path.join(out_dir, "persistence_pairs.csv")
simple.SaveData(csv_path, proxy=simple.OutputPort(everything, 1), FieldAssociation="Row Data")

# The diagram with its band, over every pair.
view, _ = views.show_diagram(everything, band=min_persistence, size=(800, 800))
diagram_png = os.path.join(out_dir, "persistence_diagram.png")
simple.SaveScreenshot(diagram_png, view, ImageResolution=[800, 800])

# The barcode of the pairs that persist longer than twice the band (a
# readable number of bars).
strong = simple.PersistenceDiagram(Input=reader)
strong.Scalars = ["POINTS", "ImageFile"]
strong.MinimumPersistence = 2 * min_persistence
bar_view, _ = views.show_barcode(strong, size=(900, 700))
barcode_png = os.path.join(out_dir, "persistence_barcode.png")
simple.SaveScreenshot(barcode_png, bar_view, ImageResolution=[900, 700])

# The regions behind those pairs in the volume: each persistent component
# (a blob below its death value) as a surface coloured by its pair, inside
# a translucent skin of the head.
regions = simple.FeatureRegions(Input=reader)
regions.Scalars = ["POINTS", "ImageFile"]
regions.MinimumPersistence = min_persistence
regions.IncludeEssentialClasses = 0  # the essential component is the whole head
labelled = simple.Threshold(Input=regions)
labelled.Scalars = ["POINTS", "ComponentRegion"]
labelled.LowerThreshold = 0
labelled.UpperThreshold = 1e9
surfaces = simple.ExtractSurface(Input=labelled)
skin = simple.Contour(Input=reader)
skin.ContourBy = ["POINTS", "ImageFile"]
skin.Isosurfaces = [500.0]

scene = simple.CreateView("RenderView")
scene.ViewSize = [900, 800]
scene.OrientationAxesVisibility = 0
scene.Background = [1.0, 1.0, 1.0]
try:
    scene.UseColorPaletteForBackground = 0
except AttributeError:
    pass
skin_display = simple.Show(skin, scene)
skin_display.Opacity = 0.15
simple.ColorBy(skin_display, None)
skin_display.DiffuseColor = [0.6, 0.6, 0.6]
region_display = simple.Show(surfaces, scene)
simple.ColorBy(region_display, ("POINTS", "ComponentRegion"))
region_display.LookupTable = simple.GetColorTransferFunction("ComponentRegion")
region_display.LookupTable.ApplyPreset("Rainbow Uniform", True)
region_display.RescaleTransferFunctionToDataRange(True, False)
views.show_critical_voxels(strong, scene, min_persistence=min_persistence, dimension=0)
scene.CameraPosition = [-250, -350, 250]
scene.CameraFocalPoint = [100, 100, 90]
scene.CameraViewUp = [0, 0, 1]
simple.ResetCamera(scene)
features_png = os.path.join(out_dir, "persistent_features.png")
simple.SaveScreenshot(features_png, scene, ImageResolution=[900, 800])

# The whole analysis as a ParaView state: File > Load State in the GUI
# brings back the pipeline and the three views (it reads the uncompressed
# volume left next to it).
state_path = os.path.join(out_dir, "persistence_analysis.pvsm")
simple.SaveState(state_path)
for path in (csv_path, diagram_png, barcode_png, features_png, state_path):
    print("wrote", path)

"""pvpython: the Feature Regions proxy and vtkFeatureRegionsFilter against
scipy.ndimage.label. For every labelled pair of a random image with distinct
values, its region must be the connected component (the construction's
connectivity: V face neighbours, T the full block) of {value < death} that
holds the birth voxel for components, and the component (dual
connectivity) of {value > birth} that holds the death voxel for the top
dimension; each voxel carries the smallest such region. Also: a table of
selected pairs as the second input labels exactly those pairs with their
PairIdentifier; bad inputs give errors, not crashes.
"""
import sys

import numpy as np
import scipy.ndimage as ndi
from vtk.numpy_interface import dataset_adapter as dsa
from vtkmodules.util.numpy_support import numpy_to_vtk, vtk_to_numpy
from vtkmodules.vtkCommonCore import vtkCommand
from vtkmodules.vtkCommonDataModel import vtkImageData, vtkTable

from paraview import servermanager as sm
from paraview.simple import ExtractSelection, FeatureRegions, PersistenceDiagram, PersistencePlot, Wavelet

import topovox
from checks import expect, failures


def vtk_image(volume):
    """numpy (z, y, x) -> vtkImageData with point scalars 'values'."""
    image = vtkImageData()
    image.SetDimensions(*(list(volume.shape[::-1]) + [1] * (3 - volume.ndim)))
    array = numpy_to_vtk(np.ascontiguousarray(volume).reshape(-1), deep=1)
    array.SetName("values")
    image.GetPointData().SetScalars(array)
    return image


def table_columns(table):
    return {table.GetColumnName(i): vtk_to_numpy(table.GetColumn(i)) for i in range(table.GetNumberOfColumns())}


def expected_labels(volume, pairs, construction, superlevel, min_persistence):
    """Brute force with scipy: innermost region of the selected pairs."""
    rank = volume.ndim
    top = rank - 1 if rank >= 2 else -1
    face, full = ndi.generate_binary_structure(rank, 1), ndi.generate_binary_structure(rank, rank)
    sign = -1.0 if superlevel else 1.0
    flat = volume.reshape(-1) * sign
    out = {0: np.full(flat.size, -1), 1: np.full(flat.size, -1)}
    best = {0: np.full(flat.size, np.inf), 1: np.full(flat.size, np.inf)}
    for pid, dim, birth, death, finite, birth_id, death_id in pairs:
        if not finite:
            persistence = np.inf
        else:
            persistence = abs(death - birth)
        if persistence <= min_persistence or dim not in (0, top):
            continue
        kind = 0 if dim == 0 else 1
        if kind == 0:
            inside = flat < sign * death if finite else np.ones(flat.size, bool)
            structure = face if construction == "V" else full
            seed = birth_id
        else:
            inside = flat > sign * birth
            structure = full if construction == "V" else face
            seed = death_id
        labels, _ = ndi.label(inside.reshape(volume.shape), structure=structure)
        region = labels.reshape(-1) == labels.reshape(-1)[seed]
        size = region.sum()
        closer = region & (size < best[kind])
        out[kind][closer] = pid
        best[kind][closer] = size
    return out


rng = np.random.default_rng(4)
for shape in ((40,), (23, 29), (9, 11, 10)):
    volume = rng.random(shape)
    image = vtk_image(volume)
    for construction in ("V", "T"):
        for superlevel in (False, True):
            what = "%s %s %s" % ("x".join(map(str, shape)), construction, "super" if superlevel else "sub")
            diagram = topovox.vtkPersistenceDiagramFilter()
            diagram.SetInputDataObject(0, image)
            diagram.SetConstruction(0 if construction == "V" else 1)
            diagram.SetFiltration(1 if superlevel else 0)
            diagram.Update()
            cols = table_columns(diagram.GetOutputDataObject(1))
            pairs = list(zip(cols["PairIdentifier"], cols["Dimension"], cols["Birth"], cols["Death"],
                             cols["IsFinite"], cols["BirthId"], cols["DeathId"]))
            regions = topovox.vtkFeatureRegionsFilter()
            regions.SetInputDataObject(0, image)
            regions.SetConstruction(0 if construction == "V" else 1)
            regions.SetFiltration(1 if superlevel else 0)
            regions.SetMinimumPersistence(0.1)
            regions.Update()
            out = regions.GetOutput().GetPointData()
            got = {0: vtk_to_numpy(out.GetArray("ComponentRegion")), 1: vtk_to_numpy(out.GetArray("EnclosedRegion"))}
            want = expected_labels(volume, pairs, construction, superlevel, 0.1)
            expect(np.array_equal(got[0], want[0]), what + ": component regions equal scipy's labels")
            expect(np.array_equal(got[1], want[1]), what + ": enclosed regions equal scipy's labels")
            expect((got[0] >= 0).any(), what + ": some component region")

            # Selected rows as the second input: exactly those pairs, by id.
            table = diagram.GetOutputDataObject(1)
            chosen = [j for j in range(table.GetNumberOfRows()) if cols["Dimension"][j] == 0][1::3]
            subset = vtkTable()
            for c in range(table.GetNumberOfColumns()):
                column = table.GetColumn(c).NewInstance()
                column.SetName(table.GetColumnName(c))
                for j in chosen:
                    column.InsertNextTuple(table.GetColumn(c).GetTuple(j))
                subset.AddColumn(column)
            picked = topovox.vtkFeatureRegionsFilter()
            picked.SetInputDataObject(0, image)
            picked.SetInputDataObject(1, subset)
            picked.SetConstruction(0 if construction == "V" else 1)
            picked.SetFiltration(1 if superlevel else 0)
            picked.Update()
            labels = vtk_to_numpy(picked.GetOutput().GetPointData().GetArray("ComponentRegion"))
            ids = set(cols["PairIdentifier"][chosen])
            want = expected_labels(volume, [p for p in pairs if p[0] in ids], construction, superlevel, -1.0)
            expect(np.array_equal(labels, want[0]), what + ": selected rows give exactly their regions")

# Rows of another image's diagram: left out with a warning, nothing labelled.
other = vtk_image(rng.random((23, 29)))
foreign_diagram = topovox.vtkPersistenceDiagramFilter()
foreign_diagram.SetInputDataObject(0, other)
foreign_diagram.Update()
warnings = []
foreign = topovox.vtkFeatureRegionsFilter()
foreign.AddObserver(vtkCommand.WarningEvent, lambda obj, event: warnings.append(event))
foreign.SetInputDataObject(0, vtk_image(rng.random((23, 29))))
foreign.SetInputDataObject(1, foreign_diagram.GetOutputDataObject(1))
foreign.Update()
labels = vtk_to_numpy(foreign.GetOutput().GetPointData().GetArray("ComponentRegion"))
expect(len(warnings) == 1 and (labels == -1).all(), "another image's pairs are left out with a warning")

# The proxy, as a user applies it, on ParaView's Wavelet.
wavelet = Wavelet()
wavelet.WholeExtent = [-6, 6, -5, 5, -4, 4]
regions = FeatureRegions(Input=wavelet)
regions.MinimumPersistence = 20.0
regions.UpdatePipeline()
data = dsa.WrapDataObject(sm.Fetch(regions))
expect("ComponentRegion" in data.PointData.keys(), "proxy: ComponentRegion array")
expect(data.PointData["ComponentRegion"].max() >= 0, "proxy: Wavelet has a labelled component")
# The proxy with the Pairs output of Persistence Diagram as its second input.
diagram = PersistenceDiagram(Input=wavelet)
linked = FeatureRegions(Input=wavelet, Pairs=sm.OutputPort(diagram, 1))
linked.UpdatePipeline()
labels = dsa.WrapDataObject(sm.Fetch(linked)).PointData["ComponentRegion"]
expect(labels.max() >= 0, "proxy with the Pairs table: regions labelled")

# Pairs picked in the diagram view: cells of a Persistence Plot selected by
# id (what a rubber-band selection gives), extracted, as the Pairs input.
plot = PersistencePlot(Input=sm.OutputPort(diagram, 1))
plot.UpdatePipeline()
plotted = dsa.WrapDataObject(sm.Fetch(plot))
finite_dim0 = [c for c in range(plotted.GetNumberOfCells())
               if plotted.CellData["Dimension"][c] == 0 and plotted.CellData["IsFinite"][c] == 1][:4]
guide = plotted.GetNumberOfCells() - 1  # a guide (PairIdentifier -1) is ignored
ids = []
for c in finite_dim0 + [guide]:
    ids += [0, c]
picked = ExtractSelection(Input=plot, Selection=sm.sources.IDSelectionSource(IDs=ids, FieldType="CELL"))
from_plot = FeatureRegions(Input=wavelet, Pairs=picked)
from_plot.UpdatePipeline()
labels = dsa.WrapDataObject(sm.Fetch(from_plot)).PointData["ComponentRegion"]
wanted = set(int(plotted.CellData["PairIdentifier"][c]) for c in finite_dim0)
expect(len(wanted) == 4 and set(np.unique(labels)) - {-1} == wanted,
       "pairs picked in the plot: exactly their regions (%s, %s)" % (sorted(wanted), np.unique(labels)))

# Bad input: a table without the needed columns is an error, not a crash.
errors = []
bad = topovox.vtkFeatureRegionsFilter()
bad.AddObserver(vtkCommand.ErrorEvent, lambda obj, event: errors.append(event))
bad.SetInputDataObject(0, vtk_image(rng.random((5, 6))))
bad.SetInputDataObject(1, vtkTable())
bad.Update()
expect(len(errors) == 1, "a table without Dimension/BirthId/DeathId is reported")

print("%d failures" % len(failures))
sys.exit(1 if failures else 0)

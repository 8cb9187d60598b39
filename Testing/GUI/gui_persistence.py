"""Runs inside the real ParaView client (paraview --script=... --exit under
Xvfb), as a person would work: the plugin loaded from the command line,
Persistence Diagram applied to a volume, its diagram shown in the client's
own render view through topovox.views, pairs selected in that view by id
(what a rubber-band selection produces), extracted, and fed to Feature
Regions, whose labels must be exactly the selected pairs; the selection
linked both ways (picked pairs select their critical voxels, picked voxels
select their pairs); the view's picture must show every dimension of the
diagram in its own colour. Results go to
the file named by TOPOVOX_GUI_RESULT ("gui: N failures" on its last line),
which test_gui_persistence.py reads.
"""
import os
import traceback

from paraview import servermanager as sm
from paraview import simple

result_path = os.environ.get("TOPOVOX_GUI_RESULT", "gui_result.txt")
lines = []


def expect(ok, what):
    if not ok:
        lines.append("FAIL: " + what)


try:
    import numpy as np
    from vtk.numpy_interface import dataset_adapter as dsa
    from vtkmodules.util.numpy_support import vtk_to_numpy
    from vtkmodules.vtkIOImage import vtkPNGReader

    from topovox import views

    wavelet = simple.Wavelet()
    wavelet.WholeExtent = [-8, 8, -8, 8, -6, 6]
    diagram = simple.PersistenceDiagram(Input=wavelet)
    volume_view = simple.GetActiveViewOrCreate("RenderView")  # the client's own view
    simple.Show(wavelet, volume_view)
    # What Apply does with a Persistence Plot: its preferred view, a new
    # Persistence Diagram View beside the 3D view, not the 3D view itself.
    applied = simple.PersistencePlot(Input=sm.OutputPort(diagram, 1))
    controller = sm.vtkSMParaViewPipelineControllerWithRendering()
    controller.ShowInPreferredView(applied.SMProxy, 0, volume_view.SMProxy)
    expect(controller.GetPreferredViewType(applied.SMProxy, 0) == "TopoVoxPersistenceView",
           "a Persistence Plot prefers the Persistence Diagram View")
    plot_views = [v for v in simple.GetViews() if v.GetXMLName() == "TopoVoxPersistenceView"]
    shown_in = lambda v: (sm.GetRepresentation(applied, v) is not None and
                          sm.GetRepresentation(applied, v).Visibility == 1)
    expect(len(plot_views) == 1 and shown_in(plot_views[0]),
           "applied, it opens in a Persistence Diagram View (%s)" % [v.GetXMLName() for v in simple.GetViews()])
    expect(not shown_in(volume_view), "and not in the 3D view")
    if plot_views:
        expect(plot_views[0].InteractionMode == "2D" and plot_views[0].OrientationAxesVisibility == 0,
               "the Persistence Diagram View is 2D without orientation axes")
        simple.Delete(applied)
        simple.Delete(plot_views[0])
    # topovox.views draws the diagram in a view of that type by default.
    view, display = views.show_diagram(diagram, band=10.0, size=(500, 500))
    expect(view.GetXMLName() == "TopoVoxPersistenceView", "show_diagram's view is a Persistence Diagram View")
    simple.Render(view)
    shot = os.path.join(os.path.dirname(os.path.abspath(result_path)), "gui_diagram.png")
    simple.SaveScreenshot(shot, view, ImageResolution=[500, 500])
    reader = vtkPNGReader()
    reader.SetFileName(shot)
    reader.Update()
    pixels = vtk_to_numpy(reader.GetOutput().GetPointData().GetScalars())[:, :3].astype(int)
    plot = display.Input
    cells = dsa.WrapDataObject(sm.Fetch(plot)).CellData
    present = sorted(set(int(d) for d in cells["Dimension"] if d >= 0))
    expect(len(present) >= 2, "the diagram has several dimensions (%s)" % present)
    for d in present:
        rgb = np.array(views.DIMENSION_RGB[d]) * 255
        hits = int((np.abs(pixels - rgb).max(axis=1) < 40).sum())
        expect(hits > 550, "dimension %d drawn in its colour in the client's view (%d pixels)" % (d, hits))

    # Select three component pairs in the diagram view (by cell id, as a
    # rubber band does), extract them, label their regions.
    dims, finite = cells["Dimension"], cells["IsFinite"]
    picked = [c for c in range(len(dims)) if dims[c] == 0 and finite[c] == 1][:3]
    simple.SetActiveSource(plot)
    ids = []
    for c in picked:
        ids += [0, c]
    simple.SelectIDs(IDs=ids, FieldType="CELL", Source=plot)
    extract = simple.ExtractSelection(Input=plot)
    regions = simple.FeatureRegions(Input=wavelet, Pairs=extract)
    regions.UpdatePipeline()
    labels = dsa.WrapDataObject(sm.Fetch(regions)).PointData["ComponentRegion"]
    wanted = set(int(cells["PairIdentifier"][c]) for c in picked)
    got = set(int(v) for v in np.unique(labels)) - {-1}
    expect(len(wanted) == 3 and got == wanted, "selected pairs %s become exactly the regions %s" % (sorted(wanted), sorted(got)))
    # Linked selection: the pairs picked in the diagram select their
    # critical voxels, and voxels picked in the 3D view select their pairs.
    crit = sm.OutputPort(diagram, 2)
    linked = views.link_selection(diagram, plot)
    expect(sorted(linked) == sorted(wanted), "link_selection reads the picked pairs %s (%s)" % (sorted(wanted), linked))
    voxel_ids = set(int(v) for v in dsa.WrapDataObject(sm.Fetch(simple.ExtractSelection(Input=crit))).PointData["PairIdentifier"])
    expect(voxel_ids == wanted, "their critical voxels are selected (%s)" % sorted(voxel_ids))
    points = dsa.WrapDataObject(sm.Fetch(diagram, idx=2)).PointData["PairIdentifier"]
    other = [k for k in range(len(points)) if int(points[k]) not in wanted][:2]
    ids = []
    for k in other:
        ids += [0, k]
    # What picking those points in the 3D view produces: an id selection on
    # the diagram's third output.
    from paraview.modules.vtkRemotingViews import vtkSMSelectionHelper
    picked_voxels = sm.sources.IDSelectionSource(IDs=ids, FieldType="POINT")
    append = vtkSMSelectionHelper.NewAppendSelectionsFromSelectionSource(picked_voxels.SMProxy)
    diagram.SMProxy.SetSelectionInput(2, append, 0)
    append.UnRegister(None)
    back = views.link_selection(diagram, plot, from_plot=False)
    marks = dsa.WrapDataObject(sm.Fetch(simple.ExtractSelection(Input=plot))).CellData["PairIdentifier"]
    expect(sorted(set(int(v) for v in marks)) == sorted(back) and len(back) >= 1,
           "voxels picked in 3D select their pairs in the diagram (%s, %s)" % (sorted(back), list(marks)))
    # Following on every pick, with no call: the plugin's GUI auto-start
    # hands every new Persistence Plot to views.follow_plot.
    expect(plot.GetGlobalIDAsString() in views._following, "the GUI follows a new Persistence Plot by itself")
    simple.SetActiveSource(plot)  # the user's choice, which following must keep
    more = [c for c in range(len(dims)) if dims[c] == 1 and finite[c] == 1][:2]
    pair = lambda c: int(cells["PairIdentifier"][c])
    ids = []
    for c in more:
        ids += [0, c]
    simple.SelectIDs(IDs=ids, FieldType="CELL", Source=plot)  # as a rubber band in the diagram
    want_more = sorted(pair(c) for c in more)
    expect(len(want_more) == 2 and views.selected_pairs(diagram, 2) == want_more,
           "followed: pairs picked in the diagram select their voxels (%s, %s)" % (
               want_more, views.selected_pairs(diagram, 2)))
    picked_voxels = sm.sources.IDSelectionSource(IDs=[0, other[0]], FieldType="POINT")
    append = vtkSMSelectionHelper.NewAppendSelectionsFromSelectionSource(picked_voxels.SMProxy)
    diagram.SMProxy.SetSelectionInput(2, append, 0)  # as a pick in the 3D view
    append.UnRegister(None)
    voxel_pair = int(points[other[0]])
    expect(views.selected_pairs(plot) == [voxel_pair],
           "followed: a voxel picked in 3D selects its pair (%s)" % views.selected_pairs(plot))
    expect(simple.GetActiveSource() == plot, "following leaves the active source as it was")
    # The GUI macro: one click stops following, the next starts it again.
    macro = os.environ["TOPOVOX_GUI_MACRO"]  # set by test_gui_persistence.py
    simple.SetActiveSource(plot)
    exec(compile(open(macro).read(), macro, "exec"), {})
    simple.SelectIDs(IDs=[0, more[0]], FieldType="CELL", Source=plot)
    expect(views.selected_pairs(diagram, 2) == [voxel_pair],
           "the macro turns following off (%s)" % views.selected_pairs(diagram, 2))
    exec(compile(open(macro).read(), macro, "exec"), {})
    simple.SelectIDs(IDs=[0, more[1]], FieldType="CELL", Source=plot)
    expect(views.selected_pairs(diagram, 2) == [pair(more[1])],
           "the macro turns it on again (%s)" % views.selected_pairs(diagram, 2))
    # From Python: follow_selection until its stop function is called.
    views.toggle_follow_selection(plot)  # off
    stop = views.follow_selection(diagram, plot)
    simple.SelectIDs(IDs=[0, more[0]], FieldType="CELL", Source=plot)
    expect(views.selected_pairs(diagram, 2) == [pair(more[0])], "follow_selection follows")
    stop()
    simple.SelectIDs(IDs=[0, more[1]], FieldType="CELL", Source=plot)
    expect(views.selected_pairs(diagram, 2) == [pair(more[0])], "stopped: the voxels stay as they were")
    # And the regions shown in a 3D view next to the diagram.
    labelled = simple.Threshold(Input=regions, Scalars=["POINTS", "ComponentRegion"], LowerThreshold=0,
                                UpperThreshold=1e9)
    simple.Show(labelled, volume_view)
    simple.Render(volume_view)
    labelled.UpdatePipeline()
    expect(labelled.GetDataInformation().GetNumberOfPoints() > 0, "the regions are shown in a 3D view")
except Exception:  # reported, not raised: the client must still exit
    lines.append("FAIL: " + traceback.format_exc().replace("\n", " | "))

lines.append("gui: %d failures" % sum(1 for line in lines if line.startswith("FAIL")))
with open(result_path, "w") as out:
    out.write("\n".join(lines) + "\n")

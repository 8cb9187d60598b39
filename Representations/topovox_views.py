"""topovox.views - TopoVox results shown with ParaView's own views, from
pvpython, pvbatch or the GUI's Python shell.

    from topovox import views          # or: import topovox_views as views
    diagram = PersistenceDiagram(Input=volume)
    views.show_diagram(diagram, band=50.0)      # points (birth, death)
    views.show_barcode(diagram)                  # one bar per pair
    views.show_critical_voxels(diagram, render_view, min_persistence=50.0)
    views.show_euler_curve(curve)                # line chart
    views.link_selection(diagram, plot)          # picked pairs -> their voxels

Each function takes the Persistence Diagram proxy (or any proxy whose
output port 1 is its Pairs table) and returns (view, display). Diagrams and
barcodes are geometry from the Persistence Plot filter
(vtkPersistencePlotFilter) in a render view in 2D mode, so ParaView's
selection tools work on them: rubber-band select points or bars and read
their PairIdentifier in the spreadsheet, then feed those rows to Feature
Regions; link_selection carries a selection between the diagram (or
barcode) and the critical voxels in the 3D view, either way. Colours per dimension are the same everywhere: components blue,
loops orange, voids green.
"""
from paraview import simple

DIMENSION_NAMES = ("components (H0)", "loops (H1)", "voids (H2)", "H3")
DIMENSION_RGB = ((0.12, 0.47, 0.71), (1.0, 0.50, 0.05), (0.17, 0.63, 0.17), (0.84, 0.15, 0.16))
GUIDE_RGB = (0.45, 0.45, 0.45)


def dimension_lookup_table(array_name="Dimension"):
    """A categorical colour map: one colour per homology dimension, guides grey."""
    lut = simple.GetColorTransferFunction(array_name)
    lut.InterpretValuesAsCategories = 1
    annotations, colours = ["-1", "guides"], list(GUIDE_RGB)
    for d, (name, rgb) in enumerate(zip(DIMENSION_NAMES, DIMENSION_RGB)):
        annotations += [str(d), name]
        colours += list(rgb)
    lut.Annotations = annotations
    lut.IndexedColors = colours
    return lut


def _pairs(diagram):
    """The Pairs table (port 1) of a Persistence Diagram proxy."""
    return simple.OutputPort(diagram, 1)


def _value_name(diagram):
    """The analysed array's name: the selected one, else (pvpython leaves the
    selection empty until the first update) the input's active scalars."""
    try:
        if diagram.Scalars[1]:
            return diagram.Scalars[1]
    except (AttributeError, IndexError):
        pass
    try:
        info = diagram.Input.GetDataInformation().GetPointDataInformation()
        for k in range(info.GetNumberOfArrays()):
            array = info.GetArrayInformation(k)
            if array.GetNumberOfComponents() == 1:
                return array.GetName()
    except AttributeError:
        pass
    return "value"


def _plot_view(view, size):
    if view is None:
        # The plugin's 2D render view for diagrams (XML/TopoVoxPersistenceView.xml),
        # or a plain render view where the plugin's proxies are not loaded.
        try:
            view = simple.CreateView("TopoVoxPersistenceView")
        except Exception:
            view = None
        if view is None:
            view = simple.CreateView("RenderView")
        try:  # in the GUI a view draws only once it has a place in a layout
            simple.AssignViewToLayout(view)
        except Exception:
            pass
    view.ViewSize = list(size)
    view.InteractionMode = "2D"
    view.OrientationAxesVisibility = 0
    view.Background = [1.0, 1.0, 1.0]
    try:  # ParaView 5.11 keeps a palette override; plain white needs it off
        view.UseColorPaletteForBackground = 0
    except AttributeError:
        pass
    grid = view.AxesGrid
    grid.Visibility = 1
    for axis in ("X", "Y"):
        setattr(grid, axis + "TitleColor", [0.1, 0.1, 0.1])
        setattr(grid, axis + "LabelColor", [0.1, 0.1, 0.1])
    grid.GridColor = [0.6, 0.6, 0.6]
    return view


def _fit(view, display, aspect=None):
    """Fits the 2D camera to the plot with a small margin; with `aspect`,
    first stretches y so that the plot is `aspect` times as high as wide
    (a barcode has many more rows than value units, or far fewer)."""
    if aspect:
        source = display.Input
        source.UpdatePipeline()
        x0, x1, y0, y1, _, _ = source.GetDataInformation().GetBounds()
        if x1 > x0 and y1 > y0:
            display.Scale = [1.0, aspect * (x1 - x0) / (y1 - y0), 1.0]
    simple.ResetCamera(view)
    view.CameraParallelProjection = 1
    view.CameraParallelScale *= 1.08


def _legend(display, view, title):
    """The colour legend: dark text on the white plot background."""
    display.SetScalarBarVisibility(view, True)
    bar = simple.GetScalarBar(display.LookupTable, view)
    bar.Title = title
    bar.ComponentTitle = ""
    bar.TitleColor = [0.1, 0.1, 0.1]
    bar.LabelColor = [0.1, 0.1, 0.1]
    return bar


def _show_plot(diagram, view, size, line_width, **plot_properties):
    """A Persistence Plot of the diagram's pairs in a 2D view, coloured by
    dimension, with its legend: what the diagram and the barcode share."""
    plot = simple.PersistencePlot(Input=_pairs(diagram), **plot_properties)
    view = _plot_view(view, size)
    display = simple.Show(plot, view)
    display.Representation = "Surface"
    simple.ColorBy(display, ("CELLS", "Dimension"))
    display.LookupTable = dimension_lookup_table()
    display.LineWidth = line_width
    _legend(display, view, "dimension")
    return view, display


def show_diagram(diagram, view=None, band=0.0, point_size=7, size=(800, 800)):
    """Points (birth, death) coloured by dimension, the diagonal, the edge
    where essential classes sit, and the band of pairs persisting less than
    `band` (0: none). Axis titles name the analysed array."""
    view, display = _show_plot(diagram, view, size, 1.5, Layout="Diagram", BandPersistence=band)
    display.PointSize = point_size
    display.RenderPointsAsSpheres = 1
    name = _value_name(diagram)
    view.AxesGrid.XTitle = "birth (%s)" % name
    view.AxesGrid.YTitle = "death (%s)" % name
    _fit(view, display)
    return view, display


def show_barcode(diagram, view=None, sort_by="Persistence", line_width=2.0, size=(900, 700)):
    """One bar per pair from birth to death, grouped by dimension (components
    at the bottom), longest first (sort_by="Birth": by birth)."""
    view, display = _show_plot(diagram, view, size, line_width, Layout="Barcode", SortBy=sort_by)
    view.AxesGrid.XTitle = _value_name(diagram)
    view.AxesGrid.YTitle = "bars"
    view.AxesGrid.YAxisUseCustomLabels = 1
    view.AxesGrid.YAxisLabels = []
    _fit(view, display, aspect=0.75)
    return view, display


def show_critical_voxels(diagram, view, min_persistence=0.0, dimension=None, point_size=9):
    """The voxels that create and destroy the features persisting at least
    `min_persistence` (port 2 of the diagram), of one `dimension` or all,
    coloured by dimension, in a 3D render view (next to the volume)."""
    points = simple.Threshold(Input=simple.OutputPort(diagram, 2))
    points.Scalars = ["POINTS", "Persistence"]
    points.LowerThreshold = min_persistence
    points.UpperThreshold = 1e300
    if dimension is not None:
        points = simple.Threshold(Input=points)
        points.Scalars = ["POINTS", "Dimension"]
        points.LowerThreshold = dimension
        points.UpperThreshold = dimension
    display = simple.Show(points, view)
    display.Representation = "Points"
    simple.ColorBy(display, ("POINTS", "Dimension"))
    display.LookupTable = dimension_lookup_table()
    display.PointSize = point_size
    display.RenderPointsAsSpheres = 1
    return points, display


def show_euler_curve(curve, view=None, size=(1000, 600), title=None):
    """The Euler characteristic curve (an Euler Characteristic Curve proxy)
    in a line chart: threshold on x, chi on y."""
    if view is None:
        view = simple.CreateView("XYChartView")
    view.ViewSize = list(size)
    if title:
        view.ChartTitle = title
    view.LeftAxisTitle = "Euler characteristic"
    view.BottomAxisTitle = "threshold"
    display = simple.Show(curve, view)
    display.UseIndexForXAxis = 0
    display.XArrayName = "Threshold"
    display.SeriesVisibility = ["EulerCharacteristic"]
    return view, display


def selected_pairs(source, port=0):
    """The PairIdentifiers of what is selected on `source` (output `port`):
    points or bars picked in a diagram or barcode view, critical voxels
    picked in the 3D view. Guides (-1) are left out."""
    from paraview import servermanager as sm
    from vtk.numpy_interface import dataset_adapter as dsa

    selection = source.SMProxy.GetSelectionInput(port)
    if selection is None:
        return []
    # An unregistered proxy, given the selection explicitly: nothing appears
    # in the pipeline browser or the undo stack, the active source stays.
    extract = sm.filters.ExtractSelection(Input=sm.OutputPort(source, port), Selection=sm._getPyProxy(selection))
    data = dsa.WrapDataObject(sm.Fetch(extract))
    ids = set()
    for attributes in (data.PointData, data.CellData):
        if "PairIdentifier" in attributes.keys():
            ids.update(int(v) for v in attributes["PairIdentifier"] if v >= 0)
    return sorted(ids)


def select_pairs(diagram, pair_ids, plot=None, render=True):
    """Selects the pairs `pair_ids` wherever they are drawn: their critical
    voxels (output 2 of the Persistence Diagram `diagram`) and, given one,
    the points or bars of a Persistence Plot. ParaView highlights the
    selection in every view showing them, as for a selection made by hand
    (render=False: the caller renders, or the GUI does on its own)."""
    from paraview import servermanager as sm
    from paraview.modules.vtkRemotingViews import vtkSMSelectionHelper

    query = "in1d(PairIdentifier, [%s])" % ", ".join(str(int(i)) for i in pair_ids)
    targets = [(diagram, 2, "Point Data")] + ([(plot, 0, "Cell Data")] if plot is not None else [])
    for source, port, element in targets:
        query_source = sm.sources.SelectionQuerySource(QueryString=query, ElementType=element)
        # As ParaView's own selections: the source wrapped in an append-
        # selections proxy (what the GUI's panels expect to find).
        append = vtkSMSelectionHelper.NewAppendSelectionsFromSelectionSource(query_source.SMProxy)
        source.SMProxy.SetSelectionInput(port, append, 0)
        append.UnRegister(None)
    if render:
        simple.RenderAllViews()


def link_selection(diagram, plot, from_plot=True, render=True):
    """Carries a selection across: the pairs picked in the diagram or
    barcode `plot` to their critical voxels (from_plot), or the critical
    voxels picked in the 3D view to the plot's points or bars. Returns the
    PairIdentifiers selected."""
    ids = selected_pairs(plot) if from_plot else selected_pairs(diagram, 2)
    select_pairs(diagram, ids, plot, render)
    return ids


def follow_selection(diagram, plot):
    """Links selections on every pick from now on: pairs picked in the
    diagram or barcode `plot` select their critical voxels (output 2 of
    `diagram`), and voxels picked in the 3D view select their pairs, as
    link_selection does once. Listens to ParaView's SelectionChangedEvent
    on both proxies; returns a function that stops following."""
    from paraview import servermanager as sm

    busy = [False]  # a link sets the other side's selection: no echo

    def registered(proxy):
        return bool(sm.ProxyManager().GetProxyName("sources", proxy.SMProxy))

    def follower(from_plot):
        def on_change(caller, event):
            # Not while ParaView takes the pipeline down (deleting a proxy
            # clears selections), and no render from here: views redraw
            # themselves after a selection in the GUI, and the caller
            # renders in pvpython.
            if busy[0] or not (registered(plot) and registered(diagram)):
                return
            busy[0] = True
            try:
                link_selection(diagram, plot, from_plot, render=False)
            except Exception as e:  # noqa: BLE001 (a GUI callback: said, not raised)
                print("TopoVox: the selection was not carried across: %s" % e)
            finally:
                busy[0] = False
        return on_change

    tags = [(plot.SMProxy, plot.SMProxy.AddObserver("SelectionChangedEvent", follower(True))),
            (diagram.SMProxy, diagram.SMProxy.AddObserver("SelectionChangedEvent", follower(False)))]

    def stop():
        for proxy, tag in tags:
            proxy.RemoveObserver(tag)
    return stop


_following = {}  # plot proxy id -> the stop function of its follower


def toggle_follow_selection(plot=None):
    """What the GUI macro (Representations/macros) runs: starts following
    selections between `plot` (default: the active source, a Persistence
    Plot of a Persistence Diagram's Pairs output) and its diagram's critical
    voxels, or stops when they are followed already. Returns True when
    following."""
    plot = plot or simple.GetActiveSource()
    if plot is None or plot.GetXMLName() != "TopoVoxPersistencePlot":
        raise ValueError("select a Persistence Plot (of a Persistence Diagram's Pairs) first")
    key = plot.GetGlobalIDAsString()
    if key in _following:
        _following.pop(key)()
        return False
    diagram = plot.Input  # the Pairs output: the diagram proxy, port 1
    if diagram is None or diagram.GetXMLName() != "TopoVoxPersistenceDiagram":
        raise ValueError("the Persistence Plot's input is not a Persistence Diagram's Pairs output")
    _following[key] = follow_selection(diagram, plot)
    return True


def follow_plot(global_id):
    """What the GUI does for every new Persistence Plot (the plugin's
    auto-start, Representations/pqTopoVoxFollowSelection): follows its
    selections when it plots a Persistence Diagram's pairs; leaves it alone
    otherwise (a table of another kind, a plot already followed). Never
    raises: a GUI callback has no one to report to."""
    from paraview import servermanager as sm

    try:
        proxy = sm.ActiveConnection.Session.GetRemoteObject(int(global_id))
        plot = sm._getPyProxy(proxy) if proxy is not None else None
        diagram = plot.Input if plot is not None else None
        if (plot is None or diagram is None or diagram.GetXMLName() != "TopoVoxPersistenceDiagram"
                or plot.GetGlobalIDAsString() in _following):
            return False
        return toggle_follow_selection(plot)
    except Exception as e:  # noqa: BLE001 (reported, not raised)
        print("TopoVox: selections of plot %s are not followed: %s" % (global_id, e))
        return False

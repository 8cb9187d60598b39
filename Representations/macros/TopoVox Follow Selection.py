# ParaView macro: Macros > Import new macro..., then one click in the Macros
# toolbar. In the GUI every new Persistence Plot already follows selections
# (pairs picked in the diagram or barcode select their critical voxels in
# the 3D view, voxels picked there select their pairs): with a Persistence
# Plot active, a click stops that for it, the next click starts it again.
# (topovox.views.toggle_follow_selection; the plugin must be loaded.)
from topovox import views

try:
    following = views.toggle_follow_selection()
    print("TopoVox: selections are %s" % ("followed" if following else "no longer followed"))
except ValueError as e:
    print("TopoVox: %s" % e)

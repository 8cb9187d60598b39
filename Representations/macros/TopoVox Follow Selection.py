# ParaView macro: Macros > Import new macro..., then one click in the Macros
# toolbar. With a Persistence Plot active, pairs picked in the diagram or
# barcode select their critical voxels in the 3D view, and voxels picked
# there select their pairs, on every pick from now on; click again to stop.
# (topovox.views.toggle_follow_selection; the plugin must be loaded.)
from topovox import views

try:
    following = views.toggle_follow_selection()
    print("TopoVox: selections are %s" % ("followed" if following else "no longer followed"))
except ValueError as e:
    print("TopoVox: %s" % e)

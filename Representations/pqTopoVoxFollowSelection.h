// pqTopoVoxFollowSelection.h - (the ParaView GUI only) every Persistence
// Plot made in the GUI follows selections with its diagram's critical
// voxels from the start: pairs picked in the diagram or barcode select
// their voxels in the 3D view and back, with no Python typed. The linking
// itself is topovox.views.follow_selection (Representations/topovox_views.py),
// run in the GUI's Python; this class only notices new plots.
#ifndef pqTopoVoxFollowSelection_h
#define pqTopoVoxFollowSelection_h

#include <QObject>

class pqPipelineSource;

class pqTopoVoxFollowSelection : public QObject
{
  Q_OBJECT

public:
  explicit pqTopoVoxFollowSelection(QObject* parent = nullptr);
  ~pqTopoVoxFollowSelection() override = default;

  // The plugin's auto-start callbacks.
  void onStartup();
  void onShutdown();

private:
  void onSourceAdded(pqPipelineSource* source);
  Q_DISABLE_COPY(pqTopoVoxFollowSelection)
};

#endif

// pqTopoVoxFollowSelection.cxx - new Persistence Plots handed to
// topovox.views.follow_plot in the GUI's Python.
#include "pqTopoVoxFollowSelection.h"

#include "pqApplicationCore.h"
#include "pqPipelineSource.h"
#include "pqServerManagerModel.h"
#include "vtkPythonInterpreter.h"
#include "vtkSMProxy.h"

#include <string>

pqTopoVoxFollowSelection::pqTopoVoxFollowSelection(QObject* parent)
  : QObject(parent)
{
}

void pqTopoVoxFollowSelection::onStartup()
{
  if (pqApplicationCore* core = pqApplicationCore::instance())
    QObject::connect(core->getServerManagerModel(), &pqServerManagerModel::sourceAdded, this,
      &pqTopoVoxFollowSelection::onSourceAdded);
}

void pqTopoVoxFollowSelection::onShutdown()
{
  if (pqApplicationCore* core = pqApplicationCore::instance())
    QObject::disconnect(core->getServerManagerModel(), nullptr, this, nullptr);
}

void pqTopoVoxFollowSelection::onSourceAdded(pqPipelineSource* source)
{
  vtkSMProxy* proxy = source ? source->getProxy() : nullptr;
  if (!proxy || std::string(proxy->GetXMLName()) != "TopoVoxPersistencePlot")
    return;
  // follow_plot leaves a plot of anything but a diagram's pairs alone and
  // never raises; a missing topovox package (PYTHONPATH) is said once here.
  vtkPythonInterpreter::Initialize();
  const std::string code = "try:\n"
                           "    from topovox import views as _topovox_views\n"
                           "    _topovox_views.follow_plot(" +
    std::to_string(proxy->GetGlobalID()) +
    ")\n"
    "except ImportError as e:\n"
    "    print('TopoVox: selections are not followed (topovox Python package: %s)' % e)\n";
  vtkPythonInterpreter::RunSimpleString(code.c_str());
}

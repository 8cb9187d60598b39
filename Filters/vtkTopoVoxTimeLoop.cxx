// vtkTopoVoxTimeLoop.cxx - the per-step re-execution of series filters.
#include "vtkTopoVoxTimeLoop.h"

#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkStreamingDemandDrivenPipeline.h"

namespace topovox_vtk
{
void TimeLoop::readSteps(vtkInformation* inInfo, vtkInformationVector* outputs)
{
  using SDDP = vtkStreamingDemandDrivenPipeline;
  this->Times.clear();
  if (inInfo && inInfo->Has(SDDP::TIME_STEPS()))
  {
    const double* t = inInfo->Get(SDDP::TIME_STEPS());
    this->Times.assign(t, t + inInfo->Length(SDDP::TIME_STEPS()));
  }
  this->Current = 0;
  for (int port = 0; port < outputs->GetNumberOfInformationObjects(); ++port)
  {
    outputs->GetInformationObject(port)->Remove(SDDP::TIME_STEPS());
    outputs->GetInformationObject(port)->Remove(SDDP::TIME_RANGE());
  }
}

void TimeLoop::requestCurrent(vtkInformation* inInfo) const
{
  if (!this->Times.empty())
    inInfo->Set(vtkStreamingDemandDrivenPipeline::UPDATE_TIME_STEP(), this->Times[this->Current]);
}

bool TimeLoop::advance(vtkInformation* request)
{
  if (this->last())
  {
    this->stop(request);
    return false;
  }
  ++this->Current;
  request->Set(vtkStreamingDemandDrivenPipeline::CONTINUE_EXECUTING(), 1);
  return true;
}

void TimeLoop::stop(vtkInformation* request)
{
  request->Remove(vtkStreamingDemandDrivenPipeline::CONTINUE_EXECUTING());
  this->Current = 0;
}
}

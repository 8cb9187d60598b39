// vtkTemporalTransportFilter.cxx - the VTK adapter of topovox::sinkhornGrid
// over a time series: one step's density per execution (TimeLoop), the
// kernel call per pair of steps, one table row per pair.
#include "vtkTemporalTransportFilter.h"

#include "vtkTopoVoxDensity.h"
#include "vtkTopoVoxImageAdapter.h"
#include "vtkTopoVoxTimeLoop.h"

#include "topovox/GridSinkhorn.h"

#include "vtkDataSetAttributes.h"
#include "vtkDoubleArray.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkIntArray.h"
#include "vtkMultiProcessController.h"
#include "vtkObjectFactory.h"
#include "vtkTable.h"

#include <stdexcept>
#include <string>
#include <vector>

vtkStandardNewMacro(vtkTemporalTransportFilter);
vtkCxxSetObjectMacro(vtkTemporalTransportFilter, Controller, vtkMultiProcessController);

namespace
{
struct Row
{
  double fromTime, toTime;
  int fromStep, toStep;
  topovox::GridSinkhornResult result;
};
}

struct vtkTemporalTransportFilter::Series
{
  topovox_vtk::TimeLoop loop;
  topovox_vtk::Density reference; // the density the next step is transported from
  std::size_t referenceStep = 0;
  std::vector<Row> rows;
  std::string error; // the first error of this pass over the series
  std::string warnings;
};

vtkTemporalTransportFilter::vtkTemporalTransportFilter()
  : State(new Series)
{
  this->SetController(vtkMultiProcessController::GetGlobalController());
  this->SetInputArrayToProcess(
    0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::SCALARS);
}

vtkTemporalTransportFilter::~vtkTemporalTransportFilter()
{
  this->SetController(nullptr);
}

int vtkTemporalTransportFilter::FillInputPortInformation(int, vtkInformation* info)
{
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkImageData");
  return 1;
}

int vtkTemporalTransportFilter::RequestInformation(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  this->State->loop.readSteps(inputVector[0]->GetInformationObject(0), outputVector);
  return 1;
}

int vtkTemporalTransportFilter::RequestUpdateExtent(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkInformation* inInfo = inputVector[0]->GetInformationObject(0);
  // Each step's whole image on rank 0, nothing elsewhere.
  topovox_vtk::requestWholeOnRoot(
    inInfo, topovox_vtk::computesOnThisRank(this->Controller, outputVector->GetInformationObject(0)));
  this->State->loop.requestCurrent(inInfo);
  return 1;
}

int vtkTemporalTransportFilter::RequestData(
  vtkInformation* request, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  Series& s = *this->State;
  const std::size_t step = s.loop.current();
  if (s.loop.first())
  {
    s.rows.clear();
    s.error.clear();
    s.warnings.clear();
    s.reference = topovox_vtk::Density();
  }
  const bool root = topovox_vtk::computesOnThisRank(this->Controller, outputVector->GetInformationObject(0));
  this->SetProgressText("Optimal transport over time");
  // Every rank goes through every step (the upstream pipeline may be
  // collective); after an error rank 0 only skips the work, and reports at
  // the end.
  if (root && s.error.empty() && this->CheckAbort())
    s.error = "aborted by the user at time step " + std::to_string(step);
  if (root && s.error.empty())
  {
    const std::string which = "time step " + std::to_string(step) +
      (s.loop.hasTime() ? " (t = " + std::to_string(s.loop.time(step)) + ")" : std::string());
    vtkImageData* image = vtkImageData::GetData(inputVector[0]);
    int association = vtkDataObject::FIELD_ASSOCIATION_POINTS;
    vtkDataArray* selected = topovox_vtk::selectedArray(this->GetInputArrayInformation(0), image, association);
    topovox_vtk::Density density;
    s.error = topovox_vtk::readDensity(image, selected, association, which, density);
    if (s.error.empty() && !s.loop.first())
    {
      const topovox_vtk::Density& from = s.reference;
      if (!topovox_vtk::sameGrid(from, density))
        s.error = which + " (" + std::to_string(density.dims[0]) + "x" + std::to_string(density.dims[1]) + "x" +
          std::to_string(density.dims[2]) + ") is not on the grid of time step " +
          std::to_string(s.referenceStep) + " (" + std::to_string(from.dims[0]) + "x" +
          std::to_string(from.dims[1]) + "x" + std::to_string(from.dims[2]) +
          "), or its array is not of the same kind";
      else
      {
        topovox::SinkhornOptions o = topovox_vtk::sinkhornOptions(
          this->Reg, this->Method, this->MaximumIterations, this->StopThreshold, this->NumberOfThreads);
        o.computeFields = false; // the table holds costs only
        // Within a step: its share of the step's progress, and the user's
        // abort every tenth iteration.
        const double stepsDone = static_cast<double>(step), steps = static_cast<double>(s.loop.steps());
        o.progress = [this, stepsDone, steps](double f) {
          this->UpdateProgress((stepsDone + f) / steps);
          return !this->CheckAbort();
        };
        try
        {
          Row row{ s.loop.time(s.referenceStep), s.loop.time(step), static_cast<int>(s.referenceStep),
            static_cast<int>(step), topovox::sinkhornGrid(from.values, density.values, from.grid, from.spacing, o) };
          if (!row.result.warnings.empty())
            s.warnings += which + ": " + row.result.warnings + ". ";
          s.rows.push_back(std::move(row));
        }
        catch (const topovox::Aborted&)
        {
          s.error = "aborted by the user at time step " + std::to_string(step);
        }
        catch (const std::exception& e)
        {
          s.error = which + ": " + e.what();
        }
      }
    }
    if (s.error.empty() && (s.loop.first() || this->Reference == PREVIOUS_STEP))
    {
      s.reference = std::move(density);
      s.referenceStep = step;
    }
  }
  this->UpdateProgress(static_cast<double>(step + 1) / static_cast<double>(s.loop.steps()));
  const std::size_t steps = s.loop.steps();
  if (s.loop.advance(request))
    return 1; // the executive runs us again for the next step

  // The last step: the table of the whole series.
  vtkTable* table = vtkTable::GetData(outputVector);
  table->Initialize();
  if (!root)
    return 1;
  if (!s.error.empty())
  {
    vtkErrorMacro(<< "Optimal transport over time: " << s.error << ".");
    return 0;
  }
  if (steps < 2)
  {
    vtkErrorMacro(<< "Optimal transport over time: the input has " << (s.loop.hasTime() ? "one time step" : "no time steps")
                  << "; it needs a series of at least two (for two images, use Optimal Transport).");
    return 0;
  }
  if (!s.warnings.empty())
    vtkWarningMacro(<< "Optimal transport over time: " << s.warnings);
  const vtkIdType n = static_cast<vtkIdType>(s.rows.size());
  auto column = [&](auto array, const char* name) {
    array->SetName(name);
    array->SetNumberOfTuples(n);
    table->AddColumn(array);
    return array;
  };
  auto fromTime = column(vtkSmartPointer<vtkDoubleArray>::New(), "FromTime");
  auto toTime = column(vtkSmartPointer<vtkDoubleArray>::New(), "ToTime");
  auto fromStep = column(vtkSmartPointer<vtkIntArray>::New(), "FromStep");
  auto toStep = column(vtkSmartPointer<vtkIntArray>::New(), "ToStep");
  auto cost = column(vtkSmartPointer<vtkDoubleArray>::New(), "TransportCost");
  auto iterations = column(vtkSmartPointer<vtkIntArray>::New(), "Iterations");
  auto error = column(vtkSmartPointer<vtkDoubleArray>::New(), "MarginalError");
  for (vtkIdType k = 0; k < n; ++k)
  {
    const Row& r = s.rows[static_cast<size_t>(k)];
    fromTime->SetValue(k, r.fromTime);
    toTime->SetValue(k, r.toTime);
    fromStep->SetValue(k, r.fromStep);
    toStep->SetValue(k, r.toStep);
    cost->SetValue(k, r.result.cost);
    iterations->SetValue(k, r.result.iterations);
    error->SetValue(k, r.result.error);
  }
  s.rows.clear();
  s.reference = topovox_vtk::Density();
  return 1;
}

void vtkTemporalTransportFilter::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Reference: " << (this->Reference == FIRST_STEP ? "first step" : "previous step")
     << " Reg: " << this->Reg << " Method: " << this->Method << " MaximumIterations: " << this->MaximumIterations
     << " StopThreshold: " << this->StopThreshold << "\n";
}

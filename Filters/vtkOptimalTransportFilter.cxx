// vtkOptimalTransportFilter.cxx - the VTK adapter of topovox::sinkhornGrid:
// two arrays as densities, the kernel call, potentials and displacement as
// arrays, the cost as field data and a table.
#include "vtkOptimalTransportFilter.h"

#include "vtkTopoVoxDensity.h"
#include "vtkTopoVoxImageAdapter.h"

#include "topovox/GridSinkhorn.h"

#include "vtkCellData.h"
#include "vtkDataArray.h"
#include "vtkDoubleArray.h"
#include "vtkFieldData.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkIntArray.h"
#include "vtkMultiProcessController.h"
#include "vtkObjectFactory.h"
#include "vtkPointData.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkTable.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

vtkStandardNewMacro(vtkOptimalTransportFilter);
vtkCxxSetObjectMacro(vtkOptimalTransportFilter, Controller, vtkMultiProcessController);

vtkOptimalTransportFilter::vtkOptimalTransportFilter()
{
  this->SetNumberOfInputPorts(2);
  this->SetNumberOfOutputPorts(2);
  this->SetController(vtkMultiProcessController::GetGlobalController());
  for (int port = 0; port < 2; ++port)
    this->SetInputArrayToProcess(
      port, port, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::SCALARS);
}

vtkOptimalTransportFilter::~vtkOptimalTransportFilter()
{
  this->SetController(nullptr);
}

int vtkOptimalTransportFilter::FillInputPortInformation(int, vtkInformation* info)
{
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkImageData");
  return 1;
}

int vtkOptimalTransportFilter::FillOutputPortInformation(int port, vtkInformation* info)
{
  info->Set(vtkDataObject::DATA_TYPE_NAME(), port == 0 ? "vtkImageData" : "vtkTable");
  return 1;
}

vtkTypeBool vtkOptimalTransportFilter::ProcessRequest(
  vtkInformation* request, vtkInformationVector** in, vtkInformationVector* out)
{
  if (request->Has(vtkStreamingDemandDrivenPipeline::REQUEST_INFORMATION()))
  {
    // The image output is the source's grid.
    vtkInformation* inInfo = in[0]->GetInformationObject(0);
    vtkInformation* outInfo = out->GetInformationObject(0);
    int whole[6];
    double spacing[3], origin[3];
    inInfo->Get(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), whole);
    outInfo->Set(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), whole, 6);
    if (inInfo->Has(vtkDataObject::SPACING()))
    {
      inInfo->Get(vtkDataObject::SPACING(), spacing);
      outInfo->Set(vtkDataObject::SPACING(), spacing, 3);
    }
    if (inInfo->Has(vtkDataObject::ORIGIN()))
    {
      inInfo->Get(vtkDataObject::ORIGIN(), origin);
      outInfo->Set(vtkDataObject::ORIGIN(), origin, 3);
    }
    for (int port = 0; port < 2; ++port)
      out->GetInformationObject(port)->Set(CAN_HANDLE_PIECE_REQUEST(), 1);
    return 1;
  }
  if (request->Has(vtkStreamingDemandDrivenPipeline::REQUEST_UPDATE_EXTENT()))
  {
    // Both images whole on rank 0, nothing elsewhere.
    const bool root = topovox_vtk::computesOnThisRank(this->Controller, out->GetInformationObject(0));
    for (int port = 0; port < 2; ++port)
      if (vtkInformation* inInfo = in[port]->GetInformationObject(0))
        topovox_vtk::requestWholeOnRoot(inInfo, root);
    return 1;
  }
  if (request->Has(vtkDemandDrivenPipeline::REQUEST_DATA()))
    return this->RequestData(request, in, out);
  return this->Superclass::ProcessRequest(request, in, out);
}

int vtkOptimalTransportFilter::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkImageData* source = vtkImageData::GetData(inputVector[0]);
  vtkImageData* target = vtkImageData::GetData(inputVector[1]);
  vtkImageData* output = vtkImageData::GetData(outputVector, 0);
  vtkTable* table = vtkTable::GetData(outputVector, 1);
  if (!topovox_vtk::computesOnThisRank(this->Controller, outputVector->GetInformationObject(0)))
    return 1; // rank 0 computes from the whole images
  if (!source || !target)
  {
    vtkErrorMacro(<< "Optimal transport: both the source and the target image are needed.");
    return 0;
  }
  topovox_vtk::Density density[2];
  for (int port = 0; port < 2; ++port)
  {
    vtkImageData* image = port ? target : source;
    int association = vtkDataObject::FIELD_ASSOCIATION_POINTS;
    vtkDataArray* selected = topovox_vtk::selectedArray(this->GetInputArrayInformation(port), image, association);
    const std::string why =
      topovox_vtk::readDensity(image, selected, association, port ? "target" : "source", density[port]);
    if (!why.empty())
    {
      vtkErrorMacro(<< "Optimal transport: " << why << ".");
      return 0;
    }
  }
  const topovox_vtk::Density& a = density[0];
  const topovox_vtk::Density& b = density[1];
  if (!topovox_vtk::sameGrid(a, b))
  {
    vtkErrorMacro(<< "Optimal transport: the source (" << a.dims[0] << "x" << a.dims[1] << "x" << a.dims[2]
                  << ") and the target (" << b.dims[0] << "x" << b.dims[1] << "x" << b.dims[2]
                  << ") must be arrays of the same kind on the same grid.");
    return 0;
  }
  topovox::SinkhornOptions o = topovox_vtk::sinkhornOptions(
    this->Reg, this->Method, this->MaximumIterations, this->StopThreshold, this->NumberOfThreads);
  // Every tenth iteration: the share of MaximumIterations done (a solve
  // that converges early jumps to the end), and the user's abort.
  o.progress = [this](double f) {
    this->UpdateProgress(0.05 + 0.9 * f);
    return !this->CheckAbort();
  };
  this->SetProgressText("Optimal transport");
  this->UpdateProgress(0.05);
  topovox::GridSinkhornResult r;
  try
  {
    r = topovox::sinkhornGrid(a.values, b.values, a.grid, a.spacing, o);
  }
  catch (const topovox::Aborted&)
  {
    vtkWarningMacro(<< "Optimal transport: aborted by the user.");
    return 1;
  }
  catch (const std::exception& e)
  {
    vtkErrorMacro(<< "Optimal transport: " << e.what() << ".");
    return 0;
  }
  if (!r.warnings.empty())
    vtkWarningMacro(<< "Optimal transport: " << r.warnings << ".");

  vtkDataSetAttributes* attributes = topovox_vtk::outputAttributes(output, source, a.cellData);
  const vtkIdType n = static_cast<vtkIdType>(a.values.size());
  auto addArray = [&](const char* name, int components, const topovox::GridField& values) {
    vtkNew<vtkDoubleArray> array;
    array->SetName(name);
    array->SetNumberOfComponents(components);
    array->SetNumberOfTuples(n);
    std::copy(values.begin(), values.end(), array->GetPointer(0));
    attributes->AddArray(array);
  };
  addArray("SourcePotential", 1, r.sourcePotential);
  addArray("TargetPotential", 1, r.targetPotential);
  addArray("SourceGradient", 1, r.sourceGradient);
  addArray("TargetGradient", 1, r.targetGradient);
  addArray("Displacement", 3, r.displacement);
  attributes->SetActiveVectors("Displacement");
  auto scalar = [](const char* name, double value, bool integer) -> vtkSmartPointer<vtkDataArray> {
    vtkSmartPointer<vtkDataArray> a;
    if (integer)
      a = vtkSmartPointer<vtkIntArray>::New();
    else
      a = vtkSmartPointer<vtkDoubleArray>::New();
    a->SetName(name);
    a->SetNumberOfTuples(1);
    a->SetTuple1(0, value);
    return a;
  };
  for (vtkFieldData* fd : { output->GetFieldData(), static_cast<vtkFieldData*>(table->GetRowData()) })
  {
    fd->AddArray(scalar("TransportCost", r.cost, false));
    fd->AddArray(scalar("Iterations", r.iterations, true));
    fd->AddArray(scalar("MarginalError", r.error, false));
  }
  this->UpdateProgress(1.0);
  return 1;
}

void vtkOptimalTransportFilter::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Reg: " << this->Reg << " Method: " << this->Method
     << " MaximumIterations: " << this->MaximumIterations << " StopThreshold: " << this->StopThreshold << "\n";
}

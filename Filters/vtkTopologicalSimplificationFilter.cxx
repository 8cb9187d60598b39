// vtkTopologicalSimplificationFilter.cxx - the VTK adapter of
// topovox::simplifyPersistence: the array as a kernel grid, the simplified
// values as a new array of the same type.
#include "vtkTopologicalSimplificationFilter.h"

#include "vtkTopoVoxImageAdapter.h"

#include "topovox/Simplification.h"

#include "vtkCellData.h"
#include "vtkDataArray.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkMultiProcessController.h"
#include "vtkObjectFactory.h"
#include "vtkPointData.h"
#include "vtkSmartPointer.h"

#include <cstring>
#include <stdexcept>
#include <string>

vtkStandardNewMacro(vtkTopologicalSimplificationFilter);
vtkCxxSetObjectMacro(vtkTopologicalSimplificationFilter, Controller, vtkMultiProcessController);

vtkTopologicalSimplificationFilter::vtkTopologicalSimplificationFilter()
{
  this->SetController(vtkMultiProcessController::GetGlobalController());
  this->SetInputArrayToProcess(
    0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::SCALARS);
}

vtkTopologicalSimplificationFilter::~vtkTopologicalSimplificationFilter()
{
  this->SetController(nullptr);
  this->SetResultArrayName(nullptr);
}

int vtkTopologicalSimplificationFilter::RequestUpdateExtent(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  const bool root = topovox_vtk::computesOnThisRank(this->Controller, outputVector->GetInformationObject(0));
  if (vtkInformation* inInfo = inputVector[0]->GetInformationObject(0))
    topovox_vtk::requestWholeOnRoot(inInfo, root);
  return 1;
}

int vtkTopologicalSimplificationFilter::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkImageData* image = vtkImageData::GetData(inputVector[0]);
  vtkImageData* output = vtkImageData::GetData(outputVector);
  if (!topovox_vtk::computesOnThisRank(this->Controller, outputVector->GetInformationObject(0)))
    return 1; // rank 0 computes from the whole image
  vtkDataArray* array = nullptr;
  bool cellData = false;
  topovox::GridView grid;
  if (!topovox_vtk::readWholeImage(this, "Topological simplification", image, this->Component, array, cellData, grid))
    return 0;
  this->SetProgressText("Topological simplification");
  this->UpdateProgress(0.05);
  topovox::SimplificationOptions o;
  o.construction = this->Construction ? topovox::Construction::T : topovox::Construction::V;
  o.filtration = this->Filtration ? topovox::Filtration::Superlevel : topovox::Filtration::Sublevel;
  o.maxPersistence = this->PersistenceThreshold;
  o.components = this->SimplifyComponents;
  o.enclosed = this->SimplifyEnclosed;
  o.threads = this->NumberOfThreads;
  std::vector<unsigned char> bytes;
  try
  {
    bytes = topovox::simplifyPersistence(grid, o);
  }
  catch (const std::exception& e)
  {
    vtkErrorMacro(<< "Topological simplification: " << e.what() << ".");
    return 0;
  }
  vtkSmartPointer<vtkDataArray> result;
  result.TakeReference(vtkDataArray::CreateDataArray(array->GetDataType()));
  result->SetNumberOfTuples(grid.voxelCount());
  std::memcpy(result->GetVoidPointer(0), bytes.data(), bytes.size());
  const std::string name = this->ResultArrayName && *this->ResultArrayName
    ? std::string(this->ResultArrayName)
    : std::string(array->GetName() ? array->GetName() : "values") + "_Simplified";
  result->SetName(name.c_str());
  vtkDataSetAttributes* attributes = topovox_vtk::outputAttributes(output, image, cellData);
  attributes->AddArray(result);
  attributes->SetActiveScalars(result->GetName());
  this->UpdateProgress(1.0);
  return 1;
}

void vtkTopologicalSimplificationFilter::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Construction: " << this->Construction << " Filtration: " << this->Filtration
     << " PersistenceThreshold: " << this->PersistenceThreshold << "\n";
  os << indent << "SimplifyComponents: " << this->SimplifyComponents
     << " SimplifyEnclosed: " << this->SimplifyEnclosed << "\n";
}

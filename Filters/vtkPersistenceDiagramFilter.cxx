// vtkPersistenceDiagramFilter.cxx - the VTK adapter of
// topovox::computePersistence: array in, kernel call, the TTK-style diagram,
// the table of pairs and the critical voxels out.
#include "vtkPersistenceDiagramFilter.h"

#include "vtkTopoVoxImageAdapter.h"

#include "topovox/Persistence.h"

#include "vtkCellArray.h"
#include "vtkCellData.h"
#include "vtkDataArray.h"
#include "vtkDoubleArray.h"
#include "vtkIdTypeArray.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkIntArray.h"
#include "vtkMultiProcessController.h"
#include "vtkObjectFactory.h"
#include "vtkPointData.h"
#include "vtkPoints.h"
#include "vtkPolyData.h"
#include "vtkSignedCharArray.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkTable.h"
#include "vtkUnstructuredGrid.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

vtkStandardNewMacro(vtkPersistenceDiagramFilter);
vtkCxxSetObjectMacro(vtkPersistenceDiagramFilter, Controller, vtkMultiProcessController);

namespace
{
template <typename ArrayT>
vtkSmartPointer<ArrayT> makeArray(const char* name, int components = 1)
{
  auto a = vtkSmartPointer<ArrayT>::New();
  a->SetName(name);
  a->SetNumberOfComponents(components);
  return a;
}

// TTK's critical types: 0 minimum, 1 1-saddle, 2 2-saddle, 3 maximum.
int criticalType(int cellDimension, int complexDimension)
{
  return cellDimension == 0 ? 0 : (cellDimension >= complexDimension ? 3 : cellDimension);
}
}

vtkPersistenceDiagramFilter::vtkPersistenceDiagramFilter()
{
  this->SetNumberOfInputPorts(1);
  this->SetNumberOfOutputPorts(3);
  this->SetController(vtkMultiProcessController::GetGlobalController());
  this->SetInputArrayToProcess(
    0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::SCALARS);
}

vtkPersistenceDiagramFilter::~vtkPersistenceDiagramFilter()
{
  this->SetController(nullptr);
}

int vtkPersistenceDiagramFilter::FillInputPortInformation(int, vtkInformation* info)
{
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkImageData");
  return 1;
}

int vtkPersistenceDiagramFilter::FillOutputPortInformation(int port, vtkInformation* info)
{
  const char* types[3] = { "vtkUnstructuredGrid", "vtkTable", "vtkPolyData" };
  info->Set(vtkDataObject::DATA_TYPE_NAME(), types[port]);
  return 1;
}

vtkTypeBool vtkPersistenceDiagramFilter::ProcessRequest(
  vtkInformation* request, vtkInformationVector** in, vtkInformationVector* out)
{
  if (request->Has(vtkStreamingDemandDrivenPipeline::REQUEST_INFORMATION()))
    return this->RequestInformation(request, in, out);
  if (request->Has(vtkStreamingDemandDrivenPipeline::REQUEST_UPDATE_EXTENT()))
    return this->RequestUpdateExtent(request, in, out);
  if (request->Has(vtkDemandDrivenPipeline::REQUEST_DATA()))
    return this->RequestData(request, in, out);
  return this->Superclass::ProcessRequest(request, in, out);
}

int vtkPersistenceDiagramFilter::RequestInformation(
  vtkInformation*, vtkInformationVector**, vtkInformationVector* outputVector)
{
  for (int port = 0; port < 3; ++port)
    outputVector->GetInformationObject(port)->Set(CAN_HANDLE_PIECE_REQUEST(), 1);
  return 1;
}

int vtkPersistenceDiagramFilter::RequestUpdateExtent(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  // The whole image on rank 0, nothing elsewhere (see the class notes).
  vtkInformation* inInfo = inputVector[0]->GetInformationObject(0);
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  const int piece = outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER());
  const int pieces = outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_PIECES());
  int whole[6];
  inInfo->Get(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), whole);
  const int ranks = topovox_vtk::participatingRanks(this->Controller, pieces);
  if (ranks > 1 && piece != 0)
  {
    const int empty[6] = { 0, -1, 0, -1, 0, -1 };
    inInfo->Set(vtkStreamingDemandDrivenPipeline::UPDATE_EXTENT(), empty, 6);
  }
  else
    inInfo->Set(vtkStreamingDemandDrivenPipeline::UPDATE_EXTENT(), whole, 6);
  inInfo->Set(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER(), 0);
  inInfo->Set(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_PIECES(), 1);
  inInfo->Set(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_GHOST_LEVELS(), 0);
  return 1;
}

int vtkPersistenceDiagramFilter::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkInformation* inInfo = inputVector[0]->GetInformationObject(0);
  vtkImageData* image = vtkImageData::GetData(inInfo);
  auto* diagram = vtkUnstructuredGrid::GetData(outputVector, 0);
  auto* table = vtkTable::GetData(outputVector, 1);
  auto* critical = vtkPolyData::GetData(outputVector, 2);
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  const int piece = outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER());
  const int pieces = outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_PIECES());
  if (topovox_vtk::participatingRanks(this->Controller, pieces) > 1 && piece != 0)
    return 1; // rank 0 computes the diagram

  if (!image)
  {
    vtkErrorMacro(<< "Persistence diagram: the input is not an image (vtkImageData).");
    return 0;
  }
  int association = vtkDataObject::FIELD_ASSOCIATION_POINTS;
  vtkDataArray* array = this->GetInputArrayToProcess(0, image, association);
  if (!array)
  {
    array = image->GetPointData()->GetScalars();
    association = vtkDataObject::FIELD_ASSOCIATION_POINTS;
  }
  if (!array)
  {
    vtkErrorMacro(<< "Persistence diagram: the input image has no scalar array to process (select one).");
    return 0;
  }
  const bool cellData = association == vtkDataObject::FIELD_ASSOCIATION_CELLS;
  int ext[6];
  image->GetExtent(ext);
  topovox::GridView grid;
  topovox::Box owned;
  const std::string why =
    topovox_vtk::describeArray(image, array, cellData, this->Component, ext, ext, grid, owned);
  if (!why.empty())
  {
    vtkErrorMacro(<< "Persistence diagram: " << why << ".");
    return 0;
  }

  topovox::PersistenceOptions options;
  options.construction = this->Construction ? topovox::Construction::T : topovox::Construction::V;
  options.filtration =
    this->Filtration ? topovox::Filtration::Superlevel : topovox::Filtration::Sublevel;
  options.maxDimension = this->MaximumDimension;
  options.minPersistence = this->MinimumPersistence;
  options.device = topovox_vtk::toDevice(this->Device);
  options.threads = this->NumberOfThreads;
  options.progress = [this](double f) {
    this->UpdateProgress(0.95 * f);
    return !this->CheckAbort();
  };
  this->SetProgressText("Persistence diagram");
  topovox::PersistenceDiagram result;
  try
  {
    result = topovox::computePersistence(grid, options);
  }
  catch (const topovox::Aborted&)
  {
    vtkWarningMacro(<< "Persistence diagram: aborted by the user.");
    return 0;
  }
  catch (const std::exception& e)
  {
    vtkErrorMacro(<< "Persistence diagram: " << e.what() << ".");
    return 0;
  }
  if (!result.warnings.empty())
    vtkWarningMacro(<< result.warnings);
  vtkDebugMacro(<< "stages:\n" << result.timings);

  // Where a voxel is, and its id in the input.
  auto voxelId = [&grid](const int64_t* v) {
    return static_cast<vtkIdType>(v[0] + grid.dims[0] * (v[1] + grid.dims[1] * v[2]));
  };
  auto world = [&](const int64_t* v, double xyz[3]) {
    double ijk[3];
    for (int a = 0; a < 3; ++a)
      ijk[a] = static_cast<double>(ext[2 * a] + v[a]) + (cellData && ext[2 * a] < ext[2 * a + 1] ? 0.5 : 0.0);
    image->TransformContinuousIndexToPhysicalPoint(ijk, xyz);
  };
  const bool super = this->Filtration != 0;
  double range[2];
  array->GetRange(range, std::max(0, this->Component)); // -1 would mean the magnitude
  // Essential classes are drawn up to the far end of the values.
  const double far = super ? range[0] : range[1];

  // Port 1: the table.
  auto tDim = makeArray<vtkIntArray>("Dimension");
  auto tBirth = makeArray<vtkDoubleArray>("Birth");
  auto tDeath = makeArray<vtkDoubleArray>("Death");
  auto tPers = makeArray<vtkDoubleArray>("Persistence");
  auto tFinite = makeArray<vtkSignedCharArray>("IsFinite");
  auto tBirthId = makeArray<vtkIdTypeArray>("BirthId");
  auto tDeathId = makeArray<vtkIdTypeArray>("DeathId");
  vtkSmartPointer<vtkIdTypeArray> tCoord[6];
  const char* coordNames[6] = { "BirthX", "BirthY", "BirthZ", "DeathX", "DeathY", "DeathZ" };
  for (int k = 0; k < 6; ++k)
    tCoord[k] = makeArray<vtkIdTypeArray>(coordNames[k]);

  // Port 0: the diagram, TTK's layout.
  vtkNew<vtkPoints> dPoints;
  dPoints->SetDataTypeToDouble();
  vtkNew<vtkCellArray> dLines;
  auto cPairId = makeArray<vtkIntArray>("PairIdentifier");
  auto cPairType = makeArray<vtkIntArray>("PairType");
  auto cPers = makeArray<vtkDoubleArray>("Persistence");
  auto cBirth = makeArray<vtkDoubleArray>("Birth");
  auto cFinite = makeArray<vtkSignedCharArray>("IsFinite");
  auto pType = makeArray<vtkIntArray>("CriticalType");
  auto pVertex = makeArray<vtkIdTypeArray>("ttkVertexScalarField");
  auto pCoords = makeArray<vtkDoubleArray>("Coordinates", 3);

  // Port 2: the critical voxels.
  vtkNew<vtkPoints> vPoints;
  vPoints->SetDataTypeToDouble();
  vtkNew<vtkCellArray> vVerts;
  auto vPairId = makeArray<vtkIntArray>("PairIdentifier");
  auto vDim = makeArray<vtkIntArray>("Dimension");
  auto vPers = makeArray<vtkDoubleArray>("Persistence");
  auto vRole = makeArray<vtkSignedCharArray>("Role");

  const int complexDim = result.dimension;
  int pairId = 0;
  for (const auto& p : result.pairs)
  {
    const double persistence = p.essential ? std::fabs(far - p.birth) : p.persistence();
    const double drawnDeath = p.essential ? far : p.death;
    const vtkIdType birthId = voxelId(p.birthVoxel);
    const vtkIdType deathId = p.essential ? -1 : voxelId(p.deathVoxel);

    tDim->InsertNextValue(p.dimension);
    tBirth->InsertNextValue(p.birth);
    tDeath->InsertNextValue(p.death);
    tPers->InsertNextValue(p.persistence());
    tFinite->InsertNextValue(p.essential ? 0 : 1);
    tBirthId->InsertNextValue(birthId);
    tDeathId->InsertNextValue(deathId);
    for (int a = 0; a < 3; ++a)
    {
      tCoord[a]->InsertNextValue(p.birthVoxel[a]);
      tCoord[3 + a]->InsertNextValue(p.essential ? -1 : p.deathVoxel[a]);
    }

    double bxyz[3], dxyz[3] = { 0, 0, 0 };
    world(p.birthVoxel, bxyz);
    if (!p.essential)
      world(p.deathVoxel, dxyz);
    const vtkIdType a = dPoints->InsertNextPoint(p.birth, p.birth, 0);
    const vtkIdType b = dPoints->InsertNextPoint(p.birth, drawnDeath, 0);
    const vtkIdType line[2] = { a, b };
    dLines->InsertNextCell(2, line);
    cPairId->InsertNextValue(pairId);
    cPairType->InsertNextValue(p.dimension);
    cPers->InsertNextValue(persistence);
    cBirth->InsertNextValue(p.birth);
    cFinite->InsertNextValue(p.essential ? 0 : 1);
    pType->InsertNextValue(criticalType(p.dimension, complexDim));
    pType->InsertNextValue(criticalType(p.dimension + 1, complexDim));
    pVertex->InsertNextValue(birthId);
    pVertex->InsertNextValue(deathId);
    pCoords->InsertNextTuple(bxyz);
    pCoords->InsertNextTuple(dxyz);

    for (int role = 0; role < (p.essential ? 1 : 2); ++role)
    {
      const vtkIdType v = vPoints->InsertNextPoint(role ? dxyz : bxyz);
      vVerts->InsertNextCell(1, &v);
      vPairId->InsertNextValue(pairId);
      vDim->InsertNextValue(p.dimension);
      vPers->InsertNextValue(persistence);
      vRole->InsertNextValue(static_cast<signed char>(role));
    }
    ++pairId;
  }
  // The diagonal, as TTK draws it.
  {
    const double lo = range[0], hi = range[1];
    const vtkIdType a = dPoints->InsertNextPoint(lo, lo, 0);
    const vtkIdType b = dPoints->InsertNextPoint(hi, hi, 0);
    const vtkIdType line[2] = { a, b };
    dLines->InsertNextCell(2, line);
    cPairId->InsertNextValue(-1);
    cPairType->InsertNextValue(-1);
    cPers->InsertNextValue(0);
    cBirth->InsertNextValue(lo);
    cFinite->InsertNextValue(1);
    for (int k = 0; k < 2; ++k)
    {
      pType->InsertNextValue(-1);
      pVertex->InsertNextValue(-1);
      const double zero[3] = { 0, 0, 0 };
      pCoords->InsertNextTuple(zero);
    }
  }

  table->AddColumn(tDim);
  table->AddColumn(tBirth);
  table->AddColumn(tDeath);
  table->AddColumn(tPers);
  table->AddColumn(tFinite);
  table->AddColumn(tBirthId);
  table->AddColumn(tDeathId);
  for (auto& c : tCoord)
    table->AddColumn(c);

  diagram->SetPoints(dPoints);
  diagram->SetCells(VTK_LINE, dLines);
  diagram->GetCellData()->AddArray(cPairId);
  diagram->GetCellData()->AddArray(cPairType);
  diagram->GetCellData()->AddArray(cPers);
  diagram->GetCellData()->AddArray(cBirth);
  diagram->GetCellData()->AddArray(cFinite);
  diagram->GetPointData()->AddArray(pType);
  diagram->GetPointData()->AddArray(pVertex);
  diagram->GetPointData()->AddArray(pCoords);

  critical->SetPoints(vPoints);
  critical->SetVerts(vVerts);
  critical->GetPointData()->AddArray(vPairId);
  critical->GetPointData()->AddArray(vDim);
  critical->GetPointData()->AddArray(vPers);
  critical->GetPointData()->AddArray(vRole);
  this->UpdateProgress(1.0);
  return 1;
}

void vtkPersistenceDiagramFilter::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Construction: " << (this->Construction ? "T" : "V") << "\n";
  os << indent << "Filtration: " << (this->Filtration ? "superlevel" : "sublevel") << "\n";
  os << indent << "MaximumDimension: " << this->MaximumDimension << "\n";
  os << indent << "MinimumPersistence: " << this->MinimumPersistence << "\n";
  os << indent << "Device: " << this->Device << "\n";
  os << indent << "Component: " << this->Component << "\n";
  os << indent << "NumberOfThreads: " << this->NumberOfThreads << "\n";
}

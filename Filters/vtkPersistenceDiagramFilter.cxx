// vtkPersistenceDiagramFilter.cxx - the VTK adapter of
// topovox::computePersistence: array in, kernel call, the TTK-style diagram,
// the table of pairs and the critical voxels out.
#include "vtkPersistenceDiagramFilter.h"

#include "vtkTopoVoxImageAdapter.h"
#include "vtkTopoVoxPersistenceExchange.h"

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
  // Serial: the whole image. MPI: this rank's block of the image plus the
  // one-voxel halo its piece of the Morse complex reads (see the class
  // notes), as one piece with no ghost levels, as vtkEulerCurveFilter does.
  vtkInformation* inInfo = inputVector[0]->GetInformationObject(0);
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  const int piece = outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER());
  const int pieces = outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_PIECES());
  if (topovox_vtk::participatingRanks(this->Controller, pieces) > 1)
    topovox_vtk::requestBlockWithHalo(inInfo, piece, pieces);
  else
    topovox_vtk::requestWholeOnRoot(inInfo, true);
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
  // This rank's piece (a serial run: the image as it came); every rank
  // agrees on errors before any other collective, so that none waits forever.
  const topovox_vtk::ImagePiece in = topovox_vtk::readImagePiece(
    image, inInfo, outInfo, this->GetInputArrayInformation(0), this->Controller, this->Component, true);
  const std::string failure = topovox_vtk::agreeOnError(this->Controller, in.ranks, in.error);
  if (!failure.empty())
  {
    vtkErrorMacro(<< "Persistence diagram: " << failure << ".");
    return 0;
  }
  const int pieces = in.pieces, ranks = in.ranks;
  const bool root = in.root, cellData = in.cellData;
  const int *whole = in.whole, *pieceExt = in.extent;
  vtkDataArray* array = in.array;
  const topovox::GridView& grid = in.grid; // no data: this rank of a split image builds nothing

  // The whole image in voxels (points, or cells for cell data), and the
  // pieces of it: voxel extents sharing their boundary planes.
  int64_t wholeDims[3];
  for (int a = 0; a < 3; ++a)
  {
    const int64_t points = whole[2 * a + 1] - whole[2 * a] + 1;
    wholeDims[a] = cellData ? std::max<int64_t>(1, points - 1) : points;
  }
  const topovox::Construction construction =
    this->Construction ? topovox::Construction::T : topovox::Construction::V;
  // A piece's region, or false for none (empty, or one plane thick: such a
  // piece holds only cells its neighbours report).
  auto regionOf = [&](const int ext[6], topovox::PieceRegion& region) {
    int64_t lo[3], hi[3];
    for (int a = 0; a < 3; ++a)
    {
      lo[a] = wholeDims[a] == 1 ? 0 : ext[2 * a] - whole[2 * a];
      hi[a] = wholeDims[a] == 1 ? 0 : std::min<int64_t>(ext[2 * a + 1] - whole[2 * a], wholeDims[a] - 1);
      if (ext[2 * a] > ext[2 * a + 1] || (wholeDims[a] > 1 && hi[a] <= lo[a]))
        return false;
    }
    region = topovox::PieceRegion::fromVoxelExtent(wholeDims, lo, hi, construction);
    return true;
  };
  topovox::PieceRegion region;
  for (int a = 0; a < 3; ++a)
    region.wholeDims[a] = wholeDims[a];
  bool hasPiece = false;
  if (ranks > 1)
  {
    hasPiece = grid.data != nullptr && regionOf(pieceExt, region);
    // Every rank knows every piece's extent: all cut planes cross-check.
    for (int p = 0; p < pieces; ++p)
    {
      int ext[6];
      topovox::PieceRegion other;
      topovox_vtk::pieceExtent(whole, p, pieces, ext);
      if (regionOf(ext, other))
        region.addCutsOf(other);
    }
    if (hasPiece)
    {
      int ext[6];
      image->GetExtent(ext);
      for (int a = 0; a < 3; ++a)
        region.origin[a] = wholeDims[a] == 1 ? 0 : ext[2 * a] - whole[2 * a];
    }
  }

  topovox::PersistenceOptions options;
  options.construction = construction;
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
  // The value range (for essential classes and the diagonal), over all ranks.
  double range[2] = { std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity() };
  if (grid.data)
    array->GetRange(range, std::max(0, this->Component)); // -1 would mean the magnitude
  topovox_vtk::allReduceMinMax(this->Controller, ranks, range[0], range[1]);

  topovox::PersistenceDiagram result;
  // A complex this machine cannot hold is refused rather than run out of
  // memory in the server: what the image's size alone needs, now; the
  // critical cells, once the engine has counted them (Persistence.h).
  const double budget = topovox::defaultPersistenceMemoryBudget();
  double needed = 0;
  auto gib = [](double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); };
  try
  {
    if (ranks == 1 && !topovox::fitPersistenceMemory(grid, budget, options, &needed))
    {
      vtkErrorMacro(<< "Persistence diagram: the image's complex needs at least about " << gib(needed)
                    << " GiB of memory, more than 80% of this machine's (" << gib(budget)
                    << " GiB): crop or sub-sample the image.");
      return 0;
    }
    if (ranks == 1)
      result = topovox::computePersistence(grid, options);
    else
    {
      result = topovox_vtk::distributedPersistence(
        this->Controller, ranks, hasPiece ? &grid : nullptr, region, options);
      if (!root)
        return 1; // rank 0 outputs the diagram
    }
  }
  catch (const topovox::Aborted&)
  {
    vtkWarningMacro(<< "Persistence diagram: aborted by the user.");
    return 0;
  }
  catch (const topovox::CriticalCellLimit& e)
  {
    vtkErrorMacro(<< "Persistence diagram: the image's discrete gradient has " << e.criticalCells
                  << " critical cells: the diagram would need about "
                  << gib(topovox::morseMemoryBytes(needed, static_cast<double>(e.criticalCells)))
                  << " GiB of memory, more than 80% of this machine's (" << gib(budget)
                  << " GiB): crop or sub-sample the image.");
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

  // Where a voxel is, and its id in the whole input.
  auto voxelId = [&wholeDims](const int64_t* v) {
    return static_cast<vtkIdType>(v[0] + wholeDims[0] * (v[1] + wholeDims[1] * v[2]));
  };
  auto world = [&](const int64_t* v, double xyz[3]) {
    double ijk[3];
    for (int a = 0; a < 3; ++a)
      ijk[a] = static_cast<double>(whole[2 * a] + v[a]) + (cellData && whole[2 * a] < whole[2 * a + 1] ? 0.5 : 0.0);
    image->TransformContinuousIndexToPhysicalPoint(ijk, xyz);
  };
  const bool super = this->Filtration != 0;
  // Essential classes are drawn up to the far end of the values.
  const double far = super ? range[0] : range[1];

  // Port 1: the table.
  auto tPairId = makeArray<vtkIntArray>("PairIdentifier");
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

    tPairId->InsertNextValue(pairId);
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

  table->AddColumn(tPairId);
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

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
#include "vtkSMPTools.h"
#include "vtkSignedCharArray.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkTable.h"
#include "vtkUnstructuredGrid.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

vtkStandardNewMacro(vtkPersistenceDiagramFilter);
vtkCxxSetObjectMacro(vtkPersistenceDiagramFilter, Controller, vtkMultiProcessController);

namespace
{
template <typename ArrayT>
vtkSmartPointer<ArrayT> makeArray(const char* name, vtkIdType tuples, int components = 1)
{
  auto a = vtkSmartPointer<ArrayT>::New();
  a->SetName(name);
  a->SetNumberOfComponents(components);
  a->SetNumberOfTuples(tuples);
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

  // The outputs are sized first and filled on the threads (vtkSMPTools;
  // one thread under its Sequential backend, Debian's default), pair k at
  // its own rows. About 35 InsertNext calls a pair on one thread made the
  // Update of a 256^3 field (5.3 M pairs) 12.9 to 13.6 s, against 10.8 to
  // 11.6 s of computation; so: 11.9 to 13.2 s, 11.4 and 12.1 s with
  // VTK_SMP_BACKEND_IN_USE=STDThread (this repository's 2 cores). A 512^3
  // field has 42.7 M pairs.
  const vtkIdType n = static_cast<vtkIdType>(result.pairs.size());
  // Port 2 has two voxels a pair, one for an essential class: where pair
  // k's first goes.
  std::vector<vtkIdType> voxelAt(static_cast<size_t>(n) + 1, 0);
  for (vtkIdType k = 0; k < n; ++k)
    voxelAt[static_cast<size_t>(k) + 1] = voxelAt[static_cast<size_t>(k)] + (result.pairs[static_cast<size_t>(k)].essential ? 1 : 2);
  const vtkIdType voxels = voxelAt[static_cast<size_t>(n)];

  // Port 1: the table.
  auto tPairId = makeArray<vtkIntArray>("PairIdentifier", n);
  auto tDim = makeArray<vtkIntArray>("Dimension", n);
  auto tBirth = makeArray<vtkDoubleArray>("Birth", n);
  auto tDeath = makeArray<vtkDoubleArray>("Death", n);
  auto tPers = makeArray<vtkDoubleArray>("Persistence", n);
  auto tFinite = makeArray<vtkSignedCharArray>("IsFinite", n);
  auto tBirthId = makeArray<vtkIdTypeArray>("BirthId", n);
  auto tDeathId = makeArray<vtkIdTypeArray>("DeathId", n);
  vtkSmartPointer<vtkIdTypeArray> tCoord[6];
  const char* coordNames[6] = { "BirthX", "BirthY", "BirthZ", "DeathX", "DeathY", "DeathZ" };
  for (int k = 0; k < 6; ++k)
    tCoord[k] = makeArray<vtkIdTypeArray>(coordNames[k], n);

  // Port 0: the diagram, TTK's layout: two points and a line a pair, then
  // the diagonal.
  vtkNew<vtkPoints> dPoints;
  dPoints->SetDataTypeToDouble();
  dPoints->SetNumberOfPoints(2 * n + 2);
  double* const dXyz = vtkArrayDownCast<vtkDoubleArray>(dPoints->GetData())->GetPointer(0);
  auto cPairId = makeArray<vtkIntArray>("PairIdentifier", n + 1);
  auto cPairType = makeArray<vtkIntArray>("PairType", n + 1);
  auto cPers = makeArray<vtkDoubleArray>("Persistence", n + 1);
  auto cBirth = makeArray<vtkDoubleArray>("Birth", n + 1);
  auto cFinite = makeArray<vtkSignedCharArray>("IsFinite", n + 1);
  auto pType = makeArray<vtkIntArray>("CriticalType", 2 * n + 2);
  auto pVertex = makeArray<vtkIdTypeArray>("ttkVertexScalarField", 2 * n + 2);
  auto pCoords = makeArray<vtkDoubleArray>("Coordinates", 2 * n + 2, 3);

  // Port 2: the critical voxels.
  vtkNew<vtkPoints> vPoints;
  vPoints->SetDataTypeToDouble();
  vPoints->SetNumberOfPoints(voxels);
  double* const vXyz = vtkArrayDownCast<vtkDoubleArray>(vPoints->GetData())->GetPointer(0);
  auto put = [](double* to, vtkIdType point, double x, double y, double z) {
    to[3 * point] = x;
    to[3 * point + 1] = y;
    to[3 * point + 2] = z;
  };
  auto vPairId = makeArray<vtkIntArray>("PairIdentifier", voxels);
  auto vDim = makeArray<vtkIntArray>("Dimension", voxels);
  auto vPers = makeArray<vtkDoubleArray>("Persistence", voxels);
  auto vRole = makeArray<vtkSignedCharArray>("Role", voxels);

  const int complexDim = result.dimension;
  vtkSMPTools::For(0, n, [&](vtkIdType k0, vtkIdType k1) {
    for (vtkIdType k = k0; k < k1; ++k)
    {
      const topovox::PersistencePair& p = result.pairs[static_cast<size_t>(k)];
      const int pairId = static_cast<int>(k);
      const double persistence = p.essential ? std::fabs(far - p.birth) : p.persistence();
      const double drawnDeath = p.essential ? far : p.death;
      const vtkIdType birthId = voxelId(p.birthVoxel);
      const vtkIdType deathId = p.essential ? -1 : voxelId(p.deathVoxel);

      tPairId->SetValue(k, pairId);
      tDim->SetValue(k, p.dimension);
      tBirth->SetValue(k, p.birth);
      tDeath->SetValue(k, p.death);
      tPers->SetValue(k, p.persistence());
      tFinite->SetValue(k, p.essential ? 0 : 1);
      tBirthId->SetValue(k, birthId);
      tDeathId->SetValue(k, deathId);
      for (int a = 0; a < 3; ++a)
      {
        tCoord[a]->SetValue(k, p.birthVoxel[a]);
        tCoord[3 + a]->SetValue(k, p.essential ? -1 : p.deathVoxel[a]);
      }

      double bxyz[3], dxyz[3] = { 0, 0, 0 };
      world(p.birthVoxel, bxyz);
      if (!p.essential)
        world(p.deathVoxel, dxyz);
      put(dXyz, 2 * k, p.birth, p.birth, 0);
      put(dXyz, 2 * k + 1, p.birth, drawnDeath, 0);
      cPairId->SetValue(k, pairId);
      cPairType->SetValue(k, p.dimension);
      cPers->SetValue(k, persistence);
      cBirth->SetValue(k, p.birth);
      cFinite->SetValue(k, p.essential ? 0 : 1);
      pType->SetValue(2 * k, criticalType(p.dimension, complexDim));
      pType->SetValue(2 * k + 1, criticalType(p.dimension + 1, complexDim));
      pVertex->SetValue(2 * k, birthId);
      pVertex->SetValue(2 * k + 1, deathId);
      pCoords->SetTypedTuple(2 * k, bxyz);
      pCoords->SetTypedTuple(2 * k + 1, dxyz);

      const vtkIdType first = voxelAt[static_cast<size_t>(k)];
      for (int role = 0; role < (p.essential ? 1 : 2); ++role)
      {
        const vtkIdType v = first + role;
        const double* xyz = role ? dxyz : bxyz;
        put(vXyz, v, xyz[0], xyz[1], xyz[2]);
        vPairId->SetValue(v, pairId);
        vDim->SetValue(v, p.dimension);
        vPers->SetValue(v, persistence);
        vRole->SetValue(v, static_cast<signed char>(role));
      }
    }
  });
  // The diagonal, as TTK draws it.
  {
    const double lo = range[0], hi = range[1];
    put(dXyz, 2 * n, lo, lo, 0);
    put(dXyz, 2 * n + 1, hi, hi, 0);
    cPairId->SetValue(n, -1);
    cPairType->SetValue(n, -1);
    cPers->SetValue(n, 0);
    cBirth->SetValue(n, lo);
    cFinite->SetValue(n, 1);
    const double zero[3] = { 0, 0, 0 };
    for (vtkIdType k = 2 * n; k < 2 * n + 2; ++k)
    {
      pType->SetValue(k, -1);
      pVertex->SetValue(k, -1);
      pCoords->SetTypedTuple(k, zero);
    }
  }
  // The lines (point 2k to 2k + 1) and the vertices (one a point), as
  // offsets and connectivity.
  auto sequence = [](vtkIdType count, vtkIdType step) {
    auto a = vtkSmartPointer<vtkIdTypeArray>::New();
    a->SetNumberOfValues(count);
    vtkSMPTools::For(0, count, [&](vtkIdType i0, vtkIdType i1) {
      for (vtkIdType i = i0; i < i1; ++i)
        a->SetValue(i, step * i);
    });
    return a;
  };
  vtkNew<vtkCellArray> dLines;
  dLines->SetData(sequence(n + 2, 2), sequence(2 * n + 2, 1));
  vtkNew<vtkCellArray> vVerts;
  vVerts->SetData(sequence(voxels + 1, 1), sequence(voxels, 1));

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

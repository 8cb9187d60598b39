// vtkPersistenceBatchFilter.cxx - the VTK adapter of
// topovox::computePersistenceBatch: the images of a series or a composite
// data set in, one kernel call, the pairs and a per-image summary out.
#include "vtkPersistenceBatchFilter.h"

#include "vtkTopoVoxImageAdapter.h"
#include "vtkTopoVoxTimeLoop.h"

#include "topovox/Persistence.h"

#include "vtkCellData.h"
#include "vtkCompositeDataIterator.h"
#include "vtkCompositeDataSet.h"
#include "vtkDataArray.h"
#include "vtkDataObjectTree.h"
#include "vtkDoubleArray.h"
#include "vtkIdTypeArray.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkIntArray.h"
#include "vtkMultiProcessController.h"
#include "vtkObjectFactory.h"
#include "vtkPointData.h"
#include "vtkSignedCharArray.h"
#include "vtkSmartPointer.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkTable.h"

#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

vtkStandardNewMacro(vtkPersistenceBatchFilter);
vtkCxxSetObjectMacro(vtkPersistenceBatchFilter, Controller, vtkMultiProcessController);

namespace
{
// One image of the batch: its data (a copy of the selected array for a time
// step, which the pipeline replaces at the next step), where it came from.
struct Item
{
  vtkSmartPointer<vtkImageData> image;
  vtkDataArray* selected = nullptr; // null: the active scalars
  int association = vtkDataObject::FIELD_ASSOCIATION_POINTS;
  double time = 0;
};

// A row of the pairs table, as rank 0 gathers it (plain bytes).
struct PairRow
{
  int64_t image, birthId, deathId;
  double time, birth, death;
  int32_t pairId, dimension;
  int32_t essential;
};

// A row of the summary table.
struct ImageRow
{
  int64_t image, voxels;
  double time;
  std::array<int64_t, 4> pairs;
  std::array<double, 4> total;
};

template <class ArrayT>
vtkSmartPointer<ArrayT> addColumn(vtkTable* table, const char* name, vtkIdType rows)
{
  auto a = vtkSmartPointer<ArrayT>::New();
  a->SetName(name);
  a->SetNumberOfTuples(rows);
  table->AddColumn(a);
  return a;
}
}

struct vtkPersistenceBatchFilter::Batch
{
  topovox_vtk::TimeLoop loop;
  bool series = false; // the input is an image series (else a composite)
  std::vector<Item> steps;
};

vtkPersistenceBatchFilter::vtkPersistenceBatchFilter()
  : State(new Batch)
{
  this->SetNumberOfOutputPorts(2);
  this->SetController(vtkMultiProcessController::GetGlobalController());
  this->SetInputArrayToProcess(
    0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::SCALARS);
}

vtkPersistenceBatchFilter::~vtkPersistenceBatchFilter()
{
  this->SetController(nullptr);
}

int vtkPersistenceBatchFilter::FillInputPortInformation(int, vtkInformation* info)
{
  // The composite as a whole (not block by block, as the executive would
  // otherwise iterate a filter of images).
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkImageData");
  info->Append(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkDataObjectTree");
  return 1;
}

int vtkPersistenceBatchFilter::RequestInformation(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkInformation* inInfo = inputVector[0]->GetInformationObject(0);
  this->State->series = vtkImageData::SafeDownCast(inInfo->Get(vtkDataObject::DATA_OBJECT())) != nullptr;
  if (this->State->series) // every step, one table; a composite follows the current time
    this->State->loop.readSteps(inInfo, outputVector);
  return 1;
}

int vtkPersistenceBatchFilter::RequestUpdateExtent(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  if (!this->State->series)
    return 1; // each rank reads the blocks it is given
  vtkInformation* inInfo = inputVector[0]->GetInformationObject(0);
  topovox_vtk::requestWholeOnRoot(
    inInfo, topovox_vtk::computesOnThisRank(this->Controller, outputVector->GetInformationObject(0)));
  this->State->loop.requestCurrent(inInfo);
  return 1;
}

int vtkPersistenceBatchFilter::RequestData(
  vtkInformation* request, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  Batch& s = *this->State;
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  vtkDataObject* input = vtkDataObject::GetData(inputVector[0]);
  std::vector<Item> items;
  int ranks = 1;
  if (s.series)
  {
    // Keep this step (a copy of its array) and come back for the next.
    const bool root = topovox_vtk::computesOnThisRank(this->Controller, outInfo);
    if (s.loop.first())
      s.steps.clear();
    vtkImageData* image = vtkImageData::SafeDownCast(input);
    if (root && image)
    {
      Item item;
      item.image = vtkSmartPointer<vtkImageData>::New();
      item.image->CopyStructure(image);
      item.time = s.loop.time(s.loop.current());
      vtkDataArray* selected = topovox_vtk::selectedArray(this->GetInputArrayInformation(0), image, item.association);
      bool cellData = false;
      if (vtkDataArray* array = topovox_vtk::arrayToProcess(selected, item.association, image, cellData))
      {
        vtkSmartPointer<vtkDataArray> copy = vtkSmartPointer<vtkDataArray>::Take(array->NewInstance());
        copy->DeepCopy(array);
        (cellData ? static_cast<vtkDataSetAttributes*>(item.image->GetCellData()) : item.image->GetPointData())
          ->SetScalars(copy);
        item.selected = copy;
      }
      s.steps.push_back(item);
    }
    this->SetProgressText("Persistence batch: reading the series");
    this->UpdateProgress(0.2 * static_cast<double>(s.loop.current() + 1) / static_cast<double>(s.loop.steps()));
    if (s.loop.advance(request))
      return 1;
    items.swap(s.steps);
    if (!root)
      return 1;
  }
  else
  {
    // A composite: the leaves this rank holds, by their order in the tree
    // (the same on every rank; leaves held elsewhere are null here).
    auto* tree = vtkDataObjectTree::SafeDownCast(input);
    if (!tree)
    {
      vtkErrorMacro(<< "Persistence batch: the input is neither an image nor a composite data set of images.");
      return 0;
    }
    ranks = topovox_vtk::participatingRanks(
      this->Controller, outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_PIECES()));
    vtkSmartPointer<vtkCompositeDataIterator> it = vtkSmartPointer<vtkCompositeDataIterator>::Take(tree->NewIterator());
    it->SkipEmptyNodesOff();
    std::string error;
    int leaf = 0;
    for (it->InitTraversal(); !it->IsDoneWithTraversal(); it->GoToNextItem(), ++leaf)
    {
      vtkDataObject* block = it->GetCurrentDataObject();
      if (!block)
      {
        items.push_back(Item()); // held by another rank
        continue;
      }
      vtkImageData* image = vtkImageData::SafeDownCast(block);
      if (!image && error.empty())
        error = "leaf " + std::to_string(leaf) + " is a " + block->GetClassName() + ", not an image";
      Item item;
      item.image = image;
      item.time = static_cast<double>(it->GetCurrentFlatIndex());
      if (image)
        item.selected = topovox_vtk::selectedArray(this->GetInputArrayInformation(0), image, item.association);
      items.push_back(item);
    }
    const std::string failed =
      topovox_vtk::agreeOnError(this->Controller, ranks, error, "another rank's blocks are not images");
    if (!failed.empty())
    {
      vtkErrorMacro(<< "Persistence batch: " << failed << ".");
      return 0;
    }
  }

  // The images this rank computes, as kernel grids.
  std::vector<topovox::GridView> grids;
  std::vector<size_t> which; // index in items of each grid
  std::string error;
  for (size_t k = 0; k < items.size(); ++k)
  {
    if (!items[k].image)
      continue;
    vtkDataArray* array = nullptr;
    bool cellData = false;
    topovox::GridView grid;
    const std::string why = topovox_vtk::describeWholeImage(
      items[k].image, items[k].selected, items[k].association, this->Component, array, cellData, grid);
    if (!why.empty() && error.empty())
      error = (s.series ? "time step " : "image ") + std::to_string(k) + ": " + why;
    grids.push_back(grid);
    which.push_back(k);
  }
  if (s.series && items.size() < 1)
    error = "the series has no image";
  topovox::PersistenceOptions options;
  options.construction = this->Construction ? topovox::Construction::T : topovox::Construction::V;
  options.filtration = this->Filtration ? topovox::Filtration::Superlevel : topovox::Filtration::Sublevel;
  options.maxDimension = this->MaximumDimension;
  options.minPersistence = this->MinimumPersistence;
  options.device = topovox_vtk::toDevice(this->Device);
  options.threads = this->NumberOfThreads;
  options.progress = [this](double f) {
    this->UpdateProgress(0.2 + 0.75 * f);
    return !this->CheckAbort();
  };
  this->SetProgressText("Persistence batch");
  std::vector<topovox::PersistenceDiagram> diagrams;
  if (error.empty())
  {
    try
    {
      diagrams = topovox::computePersistenceBatch(grids, options);
    }
    catch (const topovox::Aborted&)
    {
      error = "aborted by the user";
    }
    catch (const std::exception& e)
    {
      error = e.what();
    }
  }
  const std::string failed = topovox_vtk::agreeOnError(this->Controller, ranks, error, "another rank failed");
  if (!failed.empty())
  {
    vtkErrorMacro(<< "Persistence batch: " << failed << ".");
    return 0;
  }

  // This rank's rows, then all of them on rank 0.
  std::vector<PairRow> pairs;
  std::vector<ImageRow> images;
  std::string warnings;
  for (size_t g = 0; g < diagrams.size(); ++g)
  {
    const topovox::PersistenceDiagram& d = diagrams[g];
    const topovox::GridView& grid = grids[g];
    const int64_t image = static_cast<int64_t>(which[g]);
    if (!d.warnings.empty() && warnings.find(d.warnings) == std::string::npos)
      warnings += d.warnings + " ";
    ImageRow summary{ image, grid.dims[0] * grid.dims[1] * grid.dims[2], items[which[g]].time, {}, {} };
    auto id = [&grid](const int64_t* v) { return v[0] < 0 ? -1 : v[0] + grid.dims[0] * (v[1] + grid.dims[1] * v[2]); };
    for (size_t p = 0; p < d.pairs.size(); ++p)
    {
      const topovox::PersistencePair& q = d.pairs[p];
      pairs.push_back(PairRow{ image, id(q.birthVoxel), q.essential ? -1 : id(q.deathVoxel), summary.time, q.birth,
        q.death, static_cast<int32_t>(p), q.dimension, q.essential ? 1 : 0 });
      ++summary.pairs[static_cast<size_t>(q.dimension)];
      if (!q.essential)
        summary.total[static_cast<size_t>(q.dimension)] += q.persistence();
    }
    images.push_back(summary);
  }
  if (!warnings.empty())
    vtkWarningMacro(<< "Persistence batch: " << warnings);
  const auto pairBytes = topovox_vtk::gatherBytesToRoot(this->Controller, ranks, topovox_vtk::bytesOf(pairs));
  const auto imageBytes = topovox_vtk::gatherBytesToRoot(this->Controller, ranks, topovox_vtk::bytesOf(images));
  if (ranks > 1 && this->Controller->GetLocalProcessId() != 0)
    return 1;
  pairs.clear();
  images.clear();
  for (const auto& b : pairBytes)
    topovox_vtk::appendRows(b, pairs);
  for (const auto& b : imageBytes)
    topovox_vtk::appendRows(b, images);
  // Rank order interleaves the images: sort back by image (then pair).
  std::stable_sort(pairs.begin(), pairs.end(), [](const PairRow& a, const PairRow& b) { return a.image < b.image; });
  std::stable_sort(images.begin(), images.end(), [](const ImageRow& a, const ImageRow& b) { return a.image < b.image; });

  vtkTable* table = vtkTable::GetData(outputVector, 0);
  const vtkIdType n = static_cast<vtkIdType>(pairs.size());
  auto cImage = addColumn<vtkIdTypeArray>(table, "Image", n);
  auto cTime = addColumn<vtkDoubleArray>(table, "Time", n);
  auto cPair = addColumn<vtkIntArray>(table, "PairIdentifier", n);
  auto cDim = addColumn<vtkIntArray>(table, "Dimension", n);
  auto cBirth = addColumn<vtkDoubleArray>(table, "Birth", n);
  auto cDeath = addColumn<vtkDoubleArray>(table, "Death", n);
  auto cPers = addColumn<vtkDoubleArray>(table, "Persistence", n);
  auto cFinite = addColumn<vtkSignedCharArray>(table, "IsFinite", n);
  auto cBirthId = addColumn<vtkIdTypeArray>(table, "BirthId", n);
  auto cDeathId = addColumn<vtkIdTypeArray>(table, "DeathId", n);
  for (vtkIdType r = 0; r < n; ++r)
  {
    const PairRow& p = pairs[static_cast<size_t>(r)];
    cImage->SetValue(r, p.image);
    cTime->SetValue(r, p.time);
    cPair->SetValue(r, p.pairId);
    cDim->SetValue(r, p.dimension);
    cBirth->SetValue(r, p.birth);
    cDeath->SetValue(r, p.death);
    cPers->SetValue(r, p.essential ? std::numeric_limits<double>::infinity() : std::abs(p.death - p.birth));
    cFinite->SetValue(r, p.essential ? 0 : 1);
    cBirthId->SetValue(r, p.birthId);
    cDeathId->SetValue(r, p.deathId);
  }
  vtkTable* summary = vtkTable::GetData(outputVector, 1);
  const vtkIdType m = static_cast<vtkIdType>(images.size());
  auto sImage = addColumn<vtkIdTypeArray>(summary, "Image", m);
  auto sTime = addColumn<vtkDoubleArray>(summary, "Time", m);
  auto sVoxels = addColumn<vtkIdTypeArray>(summary, "Voxels", m);
  vtkSmartPointer<vtkIdTypeArray> sPairs[4];
  vtkSmartPointer<vtkDoubleArray> sTotal[4];
  for (int k = 0; k < 4; ++k)
    sPairs[k] = addColumn<vtkIdTypeArray>(summary, ("Pairs" + std::to_string(k)).c_str(), m);
  for (int k = 0; k < 4; ++k)
    sTotal[k] = addColumn<vtkDoubleArray>(summary, ("TotalPersistence" + std::to_string(k)).c_str(), m);
  for (vtkIdType r = 0; r < m; ++r)
  {
    const ImageRow& i = images[static_cast<size_t>(r)];
    sImage->SetValue(r, i.image);
    sTime->SetValue(r, i.time);
    sVoxels->SetValue(r, i.voxels);
    for (int k = 0; k < 4; ++k)
    {
      sPairs[k]->SetValue(r, i.pairs[static_cast<size_t>(k)]);
      sTotal[k]->SetValue(r, i.total[static_cast<size_t>(k)]);
    }
  }
  this->UpdateProgress(1.0);
  return 1;
}

void vtkPersistenceBatchFilter::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Construction: " << this->Construction << " Filtration: " << this->Filtration
     << " MaximumDimension: " << this->MaximumDimension << " MinimumPersistence: " << this->MinimumPersistence
     << "\n";
}

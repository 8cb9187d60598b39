// vtkFeatureRegionsFilter.cxx - the VTK adapter of topovox::featureRegions:
// the array as a kernel grid, its diagram, the selected pairs (from the
// properties or a table of pairs), the labels as two new arrays.
#include "vtkFeatureRegionsFilter.h"

#include "vtkTopoVoxImageAdapter.h"

#include "topovox/FeatureRegions.h"
#include "topovox/Persistence.h"

#include "vtkCellData.h"
#include "vtkDataArray.h"
#include "vtkDataSet.h"
#include "vtkFieldData.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkIntArray.h"
#include "vtkMultiProcessController.h"
#include "vtkObjectFactory.h"
#include "vtkPointData.h"
#include "vtkTable.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

vtkStandardNewMacro(vtkFeatureRegionsFilter);
vtkCxxSetObjectMacro(vtkFeatureRegionsFilter, Controller, vtkMultiProcessController);

vtkFeatureRegionsFilter::vtkFeatureRegionsFilter()
{
  this->SetNumberOfInputPorts(2);
  this->SetController(vtkMultiProcessController::GetGlobalController());
  this->SetInputArrayToProcess(
    0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::SCALARS);
}

vtkFeatureRegionsFilter::~vtkFeatureRegionsFilter()
{
  this->SetController(nullptr);
}

int vtkFeatureRegionsFilter::FillInputPortInformation(int port, vtkInformation* info)
{
  if (port == 0)
    info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkImageData");
  else
  {
    info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkDataObject");
    info->Set(vtkAlgorithm::INPUT_IS_OPTIONAL(), 1);
  }
  return 1;
}

int vtkFeatureRegionsFilter::RequestUpdateExtent(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  const bool root = topovox_vtk::computesOnThisRank(this->Controller, outputVector->GetInformationObject(0));
  if (vtkInformation* inInfo = inputVector[0]->GetInformationObject(0))
    topovox_vtk::requestWholeOnRoot(inInfo, root);
  return 1;
}

namespace
{
struct PairRow
{
  int dimension;
  long long birthId, deathId; // voxel ids; deathId -1 for an essential class
  double birth;               // the birth value, NaN when the input has none
  int label;                  // its PairIdentifier
};

// The pairs of a table's rows, or of a data set's cells (e.g. an extract
// of points or bars selected in a Persistence Plot; its guides, with
// PairIdentifier -1, are skipped). Returns an empty string or what is
// missing.
std::string pairsOf(vtkDataObject* data, std::vector<PairRow>& rows)
{
  vtkFieldData* columns = nullptr;
  if (auto* table = vtkTable::SafeDownCast(data))
    columns = table->GetRowData();
  else if (auto* set = vtkDataSet::SafeDownCast(data))
    columns = set->GetCellData();
  auto column = [columns](const char* name) {
    return columns ? vtkDataArray::SafeDownCast(columns->GetAbstractArray(name)) : nullptr;
  };
  vtkDataArray *dim = column("Dimension"), *birthId = column("BirthId"), *deathId = column("DeathId"),
               *id = column("PairIdentifier"), *birth = column("Birth");
  if (!dim || !birthId || !deathId)
    return "the pairs input needs numeric Dimension, BirthId and DeathId columns or cell arrays (the Pairs output "
           "of Persistence Diagram, a Persistence Plot, or an extract of either)";
  for (vtkIdType r = 0; r < dim->GetNumberOfTuples(); ++r)
  {
    const int label = id ? static_cast<int>(id->GetTuple1(r)) : static_cast<int>(r);
    if (id && label < 0)
      continue; // a plot's guide
    rows.push_back({ static_cast<int>(dim->GetTuple1(r)), static_cast<long long>(birthId->GetTuple1(r)),
      static_cast<long long>(deathId->GetTuple1(r)), birth ? birth->GetTuple1(r) : std::nan(""), label });
  }
  return {};
}
} // namespace

int vtkFeatureRegionsFilter::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkImageData* image = vtkImageData::GetData(inputVector[0]);
  vtkImageData* output = vtkImageData::GetData(outputVector);
  if (!topovox_vtk::computesOnThisRank(this->Controller, outputVector->GetInformationObject(0)))
    return 1; // rank 0 computes from the whole image
  vtkDataArray* array = nullptr;
  bool cellData = false;
  topovox::GridView grid;
  if (!topovox_vtk::readWholeImage(this, "Feature regions", image, this->Component, array, cellData, grid))
    return 0;
  std::vector<PairRow> tableRows;
  vtkDataObject* table = vtkDataObject::GetData(inputVector[1]);
  if (table)
  {
    const std::string missing = pairsOf(table, tableRows);
    if (!missing.empty())
    {
      vtkErrorMacro(<< "Feature regions: " << missing << ".");
      return 0;
    }
  }

  this->SetProgressText("Feature regions");
  topovox::FeatureRegionOptions ro;
  ro.construction = this->Construction ? topovox::Construction::T : topovox::Construction::V;
  ro.filtration = this->Filtration ? topovox::Filtration::Superlevel : topovox::Filtration::Sublevel;
  ro.minPersistence = this->MinimumPersistence;
  ro.includeEssential = this->IncludeEssentialClasses;
  ro.threads = this->NumberOfThreads;
  topovox::FeatureRegions regions;
  std::vector<int> labelOf; // per pair of the diagram: the label it is shown with
  try
  {
    topovox::PersistenceDiagram diagram;
    if (table)
    {
      // The table already holds the pairs and their voxels: no persistence
      // to compute again. A row whose birth voxel does not hold its birth
      // value comes from another image and is left out.
      const int component = std::max(0, this->Component);
      const long long voxels = static_cast<long long>(grid.voxelCount());
      auto coordinates = [&](long long id, int64_t c[3]) {
        c[0] = id % grid.dims[0];
        c[1] = (id / grid.dims[0]) % grid.dims[1];
        c[2] = id / (grid.dims[0] * grid.dims[1]);
      };
      size_t foreign = 0;
      for (const PairRow& row : tableRows)
      {
        const bool inside = row.birthId >= 0 && row.birthId < voxels && row.deathId < voxels;
        // (Diagrams report the image's own values, superlevel ones too.)
        if (!inside || (!std::isnan(row.birth) && array->GetComponent(row.birthId, component) != row.birth))
        {
          ++foreign;
          continue;
        }
        topovox::PersistencePair p;
        p.dimension = row.dimension;
        p.essential = row.deathId < 0;
        coordinates(row.birthId, p.birthVoxel);
        if (!p.essential)
          coordinates(row.deathId, p.deathVoxel);
        ro.pairs.push_back(static_cast<int64_t>(diagram.pairs.size()));
        diagram.pairs.push_back(p);
        labelOf.push_back(row.label);
      }
      if (foreign)
        vtkWarningMacro(<< "Feature regions: " << foreign
                        << " rows of the table of pairs do not belong to this image (their birth voxel does not "
                           "hold their birth value); they are left out.");
    }
    else
    {
      topovox::PersistenceOptions po;
      po.construction = ro.construction;
      po.filtration = ro.filtration;
      po.threads = this->NumberOfThreads;
      po.progress = [this](double f) {
        this->UpdateProgress(0.8 * f);
        return !this->CheckAbort();
      };
      diagram = topovox::computePersistence(grid, po);
      for (size_t i = 0; i < diagram.pairs.size(); ++i)
        labelOf.push_back(static_cast<int>(i));
    }
    if (table && ro.pairs.empty())
    {
      // No row to label (an empty list would mean every pair).
      regions.labels[0].assign(static_cast<size_t>(grid.voxelCount()), -1);
      regions.labels[1] = regions.labels[0];
    }
    else
      regions = topovox::featureRegions(grid, diagram, ro);
  }
  catch (const std::exception& e)
  {
    vtkErrorMacro(<< "Feature regions: " << e.what() << ".");
    return 0;
  }
  this->UpdateProgress(0.95);

  vtkDataSetAttributes* attributes = topovox_vtk::outputAttributes(output, image, cellData);
  const char* names[2] = { "ComponentRegion", "EnclosedRegion" };
  for (int kind = 0; kind < 2; ++kind)
  {
    vtkNew<vtkIntArray> labels;
    labels->SetName(names[kind]);
    labels->SetNumberOfTuples(grid.voxelCount());
    const std::vector<int32_t>& from = regions.labels[kind];
    for (vtkIdType k = 0; k < grid.voxelCount(); ++k)
    {
      const int32_t l = from.empty() ? -1 : from[static_cast<size_t>(k)];
      labels->SetValue(k, l < 0 ? -1 : labelOf[static_cast<size_t>(l)]);
    }
    attributes->AddArray(labels);
  }
  attributes->SetActiveScalars("ComponentRegion");
  this->UpdateProgress(1.0);
  return 1;
}

void vtkFeatureRegionsFilter::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Construction: " << this->Construction << " Filtration: " << this->Filtration
     << " MinimumPersistence: " << this->MinimumPersistence
     << " IncludeEssentialClasses: " << this->IncludeEssentialClasses << "\n";
  os << indent << "Component: " << this->Component << " NumberOfThreads: " << this->NumberOfThreads << "\n";
}

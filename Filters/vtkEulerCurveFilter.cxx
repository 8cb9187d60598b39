// vtkEulerCurveFilter.cxx - the VTK adapter of topovox::eulerHistogram:
// pick the array, describe this piece, agree on thresholds across ranks,
// count, reduce to rank 0, write the table.
#include "vtkEulerCurveFilter.h"

#include "vtkTopoVoxImageAdapter.h"

#include "topovox/EulerCurve.h"

#include "vtkCellData.h"
#include "vtkDataArray.h"
#include "vtkDoubleArray.h"
#include "vtkFieldData.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkMultiProcessController.h"
#include "vtkObjectFactory.h"
#include "vtkPointData.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkStringArray.h"
#include "vtkTable.h"
#include "vtkTypeInt64Array.h"

#include <stdexcept>

vtkStandardNewMacro(vtkEulerCurveFilter);
vtkCxxSetObjectMacro(vtkEulerCurveFilter, Controller, vtkMultiProcessController);

namespace
{
const char* const kCellColumns[4] = { "Vertices", "Edges", "Squares", "Cubes" };
}

vtkEulerCurveFilter::vtkEulerCurveFilter()
{
  this->SetController(vtkMultiProcessController::GetGlobalController());
  // Default array: the active point scalars.
  this->SetInputArrayToProcess(
    0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::SCALARS);
}

vtkEulerCurveFilter::~vtkEulerCurveFilter()
{
  this->SetController(nullptr);
}

void vtkEulerCurveFilter::SetNumberOfThresholds(int n)
{
  if (n >= 0 && static_cast<size_t>(n) != this->Thresholds.size())
  {
    this->Thresholds.resize(n, 0.0);
    this->Modified();
  }
}

void vtkEulerCurveFilter::SetThreshold(int i, double value)
{
  if (i < 0)
    return;
  if (static_cast<size_t>(i) >= this->Thresholds.size())
    this->Thresholds.resize(i + 1, 0.0);
  if (this->Thresholds[i] != value)
  {
    this->Thresholds[i] = value;
    this->Modified();
  }
}

double vtkEulerCurveFilter::GetThreshold(int i) const
{
  return i >= 0 && static_cast<size_t>(i) < this->Thresholds.size() ? this->Thresholds[i] : 0.0;
}

void vtkEulerCurveFilter::AddThreshold(double value)
{
  this->Thresholds.push_back(value);
  this->Modified();
}

void vtkEulerCurveFilter::RemoveAllThresholds()
{
  if (!this->Thresholds.empty())
  {
    this->Thresholds.clear();
    this->Modified();
  }
}

int vtkEulerCurveFilter::FillInputPortInformation(int, vtkInformation* info)
{
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkImageData");
  return 1;
}

int vtkEulerCurveFilter::RequestUpdateExtent(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  // Ask for this piece's block of the image plus the one-voxel halo that
  // cell ownership reads, as one piece with no ghost levels (the pattern that
  // works downstream of sources that split, e.g. Wavelet, on ParaView 5.11).
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  topovox_vtk::requestBlockWithHalo(inputVector[0]->GetInformationObject(0),
    outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER()),
    outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_PIECES()));
  return 1;
}

int vtkEulerCurveFilter::RequestInformation(
  vtkInformation*, vtkInformationVector**, vtkInformationVector* outputVector)
{
  // The table can be computed for any piece: this filter does the splitting.
  outputVector->GetInformationObject(0)->Set(CAN_HANDLE_PIECE_REQUEST(), 1);
  return 1;
}

int vtkEulerCurveFilter::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkInformation* inInfo = inputVector[0]->GetInformationObject(0);
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  vtkImageData* image = vtkImageData::GetData(inInfo);
  vtkTable* output = vtkTable::GetData(outInfo);
  this->LastDevice = "none";

  // This rank's piece; every rank agrees on errors before any other
  // collective, so that no rank waits forever.
  topovox_vtk::ImagePiece in = topovox_vtk::readImagePiece(
    image, inInfo, outInfo, this->GetInputArrayInformation(0), this->Controller, this->Component, false);
  const std::string failure = topovox_vtk::settlePiece(this->Controller, in);
  if (!failure.empty())
  {
    vtkErrorMacro(<< "Euler curve: " << failure << ".");
    return 0;
  }

  topovox::EulerCurveOptions options;
  options.construction =
    this->Construction == CONSTRUCTION_T ? topovox::Construction::T : topovox::Construction::V;
  options.filtration = this->Filtration == SUPERLEVEL ? topovox::Filtration::Superlevel
                                                      : topovox::Filtration::Sublevel;
  options.thresholdMode = static_cast<topovox::ThresholdMode>(this->ThresholdMode);
  options.binCount = this->NumberOfBins;
  options.thresholds = this->Thresholds;
  options.device = topovox_vtk::toDevice(this->Device);
  options.threads = this->NumberOfThreads;
  options.owned = in.owned;
  options.progress = [this](double f) {
    this->UpdateProgress(0.1 + 0.85 * f);
    return !this->CheckAbort();
  };

  // The scalar type decides Auto mode; with an empty piece, ask the array.
  topovox::ScalarType type = in.grid.type;
  if (in.empty && in.array)
    topovox_vtk::toScalarType(in.array->GetDataType(), type);
  if (options.thresholdMode == topovox::ThresholdMode::Auto)
    options.thresholdMode = topovox::scalarTypeIsFloating(type) ? topovox::ThresholdMode::Bins
                                                                : topovox::ThresholdMode::Exact;

  this->SetProgressText("Euler curve: thresholds");
  std::vector<double> thresholds;
  std::vector<long long> counts;
  std::string warnings, error;
  try
  {
    // Thresholds from the values of all pieces, identical on every rank.
    topovox::ValueSummary summary;
    std::vector<double> distinct;
    if (options.thresholdMode == topovox::ThresholdMode::Bins)
    {
      summary = topovox::summarizeValues(in.grid, in.owned, options.threads);
      topovox_vtk::allReduceMinMax(this->Controller, in.ranks, summary.finiteMin, summary.finiteMax);
      long long finite = summary.finite;
      topovox_vtk::allReduceSum(this->Controller, in.ranks, finite);
      summary.finite = finite;
    }
    else if (options.thresholdMode == topovox::ThresholdMode::Exact)
      distinct = topovox_vtk::allGatherSortedUnique(
        this->Controller, in.ranks, topovox::distinctValues(in.grid, in.owned, options.threads));
    thresholds = topovox::resolveThresholds(options, type, summary, distinct);
    this->UpdateProgress(0.1);
    this->SetProgressText("Euler curve: counting cells");
    topovox::Device used = topovox::Device::CPU;
    const topovox::EulerHistogram h =
      topovox::eulerHistogram(in.grid, options, thresholds, &used, &warnings);
    this->LastDevice = used == topovox::Device::GPU ? "gpu" : "cpu";
    counts.resize(4 * h.cells.size());
    for (size_t j = 0; j < h.cells.size(); ++j)
      for (int k = 0; k < 4; ++k)
        counts[4 * j + k] = h.cells[j][k];
  }
  catch (const topovox::Aborted&)
  {
    error = "aborted";
  }
  catch (const std::exception& e)
  {
    error = e.what();
  }
  const std::string failed = topovox_vtk::agreeOnError(this->Controller, in.ranks, error, "failed on another rank");
  if (!failed.empty())
  {
    if (failed == "aborted")
      vtkWarningMacro(<< "Euler curve: aborted by the user.");
    else
      vtkErrorMacro(<< "Euler curve: " << failed << ".");
    return 0;
  }
  if (!warnings.empty())
    vtkWarningMacro(<< warnings);
  topovox_vtk::reduceSumToRoot(this->Controller, in.ranks, counts);
  this->UpdateProgress(0.95);
  if (!in.root)
    return 1; // the curve lives on rank 0 only

  topovox::EulerHistogram total;
  total.thresholds = thresholds;
  total.cells.resize(thresholds.size());
  for (size_t j = 0; j < thresholds.size(); ++j)
    for (int k = 0; k < 4; ++k)
      total.cells[j][k] = counts[4 * j + k];
  int dimension = 0;
  for (int a = 0; a < 3; ++a)
    dimension += (in.cellData ? in.whole[2 * a + 1] - in.whole[2 * a] > 1 : in.whole[2 * a + 1] > in.whole[2 * a]);
  const topovox::EulerCurve curve = topovox::accumulateHistogram(total, dimension);

  const vtkIdType n = static_cast<vtkIdType>(curve.thresholds.size());
  vtkNew<vtkDoubleArray> thresholdColumn;
  thresholdColumn->SetName("Threshold");
  thresholdColumn->SetNumberOfTuples(n);
  vtkNew<vtkTypeInt64Array> eulerColumn;
  eulerColumn->SetName("EulerCharacteristic");
  eulerColumn->SetNumberOfTuples(n);
  vtkNew<vtkTypeInt64Array> cellColumns[4];
  for (int k = 0; k < 4; ++k)
  {
    cellColumns[k]->SetName(kCellColumns[k]);
    cellColumns[k]->SetNumberOfTuples(n);
  }
  for (vtkIdType j = 0; j < n; ++j)
  {
    thresholdColumn->SetValue(j, curve.thresholds[j]);
    eulerColumn->SetValue(j, curve.euler[j]);
    for (int k = 0; k < 4; ++k)
      cellColumns[k]->SetValue(j, curve.cells[j][k]);
  }
  output->AddColumn(thresholdColumn);
  output->AddColumn(eulerColumn);
  for (int k = 0; k <= std::min(dimension, 3); ++k)
    output->AddColumn(cellColumns[k]);

  auto addString = [output](const char* name, const std::string& value) {
    vtkNew<vtkStringArray> a;
    a->SetName(name);
    a->InsertNextValue(value);
    output->GetFieldData()->AddArray(a);
  };
  addString("Construction", topovox::constructionName(options.construction));
  addString("Filtration", topovox::filtrationName(options.filtration));
  addString("ThresholdMode", topovox::thresholdModeName(options.thresholdMode));
  addString("Array", in.array && in.array->GetName() ? in.array->GetName() : "");
  addString("Device", this->LastDevice);
  this->UpdateProgress(1.0);
  return 1;
}

void vtkEulerCurveFilter::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Construction: " << (this->Construction == CONSTRUCTION_T ? "T" : "V") << "\n";
  os << indent << "Filtration: " << (this->Filtration == SUPERLEVEL ? "superlevel" : "sublevel")
     << "\n";
  os << indent << "ThresholdMode: " << this->ThresholdMode << "\n";
  os << indent << "NumberOfBins: " << this->NumberOfBins << "\n";
  os << indent << "NumberOfThresholds: " << this->Thresholds.size() << "\n";
  os << indent << "Device: " << this->Device << "\n";
  os << indent << "Component: " << this->Component << "\n";
  os << indent << "NumberOfThreads: " << this->NumberOfThreads << "\n";
  os << indent << "Controller: " << this->Controller << "\n";
}

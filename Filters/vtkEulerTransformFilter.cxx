// vtkEulerTransformFilter.cxx - the VTK adapter of topovox's Euler
// characteristic transform: pick the array, describe this piece, agree on
// directions and thresholds across ranks, count, reduce to rank 0, write the
// table and the image.
#include "vtkEulerTransformFilter.h"

#include "vtkTopoVoxImageAdapter.h"

#include "topovox/EulerTransform.h"

#include "vtkDataArray.h"
#include "vtkDoubleArray.h"
#include "vtkFieldData.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkMatrix3x3.h"
#include "vtkMultiProcessController.h"
#include "vtkObjectFactory.h"
#include "vtkPointData.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkStringArray.h"
#include "vtkTable.h"
#include "vtkTypeInt64Array.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

vtkStandardNewMacro(vtkEulerTransformFilter);
vtkCxxSetObjectMacro(vtkEulerTransformFilter, Controller, vtkMultiProcessController);

vtkEulerTransformFilter::vtkEulerTransformFilter()
{
  this->SetNumberOfInputPorts(1);
  this->SetNumberOfOutputPorts(2);
  this->SetController(vtkMultiProcessController::GetGlobalController());
  this->SetInputArrayToProcess(
    0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::SCALARS);
}

vtkEulerTransformFilter::~vtkEulerTransformFilter()
{
  this->SetController(nullptr);
}

void vtkEulerTransformFilter::SetNumberOfDirectionComponents(int n)
{
  if (n >= 0 && static_cast<size_t>(n) != this->Directions.size())
  {
    this->Directions.resize(static_cast<size_t>(n), 0.0);
    this->Modified();
  }
}

void vtkEulerTransformFilter::SetDirectionComponent(int i, double value)
{
  if (i < 0)
    return;
  if (static_cast<size_t>(i) >= this->Directions.size())
    this->Directions.resize(static_cast<size_t>(i) + 1, 0.0);
  if (this->Directions[static_cast<size_t>(i)] != value)
  {
    this->Directions[static_cast<size_t>(i)] = value;
    this->Modified();
  }
}

void vtkEulerTransformFilter::AddDirection(double x, double y, double z)
{
  this->Directions.insert(this->Directions.end(), { x, y, z });
  this->Modified();
}

void vtkEulerTransformFilter::RemoveAllDirections()
{
  if (!this->Directions.empty())
  {
    this->Directions.clear();
    this->Modified();
  }
}

void vtkEulerTransformFilter::SetNumberOfThresholds(int n)
{
  if (n >= 0 && static_cast<size_t>(n) != this->Thresholds.size())
  {
    this->Thresholds.resize(static_cast<size_t>(n), 0.0);
    this->Modified();
  }
}

void vtkEulerTransformFilter::SetThreshold(int i, double value)
{
  if (i < 0)
    return;
  if (static_cast<size_t>(i) >= this->Thresholds.size())
    this->Thresholds.resize(static_cast<size_t>(i) + 1, 0.0);
  if (this->Thresholds[static_cast<size_t>(i)] != value)
  {
    this->Thresholds[static_cast<size_t>(i)] = value;
    this->Modified();
  }
}

void vtkEulerTransformFilter::AddThreshold(double value)
{
  this->Thresholds.push_back(value);
  this->Modified();
}

void vtkEulerTransformFilter::RemoveAllThresholds()
{
  if (!this->Thresholds.empty())
  {
    this->Thresholds.clear();
    this->Modified();
  }
}

int vtkEulerTransformFilter::FillInputPortInformation(int, vtkInformation* info)
{
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkImageData");
  return 1;
}

int vtkEulerTransformFilter::FillOutputPortInformation(int port, vtkInformation* info)
{
  info->Set(vtkDataObject::DATA_TYPE_NAME(), port == 0 ? "vtkTable" : "vtkImageData");
  return 1;
}

vtkTypeBool vtkEulerTransformFilter::ProcessRequest(
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

int vtkEulerTransformFilter::RequestInformation(
  vtkInformation*, vtkInformationVector**, vtkInformationVector* outputVector)
{
  // The image output's extent is known only after the thresholds are: a
  // placeholder here, the real extent set in RequestData.
  for (int port = 0; port < 2; ++port)
    outputVector->GetInformationObject(port)->Set(CAN_HANDLE_PIECE_REQUEST(), 1);
  return 1;
}

int vtkEulerTransformFilter::RequestUpdateExtent(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  // This piece's block plus the one-voxel halo that cell ownership reads, as
  // vtkEulerCurveFilter asks.
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  topovox_vtk::requestBlockWithHalo(inputVector[0]->GetInformationObject(0),
    outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER()),
    outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_PIECES()));
  return 1;
}

int vtkEulerTransformFilter::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkInformation* inInfo = inputVector[0]->GetInformationObject(0);
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  vtkImageData* image = vtkImageData::GetData(inInfo);
  vtkTable* table = vtkTable::GetData(outputVector, 0);
  vtkImageData* picture = vtkImageData::GetData(outputVector, 1);
  // This rank's piece; errors agreed on first (see vtkEulerCurveFilter).
  topovox_vtk::ImagePiece in = topovox_vtk::readImagePiece(
    image, inInfo, outInfo, this->GetInputArrayInformation(0), this->Controller, this->Component, false);
  if (in.error.empty() && this->Directions.size() % 3)
    in.error = "the directions must be given as (x, y, z) triples";
  const std::string failure = topovox_vtk::settlePiece(this->Controller, in);
  if (!failure.empty())
  {
    vtkErrorMacro(<< "Euler transform: " << failure << ".");
    return 0;
  }

  topovox::EulerTransformOptions options;
  options.construction = this->Construction ? topovox::Construction::T : topovox::Construction::V;
  options.directionCount = this->NumberOfDirections;
  options.weight = this->Weight;
  options.alpha = this->Alpha;
  options.shapeLevel = this->UseShapeLevel ? this->ShapeLevel : std::numeric_limits<double>::quiet_NaN();
  options.thresholdMode = this->ThresholdMode ? topovox::ThresholdMode::List : topovox::ThresholdMode::Bins;
  options.binCount = this->NumberOfBins;
  options.thresholds = this->Thresholds;
  options.device = topovox_vtk::toDevice(this->Device);
  options.threads = this->NumberOfThreads;
  options.owned = in.owned;
  options.progress = [this](double f) {
    this->UpdateProgress(0.1 + 0.85 * f);
    return !this->CheckAbort();
  };
  // World position of the local array's first voxel (cells: their centres),
  // and the spacing; the axes are the image's own (a direction matrix other
  // than the identity is not applied: warned below).
  double spacing[3];
  image->GetSpacing(spacing);
  {
    int ext[6];
    image->GetExtent(ext);
    double ijk[3];
    for (int a = 0; a < 3; ++a)
      ijk[a] = ext[2 * a] + (in.cellData && in.whole[2 * a] < in.whole[2 * a + 1] ? 0.5 : 0.0);
    image->TransformContinuousIndexToPhysicalPoint(ijk, options.origin);
    for (int a = 0; a < 3; ++a)
      options.spacing[a] = spacing[a];
  }
  // Directions from the whole image's shape (the same on every rank),
  // passed on explicitly so that no piece spreads them differently.
  int64_t wholeDims[3];
  for (int a = 0; a < 3; ++a)
  {
    const int64_t points = in.whole[2 * a + 1] - in.whole[2 * a] + 1;
    wholeDims[a] = in.cellData ? std::max<int64_t>(1, points - 1) : points;
  }
  std::vector<std::array<double, 3>> directions;
  std::vector<double> thresholds;
  std::vector<long long> counts;
  std::string warnings, error;
  try
  {
    for (size_t k = 0; k + 2 < this->Directions.size(); k += 3)
      options.directions.push_back({ this->Directions[k], this->Directions[k + 1], this->Directions[k + 2] });
    static const double noData = 0; // the whole image's shape only: directions need no values
    topovox::GridView shape = topovox::GridView::contiguous(&noData, topovox::ScalarType::Float64, wholeDims[0],
      wholeDims[1], wholeDims[2]);
    directions = topovox::transformDirections(options, shape);
    options.directions = directions;
    this->SetProgressText("Euler transform: heights");
    if (options.thresholdMode == topovox::ThresholdMode::Bins)
    {
      double lo = std::numeric_limits<double>::infinity(), hi = -lo;
      if (!in.empty)
        topovox::transformHeightRange(in.grid, options, lo, hi);
      topovox_vtk::allReduceMinMax(this->Controller, in.ranks, lo, hi);
      thresholds = topovox::transformThresholds(options, lo, hi);
    }
    else
      thresholds = topovox::transformThresholds(options, 0, -1);
    this->SetProgressText("Euler transform: counting cells");
    topovox::Device used = topovox::Device::CPU;
    const auto histograms = topovox::transformHistograms(in.grid, options, thresholds, &used, &warnings);
    for (const auto& h : histograms)
      for (const auto& bin : h.cells)
        for (int k = 0; k < 4; ++k)
          counts.push_back(bin[k]);
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
      vtkWarningMacro(<< "Euler transform: aborted by the user.");
    else
      vtkErrorMacro(<< "Euler transform: " << failed << ".");
    return 0;
  }
  if (!warnings.empty())
    vtkWarningMacro(<< warnings);
  if (image->GetDirectionMatrix() && !image->GetDirectionMatrix()->IsIdentity() && in.root)
    vtkWarningMacro(<< "Euler transform: the image's direction matrix is not applied; positions are "
                       "origin + spacing * index along the image's axes.");
  topovox_vtk::reduceSumToRoot(this->Controller, in.ranks, counts);
  if (!in.root)
    return 1;

  // The sums back into histograms, then the transform.
  int dimension = 0;
  for (int a = 0; a < 3; ++a)
    dimension += wholeDims[a] > 1 ? 1 : 0;
  std::vector<topovox::EulerHistogram> histograms(directions.size());
  size_t at = 0;
  for (auto& h : histograms)
  {
    h.thresholds = thresholds;
    h.cells.resize(thresholds.size());
    for (auto& bin : h.cells)
      for (int k = 0; k < 4; ++k)
        bin[k] = counts[at++];
  }
  const topovox::EulerTransform t = topovox::accumulateTransform(histograms, directions, dimension);

  vtkNew<vtkDoubleArray> thresholdColumn;
  thresholdColumn->SetName("Threshold");
  for (double v : thresholds)
    thresholdColumn->InsertNextValue(v);
  table->AddColumn(thresholdColumn);
  vtkNew<vtkDoubleArray> directionArray;
  directionArray->SetName("Directions");
  directionArray->SetNumberOfComponents(3);
  for (size_t d = 0; d < directions.size(); ++d)
  {
    vtkNew<vtkTypeInt64Array> column;
    column->SetName(("Direction " + std::to_string(d)).c_str());
    for (int64_t v : t.euler[d])
      column->InsertNextValue(v);
    table->AddColumn(column);
    directionArray->InsertNextTuple(directions[d].data());
  }
  table->GetFieldData()->AddArray(directionArray);

  // The image: x = threshold index, y = direction index.
  const int nt = static_cast<int>(thresholds.size()), nd = static_cast<int>(directions.size());
  picture->SetExtent(0, std::max(0, nt - 1), 0, std::max(0, nd - 1), 0, 0);
  vtkNew<vtkTypeInt64Array> values;
  values->SetName("EulerCharacteristic");
  values->SetNumberOfTuples(static_cast<vtkIdType>(nt) * nd);
  for (int d = 0; d < nd; ++d)
    for (int j = 0; j < nt; ++j)
      values->SetValue(static_cast<vtkIdType>(d) * nt + j, t.euler[static_cast<size_t>(d)][static_cast<size_t>(j)]);
  picture->GetPointData()->SetScalars(values);
  picture->GetFieldData()->AddArray(directionArray);
  vtkNew<vtkDoubleArray> thresholdArray;
  thresholdArray->DeepCopy(thresholdColumn);
  thresholdArray->SetName("Thresholds");
  picture->GetFieldData()->AddArray(thresholdArray);
  vtkNew<vtkStringArray> construction;
  construction->SetName("Construction");
  construction->InsertNextValue(topovox::constructionName(options.construction));
  table->GetFieldData()->AddArray(construction);
  this->UpdateProgress(1.0);
  return 1;
}

void vtkEulerTransformFilter::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Construction: " << (this->Construction ? "T" : "V") << "\n";
  os << indent << "NumberOfDirections: " << this->NumberOfDirections << "\n";
  os << indent << "Directions given: " << this->Directions.size() / 3 << "\n";
  os << indent << "Weight: " << this->Weight << "\n";
  os << indent << "Alpha: " << this->Alpha << "\n";
  os << indent << "UseShapeLevel: " << this->UseShapeLevel << " ShapeLevel: " << this->ShapeLevel << "\n";
  os << indent << "ThresholdMode: " << this->ThresholdMode << " NumberOfBins: " << this->NumberOfBins << "\n";
  os << indent << "Device: " << this->Device << "\n";
  os << indent << "Component: " << this->Component << "\n";
  os << indent << "NumberOfThreads: " << this->NumberOfThreads << "\n";
  os << indent << "Controller: " << this->Controller << "\n";
}

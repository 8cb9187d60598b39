// vtkGPUDistanceTransformFilter.cxx - the VTK adapter of topovox's distance
// transforms (DistanceTransform.h): the foreground as bytes, the image's
// spacing as the sampling, the kernel's arrays as VTK arrays.
#include "vtkGPUDistanceTransformFilter.h"

#include "vtkTopoVoxImageAdapter.h"

#include "topovox/DistanceTransform.h"

#include "vtkCellData.h"
#include "vtkDataArray.h"
#include "vtkDoubleArray.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkIntArray.h"
#include "vtkMultiProcessController.h"
#include "vtkObjectFactory.h"
#include "vtkPointData.h"
#include "vtkStreamingDemandDrivenPipeline.h"

#include <stdexcept>
#include <string>
#include <vector>

vtkStandardNewMacro(vtkGPUDistanceTransformFilter);
vtkCxxSetObjectMacro(vtkGPUDistanceTransformFilter, Controller, vtkMultiProcessController);

vtkGPUDistanceTransformFilter::vtkGPUDistanceTransformFilter()
{
  this->SetController(vtkMultiProcessController::GetGlobalController());
  this->SetInputArrayToProcess(
    0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::SCALARS);
}

vtkGPUDistanceTransformFilter::~vtkGPUDistanceTransformFilter()
{
  this->SetController(nullptr);
}

int vtkGPUDistanceTransformFilter::FillInputPortInformation(int, vtkInformation* info)
{
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkImageData");
  return 1;
}

int vtkGPUDistanceTransformFilter::RequestUpdateExtent(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  topovox_vtk::requestWholeOnRoot(inputVector[0]->GetInformationObject(0),
    topovox_vtk::computesOnThisRank(this->Controller, outputVector->GetInformationObject(0)));
  return 1;
}

int vtkGPUDistanceTransformFilter::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkImageData* image = vtkImageData::GetData(inputVector[0]);
  vtkImageData* output = vtkImageData::GetData(outputVector);
  if (!topovox_vtk::computesOnThisRank(this->Controller, outputVector->GetInformationObject(0)))
    return 1; // rank 0 computes from the whole image
  vtkDataArray* array = nullptr;
  bool cellData = false;
  topovox::GridView grid;
  if (!topovox_vtk::readWholeImage(this, "Distance transform", image, this->Component, array, cellData, grid))
    return 0;
  // The foreground as 0/1 bytes, and its complement for the signed distance.
  const vtkIdType n = grid.voxelCount();
  const int component = std::max(0, this->Component);
  std::vector<uint8_t> fg(static_cast<size_t>(n)), bg(static_cast<size_t>(n));
  for (vtkIdType k = 0; k < n; ++k)
  {
    const double v = array->GetComponent(k, component);
    fg[static_cast<size_t>(k)] = this->UseForegroundRange ? (v >= this->ForegroundRange[0] && v <= this->ForegroundRange[1])
                                                          : (v != 0);
    bg[static_cast<size_t>(k)] = !fg[static_cast<size_t>(k)];
  }
  double sampling[3];
  image->GetSpacing(sampling);
  for (double& s : sampling)
    s = std::abs(s);
  const auto view = [&](const std::vector<uint8_t>& v) {
    return topovox::GridView::contiguous(v.data(), topovox::ScalarType::UInt8, grid.dims[0], grid.dims[1], grid.dims[2]);
  };
  const bool euclidean = this->Metric == EUCLIDEAN || this->Metric == BRUTE_FORCE_EUCLIDEAN;
  const bool wantIndices = this->ComputeIndices || this->ComputeVectors;
  topovox::DistanceTransform t, outside;
  const topovox::Device device = topovox_vtk::toDevice(this->Device);
  std::string deviceWarning;
  topovox::resolveDevice(device, &deviceWarning);
  if (!deviceWarning.empty())
    vtkWarningMacro(<< deviceWarning);
  try
  {
    if (this->Metric == EUCLIDEAN)
      t = topovox::distanceTransformEdt(view(fg), sampling, wantIndices, this->NumberOfThreads, device);
    else if (this->Metric == BRUTE_FORCE_EUCLIDEAN)
      t = topovox::distanceTransformBf(view(fg), topovox::DistanceMetric::Euclidean, sampling, wantIndices,
        this->NumberOfThreads);
    else
      t = topovox::distanceTransformCdt(view(fg),
        this->Metric == CHESSBOARD ? topovox::DistanceMetric::Chessboard : topovox::DistanceMetric::Taxicab,
        wantIndices, this->NumberOfThreads);
    if (this->ComputeSignedDistance && euclidean)
      outside = topovox::distanceTransformEdt(view(bg), sampling, false, this->NumberOfThreads, device);
  }
  catch (const std::exception& e)
  {
    vtkErrorMacro(<< "Distance transform: " << e.what() << ".");
    return 0;
  }
  if (this->ComputeSignedDistance && !euclidean)
    vtkWarningMacro(<< "Distance transform: the signed distance is computed for the Euclidean metrics only.");

  vtkDataSetAttributes* attributes = topovox_vtk::outputAttributes(output, image, cellData);
  vtkNew<vtkDoubleArray> distance;
  distance->SetName("Distance");
  distance->SetNumberOfTuples(n);
  for (vtkIdType k = 0; k < n; ++k)
    distance->SetValue(k, euclidean ? t.distances[static_cast<size_t>(k)]
                                    : static_cast<double>(t.integerDistances[static_cast<size_t>(k)]));
  attributes->AddArray(distance);
  attributes->SetActiveScalars("Distance");
  if (wantIndices)
  {
    vtkNew<vtkIntArray> index;
    index->SetName("NearestBackgroundIndex");
    index->SetNumberOfComponents(3);
    index->SetNumberOfTuples(n);
    vtkNew<vtkDoubleArray> vectors;
    vectors->SetName("NearestBackgroundVector");
    vectors->SetNumberOfComponents(3);
    vectors->SetNumberOfTuples(n);
    for (vtkIdType k = 0; k < n; ++k)
    {
      const int64_t c[3] = { k % grid.dims[0], (k / grid.dims[0]) % grid.dims[1], k / (grid.dims[0] * grid.dims[1]) };
      double v[3];
      for (int a = 0; a < 3; ++a)
      {
        const int32_t f = t.indices[a][static_cast<size_t>(k)];
        index->SetComponent(k, a, f);
        v[a] = (f - c[a]) * sampling[a];
      }
      vectors->SetTuple(k, v);
    }
    if (this->ComputeIndices)
      attributes->AddArray(index);
    if (this->ComputeVectors)
    {
      attributes->AddArray(vectors);
      attributes->SetActiveVectors("NearestBackgroundVector");
    }
  }
  if (this->ComputeSignedDistance && euclidean)
  {
    vtkNew<vtkDoubleArray> signedDistance;
    signedDistance->SetName("SignedDistance");
    signedDistance->SetNumberOfTuples(n);
    for (vtkIdType k = 0; k < n; ++k)
      signedDistance->SetValue(k, fg[static_cast<size_t>(k)] ? -t.distances[static_cast<size_t>(k)]
                                                             : outside.distances[static_cast<size_t>(k)]);
    attributes->AddArray(signedDistance);
  }
  return 1;
}

void vtkGPUDistanceTransformFilter::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Metric: " << this->Metric << " UseForegroundRange: " << this->UseForegroundRange << "\n";
  os << indent << "ComputeIndices: " << this->ComputeIndices << " ComputeVectors: " << this->ComputeVectors
     << " ComputeSignedDistance: " << this->ComputeSignedDistance << "\n";
  os << indent << "Device: " << this->Device << " NumberOfThreads: " << this->NumberOfThreads << "\n";
}

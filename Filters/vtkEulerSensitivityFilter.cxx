// vtkEulerSensitivityFilter.cxx - the VTK adapter of topovox's
// differentiable Euler curve (SoftEuler.h): the array as doubles, thresholds
// over the heights' range, forward and backward with dL/dchi = 1, a table
// and a sensitivity array out.
#include "vtkEulerSensitivityFilter.h"

#include "vtkTopoVoxImageAdapter.h"

#include "topovox/EulerTransform.h"
#include "topovox/SoftEuler.h"

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
#include "vtkTable.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

vtkStandardNewMacro(vtkEulerSensitivityFilter);
vtkCxxSetObjectMacro(vtkEulerSensitivityFilter, Controller, vtkMultiProcessController);

vtkEulerSensitivityFilter::vtkEulerSensitivityFilter()
{
  this->SetNumberOfInputPorts(1);
  this->SetNumberOfOutputPorts(2);
  this->SetController(vtkMultiProcessController::GetGlobalController());
  this->SetInputArrayToProcess(
    0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::SCALARS);
}

vtkEulerSensitivityFilter::~vtkEulerSensitivityFilter()
{
  this->SetController(nullptr);
}

void vtkEulerSensitivityFilter::SetNumberOfThresholdValues(int n)
{
  if (n >= 0 && static_cast<size_t>(n) != this->ThresholdValues.size())
  {
    this->ThresholdValues.resize(static_cast<size_t>(n), 0.0);
    this->Modified();
  }
}

void vtkEulerSensitivityFilter::SetThresholdValue(int i, double value)
{
  if (i < 0)
    return;
  if (static_cast<size_t>(i) >= this->ThresholdValues.size())
    this->ThresholdValues.resize(static_cast<size_t>(i) + 1, 0.0);
  if (this->ThresholdValues[static_cast<size_t>(i)] != value)
  {
    this->ThresholdValues[static_cast<size_t>(i)] = value;
    this->Modified();
  }
}

void vtkEulerSensitivityFilter::RemoveAllThresholdValues()
{
  if (!this->ThresholdValues.empty())
  {
    this->ThresholdValues.clear();
    this->Modified();
  }
}

int vtkEulerSensitivityFilter::FillInputPortInformation(int, vtkInformation* info)
{
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkImageData");
  return 1;
}

int vtkEulerSensitivityFilter::FillOutputPortInformation(int port, vtkInformation* info)
{
  info->Set(vtkDataObject::DATA_TYPE_NAME(), port == 0 ? "vtkTable" : "vtkImageData");
  return 1;
}

vtkTypeBool vtkEulerSensitivityFilter::ProcessRequest(
  vtkInformation* request, vtkInformationVector** in, vtkInformationVector* out)
{
  if (request->Has(vtkStreamingDemandDrivenPipeline::REQUEST_INFORMATION()))
  {
    // The image output is the input's grid.
    vtkInformation* inInfo = in[0]->GetInformationObject(0);
    vtkInformation* outInfo = out->GetInformationObject(1);
    int whole[6];
    inInfo->Get(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), whole);
    outInfo->Set(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), whole, 6);
    for (int port = 0; port < 2; ++port)
      out->GetInformationObject(port)->Set(CAN_HANDLE_PIECE_REQUEST(), 1);
    return 1;
  }
  if (request->Has(vtkStreamingDemandDrivenPipeline::REQUEST_UPDATE_EXTENT()))
    return this->RequestUpdateExtent(request, in, out);
  if (request->Has(vtkDemandDrivenPipeline::REQUEST_DATA()))
    return this->RequestData(request, in, out);
  return this->Superclass::ProcessRequest(request, in, out);
}

int vtkEulerSensitivityFilter::RequestUpdateExtent(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  // The whole image on rank 0, nothing elsewhere.
  topovox_vtk::requestWholeOnRoot(inputVector[0]->GetInformationObject(0),
    topovox_vtk::computesOnThisRank(this->Controller, outputVector->GetInformationObject(0)));
  return 1;
}

int vtkEulerSensitivityFilter::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkImageData* image = vtkImageData::GetData(inputVector[0]);
  vtkTable* table = vtkTable::GetData(outputVector, 0);
  vtkImageData* output = vtkImageData::GetData(outputVector, 1);
  if (!topovox_vtk::computesOnThisRank(this->Controller, outputVector->GetInformationObject(0)))
    return 1; // rank 0 computes from the whole image
  vtkDataArray* array = nullptr;
  bool cellData = false;
  topovox::GridView grid;
  if (!topovox_vtk::readWholeImage(this, "Euler sensitivity", image, this->Component, array, cellData, grid))
    return 0;
  // The values as doubles, x fastest.
  const vtkIdType n = grid.voxelCount();
  std::vector<double> values(static_cast<size_t>(n));
  const int component = std::max(0, this->Component);
  for (vtkIdType k = 0; k < n; ++k)
    values[static_cast<size_t>(k)] = array->GetComponent(k, component);

  topovox::SoftEulerProblem p;
  p.type = topovox::ScalarType::Float64;
  p.construction = this->Construction ? topovox::Construction::T : topovox::Construction::V;
  for (int a = 0; a < 3; ++a)
    p.dims[a] = grid.dims[a];
  p.lambda = this->Lambda;
  p.weight = this->Weight;
  p.threads = this->NumberOfThreads;
  double spacing[3], ijk[3];
  int ext[6];
  image->GetExtent(ext);
  image->GetSpacing(spacing);
  for (int a = 0; a < 3; ++a)
  {
    ijk[a] = ext[2 * a] + (cellData && ext[2 * a] < ext[2 * a + 1] ? 0.5 : 0.0);
    p.spacing[a] = spacing[a];
  }
  image->TransformContinuousIndexToPhysicalPoint(ijk, p.origin);
  // The direction, normalised (the kernels take it as given).
  const double norm = std::sqrt(this->Direction[0] * this->Direction[0] + this->Direction[1] * this->Direction[1] +
    this->Direction[2] * this->Direction[2]);
  if (!(norm > 0) || !std::isfinite(norm))
  {
    vtkErrorMacro(<< "Euler sensitivity: the direction is zero or not finite.");
    return 0;
  }
  const double direction[3] = { this->Direction[0] / norm, this->Direction[1] / norm, this->Direction[2] / norm };
  const double alpha = this->Alpha;
  std::vector<double> thresholds = this->ThresholdValues, chi, gradX(values.size()), gradT, gradU(3), gradA(1);
  try
  {
    if (thresholds.empty())
    {
      // Evenly spaced over the heights' range (EulerTransform.h's rule).
      topovox::EulerTransformOptions o;
      o.directions = { { direction[0], direction[1], direction[2] } };
      o.weight = this->Weight;
      o.alpha = alpha;
      o.binCount = this->NumberOfThresholds;
      for (int a = 0; a < 3; ++a)
      {
        o.origin[a] = p.origin[a];
        o.spacing[a] = p.spacing[a];
      }
      o.threads = this->NumberOfThreads;
      const topovox::GridView g =
        topovox::GridView::contiguous(values.data(), topovox::ScalarType::Float64, p.dims[0], p.dims[1], p.dims[2]);
      double lo, hi;
      topovox::transformHeightRange(g, o, lo, hi);
      thresholds = topovox::transformThresholds(o, lo, hi);
      if (thresholds.empty())
        throw std::invalid_argument("no voxel has a finite height");
    }
    for (size_t k = 1; k < thresholds.size(); ++k)
      if (!(thresholds[k] > thresholds[k - 1]))
        throw std::invalid_argument("the thresholds must be strictly increasing");
    p.thresholdCount = static_cast<int>(thresholds.size());
    p.images = values.data();
    p.thresholds = thresholds.data();
    p.direction = direction;
    p.alpha = &alpha;
    chi.resize(thresholds.size());
    gradT.resize(thresholds.size());
    topovox::softEulerForward(p, chi.data());
    const std::vector<double> ones(thresholds.size(), 1.0);
    this->UpdateProgress(0.5);
    topovox::softEulerBackward(p, ones.data(), gradX.data(), gradT.data(), gradU.data(), gradA.data());
  }
  catch (const std::exception& e)
  {
    vtkErrorMacro(<< "Euler sensitivity: " << e.what() << ".");
    return 0;
  }

  vtkNew<vtkDoubleArray> tColumn, chiColumn, dtColumn;
  tColumn->SetName("Threshold");
  chiColumn->SetName("SoftEulerCharacteristic");
  dtColumn->SetName("dChi/dThreshold");
  for (size_t k = 0; k < thresholds.size(); ++k)
  {
    tColumn->InsertNextValue(thresholds[k]);
    chiColumn->InsertNextValue(chi[k]);
    dtColumn->InsertNextValue(gradT[k]);
  }
  table->AddColumn(tColumn);
  table->AddColumn(chiColumn);
  table->AddColumn(dtColumn);

  output->ShallowCopy(image);
  vtkNew<vtkDoubleArray> sensitivity;
  sensitivity->SetName("EulerSensitivity");
  sensitivity->SetNumberOfTuples(n);
  for (vtkIdType k = 0; k < n; ++k)
    sensitivity->SetValue(k, gradX[static_cast<size_t>(k)]);
  (cellData ? static_cast<vtkDataSetAttributes*>(output->GetCellData())
            : static_cast<vtkDataSetAttributes*>(output->GetPointData()))
    ->AddArray(sensitivity);
  vtkNew<vtkDoubleArray> du, da;
  du->SetName("dChi/dDirection");
  du->SetNumberOfComponents(3);
  du->InsertNextTuple(gradU.data());
  da->SetName("dChi/dAlpha");
  da->InsertNextValue(gradA[0]);
  output->GetFieldData()->AddArray(du);
  output->GetFieldData()->AddArray(da);
  this->UpdateProgress(1.0);
  return 1;
}

void vtkEulerSensitivityFilter::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Construction: " << (this->Construction ? "T" : "V") << "\n";
  os << indent << "Lambda: " << this->Lambda << " Weight: " << this->Weight << " Alpha: " << this->Alpha << "\n";
  os << indent << "Direction: " << this->Direction[0] << " " << this->Direction[1] << " " << this->Direction[2] << "\n";
  os << indent << "NumberOfThresholds: " << this->NumberOfThresholds
     << " (given: " << this->ThresholdValues.size() << ")\n";
  os << indent << "NumberOfThreads: " << this->NumberOfThreads << "\n";
}

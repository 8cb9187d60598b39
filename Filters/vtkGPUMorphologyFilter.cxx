// vtkGPUMorphologyFilter.cxx - the VTK adapter of topovox's morphology
// (Morphology.h): the array (or its foreground) as a kernel grid, the
// structuring element from the properties, the result as a new array.
#include "vtkGPUMorphologyFilter.h"

#include "vtkTopoVoxImageAdapter.h"

#include "topovox/Morphology.h"

#include "vtkCellData.h"
#include "vtkDataArray.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkMultiProcessController.h"
#include "vtkObjectFactory.h"
#include "vtkPointData.h"
#include "vtkSmartPointer.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkUnsignedCharArray.h"

#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

vtkStandardNewMacro(vtkGPUMorphologyFilter);
vtkCxxSetObjectMacro(vtkGPUMorphologyFilter, Controller, vtkMultiProcessController);

vtkGPUMorphologyFilter::vtkGPUMorphologyFilter()
{
  this->SetNumberOfInputPorts(2);
  this->SetController(vtkMultiProcessController::GetGlobalController());
  this->SetResultArrayName("Morphology");
  this->SetInputArrayToProcess(
    0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::SCALARS);
}

vtkGPUMorphologyFilter::~vtkGPUMorphologyFilter()
{
  this->SetController(nullptr);
  this->SetResultArrayName(nullptr);
}

int vtkGPUMorphologyFilter::FillInputPortInformation(int port, vtkInformation* info)
{
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkImageData");
  if (port == 1)
    info->Set(vtkAlgorithm::INPUT_IS_OPTIONAL(), 1);
  return 1;
}

int vtkGPUMorphologyFilter::RequestInformation(
  vtkInformation* request, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  if (!this->Superclass::RequestInformation(request, inputVector, outputVector))
    return 0;
  // Local operators compute any sub-extent from a halo around it.
  if (this->Halo() >= 0)
    outputVector->GetInformationObject(0)->Set(vtkAlgorithm::CAN_PRODUCE_SUB_EXTENT(), 1);
  return 1;
}

int vtkGPUMorphologyFilter::RequestUpdateExtent(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  const int halo = this->Halo();
  if (halo >= 0)
  {
    // The output's extent (a piece, or the whole image) plus the halo, for
    // the image and the mask alike.
    int extent[6];
    outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_EXTENT(), extent);
    for (int port = 0; port < 2; ++port)
      if (vtkInformation* inInfo = inputVector[port]->GetInformationObject(0))
        topovox_vtk::requestExtentWithHalo(inInfo, extent, halo);
    return 1;
  }
  // The whole image (and mask) on rank 0, nothing elsewhere.
  const bool root = topovox_vtk::computesOnThisRank(this->Controller, outInfo);
  for (int port = 0; port < 2; ++port)
    if (vtkInformation* inInfo = inputVector[port]->GetInformationObject(0))
      topovox_vtk::requestWholeOnRoot(inInfo, root);
  return 1;
}


namespace
{
bool isBinary(int op)
{
  return op <= vtkGPUMorphologyFilter::BINARY_HIT_OR_MISS;
}

// The element for an image whose axes with one sample are `flat`.
topovox::StructuringElement element(int shape, const int size[3], int connectivity, int radius, const bool flat[3])
{
  topovox::StructuringElement s;
  if (shape == vtkGPUMorphologyFilter::BOX)
  {
    int64_t dims[3];
    for (int a = 0; a < 3; ++a)
      dims[a] = flat[a] ? 1 : std::max(1, size[a]);
    return topovox::StructuringElement::box(dims);
  }
  const int reach = shape == vtkGPUMorphologyFilter::CROSS ? 1 : radius;
  for (int a = 0; a < 3; ++a)
    s.dims[a] = flat[a] ? 1 : 2 * reach + 1;
  for (int64_t z = 0; z < s.dims[2]; ++z)
    for (int64_t y = 0; y < s.dims[1]; ++y)
      for (int64_t x = 0; x < s.dims[0]; ++x)
      {
        const int64_t d[3] = { x - s.dims[0] / 2, y - s.dims[1] / 2, z - s.dims[2] / 2 };
        bool in;
        if (shape == vtkGPUMorphologyFilter::CROSS)
          in = std::abs(d[0]) + std::abs(d[1]) + std::abs(d[2]) <= connectivity;
        else
          in = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] <= int64_t(radius) * radius;
        s.footprint.push_back(in ? 1 : 0);
      }
  if (shape == vtkGPUMorphologyFilter::CROSS)
    s = topovox::iterateStructure(s, radius); // scipy's iterate_structure
  return s;
}

// The samples of component `c` of `array` as 0/1: nonzero, or within [lo, hi].
std::vector<uint8_t> foreground(vtkDataArray* array, int c, bool range, const double lohi[2])
{
  const vtkIdType n = array->GetNumberOfTuples();
  std::vector<uint8_t> out(static_cast<size_t>(n));
  for (vtkIdType k = 0; k < n; ++k)
  {
    const double v = array->GetComponent(k, c);
    out[static_cast<size_t>(k)] = range ? (v >= lohi[0] && v <= lohi[1]) : (v != 0);
  }
  return out;
}
}

int vtkGPUMorphologyFilter::Halo() const
{
  const int op = this->Operation;
  const bool binary = isBinary(op);
  // Global: the propagating ones, and the wrap border mode (it reads the far
  // side of the image).
  if (op == BINARY_PROPAGATION || op == BINARY_FILL_HOLES || (binary && this->Iterations < 1) ||
    (!binary && this->BorderMode == 3))
    return -1;
  // How far the element reaches from a voxel (its size and origin; one more
  // for the reflected element of a dilation), times the passes it makes.
  int reach = 0;
  for (int a = 0; a < 3; ++a)
  {
    const int size = this->StructureShape == BOX ? std::max(1, this->StructureSize[a])
      : 2 * (this->StructureShape == CROSS ? std::max(1, this->Radius) : this->Radius) + 1;
    reach = std::max(reach, size / 2 + std::abs(this->Origin[a]) + 1);
  }
  const bool twoPasses = op == BINARY_OPENING || op == BINARY_CLOSING || op == GREY_OPENING ||
    op == GREY_CLOSING || op == WHITE_TOPHAT || op == BLACK_TOPHAT;
  const int passes = (twoPasses ? 2 : 1) * (binary ? std::max(1, this->Iterations) : 1);
  return reach * passes;
}

int vtkGPUMorphologyFilter::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkImageData* image = vtkImageData::GetData(inputVector[0]);
  vtkImageData* output = vtkImageData::GetData(outputVector);
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  const bool local = this->Halo() >= 0;
  int extent[6];
  outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_EXTENT(), extent);
  if (local ? (extent[0] > extent[1] || extent[2] > extent[3] || extent[4] > extent[5])
            : !topovox_vtk::computesOnThisRank(this->Controller, outInfo))
    return 1; // an empty piece, or a global operator off rank 0
  vtkDataArray* array = nullptr;
  bool cellData = false;
  topovox::GridView grid;
  if (!topovox_vtk::readWholeImage(this, "Morphology", image, this->Component, array, cellData, grid))
    return 0;
  std::string deviceWarning;
  topovox::resolveDevice(topovox_vtk::toDevice(this->Device), &deviceWarning);
  if (!deviceWarning.empty())
    vtkWarningMacro(<< deviceWarning);
  const bool binary = isBinary(this->Operation);
  const int component = std::max(0, this->Component);

  // Binary operators: the foreground as bytes (a value range asks for it).
  std::vector<uint8_t> fg;
  if (binary && this->UseForegroundRange)
  {
    fg = foreground(array, component, true, this->ForegroundRange);
    grid = topovox::GridView::contiguous(fg.data(), topovox::ScalarType::UInt8, grid.dims[0], grid.dims[1], grid.dims[2]);
  }
  std::vector<uint8_t> mask;
  if (vtkImageData* maskImage = vtkImageData::GetData(inputVector[1]))
  {
    vtkDataArray* m = cellData ? maskImage->GetCellData()->GetScalars() : maskImage->GetPointData()->GetScalars();
    if (!m || m->GetNumberOfTuples() != grid.voxelCount())
    {
      vtkErrorMacro(<< "Morphology: the mask needs active " << (cellData ? "cell" : "point")
                    << " scalars on the image's grid.");
      return 0;
    }
    mask = foreground(m, 0, false, this->ForegroundRange);
  }

  bool flat[3];
  for (int a = 0; a < 3; ++a)
    flat[a] = grid.dims[a] == 1;
  topovox::BinaryImage bytes;
  topovox::GreyImage grey;
  try
  {
    topovox::StructuringElement s =
      element(this->StructureShape, this->StructureSize, this->Connectivity, this->Radius, flat);
    for (int a = 0; a < 3; ++a)
      s.origin[a] = flat[a] ? 0 : this->Origin[a];
    topovox::BinaryOptions bo;
    bo.iterations = this->Iterations;
    bo.borderValue = this->BorderValue;
    bo.mask = mask.empty() ? nullptr : mask.data();
    bo.threads = this->NumberOfThreads;
    bo.device = topovox_vtk::toDevice(this->Device);
    topovox::GreyOptions go;
    go.mode = static_cast<topovox::BorderMode>(this->BorderMode);
    go.cval = this->ConstantValue;
    go.threads = this->NumberOfThreads;
    go.device = topovox_vtk::toDevice(this->Device);
    switch (this->Operation)
    {
      case BINARY_EROSION: bytes = topovox::binaryErosion(grid, s, bo); break;
      case BINARY_DILATION: bytes = topovox::binaryDilation(grid, s, bo); break;
      case BINARY_OPENING: bytes = topovox::binaryOpening(grid, s, bo); break;
      case BINARY_CLOSING: bytes = topovox::binaryClosing(grid, s, bo); break;
      case BINARY_PROPAGATION: bytes = topovox::binaryPropagation(grid, s, bo); break;
      case BINARY_FILL_HOLES: bytes = topovox::binaryFillHoles(grid, s, bo.threads); break;
      case BINARY_HIT_OR_MISS:
      {
        topovox::StructuringElement s2 = s;
        for (auto& f : s2.footprint)
          f = f ? 0 : 1;
        bytes = topovox::binaryHitOrMiss(grid, s, s2, bo.threads);
        break;
      }
      case GREY_EROSION: grey = topovox::greyErosion(grid, s, go); break;
      case GREY_DILATION: grey = topovox::greyDilation(grid, s, go); break;
      case GREY_OPENING: grey = topovox::greyOpening(grid, s, go); break;
      case GREY_CLOSING: grey = topovox::greyClosing(grid, s, go); break;
      case MORPHOLOGICAL_GRADIENT: grey = topovox::morphologicalGradient(grid, s, go); break;
      case MORPHOLOGICAL_LAPLACE: grey = topovox::morphologicalLaplace(grid, s, go); break;
      case WHITE_TOPHAT: grey = topovox::whiteTophat(grid, s, go); break;
      default: grey = topovox::blackTophat(grid, s, go); break;
    }
  }
  catch (const std::exception& e)
  {
    vtkErrorMacro(<< "Morphology: " << e.what() << ".");
    return 0;
  }

  vtkSmartPointer<vtkDataArray> result;
  const vtkIdType n = grid.voxelCount();
  if (binary)
  {
    auto u = vtkSmartPointer<vtkUnsignedCharArray>::New();
    u->SetNumberOfTuples(n);
    std::memcpy(u->GetPointer(0), bytes.data(), static_cast<size_t>(n));
    result = u;
  }
  else
  {
    result.TakeReference(vtkDataArray::CreateDataArray(array->GetDataType()));
    result->SetNumberOfTuples(n);
    std::memcpy(result->GetVoidPointer(0), grey.data(), grey.size());
  }
  result->SetName(this->ResultArrayName ? this->ResultArrayName : "Morphology");
  vtkDataSetAttributes* attributes = topovox_vtk::outputAttributes(output, image, cellData);
  attributes->AddArray(result);
  attributes->SetActiveScalars(result->GetName());
  if (local)
    output->Crop(extent); // the halo was only read
  return 1;
}

void vtkGPUMorphologyFilter::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Operation: " << this->Operation << " StructureShape: " << this->StructureShape << "\n";
  os << indent << "StructureSize: " << this->StructureSize[0] << " " << this->StructureSize[1] << " "
     << this->StructureSize[2] << " Connectivity: " << this->Connectivity << " Radius: " << this->Radius << "\n";
  os << indent << "Origin: " << this->Origin[0] << " " << this->Origin[1] << " " << this->Origin[2] << "\n";
  os << indent << "BorderMode: " << this->BorderMode << " ConstantValue: " << this->ConstantValue
     << " BorderValue: " << this->BorderValue << " Iterations: " << this->Iterations << "\n";
}

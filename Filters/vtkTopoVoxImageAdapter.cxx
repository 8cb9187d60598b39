#include "vtkTopoVoxImageAdapter.h"

#include "vtkAlgorithm.h"
#include "vtkCellData.h"
#include "vtkDataArray.h"
#include "vtkExtentTranslator.h"
#include "vtkFieldData.h"
#include "vtkImageData.h"
#include "vtkInformation.h"
#include "vtkMultiProcessController.h"
#include "vtkNew.h"
#include "vtkPointData.h"
#include "vtkStreamingDemandDrivenPipeline.h"
#include "vtkCommunicator.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace topovox_vtk
{
using topovox::ScalarType;

bool toScalarType(int vtkType, ScalarType& out)
{
  switch (vtkType)
  {
    case VTK_CHAR:
      out = std::is_signed<char>::value ? ScalarType::Int8 : ScalarType::UInt8;
      return true;
    case VTK_SIGNED_CHAR: out = ScalarType::Int8; return true;
    case VTK_UNSIGNED_CHAR: out = ScalarType::UInt8; return true;
    case VTK_SHORT: out = ScalarType::Int16; return true;
    case VTK_UNSIGNED_SHORT: out = ScalarType::UInt16; return true;
    case VTK_INT: out = ScalarType::Int32; return true;
    case VTK_UNSIGNED_INT: out = ScalarType::UInt32; return true;
    case VTK_LONG:
      out = sizeof(long) == 8 ? ScalarType::Int64 : ScalarType::Int32;
      return true;
    case VTK_UNSIGNED_LONG:
      out = sizeof(long) == 8 ? ScalarType::UInt64 : ScalarType::UInt32;
      return true;
    case VTK_LONG_LONG: out = ScalarType::Int64; return true;
    case VTK_ID_TYPE:
      out = sizeof(vtkIdType) == 8 ? ScalarType::Int64 : ScalarType::Int32;
      return true;
    case VTK_UNSIGNED_LONG_LONG: out = ScalarType::UInt64; return true;
    case VTK_FLOAT: out = ScalarType::Float32; return true;
    case VTK_DOUBLE: out = ScalarType::Float64; return true;
    default: return false;
  }
}

topovox::Device toDevice(int property)
{
  return property == 1 ? topovox::Device::CPU
                       : property == 2 ? topovox::Device::GPU : topovox::Device::Auto;
}

void pieceExtent(const int whole[6], int piece, int pieces, int out[6])
{
  vtkNew<vtkExtentTranslator> translator;
  translator->SetSplitModeToBlock();
  translator->PieceToExtentThreadSafe(piece, pieces, 0, const_cast<int*>(whole), out,
    vtkExtentTranslator::BLOCK_MODE, 0);
}

vtkDataArray* arrayToProcess(vtkDataArray* selected, int association, vtkImageData* image, bool& cellData)
{
  cellData = selected && association == vtkDataObject::FIELD_ASSOCIATION_CELLS;
  return selected ? selected : image->GetPointData()->GetScalars();
}

vtkDataArray* selectedArray(vtkInformation* arrayInfo, vtkImageData* image, int& association)
{
  if (!arrayInfo || !image)
    return nullptr;
  const bool byName = arrayInfo->Has(vtkDataObject::FIELD_NAME());
  if (!byName && !arrayInfo->Has(vtkDataObject::FIELD_ATTRIBUTE_TYPE()))
    return nullptr;
  const char* name = byName ? arrayInfo->Get(vtkDataObject::FIELD_NAME()) : nullptr;
  const int type = byName ? -1 : arrayInfo->Get(vtkDataObject::FIELD_ATTRIBUTE_TYPE());
  auto from = [&](vtkDataSetAttributes* data) -> vtkDataArray* {
    return byName ? data->GetArray(name) : data->GetAttribute(type);
  };
  association = arrayInfo->Has(vtkDataObject::FIELD_ASSOCIATION())
    ? arrayInfo->Get(vtkDataObject::FIELD_ASSOCIATION())
    : vtkDataObject::FIELD_ASSOCIATION_POINTS;
  switch (association)
  {
    case vtkDataObject::FIELD_ASSOCIATION_POINTS:
      return from(image->GetPointData());
    case vtkDataObject::FIELD_ASSOCIATION_CELLS:
      return from(image->GetCellData());
    case vtkDataObject::FIELD_ASSOCIATION_POINTS_THEN_CELLS:
      if (vtkDataArray* a = from(image->GetPointData()))
      {
        association = vtkDataObject::FIELD_ASSOCIATION_POINTS;
        return a;
      }
      association = vtkDataObject::FIELD_ASSOCIATION_CELLS;
      return from(image->GetCellData());
    case vtkDataObject::FIELD_ASSOCIATION_NONE:
      return byName ? image->GetFieldData()->GetArray(name) : nullptr;
    default:
      return nullptr; // rows, vertices, edges: not an image's
  }
}

std::string describeWholeImage(vtkImageData* image, vtkDataArray* selected, int association, int component,
  vtkDataArray*& array, bool& cellData, topovox::GridView& grid)
{
  array = nullptr;
  cellData = false;
  if (!image)
    return "the input is not an image (vtkImageData)";
  array = arrayToProcess(selected, association, image, cellData);
  if (!array)
    return "the input image has no scalar array to process (select one)";
  int ext[6];
  image->GetExtent(ext);
  topovox::Box owned;
  return describeArray(image, array, cellData, component, ext, ext, grid, owned);
}

std::string describeArray(vtkImageData* image, vtkDataArray* array, bool cellData, int component,
  const int whole[6], const int piece[6], topovox::GridView& grid, topovox::Box& owned)
{
  ScalarType type;
  if (!toScalarType(array->GetDataType(), type))
    return std::string("array '") + (array->GetName() ? array->GetName() : "") +
      "' has the non-numeric type " + array->GetDataTypeAsString();
  const int ncomp = array->GetNumberOfComponents();
  const std::string name = array->GetName() ? array->GetName() : "";
  // -1 (the default) means "the only one": a vector array needs a choice,
  // since no component is more natural than another.
  if (component < 0 && ncomp > 1)
    return "array '" + name + "' has " + std::to_string(ncomp) +
      " components: choose one with the Component property";
  if (component < 0)
    component = 0;
  if (component >= ncomp)
    return "component " + std::to_string(component) + " does not exist (array '" + name +
      "' has " + std::to_string(ncomp) + ")";
  int ext[6];
  image->GetExtent(ext);
  for (int a = 0; a < 3; ++a)
  {
    if (ext[2 * a] > ext[2 * a + 1])
      return "the image is empty";
    const int64_t points = ext[2 * a + 1] - ext[2 * a] + 1;
    // Cell data: a flat axis (one point) still holds one layer of cells.
    grid.dims[a] = cellData ? std::max<int64_t>(1, points - 1) : points;
    if (piece[2 * a] < ext[2 * a] || piece[2 * a + 1] > ext[2 * a + 1])
      return "the input does not cover the requested piece";
    const bool flat = whole[2 * a] == whole[2 * a + 1];
    if (cellData)
    {
      owned.lo[a] = flat ? 0 : piece[2 * a] - ext[2 * a];
      owned.hi[a] = flat ? 1 : piece[2 * a + 1] - ext[2 * a];
    }
    else
    {
      // The plane shared with the next piece belongs to that piece.
      const bool last = piece[2 * a + 1] == whole[2 * a + 1];
      owned.lo[a] = piece[2 * a] - ext[2 * a];
      owned.hi[a] = piece[2 * a + 1] - ext[2 * a] + (last ? 1 : 0);
    }
  }
  const vtkIdType expected = grid.dims[0] * grid.dims[1] * grid.dims[2];
  if (array->GetNumberOfTuples() != expected)
    return "array '" + std::string(array->GetName() ? array->GetName() : "") + "' has " +
      std::to_string(array->GetNumberOfTuples()) + " tuples where the image has " +
      std::to_string(expected) + (cellData ? " cells" : " points");
  grid.type = type;
  grid.memory = topovox::MemorySpace::Host;
  // AOS arrays hand out their buffer; other layouts are copied by VTK here.
  grid.data = static_cast<const char*>(array->GetVoidPointer(0)) +
    component * topovox::scalarTypeSize(type);
  grid.strides[0] = ncomp;
  grid.strides[1] = ncomp * grid.dims[0];
  grid.strides[2] = ncomp * grid.dims[0] * grid.dims[1];
  return std::string();
}

namespace
{
void requestExtent(vtkInformation* inInfo, const int ext[6])
{
  inInfo->Set(vtkStreamingDemandDrivenPipeline::UPDATE_EXTENT(), ext, 6);
  inInfo->Set(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER(), 0);
  inInfo->Set(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_PIECES(), 1);
  inInfo->Set(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_GHOST_LEVELS(), 0);
}
}

void requestBlockWithHalo(vtkInformation* inInfo, int piece, int pieces)
{
  int whole[6], ext[6];
  inInfo->Get(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), whole);
  pieceExtent(whole, piece, pieces, ext);
  for (int a = 0; a < 3; ++a)
  {
    if (ext[2 * a] > ext[2 * a + 1])
      continue; // an empty piece asks for nothing more
    ext[2 * a] = std::max(whole[2 * a], ext[2 * a] - 1);
    ext[2 * a + 1] = std::min(whole[2 * a + 1], ext[2 * a + 1] + 1);
  }
  requestExtent(inInfo, ext);
}

void requestExtentWithHalo(vtkInformation* inInfo, const int extent[6], int halo)
{
  int whole[6], ext[6];
  inInfo->Get(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), whole);
  for (int a = 0; a < 3; ++a)
  {
    ext[2 * a] = extent[2 * a];
    ext[2 * a + 1] = extent[2 * a + 1];
    if (ext[2 * a] > ext[2 * a + 1])
      continue; // an empty piece asks for nothing more
    ext[2 * a] = std::max(whole[2 * a], ext[2 * a] - halo);
    ext[2 * a + 1] = std::min(whole[2 * a + 1], ext[2 * a + 1] + halo);
  }
  requestExtent(inInfo, ext);
}

void requestWholeOnRoot(vtkInformation* inInfo, bool root)
{
  int whole[6];
  inInfo->Get(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), whole);
  const int empty[6] = { 0, -1, 0, -1, 0, -1 };
  requestExtent(inInfo, root ? whole : empty);
}

bool computesOnThisRank(vtkMultiProcessController* controller, vtkInformation* outInfo)
{
  const int piece = outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER());
  const int pieces = outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_PIECES());
  return participatingRanks(controller, pieces) <= 1 || piece == 0;
}

int participatingRanks(vtkMultiProcessController* controller, int pieces)
{
  if (!controller || pieces <= 1)
    return 1;
  return controller->GetNumberOfProcesses() == pieces ? pieces : 1;
}

void allReduceMinMax(vtkMultiProcessController* c, int ranks, double& mn, double& mx)
{
  if (ranks <= 1)
    return;
  double in[1] = { mn }, out[1];
  c->AllReduce(in, out, 1, vtkCommunicator::MIN_OP);
  mn = out[0];
  in[0] = mx;
  c->AllReduce(in, out, 1, vtkCommunicator::MAX_OP);
  mx = out[0];
}

void allReduceSum(vtkMultiProcessController* c, int ranks, long long& value)
{
  if (ranks <= 1)
    return;
  long long in = value, out = 0;
  c->AllReduce(&in, &out, 1, vtkCommunicator::SUM_OP);
  value = out;
}

std::vector<double> allGatherSortedUnique(
  vtkMultiProcessController* c, int ranks, const std::vector<double>& local)
{
  if (ranks <= 1)
    return local;
  const vtkIdType n = static_cast<vtkIdType>(local.size());
  std::vector<vtkIdType> counts(ranks), offsets(ranks);
  c->AllGather(&n, counts.data(), 1);
  vtkIdType total = 0;
  for (int r = 0; r < ranks; ++r)
  {
    offsets[r] = total;
    total += counts[r];
  }
  std::vector<double> all(static_cast<size_t>(total));
  c->AllGatherV(local.data(), all.data(), n, counts.data(), offsets.data());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

void reduceSumToRoot(vtkMultiProcessController* c, int ranks, std::vector<long long>& values)
{
  if (ranks <= 1 || values.empty())
    return;
  std::vector<long long> out(values.size(), 0);
  c->Reduce(values.data(), out.data(), static_cast<vtkIdType>(values.size()),
    vtkCommunicator::SUM_OP, 0);
  if (c->GetLocalProcessId() == 0)
    values.swap(out);
}

std::vector<std::vector<unsigned char>> gatherBytesToRoot(
  vtkMultiProcessController* c, int ranks, const std::vector<unsigned char>& local)
{
  std::vector<std::vector<unsigned char>> out;
  if (ranks <= 1)
  {
    out.push_back(local);
    return out;
  }
  const bool root = c->GetLocalProcessId() == 0;
  const vtkIdType n = static_cast<vtkIdType>(local.size());
  std::vector<vtkIdType> counts(static_cast<size_t>(ranks)), offsets(static_cast<size_t>(ranks));
  c->Gather(&n, counts.data(), 1, 0);
  vtkIdType total = 0;
  for (int r = 0; r < ranks; ++r)
  {
    offsets[static_cast<size_t>(r)] = total;
    total += root ? counts[static_cast<size_t>(r)] : 0;
  }
  std::vector<unsigned char> all(static_cast<size_t>(std::max<vtkIdType>(total, 1)));
  c->GatherV(local.data(), all.data(), n, counts.data(), offsets.data(), 0);
  if (root)
    for (int r = 0; r < ranks; ++r)
      out.emplace_back(all.begin() + offsets[static_cast<size_t>(r)],
        all.begin() + offsets[static_cast<size_t>(r)] + counts[static_cast<size_t>(r)]);
  return out;
}

void broadcastFromRoot(vtkMultiProcessController* c, int ranks, std::vector<long long>& values)
{
  if (ranks <= 1)
    return;
  long long n = static_cast<long long>(values.size());
  c->Broadcast(&n, 1, 0);
  values.resize(static_cast<size_t>(n));
  if (n > 0)
    c->Broadcast(values.data(), n, 0);
}

vtkDataSetAttributes* outputAttributes(vtkImageData* output, vtkImageData* input, bool cellData)
{
  output->ShallowCopy(input);
  return cellData ? static_cast<vtkDataSetAttributes*>(output->GetCellData())
                  : static_cast<vtkDataSetAttributes*>(output->GetPointData());
}

void ImagePiece::standInForEmpty()
{
  static const double unused = 0;
  grid = topovox::GridView::contiguous(&unused, topovox::ScalarType::Float64, 1);
  owned = topovox::Box{};
  owned.hi[0] = owned.hi[1] = owned.hi[2] = 1;
  owned.lo[0] = 1; // empty, but not the all-zero "whole grid" box
}

ImagePiece readImagePiece(vtkImageData* image, vtkInformation* inInfo, vtkInformation* outInfo,
  vtkInformation* arrayInfo, vtkMultiProcessController* controller, int component, bool wholeFromImage)
{
  ImagePiece p;
  p.piece = outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER());
  p.pieces = outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_PIECES());
  p.ranks = participatingRanks(controller, p.pieces);
  p.root = p.ranks == 1 || controller->GetLocalProcessId() == 0;
  if (!image)
  {
    p.error = "the input is not an image (vtkImageData)";
    return p;
  }
  if (wholeFromImage && p.ranks == 1)
  {
    image->GetExtent(p.whole);
    image->GetExtent(p.extent);
  }
  else
  {
    inInfo->Get(vtkStreamingDemandDrivenPipeline::WHOLE_EXTENT(), p.whole);
    pieceExtent(p.whole, p.piece, p.pieces, p.extent);
  }
  p.empty = p.extent[0] > p.extent[1] || p.extent[2] > p.extent[3] || p.extent[4] > p.extent[5];
  int association = vtkDataObject::FIELD_ASSOCIATION_POINTS;
  vtkDataArray* selected = selectedArray(arrayInfo, image, association);
  p.array = arrayToProcess(selected, association, image, p.cellData);
  if (!p.array)
    p.error = "the input image has no scalar array to process (select one)";
  else if (!p.empty)
    p.error = describeArray(image, p.array, p.cellData, component, p.whole, p.extent, p.grid, p.owned);
  return p;
}

std::string agreeOnError(vtkMultiProcessController* controller, int ranks, const std::string& error,
  const char* otherwise)
{
  long long failed = error.empty() ? 0 : 1;
  allReduceSum(controller, ranks, failed);
  if (!failed)
    return {};
  return error.empty() ? otherwise : error;
}

std::string settlePiece(vtkMultiProcessController* controller, ImagePiece& piece)
{
  const std::string failure = agreeOnError(controller, piece.ranks, piece.error);
  if (failure.empty() && piece.empty)
    piece.standInForEmpty();
  return failure;
}

bool readWholeImage(vtkAlgorithm* filter, const char* what, vtkImageData* image, int component,
  vtkDataArray*& array, bool& cellData, topovox::GridView& grid)
{
  int association = vtkDataObject::FIELD_ASSOCIATION_POINTS;
  vtkDataArray* selected = selectedArray(filter->GetInputArrayInformation(0), image, association);
  const std::string why = describeWholeImage(image, selected, association, component, array, cellData, grid);
  if (why.empty())
    return true;
  vtkErrorWithObjectMacro(filter, << what << ": " << why << ".");
  return false;
}
}

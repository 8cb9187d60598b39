// vtkTopoVoxImageAdapter.h - (private to TopoVox::Filters) what every TopoVox
// image filter does around its kernel call: describe a VTK image array as a
// kernel GridView, work out which voxels this MPI piece owns, and reduce
// per-piece results across ranks. No algorithm here; only bookkeeping.
#ifndef vtkTopoVoxImageAdapter_h
#define vtkTopoVoxImageAdapter_h

#include "topovox/Device.h"
#include "topovox/Grid.h"

#include <cstring>
#include <string>
#include <vector>

class vtkAlgorithm;
class vtkDataArray;
class vtkDataSetAttributes;
class vtkImageData;
class vtkInformation;
class vtkMultiProcessController;

namespace topovox_vtk
{
// VTK scalar type -> kernel scalar type; false for non-numeric arrays.
bool toScalarType(int vtkType, topovox::ScalarType& out);

// Kernel device from the filter property (0 auto, 1 CPU, 2 GPU).
topovox::Device toDevice(int property);

// The extent (points) that piece `piece` of `pieces` owns, by VTK's extent
// translator in block mode. Adjacent pieces share a plane of points.
void pieceExtent(const int whole[6], int piece, int pieces, int out[6]);

// The array a filter processes: `selected` (its GetInputArrayToProcess,
// with that association) or, when none is selected (pvpython leaves an
// ArrayListDomain empty before the first update), the active point scalars,
// as VTK users expect. Sets cellData; null when the image has neither.
vtkDataArray* arrayToProcess(vtkDataArray* selected, int association, vtkImageData* image, bool& cellData);

// The array a filter's selection (its GetInputArrayInformation(idx)) names
// in `image`, found as vtkAlgorithm::GetInputArrayToProcess finds it (a
// name in points, cells, both, or field data; or an attribute type), with
// its association; null when nothing is selected or the selection cannot
// name an image's array. ParaView can leave a table column (Row Data)
// selected in a proxy made before its input updated, which vtkAlgorithm
// would report as an error; arrayToProcess then takes the active scalars.
vtkDataArray* selectedArray(vtkInformation* arrayInfo, vtkImageData* image, int& association);

// For filters that compute on one rank from the whole image: the array to
// process (`selected`, else the active point scalars) of `image` as a
// GridView over the image's extent. An empty string, or the reason (no
// image, no array, a bad array) for the filter's error message.
std::string describeWholeImage(vtkImageData* image, vtkDataArray* selected, int association, int component,
  vtkDataArray*& array, bool& cellData, topovox::GridView& grid);

// A rank-0 filter's input (requestWholeOnRoot): describeWholeImage for the
// array selected in the filter's GetInputArrayInformation(0). False after
// reporting why as the filter's error, "<what>: <reason>.".
bool readWholeImage(vtkAlgorithm* filter, const char* what, vtkImageData* image, int component,
  vtkDataArray*& array, bool& cellData, topovox::GridView& grid);

// The output of a filter that adds arrays to its input image: `output`
// becomes a shallow copy of `input`; returns where the new arrays go (its
// cell data when cellData, else its point data).
vtkDataSetAttributes* outputAttributes(vtkImageData* output, vtkImageData* input, bool cellData);

// Describes component `component` (-1: the only one; an error for a
// multi-component array) of `array` (point data, or cell data when
// cellData) of `image` as a GridView, and the box of samples this piece owns
// (local indices): a shared plane of points belongs to the lower piece; the
// cells of a piece never overlap another's. `whole` and `piece` are extents
// in points. Returns an empty string or the reason it cannot.
std::string describeArray(vtkImageData* image, vtkDataArray* array, bool cellData, int component,
  const int whole[6], const int piece[6], topovox::GridView& grid, topovox::Box& owned);

// Update-extent requests on the input, as one piece with no ghost levels
// (the pattern that works downstream of sources that split, e.g. Wavelet, on
// ParaView 5.11). requestBlockWithHalo: the block of `piece` of `pieces`
// plus a one-voxel halo (what cell ownership reads). requestWholeOnRoot:
// the whole image when `root`, nothing otherwise.
void requestBlockWithHalo(vtkInformation* inInfo, int piece, int pieces);
void requestWholeOnRoot(vtkInformation* inInfo, bool root);
// For local operators: `extent` (the output's update extent) grown by
// `halo` samples on every side, clamped to the whole extent. The filter
// computes on that and crops its output back to `extent`.
void requestExtentWithHalo(vtkInformation* inInfo, const int extent[6], int halo);

// For filters that compute on rank 0 from the whole image (requested with
// requestWholeOnRoot): whether this rank computes; the others leave their
// output empty.
bool computesOnThisRank(vtkMultiProcessController* controller, vtkInformation* outInfo);

// Number of ranks taking part in a piece-wise reduction: the controller's
// process count when the pipeline split the data into that many pieces,
// else 1 (each process computed the whole image, nothing to combine).
int participatingRanks(vtkMultiProcessController* controller, int pieces);

// Collective reductions over the participating ranks (no-ops for 1 rank).
void allReduceMinMax(vtkMultiProcessController* c, int ranks, double& mn, double& mx);
void allReduceSum(vtkMultiProcessController* c, int ranks, long long& value);
std::vector<double> allGatherSortedUnique(
  vtkMultiProcessController* c, int ranks, const std::vector<double>& local);
// Sums `values` onto rank 0 (in place there).
void reduceSumToRoot(vtkMultiProcessController* c, int ranks, std::vector<long long>& values);
// Every rank's bytes, on rank 0 (in rank order; empty elsewhere).
std::vector<std::vector<unsigned char>> gatherBytesToRoot(
  vtkMultiProcessController* c, int ranks, const std::vector<unsigned char>& local);
// Rank 0's `values` on every rank.
void broadcastFromRoot(vtkMultiProcessController* c, int ranks, std::vector<long long>& values);

// Rows of plain data (trivially copyable) as the bytes gatherBytesToRoot
// moves, and back: appendRows adds the rows `bytes` holds, or returns false
// (adding nothing) when they are not a whole number of rows.
template <class T>
std::vector<unsigned char> bytesOf(const std::vector<T>& rows)
{
  std::vector<unsigned char> out(rows.size() * sizeof(T));
  if (!rows.empty())
    std::memcpy(out.data(), rows.data(), out.size());
  return out;
}
template <class T>
bool appendRows(const std::vector<unsigned char>& bytes, std::vector<T>& rows)
{
  if (bytes.size() % sizeof(T))
    return false;
  const size_t n = bytes.size() / sizeof(T), at = rows.size();
  rows.resize(at + n);
  if (n)
    std::memcpy(rows.data() + at, bytes.data(), n * sizeof(T));
  return true;
}

// What a distributed filter's RequestData starts from: this rank's piece of
// the image and its selected array (GetInputArrayInformation(0)),
// described for the kernels. `error` is empty or says what is wrong with
// this rank's piece; the ranks must agree on it (agreeOnError) before any
// other collective, so that a bad piece on one rank cannot leave the others
// waiting.
struct ImagePiece
{
  int piece = 0, pieces = 1, ranks = 1;
  bool root = true;       // rank 0, or a serial run
  int whole[6] = {}, extent[6] = {};
  bool empty = false;     // this rank's piece has no voxels
  vtkDataArray* array = nullptr;
  bool cellData = false;
  topovox::GridView grid; // the piece with its halo, as it arrived
  topovox::Box owned;     // the voxels this rank counts
  std::string error;

  // The kernels see an empty piece as a 1-voxel grid that owns nothing.
  void standInForEmpty();
};

// wholeFromImage: in a serial run, the image's own extent is the whole (not
// the pipeline's WHOLE_EXTENT, which a sub-extent request may not match).
ImagePiece readImagePiece(vtkImageData* image, vtkInformation* inInfo, vtkInformation* outInfo,
  vtkInformation* arrayInfo, vtkMultiProcessController* controller, int component, bool wholeFromImage);

// Every rank's agreement on `error` (this rank's, empty when fine), a
// collective: empty when all ranks are fine, else the message to report:
// this rank's error, or `otherwise` when only other ranks failed.
std::string agreeOnError(vtkMultiProcessController* controller, int ranks, const std::string& error,
  const char* otherwise = "another rank could not read its piece");

// For the filters whose every rank runs the kernels (a reduction follows):
// the ranks' agreement on the pieces' errors (agreeOnError); when all are
// fine, an empty piece becomes the kernels' stand-in (standInForEmpty).
// Returns the failure to report, empty when none.
std::string settlePiece(vtkMultiProcessController* controller, ImagePiece& piece);
}

#endif

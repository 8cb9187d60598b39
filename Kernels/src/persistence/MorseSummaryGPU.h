// MorseSummaryGPU.h - a whole image's Morse summary built on the GPU, for one
// image or a batch of images of one size: the gradient (GradientGroups.h's
// code, as MorseGradientCUDA.cu runs it), the critical cells compacted by
// CUB, and where the gradient paths from critical edges and the dual
// paths from critical (d-1)-cells end, found by pointer jumping. Only those
// lists come back to the host, in the order MorsePiece's CPU scans give them,
// so the summary is the CPU's, value for value.
//
// Why pointer jumping: a path's end is the root of a forest (each vertex
// points to the other end of its gradient edge, each top cell through its
// paired face to the next top cell; critical cells point to themselves, and
// the outside of the image is one extra root). Replacing every pointer by
// its pointer's pointer until nothing changes takes log2(longest path)
// passes over coalesced arrays, where walking each path alone on a GPU
// thread stalls on plateaus thousands of cells long.
//
// What stays on the host: the union-find pairing and PHAT's reduction.
// Where an image needs Morse boundaries (3D images, or images with NaN,
// whose top dimension the dual union-find cannot pair) its gradient stays
// on the device for MorseBoundaryCUDA.cu, which computes them there; the
// gradient comes to the host only for the few traversals too large for the
// device's scratch. A 2D image without NaN needs no boundary: only the
// summary crosses the bus.
#pragma once

#include "MorseGradient.h"

#include "topovox/PersistencePieces.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace topovox
{
namespace morse
{
struct DeviceGradient; // a batch's gradient on the device (MorseDevice.cuh)
struct HeldRecords;    // boundary records held on the device (MorseBoundaryCUDA.cu)

// What the device built for one whole image (no cut planes).
struct BuiltPiece
{
  MorsePieceSummary summary;
  Gradient gradient; // its arrays filled only when gradientOnHost
  bool gradientOnHost = false;
  // Where the image needs boundaries: its batch's gradient on the device,
  // shared by the batch's pieces, and its place in the batch.
  std::shared_ptr<const DeviceGradient> device;
  int64_t image = 0;
  explicit BuiltPiece(const cubical::CellGrid& cg)
    : gradient(cg)
  {
  }
};

// Does an image of this complex need its gradient on the host (Morse
// boundaries)? `top`: the complex's dimension.
inline bool needsBoundaries(int top, bool hasNan)
{
  return top >= 3 || hasNan;
}

// Where the Morse engine runs: GPU when asked (and present: the warning
// says why not), CPU otherwise. Auto stays on the CPU threads unless
// TOPOVOX_DEVICE says gpu (bench/README.md, "Persistence benchmark", has
// the measurements behind that default).
inline Device persistenceDevice(Device requested, std::string* warnings)
{
  return persistenceAsksForGpu(requested) ? resolveDevice(Device::GPU, warnings) : Device::CPU;
}

#ifdef TOPOVOX_WITH_CUDA
// `images`: one or more, all of the same dims and scalar type (strides may
// differ). Throws std::runtime_error on any CUDA failure, out of memory
// included, and when the batch's vertices or top cells overflow 32-bit
// indices (the caller then uses the CPU, or smaller batches).
std::vector<BuiltPiece> buildPiecesGPU(
  const std::vector<GridView>& images, Construction construction, Filtration filtration);

// How many images of this size buildPiecesGPU takes at once: as many as
// keep its device arrays within a quarter of the free device memory and its
// indices within 32 bits, and no more than TOPOVOX_GPU_BATCH_IMAGES when
// that is set; at least 1.
int64_t piecesPerLaunchGPU(const GridView& image, Construction construction);

// Whether a whole image fits the device, and if not, the slabs it is
// streamed through. Returns 0 when buildPiecesGPU's peak for the whole
// image (MorseSummaryCUDA.cu, WholeImageBytes: the image and its gradient,
// then the summary's or the boundaries' arrays, whichever take more) fits
// in 80% of the free device memory, and under TOPOVOX_GPU_MEMORY_LIMIT
// bytes when that is set (a user sharing the device, or a test), with its
// vertices and top cells within 32-bit indices. The summary's share grows
// with the critical cells, known only once the gradient is built: one
// cell in six (uniform noise) is assumed, and where that does not fit but
// none would, the gradient is built on the device to count them.
// Otherwise the span in voxels of slabs along *axis (the slowest
// axis of more than one voxel) of which one, with its collar, takes its
// voxels and three bytes a cell of the same budget: the engine then builds
// the slabs' gradients on the device one after another and the rest of
// each slab on the CPU threads (MorsePersistence.cpp). Returns -1 when not
// even a slab of one voxel's span fits (the whole image is then tried, and
// its failure sends it to the CPU). Where the gradient was built to count
// and the image goes whole, its summary is made from that gradient, as
// buildPiecesGPU would make it, into *whole (when given): the caller
// adopts it instead of building the gradient again.
int64_t gpuSlabSpan(const GridView& image, Construction construction, Filtration filtration, int* axis,
  std::vector<BuiltPiece>* whole = nullptr);

// The Morse boundaries of `cells` (image `image`'s own critical cells) from
// the gradient on the device, flattened as MorsePiece::boundaries gives
// them (records in any order); the cells the device could not finish go to
// *left, for the CPU. Where `rows` gives the slots for a single image
// whose summary was numbered (the device kept its cells in the filtration
// order), and the device has the memory, the records are held on the
// device in *held instead (nothing returned): as slot, count and the
// faces' positions, until heldRecordsToRows has the matrix rows. Throws
// std::runtime_error on CUDA failures.
std::vector<int64_t> boundariesGPU(const DeviceGradient& gradient, int64_t image, const std::vector<int64_t>& cells,
  std::vector<int64_t>* left, const BoundaryRows& rows, std::shared_ptr<HeldRecords>* held);

// Held records as slot, count, rows (MorsePairing::addBoundaryRows), each
// face's row read from rowOf (per position: the matrix row, -1 for none)
// on the device, or on the host where the device cannot spare the room;
// where each record starts in *starts (in no order). The device's records
// are freed. Throws std::runtime_error on CUDA failures.
BoundaryRecords heldRecordsToRows(HeldRecords& held, const int32_t* rowOf, RecordStarts* starts);

// Image `image`'s gradient copied into `out` (its arrays sized here).
void gradientToHost(const DeviceGradient& gradient, int64_t image, Gradient& out);
#endif
}
}

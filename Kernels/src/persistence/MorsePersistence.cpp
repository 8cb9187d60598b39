// MorsePersistence.cpp - the Morse engine on an image in one process: the
// image as one piece, or cut into blocks built in parallel, then the
// pieces' pairing (MorsePiece.cpp, MorsePairing.cpp). MPI ranks run the same
// steps with the exchange in between (vtkPersistenceDiagramFilter).
#include "topovox/Batch.h"
#include "topovox/Persistence.h"
#include "topovox/PersistencePieces.h"

#include "DiagramAssembly.h"
#include "MorseSummaryGPU.h"

#include "../common/Parallel.h"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <thread>

namespace topovox
{
namespace
{
// The blocks of `size` voxels per axis, neighbours sharing a voxel plane.
std::vector<PieceRegion> blockRegions(const GridView& grid, const PersistenceOptions& options)
{
  int64_t count[3];
  for (int a = 0; a < 3; ++a)
  {
    const int64_t span = grid.dims[a] - 1;
    count[a] = options.blockSize <= 0 || span <= 0 ? 1 : (span + options.blockSize - 1) / options.blockSize;
  }
  std::vector<PieceRegion> regions;
  int64_t b[3];
  for (b[2] = 0; b[2] < count[2]; ++b[2])
    for (b[1] = 0; b[1] < count[1]; ++b[1])
      for (b[0] = 0; b[0] < count[0]; ++b[0])
      {
        int64_t lo[3], hi[3];
        for (int a = 0; a < 3; ++a)
        {
          lo[a] = count[a] == 1 ? 0 : b[a] * options.blockSize;
          hi[a] = count[a] == 1 ? grid.dims[a] - 1 : std::min(grid.dims[a] - 1, lo[a] + options.blockSize);
        }
        regions.push_back(PieceRegion::fromVoxelExtent(grid.dims, lo, hi, options.construction));
      }
  // Blocks of one grid: each one's cuts are the global planes already, but
  // every piece lists them all, as the piece API asks.
  PieceRegion all = regions[0];
  for (const PieceRegion& r : regions)
    all.addCutsOf(r);
  for (PieceRegion& r : regions)
    for (int a = 0; a < 3; ++a)
      r.cuts[a] = all.cuts[a];
  return regions;
}

// The part of `grid` a region needs, as a view (no copy).
GridView pieceView(const GridView& grid, const PieceRegion& region, Construction construction, PieceRegion& adjusted)
{
  int64_t lo[3], hi[3];
  region.requiredVoxels(construction, lo, hi);
  GridView v = grid;
  adjusted = region;
  int64_t offset = 0;
  for (int a = 0; a < 3; ++a)
  {
    v.dims[a] = hi[a] - lo[a] + 1;
    offset += lo[a] * grid.strides[a];
    adjusted.origin[a] = lo[a];
  }
  v.data = static_cast<const char*>(grid.data) + offset * static_cast<int64_t>(scalarTypeSize(grid.type));
  return v;
}
// Steps 2 to 4 of PersistencePieces.h over the pieces of one image:
// union-find pairings, the Morse boundaries the reduction needs, PHAT.
PersistenceDiagram pairPieces(std::vector<MorsePiece>& pieces, const GridView& grid,
  const PersistenceOptions& options, int threads, persistence::StageLog& stages)
{
  MorsePairing pairing(grid.dims, options);
  const Device used = pieces[0].gradientDevice();
  const std::string warnings = pieces[0].warnings();
  for (MorsePiece& p : pieces)
    pairing.add(p.releaseSummary());
  const std::vector<int64_t> need = pairing.pairByUnionFind();
  stages.lap("union-find pairing");
  stages.progress(0.5);

  // Morse boundaries of what is left, each from the piece reporting it.
  if (pieces.size() == 1)
    pairing.addBoundaries(pieces[0].boundaries(need));
  else
  {
    std::vector<std::vector<int64_t>> lists(pieces.size());
    parallelFor(static_cast<int64_t>(pieces.size()), threads, [&](int, int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p)
        lists[static_cast<size_t>(p)] = pieces[static_cast<size_t>(p)].boundaries(need);
    });
    for (const auto& list : lists)
      pairing.addBoundaries(list);
  }
  pieces.clear();
  stages.lap("morse boundaries");
  stages.progress(0.8);

  PersistenceDiagram diagram = pairing.finish();
  stages.lap("reduction and diagram");
  diagram.device = used; // of the gradient (and, from the GPU, the paths)
  diagram.warnings = warnings;
  diagram.timings = stages.text();
  stages.progress(1.0);
  return diagram;
}

} // namespace

PersistenceDiagram computePersistence(const GridView& grid, const PersistenceOptions& options)
{
  persistence::checkInput(grid, options);
  persistence::StageLog stages(options);
  const int threads = options.threads > 0 ? options.threads : defaultThreadCount();

  // 1. Each piece: gradient, critical cells, gradient and dual paths.
  const std::vector<PieceRegion> regions = blockRegions(grid, options);
  std::vector<MorsePiece> pieces;
  pieces.reserve(regions.size());
  if (regions.size() == 1)
    pieces.emplace_back(grid, regions[0], options); // on the GPU when asked
  else
  {
    std::vector<std::unique_ptr<MorsePiece>> built(regions.size());
    PersistenceOptions one = options;
    one.threads = 1;
    one.device = Device::CPU; // blocks are the CPU threads' decomposition
    parallelFor(static_cast<int64_t>(regions.size()), threads, [&](int, int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
      {
        PieceRegion region;
        const GridView view = pieceView(grid, regions[static_cast<size_t>(r)], options.construction, region);
        built[static_cast<size_t>(r)].reset(new MorsePiece(view, region, one));
      }
    });
    for (auto& p : built)
      pieces.push_back(std::move(*p));
  }
  stages.lap("gradient and paths");
  stages.progress(0.4);
  return pairPieces(pieces, grid, options, threads, stages);
}

#ifdef TOPOVOX_WITH_CUDA
namespace
{
bool oneSize(const std::vector<GridView>& images)
{
  for (const GridView& g : images)
    if (g.type != images[0].type || g.dims[0] != images[0].dims[0] || g.dims[1] != images[0].dims[1] ||
      g.dims[2] != images[0].dims[2])
      return false;
  return true;
}

// A batch of images of one size on the GPU: as many at a time as its
// memory takes (MorseSummaryGPU.h), their summaries built together, then
// each image's pairing on a CPU thread. Throws what buildPiecesGPU throws.
std::vector<PersistenceDiagram> persistenceBatchGPU(
  const std::vector<GridView>& images, const PersistenceOptions& options)
{
  const int64_t n = static_cast<int64_t>(images.size());
  const int64_t chunk = morse::piecesPerLaunchGPU(images[0], options.construction);
  const int threads = options.threads > 0 ? options.threads : defaultThreadCount();
  PersistenceOptions one = options;
  one.threads = 1;
  one.progress = nullptr;
  const PieceRegion region = PieceRegion::whole(images[0].dims, options.construction);
  std::vector<PersistenceDiagram> out(images.size());
  for (int64_t b0 = 0; b0 < n; b0 += chunk)
  {
    const int64_t b1 = std::min(n, b0 + chunk);
    std::vector<morse::BuiltPiece> built = morse::buildPiecesGPU(
      std::vector<GridView>(images.begin() + b0, images.begin() + b1), options.construction, options.filtration);
    parallelFor(b1 - b0, threads, [&](int, int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i)
      {
        const GridView& image = images[static_cast<size_t>(b0 + i)];
        persistence::StageLog stages(one);
        std::vector<MorsePiece> pieces;
        pieces.emplace_back(image, region, one, std::move(built[static_cast<size_t>(i)]));
        stages.lap("gradient and paths");
        out[static_cast<size_t>(b0 + i)] = pairPieces(pieces, image, one, 1, stages);
      }
    });
    if (options.progress && !options.progress(static_cast<double>(b1) / static_cast<double>(n)))
      throw Aborted{};
  }
  return out;
}
} // namespace
#endif

std::vector<PersistenceDiagram> computePersistenceBatch(
  const std::vector<GridView>& images, const PersistenceOptions& options)
{
  for (const GridView& g : images)
    persistence::checkInput(g, options);
  std::string gpuWarning;
  const Device want = morse::persistenceDevice(options.device, &gpuWarning);
#ifdef TOPOVOX_WITH_CUDA
  if (want == Device::GPU && !images.empty() && oneSize(images))
  {
    try
    {
      return persistenceBatchGPU(images, options);
    }
    catch (const std::runtime_error& e)
    {
      gpuWarning += std::string(gpuWarning.empty() ? "" : "\n") + "persistence: the GPU batch failed (" +
        e.what() + "); using the CPU";
    }
  }
  else if (want == Device::GPU && !images.empty())
    gpuWarning += std::string(gpuWarning.empty() ? "" : "\n") +
      "persistence: a batch of images of different sizes runs on the CPU threads";
#else
  (void)want;
#endif
  const int64_t n = static_cast<int64_t>(images.size());
  std::vector<PersistenceDiagram> out(images.size());
  PersistenceOptions one = options;
  one.device = Device::CPU;
  one.progress = nullptr;
  std::atomic<int64_t> done{ 0 };
  std::atomic<bool> cancelled{ false };
  // The callback is the caller's (a VTK filter's UpdateProgress): only the
  // calling thread, which runs images too, reports; the others count.
  const std::thread::id caller = std::this_thread::get_id();
  forEachImage(n, options.threads, Device::CPU, [&](int64_t i, int threads) {
    PersistenceOptions mine = one;
    mine.threads = threads;
    out[static_cast<size_t>(i)] = computePersistence(images[static_cast<size_t>(i)], mine);
    const int64_t finished = ++done;
    if (options.progress && std::this_thread::get_id() == caller &&
      !options.progress(static_cast<double>(finished) / static_cast<double>(n)))
      cancelled = true;
    return !cancelled;
  });
  if (cancelled)
    throw Aborted{};
  if (!gpuWarning.empty() && !out.empty())
    out[0].warnings += std::string(out[0].warnings.empty() ? "" : "\n") + gpuWarning;
  return out;
}
} // namespace topovox

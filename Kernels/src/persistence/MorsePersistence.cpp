// MorsePersistence.cpp - the Morse engine on an image in one process: the
// image as one piece, or cut into blocks built in parallel, then the
// pieces' pairing (MorsePiece.cpp, MorsePairing.cpp). MPI ranks run the same
// steps with the exchange in between (vtkPersistenceDiagramFilter).
#include "topovox/Batch.h"
#include "topovox/Persistence.h"
#include "topovox/PersistencePieces.h"

#include "DiagramAssembly.h"
#include "MorseGradient.h"
#include "MorseSummaryGPU.h"

#include "../common/Parallel.h"

#include <algorithm>
#include <atomic>
#include <future>
#include <stdexcept>
#include <thread>

namespace topovox
{
namespace
{
// The blocks of size[a] voxels along axis a (0: one block along it),
// neighbours sharing a voxel plane.
std::vector<PieceRegion> blockRegions(const GridView& grid, Construction construction, const int64_t size[3])
{
  int64_t count[3];
  for (int a = 0; a < 3; ++a)
  {
    const int64_t span = grid.dims[a] - 1;
    count[a] = size[a] <= 0 || span <= 0 ? 1 : (span + size[a] - 1) / size[a];
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
          lo[a] = count[a] == 1 ? 0 : b[a] * size[a];
          hi[a] = count[a] == 1 ? grid.dims[a] - 1 : std::min(grid.dims[a] - 1, lo[a] + size[a]);
        }
        regions.push_back(PieceRegion::fromVoxelExtent(grid.dims, lo, hi, construction));
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
// On the GPU, a whole image whose summary does not fit the device is cut
// into slabs (MorseSummaryGPU.h, gpuSlabSpan): sets their span in size[]
// and returns it; 0 for a whole image, or off the GPU. *whole: the whole
// image's summary where the probe built its gradient to decide.
int64_t gpuSlabs(
  const GridView& grid, const PersistenceOptions& options, int64_t size[3], std::vector<morse::BuiltPiece>* whole)
{
#ifdef TOPOVOX_WITH_CUDA
  if (morse::persistenceDevice(options.device, nullptr) != Device::GPU)
    return 0;
  try
  {
    int axis = 0;
    const int64_t span = morse::gpuSlabSpan(grid, options.construction, options.filtration, &axis, whole);
    if (span <= 0)
      return 0;
    size[axis] = span;
    return span;
  }
  catch (const std::runtime_error&)
  {
    return 0; // the whole image's attempt reports the device's failure
  }
#else
  (void)grid;
  (void)options;
  (void)size;
  (void)whole;
  return 0;
#endif
}

// Steps 2 to 4 of PersistencePieces.h over the pieces of one image:
// union-find pairings, the Morse boundaries the reduction needs, PHAT.
PersistenceDiagram pairPieces(std::vector<MorsePiece>& pieces, const GridView& grid,
  const PersistenceOptions& options, int threads, persistence::StageLog& stages)
{
  MorsePairing pairing(grid.dims, options);
  const Device used = pieces[0].gradientDevice();
  for (MorsePiece& p : pieces)
    pairing.add(p.releaseSummary());
  // Morse boundaries of what is left, each from the piece reporting it:
  // fetched as soon as the pairing knows which (in 3D, once the top
  // dimension is paired, while dimension 0's union-find goes on: the
  // union-find stage then holds the traversals' time), added after it. A
  // numbered summary's are computed on the GPU, held there as slots and
  // positions, and given as matrix rows once the rows are known; the rest
  // come as cells.
  std::vector<std::vector<int64_t>> lists(pieces.size());
  auto fetch = [&](const std::vector<int64_t>& need, const BoundaryRows& slots) {
    if (pieces.size() == 1)
      lists[0] = pieces[0].boundaries(need, slots);
    else
      parallelFor(static_cast<int64_t>(pieces.size()), threads, [&](int, int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p)
          lists[static_cast<size_t>(p)] = pieces[static_cast<size_t>(p)].boundaries(need);
      });
  };
  const std::vector<int64_t> need = pairing.pairByUnionFind(fetch);
  stages.lap("union-find pairing");
  stages.progress(0.5);
  if (!need.empty())
    fetch(need, pairing.boundaryRows());
  if (pieces.size() == 1)
  {
    // The device's records as matrix rows, now that the rows are known.
    BoundaryRecords held;
    RecordStarts starts;
    const std::vector<int64_t> more = pieces[0].heldBoundaries(pairing.boundaryRows().rowOf, &held, &starts);
    lists[0].insert(lists[0].end(), more.begin(), more.end());
    pairing.addBoundaryRows(held, starts);
  }
  for (std::vector<int64_t>& list : lists)
  {
    pairing.addBoundaries(list);
    std::vector<int64_t>().swap(list);
  }
  // After the boundaries, which may have fallen back to the CPU.
  std::string warnings;
  for (const MorsePiece& p : pieces)
    if (!p.warnings().empty() && warnings.find(p.warnings()) == std::string::npos)
      warnings += std::string(warnings.empty() ? "" : "\n") + p.warnings();
  pieces.clear();
  stages.lap("morse boundaries");
  stages.progress(0.8);

  pairing.reduce();
  stages.lap("reduction");
  stages.progress(0.95);
  PersistenceDiagram diagram = pairing.finish();
  stages.lap("diagram");
  diagram.device = used; // of the gradient (and, from the GPU, the paths)
  diagram.warnings = warnings;
  diagram.timings = stages.text();
  stages.progress(1.0);
  return diagram;
}

} // namespace

bool persistenceAsksForGpu(Device requested)
{
  return requestedDevice(requested) == Device::GPU;
}

PersistenceDiagram computePersistence(const GridView& grid, const PersistenceOptions& options)
{
  persistence::checkInput(grid, options);
  persistence::StageLog stages(options);
  const int threads = threadCount(options.threads);

  // 1. Each piece: gradient, critical cells, gradient and dual paths.
  int64_t size[3] = { options.blockSize, options.blockSize, options.blockSize };
  std::vector<morse::BuiltPiece> probed; // the whole image's summary, where the device probe built it
  const int64_t slabSpan = options.blockSize > 0 ? 0 : gpuSlabs(grid, options, size, &probed);
  const std::vector<PieceRegion> regions = blockRegions(grid, options.construction, size);
  std::vector<MorsePiece> pieces;
  pieces.reserve(regions.size());
  if (regions.size() == 1 && !probed.empty())
    pieces.emplace_back(grid, regions[0], options, std::move(probed[0]));
  else if (regions.size() == 1)
    pieces.emplace_back(grid, regions[0], options); // on the GPU when asked
  else if (slabSpan > 0)
  {
    // Streamed: one slab's gradient on the device at a time, built by a
    // thread of its own (upload, kernel, download), while every other
    // thread does the CPU's part of the slab before it (values, critical
    // cells, path ends): the slabs' GPU and CPU parts overlap. The device
    // holds one slab's gradient at a time, as gpuSlabSpan assumes.
    std::vector<PieceRegion> local(regions.size());
    std::vector<GridView> views;
    for (size_t r = 0; r < regions.size(); ++r)
      views.push_back(pieceView(grid, regions[r], options.construction, local[r]));
    auto ahead = [&](size_t r) {
      return std::async(std::launch::async, [&, r] { return morse::pieceGradient(views[r], local[r], options); });
    };
    // (A pending future waits for its thread when destroyed, so that an
    // exception here leaves no thread on these locals.)
    std::future<morse::PieceGradient> next = ahead(0);
    for (size_t r = 0; r < regions.size(); ++r)
    {
      morse::PieceGradient gradient = next.get();
      if (r + 1 < regions.size())
        next = ahead(r + 1);
      pieces.emplace_back(views[r], local[r], options, std::move(gradient));
      stages.progress(0.4 * static_cast<double>(r + 1) / static_cast<double>(regions.size()));
    }
  }
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
  // The limit over all pieces together: each CPU piece has checked its own
  // count as soon as its gradient had it (MorsePiece), which stops early on
  // noise but cannot see a sum; the GPU's pieces check only here. For a
  // single CPU piece this repeats its check, at the cost of one addition.
  if (options.maxCriticalCells >= 0)
  {
    int64_t critical = 0;
    for (const MorsePiece& p : pieces)
      critical += static_cast<int64_t>(p.summary().critical.size());
    if (critical > options.maxCriticalCells)
      throw CriticalCellLimit(critical, persistenceCellCount(grid, options.construction));
  }
  PersistenceDiagram diagram = pairPieces(pieces, grid, options, threads, stages);
  if (slabSpan > 0)
    diagram.warnings += std::string(diagram.warnings.empty() ? "" : "\n") +
      "persistence: the image needs more device memory than is free (or TOPOVOX_GPU_MEMORY_LIMIT allows); its " +
      "gradient was built on the GPU in " + std::to_string(regions.size()) + " slabs of " +
      std::to_string(slabSpan) + " voxels, the rest on the CPU threads";
  return diagram;
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
  const int threads = threadCount(options.threads);
  PersistenceOptions one = options;
  one.threads = 1;
  one.progress = nullptr;
  const PieceRegion region = PieceRegion::whole(images[0].dims, options.construction);
  std::vector<PersistenceDiagram> out(images.size());
  // Progress: the images paired so far, reported after each image the
  // calling thread (worker 0 of parallelFor) pairs, so that a batch in one
  // chunk does not jump from 0 to 1; a cancel stops the other workers at
  // their next image.
  std::atomic<int64_t> paired{ 0 };
  std::atomic<bool> cancelled{ false };
  for (int64_t b0 = 0; b0 < n && !cancelled; b0 += chunk)
  {
    const int64_t b1 = std::min(n, b0 + chunk);
    std::vector<morse::BuiltPiece> built = morse::buildPiecesGPU(
      std::vector<GridView>(images.begin() + b0, images.begin() + b1), options.construction, options.filtration);
    parallelForDynamic(b1 - b0, threads, 1, [&](int worker, int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1 && !cancelled; ++i)
      {
        const GridView& image = images[static_cast<size_t>(b0 + i)];
        persistence::StageLog stages(one);
        std::vector<MorsePiece> pieces;
        pieces.emplace_back(image, region, one, std::move(built[static_cast<size_t>(i)]));
        stages.lap("gradient and paths");
        out[static_cast<size_t>(b0 + i)] = pairPieces(pieces, image, one, 1, stages);
        const int64_t done = ++paired;
        if (worker == 0 && options.progress &&
          !options.progress(static_cast<double>(done) / static_cast<double>(n)))
          cancelled = true;
      }
    });
  }
  if (cancelled)
    throw Aborted{};
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

// Persistence.h - persistent homology of the cubical complex of an image.
//
// Complex, filtration and NaN rule are those of EulerCurve.h: V construction
// (voxels are vertices, a cube takes the max of its vertices) or T (voxels are
// top cubes, a face takes the min of the cubes containing it); sublevel or
// superlevel; NaN voxels are absent (V: every cell touching one is absent;
// T: a cell is absent when every cube containing it is NaN). Coefficients
// are Z/2.
//
// A pair (dimension k, birth b, death d): a k-dimensional class is born when
// the filtration reaches b and dies at d. Pairs with b == d are not reported.
// Classes that never die are essential (death = +inf for sublevel, -inf for
// superlevel): the homology of the whole complex, always reported (within
// maxDimension, whatever minPersistence), even one born at +inf. In a superlevel filtration b > d: it is the sublevel
// filtration of -image, reported in the image's own values, which is how
// CubicalRipser users compare (computePH(-image), then negate).
//
// The reported voxels: birthVoxel attains the value of the cell that creates
// the class, deathVoxel that of the cell that kills it, so that
// image[birthVoxel] == birth and image[deathVoxel] == death always hold.
// Among voxels of equal value the tie-break is the filtration order below.
//
// Filtration order (the tie-break rule): cells by value, then by dimension
// (faces before cofaces), then by the index of the cell on the doubled grid
// (x fastest). It is compatible with the face relation, so the diagram is
// that of the image; other compatible orders (CubicalRipser's) give the same
// multiset of (dimension, birth, death). Values are compared as doubles:
// 64-bit integers beyond 2^53 that round to the same double tie.
#pragma once

#include "topovox/Device.h"
#include "topovox/EulerCurve.h"
#include "topovox/Grid.h"
#include "topovox/Progress.h"

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace topovox
{

struct PersistenceOptions
{
  Construction construction = Construction::V;
  Filtration filtration = Filtration::Sublevel;
  int maxDimension = 3;        // report pairs of dimension <= this
  double minPersistence = 0.0; // report finite pairs with |death - birth| > this
  Device device = Device::Auto;
  int threads = 0;
  // Morse engine: cut the image into blocks of this many voxels per axis,
  // each built alone (in parallel, one thread each) and then paired
  // together, as MPI ranks do (PersistencePieces.h); 0: one block using all
  // threads. The diagram is the same either way.
  int64_t blockSize = 0;
  // Morse engine, one image: stop with CriticalCellLimit, before pairing,
  // when the discrete gradient has more critical cells than this (-1: no
  // limit). The pairing's memory grows with them (about 200 bytes each on
  // the host, beside about 4.5 bytes a cell for the rest: measured peaks,
  // bench/README.md), so a caller with a memory budget (the command line's
  // --memory-limit-gb) can run a large smooth image, which has few, and
  // refuse noise of the same size, which has one cell in six or ten.
  int64_t maxCriticalCells = -1;
  ProgressCallback progress;
};

// The Morse engine's host memory (peak resident, whole process, CPU path;
// the GPU path's is less): about 4 bytes a cell of the complex whatever the
// image (the gradient's three, the values) plus about 180 bytes a critical
// cell of its gradient (its summary, the pairing's tables, PHAT's columns,
// the diagram). Measured (bench/README.md, nineteenth session): 4.3 and
// 5.3 bytes a cell on bonsai_256 and colin27_t1, 4.4 on a 1024^3
// upsampled CT, 20 to 26 on uniform noise (one cell in six to eleven
// critical). With margins:
constexpr double kMorseBytesPerCell = 4.5;
constexpr double kMorseBytesPerCriticalCell = 200;

// The model's whole: sizeBytes (fitPersistenceMemory's *needed) plus the
// critical cells' share.
inline double morseMemoryBytes(double sizeBytes, double criticalCells)
{
  return sizeBytes + criticalCells * kMorseBytesPerCriticalCell;
}

// The cells of the image's cubical complex: on the doubled grid, 2n - 1
// positions along an axis of n voxels for V (voxels are vertices), 2n + 1
// for T (voxels are cubes, with the faces on the border); axes of one voxel
// do not count.
int64_t persistenceCellCount(const GridView& grid, Construction construction);

// A memory budget for computePersistence (Morse engine, one image): false
// when the image's size alone needs more than budgetBytes; otherwise
// options.maxCriticalCells is set to what the rest of the budget holds, so
// that the engine stops with CriticalCellLimit, before pairing, where the
// gradient has more (noise) instead of running out of memory. *needed
// (when given): the size's share in bytes, the input's array included.
bool fitPersistenceMemory(const GridView& grid, double budgetBytes, PersistenceOptions& options, double* needed);

// The default budget: 80% of this machine's memory (8 GiB where it cannot
// be read).
double defaultPersistenceMemoryBudget();

// What computePersistence throws when options.maxCriticalCells is exceeded
// (on the CPU path as soon as a piece's gradient has more: `cells` is then
// that piece's).
struct CriticalCellLimit : std::runtime_error
{
  CriticalCellLimit(int64_t found, int64_t cellCount)
    : std::runtime_error("persistence: the discrete gradient has " + std::to_string(found) + " critical cells of " +
        std::to_string(cellCount) + ", more than the limit given")
    , criticalCells(found)
    , cells(cellCount)
  {
  }
  int64_t criticalCells, cells;
};

struct PersistencePair
{
  int dimension = 0;
  double birth = 0, death = 0;
  bool essential = false;
  int64_t birthVoxel[3] = { 0, 0, 0 };
  int64_t deathVoxel[3] = { -1, -1, -1 }; // -1 for essential classes
  double persistence() const;            // |death - birth|, +inf if essential
};

struct PersistenceDiagram
{
  std::vector<PersistencePair> pairs; // by dimension, birth, death (in filtration order), then birth and death voxel
  int dimension = 0;                  // of the complex
  Device device = Device::CPU; // where the gradient was built
  std::string warnings;
  std::string timings; // one "stage: seconds" line per stage
  int64_t cells = 0;         // of the complex
  int64_t criticalCells = 0; // of the gradient (Morse engine; 0 otherwise)
};

// The discrete Morse engine: a discrete gradient built voxel by voxel (each
// voxel matches the cells it owns, as in Robins, Wood and Sheppard's
// lower-star algorithm, and only within one stratum of the block
// decomposition), the Morse boundary of critical cells by the parity of
// V-paths, and the reduction of the Morse boundary matrix (a lock-free
// reduction on the threads for matrices of 2^18 columns or more, else
// PHAT's twist reduction; TOPOVOX_PHAT_REDUCTION picks).
// Dimension 0 is paired by union-find along the gradient and the top
// dimension by union-find in the dual (in 3D the two at once), so only the
// middle dimension of a 3D image needs Morse boundaries and a matrix.
// Device: options.device GPU (or Auto with TOPOVOX_DEVICE=gpu; CUDA
// builds) builds the summary of a whole image on the GPU - gradient,
// critical cells, the ends of gradient and dual paths
// (src/persistence/MorseSummaryGPU.h) - and its Morse boundaries there too,
// leaving union-find and PHAT to the CPU threads; the diagram is the CPU's.
// Auto stays on the CPU: a process pays about 0.3 s to start CUDA, which
// only large volumes (bonsai_256: 0.59 s against 1.13 s on 16 threads) or
// a session that computes many diagrams win back (in one process bonsai_256
// takes 0.11 s on an H200, 0.61 s on 16 threads: bench/README.md). Blocks
// (blockSize > 0) run on the CPU threads; MPI ranks' pieces
// (PersistencePieces.h) get only their gradient from the GPU. An image
// whose summary does not fit 80% of the free device memory (or the bytes
// TOPOVOX_GPU_MEMORY_LIMIT allows) is streamed: cut into slabs along its
// slowest axis, each slab's gradient built on the device in turn by a
// thread of its own while the CPU threads do the rest of the slab before
// it (the diagram's warning says so; pairs equal by
// value, the voxels reported among ties may differ, as with blocks). A
// CUDA failure anywhere (out of memory included) falls back to the CPU
// with a warning, the Morse boundaries by rebuilding the gradient there.
// Memory on
// the CPU: 3 bytes a cell and 24 a voxel plus the critical cells (peak
// resident memory of the command line measured 15 bytes a cell on a
// float32 256^3 Gaussian random field, 23 on 120^3 uniform noise, 4.4 on
// bonsai_256); on the GPU, 5 bytes a cell and up to
// 40 a voxel (the ranks' sort) of device memory. Exact; tested against the
// reference engine below, CubicalRipser and GUDHI.
PersistenceDiagram computePersistence(const GridView& grid, const PersistenceOptions& options);
// Whether computePersistence would take `requested` as a request for the
// GPU (GPU, or Auto with TOPOVOX_DEVICE=gpu), whether or not one is present:
// for a caller that starts CUDA early (prepareGpu in Device.h).
bool persistenceAsksForGpu(Device requested);

// Many images at once (a training batch, the slices of a series): each
// image's diagram as computePersistence gives it, the images shared among
// the CPU threads (one thread each; a batch smaller than the threads gives
// the rest to the images). options.progress sees the fraction of images
// done. On the GPU (options.device as above), images of one size and type
// are summarised together, as many at a time as a quarter of the free
// device memory holds (TOPOVOX_GPU_BATCH_IMAGES caps it), and paired on
// the CPU threads; a batch of mixed sizes runs on the CPU, and the first
// diagram's warning says so.
std::vector<PersistenceDiagram> computePersistenceBatch(
  const std::vector<GridView>& images, const PersistenceOptions& options);

// The reference engine: every cell of the complex, the full boundary matrix
// in filtration order, reduced by PHAT (twist reduction). Exact, simple and
// memory hungry (about 140 bytes a cell, 1.1 kB a voxel in 3D): the oracle of the tests and
// the engine for small images (it ignores device and threads). Throws
// std::invalid_argument on bad input.
PersistenceDiagram computePersistenceReference(const GridView& grid, const PersistenceOptions& options);

// The persistence curve: for each distinct finite persistence p of the pairs
// (ascending), the number of pairs of each dimension whose persistence is
// >= p; essential classes (infinite persistence) count everywhere. A
// summary of the diagram to plot, as TTK's persistence curves are.
struct PersistenceCurve
{
  std::vector<double> persistence;
  std::vector<std::array<int64_t, 4>> pairs; // per threshold, per dimension
};
PersistenceCurve persistenceCurve(const std::vector<int>& dimensions, const std::vector<double>& persistence);

} // namespace topovox

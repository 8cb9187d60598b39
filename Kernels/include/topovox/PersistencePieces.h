// PersistencePieces.h - persistence of an image held in pieces (MPI ranks,
// or blocks of one image): each piece builds its part of the Morse complex
// alone, and one place pairs the parts.
//
// The whole image's cubical complex (the doubled grid of CubicalCells.h:
// cell coordinates 0 .. 2n-2 per axis in V, 0 .. 2n in T) is cut by planes
// at even doubled coordinates. A piece is the closure of the cells between
// two consecutive cuts on each axis. Its discrete gradient is stratified
// (MorseGradient.h): no cell is paired across a cut plane, so every V-path
// that starts in a piece stays in it, and the cells of a shared cut plane get
// the same gradient in both pieces. Each cell is reported by exactly one
// piece: the one whose closure holds it, the lower one for a shared plane.
//
// The flow, the same for blocks in one process (computePersistence) and for
// ranks (vtkPersistenceDiagramFilter):
//   1. every piece: MorsePiece(local array, region) -> summary()
//   2. one place:   MorsePairing.add(each summary); cells = pairByUnionFind()
//   3. every piece: boundaries(cells)              -> MorsePairing.addBoundaries
//   4. one place:   reduce(), then finish() -> the diagram
// Summaries and boundaries are plain arrays, so they travel as bytes. A
// whole image whose summary the GPU numbered (one piece, one process) runs
// steps 2 and 3 together: pairByUnionFind(request) asks for the boundaries
// as soon as it knows them, the device computes them meanwhile and holds
// them until the matrix rows are known (boundaries with slots, then
// heldBoundaries -> MorsePairing.addBoundaryRows).

#pragma once

#include "topovox/Persistence.h"
#include "topovox/UninitializedAllocator.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace topovox
{
namespace morse
{
struct BuiltPiece;    // what the GPU built for a whole image (src/persistence/MorseSummaryGPU.h)
struct PieceGradient; // a piece's gradient built ahead (src/persistence/MorseGradient.h)
}

struct PieceRegion
{
  int64_t wholeDims[3] = { 1, 1, 1 }; // voxels of the whole image
  int64_t origin[3] = { 0, 0, 0 };    // whole-image voxel of the local array's first voxel
  // The piece's closure on the whole image's doubled grid, inclusive bounds
  // (even; 0 .. 0 on axes of one voxel).
  int64_t cellLo[3] = { 0, 0, 0 }, cellHi[3] = { 0, 0, 0 };
  // The cut planes (even whole doubled coordinates) of the whole
  // decomposition on each axis. Every piece must know every plane that
  // crosses it, also those that only bound other pieces (pieces that do not
  // form a grid, as VTK's block splits), so that all agree on the strata.
  // fromVoxelExtent puts in the piece's own boundaries; addCutsOf the others'.
  std::vector<int64_t> cuts[3];

  // The whole image as one piece.
  static PieceRegion whole(const int64_t wholeDims[3], Construction construction);
  // The piece of voxels lo..hi (inclusive) on each axis, where neighbouring
  // pieces share their boundary plane of voxels, as VTK's piece extents do
  // (cut at that plane; in T the shared voxels belong to the upper piece).
  static PieceRegion fromVoxelExtent(
    const int64_t wholeDims[3], const int64_t lo[3], const int64_t hi[3], Construction construction);
  // Adds the boundaries of another piece of the same decomposition.
  void addCutsOf(const PieceRegion& other);
  // The voxels (inclusive, whole-image coordinates) the local array must
  // hold: those the closure's cells touch. V: the closure's own voxels. T:
  // one more plane below each lower cut.
  void requiredVoxels(Construction construction, int64_t lo[3], int64_t hi[3]) const;
};

// A critical cell: doubled-grid index in the whole image, the whole-image
// linear index of the voxel that owns it (attains its value), its value in
// filtration orientation (negated for superlevel; NaN never), dimension.
// Plain values, set in full by whoever makes one: no default initialisers,
// so that a summary's array of 85 M of them (a 512^3 field) is sized
// without being zeroed on one thread (SummaryArray below).
struct MorseCriticalCell
{
  int64_t cell;
  int64_t voxel;
  double value;
  int32_t dimension;
};

// A summary's arrays: gigabytes at 512^3, each written in full on the
// threads once sized, so their room is not zeroed first on one thread
// (UninitializedAllocator.h: new elements are left unwritten).
template <typename T>
using SummaryArray = UninitializedVector<T>;

struct MorsePieceSummary
{
  // Those the piece reports: in index order, or in the filtration order
  // (value, dimension, cell) where the GPU has summarised a whole image
  // (MorseSummaryCUDA.cu). The pairing takes either (it checks which).
  SummaryArray<MorseCriticalCell> critical;
  // Dimension 0 (images of dimension >= 2): per reported critical edge,
  // (edge, minimum, minimum): where its two ends' gradient paths end.
  SummaryArray<int64_t> edgeEnds;
  // The top dimension (no NaN): per critical (d-1)-cell of the closure and
  // per coface inside the piece, (cell, maximum): where the dual V-path
  // through that coface ends; -1 for the outside of the image.
  SummaryArray<int64_t> dualEnds;
  bool hasNan = false;
  // Where the GPU has put a whole image's critical cells in the filtration
  // order, the path ends may come numbered instead (numberedEnds; edgeEnds
  // and dualEnds then empty): per critical cell, in that order, its two
  // ends as the numbers the pairing's union-finds run on. For a critical
  // edge: the two minima's numbers, the critical vertices being numbered
  // 0, 1, ... in filtration order. For a critical (d-1)-cell: the two
  // maxima's, the top-dimensional critical cells numbered likewise and the
  // outside of the image numbered after them all. -1 for the cells of other
  // dimensions. Each has one entry per critical cell where its union-find
  // runs (edges: images of dimension 2 or more; the dual: no NaN), and none
  // otherwise. The pairing then needs no lookup of the ends' cells
  // (MorsePairing.cpp).
  SummaryArray<std::array<int32_t, 2>> edgeEndNumbers, dualEndNumbers;
  bool numberedEnds = false;
  // Numbered ends written out as edgeEnds and dualEnds (numberedEnds
  // false after), for a complex of dimension `top`; on `threads` threads.
  // Throws std::logic_error on numbers that name no cell.
  void expandNumberedEnds(int top, int threads);

  std::vector<uint8_t> toBytes() const;
  // Throws std::invalid_argument on bytes that are not a summary.
  static MorsePieceSummary fromBytes(const uint8_t* bytes, size_t size);
};

// How the GPU may give the Morse boundaries of a numbered summary
// (MorsePieceSummary::numberedEnds, whose cells' positions in the filtration
// order the device knows) in the pairing's own terms
// (MorsePairing::boundaryRows): per position, the slot of the cell's
// boundary among those asked for and the cell's row in the matrix, -1 for
// none. The slots are known as soon as the boundaries wanted are, the rows
// only once dimension 0's union-find is done (rowOf null before: the
// device then holds its records until MorsePiece::heldBoundaries gets
// them). positions 0: no such translation.
struct BoundaryRows
{
  const int32_t* slotOf = nullptr;
  const int32_t* rowOf = nullptr;
  int64_t positions = 0;
};

// The GPU's boundary records as matrix rows (MorsePiece::heldBoundaries,
// MorsePairing::addBoundaryRows) and where each starts: sized unwritten as
// the summaries' arrays, since the device's copy writes every value (a
// std::vector zeroed a 512^3 field's 1.7 GB of records on one thread
// first).
using BoundaryRecords = SummaryArray<int64_t>;
using RecordStarts = SummaryArray<size_t>;

class MorsePiece
{
public:
  // `local` holds at least region.requiredVoxels() (more is allowed); its
  // voxel (0,0,0) is region.origin. Throws std::invalid_argument if not.
  MorsePiece(const GridView& local, const PieceRegion& region, const PersistenceOptions& options);
  // A whole image (region without cut planes) whose summary, and gradient
  // where boundaries need it, the GPU built in a batch.
  MorsePiece(const GridView& image, const PieceRegion& region, const PersistenceOptions& options,
    morse::BuiltPiece&& built);
  // A piece whose gradient morse::pieceGradient built ahead, from the same
  // arguments (the streamed slabs build the next slab's on the GPU while
  // this one's rest runs on the CPU threads).
  MorsePiece(const GridView& local, const PieceRegion& region, const PersistenceOptions& options,
    morse::PieceGradient&& gradient);
  ~MorsePiece();
  MorsePiece(MorsePiece&&) noexcept;
  MorsePiece& operator=(MorsePiece&&) noexcept;

  const MorsePieceSummary& summary() const;
  // Where the gradient was built (options.device: GPU when asked and
  // possible, Auto resolved as EulerCurve.h does), and why not where asked.
  Device gradientDevice() const;
  const std::string& warnings() const;
  MorsePieceSummary releaseSummary(); // moves it out (summary() is empty after)
  // The Morse boundaries (Z/2, by V-path parity) of those of `cells` (whole
  // doubled-grid indices of critical cells) this piece reports, flattened:
  // cell, count, then count critical cells in increasing index order.
  std::vector<int64_t> boundaries(const std::vector<int64_t>& cells) const;
  // The same, but where the GPU computes them from a numbered summary and
  // `slots` gives the slot of each cell (MorsePairing::boundaryRows; its
  // rows are not needed yet), the device holds its records, as slots and
  // the faces' positions, until heldBoundaries asks for them with the rows.
  // What is returned is the rest, as boundaries() gives it.
  std::vector<int64_t> boundaries(const std::vector<int64_t>& cells, const BoundaryRows& slots) const;
  // The records the device holds (above), translated with the rows now
  // known (rowOf: per position) into *translated, and where each starts
  // into *starts. Where the device fails meanwhile, those boundaries are
  // computed on the CPU and returned as boundaries() gives them (with a
  // warning). Nothing where none is held.
  std::vector<int64_t> heldBoundaries(const int32_t* rowOf, BoundaryRecords* translated, RecordStarts* starts) const;

private:
  struct Impl;
  std::unique_ptr<Impl> P;
};

class MorsePairing
{
public:
  MorsePairing(const int64_t wholeDims[3], const PersistenceOptions& options);
  ~MorsePairing();

  void add(MorsePieceSummary&& piece);
  // Called by pairByUnionFind, for a single numbered summary of a 3D image
  // without NaN, with the cells (sorted) whose Morse boundaries the
  // reduction needs and their slots (BoundaryRows without rows) as soon as
  // they are known: once the top dimension is paired, while dimension 0's
  // union-find goes on on the other threads. The boundaries can be computed
  // there (the GPU holds them until the rows are known: MorsePiece::
  // heldBoundaries) and are added once pairByUnionFind has returned.
  using BoundaryRequest = std::function<void(const std::vector<int64_t>& cells, const BoundaryRows& slots)>;
  // Pairs dimension 0 and the top dimension by union-find; returns the
  // cells (sorted) whose Morse boundaries the matrix reduction needs, or
  // nothing where it has given them to `early` already.
  std::vector<int64_t> pairByUnionFind(const BoundaryRequest& early = nullptr);
  void addBoundaries(const std::vector<int64_t>& flat); // as MorsePiece::boundaries gives them
  // After pairByUnionFind, for a single numbered summary: what the GPU needs
  // to give the boundaries as matrix rows (positions 0 otherwise). Valid
  // until the boundaries are added.
  BoundaryRows boundaryRows() const;
  // Records translated by the GPU (MorsePiece::heldBoundaries): slot,
  // count, rows; `starts`, where given, says where each record starts
  // (in any order), else the records are walked to find them.
  void addBoundaryRows(const BoundaryRecords& flat, const RecordStarts& starts = {});
  // Reduces the rest with PHAT (once; finish() calls it if not yet done).
  void reduce();
  // Assembles the diagram of every pair found.
  PersistenceDiagram finish();
  int64_t criticalCellCount() const;

private:
  struct Impl;
  std::unique_ptr<Impl> P;
};

} // namespace topovox

// EulerCurve.h - Euler characteristic curves of cubical complexes of images.
//
// Conventions (the same on the CPU and the GPU, bit for bit):
//
// Constructions, as in CubicalRipser:
//   V: each voxel is a vertex; a cube spans 2^k voxels and its value is the
//      max of its vertices (sublevel) or the min (superlevel).
//   T: each voxel is a top-dimensional cube; a lower-dimensional face takes
//      the min of the voxels whose cubes contain it (sublevel) or the max.
// Only axes with more than one sample count: a 256x256x1 image is a 2D
// complex, so its cell counts are those of a 2D complex.
//
// Filtrations: Sublevel: ECC(t) = sum over cells with value <= t of
//   (-1)^dim.  Superlevel: cells with value >= t; thresholds then decrease.
//
// NaN: a NaN voxel is never in any sublevel or superlevel set, as if it were
//   absent (in V every cube touching it is absent too; in T its cube is
//   absent). +-Inf are ordinary values.
//
// Thresholds:
//   Exact: one threshold per distinct (non-NaN) value present, in filtration
//     order. Values are reported as doubles; 64-bit integers beyond 2^53 may
//     round in the reported threshold, never in the counting.
//   Bins:  N thresholds t_j = min + j (max - min) / (N - 1), j = 0..N-1, over
//     the finite min and max (N = 1 gives t = max). A +Inf voxel lies beyond
//     the last threshold in a sublevel filtration and is not counted.
//   List:  the caller's thresholds, strictly increasing for sublevel and
//     strictly decreasing for superlevel filtrations.
//   Auto:  Exact for integer data, Bins for floating point data.
// Every comparison "value <= t" is made in the image's own scalar type: a
// threshold is first rounded down to the largest value of that type that is
// <= t (up, for superlevel), which changes no answer.
//
// How: each cell is owned by one voxel, the one that attains its value in
// the total order (value in filtration order, NaN last, then linear index):
// in V the last of its vertices, in T the first of the cubes containing it
// (EulerCells.h). Each voxel counts its owned cells per dimension; a
// histogram of those counts over the thresholds, then a prefix sum, is the
// curve. Because ownership depends on the 3x3x3 neighbourhood only, a piece
// of a larger image (MPI) counts exactly its share of cells when it owns a
// sub-box and the grid it passes extends one voxel beyond that box wherever
// the whole image does (the halo): voxels beyond the grid are taken not to
// exist, and the image's dimension is read from the grid, so a piece must
// keep every real axis longer than one sample.
#pragma once

#include "topovox/Device.h"
#include "topovox/Grid.h"
#include "topovox/Progress.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace topovox
{

enum class Construction : int
{
  V = 0,
  T = 1
};
enum class Filtration : int
{
  Sublevel = 0,
  Superlevel = 1
};
enum class ThresholdMode : int
{
  Auto = 0,
  Exact = 1,
  Bins = 2,
  List = 3
};

const char* constructionName(Construction c);
const char* filtrationName(Filtration f);
const char* thresholdModeName(ThresholdMode m);
bool parseConstruction(const std::string& s, Construction& out);
bool parseFiltration(const std::string& s, Filtration& out);
bool parseThresholdMode(const std::string& s, ThresholdMode& out);

struct EulerCurveOptions
{
  Construction construction = Construction::V;
  Filtration filtration = Filtration::Sublevel;
  ThresholdMode thresholdMode = ThresholdMode::Auto;
  int binCount = 256;              // for Bins
  std::vector<double> thresholds;  // for List
  Device device = Device::Auto;
  int threads = 0;                 // CPU threads; 0 = defaultThreadCount()
  // Voxels whose cells this call counts; empty (all zero) = the whole grid.
  // Voxels outside it are read as neighbours only (MPI pieces, halos).
  Box owned;
  // Reports progress and can abort (CPU path; the GPU path reports at the end).
  ProgressCallback progress;
};

// Per-threshold counts that are NOT yet cumulative: bin j holds the cells
// whose value falls in (t_{j-1}, t_j] (sublevel) or [t_j, t_{j-1}) (superlevel).
// Histograms of pieces of one image add up (MPI reduction).
struct EulerHistogram
{
  std::vector<double> thresholds;
  std::vector<std::array<int64_t, 4>> cells; // per bin, per dimension 0..3
};

struct EulerCurve
{
  std::vector<double> thresholds;
  std::vector<std::array<int64_t, 4>> cells; // cumulative cell counts
  std::vector<int64_t> euler;                // sum_k (-1)^k cells[k]
  int dimension = 0;                         // of the complex
  Device device = Device::CPU;               // where it ran
  std::string warnings;                      // device fallbacks etc.
};

// Min and max over the owned voxels, ignoring NaN (and, for the finite
// pair, +-Inf); counts of voxels and of NaN voxels.
struct ValueSummary
{
  double min = 0, max = 0;             // over non-NaN voxels
  double finiteMin = 0, finiteMax = 0; // over finite voxels
  int64_t voxels = 0, nans = 0, finite = 0;
};

ValueSummary summarizeValues(const GridView& grid, const Box& owned, int threads = 0);

// Sorted distinct non-NaN values of the owned voxels (ascending).
std::vector<double> distinctValues(const GridView& grid, const Box& owned, int threads = 0);

// The thresholds an option set asks for, given the values present. `distinct`
// is only read in Exact mode and must be ascending. Throws std::invalid_argument
// with a user-facing reason (e.g. a List that is not monotone).
std::vector<double> resolveThresholds(const EulerCurveOptions& options, ScalarType type,
  const ValueSummary& summary, const std::vector<double>& distinct);

// One pass over the owned voxels: the per-bin histogram for given thresholds.
// Throws std::invalid_argument for bad input.
EulerHistogram eulerHistogram(const GridView& grid, const EulerCurveOptions& options,
  const std::vector<double>& thresholds, Device* usedDevice = nullptr,
  std::string* warnings = nullptr);

// Prefix sum of a (possibly reduced) histogram into a curve.
EulerCurve accumulateHistogram(const EulerHistogram& histogram, int dimension);

// Everything at once: thresholds, histogram, curve.
EulerCurve computeEulerCurve(const GridView& grid, const EulerCurveOptions& options);

} // namespace topovox

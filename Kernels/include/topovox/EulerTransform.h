// EulerTransform.h - the Euler characteristic transform of an image: for
// each direction u, the Euler characteristic curve of the height filtration
//   h(p) = weight * X(p) + alpha * <u, p>
// on the image's cubical complex, p the voxel's position in world
// coordinates (origin + spacing * index). A cell's height is the max of h
// over its vertices (V construction) or the min over the cubes containing it
// (T), exactly as EulerCurve.h defines a cell's value: the transform for
// direction u is the Euler curve of the image h (sublevel sets h <= t).
//
// weight = 0 gives the classic transform of a shape: the shape is the whole
// image, or the voxels with X >= shapeLevel. Voxels outside the shape and
// NaN voxels are absent (EulerCurve.h's NaN rule).
//
// Directions: given as unit vectors (normalised here), or spread evenly:
// angles 2 pi k / N in the plane of a 2D image's axes, the Fibonacci sphere
// in 3D, +-e in 1D. Thresholds: `binCount` evenly spaced over the range of h
// over all directions (so that every direction shares them and the transform
// is an image), or a strictly increasing list.
#pragma once

#include "topovox/EulerCurve.h"

#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace topovox
{

struct EulerTransformOptions
{
  Construction construction = Construction::V;
  std::vector<std::array<double, 3>> directions; // empty: directionCount evenly spread
  int directionCount = 16;
  double weight = 0.0; // w, on the image values
  double alpha = 1.0;  // on the positions
  double shapeLevel = std::numeric_limits<double>::quiet_NaN(); // NaN: the whole image
  double origin[3] = { 0, 0, 0 };  // world position of voxel (0, 0, 0)
  double spacing[3] = { 1, 1, 1 };
  ThresholdMode thresholdMode = ThresholdMode::Bins; // Bins or List
  int binCount = 64;
  std::vector<double> thresholds; // for List
  Device device = Device::Auto;
  int threads = 0;
  Box owned; // voxels whose cells are counted (MPI pieces); empty = all
  ProgressCallback progress;
};

struct EulerTransform
{
  std::vector<std::array<double, 3>> directions; // unit vectors
  std::vector<double> thresholds;
  std::vector<std::vector<int64_t>> euler; // [direction][threshold]
  int dimension = 0;
  Device device = Device::CPU;
  std::string warnings;
};

// The directions the options stand for, as unit vectors, for `grid` (spread
// ones lie in the plane or line of a 2D or 1D image's axes). Throws
// std::invalid_argument on a zero vector or a count < 1.
std::vector<std::array<double, 3>> transformDirections(const EulerTransformOptions& options, const GridView& grid);

// The range [lo, hi] of the finite heights of the owned voxels over all
// directions (lo > hi when there is none). MPI ranks reduce it, then share
// the thresholds of transformThresholds.
void transformHeightRange(const GridView& grid, const EulerTransformOptions& options, double& lo, double& hi);
std::vector<double> transformThresholds(const EulerTransformOptions& options, double lo, double hi);

// Per direction, per threshold bin, per dimension: the cells whose height
// falls in the bin (not cumulative), counting the owned voxels' cells only.
// ranks sum these; accumulateTransform turns them into the transform.
std::vector<EulerHistogram> transformHistograms(const GridView& grid, const EulerTransformOptions& options,
  const std::vector<double>& thresholds, Device* used = nullptr, std::string* warnings = nullptr);
EulerTransform accumulateTransform(const std::vector<EulerHistogram>& histograms,
  const std::vector<std::array<double, 3>>& directions, int dimension);

// All of it in one process.
EulerTransform computeEulerTransform(const GridView& grid, const EulerTransformOptions& options);

// The transforms of a batch of images of one shape and type (a training
// batch, the slices of a stack) on shared directions and thresholds: the
// options' list, or binCount bins over the heights of the whole batch (so
// that the transforms line up as features). Each equals
// computeEulerTransform of its image given those thresholds as a list. On
// the GPU every direction of every image in one launch (the images uploaded
// together); on the CPU the images shared among the threads (Batch.h).
// options.owned must be empty. Throws std::invalid_argument when the images
// differ in shape or type, or on bad options.
std::vector<EulerTransform> computeEulerTransformBatch(
  const std::vector<GridView>& images, const EulerTransformOptions& options);

} // namespace topovox

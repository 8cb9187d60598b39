// DistanceTransform.h - distance transforms with scipy.ndimage's
// conventions (distance_transform_edt, _cdt, _bf), on the CPU threads; the
// exact Euclidean one also on the GPU (same bits: the same line code).
//
// Foreground: nonzero voxels (NaN included); each gets its distance to the
// nearest background (zero) voxel, background voxels 0. Arrays are x
// fastest; `sampling` is the voxel size per axis, x first. Indices: per
// image axis (x first), the coordinate of a nearest background voxel;
// where several are nearest, ours may differ from scipy's choice (the
// distance is the same).
//
// * edt: exact Euclidean, axis by axis, carrying the nearest voxel: along x
//   the row's nearest background voxel; along y and z a line whose voxels
//   all lie within 64 samples of their best candidate (and, in a pass of
//   65536 lines or more, at most half of them 17 samples or more) goes voxel
//   by voxel over a window that grows until no farther candidate can win,
//   the other lines through Felzenszwalb and Huttenlocher's lower envelope
//   (CPU and GPU choose alike, line by line: EdtLine.h). Float64, distances computed
//   from the indices as scipy computes them: sqrt of the squared offsets
//   times sampling, summed from numpy's first axis (z) to its last (x). An
//   image without background gets scipy's answer: the nearest "background"
//   voxel is index -1 on numpy's first axis and 0 on the others.
//   On the GPU, a call with unit sampling and without indices (scipy's
//   default) carries exact integer squared distances instead of the
//   nearest voxels (EdtSquaredOnDevice.cuh): sqrt of the same integer, so
//   the same bits whichever voxel a tie picks.
// * cdt: taxicab or chessboard distances, int32, exact (scipy's chamfer
//   gives the same), computed axis by axis on the threads; -1 everywhere
//   without background.
// * bf: brute force over every background voxel: euclidean (float64, with
//   sampling; sqrt(DBL_MAX) without background), taxicab or chessboard
//   (uint32, sampling unused as in scipy; UINT32_MAX without background).
#pragma once

#include "topovox/Device.h"
#include "topovox/Grid.h"
#include "topovox/UninitializedAllocator.h"

#include <cstdint>
#include <vector>

namespace topovox
{

enum class DistanceMetric : int
{
  Euclidean = 0,
  Taxicab = 1,
  Chessboard = 2
};

// A result array: allocated unwritten, large ones on huge pages
// (UninitializedAllocator.h); the transforms write every element.
template <typename T>
using TransformArray = UninitializedVector<T>;

struct DistanceTransform
{
  TransformArray<double> distances;        // edt, bf euclidean
  TransformArray<int32_t> integerDistances; // cdt
  TransformArray<uint32_t> bfDistances;     // bf taxicab / chessboard
  TransformArray<int32_t> indices[3];       // per axis, x first (when asked)
};

DistanceTransform distanceTransformEdt(const GridView& image, const double sampling[3], bool withIndices, int threads = 0,
  Device device = Device::Auto);
DistanceTransform distanceTransformCdt(const GridView& image, DistanceMetric metric, bool withIndices, int threads = 0);
DistanceTransform distanceTransformBf(const GridView& image, DistanceMetric metric, const double sampling[3],
  bool withIndices, int threads = 0);

} // namespace topovox

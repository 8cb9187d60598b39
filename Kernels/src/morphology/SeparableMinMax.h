// SeparableMinMax.h - scipy.ndimage's separable minimum/maximum filter, the
// path its grey operators take for a flat box (a `size`, or a footprint of
// all ones): one 1D pass per axis whose size exceeds 1, numpy's first axis
// (z) first, each line extended by the border mode and swept by Richard
// Harter's ascending-minima ring (scipy's NI_MinOrMaxFilter1D), in double.
//
// Without NaN the result equals the minimum over the box, which the direct
// path (MorphologyVoxel.h) computes on the CPU and the GPU alike. With NaN
// the two differ, and scipy's answer is this one: a NaN never wins a
// comparison, it leaves the ring only when it is the oldest entry, and a
// pass's output feeds the next. GreyMorphology.cpp takes this path for
// floating-point images with NaN and a flat box, on the CPU threads.
#pragma once

#include "topovox/Morphology.h"

#include <cstdint>
#include <vector>

namespace topovox
{
namespace morphology
{
// True when scipy would filter `s` separably: flat, every element set.
bool isSeparableBox(const StructuringElement& s);


// values: the image packed (x fastest, dims), of type T (float or double);
// filtered in place by the box of s (its dims and origin per axis).
template <typename T>
void separableMinOrMax(std::vector<T>& values, const int64_t dims[3], const StructuringElement& s, bool minimum,
  const GreyOptions& o);
}
}

// BoxMinMax.h - the minimum (or maximum) over a flat box on the CPU
// threads, axis by axis.
//
// The minimum along x, then along y, then along z, each pass extending its
// own axis by the border mode (the modes extend each axis on its own, and a
// constant outside any axis is the constant, so the passes compose to the
// box's minimum). Each pass compares strictly, in ascending order, and
// keeps the first of equal values: the survivor is the first in (z, y, x)
// order, which is raster order, the order of the direct minimum
// (MorphologyVoxel.h), so the bits are the same, -0 against 0 included.
// For types that double holds exactly and images without NaN (NaN under a
// box takes scipy's own separable passes, SeparableMinMax.h); the GPU's box
// kernel (GreyMorphologyCUDA.cu) follows the same order.
#pragma once

#include "ElementOffsets.h"

namespace topovox
{
namespace morphology
{
// out: the image's type, x fastest. `e`: the offsets of a full flat box.
template <typename T>
void boxMinOrMax(const GridView& image, const ElementOffsets& e, bool minimum, const GreyOptions& o, T* out);
}
}

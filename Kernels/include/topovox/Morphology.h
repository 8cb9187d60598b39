// Morphology.h - binary and grey-scale mathematical morphology with the
// conventions of scipy.ndimage, argument for argument, on the CPU threads.
//
// Images are GridViews (1 to 3 axes, x fastest, any scalar type); results
// are new contiguous arrays, x fastest. A structuring element has one axis
// per image axis (image axes of one sample included), given x first.
//
// Conventions (as scipy.ndimage):
// * The element is centred at shape // 2 + origin on each axis; an origin is
//   valid in [-(shape // 2), (shape - 1) // 2] (scipy's own check for
//   filters; out of range is std::invalid_argument here, where scipy's
//   binary operators index out of bounds).
// * Dilations use the reflected element and the origin -origin, shifted by
//   one more on axes of even length, so that dilation and erosion are dual.
// * Elements are visited in raster order (x fastest): a grey minimum or
//   maximum keeps the first of equal values and, as scipy, never takes a
//   NaN that is not first (comparisons with NaN are false).
// * A flat box (a `size`, or a footprint of all ones) is filtered as scipy
//   filters it, one 1D pass per axis: with NaN, scipy's passes give
//   another answer than the minimum over the box, and among equal values
//   they keep the last along x, then y, then z (only -0 against +0 tells
//   the two rules apart). Floating-point images with a NaN or a -0 under a
//   box (or a -0 constant border) therefore take scipy's passes, on the CPU
//   whatever the device; the others the faster direct minimum, whose bits
//   are the same.
// * Grey operators: border modes reflect (d c b a | a b c d), mirror
//   (d c b | a b c d), nearest, wrap and constant (cval); the result has the
//   input's type. A non-flat element (`values`) subtracts (erosion) or adds
//   (dilation) its values: the first visited term in double precision, the
//   others in the image's type, as scipy computes them; exactness for
//   integer images assumes no term leaves the type's range.
// * Binary operators: voxels are true when nonzero; outside the image is
//   `borderValue`; `iterations` < 1 repeats until nothing changes; with a
//   mask, only voxels where it is true change. Results are 0/1 bytes.
#pragma once

#include "topovox/Device.h"
#include "topovox/Grid.h"
#include "topovox/UninitializedAllocator.h"

#include <cstdint>
#include <string>
#include <vector>

namespace topovox
{

enum class BorderMode : int
{
  Reflect = 0, // also "grid-mirror"
  Mirror = 1,
  Nearest = 2,
  Wrap = 3,     // also "grid-wrap"
  Constant = 4  // also "grid-constant"
};
bool parseBorderMode(const std::string& text, BorderMode& out);

struct StructuringElement
{
  int64_t dims[3] = { 1, 1, 1 };   // x first
  std::vector<uint8_t> footprint; // per element, x fastest: nonzero = part of the element
  std::vector<double> values;     // a non-flat grey element's values; empty: flat
  int64_t origin[3] = { 0, 0, 0 };

  int64_t size() const { return dims[0] * dims[1] * dims[2]; }
  // A box of ones (scipy's `size`).
  static StructuringElement box(const int64_t dims[3]);
};

// scipy.ndimage.generate_binary_structure(rank, connectivity): the 3**rank
// cube whose elements lie within `connectivity` unit steps of the centre
// (padded to 3 axes with length-1 axes). connectivity < 1 counts as 1, as in
// scipy.
StructuringElement generateBinaryStructure(int rank, int connectivity);
// scipy.ndimage.iterate_structure(structure, iterations): dilated by itself
// iterations - 1 times (its origin multiplied by iterations).
StructuringElement iterateStructure(const StructuringElement& structure, int iterations);

struct BinaryOptions
{
  int iterations = 1;
  const uint8_t* mask = nullptr; // x fastest, the image's shape; null: none
  bool borderValue = false;
  int threads = 0;
  Device device = Device::Auto; // the GPU when present (CUDA builds); same bits
};

// Results are allocated unwritten (the operators write every voxel), large
// ones on huge pages: UninitializedAllocator.h.
using BinaryImage = UninitializedVector<uint8_t>; // 0/1, x fastest

BinaryImage binaryErosion(const GridView& image, const StructuringElement& s, const BinaryOptions& o);
BinaryImage binaryDilation(const GridView& image, const StructuringElement& s, const BinaryOptions& o);
BinaryImage binaryOpening(const GridView& image, const StructuringElement& s, const BinaryOptions& o);
BinaryImage binaryClosing(const GridView& image, const StructuringElement& s, const BinaryOptions& o);
// Dilation until stable, inside the mask (iterations and borderValue unused).
BinaryImage binaryPropagation(const GridView& image, const StructuringElement& s, const BinaryOptions& o);
// The complement of the background reachable from outside the image.
BinaryImage binaryFillHoles(const GridView& image, const StructuringElement& s, int threads = 0);
// Voxels where s1 fits the foreground and s2 the background.
BinaryImage binaryHitOrMiss(const GridView& image, const StructuringElement& s1, const StructuringElement& s2,
  int threads = 0);

struct GreyOptions
{
  BorderMode mode = BorderMode::Reflect;
  double cval = 0.0;
  int threads = 0;
  Device device = Device::Auto; // the GPU when present (CUDA builds); same bits
};

// Raw bytes of an image of the input's type, x fastest.
using GreyImage = UninitializedVector<unsigned char>;

GreyImage greyErosion(const GridView& image, const StructuringElement& s, const GreyOptions& o);
GreyImage greyDilation(const GridView& image, const StructuringElement& s, const GreyOptions& o);
GreyImage greyOpening(const GridView& image, const StructuringElement& s, const GreyOptions& o);
GreyImage greyClosing(const GridView& image, const StructuringElement& s, const GreyOptions& o);
// dilation - erosion; dilation + erosion - 2 image; image - opening;
// closing - image: in the image's type (integers wrap, as numpy's do).
GreyImage morphologicalGradient(const GridView& image, const StructuringElement& s, const GreyOptions& o);
GreyImage morphologicalLaplace(const GridView& image, const StructuringElement& s, const GreyOptions& o);
GreyImage whiteTophat(const GridView& image, const StructuringElement& s, const GreyOptions& o);
GreyImage blackTophat(const GridView& image, const StructuringElement& s, const GreyOptions& o);

} // namespace topovox

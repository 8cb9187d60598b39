// MorphologyOnDevice.h - the morphology operators of Morphology.h on data
// that stays in GPU memory: for callers whose arrays already live there
// (cupy, torch, a chain of GPU steps), so that nothing crosses to the host.
//
// Same conventions and same bits as Morphology.h. Differences:
// * `image` is a GridView in MemorySpace::Device (any scalar type, any
//   positive strides); `out` is a GPU buffer of image.voxelCount() values,
//   x fastest: 0/1 bytes for the binary operators, the image's type for the
//   grey ones. BinaryOptions::mask, when given, is a GPU array of bytes of
//   the image's shape, x fastest.
// * The options' `device` and `threads` are unused.
// * The calls are synchronous on the legacy default stream: the result is
//   in `out` when they return.
// * A floating-point image with NaN under a flat box takes scipy's separable
//   passes (SeparableMinMax.h), which only the CPU runs: the grey operators
//   then copy the image to the host and back, still giving scipy's bits.
//
// Throws std::invalid_argument on bad arguments, std::runtime_error when
// this build has no CUDA or a CUDA call fails.
#pragma once

#include "topovox/Morphology.h"

#include <cstdint>

namespace topovox
{

void binaryErosionOnDevice(const GridView& image, const StructuringElement& s, const BinaryOptions& o, uint8_t* out);
void binaryDilationOnDevice(const GridView& image, const StructuringElement& s, const BinaryOptions& o, uint8_t* out);
void binaryOpeningOnDevice(const GridView& image, const StructuringElement& s, const BinaryOptions& o, uint8_t* out);
void binaryClosingOnDevice(const GridView& image, const StructuringElement& s, const BinaryOptions& o, uint8_t* out);

void greyErosionOnDevice(const GridView& image, const StructuringElement& s, const GreyOptions& o, void* out);
void greyDilationOnDevice(const GridView& image, const StructuringElement& s, const GreyOptions& o, void* out);
void greyOpeningOnDevice(const GridView& image, const StructuringElement& s, const GreyOptions& o, void* out);
void greyClosingOnDevice(const GridView& image, const StructuringElement& s, const GreyOptions& o, void* out);

} // namespace topovox

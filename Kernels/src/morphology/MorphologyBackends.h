// MorphologyBackends.h - the GPU path of the morphology operators, shared by
// the host API (Morphology.h: arrays in host memory) and the device API
// (MorphologyOnDevice.h: arrays in GPU memory). Pointers say in their
// MemorySpace where they live.
#pragma once

#include "ElementOffsets.h"

#include <vector>

namespace topovox
{
namespace morphology
{
// One stage of a binary operator: `iterations` passes (BinaryOptions) of
// erosion by `element`, or with `invert` of dilation (the caller gives the
// reflected element). Opening and closing are two stages.
struct BinaryStage
{
  ElementOffsets element;
  bool invert = false;
};

// The stages of scipy's binary operators; dilation visits the reflected
// element (see Morphology.h).
enum class BinaryOperator
{
  Erosion,
  Dilation,
  Opening, // erosion, then dilation
  Closing  // dilation, then erosion
};
inline BinaryStage stage(const StructuringElement& e, bool invert)
{
  BinaryStage st;
  st.element = offsetsOf(e);
  st.invert = invert;
  return st;
}
inline std::vector<BinaryStage> stagesOf(BinaryOperator op, const StructuringElement& s)
{
  switch (op)
  {
    case BinaryOperator::Erosion: return { stage(s, false) };
    case BinaryOperator::Dilation: return { stage(reflected(s), true) };
    case BinaryOperator::Opening: return { stage(s, false), stage(reflected(s), true) };
    default: return { stage(reflected(s), true), stage(s, false) };
  }
}

#ifdef TOPOVOX_WITH_CUDA
// The stages in turn from `image` (nonzero is true; host or device memory),
// with the options' iterations, borderValue and mask (a byte array in
// `maskMemory`), into `out` (0/1 bytes, x fastest, in `outMemory`). Throws
// std::runtime_error on a CUDA failure.
void binaryGPU(const GridView& image, const std::vector<BinaryStage>& stages, const BinaryOptions& o,
  MemorySpace maskMemory, uint8_t* out, MemorySpace outMemory);
// The minimum or maximum over the element at every voxel of `image` (host or
// device memory), into `out` (the image's type, x fastest, in `outMemory`);
// `prepared` is the element greyElement gives, `e` its offsets. Returns
// false, writing nothing, for a floating-point image with NaN under a flat
// box: scipy's separable passes (SeparableMinMax.h) are the CPU's alone.
bool greyGPU(const GridView& image, const StructuringElement& prepared, const ElementOffsets& e, bool minimum,
  const GreyOptions& o, void* out, MemorySpace outMemory);
#endif
}
}

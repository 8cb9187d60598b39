// BinaryBits.h - the binary operators on the CPU threads, on bits.
//
// A binary image is held as 64-voxel words: x at bit x % 64 of word x / 64
// of its row, every row (y, z) starting a word. An erosion pass computes,
// per output word, the AND over the element of the input words shifted by
// the element's x offset, so one operation decides 64 voxels; the GPU path
// (BinaryMorphologyCUDA.cu) does the same on 32-bit words. Semantics, as
// scipy's (Morphology.h):
//  * "T-space": with `invert` (a dilation by the reflected element) the
//    input is complemented first and the result complemented back;
//  * outside the image (rows, words, and the bits past x = nx - 1 of a row's
//    last word) every bit is the border value (inverted with `invert`);
//  * where the mask is false the input's bit is kept;
//  * iterations < 1: passes until one changes nothing.
#pragma once

#include "MorphologyBackends.h"

#include <cstdint>
#include <vector>

namespace topovox
{
namespace morphology
{
struct BitImage
{
  int64_t dims[3] = { 1, 1, 1 };
  int64_t words = 1;   // per row
  uint64_t tail = ~0ull; // the valid bits of a row's last word
  std::vector<uint64_t> bits; // rows of `words`, (y, z) order

  int64_t rows() const { return dims[1] * dims[2]; }
};

// Nonzero voxels (NaN included) of `image` (host memory, any type and
// strides) as bits.
BitImage packBits(const GridView& image, int threads);
// The stages in turn, each `o.iterations` passes (until stable when < 1),
// with o.borderValue and, when not null, the mask (o.mask's bytes packed).
void runStagesOnBits(BitImage& image, const std::vector<BinaryStage>& stages, const BinaryOptions& o,
  const BitImage* mask, int threads);
// The bits as 0/1 bytes, x fastest.
void unpackBits(const BitImage& image, uint8_t* out, int threads);
}
}

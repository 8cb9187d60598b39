// BinaryBits.cpp - the binary operators on 64-voxel words, rows of the
// image shared among the CPU threads (BinaryBits.h).
#include "BinaryBits.h"

#include "../common/Parallel.h"
#include "../common/ScalarDispatch.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>

namespace topovox
{
namespace morphology
{
namespace
{
constexpr int kBits = 64;

// One element: the word and bit parts of its x offset (dx = 64 wordShift +
// bitShift, bitShift in [0, 63]) and its y and z offsets.
struct BitElement
{
  int64_t wordShift;
  int bitShift;
  int64_t dy, dz;
};

bool hostIsLittleEndian()
{
  const uint16_t one = 1;
  unsigned char first;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

// Eight bytes (x to x + 7) as eight bits (bit b: byte b is nonzero): each
// byte's high bit set when it is nonzero, then gathered by a multiplication.
inline uint8_t nonzeroBytes(const unsigned char* at)
{
  uint64_t v;
  std::memcpy(&v, at, 8);
  if (!hostIsLittleEndian())
    v = __builtin_bswap64(v);
  const uint64_t high = 0x8080808080808080ull, low = 0x7F7F7F7F7F7F7F7Full;
  const uint64_t nonzero = (((v & low) + low) | v) & high;
  return static_cast<uint8_t>((nonzero * 0x0002040810204081ull) >> 56);
}

std::vector<BitElement> bitElementsOf(const ElementOffsets& e)
{
  std::vector<BitElement> out;
  for (const auto& d : e.delta)
  {
    // Floor division, so that the bit shift is in [0, 63] for negative dx.
    const int64_t word = d[0] >= 0 ? d[0] / kBits : -((-d[0] + kBits - 1) / kBits);
    out.push_back(BitElement{ word, static_cast<int>(d[0] - kBits * word), d[1], d[2] });
  }
  return out;
}

// The input of a pass in T-space, each row padded on both sides with
// `pad` border words (the tail bits of its last word set to the border
// too), plus one row of border words for the rows outside the image: every
// word a pass reads is then a plain load.
struct PaddedRows
{
  int64_t pad, stride; // stride: words per padded row
  std::vector<uint64_t> words;
  const uint64_t* row(const BitImage& g, int64_t y, int64_t z) const
  {
    const int64_t r = (y < 0 || y >= g.dims[1] || z < 0 || z >= g.dims[2]) ? g.rows() : z * g.dims[1] + y;
    return words.data() + r * stride + pad;
  }
};

void padRows(const BitImage& g, bool invert, bool border, int64_t pad, int threads, PaddedRows& p)
{
  const uint64_t outside = border ? ~0ull : 0ull, flip = invert ? ~0ull : 0ull;
  p.pad = pad;
  p.stride = g.words + 2 * pad;
  p.words.resize(static_cast<size_t>((g.rows() + 1) * p.stride));
  parallelFor(g.rows() + 1, threads, [&](int, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
    {
      uint64_t* to = p.words.data() + r * p.stride;
      std::fill(to, to + p.stride, outside);
      if (r == g.rows())
        continue; // the row outside the image
      const uint64_t* from = g.bits.data() + r * g.words;
      for (int64_t w = 0; w < g.words; ++w)
        to[pad + w] = from[w] ^ flip;
      to[pad + g.words - 1] = (to[pad + g.words - 1] & g.tail) | (outside & ~g.tail);
    }
  });
}

// One pass from `in` (padded) into `out`; returns whether a voxel changed.
bool erodePass(const BitImage& g, const PaddedRows& in, const std::vector<BitElement>& element, bool invert,
  const BitImage* mask, std::vector<uint64_t>& out, int threads)
{
  std::atomic<bool> changed{ false };
  parallelFor(g.rows(), threads, [&](int, int64_t r0, int64_t r1) {
    std::vector<uint64_t> acc(static_cast<size_t>(g.words));
    bool any = false;
    for (int64_t r = r0; r < r1; ++r)
    {
      const int64_t y = r % g.dims[1], z = r / g.dims[1];
      std::fill(acc.begin(), acc.end(), ~0ull);
      for (const BitElement& e : element)
      {
        const uint64_t* src = in.row(g, y + e.dy, z + e.dz) + e.wordShift;
        const int s = e.bitShift;
        if (s == 0)
          for (int64_t w = 0; w < g.words; ++w)
            acc[static_cast<size_t>(w)] &= src[w];
        else
          for (int64_t w = 0; w < g.words; ++w)
            acc[static_cast<size_t>(w)] &= (src[w] >> s) | (src[w + 1] << (kBits - s));
      }
      const uint64_t* before = g.bits.data() + r * g.words;
      uint64_t* to = out.data() + r * g.words;
      for (int64_t w = 0; w < g.words; ++w)
      {
        uint64_t value = invert ? ~acc[static_cast<size_t>(w)] : acc[static_cast<size_t>(w)];
        if (mask)
        {
          const uint64_t m = mask->bits[static_cast<size_t>(r * g.words + w)];
          value = (value & m) | (before[w] & ~m);
        }
        to[w] = value;
        any = any || ((value ^ before[w]) & (w == g.words - 1 ? g.tail : ~0ull)) != 0;
      }
    }
    if (any)
      changed = true;
  });
  return changed;
}
} // namespace

BitImage packBits(const GridView& image, int threads)
{
  BitImage g;
  for (int a = 0; a < 3; ++a)
    g.dims[a] = image.dims[a];
  g.words = (g.dims[0] + kBits - 1) / kBits;
  const int64_t last = g.dims[0] - kBits * (g.words - 1);
  g.tail = last == kBits ? ~0ull : ((1ull << last) - 1);
  g.bits.resize(static_cast<size_t>(g.rows() * g.words));
  dispatchScalarType(image.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* d = static_cast<const T*>(image.data);
    const bool bytesInRow = sizeof(T) == 1 && image.strides[0] == 1;
    parallelFor(g.rows(), threads, [&](int, int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r)
      {
        const T* row = d + (r % g.dims[1]) * image.strides[1] + (r / g.dims[1]) * image.strides[2];
        uint64_t* to = g.bits.data() + r * g.words;
        for (int64_t w = 0; w < g.words; ++w)
        {
          uint64_t word = 0;
          const int64_t end = std::min<int64_t>(kBits, g.dims[0] - kBits * w);
          int64_t b = 0;
          if (bytesInRow)
            for (; b + 8 <= end; b += 8)
              word |= uint64_t(nonzeroBytes(reinterpret_cast<const unsigned char*>(row) + kBits * w + b)) << b;
          for (; b < end; ++b)
            word |= uint64_t(row[(kBits * w + b) * image.strides[0]] != T(0)) << b;
          to[w] = word;
        }
      }
    });
  });
  return g;
}

void runStagesOnBits(BitImage& image, const std::vector<BinaryStage>& stages, const BinaryOptions& o,
  const BitImage* mask, int threads)
{
  std::vector<uint64_t> next(image.bits.size());
  PaddedRows padded;
  for (const BinaryStage& stage : stages)
  {
    const std::vector<BitElement> element = bitElementsOf(stage.element);
    int64_t pad = 1;
    for (const BitElement& e : element)
      pad = std::max(pad, std::max(-e.wordShift, e.wordShift + 1));
    const bool border = stage.invert ? !o.borderValue : o.borderValue;
    for (int done = 0;; ++done)
    {
      padRows(image, stage.invert, border, pad, threads, padded);
      const bool changed = erodePass(image, padded, element, stage.invert, mask, next, threads);
      image.bits.swap(next);
      if (o.iterations >= 1 ? done + 1 >= o.iterations : !changed)
        break;
    }
  }
}

void unpackBits(const BitImage& g, uint8_t* out, int threads)
{
  // Eight bits to eight 0/1 bytes at a time, through a table.
  static const std::array<uint64_t, 256> spread = [] {
    std::array<uint64_t, 256> t{};
    for (int v = 0; v < 256; ++v)
      for (int b = 0; b < 8; ++b)
        if (v >> b & 1)
          t[static_cast<size_t>(v)] |= uint64_t(1) << (8 * b);
    return t;
  }();
  parallelFor(g.rows(), threads, [&](int, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
    {
      const uint64_t* from = g.bits.data() + r * g.words;
      uint8_t* to = out + r * g.dims[0];
      int64_t x = 0;
      for (; x + 8 <= g.dims[0]; x += 8)
      {
        // The bytes of a little-endian word: byte b holds voxel x + b.
        uint64_t bytes = spread[(from[x / kBits] >> (x % kBits)) & 0xFF];
        if (!hostIsLittleEndian())
          bytes = __builtin_bswap64(bytes);
        std::memcpy(to + x, &bytes, 8);
      }
      for (; x < g.dims[0]; ++x)
        to[x] = static_cast<uint8_t>((from[x / kBits] >> (x % kBits)) & 1u);
    }
  });
}
}
}

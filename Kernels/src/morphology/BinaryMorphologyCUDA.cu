// BinaryMorphologyCUDA.cu - the binary operators on the GPU, on bits.
//
// (One pass without a mask by a 3x3(x3) box or a radius-2 ball, the common
// case, skips the bits: BinaryRegisterKernel.cuh reads the image's values
// and writes bytes in one kernel; binaryInRegisters below.)
//
// The image is binarised straight into a bit array (one 32-bit word holds
// 32 voxels of a row, x at bit x % 32; each row starts a word), every pass
// of every stage runs on words, and the result is unpacked to bytes once.
// An erosion pass is, per output word, the AND over the element of the
// input words shifted by the element's x offset (a funnel shift of two
// neighbouring words), so one thread decides 32 voxels with two loads per
// element, and the passes of an opening or of an "until stable" run touch
// an eighth of the bytes the image has. The rules are those of the CPU
// threads' 64-bit words (BinaryBits.h), so both give the same bits:
//  * "T-space": with `invert` (a dilation) the input word is complemented
//    first and the result complemented back;
//  * outside the image (rows, words, and the bits past x = nx - 1 of a
//    row's last word) every bit is the border (inverted with `invert`);
//  * the mask keeps the input's bits where it is false;
//  * "until stable" runs passes in batches and stops after a batch whose
//    last pass changed nothing: further passes of a stable image change
//    nothing, so the result is the one a flag per pass would give.
#include "topovox/MorphologyOnDevice.h"

#include "BinaryRegisterKernel.cuh"
#include "MorphologyBackends.h"

#include "../common/CudaUtil.cuh"
#include "../common/HostCopy.h"
#include "../common/ImageOnDevice.cuh"
#include "../common/ScalarDispatch.h"

#include <algorithm>
#include <array>
#include <memory>

namespace topovox
{
namespace morphology
{
namespace
{
using cuda::check;
using cuda::PooledArray;
constexpr int kThreads = 256;
// Passes between two looks at the "changed" flag when iterating until
// stable: a pass on bits costs less than the round trip that reads the flag.
constexpr int kPassesPerCheck = 16;

struct BitGrid
{
  int64_t nx, ny, nz;
  int64_t words; // per row
  uint32_t tail; // valid bits of a row's last word (a mask)
};

BitGrid bitGridOf(const int64_t dims[3])
{
  BitGrid g{ dims[0], dims[1], dims[2], (dims[0] + 31) / 32, 0 };
  const int64_t last = dims[0] - 32 * (g.words - 1);
  g.tail = last == 32 ? ~0u : ((1u << last) - 1u);
  return g;
}

// One element: the word and bit parts of its x offset (dx = 32 * wordShift
// + bitShift, bitShift in [0, 31]), its y and z offsets, and the offset in
// words of the word it starts from (for voxels whose element is inside).
struct BitElement
{
  int wordShift, bitShift, dy, dz;
  int64_t flat;
};

// The element's reach: the range of dy and dz over its elements.
struct BitReach
{
  int y[2], z[2];
};

unsigned blocksFor(int64_t threads)
{
  return cuda::blocksFor(threads, kThreads);
}

// Nonzero voxels (NaN included) as bits: a warp per word, each lane reads a
// voxel (coalesced whatever the type) and the ballot is the word. Rows on
// the grid's y and z (strided past its limits), so that no index is divided
// per voxel.
template <typename T>
__global__ void packKernel(const T* __restrict__ data, int64_t sx, int64_t sy, int64_t sz, BitGrid g,
  uint32_t* __restrict__ bits)
{
  const int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (x >= 32 * g.words) // whole warps: a row holds whole words
    return;
  for (int64_t z = blockIdx.z; z < g.nz; z += gridDim.z)
    for (int64_t y = blockIdx.y; y < g.ny; y += gridDim.y)
    {
      const bool on = x < g.nx && data[x * sx + y * sy + z * sz] != T(0);
      const uint32_t word = __ballot_sync(0xffffffffu, on);
      if ((threadIdx.x & 31) == 0)
        bits[(z * g.ny + y) * g.words + x / 32] = word;
    }
}

// A word of the input in T-space; outside the image, the border.
__device__ __forceinline__ uint32_t loadT(const uint32_t* __restrict__ in, const BitGrid& g, int64_t y, int64_t z,
  int64_t w, bool invert, bool border)
{
  const uint32_t outside = border ? ~0u : 0u;
  if (y < 0 || y >= g.ny || z < 0 || z >= g.nz || w < 0 || w >= g.words)
    return outside;
  uint32_t v = __ldg(in + (z * g.ny + y) * g.words + w);
  if (invert)
    v = ~v;
  if (w == g.words - 1)
    v = (v & g.tail) | (outside & ~g.tail);
  return v;
}

// One erosion pass (T-space, see the file's comment) per output word. The
// elements come in raster order, so those of one row of the element are
// consecutive with ascending x: the two words an element shifts from are
// kept for the next one, which mostly needs the same pair or the pair one
// word on (a 3x3x3 box loads 3 words per row, not 6).
__global__ void erodeBitsKernel(const uint32_t* __restrict__ in, BitGrid g, const BitElement* __restrict__ element,
  int count, BitReach reach, const uint32_t* __restrict__ mask, bool invert, bool border, uint32_t* __restrict__ out,
  int* changed)
{
  const uint64_t t = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x;
  const uint64_t total = uint64_t(g.words) * g.ny * g.nz;
  bool differs = false;
  if (t < total)
  {
    // 32-bit divisions where the sizes allow (a 64-bit one is emulated).
    int64_t w, row;
    if (total <= 0xffffffffull)
      w = uint32_t(t) % uint32_t(g.words), row = uint32_t(t) / uint32_t(g.words);
    else
      w = int64_t(t % uint64_t(g.words)), row = int64_t(t / uint64_t(g.words));
    const int64_t y = row % g.ny, z = row / g.ny;
    uint32_t acc = ~0u;
    // The element's rows inside the image: every word of them read where
    // it is, those past a row's ends replaced by the border and the last
    // word's padding bits too, by selects (loadT's rule without its
    // branches). A warp's 32 words span row ends (16 words a row at
    // 512^3), so a branch for them split every warp into two paths.
    if (y + reach.y[0] >= 0 && y + reach.y[1] < g.ny && z + reach.z[0] >= 0 && z + reach.z[1] < g.nz)
    {
      const uint32_t flip = invert ? ~0u : 0u, outside = border ? ~0u : 0u;
      const int64_t last = g.words - 1;
      auto word = [&](const uint32_t* at, int64_t x) {
        const bool inside = x >= 0 && x <= last;
        const uint32_t v = inside ? __ldg(inside ? at : in) ^ flip : outside;
        return x == last ? (v & g.tail) | (outside & ~g.tail) : v;
      };
      for (int k = 0; k < count && acc; ++k)
      {
        const BitElement e = element[k];
        const uint32_t* at = in + t + e.flat;
        const int64_t x = w + e.wordShift;
        acc &= __funnelshift_r(word(at, x), word(at + 1, x + 1), e.bitShift);
      }
    }
    else
    {
      int dy = 0, dz = 0, shift = 0;
      uint32_t lo = 0, hi = 0;
      bool held = false;
      for (int k = 0; k < count && acc; ++k)
      {
        const BitElement e = element[k];
        const bool sameRow = held && e.dy == dy && e.dz == dz;
        if (!(sameRow && e.wordShift == shift))
        {
          if (sameRow && e.wordShift == shift + 1)
            lo = hi;
          else
            lo = loadT(in, g, y + e.dy, z + e.dz, w + e.wordShift, invert, border);
          hi = loadT(in, g, y + e.dy, z + e.dz, w + e.wordShift + 1, invert, border);
          dy = e.dy, dz = e.dz, shift = e.wordShift, held = true;
        }
        acc &= __funnelshift_r(lo, hi, e.bitShift);
      }
    }
    const uint32_t before = in[t];
    uint32_t value = invert ? ~acc : acc;
    if (mask)
      value = (value & mask[t]) | (before & ~mask[t]);
    out[t] = value;
    differs = ((value ^ before) & (w == g.words - 1 ? g.tail : ~0u)) != 0;
  }
  if (changed && __any_sync(0xffffffffu, differs) && (threadIdx.x & 31) == 0)
    *changed = 1;
}

// Contiguous images whose rows are whole words and 16-byte aligned: a
// thread per word, reading its 32 values with 16-byte loads (a byte per
// thread keeps too few bytes in flight to fill the memory system).
template <typename T>
__global__ void packWordsKernel(const T* __restrict__ data, int64_t words, uint32_t* __restrict__ bits)
{
  constexpr int perLoad = 16 / sizeof(T);
  const int64_t w = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (w >= words)
    return;
  const uint4* from = reinterpret_cast<const uint4*>(data + 32 * w);
  uint32_t word = 0;
#pragma unroll
  for (int l = 0; l < 32 / perLoad; ++l)
  {
    const uint4 chunk = __ldg(from + l);
    const T* v = reinterpret_cast<const T*>(&chunk);
#pragma unroll
    for (int i = 0; i < perLoad; ++i)
      word |= (v[i] != T(0) ? 1u : 0u) << (l * perLoad + i);
  }
  bits[w] = word;
}

// The same layout back to bytes: a thread per word, two 16-byte stores.
__global__ void unpackWordsKernel(const uint32_t* __restrict__ bits, int64_t words, uint8_t* __restrict__ out)
{
  const int64_t w = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (w >= words)
    return;
  const uint32_t word = bits[w];
  uint4 half[2];
  uint8_t* b = reinterpret_cast<uint8_t*>(half);
#pragma unroll
  for (int i = 0; i < 32; ++i)
    b[i] = static_cast<uint8_t>((word >> i) & 1u);
  uint4* to = reinterpret_cast<uint4*>(out + 32 * w);
  to[0] = half[0];
  to[1] = half[1];
}

bool wordAligned(const void* p, const BitGrid& g)
{
  return g.nx % 32 == 0 && reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

__global__ void unpackKernel(const uint32_t* __restrict__ bits, BitGrid g, uint8_t* __restrict__ out)
{
  const int64_t x = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (x >= g.nx)
    return;
  for (int64_t z = blockIdx.z; z < g.nz; z += gridDim.z)
    for (int64_t y = blockIdx.y; y < g.ny; y += gridDim.y)
    {
      const int64_t row = z * g.ny + y;
      out[x + g.nx * row] = static_cast<uint8_t>((bits[row * g.words + x / 32] >> (x % 32)) & 1u);
    }
}


std::vector<BitElement> bitElementOf(const ElementOffsets& e, const BitGrid& g, BitReach& reach)
{
  std::vector<BitElement> out;
  for (const auto& d : e.delta)
  {
    // Floor division, so that the bit shift is in [0, 31] for negative dx.
    const int64_t word = d[0] >= 0 ? d[0] / 32 : -((-d[0] + 31) / 32);
    out.push_back(BitElement{ static_cast<int>(word), static_cast<int>(d[0] - 32 * word), static_cast<int>(d[1]),
      static_cast<int>(d[2]), (d[2] * g.ny + d[1]) * g.words + word });
  }
  reach = BitReach{ { 0, 0 }, { 0, 0 } };
  for (size_t k = 0; k < out.size(); ++k)
  {
    const BitElement& b = out[k];
    const int values[2] = { b.dy, b.dz };
    int* ranges[2] = { reach.y, reach.z };
    for (int a = 0; a < 2; ++a)
    {
      ranges[a][0] = k == 0 ? values[a] : std::min(ranges[a][0], values[a]);
      ranges[a][1] = k == 0 ? values[a] : std::max(ranges[a][1], values[a]);
    }
  }
  return out;
}

void pack(const GridView& image, const BitGrid& g, uint32_t* bits)
{
  const int64_t words = g.words * g.ny * g.nz;
  dispatchScalarType(image.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* data = static_cast<const T*>(image.data);
    if (image.isContiguous() && wordAligned(data, g) && 16 % sizeof(T) == 0)
      packWordsKernel<T><<<blocksFor(words), kThreads>>>(data, words, bits);
    else
      packKernel<T><<<cuda::rowGrid(32 * g.words, g.ny, g.nz, kThreads), kThreads>>>(
        data, image.strides[0], image.strides[1], image.strides[2], g, bits);
  });
  check(cudaGetLastError(), "binary morphology: packing bits");
}

void unpack(const uint32_t* bits, const BitGrid& g, uint8_t* out)
{
  if (wordAligned(out, g))
    unpackWordsKernel<<<blocksFor(g.words * g.ny * g.nz), kThreads>>>(bits, g.words * g.ny * g.nz, out);
  else
    unpackKernel<<<cuda::rowGrid(g.nx, g.ny, g.nz, kThreads), kThreads>>>(bits, g, out);
  check(cudaGetLastError(), "binary morphology: unpacking bits");
}

// `iterations` passes of one stage from `a` (ping-pong with `b`); returns the
// buffer that holds the result.
uint32_t* runStage(const BitGrid& g, const BinaryStage& stage, const BinaryOptions& o, const uint32_t* mask,
  uint32_t* a, uint32_t* b, int* changed)
{
  BitReach reach;
  const std::vector<BitElement> host = bitElementOf(stage.element, g, reach);
  PooledArray<BitElement> element(host.size());
  if (!host.empty())
    check(cudaMemcpy(element.ptr, host.data(), host.size() * sizeof(BitElement), cudaMemcpyHostToDevice),
      "cudaMemcpy");
  const bool border = stage.invert ? !o.borderValue : o.borderValue;
  const int64_t words = g.words * g.ny * g.nz;
  auto pass = [&](int* flag) {
    erodeBitsKernel<<<blocksFor(words), kThreads>>>(
      a, g, element.ptr, static_cast<int>(host.size()), reach, mask, stage.invert, border, b, flag);
    check(cudaGetLastError(), "binary morphology: erosion pass");
    std::swap(a, b);
  };
  if (o.iterations >= 1)
  {
    for (int k = 0; k < o.iterations; ++k)
      pass(nullptr);
    return a;
  }
  for (;;)
  {
    for (int k = 0; k + 1 < kPassesPerCheck; ++k)
      pass(nullptr);
    check(cudaMemset(changed, 0, sizeof(int)), "cudaMemset");
    pass(changed);
    int any = 0;
    check(cudaMemcpy(&any, changed, sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
    if (!any)
      return a;
  }
}

// One pass of every stage without a mask, each by an element of the byte
// kernel's (BinaryRegisterKernel.cuh), from `image` (device memory) into
// `out` (device memory): bytes in, bytes out, no bits. False, having
// launched nothing, where the kernel does not apply.
bool binaryInRegisters(const GridView& image, const std::vector<BinaryStage>& stages, const BinaryOptions& o,
  uint8_t* out)
{
  // (A stage's output is the next one's input, one buffer between them:
  // scipy's operators have at most two stages.)
  if (o.iterations != 1 || o.mask || stages.empty() || stages.size() > 2 || !registers::quadLayoutFits(image, out))
    return false;
  std::vector<std::array<int, 4>> shapes; // shape, centre
  for (const BinaryStage& stage : stages)
  {
    std::array<int, 4> s{};
    s[0] = registers::quadShapeOf(stage.element, s.data() + 1);
    if (!s[0])
      return false;
    shapes.push_back(s);
  }
  const int64_t n = image.voxelCount();
  // The stages before the last write 0/1 bytes, which the next one reads.
  PooledArray<uint8_t> between(stages.size() > 1 ? static_cast<size_t>(n) : 0);
  GridView from = image;
  for (size_t k = 0; k < stages.size(); ++k)
  {
    const bool last = k + 1 == stages.size();
    const bool border = stages[k].invert ? !o.borderValue : o.borderValue;
    uint8_t* to = last ? out : between.ptr;
    dispatchScalarType(from.type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      registers::launchQuad<T>(from, shapes[k][0], shapes[k].data() + 1, stages[k].invert, border, to);
    });
    from = GridView::contiguous(between.ptr, ScalarType::UInt8, image.dims[0], image.dims[1], image.dims[2],
      MemorySpace::Device);
  }
  return true;
}
} // namespace

void binaryGPU(const GridView& image, const std::vector<BinaryStage>& stages, const BinaryOptions& o,
  MemorySpace maskMemory, uint8_t* out, MemorySpace outMemory)
{
  // One device copy of a host image for both paths (freed once the bits
  // are packed).
  std::unique_ptr<cuda::ImageOnDevice> input(new cuda::ImageOnDevice(image));
  {
    PooledArray<uint8_t> result(outMemory == MemorySpace::Host ? static_cast<size_t>(image.voxelCount()) : 0);
    uint8_t* target = outMemory == MemorySpace::Device ? out : result.ptr;
    if (binaryInRegisters(input->view, stages, o, target))
    {
      if (outMemory == MemorySpace::Device)
        check(cudaDeviceSynchronize(), "binary morphology");
      else
        cuda::copyToHost(out, result.ptr, static_cast<size_t>(image.voxelCount()), defaultThreadCount());
      return;
    }
  }
  const BitGrid g = bitGridOf(image.dims);
  const int64_t words = g.words * g.ny * g.nz;
  PooledArray<uint32_t> a(static_cast<size_t>(words)), b(static_cast<size_t>(words));
  PooledArray<uint32_t> maskBits(o.mask ? static_cast<size_t>(words) : 0);
  PooledArray<int> changed(1);
  pack(input->view, g, a.ptr);
  input.reset();
  if (o.mask)
  {
    const GridView m = GridView::contiguous(o.mask, ScalarType::UInt8, g.nx, g.ny, g.nz, maskMemory);
    const cuda::ImageOnDevice onDevice(m);
    pack(onDevice.view, g, maskBits.ptr);
  }
  uint32_t* current = a.ptr;
  uint32_t* spare = b.ptr;
  for (const BinaryStage& stage : stages)
  {
    uint32_t* result = runStage(g, stage, o, o.mask ? maskBits.ptr : nullptr, current, spare, changed.ptr);
    spare = result == current ? spare : current;
    current = result;
  }
  const int64_t n = g.nx * g.ny * g.nz;
  if (outMemory == MemorySpace::Device)
  {
    unpack(current, g, out);
    check(cudaDeviceSynchronize(), "binary morphology");
    return;
  }
  PooledArray<uint8_t> bytes(static_cast<size_t>(n));
  unpack(current, g, bytes.ptr);
  cuda::copyToHost(out, bytes.ptr, static_cast<size_t>(n), defaultThreadCount());
}
} // namespace morphology

namespace
{
using morphology::BinaryOperator;

void runOnDevice(const GridView& image, BinaryOperator op, const StructuringElement& s, const BinaryOptions& o,
  uint8_t* out)
{
  morphology::checkImage(image, MemorySpace::Device);
  if (!out)
    throw std::invalid_argument("no output buffer");
  morphology::binaryGPU(image, morphology::stagesOf(op, s), o, MemorySpace::Device, out, MemorySpace::Device);
}
} // namespace

void binaryErosionOnDevice(const GridView& image, const StructuringElement& s, const BinaryOptions& o, uint8_t* out)
{
  runOnDevice(image, BinaryOperator::Erosion, s, o, out);
}

void binaryDilationOnDevice(const GridView& image, const StructuringElement& s, const BinaryOptions& o, uint8_t* out)
{
  runOnDevice(image, BinaryOperator::Dilation, s, o, out);
}

void binaryOpeningOnDevice(const GridView& image, const StructuringElement& s, const BinaryOptions& o, uint8_t* out)
{
  runOnDevice(image, BinaryOperator::Opening, s, o, out);
}

void binaryClosingOnDevice(const GridView& image, const StructuringElement& s, const BinaryOptions& o, uint8_t* out)
{
  runOnDevice(image, BinaryOperator::Closing, s, o, out);
}
} // namespace topovox

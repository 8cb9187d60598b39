// BinaryRegisterKernel.cuh - one pass of binary erosion (or, in T-space, of
// dilation) by the small flat elements of RegisterShapes.cuh (the 3 x 3 x 3
// box, the radius-2 ball and their one-plane forms), any origin and border
// value, from an image of any type straight to 0/1 bytes.
//
// Why a kernel of its own: the bit kernels (BinaryMorphologyCUDA.cu) pack
// the image into bits, erode the bits and unpack them, three launches and a
// chain of dependent loads per element in the pass (0.38 ms at 512^3, 18%
// of the H200's copy bandwidth). One pass without a mask needs none of that:
// here a thread holds four voxels of a row as the four bytes of a register
// (a "quad", true where a byte's top bit is set), which the erosion ANDs
// as a whole:
//  * a warp covers 32 positions and writes the middle 30: lanes 0 and 31
//    only read the quads either side of them, so no lane reads a halo of
//    its own; per plane a thread loads its quad of each input row its
//    outputs need, and the quads either side come from the neighbouring
//    lanes by shuffles;
//  * in a volume, the positions run through the rows in one sequence: each
//    group of a thread's rows is its quads and one phantom quad, which
//    holds the border and stands for the columns past the row's end (or,
//    where the element's centre lies left of the output, before its
//    start). A warp that reaches a row's end goes on into the next group's
//    row, so no lane idles there: with a warp per 30 quads of each row, a
//    512-column row (128 quads) took 5 warps, a fifth of them writing 8
//    quads (the ball at 512^3 went from 0.185 to 0.15 ms on the H200). For
//    a one-plane element the sequence was slower (4096^2: 0.024 ms against
//    0.020; a division a lane, and the square spilled registers), so there
//    a warp keeps a tile of 30 quads, and its lanes past the row's ends are
//    phantoms;
//  * a row shifted by d columns is a funnel shift of two neighbouring quads
//    by 8 d bits; each element row (dz, dy) is an x interval about the
//    element's centre column, so per input row the ANDs over the intervals
//    of half width 0 .. rx about column 0, then per plane the AND over the
//    element's rows, folded into the outputs of the planes they belong to,
//    as in the grey register kernel (GreyRegisterKernel.cuh); the centre's
//    x offset is one shift of the folded quad at the end (the AND about
//    column x + c is the AND about column x, c columns on);
//  * the next plane's loads are in flight while the current one is folded.
// AND has no ties, so the bits are those of the naive rule and of the CPU.
#pragma once

#include "RegisterShapes.cuh"

#include "../common/CudaUtil.cuh"

#include "topovox/Grid.h"

#include <cstdint>

namespace topovox
{
namespace morphology
{
namespace registers
{
// The byte kernel's shapes: the box 8 rows a thread, the ball 4, both in 64
// registers (four blocks per multiprocessor), the fastest of the variants
// measured at 512^3 on the H200 (bench/README.md, fourteenth session).
using QuadBox3 = Shape<1, 1, false, 8, 4>;
using QuadSquare3 = Shape<1, 0, false, 8, 4>;
using QuadBall2 = Shape<2, 2, true, 4, 4>;
using QuadDisk2 = Shape<2, 0, true, 4, 4>;

constexpr int kQuad = 4;                 // voxels a thread holds per row
constexpr int kOutputLanes = kLanes - 2; // quads a warp writes per row

struct QuadGrid
{
  int64_t dims[3];    // dims[0] a multiple of kQuad
  int64_t strides[3]; // in voxels; strides[0] == 1
  int centre[3];      // the element's centre, as an offset from the output voxel
  int depth;          // output planes per block
  int phantomFirst;   // 1: a row group's phantom comes before its quads, 0: after
  uint32_t positions; // quads of a row plus the phantom
  uint32_t groups;    // groups of rows (a thread's rows), of positions each
};

// A quad holds a voxel per byte, the first voxel in the low byte; a voxel
// is true where its byte's top bit (0x80) is set, and the other bits are
// whatever they are: AND and shifts by whole bytes keep each top bit to its
// own, and only the top bits reach the output.
constexpr uint32_t kTopBits = 0x80808080u;

// Four consecutive voxels as a quad, true where the voxel is nonzero (NaN
// included); `p` is aligned to the four voxels' size (up to 16 bytes).
template <typename T>
__device__ __forceinline__ uint32_t nonzeroQuad(const T* __restrict__ p)
{
  if constexpr (sizeof(T) == 1)
  {
    // A byte's low 7 bits plus 0x7f carry into its top bit when any is
    // set, and never out of the byte; the OR adds the top bit itself.
    const uint32_t v = __ldg(reinterpret_cast<const unsigned int*>(p));
    return ((v & 0x7f7f7f7fu) + 0x7f7f7f7fu) | v;
  }
  else
  {
    union
    {
      uint4 raw[sizeof(T) == 8 ? 2 : 1];
      uint2 half;
      T v[kQuad];
    } u;
    if constexpr (sizeof(T) == 2)
      u.half = __ldg(reinterpret_cast<const uint2*>(p));
    else
    {
#pragma unroll
      for (int k = 0; k < int(sizeof(T)) / 4; ++k)
        u.raw[k] = __ldg(reinterpret_cast<const uint4*>(p) + k);
    }
    uint32_t q = 0;
#pragma unroll
    for (int i = 0; i < kQuad; ++i)
      q |= (u.v[i] != T(0) ? 0x80u : 0u) << (8 * i);
    return q;
  }
}

// The quad of voxels D columns on from `own` (D in [-3, 3]), given the
// quads before (`prev`) and after (`next`) it: a funnel shift of the pair
// that holds it.
template <int D>
__device__ __forceinline__ uint32_t shiftedQuad(uint32_t prev, uint32_t own, uint32_t next)
{
  if constexpr (D > 0)
    return __funnelshift_r(own, next, 8 * D);
  else if constexpr (D < 0)
    return __funnelshift_r(prev, own, 32 + 8 * D);
  else
    return own;
}

// `flip`: kTopBits for a dilation's T-space (every loaded voxel
// complemented, and the result back), 0 for an erosion; `outside`: the
// border in T-space, for every voxel outside the image.
template <typename T, class S>
__global__ void __launch_bounds__(kLanes * kWarps, S::blocksPerSM)
  quadKernel(const T* __restrict__ data, QuadGrid g, uint32_t flip, uint32_t outside, uint32_t* __restrict__ out)
{
  constexpr int RX = S::rx, RY = S::ry, RZ = S::rz, kRows = S::rowsPerThread, kInputRows = kRows + 2 * RY;
  const int lane = threadIdx.x;
  const int64_t quads = g.dims[0] / kQuad;
  // This lane's quad q and first row y. Lanes 0 and 31 only read, the
  // quads either side of the warp's 30 outputs (no halo registers, no lanes
  // on two paths). A phantom (and any lane past the last row) loads nothing
  // it keeps: its quads are the border. It reads a quad of its rows (the
  // first), so that its warp stays on one path.
  int64_t q, y;
  bool phantom;
  if constexpr (RZ > 0)
  {
    // The warps of the grid cover the positions 30 at a time; the first
    // lane of all, at -1, is a phantom of group 0.
    const int64_t n = (int64_t(blockIdx.x) * kWarps + threadIdx.y) * kOutputLanes + lane - 1;
    const uint32_t group = n < 0 ? 0u : uint32_t(n) / g.positions;
    q = n - int64_t(group) * g.positions - g.phantomFirst;
    y = int64_t(group) * kRows;
    phantom = q < 0 || q >= quads || group >= g.groups;
  }
  else
  {
    q = int64_t(blockIdx.x) * kOutputLanes + lane - 1;
    y = int64_t(blockIdx.y) * S::tileRows + int64_t(threadIdx.y) * kRows;
    phantom = q < 0 || q >= quads;
  }
  const bool outputs = lane > 0 && lane < kLanes - 1 && !phantom;
  const T* const column = data + kQuad * (phantom ? 0 : q);
  const int64_t z0 = int64_t(blockIdx.z) * g.depth;
  // The input rows j = 0 .. kInputRows - 1 are rows firstRow + j; where
  // they all lie inside (every block but those at the y ends), their quads
  // are read without a test each.
  const int64_t firstRow = y + g.centre[1] - RY;
  const bool rowsInside = firstRow >= 0 && firstRow + kInputRows <= g.dims[1];
  // own[j]: input row j's quad of plane z.
  auto fetch = [&](int64_t z, uint32_t own[kInputRows]) {
    const bool inside = z >= 0 && z < g.dims[2];
    const T* const plane = inside ? column + z * g.strides[2] : column;
    if (inside && rowsInside)
    {
      const T* at = plane + firstRow * g.strides[1];
#pragma unroll
      for (int j = 0; j < kInputRows; ++j, at += g.strides[1])
        own[j] = phantom ? outside : nonzeroQuad(at) ^ flip;
      return;
    }
#pragma unroll
    for (int j = 0; j < kInputRows; ++j)
    {
      const int64_t r = firstRow + j;
      own[j] = !phantom && inside && r >= 0 && r < g.dims[1] ? nonzeroQuad(plane + r * g.strides[1]) ^ flip : outside;
    }
  };
  const int64_t firstZ = z0 + g.centre[2] - RZ;
  const int64_t planes = min(int64_t(g.depth), g.dims[2] - z0) + 2 * RZ;
  const int64_t planeQuads = quads * g.dims[1];
  uint32_t* to = out + (phantom ? 0 : q) + quads * y + planeQuads * (z0 - 2 * RZ);
  // acc[k][r]: output plane i - k's AND so far (k = 2 RZ: complete).
  uint32_t acc[2 * RZ + 1][kRows];
#pragma unroll
  for (int k = 0; k <= 2 * RZ; ++k)
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      acc[k][r] = ~0u;
  uint32_t next[kInputRows];
  fetch(firstZ, next);
  for (int64_t i = 0; i < planes; ++i, to += planeQuads)
  {
    uint32_t own[kInputRows];
#pragma unroll
    for (int j = 0; j < kInputRows; ++j)
      own[j] = next[j];
    if (i + 1 < planes)
      fetch(firstZ + i + 1, next);
    // alongX[j][w]: input row j's AND over the columns -w .. w (the
    // element's centre column comes in at the end).
    uint32_t alongX[kInputRows][RX + 1];
#pragma unroll
    for (int j = 0; j < kInputRows; ++j)
    {
      // (Lanes 0 and 31 get their own quad back: their outputs are unused.)
      const uint32_t left = __shfl_up_sync(0xffffffffu, own[j], 1);
      const uint32_t right = __shfl_down_sync(0xffffffffu, own[j], 1);
      alongX[j][0] = own[j];
      if constexpr (RX >= 1)
        alongX[j][1] = own[j] & shiftedQuad<-1>(left, own[j], right) & shiftedQuad<1>(left, own[j], right);
      if constexpr (RX >= 2)
        alongX[j][2] = alongX[j][1] & shiftedQuad<-2>(left, own[j], right) & shiftedQuad<2>(left, own[j], right);
      static_assert(RX <= 2, "the rows are folded for half widths up to 2");
    }
#pragma unroll
    for (int k = 2 * RZ; k > 0; --k)
#pragma unroll
      for (int r = 0; r < kRows; ++r)
        acc[k][r] = acc[k - 1][r];
#pragma unroll
    for (int k = 0; k <= 2 * RZ; ++k)
    {
      const int dz = k - RZ; // input plane i is plane dz of output i - k
#pragma unroll
      for (int r = 0; r < kRows; ++r)
      {
        // The plane's term on its own, then into the accumulator: the
        // terms of planes dz and -dz are one expression, computed once.
        uint32_t term = ~0u;
#pragma unroll
        for (int dy = -RY; dy <= RY; ++dy)
        {
          const int w = S::halfWidth(dz, dy);
          if (w >= 0)
            term &= alongX[r + RY + dy][w];
        }
        acc[k][r] = k == 0 ? term : acc[k][r] & term;
      }
    }
    // The element's centre column: the AND about column x + centre is the
    // AND about column x shifted, taken from the neighbouring lane where it
    // crosses the quad. The bytes it takes from lanes 0 and 31 are those
    // within 2 of the lanes' inner ends, which folded no quad from past
    // the warp; those it takes from a phantom, within 2 of its end next to
    // the row, folded only the phantom and that row (which is why the
    // phantom sits on the side the centre lies). A run-time branch that
    // every thread takes alike.
#pragma unroll
    for (int r = 0; r < kRows; ++r)
    {
      uint32_t v = acc[2 * RZ][r];
      if (g.centre[0] != 0)
      {
        const uint32_t left = __shfl_up_sync(0xffffffffu, v, 1), right = __shfl_down_sync(0xffffffffu, v, 1);
        v = g.centre[0] > 0 ? __funnelshift_r(v, right, 8 * g.centre[0])
                            : __funnelshift_r(left, v, 32 + 8 * g.centre[0]);
      }
      if (i >= 2 * RZ && outputs && y + r < g.dims[1])
        to[r * quads] = ((v ^ flip) >> 7) & 0x01010101u;
    }
  }
}

// Which of the byte kernel's shapes `e` is (0: none), and its centre. The
// centre's x offset is at most the shape's radius (scipy's origins keep it
// there; the kernel's last shift reaches no further).
inline int quadShapeOf(const ElementOffsets& e, int centre[3])
{
  int shape = 0, radius = 0;
  if (matches<QuadBox3>(e, centre))
    shape = 1, radius = QuadBox3::rx;
  else if (matches<QuadSquare3>(e, centre))
    shape = 2, radius = QuadSquare3::rx;
  else if (matches<QuadBall2>(e, centre))
    shape = 3, radius = QuadBall2::rx;
  else if (matches<QuadDisk2>(e, centre))
    shape = 4, radius = QuadDisk2::rx;
  return centre[0] >= -radius && centre[0] <= radius ? shape : 0;
}

// Whether the kernel reads `image` (device memory) and writes `out`: rows
// of whole quads, x contiguous, every quad aligned for its vector load, a
// 2D or 3D image whose positions in a plane count in 31 bits and whose
// blocks fit the grid along y and z.
inline bool quadLayoutFits(const GridView& image, const void* out)
{
  const size_t size = scalarTypeSize(image.type);
  const size_t alignment = size * kQuad < 16 ? size * kQuad : 16;
  return image.dims[1] > 1 && image.dims[0] % kQuad == 0 && image.strides[0] == 1 &&
    image.strides[1] % kQuad == 0 && image.strides[2] % kQuad == 0 &&
    reinterpret_cast<uintptr_t>(image.data) % alignment == 0 && reinterpret_cast<uintptr_t>(out) % 4 == 0 &&
    (image.dims[0] / kQuad + 1) * (image.dims[1] + 1) < (int64_t(1) << 31) &&
    image.dims[1] <= int64_t(65535) * kWarps && image.dims[2] <= 65535;
}

template <typename T, class S>
void launchQuadShape(const GridView& image, const int centre[3], bool invert, bool border, uint8_t* out)
{
  QuadGrid g{};
  for (int a = 0; a < 3; ++a)
  {
    g.dims[a] = image.dims[a];
    g.strides[a] = image.strides[a];
    g.centre[a] = centre[a];
  }
  const int64_t quads = image.dims[0] / kQuad;
  int64_t tilesX = (quads + kOutputLanes - 1) / kOutputLanes, tilesY = (image.dims[1] + S::tileRows - 1) / S::tileRows;
  if (S::rz > 0)
  {
    g.phantomFirst = centre[0] < 0 ? 1 : 0;
    g.positions = static_cast<uint32_t>(quads + 1);
    g.groups = static_cast<uint32_t>((image.dims[1] + S::rowsPerThread - 1) / S::rowsPerThread);
    const int64_t warps = (int64_t(g.positions) * g.groups + 1 + kOutputLanes - 1) / kOutputLanes;
    tilesX = (warps + kWarps - 1) / kWarps;
    tilesY = 1;
  }
  // Output planes per block: from 8 a radius (the best at 512^3 on the
  // H200: the box 0.122 ms at 8, 0.143 at 16; the ball 0.151 at 16 and
  // 32, 0.166 at 8).
  g.depth = marchDepth<S>(tilesX * tilesY, image.dims[2], 8);
  const dim3 blocks(static_cast<unsigned>(tilesX), static_cast<unsigned>(tilesY),
    static_cast<unsigned>((image.dims[2] + g.depth - 1) / g.depth));
  const uint32_t flip = invert ? kTopBits : 0u, outside = border ? kTopBits : 0u;
  quadKernel<T, S><<<blocks, dim3(kLanes, kWarps)>>>(
    static_cast<const T*>(image.data), g, flip, outside, reinterpret_cast<uint32_t*>(out));
  cuda::check(cudaGetLastError(), "binary morphology: byte kernel");
}

// One pass of erosion by shape `shape` (quadShapeOf) with centre `centre`
// from `image` (device memory, quadLayoutFits) into `out` (0/1 bytes, x
// fastest, device memory); `border` is the border in T-space.
template <typename T>
void launchQuad(const GridView& image, int shape, const int centre[3], bool invert, bool border, uint8_t* out)
{
  switch (shape)
  {
    case 1: return launchQuadShape<T, QuadBox3>(image, centre, invert, border, out);
    case 2: return launchQuadShape<T, QuadSquare3>(image, centre, invert, border, out);
    case 3: return launchQuadShape<T, QuadBall2>(image, centre, invert, border, out);
    default: return launchQuadShape<T, QuadDisk2>(image, centre, invert, border, out);
  }
}
} // namespace registers
} // namespace morphology
} // namespace topovox

// MorseGradient.cpp - the discrete gradient, group by group (see the header).
#include "MorseGradient.h"

#include "../common/Parallel.h"
#include "../common/ScalarDispatch.h"

#include <algorithm>

namespace topovox
{
namespace morse
{
CornerTables makeCornerTables(const cubical::CellGrid& cg)
{
  using euler::choiceAxis;
  CornerTables tab{};
  const bool t = cg.tConstruction;
  tab.tConstruction = t;
  tab.cellStride[0] = 1;
  tab.cellStride[1] = cg.dims[0];
  tab.cellStride[2] = cg.dims[0] * cg.dims[1];
  int dimension[27];
  for (int c = 0; c < 27; ++c)
  {
    dimension[c] = 0;
    tab.needs[c] = euler::cornerMask(c);
    bool along = true;
    for (int a = 0; a < 3; ++a)
    {
      tab.active[a] = cg.active[a];
      const int d = choiceAxis(c, a);
      along = along && (cg.active[a] || d == 0);
      tab.withChoice[a][d + 1] |= 1u << c;
      tab.cellOffset[c] += d * tab.cellStride[a];
      if (d < 0)
        tab.negative[c] |= static_cast<uint8_t>(1u << a);
      const bool spans = t ? cg.active[a] && d == 0 : d != 0;
      if (!spans)
        continue;
      ++dimension[c];
      int f[3] = { choiceAxis(c, 0), choiceAxis(c, 1), choiceAxis(c, 2) };
      for (int side : { -1, 1 })
      {
        f[a] = t ? side : 0;
        tab.facesAcross[c][a] |= 1u << ((f[0] + 1) + 3 * (f[1] + 1) + 9 * (f[2] + 1));
      }
    }
    for (int a = 0; a < 3; ++a)
      tab.faces[c] |= tab.facesAcross[c][a];
    if (along)
      tab.order[tab.count++] = c;
  }
  std::stable_sort(tab.order, tab.order + tab.count, [&](int a, int b) { return dimension[a] < dimension[b]; });
  return tab;
}

namespace
{
// One CPU thread's memo of group matchings. A group in no cut plane is
// matched the same way wherever it lies: the result depends on its owned
// corners and owner axes only, and images repeat a few thousand of those
// over millions of voxels (plateaus above all). A direct-mapped table keyed
// by both replays a stored matching, cell by cell, instead of matching
// again; the cells, states and steps written are the same.
class MatchMemo
{
public:
  // The calling thread's memo for complexes like `tab`'s (construction and
  // axes decide a group's matching): kept across calls, so that a batch of
  // small images fills its table once a thread, not once an image.
  static MatchMemo& forThread(const CornerTables& tab)
  {
    thread_local MatchMemo memo;
    const int kind = (tab.tConstruction ? 8 : 0) | (tab.active[0] ? 1 : 0) | (tab.active[1] ? 2 : 0) |
      (tab.active[2] ? 4 : 0);
    if (memo.kind_ != kind)
    {
      std::fill(memo.entries_.begin(), memo.entries_.end(), Entry{});
      memo.kind_ = kind;
    }
    return memo;
  }
  void operator()(const GradientArrays& g, const CornerTables& tab, uint32_t owned, int64_t base,
    uint8_t ownerAxes, const uint32_t onCut[3])
  {
    const ArraySink sink{ g, tab, base, ownerAxes };
    if ((onCut[0] | onCut[1] | onCut[2]) & owned)
    {
      matchGroup(tab, owned, onCut, sink); // strata: not memoised
      return;
    }
    const uint32_t key = owned | static_cast<uint32_t>(ownerAxes) << 27; // owned: 27 bits
    Entry& e = entries_[(key * 0x9E3779B1u) >> (32 - kBits)];
    if (e.key != key)
    {
      Recorder r{ e };
      e.count = 0;
      matchGroup(tab, owned, onCut, r);
      e.key = key;
    }
    for (int k = 0; k < e.count; ++k)
      sink.cell(e.corner[k], e.state[k], e.step[k]);
  }

private:
  static constexpr int kBits = 12;
  static constexpr size_t kEntries = size_t(1) << kBits;
  struct Entry
  {
    uint32_t key = ~0u; // no group has all 32 bits set: owned never holds bits 30, 31
    uint8_t count = 0;
    uint8_t corner[27], state[27], step[27];
  };
  struct Recorder
  {
    Entry& e;
    void cell(int corner, uint8_t state, uint8_t step)
    {
      e.corner[e.count] = static_cast<uint8_t>(corner);
      e.state[e.count] = state;
      e.step[e.count] = step;
      ++e.count;
    }
  };
  MatchMemo()
    : entries_(kEntries)
  {
  }
  std::vector<Entry> entries_;
  int kind_ = -1;
};

template <typename T, bool Super>
void buildTyped(const GridView& image, Gradient& g, int threads)
{
  const T* data = static_cast<const T*>(image.data);
  const CornerTables tab = makeCornerTables(g.cells);
  const GradientArrays arrays = g.arrays();
  int64_t offset[27];
  for (int b = 0; b < 27; ++b)
    offset[b] = euler::choiceAxis(b, 0) * image.strides[0] + euler::choiceAxis(b, 1) * image.strides[1] +
      euler::choiceAxis(b, 2) * image.strides[2];
  // Groups are independent (each writes only the cells its voxel owns):
  // rows of voxels go to threads as they come.
  const int64_t rows = image.dims[1] * image.dims[2];
  parallelFor(rows, threads, [&](int, int64_t r0, int64_t r1) {
    MatchMemo& memo = MatchMemo::forThread(tab);
    int64_t p[3];
    for (int64_t r = r0; r < r1; ++r)
    {
      p[1] = r % image.dims[1];
      p[2] = r / image.dims[1];
      for (p[0] = 0; p[0] < image.dims[0]; ++p[0])
        gradientOfVoxel<T, Super>(data, image.strides, image.dims, offset, p, tab, arrays, memo);
    }
  });
}
} // namespace

Gradient buildGradient(const GridView& image, const cubical::CellGrid& grid, Filtration filtration,
  const std::vector<int64_t> cuts[3], int threads, Device device, std::string* warnings, Device* used)
{
  Gradient g{ grid };
  for (int a = 0; a < 3; ++a)
    if (!cuts[a].empty())
    {
      g.cut[a].assign(static_cast<size_t>(grid.dims[a]), 0);
      for (int64_t c : cuts[a])
        if (c >= 0 && c < grid.dims[a])
          g.cut[a][static_cast<size_t>(c)] = 1;
    }
  // The arrays are written by the GPU's copy, or filled by the CPU threads
  // (NaN cells stay kAbsent), never on this thread alone.
  const size_t n = static_cast<size_t>(g.cells.cellCount());
  g.state = LargeArray<uint8_t>(n);
  g.ownerCode = LargeArray<uint8_t>(n);
  g.step = LargeArray<uint8_t>(n);
  if (used)
    *used = Device::CPU;
#ifdef TOPOVOX_WITH_CUDA
  if (device == Device::GPU)
  {
    try
    {
      buildGradientGPU(image, g, filtration);
      if (used)
        *used = Device::GPU;
      return g;
    }
    catch (const std::exception& e)
    {
      if (warnings)
        *warnings += std::string(warnings->empty() ? "" : "\n") +
          "persistence: the GPU gradient failed (" + e.what() + "); using the CPU";
    }
  }
#else
  (void)device;
  (void)warnings;
#endif
  g.state.fill(kAbsent, threads);
  g.ownerCode.fill(0, threads);
  g.step.fill(0, threads);
  dispatchScalarType(image.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (filtration == Filtration::Superlevel)
      buildTyped<T, true>(image, g, threads);
    else
      buildTyped<T, false>(image, g, threads);
  });
  return g;
}
}
}

// MorsePiece.cpp - one piece's part of the Morse complex (see
// PersistencePieces.h): its stratified gradient, the critical cells it
// reports, where gradient paths from its critical edges end, where dual
// paths from its (d-1)-cells end, and Morse boundaries on request.
//
// Morse boundary of a critical k-cell c: start from the chain of its faces;
// repeatedly take the largest cell of the chain (in the order below): a
// critical cell stays in the result; a cell paired with a coface is replaced
// by the other faces of that coface (the V-path goes on); a cell paired with
// a face drops out. Coefficients are Z/2, so a cell reached an even number of
// times cancels: the count of V-paths is never enumerated, only its parity.
// The order - owner voxel first (value, then index), then the step at which
// the cell was matched within its group - strictly decreases along every
// V-path, so each cell is taken at most once.
#include "topovox/PersistencePieces.h"

#include "DiagramAssembly.h"
#include "MorseGradient.h"
#include "MorseSummaryGPU.h"

#include "../common/LargeArray.h"
#include "../common/Parallel.h"
#include "../common/ScalarDispatch.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <strings.h>
#include <queue>
#include <stdexcept>
#include <string>
#include <unordered_set>

namespace topovox
{
namespace
{
// Largest doubled-grid coordinate of the whole image along an axis.
int64_t wholeCellMax(int64_t voxels, Construction construction)
{
  if (voxels <= 1)
    return 0;
  return construction == Construction::T ? 2 * voxels : 2 * voxels - 2;
}

// The local array's values in filtration orientation (negated for
// superlevel sets), NaN kept, in the narrowest type holding every one
// exactly: int16 for 8-bit images, int32 for 16-bit ones, float for
// float32, double otherwise. The V-path walks read one per cell they meet,
// at random: 8-bit volumes' values take a quarter of the memory (and of the
// cache) doubles would.
class OrientedValues
{
public:
  OrientedValues() = default;
  OrientedValues(const GridView& g, bool super, int threads, bool* nan)
  {
    switch (g.type)
    {
      case ScalarType::Int8:
      case ScalarType::UInt8:
        kind_ = Kind::I16;
        fill(i16_, g, super, threads, nan);
        break;
      case ScalarType::Int16:
      case ScalarType::UInt16:
        kind_ = Kind::I32;
        fill(i32_, g, super, threads, nan);
        break;
      case ScalarType::Float32:
        kind_ = Kind::F32;
        fill(f32_, g, super, threads, nan);
        break;
      default:
        kind_ = Kind::F64;
        fill(f64_, g, super, threads, nan);
    }
  }
  double operator[](size_t k) const
  {
    switch (kind_)
    {
      case Kind::I16:
        return i16_[k];
      case Kind::I32:
        return i32_[k];
      case Kind::F32:
        return f32_[k];
      default:
        return f64_[k];
    }
  }

private:
  enum class Kind
  {
    I16,
    I32,
    F32,
    F64
  };
  // Rows of x on all threads; *nan: whether one is NaN.
  template <typename S>
  static void fill(LargeArray<S>& out, const GridView& g, bool super, int threads, bool* nan)
  {
    out = LargeArray<S>(static_cast<size_t>(g.voxelCount()));
    std::atomic<bool> anyNan{ false };
    dispatchScalarType(g.type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* d = static_cast<const T*>(g.data);
      parallelFor(g.dims[1] * g.dims[2], threads, [&](int, int64_t r0, int64_t r1) {
        bool mine = false;
        for (int64_t r = r0; r < r1; ++r)
        {
          const int64_t y = r % g.dims[1], z = r / g.dims[1];
          S* row = out.data() + r * g.dims[0];
          const T* in = d + y * g.strides[1] + z * g.strides[2];
          for (int64_t x = 0; x < g.dims[0]; ++x)
          {
            const S v = static_cast<S>(in[x * g.strides[0]]);
            row[x] = super ? static_cast<S>(-v) : v;
            mine = mine || v != v;
          }
        }
        if (mine)
          anyNan = true;
      });
    });
    *nan = anyNan;
  }
  Kind kind_ = Kind::F64;
  LargeArray<int16_t> i16_;
  LargeArray<int32_t> i32_;
  LargeArray<float> f32_;
  LargeArray<double> f64_;
};
} // namespace

PieceRegion PieceRegion::whole(const int64_t wholeDims[3], Construction construction)
{
  PieceRegion r;
  for (int a = 0; a < 3; ++a)
  {
    r.wholeDims[a] = wholeDims[a];
    r.cellHi[a] = wholeCellMax(wholeDims[a], construction);
  }
  return r;
}

PieceRegion PieceRegion::fromVoxelExtent(
  const int64_t wholeDims[3], const int64_t lo[3], const int64_t hi[3], Construction construction)
{
  PieceRegion r;
  for (int a = 0; a < 3; ++a)
  {
    if (lo[a] < 0 || hi[a] < lo[a] || hi[a] >= wholeDims[a])
      throw std::invalid_argument("a piece's voxel extent must lie inside the image");
    r.wholeDims[a] = wholeDims[a];
    r.origin[a] = lo[a];
    if (wholeDims[a] <= 1)
      continue;
    if (hi[a] == lo[a])
      throw std::invalid_argument("a piece must span at least two voxels along each axis of the image "
                                  "(a piece one plane thick holds only its neighbours' cells)");
    r.cellLo[a] = 2 * lo[a];
    r.cellHi[a] = hi[a] + 1 >= wholeDims[a] ? wholeCellMax(wholeDims[a], construction) : 2 * hi[a];
  }
  r.addCutsOf(r);
  return r;
}

void PieceRegion::addCutsOf(const PieceRegion& other)
{
  // A boundary is a cut unless it is the image's: a last piece ends at the
  // largest cell coordinate, others at 2 hi <= 2 n - 4 (V and T alike).
  for (int a = 0; a < 3; ++a)
    for (int64_t c : { other.cellLo[a], other.cellHi[a] })
      if (c > 0 && c < 2 * wholeDims[a] - 2 && std::find(cuts[a].begin(), cuts[a].end(), c) == cuts[a].end())
        cuts[a].push_back(c);
}

void PieceRegion::requiredVoxels(Construction construction, int64_t lo[3], int64_t hi[3]) const
{
  for (int a = 0; a < 3; ++a)
  {
    if (wholeDims[a] <= 1)
    {
      lo[a] = hi[a] = 0;
      continue;
    }
    const bool t = construction == Construction::T;
    lo[a] = std::max<int64_t>(0, t ? cellLo[a] / 2 - 1 : cellLo[a] / 2);
    hi[a] = std::min<int64_t>(wholeDims[a] - 1, cellHi[a] / 2);
  }
}

namespace
{
// Along axis a, a whole-image doubled coordinate less the piece's local
// one.
int64_t pieceShift(const PieceRegion& region, int a)
{
  return region.wholeDims[a] > 1 ? 2 * region.origin[a] : 0;
}

// A piece's cut planes across each axis, in its local doubled coordinates:
// where its closure ends inside the image, and those of the other pieces
// that cross it.
void localCutPlanes(const PieceRegion& region, Construction construction, std::vector<int64_t> cuts[3])
{
  for (int a = 0; a < 3; ++a)
  {
    const int64_t maxCell = wholeCellMax(region.wholeDims[a], construction);
    const int64_t shift = pieceShift(region, a);
    if (region.cellLo[a] > 0)
      cuts[a].push_back(region.cellLo[a] - shift);
    if (region.cellHi[a] < maxCell)
      cuts[a].push_back(region.cellHi[a] - shift);
    for (int64_t c : region.cuts[a])
      if (c > region.cellLo[a] && c < region.cellHi[a])
        cuts[a].push_back(c - shift);
  }
}
} // namespace

morse::PieceGradient morse::pieceGradient(
  const GridView& local, const PieceRegion& region, const PersistenceOptions& options)
{
  std::vector<int64_t> cuts[3];
  localCutPlanes(region, options.construction, cuts);
  const cubical::CellGrid cells(local, options.construction, region.wholeDims);
  PieceGradient p{ Gradient(cells) };
  const topovox::Device want = persistenceDevice(options.device, &p.warnings);
  p.gradient = buildGradient(local, cells, options.filtration, cuts,
    threadCount(options.threads), want, &p.warnings, &p.used);
  return p;
}

struct MorsePiece::Impl
{
  GridView Local;
  PieceRegion Region;
  Construction Construct;
  int Threads;
  int Top; // dimension of the whole complex
  cubical::CellGrid Cells;
  morse::Gradient G;
  OrientedValues Value; // per local voxel
  int64_t WholeCellDims[3];
  int64_t Shift[3];                  // whole doubled coordinate - local one
  int64_t ReportLo[3], ReportHi[3]; // the cells reported, local coordinates, inclusive
  MorsePieceSummary Summary;
  topovox::Device Used = topovox::Device::CPU;
  std::string Warnings;
  // False when the GPU built the summary and kept the gradient: on the
  // device for the boundaries (Device set), or nowhere for an image that
  // needs none (MorseSummaryGPU.h). The boundaries then copy it here when
  // the device hands traversals back.
  mutable bool GradientOnHost = true;
  std::shared_ptr<const morse::DeviceGradient> Device;
  int64_t DeviceImage = 0;
  bool Super = false;
  // Boundaries held on the device (boundaries() given slots without rows)
  // and their cells, for the CPU should the device fail before it gives
  // them (heldBoundaries).
  std::shared_ptr<morse::HeldRecords> Held;
  std::vector<int64_t> HeldCells;

  Impl(const GridView& local, const PieceRegion& region, const PersistenceOptions& options,
    morse::BuiltPiece* built = nullptr, morse::PieceGradient* ahead = nullptr)
    : Local(local)
    , Region(region)
    , Construct(options.construction)
    , Threads(threadCount(options.threads))
    , Top(0)
    , Cells(local, options.construction, region.wholeDims)
    , G(Cells)
  {
    int64_t need[2][3];
    region.requiredVoxels(Construct, need[0], need[1]);
    for (int a = 0; a < 3; ++a)
    {
      if (need[0][a] < region.origin[a] || need[1][a] >= region.origin[a] + local.dims[a])
        throw std::invalid_argument("a piece's array does not hold the voxels its cells touch (axis " +
          std::to_string(a) + ")");
      const int64_t maxCell = wholeCellMax(region.wholeDims[a], Construct);
      Top += region.wholeDims[a] > 1 ? 1 : 0;
      WholeCellDims[a] = maxCell + 1;
      Shift[a] = pieceShift(region, a);
      ReportLo[a] = region.cellLo[a] - Shift[a];
      ReportHi[a] = (region.cellHi[a] == maxCell ? region.cellHi[a] : region.cellHi[a] - 1) - Shift[a];
    }
    const bool super = options.filtration == Filtration::Superlevel;
    if (built)
    {
      adopt(std::move(*built), super);
      return;
    }
    std::string failed; // why the GPU summary did not run
#ifdef TOPOVOX_WITH_CUDA
    // On the GPU, a whole image (no cut planes) gets its summary there,
    // other pieces their gradient.
    if (!ahead && morse::persistenceDevice(options.device, nullptr) == topovox::Device::GPU)
    {
      std::vector<int64_t> cuts[3];
      localCutPlanes(region, Construct, cuts);
      if (cuts[0].empty() && cuts[1].empty() && cuts[2].empty())
        try
        {
          std::vector<morse::BuiltPiece> pieces = morse::buildPiecesGPU({ local }, Construct, options.filtration);
          adopt(std::move(pieces[0]), super);
          return;
        }
        catch (const std::exception& e)
        {
          failed = std::string("persistence: the GPU summary failed (") + e.what() + "); using the CPU";
        }
    }
#endif
    morse::PieceGradient p = ahead ? std::move(*ahead) : morse::pieceGradient(local, region, options);
    G = std::move(p.gradient);
    Used = p.used;
    Warnings = std::move(p.warnings);
    if (!failed.empty())
      Warnings += std::string(Warnings.empty() ? "" : "\n") + failed;
    Value = OrientedValues(local, super, Threads, &Summary.hasNan);
    collectCritical();
    // Over the caller's limit: stop before the paths and the pairing, whose
    // memory grows with the critical cells (Persistence.h).
    if (options.maxCriticalCells >= 0 && static_cast<int64_t>(Summary.critical.size()) > options.maxCriticalCells)
      throw CriticalCellLimit(static_cast<int64_t>(Summary.critical.size()), Cells.cellCount());
    if (Top >= 2)
      collectEdgeEnds();
    if (Top >= 1 && !Summary.hasNan)
      collectDualEnds();
  }

  // Takes what the GPU built; the values are read only by the CPU's
  // boundaries.
  void adopt(morse::BuiltPiece&& built, bool super)
  {
    Summary = std::move(built.summary);
    Used = topovox::Device::GPU;
    Super = super;
    GradientOnHost = built.gradientOnHost;
    Device = std::move(built.device);
    DeviceImage = built.image;
    if (GradientOnHost)
      gradientIsHome(std::move(built.gradient));
  }

  // The gradient on the host, with the values the CPU's traversals order
  // cells by: what the boundaries need from here on.
  void gradientIsHome(morse::Gradient&& g)
  {
    G = std::move(g);
    bool nan = false;
    Value = OrientedValues(Local, Super, Threads, &nan);
    GradientOnHost = true;
  }

  // The device failed during the boundaries (out of memory, a lost
  // device): the gradient again, on the CPU threads. It is the GPU's bit
  // for bit (the same gradientOfVoxel code, tested), so the summary the
  // pairing already holds stays valid.
  void gradientOnCPU(const std::string& why)
  {
    const std::vector<int64_t> noCuts[3];
    gradientIsHome(morse::buildGradient(
      Local, Cells, Super ? Filtration::Superlevel : Filtration::Sublevel, noCuts, Threads, topovox::Device::CPU));
    Warnings += std::string(Warnings.empty() ? "" : "\n") + "persistence: the GPU boundaries failed (" + why +
      "); the gradient was rebuilt on the CPU, which computed them";
  }

  // The gradient and values on the host, for boundaries the CPU computes.
  void bringGradientHome()
  {
#ifdef TOPOVOX_WITH_CUDA
    if (GradientOnHost || !Device)
      return;
    morse::Gradient g(Cells);
    morse::gradientToHost(*Device, DeviceImage, g);
    gradientIsHome(std::move(g));
#endif
  }

  int64_t wholeIndex(const int64_t c[3]) const
  {
    return (c[0] + Shift[0]) + WholeCellDims[0] * ((c[1] + Shift[1]) + WholeCellDims[1] * (c[2] + Shift[2]));
  }
  int64_t wholeIndexOfLocal(int64_t cell) const
  {
    int64_t c[3];
    Cells.coordinates(cell, c);
    return wholeIndex(c);
  }
  // Local coordinates of a whole-grid cell; false when not reported here.
  bool reportedLocal(int64_t whole, int64_t c[3]) const
  {
    c[0] = whole % WholeCellDims[0] - Shift[0];
    c[1] = (whole / WholeCellDims[0]) % WholeCellDims[1] - Shift[1];
    c[2] = whole / (WholeCellDims[0] * WholeCellDims[1]) - Shift[2];
    for (int a = 0; a < 3; ++a)
      if (c[a] < ReportLo[a] || c[a] > ReportHi[a])
        return false;
    return true;
  }

  // Calls visit(c) for every critical cell c of rows r0..r1 - 1 of the box
  // lo..hi (local cell coordinates, inclusive; rows of x, y fastest).
  // Critical cells are a few in a thousand: a row is searched with memchr
  // over its state bytes rather than visited cell by cell.
  template <typename Visit>
  void criticalInRows(const int64_t lo[3], const int64_t hi[3], int64_t r0, int64_t r1, Visit visit) const
  {
    const int64_t ny = hi[1] - lo[1] + 1;
    for (int64_t r = r0; r < r1; ++r)
    {
      int64_t c[3] = { lo[0], lo[1] + r % ny, lo[2] + r / ny };
      const uint8_t* row = G.state.data() + Cells.index(c) - lo[0];
      const uint8_t* end = row + hi[0] + 1;
      for (const uint8_t* at = row + lo[0];
           (at = static_cast<const uint8_t*>(std::memchr(at, morse::kCritical, static_cast<size_t>(end - at))));
           ++at)
      {
        c[0] = at - row;
        visit(static_cast<const int64_t*>(c));
      }
    }
  }

  // Runs body(c, out) for every critical cell c of the box lo..hi on all
  // threads, rows shared out in order; returns what the bodies appended to
  // `out`, in scan order. perCell > 0: each body appends that many items,
  // so a counting pass sizes every chunk's part first (no regrowth of
  // parts that hold hundreds of megabytes).
  template <typename Item, typename Body>
  SummaryArray<Item> scanCritical(const int64_t lo[3], const int64_t hi[3], Body body, int perCell = 0) const
  {
    const int64_t ny = hi[1] - lo[1] + 1, nz = hi[2] - lo[2] + 1;
    if (ny <= 0 || nz <= 0 || hi[0] < lo[0])
      return {};
    const int64_t rows = ny * nz;
    const int64_t chunks = chunksOf(rows, 8 * int64_t(Threads), 1);
    // (The parts on huge pages: UninitializedAllocator.h.)
    using Part = UninitializedVector<Item>;
    std::vector<Part> parts(static_cast<size_t>(chunks));
    forEachChunk(rows, chunks, Threads, [&](int64_t r0, int64_t r1, int64_t k) {
      Part& out = parts[static_cast<size_t>(k)];
      if (perCell > 0)
      {
        size_t count = 0;
        criticalInRows(lo, hi, r0, r1, [&](const int64_t*) { ++count; });
        out.reserve(count * static_cast<size_t>(perCell));
      }
      criticalInRows(lo, hi, r0, r1, [&](const int64_t* c) { body(c, out); });
    });
    SummaryArray<Item> all;
    appendParts(all, parts, Threads);
    return all;
  }

  void collectCritical()
  {
    Summary.critical = scanCritical<MorseCriticalCell>(ReportLo, ReportHi, [&](const int64_t c[3], auto& out) {
      const int64_t cell = Cells.index(c);
      int64_t v[3]; // the owner, from c: no divisions
      G.ownerCoordinates(cell, c, v);
      MorseCriticalCell m;
      m.cell = wholeIndex(c);
      m.voxel = (v[0] + Region.origin[0]) +
        Region.wholeDims[0] * ((v[1] + Region.origin[1]) + Region.wholeDims[1] * (v[2] + Region.origin[2]));
      m.value = Value[static_cast<size_t>(v[0] + Cells.voxels[0] * (v[1] + Cells.voxels[1] * v[2]))];
      m.dimension = Cells.dimension(c);
      out.push_back(m);
    }, 1);
  }

  // Where a path ends, per vertex or top cell, found once and shared by the
  // threads: a path is walked until a cell already known, then every cell on
  // it learns the end. Threads that race on an entry store the same value.
  // (A vertex a voxel: on huge pages, made on the threads. new[] zeroed
  // them on one thread first, and the traversals' reads at random missed
  // the TLB every 4 KiB.)
  struct Memo
  {
    using Slot = std::atomic<int64_t>; // trivially destructible: freed as bytes
    detail::Block<Slot> End;
    Memo(size_t n, int64_t unknown, int threads)
      : End(detail::allocateBlock<Slot>(n))
    {
      Slot* slots = End.get();
      parallelFor(static_cast<int64_t>(n), threads, [&](int, int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i)
          new (slots + i) Slot(unknown);
      });
    }
    int64_t get(int64_t i) const { return End.get()[i].load(std::memory_order_relaxed); }
    void set(int64_t i, int64_t v) { End.get()[i].store(v, std::memory_order_relaxed); }
  };

  // Dimension 0: from each end of each reported critical edge down the
  // gradient to a minimum. Paths stay in the piece (strata).
  void collectEdgeEnds()
  {
    const int64_t vx = (Cells.dims[0] + 1) / 2, vy = (Cells.dims[1] + 1) / 2, vz = (Cells.dims[2] + 1) / 2;
    auto vertexNumber = [&](int64_t vertex) {
      int64_t c[3];
      Cells.coordinates(vertex, c);
      return (c[0] >> 1) + vx * ((c[1] >> 1) + vy * (c[2] >> 1));
    };
    Memo minimumOf(static_cast<size_t>(vx * vy * vz), -1, Threads);
    auto descend = [&](int64_t vertex, std::vector<int64_t>& path) {
      path.clear();
      int64_t end = -1;
      for (;;)
      {
        const int64_t number = vertexNumber(vertex);
        const int64_t known = minimumOf.get(number);
        if (known >= 0)
        {
          end = known;
          break;
        }
        path.push_back(number);
        const uint8_t state = G.state[static_cast<size_t>(vertex)];
        if (state == morse::kCritical)
        {
          end = wholeIndexOfLocal(vertex);
          break;
        }
        if (state == morse::kAbsent || state >= morse::kDown)
          throw std::logic_error("persistence: a gradient path from an edge left the complex");
        const int64_t edge = morse::partner(Cells, vertex, state);
        vertex = 2 * edge - vertex; // the edge's other end
      }
      for (int64_t number : path)
        minimumOf.set(number, end);
      return end;
    };
    const PositionList edges = positionsWhere(static_cast<int64_t>(Summary.critical.size()), Threads,
      [&](int64_t j) { return Summary.critical[static_cast<size_t>(j)].dimension == 1; });
    assignOnHugePages(Summary.edgeEnds, 3 * edges.size(), -1);
    parallelForDynamic(static_cast<int64_t>(edges.size()), Threads, 1024, [&](int, int64_t e0, int64_t e1) {
      std::vector<int64_t> path;
      int64_t c[3];
      for (int64_t e = e0; e < e1; ++e)
      {
        const int64_t whole = Summary.critical[static_cast<size_t>(edges[static_cast<size_t>(e)])].cell;
        reportedLocal(whole, c);
        int64_t* out = &Summary.edgeEnds[static_cast<size_t>(3 * e)];
        *out++ = whole;
        for (int a = 0; a < 3; ++a)
          if (Cells.active[a] && (c[a] & 1))
            for (int s : { -1, 1 })
            {
              int64_t v[3] = { c[0], c[1], c[2] };
              v[a] += s;
              *out++ = descend(Cells.index(v), path);
            }
      }
    });
  }

  // The top dimension: from each critical (d-1)-cell of the closure through
  // each of its cofaces inside the piece (top cells lie in no cut plane, so
  // each belongs to one piece), along the dual V-path - a top cell paired
  // with a face goes on through that face's other coface - to a maximum or
  // out of the image.
  void collectDualEnds()
  {
    int64_t tdim[3];
    for (int a = 0; a < 3; ++a)
      tdim[a] = Cells.active[a] ? (Cells.dims[a] - 1) / 2 : 1;
    auto topNumber = [&](const int64_t c[3]) {
      int64_t n[3];
      for (int a = 0; a < 3; ++a)
        n[a] = Cells.active[a] ? (c[a] - 1) >> 1 : 0;
      return n[0] + tdim[0] * (n[1] + tdim[1] * n[2]);
    };
    Memo maximumOf(static_cast<size_t>(tdim[0] * tdim[1] * tdim[2]), -2, Threads); // -1: the outside
    // From the cell at `start`, across `axis` towards `side`; the walk keeps
    // the coordinates (no divisions per step).
    auto reach = [&](const int64_t start[3], int axis, int side, std::vector<int64_t>& path) {
      path.clear();
      int64_t end = -1; // the outside
      int64_t c[3] = { start[0], start[1], start[2] };
      for (;;)
      {
        c[axis] += side;
        if (c[axis] + Shift[axis] < 0 || c[axis] + Shift[axis] >= WholeCellDims[axis])
          break; // out of the image
        const int64_t coface = Cells.index(c);
        const uint8_t state = G.state[static_cast<size_t>(coface)];
        const int64_t number = topNumber(c);
        const int64_t known = maximumOf.get(number);
        if (known >= -1)
        {
          end = known;
          break;
        }
        path.push_back(number);
        if (state == morse::kCritical)
        {
          end = wholeIndex(c);
          break;
        }
        if (state < morse::kDown)
          throw std::logic_error("persistence: a dual path met a top cell paired upwards");
        // The coface is paired with its face at -/+1 along an axis
        // (GradientGroups.h's codes): go through that face to its other
        // coface, on the same side.
        const int code = state - morse::kDown;
        axis = code >> 1;
        side = (code & 1) ? 1 : -1;
        c[axis] += side;
      }
      for (int64_t number : path)
        maximumOf.set(number, end);
      return end;
    };
    // The closure, in local coordinates.
    int64_t lo[3], hi[3];
    for (int a = 0; a < 3; ++a)
    {
      lo[a] = Region.cellLo[a] - Shift[a];
      hi[a] = Region.cellHi[a] - Shift[a];
    }
    Summary.dualEnds = scanCritical<int64_t>(lo, hi, [&](const int64_t c[3], auto& out) {
      if (Cells.dimension(c) != Top - 1)
        return;
      int axis = 0;
      for (int a = 0; a < 3; ++a)
        if (Cells.active[a] && !(c[a] & 1))
          axis = a;
      bool reported = true;
      for (int a = 0; a < 3; ++a)
        reported = reported && c[a] >= ReportLo[a] && c[a] <= ReportHi[a];
      thread_local std::vector<int64_t> path;
      for (int side : { -1, 1 })
      {
        const int64_t w = c[axis] + side + Shift[axis];
        const bool outside = w < 0 || w >= WholeCellDims[axis];
        const bool inside = c[axis] + side > lo[axis] && c[axis] + side < hi[axis];
        if ((outside && reported) || inside)
        {
          out.push_back(wholeIndex(c));
          out.push_back(outside ? -1 : reach(c, axis, side, path));
        }
      }
    });
  }

  // A cell of a chain, with what orders it. Coordinates travel with the
  // cell so that faces and owners come without divisions.
  struct Key
  {
    double value;
    int64_t order; // local owner index * 32 + step
    int64_t cell;  // local
    int32_t c[3];
    bool operator<(const Key& o) const { return value < o.value || (value == o.value && order < o.order); }
  };
  Key keyOf(int64_t cell, const int32_t c[3]) const
  {
    // The owner: along each axis the first voxel the cell touches, or the
    // second when the owner code says so (CellGrid::touched).
    const uint8_t code = G.ownerCode[static_cast<size_t>(cell)];
    int64_t v[3];
    for (int a = 0; a < 3; ++a)
      v[a] = (Cells.active[a] ? cubical::firstTouched(c[a], Cells.tConstruction) : 0) + ((code >> a) & 1);
    const int64_t owner = v[0] + Cells.voxels[0] * (v[1] + Cells.voxels[1] * v[2]);
    return Key{ Value[static_cast<size_t>(owner)], owner * 32 + G.step[static_cast<size_t>(cell)], cell,
      { c[0], c[1], c[2] } };
  }
  // Pushes the faces of the cell at `c` (index `cell`), but `except`.
  template <typename Heap>
  void pushFaces(Heap& chain, int64_t cell, const int32_t c[3], int64_t except) const
  {
    const int64_t stride[3] = { 1, Cells.dims[0], Cells.dims[0] * Cells.dims[1] };
    for (int a = 0; a < 3; ++a)
      if (Cells.active[a] && (c[a] & 1))
        for (int s : { -1, 1 })
        {
          const int64_t face = cell + s * stride[a];
          if (face == except)
            continue;
          // A face paired with a face of its own, or absent, would drop out
          // whatever its parity: it never enters the chain.
          const uint8_t state = G.state[static_cast<size_t>(face)];
          if (state != morse::kCritical && !(state >= morse::kUp && state < morse::kDown))
            continue;
          int32_t f[3] = { c[0], c[1], c[2] };
          f[a] += s;
          chain.push(keyOf(face, f));
        }
  }

  // The chain: a max-heap of Keys (std::priority_queue's order) on a vector
  // the thread keeps, so that millions of small boundaries (noise, random
  // fields) allocate nothing each.
  struct Chain
  {
    std::vector<Key>& heap;
    void push(const Key& k)
    {
      heap.push_back(k);
      std::push_heap(heap.begin(), heap.end());
    }
    const Key& top() const { return heap.front(); }
    void pop()
    {
      std::pop_heap(heap.begin(), heap.end());
      heap.pop_back();
    }
    bool empty() const { return heap.empty(); }
  };

  // The critical faces of `cell` (local) in its Morse boundary, as whole
  // indices in increasing order, appended to `entries`.
  void appendBoundary(int64_t cell, std::vector<int64_t>& entries) const
  {
    thread_local std::vector<Key> storage;
    storage.clear();
    Chain chain{ storage };
    const size_t first = entries.size();
    int64_t c64[3];
    Cells.coordinates(cell, c64);
    const int32_t c[3] = { static_cast<int32_t>(c64[0]), static_cast<int32_t>(c64[1]),
      static_cast<int32_t>(c64[2]) };
    pushFaces(chain, cell, c, -1);
    while (!chain.empty())
    {
      const Key top = chain.top();
      chain.pop();
      int parity = 1;
      while (!chain.empty() && chain.top().cell == top.cell)
      {
        chain.pop();
        ++parity;
      }
      if (!(parity & 1))
        continue;
      const uint8_t state = G.state[static_cast<size_t>(top.cell)];
      if (state == morse::kCritical)
        entries.push_back(wholeIndexOfLocal(top.cell));
      else if (state >= morse::kUp && state < morse::kDown)
      {
        // Paired with a coface: the V-path goes on through its other faces.
        const int code = state - morse::kUp;
        const int axis = code >> 1;
        const int64_t stride = axis == 0 ? 1 : (axis == 1 ? Cells.dims[0] : Cells.dims[0] * Cells.dims[1]);
        int32_t up[3] = { top.c[0], top.c[1], top.c[2] };
        up[axis] += (code & 1) ? 1 : -1;
        pushFaces(chain, top.cell + ((code & 1) ? stride : -stride), up, top.cell);
      }
      // Paired with a face, or absent (NaN): not part of the Morse complex.
    }
    std::sort(entries.begin() + static_cast<std::ptrdiff_t>(first), entries.end());
  }
};

MorsePiece::MorsePiece(const GridView& local, const PieceRegion& region, const PersistenceOptions& options)
  : P(new Impl(local, region, options))
{
}
MorsePiece::MorsePiece(
  const GridView& image, const PieceRegion& region, const PersistenceOptions& options, morse::BuiltPiece&& built)
  : P(new Impl(image, region, options, &built))
{
}
MorsePiece::MorsePiece(
  const GridView& local, const PieceRegion& region, const PersistenceOptions& options, morse::PieceGradient&& gradient)
  : P(new Impl(local, region, options, nullptr, &gradient))
{
}
MorsePiece::~MorsePiece() = default;
MorsePiece::MorsePiece(MorsePiece&&) noexcept = default;
MorsePiece& MorsePiece::operator=(MorsePiece&&) noexcept = default;

const MorsePieceSummary& MorsePiece::summary() const
{
  return P->Summary;
}

Device MorsePiece::gradientDevice() const
{
  return P->Used;
}

const std::string& MorsePiece::warnings() const
{
  return P->Warnings;
}

MorsePieceSummary MorsePiece::releaseSummary()
{
  MorsePieceSummary s = std::move(P->Summary);
  P->Summary = MorsePieceSummary();
  return s;
}

std::vector<int64_t> MorsePiece::boundaries(const std::vector<int64_t>& cells) const
{
  return boundaries(cells, BoundaryRows());
}

std::vector<int64_t> MorsePiece::boundaries(
  const std::vector<int64_t>& cells, const BoundaryRows& slots) const
{
  // Those reported here, as local cells, found on the threads (a 512^3
  // field asks for 21.8 M); they are independent, so computed in parallel
  // (the gradient is only read), then flattened in order.
  const PositionList at = positionsWhere(static_cast<int64_t>(cells.size()), P->Threads, [&](int64_t k) {
    int64_t c[3];
    return P->reportedLocal(cells[static_cast<size_t>(k)], c);
  });
  std::vector<int64_t> mine, local;
  resizeOnHugePages(mine, at.size());
  resizeOnHugePages(local, at.size());
  parallelFor(static_cast<int64_t>(at.size()), P->Threads, [&](int, int64_t k0, int64_t k1) {
    for (int64_t k = k0; k < k1; ++k)
    {
      int64_t c[3];
      const int64_t whole = cells[static_cast<size_t>(at[static_cast<size_t>(k)])];
      P->reportedLocal(whole, c);
      mine[static_cast<size_t>(k)] = whole;
      local[static_cast<size_t>(k)] = P->Cells.index(c);
    }
  });
  std::vector<int64_t> flat;
#ifdef TOPOVOX_WITH_CUDA
  // A whole image whose gradient is on the device: the device's records
  // (local cells are whole ones then), the CPU's for what it hands back.
  if (P->Device && !P->GradientOnHost && !mine.empty())
  {
    try
    {
      std::vector<int64_t> left;
      if (P->Held)
        throw std::logic_error("persistence: boundaries asked for again before the held ones were given");
      std::shared_ptr<morse::HeldRecords> held;
      flat = morse::boundariesGPU(*P->Device, P->DeviceImage, local, &left, slots, &held);
      if (held)
      {
        // (Whole cells: those asked of the device, but the ones it handed back.)
        P->Held = std::move(held);
        P->HeldCells.swap(mine);
        if (!left.empty())
        {
          const std::unordered_set<int64_t> back(left.begin(), left.end());
          P->HeldCells.erase(std::remove_if(P->HeldCells.begin(), P->HeldCells.end(),
                               [&](int64_t cell) { return back.count(cell) != 0; }),
            P->HeldCells.end());
        }
      }
      if (!left.empty())
        P->bringGradientHome();
      mine = left;
      local = left;
    }
    catch (const std::runtime_error& e)
    {
      // Nothing of the device's is kept: every boundary on the CPU.
      P->gradientOnCPU(e.what());
    }
  }
#endif
  if (!mine.empty() && !P->GradientOnHost)
    throw std::logic_error("persistence: a boundary was asked of an image the GPU summarised without one");
  for (int64_t cell : local)
    if (P->G.state[static_cast<size_t>(cell)] != morse::kCritical)
      throw std::invalid_argument("persistence: a boundary was asked for a cell that is not critical");
  // Traversals range from a few steps to tens of thousands, the long ones
  // clustered (plateaus): cells are taken 16 at a time, not in one range a
  // thread. Each group's records go into a buffer of its own (one
  // allocation a group, not one a boundary: millions of boundaries in a
  // random field), then appended in order on the threads.
  constexpr int64_t kGroup = 16;
  const int64_t count = static_cast<int64_t>(mine.size()), groups = (count + kGroup - 1) / kGroup;
  std::vector<std::vector<int64_t>> parts(static_cast<size_t>(groups));
  parallelForDynamic(groups, P->Threads, 1, [&](int, int64_t g0, int64_t g1) {
    for (int64_t g = g0; g < g1; ++g)
    {
      std::vector<int64_t>& out = parts[static_cast<size_t>(g)];
      for (int64_t j = g * kGroup; j < std::min(count, (g + 1) * kGroup); ++j)
      {
        out.push_back(mine[static_cast<size_t>(j)]);
        const size_t at = out.size();
        out.push_back(0);
        P->appendBoundary(local[static_cast<size_t>(j)], out);
        out[at] = static_cast<int64_t>(out.size() - at - 1); // the record's face count
      }
    }
  });
  appendParts(flat, parts, P->Threads);
  return flat;
}

std::vector<int64_t> MorsePiece::heldBoundaries(
  const int32_t* rowOf, BoundaryRecords* translated, RecordStarts* starts) const
{
  translated->clear();
  starts->clear();
#ifdef TOPOVOX_WITH_CUDA
  if (!P->Held)
    return {};
  if (!rowOf)
    throw std::logic_error("persistence: held boundaries asked for without the matrix rows");
  std::shared_ptr<morse::HeldRecords> held = std::move(P->Held);
  std::vector<int64_t> cells;
  cells.swap(P->HeldCells);
  try
  {
    *translated = morse::heldRecordsToRows(*held, rowOf, starts);
    return {};
  }
  catch (const std::runtime_error& e)
  {
    // The device's records are lost: these boundaries on the CPU.
    held.reset();
    translated->clear();
    starts->clear();
    P->gradientOnCPU(e.what());
    return boundaries(cells);
  }
#else
  (void)rowOf;
  return {};
#endif
}

} // namespace topovox

// GreyMorphology.cpp - grey-scale erosion and dilation (minimum and maximum
// over a structuring element) with scipy.ndimage's border modes and order of
// evaluation (Morphology.h), and the operators built on them.
#include "topovox/Device.h"
#include "topovox/Morphology.h"

#include "ElementOffsets.h"

#include "../common/Parallel.h"
#include "../common/ScalarDispatch.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace topovox
{
namespace
{
using morphology::ElementOffsets;

// Where index i (outside [0, n) or not) reads from, or -1 for the constant.
int64_t extend(int64_t i, int64_t n, BorderMode mode)
{
  if (i >= 0 && i < n)
    return i;
  switch (mode)
  {
    case BorderMode::Nearest: return i < 0 ? 0 : n - 1;
    case BorderMode::Wrap:
    {
      const int64_t m = i % n;
      return m < 0 ? m + n : m;
    }
    case BorderMode::Reflect: // d c b a | a b c d | d c b a: period 2n
    {
      int64_t m = i % (2 * n);
      if (m < 0)
        m += 2 * n;
      return m < n ? m : 2 * n - 1 - m;
    }
    case BorderMode::Mirror: // d c b | a b c d | c b a: period 2n - 2
    {
      if (n == 1)
        return 0;
      int64_t m = i % (2 * n - 2);
      if (m < 0)
        m += 2 * n - 2;
      return m < n ? m : 2 * n - 2 - m;
    }
    case BorderMode::Constant: return -1;
  }
  return -1;
}

void checkImage(const GridView& g)
{
  const std::string why = validateGrid(g);
  if (!why.empty())
    throw std::invalid_argument(why);
  if (g.memory != MemorySpace::Host)
    throw std::invalid_argument("morphology needs the image in host memory");
}

int threadsOf(int t)
{
  return t > 0 ? t : defaultThreadCount();
}

// The minimum (or maximum) over the element: the first visited term in
// double (plus its value, for a non-flat element), the others in T, the
// result converted to T; comparisons that involve NaN are false.
template <typename T>
void minOrMax(const GridView& g, const ElementOffsets& e, bool minimum, const GreyOptions& o, T* out)
{
  const T* data = static_cast<const T*>(g.data);
  const T cv = static_cast<T>(o.cval);
  const int64_t* n = g.dims;
  const size_t count = e.delta.size();
  std::vector<int64_t> direct(count);
  for (size_t k = 0; k < count; ++k)
    direct[k] = e.delta[k][0] * g.strides[0] + e.delta[k][1] * g.strides[1] + e.delta[k][2] * g.strides[2];
  parallelFor(n[1] * n[2], threadsOf(o.threads), [&](int, int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r)
    {
      const int64_t y = r % n[1], z = r / n[1];
      const bool rowInside = y + e.reach[1][0] >= 0 && y + e.reach[1][1] < n[1] && z + e.reach[2][0] >= 0 &&
        z + e.reach[2][1] < n[2];
      for (int64_t x = 0; x < n[0]; ++x)
      {
        const T* at = data + x * g.strides[0] + y * g.strides[1] + z * g.strides[2];
        const bool inside = rowInside && x + e.reach[0][0] >= 0 && x + e.reach[0][1] < n[0];
        auto sample = [&](size_t k) -> T {
          if (inside)
            return at[direct[k]];
          const int64_t q[3] = { extend(x + e.delta[k][0], n[0], o.mode), extend(y + e.delta[k][1], n[1], o.mode),
            extend(z + e.delta[k][2], n[2], o.mode) };
          if (q[0] < 0 || q[1] < 0 || q[2] < 0)
            return cv;
          return data[q[0] * g.strides[0] + q[1] * g.strides[1] + q[2] * g.strides[2]];
        };
        double result = static_cast<double>(sample(0));
        if (!e.flat)
          result += e.values[0];
        for (size_t k = 1; k < count; ++k)
        {
          T t = sample(k);
          if (!e.flat)
            t = static_cast<T>(static_cast<double>(t) + e.values[k]);
          if (minimum ? (static_cast<double>(t) < result) : (static_cast<double>(t) > result))
            result = static_cast<double>(t);
        }
        out[x + n[0] * r] = static_cast<T>(result);
      }
    }
  });
}

GreyImage filter(const GridView& image, const StructuringElement& s, const GreyOptions& o, bool minimum)
{
  checkImage(image);
  // Erosion subtracts the element's values, dilation adds those of the
  // reflected element.
  StructuringElement e = minimum ? s : morphology::reflected(s);
  if (minimum)
    for (double& v : e.values)
      v = -v;
  const ElementOffsets offsets = morphology::offsetsOf(e);
  if (offsets.delta.empty())
    throw std::invalid_argument("the structuring element is empty (no element set)");
  GreyImage out(static_cast<size_t>(image.voxelCount()) * scalarTypeSize(image.type));
  dispatchScalarType(image.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    minOrMax<T>(image, offsets, minimum, o, reinterpret_cast<T*>(out.data()));
  });
  return out;
}

GridView viewOf(const GreyImage& bytes, const GridView& like)
{
  return GridView::contiguous(bytes.data(), like.type, like.dims[0], like.dims[1], like.dims[2]);
}

// a - b (and a + b) in the image's type: integers wrap as numpy's do.
template <typename T>
T wrapAdd(T a, T b)
{
  if constexpr (std::is_integral<T>::value)
  {
    using U = typename std::make_unsigned<T>::type;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  }
  else
    return a + b;
}
template <typename T>
T wrapSub(T a, T b)
{
  if constexpr (std::is_integral<T>::value)
  {
    using U = typename std::make_unsigned<T>::type;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  }
  else
    return a - b;
}

// out[k] = f(a[k], b[k], image[k]) in the image's type.
template <typename F>
GreyImage combine(const GridView& image, const GreyImage& a, const GreyImage& b, F f)
{
  GreyImage out(a.size());
  dispatchScalarType(image.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* pa = reinterpret_cast<const T*>(a.data());
    const T* pb = reinterpret_cast<const T*>(b.data());
    T* po = reinterpret_cast<T*>(out.data());
    const T* d = static_cast<const T*>(image.data);
    int64_t k = 0;
    for (int64_t z = 0; z < image.dims[2]; ++z)
      for (int64_t y = 0; y < image.dims[1]; ++y)
        for (int64_t x = 0; x < image.dims[0]; ++x, ++k)
          po[k] = f(pa[k], pb[k], d[x * image.strides[0] + y * image.strides[1] + z * image.strides[2]]);
  });
  return out;
}
} // namespace

bool parseBorderMode(const std::string& t, BorderMode& out)
{
  if (t == "reflect" || t == "grid-mirror")
    out = BorderMode::Reflect;
  else if (t == "mirror")
    out = BorderMode::Mirror;
  else if (t == "nearest")
    out = BorderMode::Nearest;
  else if (t == "wrap" || t == "grid-wrap")
    out = BorderMode::Wrap;
  else if (t == "constant" || t == "grid-constant")
    out = BorderMode::Constant;
  else
    return false;
  return true;
}

GreyImage greyErosion(const GridView& image, const StructuringElement& s, const GreyOptions& o)
{
  return filter(image, s, o, true);
}

GreyImage greyDilation(const GridView& image, const StructuringElement& s, const GreyOptions& o)
{
  return filter(image, s, o, false);
}

GreyImage greyOpening(const GridView& image, const StructuringElement& s, const GreyOptions& o)
{
  const GreyImage eroded = greyErosion(image, s, o);
  return greyDilation(viewOf(eroded, image), s, o);
}

GreyImage greyClosing(const GridView& image, const StructuringElement& s, const GreyOptions& o)
{
  const GreyImage dilated = greyDilation(image, s, o);
  return greyErosion(viewOf(dilated, image), s, o);
}

GreyImage morphologicalGradient(const GridView& image, const StructuringElement& s, const GreyOptions& o)
{
  return combine(image, greyDilation(image, s, o), greyErosion(image, s, o),
    [](auto d, auto e, auto) { return wrapSub(d, e); });
}

GreyImage morphologicalLaplace(const GridView& image, const StructuringElement& s, const GreyOptions& o)
{
  return combine(image, greyDilation(image, s, o), greyErosion(image, s, o),
    [](auto d, auto e, auto x) { return wrapSub(wrapSub(wrapAdd(d, e), x), x); });
}

GreyImage whiteTophat(const GridView& image, const StructuringElement& s, const GreyOptions& o)
{
  const GreyImage opened = greyOpening(image, s, o);
  return combine(image, opened, opened, [](auto open, auto, auto x) { return wrapSub(x, open); });
}

GreyImage blackTophat(const GridView& image, const StructuringElement& s, const GreyOptions& o)
{
  const GreyImage closed = greyClosing(image, s, o);
  return combine(image, closed, closed, [](auto close, auto, auto x) { return wrapSub(close, x); });
}

} // namespace topovox

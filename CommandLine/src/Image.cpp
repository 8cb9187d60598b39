#include "Image.h"

#include "Errors.h"

#include <limits>

namespace topovox
{
namespace cli
{

std::string formatDims(const std::vector<int64_t>& dims)
{
  std::string s;
  for (size_t a = 0; a < dims.size(); ++a)
    s += (a ? "x" : "") + std::to_string(dims[a]);
  return s;
}

std::string Image::describe() const
{
  return formatDims(std::vector<int64_t>(dims, dims + axes)) + " " + scalarTypeName(type);
}

int64_t imageByteCount(const std::vector<int64_t>& dims, ScalarType type, const std::string& what)
{
  if (dims.empty() || dims.size() > 3)
    throw Error(what + ": an image has 1, 2 or 3 axes, not " + std::to_string(dims.size()));
  // Kept well inside int64 so that later index arithmetic (strides times
  // coordinates, byte offsets) cannot overflow either.
  const int64_t limit = std::numeric_limits<int64_t>::max() / 16;
  int64_t bytes = static_cast<int64_t>(scalarTypeSize(type));
  for (int64_t n : dims)
  {
    if (n < 1)
      throw Error(what + ": every axis needs at least one sample (dims " + formatDims(dims) + ")");
    if (bytes > limit / n)
      throw Error(what + ": dims " + formatDims(dims) + " of " + scalarTypeName(type) +
        " describe an impossibly large image");
    bytes *= n;
  }
  return bytes;
}

} // namespace cli
} // namespace topovox

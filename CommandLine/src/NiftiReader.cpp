#include "NiftiReader.h"

#include "ByteOrder.h"
#include "Errors.h"
#include "InputFile.h"

#include <cmath>
#include <cstring>

namespace topovox
{
namespace cli
{
namespace
{
bool endsWith(const std::string& s, const char* suffix)
{
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// Reads a field of the header at `offset`, swapping bytes when the file's
// order is not the host's.
template <typename T>
T field(const unsigned char* header, size_t offset, bool swap)
{
  T v;
  std::memcpy(&v, header + offset, sizeof(T));
  if (swap)
    swapBytes(&v, sizeof(T), 1);
  return v;
}

bool niftiType(int code, ScalarType& out)
{
  switch (code)
  {
    case 2: out = ScalarType::UInt8; return true;
    case 4: out = ScalarType::Int16; return true;
    case 8: out = ScalarType::Int32; return true;
    case 16: out = ScalarType::Float32; return true;
    case 64: out = ScalarType::Float64; return true;
    case 256: out = ScalarType::Int8; return true;
    case 512: out = ScalarType::UInt16; return true;
    case 768: out = ScalarType::UInt32; return true;
    case 1024: out = ScalarType::Int64; return true;
    case 1280: out = ScalarType::UInt64; return true;
    default: return false;
  }
}

template <typename T>
void scaleInto(const SampleBytes& bytes, double slope, double inter, SampleBytes& out)
{
  const size_t n = bytes.size() / sizeof(T);
  out.resize(n * sizeof(double));
  for (size_t i = 0; i < n; ++i)
  {
    T v;
    std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
    const double d = static_cast<double>(v) * slope + inter;
    std::memcpy(out.data() + i * sizeof(double), &d, sizeof(double));
  }
}
} // namespace

bool isNiftiPath(const std::string& path)
{
  return endsWith(path, ".nii") || endsWith(path, ".nii.gz");
}

Image readNifti(const std::string& path)
{
  InputFile file(path);
  const std::vector<unsigned char> header = file.readUpTo(348);
  if (header.size() < 348)
    throw Error(path + ": not a NIfTI-1 file (" + std::to_string(header.size()) +
      " bytes, a header needs 348)");
  int32_t size;
  std::memcpy(&size, header.data(), 4);
  bool swap = false;
  if (size != 348)
  {
    swapBytes(&size, 4, 1);
    swap = true;
    if (size != 348)
      throw Error(path + ": not a NIfTI-1 file (sizeof_hdr is not 348; NIfTI-2 is not read)");
  }
  if (std::memcmp(header.data() + 344, "ni1", 4) == 0)
    throw Error(path + ": a header of a .hdr/.img pair; give a single-file .nii");
  if (std::memcmp(header.data() + 344, "n+1", 4) != 0)
    throw Error(path + ": not a NIfTI-1 single file (magic is not n+1)");

  const int ndim = field<int16_t>(header.data(), 40, swap);
  if (ndim < 1 || ndim > 7)
    throw Error(path + ": dim[0] = " + std::to_string(ndim) + " is not 1 to 7");
  std::vector<int64_t> dims;
  for (int a = 1; a <= ndim; ++a)
  {
    const int64_t n = field<int16_t>(header.data(), 40 + 2 * a, swap);
    if (n < 1)
      throw Error(path + ": axis " + std::to_string(a) + " has length " + std::to_string(n));
    if (a > 3 && n != 1)
      throw Error(path + ": a " + std::to_string(ndim) + "D image (axis " + std::to_string(a) +
        " has " + std::to_string(n) + " samples); topovox reads 1D to 3D images");
    if (a <= 3)
      dims.push_back(n);
  }
  const int code = field<int16_t>(header.data(), 70, swap);
  ScalarType type;
  if (!niftiType(code, type))
    throw Error(path + ": data type " + std::to_string(code) +
      " is not a real scalar type (complex and RGB images are not read)");
  const float offset = field<float>(header.data(), 108, swap);
  if (!(offset >= 348) || offset > 1e9f)
    throw Error(path + ": vox_offset " + std::to_string(offset) + " is not a valid data offset");
  const int64_t need = imageByteCount(dims, type, path);

  // Skip the extensions between the header and the voxels.
  int64_t skip = static_cast<int64_t>(offset) - 348;
  while (skip > 0)
  {
    const std::vector<unsigned char> gap = file.readUpTo(std::min<int64_t>(skip, 1 << 20));
    if (gap.empty())
      throw Error(path + ": the file ends before its voxels (vox_offset " + std::to_string(offset) + ")");
    skip -= static_cast<int64_t>(gap.size());
  }
  Image image;
  image.bytes = file.readSamples(need);
  if (static_cast<int64_t>(image.bytes.size()) < need)
    throw Error(path + ": the voxels take " + std::to_string(image.bytes.size()) + " bytes but " +
      formatDims(dims) + " " + scalarTypeName(type) + " needs " + std::to_string(need) +
      " (truncated?)");
  if (swap)
    swapBytes(image.bytes.data(), scalarTypeSize(type), image.bytes.size() / scalarTypeSize(type));

  const float slope = field<float>(header.data(), 112, swap);
  const float inter = field<float>(header.data(), 116, swap);
  const bool scaled = std::isfinite(slope) && std::isfinite(inter) && slope != 0 &&
    !(slope == 1 && inter == 0);
  if (scaled)
  {
    SampleBytes out;
    switch (type)
    {
      case ScalarType::Int8: scaleInto<int8_t>(image.bytes, slope, inter, out); break;
      case ScalarType::UInt8: scaleInto<uint8_t>(image.bytes, slope, inter, out); break;
      case ScalarType::Int16: scaleInto<int16_t>(image.bytes, slope, inter, out); break;
      case ScalarType::UInt16: scaleInto<uint16_t>(image.bytes, slope, inter, out); break;
      case ScalarType::Int32: scaleInto<int32_t>(image.bytes, slope, inter, out); break;
      case ScalarType::UInt32: scaleInto<uint32_t>(image.bytes, slope, inter, out); break;
      case ScalarType::Int64: scaleInto<int64_t>(image.bytes, slope, inter, out); break;
      case ScalarType::UInt64: scaleInto<uint64_t>(image.bytes, slope, inter, out); break;
      case ScalarType::Float32: scaleInto<float>(image.bytes, slope, inter, out); break;
      case ScalarType::Float64: scaleInto<double>(image.bytes, slope, inter, out); break;
    }
    image.bytes.swap(out);
    type = ScalarType::Float64;
  }
  image.type = type;
  image.axes = static_cast<int>(dims.size());
  for (int a = 0; a < image.axes; ++a)
  {
    image.dims[a] = dims[a];
    const float d = field<float>(header.data(), 76 + 4 * (a + 1), swap);
    image.spacing[a] = std::isfinite(d) && d > 0 ? d : 1.0;
  }
  return image;
}

} // namespace cli
} // namespace topovox

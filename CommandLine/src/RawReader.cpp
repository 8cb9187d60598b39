#include "RawReader.h"

#include "ByteOrder.h"
#include "Errors.h"
#include "InputFile.h"

namespace topovox
{
namespace cli
{

Image readRaw(const std::string& path, const RawLayout& layout)
{
  const int64_t need = imageByteCount(layout.dims, layout.type, path);
  const std::string shape = formatDims(layout.dims) + " " + scalarTypeName(layout.type);
  // What to suspect when the size is wrong: the options, or the sidecar.
  const std::string suspect = layout.describedBy.empty() ? "wrong --dims or --dtype?"
                                                         : "does " + layout.describedBy + " describe it?";
  InputFile file(path);
  // An uncompressed file's size is known before reading a byte.
  if (!file.compressed() && file.diskSize() >= 0 && file.diskSize() != need)
    throw Error(path + ": the file has " + std::to_string(file.diskSize()) + " bytes but " +
      shape + " needs " + std::to_string(need) + " (" + suspect + ")");

  Image image;
  image.bytes = file.readSamples(need);
  const int64_t got = static_cast<int64_t>(image.bytes.size());
  const char* what = file.compressed() ? "uncompressed data" : "file";
  if (got < need)
    throw Error(path + ": the " + what + " has " + std::to_string(got) + " bytes but " + shape +
      " needs " + std::to_string(need) + " (truncated? " + suspect + ")");
  if (const int64_t extra = file.countRemaining())
    throw Error(path + ": the " + what + " has " + std::to_string(need + extra) + " bytes but " +
      shape + " needs " + std::to_string(need) + " (" + suspect + ")");

  if (layout.bigEndian == hostIsLittleEndian())
    swapBytes(image.bytes.data(), scalarTypeSize(layout.type), image.bytes.size() / scalarTypeSize(layout.type));
  image.type = layout.type;
  image.axes = static_cast<int>(layout.dims.size());
  for (int a = 0; a < image.axes; ++a)
  {
    image.dims[a] = layout.dims[a];
    if (a < static_cast<int>(layout.spacing.size()))
      image.spacing[a] = layout.spacing[a];
  }
  return image;
}

} // namespace cli
} // namespace topovox

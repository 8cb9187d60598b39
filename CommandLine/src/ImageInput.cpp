#include "ImageInput.h"

#include "Errors.h"
#include "InputFile.h"
#include "NiftiReader.h"
#include "VtiReader.h"
#include "NpyReader.h"
#include "RawReader.h"
#include "Sidecar.h"

namespace topovox
{
namespace cli
{

void addInputOptions(OptionParser& p, InputOptions& o)
{
  p.section("Input (raw files only; .npy and .json sidecars describe themselves)");
  p.value("dims", 0, "X[,Y[,Z]]", "samples per axis, x first (x varies fastest\nin the file); 256,256,128 or 256x256x128", "",
    [&o](const std::string& text) {
      o.dims.clear();
      size_t start = 0;
      while (true)
      {
        // "256,256,128" or "256x256x128"
        const size_t sep = text.find_first_of(",x", start);
        o.dims.push_back(parseInteger(text.substr(start, sep - start), 1, INT64_MAX));
        if (sep == std::string::npos)
          break;
        start = sep + 1;
      }
      if (o.dims.size() > 3)
        throw UsageError("an image has 1, 2 or 3 axes, got '" + text + "'");
    });
  p.value("dtype", 0, "TYPE",
    "sample type: int8 uint8 int16 uint16 int32 uint32\nint64 uint64 float32 float64, or numpy codes\n(i1 ... u8, f4, f8)",
    "", [&o](const std::string& text) {
      if (text.find_first_of("<>=|") == 0 || !parseScalarType(text, o.type))
        throw UsageError("unknown type '" + text + "' (use --byte-order for the byte order)");
      o.typeGiven = true;
    });
  p.value("byte-order", 0, "ORDER", "little or big", "little", [&o](const std::string& text) {
    o.bigEndian = parseChoice(text, { "little", "big" }) == 1;
    o.byteOrderGiven = true;
  });
}

const char* inputFormatsHelp()
{
  return "Input formats: NumPy .npy (also .npy.gz); NIfTI-1 .nii (also .nii.gz);\n"
         "VTK XML image data .vti (also .vti.gz; one array: the active point scalars);\n"
         "a .json sidecar describing a raw file; .raw/.raw.gz with a sibling .json\n"
         "sidecar; any raw file (also gzip-compressed) with --dims and --dtype.";
}

Image readImage(const std::string& path, const InputOptions& o, std::string* how)
{
  const bool rawOptions = !o.dims.empty() || o.typeGiven || o.byteOrderGiven;
  auto say = [how](const std::string& text) {
    if (how)
      *how = text;
  };
  // Opening first gives "No such file" before any complaint about options.
  {
    InputFile probe(path);
  }

  if (isVtiPath(path))
  {
    if (rawOptions)
      throw UsageError(std::string("--dims, --dtype and --byte-order describe raw files; ") +
        path + " describes itself");
    say("VTK XML image data .vti");
    return readVti(path);
  }
  if (isNiftiPath(path))
  {
    if (rawOptions)
      throw UsageError(std::string("--dims, --dtype and --byte-order describe raw files; ") +
        path + " describes itself");
    say("NIfTI-1");
    return readNifti(path);
  }
  const bool npy = endsWith(path, ".npy") || endsWith(path, ".npy.gz") ||
    (!endsWith(path, ".json") && o.dims.empty() && hasNpyMagic(path));
  if (npy || endsWith(path, ".json"))
  {
    if (rawOptions)
      throw UsageError(std::string("--dims, --dtype and --byte-order describe raw files; ") +
        path + " describes itself");
    if (npy)
    {
      say("NumPy .npy");
      return readNpy(path, o.stacks);
    }
    const Sidecar sidecar = readSidecar(path);
    say("raw " + sidecar.dataPath + " described by " + path);
    return readRaw(sidecar.dataPath, sidecar.layout);
  }

  if (rawOptions)
  {
    if (o.dims.empty() || !o.typeGiven)
      throw UsageError("a raw file needs both --dims and --dtype");
    RawLayout layout;
    layout.dims = o.dims;
    layout.type = o.type;
    layout.bigEndian = o.bigEndian;
    say(std::string("raw, ") + (o.bigEndian ? "big" : "little") + "-endian, from the options");
    return readRaw(path, layout);
  }

  const std::string json = findSidecar(path);
  if (json.empty())
    throw UsageError("cannot tell the layout of " + path +
      ": give --dims and --dtype, or a .json sidecar, or use .npy");
  const Sidecar sidecar = readSidecar(json);
  say("raw, described by " + json);
  return readRaw(path, sidecar.layout);
}

} // namespace cli
} // namespace topovox

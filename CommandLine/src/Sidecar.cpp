#include "Sidecar.h"

#include "Errors.h"
#include "InputFile.h"
#include "Json.h"

#include <cmath>
#include <stdexcept>

namespace topovox
{
namespace cli
{
namespace
{

std::string directoryOf(const std::string& path)
{
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// "dir/name" for "dir/name.json", "dir/name.raw" and "dir/name.raw.gz".
std::string stemOf(const std::string& path)
{
  for (const char* ext : { ".raw.gz", ".raw", ".json" })
    if (endsWith(path, ext))
      return path.substr(0, path.size() - std::string(ext).size());
  return path;
}

std::string readText(const std::string& path)
{
  InputFile file(path);
  // Sidecars are small; anything huge is not one.
  std::vector<unsigned char> bytes = file.readUpTo(1 << 20);
  if (file.countRemaining() > 0)
    throw Error(path + ": too large for a JSON sidecar");
  return std::string(bytes.begin(), bytes.end());
}

// A whole number in [1, 2^40]: the axis lengths.
int64_t axisLength(const JsonValue& v, const std::string& bad)
{
  if (v.kind != JsonValue::Number || v.number != std::floor(v.number) || v.number < 1 ||
    v.number > 1099511627776.0)
    throw Error(bad + "\"dims\" must hold positive whole numbers");
  return static_cast<int64_t>(v.number);
}

} // namespace

std::string findSidecar(const std::string& rawPath)
{
  if (!endsWith(rawPath, ".raw") && !endsWith(rawPath, ".raw.gz"))
    return std::string();
  const std::string json = stemOf(rawPath) + ".json";
  return fileExists(json) ? json : std::string();
}

Sidecar readSidecar(const std::string& jsonPath)
{
  const std::string bad = jsonPath + ": ";
  JsonValue doc;
  try
  {
    doc = parseJson(readText(jsonPath));
  }
  catch (const std::invalid_argument& e)
  {
    throw Error(bad + "malformed JSON (" + e.what() + ")");
  }
  if (doc.kind != JsonValue::Object)
    throw Error(bad + "a sidecar is a JSON object");

  Sidecar out;
  out.layout.describedBy = jsonPath;
  const JsonValue* dims = doc.find("dims");
  if (!dims || dims->kind != JsonValue::Array || dims->items.empty() || dims->items.size() > 3)
    throw Error(bad + "\"dims\" must be an array of 1 to 3 axis lengths");
  for (const JsonValue& n : dims->items)
    out.layout.dims.push_back(axisLength(n, bad));

  const JsonValue* dtype = doc.find("dtype");
  if (!dtype || dtype->kind != JsonValue::String)
    throw Error(bad + "\"dtype\" is missing or not a string");
  if (!parseScalarType(dtype->text, out.layout.type) || dtype->text.find_first_of("<>=|") == 0)
    throw Error(bad + "unsupported dtype \"" + dtype->text + "\"");

  // byte_order: "little" (the default) or "big".
  if (const JsonValue* order = doc.find("byte_order"))
  {
    if (order->kind != JsonValue::String || (order->text != "little" && order->text != "big"))
      throw Error(bad + "\"byte_order\" must be \"little\" or \"big\"");
    out.layout.bigEndian = order->text == "big";
  }

  if (const JsonValue* spacing = doc.find("spacing"))
  {
    if (spacing->kind != JsonValue::Array || spacing->items.size() != dims->items.size())
      throw Error(bad + "\"spacing\" must have one number per axis");
    for (const JsonValue& s : spacing->items)
    {
      if (s.kind != JsonValue::Number || !(s.number > 0) || !std::isfinite(s.number))
        throw Error(bad + "\"spacing\" must hold positive numbers");
      out.layout.spacing.push_back(s.number);
    }
  }

  // Redundant keys must agree: a disagreement means the sidecar was edited
  // by hand or belongs to another file.
  if (const JsonValue* ndim = doc.find("ndim"))
    if (ndim->kind != JsonValue::Number || ndim->number != static_cast<double>(dims->items.size()))
      throw Error(bad + "\"ndim\" disagrees with \"dims\"");
  const int64_t bytes = imageByteCount(out.layout.dims, out.layout.type, jsonPath);
  if (const JsonValue* size = doc.find("size_bytes"))
    if (size->kind != JsonValue::Number || size->number != static_cast<double>(bytes))
      throw Error(bad + "\"size_bytes\" disagrees with \"dims\" and \"dtype\" (" +
        std::to_string(bytes) + " bytes)");

  // The data file: "file" relative to the sidecar's folder, else the raw
  // file with the sidecar's stem.
  if (const JsonValue* file = doc.find("file"))
  {
    if (file->kind != JsonValue::String || file->text.empty())
      throw Error(bad + "\"file\" must be a file name");
    out.dataPath = file->text[0] == '/' ? file->text : directoryOf(jsonPath) + file->text;
  }
  else
  {
    const std::string stem = stemOf(jsonPath);
    out.dataPath = fileExists(stem + ".raw") ? stem + ".raw" : stem + ".raw.gz";
    if (!fileExists(out.dataPath))
      throw Error(bad + "no \"file\" key and neither " + stem + ".raw nor " + stem +
        ".raw.gz exists");
  }
  return out;
}

} // namespace cli
} // namespace topovox

#include "CommandSteps.h"

#include "Errors.h"
#include "Messages.h"
#include "Progress.h"

namespace topovox
{
namespace cli
{

const std::string& singleInput(
  const std::vector<std::string>& positional, const std::string& output, const char* command)
{
  const std::string name(command);
  if (positional.empty())
    throw UsageError(name + " needs an INPUT file");
  if (positional.size() > 1)
    throw UsageError(name + " takes one INPUT file, got " + std::to_string(positional.size()) +
      " ('" + positional[1] + "' too)");
  if (output.empty())
    throw UsageError(name + " needs -o OUTPUT (.csv, .npy, or - for stdout)");
  return positional[0];
}

Image readInputLogged(const std::string& path, const InputOptions& options, bool verbose)
{
  Stopwatch watch;
  std::string how;
  Image image = readImage(path, options, &how);
  if (verbose)
    say("read " + path + " (" + how + "): " + image.describe() + ", " +
      std::to_string(image.voxelCount()) + " voxels, " + seconds(watch.seconds()));
  return image;
}

void writeRowsLogged(OutputFile& output, const RowSource& rows, TableFormat format,
  const std::string& outputName, bool verbose, int threads)
{
  Stopwatch watch;
  writeRows(output, rows, format, threads);
  output.commit();
  if (verbose)
    say("wrote " + (output.isStdout() ? std::string("stdout") : outputName) + " (" +
      std::to_string(rows.rows) + " rows): " + seconds(watch.seconds()));
}

void writeTableLogged(OutputFile& output, const Table& table, TableFormat format,
  const std::string& outputName, bool verbose, int threads)
{
  writeRowsLogged(output, rowsOf(table), format, outputName, verbose, threads);
}

std::vector<double> valuesOf(const Image& image)
{
  const GridView v = image.view();
  std::vector<double> out(static_cast<size_t>(image.voxelCount()));
  for (int64_t k = 0; k < image.voxelCount(); ++k)
    switch (v.type)
    {
      case ScalarType::Int8: out[static_cast<size_t>(k)] = reinterpret_cast<const int8_t*>(v.data)[k]; break;
      case ScalarType::UInt8: out[static_cast<size_t>(k)] = reinterpret_cast<const uint8_t*>(v.data)[k]; break;
      case ScalarType::Int16: out[static_cast<size_t>(k)] = reinterpret_cast<const int16_t*>(v.data)[k]; break;
      case ScalarType::UInt16: out[static_cast<size_t>(k)] = reinterpret_cast<const uint16_t*>(v.data)[k]; break;
      case ScalarType::Int32: out[static_cast<size_t>(k)] = reinterpret_cast<const int32_t*>(v.data)[k]; break;
      case ScalarType::UInt32: out[static_cast<size_t>(k)] = reinterpret_cast<const uint32_t*>(v.data)[k]; break;
      case ScalarType::Int64:
        out[static_cast<size_t>(k)] = static_cast<double>(reinterpret_cast<const int64_t*>(v.data)[k]);
        break;
      case ScalarType::UInt64:
        out[static_cast<size_t>(k)] = static_cast<double>(reinterpret_cast<const uint64_t*>(v.data)[k]);
        break;
      case ScalarType::Float32: out[static_cast<size_t>(k)] = reinterpret_cast<const float*>(v.data)[k]; break;
      case ScalarType::Float64: out[static_cast<size_t>(k)] = reinterpret_cast<const double*>(v.data)[k]; break;
    }
  return out;
}


Stack stackOf(const Image& image)
{
  if (image.fortranOrder || (image.stack == 0 && image.axes < 2))
    throw UsageError("--batch needs a C-ordered stack, images along numpy's first axis: an array of 2, 3 or 4 "
                     "axes (n images of 1, 2 or 3 axes)");
  Stack s;
  for (int a = 0; a < 3; ++a)
    s.dims[a] = image.dims[a];
  if (image.stack > 0)
  {
    s.count = image.stack;
    s.axes = 3;
    s.dims[2] = image.dims[2] / image.stack;
  }
  else
  {
    s.count = image.dims[image.axes - 1]; // numpy's first axis, the last of ours
    s.axes = image.axes - 1;
    s.dims[image.axes - 1] = 1;
  }
  s.voxels = s.dims[0] * s.dims[1] * s.dims[2];
  return s;
}

GridView Stack::image(const Image& stack, int64_t k) const
{
  return GridView::contiguous(stack.bytes.data() + static_cast<size_t>(k * voxels) * scalarTypeSize(stack.type),
    stack.type, dims[0], dims[1], dims[2]);
}

void appendImageRows(Table& batch, const Table& one, int64_t k)
{
  if (batch.columns.empty())
  {
    batch.columns = { "image" };
    batch.columns.insert(batch.columns.end(), one.columns.begin(), one.columns.end());
  }
  const size_t width = one.columns.size();
  for (size_t r = 0; r < one.rowCount(); ++r)
  {
    batch.values.push_back(static_cast<double>(k));
    batch.values.insert(batch.values.end(), one.values.begin() + static_cast<std::ptrdiff_t>(r * width),
      one.values.begin() + static_cast<std::ptrdiff_t>((r + 1) * width));
  }
}

void addWarning(std::string& all, const std::string& warning)
{
  if (!warning.empty() && all.find(warning) == std::string::npos)
    all += (all.empty() || all.back() == '\n' ? "" : "\n") + warning;
}

} // namespace cli
} // namespace topovox

// CommandDistance.cpp - `topovox distance`: scipy.ndimage's distance
// transforms (Kernels/include/topovox/DistanceTransform.h) of an image file,
// written as .npy images: the distances, and with --indices the nearest
// background voxel's indices, shaped (ndim,) + the image's numpy shape.
#include "Commands.h"

#include "CommandSteps.h"
#include "CommonOptions.h"
#include "Errors.h"
#include "ImageInput.h"
#include "ImageWriter.h"
#include "InputFile.h"
#include "Messages.h"
#include "OutputFile.h"
#include "Progress.h"

#include "topovox/DistanceTransform.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace topovox
{
namespace cli
{
namespace
{
struct DistanceArguments
{
  InputOptions input;
  ExecutionOptions execution;
  std::string output, indices, method = "edt", metric;
  std::vector<double> sampling;
};

void addDistanceOptions(OptionParser& p, DistanceArguments& a)
{
  p.section("Transform");
  p.value("method", 0, "edt|cdt|bf",
    "edt: exact Euclidean (distance_transform_edt);\ncdt: chamfer, taxicab or chessboard;\nbf: brute force "
    "(distance_transform_bf)",
    "edt", [&a](const std::string& t) {
      if (t != "edt" && t != "cdt" && t != "bf")
        throw UsageError("expected edt, cdt or bf, got '" + t + "'");
      a.method = t;
    });
  p.value("metric", 0, "METRIC",
    "euclidean (edt, bf), taxicab or chessboard\n(cdt: default chessboard, as scipy's; bf: default\neuclidean)", "",
    [&a](const std::string& t) {
      if (t != "euclidean" && t != "taxicab" && t != "chessboard")
        throw UsageError("expected euclidean, taxicab or chessboard, got '" + t + "'");
      a.metric = t;
    });
  p.value("sampling", 0, "S|X,Y,Z", "voxel size per axis, x first (edt; bf euclidean)", "1",
    [&a](const std::string& t) { a.sampling = parseNumberList(t); });
  p.section("Output");
  p.value("output", 'o', "OUTPUT", "required. the distances as a .npy image: float64\n(edt, bf euclidean), int32 "
    "(cdt), uint32 (bf taxicab\nor chessboard)", "", [&a](const std::string& t) { a.output = t; });
  p.value("indices", 0, "FILE", "also write the nearest background voxel's indices\n(.npy, int32, shape (ndim,) + "
    "the image's)", "", [&a](const std::string& t) { a.indices = t; });
  addInputOptions(p, a.input);
  addExecutionOptions(p, a.execution);
  p.epilog(std::string(inputFormatsHelp()) +
    "\n\nForeground: nonzero voxels; each gets its distance to the nearest zero voxel.\n"
    "Results equal scipy.ndimage's (Euclidean distances within rounding; where\n"
    "several background voxels are nearest, the indices may name another).\n\n"
    "Examples:\n"
    "  topovox distance mask.npy -o edt.npy\n"
    "  topovox distance seg.nii.gz --sampling 0.8,0.8,2 --indices nearest.npy -o edt.npy\n"
    "  topovox distance mask.npy --method cdt --metric taxicab -o cdt.npy");
}

DistanceMetric metricOf(const std::string& m)
{
  return m == "taxicab" ? DistanceMetric::Taxicab
    : m == "chessboard" ? DistanceMetric::Chessboard
                        : DistanceMetric::Euclidean;
}
} // namespace

int runDistance(const std::vector<std::string>& args)
{
  DistanceArguments a;
  OptionParser parser("topovox distance [options] INPUT -o OUTPUT.npy",
    "Distance transforms with scipy.ndimage's conventions: the distance of every\n"
    "foreground (nonzero) voxel to the nearest background (zero) voxel.");
  addDistanceOptions(parser, a);
  const std::vector<std::string> positional = parser.parse(args);
  if (a.execution.help)
  {
    std::fputs(parser.help().c_str(), stdout);
    return ExitSuccess;
  }
  const std::string& inputPath = singleInput(positional, a.output, "distance");
  if (!endsWith(a.output, ".npy") || (!a.indices.empty() && !endsWith(a.indices, ".npy")))
    throw UsageError("the outputs of distance are images: name them .npy");
  if (a.method == "edt" && !a.metric.empty() && a.metric != "euclidean")
    throw UsageError("--method edt is Euclidean: use --method cdt or bf for " + a.metric);
  if (a.method == "cdt" && a.metric == "euclidean")
    throw UsageError("--method cdt takes the taxicab or chessboard metric");
  const bool verbose = a.execution.verbose;
  OutputFile output(a.output);
  std::unique_ptr<OutputFile> indexOutput(a.indices.empty() ? nullptr : new OutputFile(a.indices));
  const Image image = readInputLogged(inputPath, a.input, verbose);
  if (indexOutput && image.fortranOrder)
    throw UsageError("--indices needs a C-ordered input (save it with np.ascontiguousarray)");
  double sampling[3] = { 1, 1, 1 };
  if (!a.sampling.empty())
  {
    if (a.sampling.size() != 1 && static_cast<int>(a.sampling.size()) != image.axes)
      throw UsageError("--sampling takes one value or one per image axis (" + std::to_string(image.axes) + ")");
    for (int k = 0; k < image.axes; ++k)
      sampling[k] = a.sampling.size() == 1 ? a.sampling[0] : a.sampling[static_cast<size_t>(k)];
  }
  Stopwatch watch;
  DistanceTransform t;
  Image result = image;
  try
  {
    if (a.method == "edt")
    {
      t = distanceTransformEdt(image.view(), sampling, indexOutput != nullptr, a.execution.threads, a.execution.device);
      result.type = ScalarType::Float64;
      result.bytes.resize(t.distances.size() * sizeof(double));
      std::memcpy(result.bytes.data(), t.distances.data(), result.bytes.size());
    }
    else if (a.method == "cdt")
    {
      t = distanceTransformCdt(image.view(), a.metric.empty() ? DistanceMetric::Chessboard : metricOf(a.metric),
        indexOutput != nullptr, a.execution.threads);
      result.type = ScalarType::Int32;
      result.bytes.resize(t.integerDistances.size() * sizeof(int32_t));
      std::memcpy(result.bytes.data(), t.integerDistances.data(), result.bytes.size());
    }
    else
    {
      const DistanceMetric m = metricOf(a.metric);
      t = distanceTransformBf(image.view(), m, sampling, indexOutput != nullptr, a.execution.threads);
      if (m == DistanceMetric::Euclidean)
      {
        result.type = ScalarType::Float64;
        result.bytes.resize(t.distances.size() * sizeof(double));
        std::memcpy(result.bytes.data(), t.distances.data(), result.bytes.size());
      }
      else
      {
        result.type = ScalarType::UInt32;
        result.bytes.resize(t.bfDistances.size() * sizeof(uint32_t));
        std::memcpy(result.bytes.data(), t.bfDistances.data(), result.bytes.size());
      }
    }
  }
  catch (const std::invalid_argument& e)
  {
    throw UsageError(e.what());
  }
  if (verbose)
    say("distance " + a.method + ": " + seconds(watch.seconds()));
  writeImageNpy(output.stream(), result);
  output.commit();
  if (indexOutput)
  {
    // numpy's axes first (z, y, x for 3D): (ndim,) + the image's shape.
    const int64_t voxels = image.voxelCount();
    std::vector<int32_t> all;
    all.reserve(static_cast<size_t>(voxels) * image.axes);
    std::vector<int64_t> shape = { image.axes };
    for (int j = 0; j < image.axes; ++j)
    {
      const auto& axis = t.indices[image.axes - 1 - j];
      all.insert(all.end(), axis.begin(), axis.end());
      shape.push_back(image.dims[image.axes - 1 - j]);
    }
    writeArrayNpy(indexOutput->stream(), ScalarType::Int32, shape, all.data(), all.size() * sizeof(int32_t));
    indexOutput->commit();
  }
  return ExitSuccess;
}

} // namespace cli
} // namespace topovox

// CommandDistance.cpp - `topovox distance`: scipy.ndimage's distance
// transforms (Kernels/include/topovox/DistanceTransform.h) of an image file,
// written as .npy images: the distances, and with --indices the nearest
// background voxel's indices, shaped (ndim,) + the image's numpy shape.
#include "Commands.h"

#include "CommandSteps.h"
#include "CommonOptions.h"
#include "Errors.h"
#include "GpuStart.h"
#include "ImageInput.h"
#include "ImageWriter.h"
#include "InputFile.h"
#include "Messages.h"
#include "OutputFile.h"
#include "Progress.h"

#include "topovox/Batch.h"
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
  bool batch = false; // --batch: numpy's first axis indexes images
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
  p.flag("batch", 0,
    "the input is a stack of images: numpy's first axis\nindexes them (a (n, h, w) array: n images h x w);\n"
    "each is transformed alone, the images shared among\nthreads; the output is the stack (indices: shape\n"
    "(n, ndim) + an image's)",
    &a.batch);
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
  InputOptions input = a.input;
  input.stacks = a.batch;
  // Only the exact Euclidean transform has a GPU path.
  GpuStart gpu(a.method == "edt" && mayRunOnGpu(a.execution.device));
  const Image image = readInputLogged(inputPath, input, verbose);
  gpu.wait();
  if (indexOutput && image.fortranOrder)
    throw UsageError("--indices needs a C-ordered input (save it with np.ascontiguousarray)");
  const Stack stack = a.batch ? stackOf(image) : Stack();
  const int axes = a.batch ? stack.axes : image.axes; // the images' axes
  double sampling[3] = { 1, 1, 1 };
  perAxis(a.sampling, axes, "--sampling", sampling);
  const bool withIndices = indexOutput != nullptr;
  const DistanceMetric metric = a.metric.empty() ? (a.method == "cdt" ? DistanceMetric::Chessboard
                                                                      : DistanceMetric::Euclidean)
                                                 : metricOf(a.metric);
  // The output type: scipy's for each transform.
  Image result = image.withoutSamples();
  result.type = a.method == "cdt" ? ScalarType::Int32
    : (a.method == "bf" && metric != DistanceMetric::Euclidean) ? ScalarType::UInt32
                                                                : ScalarType::Float64;
  const size_t outSize = scalarTypeSize(result.type);
  // One image through the transform.
  auto runOne = [&](const GridView& v, int threads) {
    if (a.method == "edt")
      return distanceTransformEdt(v, sampling, withIndices, threads, a.execution.device);
    if (a.method == "cdt")
      return distanceTransformCdt(v, metric, withIndices, threads);
    return distanceTransformBf(v, metric, sampling, withIndices, threads);
  };
  // Its distances, of the output's type.
  auto distancesOf = [&](const DistanceTransform& t) {
    return result.type == ScalarType::Int32 ? static_cast<const void*>(t.integerDistances.data())
      : result.type == ScalarType::UInt32   ? static_cast<const void*>(t.bfDistances.data())
                                            : static_cast<const void*>(t.distances.data());
  };
  // A single image's transform, written from its own arrays (not copied
  // into an image first: 1 GB of float64 at 512^3).
  DistanceTransform whole;
  Stopwatch watch;
  // The index file: (ndim,) + the image's shape, or (n, ndim) + an image's
  // with --batch; numpy's axes first (z, y, x for 3D).
  std::vector<int32_t> allIndices;
  std::vector<int64_t> indexShape;
  try
  {
    if (!a.batch)
    {
      whole = runOne(image.view(), a.execution.threads);
      indexShape = { axes };
      for (int j = 0; withIndices && j < axes; ++j)
      {
        const auto& axis = whole.indices[static_cast<size_t>(axes - 1 - j)];
        allIndices.insert(allIndices.end(), axis.begin(), axis.end());
        indexShape.push_back(image.dims[axes - 1 - j]);
      }
    }
    else
    {
      const int64_t count = stack.count, voxels = stack.voxels;
      result.bytes.resize(static_cast<size_t>(image.voxelCount()) * outSize); // (every image's written)
      if (withIndices)
        allIndices.assign(static_cast<size_t>(count * axes * voxels), 0);
      // Only the exact Euclidean transform has a GPU path: the others share
      // the images among the CPU threads whatever the device.
      const Device batchDevice = a.method == "edt" ? a.execution.device : Device::CPU;
      forEachImage(count, a.execution.threads, batchDevice, [&](int64_t k, int threads) {
        const DistanceTransform t = runOne(stack.image(image, k), threads);
        std::memcpy(result.bytes.data() + static_cast<size_t>(k * voxels) * outSize, distancesOf(t),
          static_cast<size_t>(voxels) * outSize);
        for (int j = 0; withIndices && j < axes; ++j)
        {
          const auto& axis = t.indices[static_cast<size_t>(axes - 1 - j)];
          std::copy(axis.begin(), axis.end(), allIndices.begin() + static_cast<std::ptrdiff_t>((k * axes + j) * voxels));
        }
        return true;
      });
      indexShape = { count, axes };
      for (int j = 0; j < axes; ++j)
        indexShape.push_back(stack.dims[axes - 1 - j]);
    }
  }
  catch (const std::invalid_argument& e)
  {
    throw UsageError(e.what());
  }
  if (verbose)
    say("distance " + a.method + ": " + seconds(watch.seconds()));
  if (a.batch)
    writeImageNpy(output, result, false, threadCount(a.execution.threads));
  else
    writeImageNpy(output, result, distancesOf(whole), static_cast<size_t>(image.voxelCount()) * outSize, false,
      threadCount(a.execution.threads));
  output.commit();
  if (indexOutput)
  {
    writeArrayNpy(*indexOutput, ScalarType::Int32, indexShape, allIndices.data(), allIndices.size() * sizeof(int32_t),
      threadCount(a.execution.threads));
    indexOutput->commit();
  }
  return ExitSuccess;
}

} // namespace cli
} // namespace topovox

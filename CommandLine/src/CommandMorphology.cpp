// CommandMorphology.cpp - `topovox morphology OPERATION`: scipy.ndimage's
// morphology (Kernels/include/topovox/Morphology.h) on an image file, the
// result written as a .npy image.
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
#include "topovox/Morphology.h"

#include <cstdio>
#include <functional>
#include <map>
#include <stdexcept>

namespace topovox
{
namespace cli
{
namespace
{
struct MorphologyArguments
{
  InputOptions input;
  ExecutionOptions execution;
  std::string output;
  std::vector<int64_t> size;
  int connectivity = 0; // 0: not given
  int iterateStructure = 1;
  std::string footprint, structure, structure2, mask;
  std::vector<int64_t> origin;
  BorderMode mode = BorderMode::Reflect;
  double cval = 0;
  int iterations = 1;
  bool borderValue = false;
  bool batch = false; // --batch: numpy's first axis indexes images
};

const char* const kBinary[] = { "binary_erosion", "binary_dilation", "binary_opening", "binary_closing",
  "binary_propagation", "binary_fill_holes", "binary_hit_or_miss" };
const char* const kGrey[] = { "grey_erosion", "grey_dilation", "grey_opening", "grey_closing",
  "morphological_gradient", "morphological_laplace", "white_tophat", "black_tophat" };

bool isBinary(const std::string& op)
{
  for (const char* b : kBinary)
    if (op == b)
      return true;
  return false;
}

bool isGrey(const std::string& op)
{
  for (const char* g : kGrey)
    if (op == g)
      return true;
  return false;
}

void addMorphologyOptions(OptionParser& p, MorphologyArguments& a)
{
  p.section("Structuring element (scipy's size / footprint / structure)");
  p.value("size", 0, "X[,Y,Z]", "a box of ones, x first", "",
    [&a](const std::string& t) {
      a.size.clear();
      for (double v : parseNumberList(t))
      {
        if (!(v >= 1) || v != static_cast<double>(static_cast<int64_t>(v)))
          throw UsageError("sizes are whole numbers >= 1, got '" + t + "'");
        a.size.push_back(static_cast<int64_t>(v));
      }
    });
  p.value("connectivity", 0, "C",
    "generate_binary_structure(rank of the image, C)\n(binary operators: default 1)", "",
    [&a](const std::string& t) { a.connectivity = static_cast<int>(parseInteger(t, 1, 3)); });
  p.value("iterate-structure", 0, "K", "iterate_structure(element, K)", "1",
    [&a](const std::string& t) { a.iterateStructure = static_cast<int>(parseInteger(t, 1, 1000)); });
  p.value("footprint", 0, "FILE", "a flat element: the nonzero voxels of an image\nfile (.npy, ...)", "",
    [&a](const std::string& t) { a.footprint = t; });
  p.value("structure", 0, "FILE",
    "binary operators: the element (nonzero voxels);\ngrey operators: a non-flat element (its values)", "",
    [&a](const std::string& t) { a.structure = t; });
  p.value("structure2", 0, "FILE", "binary_hit_or_miss: the background element\n(default: not structure)", "",
    [&a](const std::string& t) { a.structure2 = t; });
  p.value("origin", 0, "O|X,Y,Z", "the element's origin per axis, x first", "0",
    [&a](const std::string& t) {
      for (double v : parseNumberList(t))
        a.origin.push_back(static_cast<int64_t>(v));
    });
  p.section("Borders and repetition");
  p.value("mode", 0, "MODE", "grey operators: reflect, mirror, nearest, wrap,\nconstant (and grid-*)", "reflect",
    [&a](const std::string& t) {
      if (!parseBorderMode(t, a.mode))
        throw UsageError("expected reflect, mirror, nearest, wrap or constant, got '" + t + "'");
    });
  p.value("cval", 0, "V", "grey operators: the value beyond the border with\n--mode constant", "0",
    [&a](const std::string& t) { a.cval = parseNumber(t); });
  p.value("iterations", 0, "N", "binary operators: passes (< 1: until stable)", "1",
    [&a](const std::string& t) { a.iterations = static_cast<int>(parseInteger(t, -1000000, 1000000)); });
  p.value("border-value", 0, "0|1", "binary operators: the value outside the image", "0",
    [&a](const std::string& t) { a.borderValue = parseInteger(t, 0, 1) != 0; });
  p.value("mask", 0, "FILE", "binary operators: only voxels where this image is\nnonzero change", "",
    [&a](const std::string& t) { a.mask = t; });
  p.section("Output");
  p.value("output", 'o', "OUTPUT", "required. a .npy image: the input's type (grey),\nbool (binary)", "",
    [&a](const std::string& t) { a.output = t; });
  p.flag("batch", 0,
    "the input is a stack of images: numpy's first axis\nindexes them (a (n, h, w) array: n images h x w);\n"
    "each is processed alone (the element has the images'\naxes; a mask has the stack's shape), the images\n"
    "shared among the threads; the output is the stack",
    &a.batch);
  addInputOptions(p, a.input);
  addExecutionOptions(p, a.execution);
  std::string ops = "\n\nOperations (scipy.ndimage names):";
  for (const char* b : kBinary)
    ops += std::string("\n  ") + b;
  for (const char* g : kGrey)
    ops += std::string("\n  ") + g;
  p.epilog(std::string(inputFormatsHelp()) + ops +
    "\n\nAxes are x first (as --dims): numpy's axis order reversed. Results equal\n"
    "scipy.ndimage's on the same arrays (Kernels/include/topovox/Morphology.h).\n\n"
    "Examples:\n"
    "  topovox morphology binary_erosion mask.npy --connectivity 2 --iterations 3 -o e.npy\n"
    "  topovox morphology grey_opening ct.json --size 5,5,3 --mode nearest -o o.npy\n"
    "  topovox morphology binary_fill_holes seg.nii.gz -o filled.npy");
}

// An element from an image file: its nonzero voxels and, when asked, its
// values; at most as many axes as the image.
StructuringElement elementFrom(const std::string& path, int axes, bool values)
{
  const Image e = readImage(path, InputOptions{});
  if (e.axes > axes)
    throw UsageError(path + " has " + std::to_string(e.axes) + " axes, the image " + std::to_string(axes));
  StructuringElement s;
  for (int a = 0; a < 3; ++a)
    s.dims[a] = e.dims[a];
  const std::vector<double> v = valuesOf(e);
  // A binary structure or a footprint: its nonzero entries. A grey
  // structure: every entry, zeros included (scipy's footprint defaults to
  // ones of the structure's shape).
  for (double x : v)
    s.footprint.push_back(values || x != 0 ? 1 : 0);
  if (values)
    s.values = v;
  return s;
}

void setOrigin(StructuringElement& s, const std::vector<int64_t>& origin, int axes)
{
  perAxis(origin, axes, "--origin", s.origin);
}
} // namespace

int runMorphology(const std::vector<std::string>& args)
{
  MorphologyArguments a;
  OptionParser parser("topovox morphology OPERATION [options] INPUT -o OUTPUT.npy",
    "Binary and grey-scale morphology with scipy.ndimage's conventions, argument\n"
    "for argument.");
  addMorphologyOptions(parser, a);
  const std::vector<std::string> positional = parser.parse(args);
  if (a.execution.help)
  {
    std::fputs(parser.help().c_str(), stdout);
    return ExitSuccess;
  }
  if (positional.size() != 2)
    throw UsageError("expected an OPERATION and one INPUT (see topovox morphology --help)");
  const std::string& op = positional[0];
  if (!isBinary(op) && !isGrey(op))
    throw UsageError("unknown operation '" + op + "' (see topovox morphology --help)");
  if (a.output.empty())
    throw UsageError("no output: give -o OUTPUT.npy");
  if (!endsWith(a.output, ".npy"))
    throw UsageError("the output of morphology is an image: name it .npy");
  const bool binary = isBinary(op);
  const int given = (!a.size.empty()) + (a.connectivity > 0) + (!a.footprint.empty()) + (!a.structure.empty());
  if (given > 1 && !(isGrey(op) && !a.footprint.empty() && !a.structure.empty()))
    throw UsageError("give one of --size, --connectivity, --footprint and --structure (grey operators take "
                     "--footprint with --structure)");
  if (binary && (!a.size.empty() || !a.footprint.empty()))
    throw UsageError("binary operators take --structure or --connectivity, as scipy's do");
  if (!binary && given == 0)
    throw UsageError("grey operators need --size, --footprint, --structure or --connectivity (scipy: size, "
                     "footprint or structure must be specified)");
  const bool verbose = a.execution.verbose;
  OutputFile output(a.output);
  InputOptions input = a.input;
  input.stacks = a.batch;
  // Hole filling and hit-or-miss have no GPU path: their images share the
  // CPU threads whatever the device.
  const bool cpuOnly = op == "binary_fill_holes" || op == "binary_hit_or_miss";
  GpuStart gpu(!cpuOnly && mayRunOnGpu(a.execution.device));
  const Image image = readInputLogged(positional[1], input, verbose);
  gpu.wait();
  const Stack stack = a.batch ? stackOf(image) : Stack();
  const int axes = a.batch ? stack.axes : image.axes; // the images' axes

  // The element.
  StructuringElement s;
  if (!a.structure.empty())
    s = elementFrom(a.structure, axes, !binary);
  else if (!a.footprint.empty())
    s = elementFrom(a.footprint, axes, false);
  else if (!a.size.empty())
  {
    int64_t dims[3] = { 1, 1, 1 };
    perAxis(a.size, axes, "--size", dims);
    s = StructuringElement::box(dims);
  }
  else
    s = generateBinaryStructure(axes, a.connectivity > 0 ? a.connectivity : 1);
  if (!a.footprint.empty() && !a.structure.empty())
    s.footprint = elementFrom(a.footprint, axes, false).footprint;
  s = iterateStructure(s, a.iterateStructure);
  setOrigin(s, a.origin, axes);

  std::vector<uint8_t> mask;
  BinaryOptions bo;
  bo.iterations = a.iterations;
  bo.borderValue = a.borderValue;
  bo.threads = a.execution.threads;
  bo.device = a.execution.device;
  if (!a.mask.empty())
  {
    InputOptions maskInput;
    maskInput.stacks = a.batch;
    const Image m = readImage(a.mask, maskInput);
    if (m.voxelCount() != image.voxelCount() || m.dims[0] != image.dims[0] || m.dims[1] != image.dims[1])
      throw UsageError("the mask " + a.mask + " is " + m.describe() + ", the image " + image.describe());
    for (double x : valuesOf(m))
      mask.push_back(x != 0 ? 1 : 0);
    bo.mask = mask.data();
  }
  // binary_hit_or_miss: the background element.
  StructuringElement s2;
  if (op == "binary_hit_or_miss")
  {
    if (!a.structure2.empty())
      s2 = elementFrom(a.structure2, axes, false);
    else
    {
      s2 = s;
      for (auto& f : s2.footprint)
        f = f ? 0 : 1;
    }
    setOrigin(s2, a.origin, axes);
  }
  GreyOptions go;
  go.mode = a.mode;
  go.cval = a.cval;
  go.threads = a.execution.threads;
  go.device = a.execution.device;

  // One image of the input (the whole input, or one of a --batch stack)
  // through the operator, with its mask (or null) and its CPU threads.
  auto runOne = [&](const GridView& v, const uint8_t* maskOf, int threads) -> SampleBytes {
    BinaryOptions b1 = bo;
    b1.mask = maskOf;
    b1.threads = threads;
    GreyOptions g1 = go;
    g1.threads = threads;
    if (!binary)
    {
      using Op = GreyImage (*)(const GridView&, const StructuringElement&, const GreyOptions&);
      static const std::map<std::string, Op> ops = { { "grey_erosion", greyErosion }, { "grey_dilation", greyDilation },
        { "grey_opening", greyOpening }, { "grey_closing", greyClosing },
        { "morphological_gradient", morphologicalGradient }, { "morphological_laplace", morphologicalLaplace },
        { "white_tophat", whiteTophat }, { "black_tophat", blackTophat } };
      return ops.at(op)(v, s, g1); // a GreyImage is SampleBytes: moved, not copied
    }
    BinaryImage b;
    if (op == "binary_erosion")
      b = binaryErosion(v, s, b1);
    else if (op == "binary_dilation")
      b = binaryDilation(v, s, b1);
    else if (op == "binary_opening")
      b = binaryOpening(v, s, b1);
    else if (op == "binary_closing")
      b = binaryClosing(v, s, b1);
    else if (op == "binary_propagation")
      b = binaryPropagation(v, s, b1);
    else if (op == "binary_fill_holes")
      b = binaryFillHoles(v, s, threads);
    else
      b = binaryHitOrMiss(v, s, s2, threads);
    return b; // a BinaryImage is SampleBytes too
  };

  Stopwatch watch;
  Image result = image.withoutSamples();
  if (binary)
    result.type = ScalarType::UInt8;
  try
  {
    if (!a.batch)
      result.bytes = runOne(image.view(), bo.mask, bo.threads);
    else if (stack.axes < 3 && !cpuOnly)
    {
      // A stack of 1D or 2D images is one call on the stack seen as one
      // image with an axis more: the element's extent 1 along it keeps the
      // images apart (scipy's footprint of shape (1, ...)), so the bits are
      // each image's alone, and the GPU gets the batch in one launch and
      // one copy each way. (Not hole filling: it fills from the image's
      // border, which would take in the first and last images whole.)
      const GridView all = GridView::contiguous(image.bytes.data(), image.type, stack.dims[0],
        stack.axes == 1 ? stack.count : stack.dims[1], stack.axes == 1 ? 1 : stack.count);
      result.bytes = runOne(all, bo.mask, bo.threads);
    }
    else
    {
      const size_t outSize = scalarTypeSize(result.type);
      result.bytes.resize(static_cast<size_t>(image.voxelCount()) * outSize); // (every image's written)
      forEachImage(stack.count, bo.threads, cpuOnly ? Device::CPU : a.execution.device,
        [&](int64_t k, int threads) {
        const SampleBytes r =
          runOne(stack.image(image, k), mask.empty() ? nullptr : mask.data() + k * stack.voxels, threads);
        std::copy(r.begin(), r.end(), result.bytes.begin() + static_cast<std::ptrdiff_t>(k * stack.voxels * outSize));
        return true;
      });
    }
  }
  catch (const std::invalid_argument& e)
  {
    throw UsageError(e.what());
  }
  if (verbose)
    say("morphology " + op + ": element " + std::to_string(s.dims[0]) + "x" + std::to_string(s.dims[1]) + "x" +
      std::to_string(s.dims[2]) + ", device " + deviceName(resolveDevice(a.execution.device, nullptr)) + ": " +
      seconds(watch.seconds()));
  writeImageNpy(output, result, binary, threadCount(a.execution.threads));
  output.commit();
  return ExitSuccess;
}

} // namespace cli
} // namespace topovox

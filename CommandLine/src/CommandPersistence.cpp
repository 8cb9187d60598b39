// CommandPersistence.cpp - `topovox persistence`: the persistence diagram of
// an image, one row per pair: dimension, birth, death, and the voxels whose
// values are the birth and the death. Runs the discrete Morse engine
// (computePersistence, Persistence.h) or, with --engine reference, the
// reference engine that holds every cell's boundary in memory; inputs an
// engine cannot hold within --memory-limit-gb are refused before it starts,
// or, for the Morse engine, once it has counted the critical cells.
#include "Commands.h"

#include "CommandSteps.h"
#include "CommonOptions.h"
#include "Errors.h"
#include "GpuStart.h"
#include "ImageInput.h"
#include "Messages.h"
#include "OutputFile.h"
#include "Progress.h"
#include "TableWriter.h"

#include "topovox/Device.h"
#include "topovox/ParallelFor.h"
#include "topovox/Persistence.h"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstddef>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>

namespace topovox
{
namespace cli
{
namespace
{

enum class DiagramFormat
{
  TopoVox,
  Cripser
};

struct PersistenceArguments
{
  InputOptions input;
  ExecutionOptions execution;
  PersistenceOptions diagram;
  int maxDimension = -1; // -1: the image's dimension
  double memoryLimitGb = 0; // 0: auto, 80% of this machine's memory
  bool reference = false; // --engine reference
  bool batch = false;     // --batch: numpy's first axis indexes images
  DiagramFormat format = DiagramFormat::TopoVox;
  std::string output;
};

// What the reference engine holds per cell of the complex (the cell's
// value, voxel and order, its PHAT boundary column, the reduction's pairs):
// the peak resident memory measured on 1D, 2D and 3D images of random floats
// (up to 120^3, V and T) was 117 to 151 bytes a cell, the most for the
// smallest images. A 3D image has about 8 cells a voxel (1.1 kB a voxel),
// a 2D one 4 (560 bytes).
constexpr double ReferenceBytesPerCell = 140;
// Uniform noise's share of critical cells, for the worst case quoted (the
// Morse engine's memory model: Persistence.h, fitPersistenceMemory).
constexpr double NoiseCriticalShare = 1.0 / 6.0;

// "1.23 GiB", "456 MiB", "12 KiB"
std::string bytesText(double bytes)
{
  const char* units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
  int u = 0;
  while (bytes >= 1024 && u < 4)
  {
    bytes /= 1024;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.3g %s", bytes, units[u]);
  return text;
}

void addPersistenceOptions(OptionParser& p, PersistenceArguments& a)
{
  PersistenceOptions& d = a.diagram;
  p.section("Complex and filtration");
  p.value("construction", 0, "V|T",
    "V: each voxel is a vertex (6-connected in 3D,\n4-connected in 2D); T: each voxel is a "
    "cube\n(26-connected in 3D, 8-connected in 2D)",
    constructionName(d.construction), [&d](const std::string& text) {
      if (!parseConstruction(text, d.construction))
        throw UsageError("expected V or T, got '" + text + "'");
    });
  p.value("filtration", 0, "F",
    "sublevel: cells enter as t rises (value <= t),\nbirth < death; superlevel: as t falls "
    "(value\n>= t), birth > death",
    filtrationName(d.filtration), [&d](const std::string& text) {
      if (!parseFiltration(text, d.filtration))
        throw UsageError("expected sublevel or superlevel, got '" + text + "'");
    });

  p.section("Pairs");
  p.value("max-dimension", 0, "N",
    "report the classes of dimension <= N (0: connected\ncomponents, 1: loops, 2: voids)",
    "the image's dimension", [&a](const std::string& text) {
      a.maxDimension = static_cast<int>(parseInteger(text, 0, 3));
    });
  p.value("min-persistence", 0, "X",
    "report the pairs with |death - birth| > X\n(essential classes always)", "0",
    [&d](const std::string& text) {
      const double x = parseNumber(text);
      if (!(x >= 0) || std::isinf(x))
        throw UsageError("expected a finite number >= 0, got '" + text + "'");
      d.minPersistence = x;
    });

  addTableOutputOption(p, a.output);
  p.value("format", 0, "FORMAT",
    "topovox: the columns below, with a header line;\ncripser: the array cripser.computePH "
    "returns\n(see the notes below)",
    "topovox", [&a](const std::string& text) {
      a.format = parseChoice(text, { "topovox", "cripser" }) == 0 ? DiagramFormat::TopoVox
                                                                  : DiagramFormat::Cripser;
    });
  p.flag("batch", 0,
    "the input is a stack of images: numpy's first axis\nindexes them (a (n, h, w) array: n images h x w);\n"
    "one diagram each, the images shared among the\nthreads, rows prefixed by an image column",
    &a.batch);
  addInputOptions(p, a.input);
  p.section("Engine");
  p.value("engine", 0, "ENGINE",
    "morse: discrete Morse reduction, union-find\nand PHAT on the Morse complex, all CPU "
    "threads;\nreference: every cell's boundary reduced by PHAT\n(the tests' oracle; about 1.1 kB "
    "a voxel in 3D)",
    "morse", [&a](const std::string& text) {
      a.reference = parseChoice(text, { "morse", "reference" }) == 1;
    });
  p.section("Memory");
  p.value("memory-limit-gb", 0, "G",
    "refuse an input whose computation would need\nmore than G GiB: before computing from its size\n(morse: "
    "4.5 bytes a cell, reference: 140),\nthen (morse) once its critical cells are known\n(200 bytes each; "
    "noise has one cell in six);\nauto: 80% of this machine's memory; inf: no limit",
    "auto", [&a](const std::string& text) {
      if (text == "auto")
      {
        a.memoryLimitGb = 0;
        return;
      }
      const double g = parseNumber(text);
      if (!(g > 0))
        throw UsageError("expected a number of GiB > 0, or auto, got '" + text + "'");
      a.memoryLimitGb = g;
    });
  addExecutionOptions(p, a.execution);
  p.epilog(std::string(inputFormatsHelp()) +
    "\n\n"
    "Columns (--format topovox): dimension,birth,death,birth_x,birth_y,birth_z,\n"
    "death_x,death_y,death_z. The birth (death) voxel holds the birth (death)\n"
    "value; x is the fastest axis (the last of a C-ordered numpy array). An\n"
    "essential class (it never dies) has death inf (sublevel) or -inf\n"
    "(superlevel) and death voxel -1,-1,-1. Rows by dimension, then birth.\n\n"
    "--format cripser: rows dim,birth,death,x1,y1,z1,x2,y2,z2 as returned by\n"
    "cripser.computePH (V) or tcripser.computePH (T) on the array np.load gives:\n"
    "coordinates are numpy indices (axis 0 first, unused axes 0), an essential\n"
    "class dies at DBL_MAX (-DBL_MAX for superlevel, whose values are those of\n"
    "computePH(-image) negated); CSV without a header line.\n\n"
    "NaN voxels are absent from the complex; +-inf are ordinary values. Pairs\n"
    "with birth == death are not reported. Coefficients are Z/2.\n\n"
    "Examples:\n"
    "  topovox persistence image.npy -o diagram.csv\n"
    "  topovox persistence vol.json --construction T --filtration superlevel -o d.npy\n"
    "  topovox persistence ct.npy --max-dimension 1 --min-persistence 10 -o -\n"
    "  topovox persistence image.npy --format cripser -o ph.npy");
}

// The kernels' pairs as rows in the chosen format, made on demand (a
// 512^3 field's 34.5 M pairs are 2.5 GB of rows: written straight into the
// output, they need not exist as a table first). `diagram` and `image`
// must outlive the source.
RowSource diagramRows(const PersistenceDiagram& diagram, const Image& image, bool superlevel, DiagramFormat format)
{
  RowSource rows;
  const bool ours = format == DiagramFormat::TopoVox;
  if (ours)
    rows.columns = { "dimension", "birth", "death", "birth_x", "birth_y", "birth_z", "death_x", "death_y", "death_z" };
  else
  {
    // CubicalRipser's layout: numpy indices of the array as np.load returns
    // it. A C-ordered array (and a raw file, read as one) has its axes in
    // the order z, y, x; a Fortran-ordered one x, y, z.
    rows.columns = { "dim", "birth", "death", "x1", "y1", "z1", "x2", "y2", "z2" };
    rows.header = false; // cubicalripser's own CSV has none (np.loadtxt reads it)
  }
  rows.rows = diagram.pairs.size();
  const size_t width = rows.columns.size();
  const int axes = image.axes;
  const bool fortran = image.fortranOrder;
  rows.fill = [&diagram, width, ours, superlevel, axes, fortran](size_t r0, size_t r1, double* out) {
    const double inf = std::numeric_limits<double>::infinity();
    for (size_t k = r0; k < r1; ++k)
    {
      const PersistencePair& p = diagram.pairs[k];
      double* row = out + (k - r0) * width;
      row[0] = p.dimension;
      row[1] = p.birth;
      if (ours)
      {
        row[2] = p.essential ? (superlevel ? -inf : inf) : p.death;
        for (int a = 0; a < 3; ++a)
        {
          row[3 + a] = static_cast<double>(p.birthVoxel[a]);
          row[6 + a] = p.essential ? -1.0 : static_cast<double>(p.deathVoxel[a]);
        }
        continue;
      }
      row[2] = p.essential ? (superlevel ? -DBL_MAX : DBL_MAX) : p.death;
      for (int c = 0; c < 3; ++c)
      {
        const int axis = c >= axes ? -1 : fortran ? c : axes - 1 - c;
        row[3 + c] = axis < 0 ? 0.0 : static_cast<double>(p.birthVoxel[axis]);
        row[6 + c] = p.essential ? -1.0 : axis < 0 ? 0.0 : static_cast<double>(p.deathVoxel[axis]);
      }
    }
  };
  return rows;
}

// The same as a table (a batch's images' tables are joined into one).
Table diagramTable(const PersistenceDiagram& diagram, const Image& image, bool superlevel, DiagramFormat format)
{
  const RowSource rows = diagramRows(diagram, image, superlevel, format);
  Table t;
  t.columns = rows.columns;
  t.header = rows.header;
  t.values.resize(rows.rows * rows.columns.size());
  rows.fill(0, rows.rows, t.values.data());
  return t;
}

// The kernels build the persistence engines only with PHAT (Kernels/
// CMakeLists.txt); without it the command is listed but refuses to run.
#ifdef TOPOVOX_WITH_PHAT
constexpr bool EngineBuilt = true;
#else
constexpr bool EngineBuilt = false;
#endif
const char* const EngineMissing = "persistence is not available: this topovox was built "
                                  "without PHAT (Debian: libphat-dev, or cmake "
                                  "-DPHAT_INCLUDE_DIR=<its headers>)";

PersistenceDiagram computeDiagram(
  const GridView& grid, const PersistenceOptions& options, bool reference)
{
#ifdef TOPOVOX_WITH_PHAT
  return reference ? computePersistenceReference(grid, options) : computePersistence(grid, options);
#else
  (void)grid;
  (void)options;
  (void)reference;
  throw Error(EngineMissing);
#endif
}

// --batch: the images of the stack (numpy's first axis, the last of ours),
// their diagrams, one table with an image column first.
int runBatch(const Image& image, PersistenceOptions options, const PersistenceArguments& a, OutputFile& output,
  TableFormat format)
{
  if (a.format != DiagramFormat::TopoVox)
    throw UsageError("--batch writes the topovox format only (it adds an image column)");
  if (a.reference)
    throw UsageError("--batch runs the morse engine only");
  const Stack stack = stackOf(image);
  const int64_t count = stack.count;
  const int64_t* dims = stack.dims;
  std::vector<GridView> images;
  for (int64_t k = 0; k < count; ++k)
    images.push_back(stack.image(image, k));
  const int dimension = images.front().dimension();
  options.maxDimension = a.maxDimension >= 0 ? a.maxDimension : dimension;
  ProgressBar bar("topovox: persistence");
  options.progress = bar.callback();
  Stopwatch watch;
#ifdef TOPOVOX_WITH_PHAT
  const std::vector<PersistenceDiagram> diagrams = computePersistenceBatch(images, options);
#else
  const std::vector<PersistenceDiagram> diagrams(1);
  throw Error(EngineMissing);
#endif
  bar.clear();
  std::string warnings;
  for (const PersistenceDiagram& d : diagrams)
    addWarning(warnings, d.warnings);
  warn(warnings);
  Table all;
  const bool superlevel = options.filtration == Filtration::Superlevel;
  size_t pairs = 0;
  Image layout; // one image's axes, without the samples (the table needs no more)
  layout.axes = stack.axes;
  layout.fortranOrder = image.fortranOrder;
  // The whole table at once (an image column and topovox's nine), not grown
  // and copied image by image.
  size_t rows = 0;
  for (const PersistenceDiagram& d : diagrams)
    rows += d.pairs.size();
  all.values.reserve(rows * 10);
  for (int64_t k = 0; k < count; ++k)
  {
    const Table t = diagramTable(diagrams[static_cast<size_t>(k)], layout, superlevel, DiagramFormat::TopoVox);
    appendImageRows(all, t, k);
    pairs += t.rowCount();
  }
  if (a.execution.verbose)
    say("persistence: a batch of " + std::to_string(count) + " images of " + std::to_string(dims[0]) + "x" +
      std::to_string(dims[1]) + "x" + std::to_string(dims[2]) + ", " + std::to_string(pairs) + " pairs: " +
      seconds(watch.seconds()));
  writeTableLogged(output, all, format, a.output, a.execution.verbose, threadCount(a.execution.threads));
  return ExitSuccess;
}

} // namespace

int runPersistence(const std::vector<std::string>& args)
{
  PersistenceArguments a;
  OptionParser parser("topovox persistence [options] INPUT -o OUTPUT",
    "Persistent homology of an image (1D, 2D or 3D): the birth and death values\n"
    "of the connected components, loops and voids of the cubical complex of its\n"
    "sublevel (or superlevel) sets, with the voxels where they happen. Exact, on\n"
    "the CPU (all threads), by a discrete Morse reduction; equal to CubicalRipser.\n"
    "The device gpu (or TOPOVOX_DEVICE=gpu) builds the Morse complex and its\n"
    "boundaries on the GPU (pairing on the CPU threads), --batch included; auto\n"
    "stays on the CPU: starting CUDA costs a process about 0.3 s, which only\n"
    "volumes of millions of voxels win back. A volume whose Morse complex does\n"
    "not fit the GPU's free memory (or TOPOVOX_GPU_MEMORY_LIMIT bytes) is\n"
    "streamed through it in slabs; any CUDA failure falls back to the CPU.");
  addPersistenceOptions(parser, a);
  const std::vector<std::string> positional = parser.parse(args);
  if (a.execution.help)
  {
    std::fputs(parser.help().c_str(), stdout);
    return ExitSuccess;
  }
  const std::string& inputPath = singleInput(positional, a.output, "persistence");
  const TableFormat format = tableFormatFor(a.output);
  if (!EngineBuilt)
    throw Error(EngineMissing);
  const bool verbose = a.execution.verbose;

  // The output's temporary file first: an unwritable folder fails now.
  OutputFile output(a.output);

  InputOptions input = a.input;
  input.stacks = a.batch;
  // Where the GPU is asked for (persistence's Auto is the CPU), CUDA
  // starts while the input is read.
  GpuStart gpu(persistenceAsksForGpu(a.execution.device));
  const Image image = readInputLogged(inputPath, input, verbose);
  gpu.wait();
  Stopwatch watch;

  PersistenceOptions options = a.diagram;
  options.device = a.execution.device;
  options.threads = a.execution.threads;
  if (a.batch)
    return runBatch(image, options, a, output, format);
  const GridView grid = image.view();
  const int dimension = grid.dimension();
  options.maxDimension = a.maxDimension >= 0 ? a.maxDimension : dimension;

  // The engine would be killed by the system (or thrash) long before it
  // could report running out of memory: refuse now what the image's size
  // alone rules out, and have the Morse engine stop, before pairing, if
  // it finds more critical cells than the rest of the limit holds.
  const double cells = static_cast<double>(persistenceCellCount(grid, options.construction));
  const double limit = a.memoryLimitGb > 0 ? a.memoryLimitGb * 1024.0 * 1024.0 * 1024.0
                                           : defaultPersistenceMemoryBudget();
  char limitText[96];
  if (a.memoryLimitGb > 0)
    std::snprintf(limitText, sizeof limitText, "--memory-limit-gb %g", a.memoryLimitGb);
  else
    std::snprintf(limitText, sizeof limitText, "the default limit (%s, 80%% of this machine's memory)",
      bytesText(limit).c_str());
  const std::string what = "the persistence of this " + image.describe() + " image (" +
    constructionName(options.construction) + " construction, " + std::to_string(static_cast<long long>(cells)) +
    " cells)";
  const std::string advice =
    ": crop or sub-sample the image, or raise --memory-limit-gb if the machine has the memory";
  double needed = cells * ReferenceBytesPerCell + static_cast<double>(image.bytes.size());
  const bool fits = a.reference ? needed <= limit : fitPersistenceMemory(grid, limit, options, &needed);
  if (!fits)
    throw Error(what + " needs " + (a.reference ? "about " : "at least about ") + bytesText(needed) +
      " of memory, more than " + limitText + advice);
  const double noise = a.reference ? needed : morseMemoryBytes(needed, cells * NoiseCriticalShare);
  if (verbose)
    say(std::string("complex: ") + constructionName(options.construction) + " construction, " +
      std::to_string(dimension) + "D, " + std::to_string(static_cast<long long>(cells)) + " cells, about " +
      bytesText(needed) + " of memory" +
      (a.reference ? std::string()
                   : " and " + std::to_string(static_cast<int>(kMorseBytesPerCriticalCell)) +
            " bytes a critical cell (uniform noise: about " + bytesText(noise) + " in all)") +
      "; limit " + bytesText(limit));

  ProgressBar bar("topovox: persistence");
  options.progress = bar.callback();
  watch.restart();
  PersistenceDiagram diagram;
  try
  {
    diagram = computeDiagram(grid, options, a.reference);
  }
  catch (const CriticalCellLimit& e)
  {
    bar.clear();
    throw Error(what + " has " + std::to_string(static_cast<long long>(e.criticalCells)) +
      " critical cells in its discrete gradient: it would need about " +
      bytesText(morseMemoryBytes(needed, static_cast<double>(e.criticalCells))) + " of memory, more than " +
      limitText + advice);
  }
  bar.clear();
  warn(diagram.warnings);
  if (options.device == Device::GPU && diagram.device != Device::GPU && diagram.warnings.empty())
    warn(a.reference ? "the reference engine runs on the CPU only" : "the GPU was not used: it ran on the CPU");
  if (diagram.pairs.empty())
    warn("the diagram is empty: every voxel of the image is NaN");
  const bool superlevel = options.filtration == Filtration::Superlevel;
  const int threads = threadCount(a.execution.threads);
  if (verbose)
  {
    size_t size = diagram.timings.size();
    for (size_t start = 0; start < size;)
    {
      size_t end = diagram.timings.find('\n', start);
      if (end == std::string::npos)
        end = size;
      // "name: seconds" lines
      const std::string line = diagram.timings.substr(start, end - start);
      const size_t colon = line.rfind(": ");
      if (colon != std::string::npos)
        say("persistence stage " + line.substr(0, colon) + ": " +
          seconds(std::atof(line.c_str() + colon + 2)));
      else if (!line.empty())
        say("persistence stage " + line);
      start = end + 1;
    }
    if (diagram.criticalCells > 0)
      say("persistence: " + std::to_string(diagram.criticalCells) + " critical cells of " +
        std::to_string(diagram.cells) + " in the discrete gradient");
    // Counted on the threads, a tally each (0.6 s for 42.7 M pairs on one).
    std::vector<std::array<size_t, 5>> tally(static_cast<size_t>(std::max(threads, 1)), std::array<size_t, 5>{});
    parallelFor(static_cast<int64_t>(diagram.pairs.size()), threads, [&](int w, int64_t k0, int64_t k1) {
      std::array<size_t, 5>& mine = tally[static_cast<size_t>(w)];
      for (int64_t k = k0; k < k1; ++k)
      {
        const PersistencePair& p = diagram.pairs[static_cast<size_t>(k)];
        if (p.dimension >= 0 && p.dimension < 4)
          ++mine[static_cast<size_t>(p.dimension)];
        mine[4] += p.essential ? 1 : 0;
      }
    });
    size_t perDimension[4] = { 0, 0, 0, 0 }, essential = 0;
    for (const std::array<size_t, 5>& mine : tally)
    {
      for (int d = 0; d < 4; ++d)
        perDimension[d] += mine[static_cast<size_t>(d)];
      essential += mine[4];
    }
    std::string counts;
    for (int k = 0; k <= options.maxDimension && k <= dimension; ++k)
      counts += (k ? ", " : "") + std::to_string(perDimension[k]) + " in dimension " +
        std::to_string(k);
    say(std::string("persistence: construction ") + constructionName(options.construction) +
      ", " + filtrationName(options.filtration) + ", " + std::to_string(diagram.pairs.size()) +
      " pairs (" + counts + "; " + std::to_string(essential) + " essential), on " +
      describeDevice(diagram.device, options.threads) + ": " + seconds(watch.seconds()));
  }

  writeRowsLogged(output, diagramRows(diagram, image, superlevel, a.format), format, a.output, verbose, threads);
  return ExitSuccess;
}

} // namespace cli
} // namespace topovox

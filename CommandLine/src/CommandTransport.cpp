// CommandTransport.cpp - `topovox transport A B M -o OUTPUT`: entropic
// optimal transport between pairs of histograms (Kernels' Sinkhorn.h, POT's
// sinkhorn / sinkhorn_log / sinkhorn2 mirrored). One row per pair: pair,
// cost, iterations, error; --plan writes the plans as a .npy array. With
// --grid, `topovox transport A B --grid`: two densities on one image grid
// (GridSinkhorn.h), the squared Euclidean cost with the spacing, no matrix;
// `topovox transport S0 S1 S2 ... --grid`: a series, one row per pair of
// steps (each to the next, or --from-first). With --diagrams,
// `topovox transport X Y --diagrams`: the entropic Wasserstein distance
// between two persistence diagrams (DiagramDistance.h), one row per
// dimension, --matching for the matched pairs.
#include "Commands.h"

#include "CommandSteps.h"
#include "CommonOptions.h"
#include "DiagramInput.h"
#include "Errors.h"
#include "GpuStart.h"
#include "ImageInput.h"
#include "ImageWriter.h"
#include "InputFile.h"
#include "Messages.h"
#include "OutputFile.h"
#include "TableWriter.h"

#include "topovox/DiagramDistance.h"
#include "topovox/GridSinkhorn.h"
#include "topovox/Sinkhorn.h"

#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>

namespace topovox
{
namespace cli
{
namespace
{
struct TransportArguments
{
  ExecutionOptions execution;
  SinkhornOptions options;
  std::string output, plan;
  bool grid = false;                // --grid
  bool fromFirst = false;           // --from-first (a series of grids)
  std::vector<double> spacing;      // --spacing (grid)
  std::string displacement, potentials; // grid outputs
  bool diagrams = false;            // --diagrams
  DiagramDistanceOptions diagram;   // --order, --internal-p, --relative-reg
  std::string matching;             // --matching (diagrams)
  bool diagramOptionGiven = false, methodGiven = false, iterationsGiven = false, stopGiven = false, regGiven = false;
};

void addTransportOptions(OptionParser& p, TransportArguments& a)
{
  SinkhornOptions& o = a.options;
  p.section("Sinkhorn (POT's arguments)");
  p.value("reg", 0, "R", "the entropic regularisation", "1", [&a, &o](const std::string& t) {
    o.reg = parseNumber(t);
    a.regGiven = true;
  });
  p.value("method", 0, "METHOD", "sinkhorn (scaling) or sinkhorn_log (log domain)", "sinkhorn",
    [&a, &o](const std::string& t) {
      a.methodGiven = true;
      if (t == "sinkhorn")
        o.method = SinkhornMethod::Sinkhorn;
      else if (t == "sinkhorn_log")
        o.method = SinkhornMethod::SinkhornLog;
      else
        throw UsageError("expected sinkhorn or sinkhorn_log, got '" + t + "'");
    });
  p.value("iterations", 0, "N", "numItermax: the most iterations", "1000; 100000 with --diagrams",
    [&a, &o](const std::string& t) {
      o.numItermax = static_cast<int>(parseInteger(t, 1, 100000000));
      a.iterationsGiven = true;
    });
  p.value("stop-threshold", 0, "E", "stopThr: the marginal error to stop at (checked\nevery 10 iterations)",
    "1e-09; 1e-12 with --diagrams", [&a, &o](const std::string& t) {
      o.stopThr = parseNumber(t);
      a.stopGiven = true;
    });
  p.section("Output");
  p.value("output", 'o', "OUTPUT", "required. the table: pair,cost,iterations,error\n(.csv, .npy or -)", "",
    [&a](const std::string& t) { a.output = t; });
  p.value("plan", 0, "FILE", "also write the plans, a .npy of shape (pairs, d, d)", "",
    [&a](const std::string& t) { a.plan = t; });
  p.section("Grids (--grid)");
  p.flag("grid", 0,
    "A and B are densities on one image grid (any\ninput format, normalised to unit mass); the cost is\n"
    "the squared Euclidean distance between voxels;\nno M, no matrix is built",
    &a.grid);
  p.flag("from-first", 0,
    "with three or more inputs (a series S0 S1 ...): the\ncost from S0 to each step, not each step to the next",
    &a.fromFirst);
  p.value("spacing", 0, "S|X,Y,Z", "voxel size per axis, x first", "the image's, else 1",
    [&a](const std::string& t) { a.spacing = parseNumberList(t); });
  p.value("displacement", 0, "FILE", "write where each voxel's mass goes on average,\nminus its position: "
    ".npy of the image's shape + (3,)", "", [&a](const std::string& t) { a.displacement = t; });
  p.value("potentials", 0, "FILE", "write the dual potentials: .npy of shape\n(2,) + the image's shape", "",
    [&a](const std::string& t) { a.potentials = t; });
  p.section("Persistence diagrams (--diagrams)");
  p.flag("diagrams", 0,
    "X and Y are persistence diagrams (the .csv or .npy\nof topovox persistence, or cripser's array): the\n"
    "Wasserstein distance per dimension, points allowed\nto match the diagonal, as GUDHI's\n"
    "wasserstein_distance; output dimension,distance,\nfinite_distance,essential_cost,iterations",
    &a.diagrams);
  p.value("order", 0, "Q", "the order q of the Wasserstein distance (>= 1)", "1",
    [&a](const std::string& t) {
      a.diagram.order = parseNumber(t);
      a.diagramOptionGiven = true;
    });
  p.value("internal-p", 0, "P", "the ground metric L_p in the plane (>= 1, or inf)", "inf",
    [&a](const std::string& t) {
      a.diagram.internalP = parseNumber(t);
      a.diagramOptionGiven = true;
    });
  p.value("relative-reg", 0, "R", "the entropic regularisation relative to the\nlargest cost: "
    "the distance tends to the exact one\nas R -> 0 (about 2% at 1e-3, 0.2% at 1e-4)", "0.001",
    [&a](const std::string& t) {
      a.diagram.relativeReg = parseNumber(t);
      a.diagramOptionGiven = true;
    });
  p.value("matching", 0, "FILE", "also write the matching: dimension,first,second\n(data rows of X and Y from 0; "
    "-1 the diagonal)\n(.csv, .npy or -)", "", [&a](const std::string& t) { a.matching = t; });
  addExecutionOptions(p, a.execution);
  p.epilog("A and B: histograms as .npy arrays of shape (d,) or (pairs, d) (nonnegative;\n"
    "a single A or B is used for every pair); M: the d x d cost matrix (.npy).\n"
    "The cost is POT's sinkhorn2: <plan, M>.\n\n"
    "Examples:\n"
    "  topovox transport a.npy b.npy M.npy --reg 0.05 -o costs.csv\n"
    "  topovox transport a.npy b.npy M.npy --method sinkhorn_log --reg 0.001 --plan plans.npy -o -\n"
    "  topovox transport rho0.npy rho1.npy --grid --method sinkhorn_log --reg 2 --displacement d.npy -o cost.csv\n"
    "  topovox transport t0.npy t1.npy t2.npy t3.npy --grid --reg 2 -o costs_over_time.csv\n"
    "  topovox transport x.csv y.csv --diagrams --order 2 --matching m.csv -o w2.csv");
}

// An .npy of one or two axes as (rows, d) doubles.
std::vector<double> histograms(const std::string& path, int64_t& rows, int64_t& d)
{
  const Image image = readImage(path, InputOptions{});
  if (image.axes > 2)
    throw UsageError(path + " has " + std::to_string(image.axes) + " axes: histograms take 1 or 2");
  d = image.dims[0];
  rows = image.axes == 2 ? image.dims[1] : 1;
  if (image.fortranOrder && image.axes == 2)
    throw UsageError(path + " is Fortran-ordered: save it with np.ascontiguousarray");
  return valuesOf(image);
}
// A grid's samples as a density of unit mass.
std::vector<double> densityOf(const Image& image, const std::string& path)
{
  std::vector<double> v = valuesOf(image);
  try
  {
    normalizeDensity(v, path + ": the");
  }
  catch (const std::invalid_argument& e)
  {
    throw UsageError(e.what());
  }
  return v;
}

// Whether two inputs lie on one grid (the same axes and samples per axis).
bool sameGrid(const Image& x, const Image& y)
{
  return x.axes == y.axes && x.dims[0] == y.dims[0] && x.dims[1] == y.dims[1] && x.dims[2] == y.dims[2];
}

// One pair of densities on the grid, with the options given; the solver's
// refusals as usage errors, its warnings said.
// fields: the potentials and displacement too, not only the cost.
GridSinkhornResult solvePair(const std::vector<double>& from, const std::vector<double>& to, const int64_t dims[3],
  const double spacing[3], const TransportArguments& a, bool fields)
{
  SinkhornOptions o = a.options;
  o.computeFields = fields;
  o.threads = a.execution.threads;
  o.device = a.execution.device;
  GridSinkhornResult r;
  try
  {
    r = sinkhornGrid(from, to, dims, spacing, o);
  }
  catch (const std::invalid_argument& e)
  {
    throw UsageError(e.what());
  }
  warn(r.warnings);
  return r;
}

// --grid with a series S0 S1 ... (three or more inputs): one row per pair
// of steps, from, to, cost, iterations, error; one step in memory besides
// the reference.
int runGridSeries(const std::vector<std::string>& positional, const TransportArguments& a, const double spacing[3],
  const Image& first)
{
  if (!a.displacement.empty() || !a.potentials.empty())
    throw UsageError("--displacement and --potentials take two inputs, not a series");
  const TableFormat format = tableFormatFor(a.output);
  OutputFile output(a.output);
  Table t;
  t.columns = { "from", "to", "cost", "iterations", "error" };
  std::vector<double> reference = densityOf(first, positional[0]);
  size_t referenceStep = 0;
  for (size_t k = 1; k < positional.size(); ++k)
  {
    const Image image = readInputLogged(positional[k], InputOptions{}, a.execution.verbose);
    if (!sameGrid(image, first))
      throw UsageError(positional[k] + " is " + image.describe() + ", " + positional[0] + " " + first.describe() +
        ": a series must share one grid");
    std::vector<double> density = densityOf(image, positional[k]);
    const GridSinkhornResult r = solvePair(reference, density, first.dims, spacing, a, false);
    for (double v : { static_cast<double>(referenceStep), static_cast<double>(k), r.cost,
           static_cast<double>(r.iterations), r.error })
      t.values.push_back(v);
    if (!a.fromFirst)
    {
      reference = std::move(density);
      referenceStep = k;
    }
  }
  writeTableLogged(output, t, format, a.output, a.execution.verbose);
  return ExitSuccess;
}

// --grid: two densities on one grid, one row: cost, iterations, error.
int runGrid(const std::vector<std::string>& positional, const TransportArguments& a)
{
  if (positional.size() < 2)
    throw UsageError("--grid takes two inputs A B (densities on one grid), or a series S0 S1 S2 ...");
  if (!a.plan.empty())
    throw UsageError("--grid builds no plan: use --displacement or --potentials");
  if (a.fromFirst && positional.size() < 3)
    throw UsageError("--from-first goes with a series of three or more inputs");
  for (const std::string* path : { &a.displacement, &a.potentials })
    if (!path->empty() && !endsWith(*path, ".npy"))
      throw UsageError("--displacement and --potentials write .npy arrays");
  // CUDA starts while the inputs are read (the destructor waits for it).
  GpuStart gpu(mayRunOnGpu(a.execution.device));
  const Image ia = readInputLogged(positional[0], InputOptions{}, a.execution.verbose);
  double spacing[3] = { ia.spacing[0], ia.spacing[1], ia.spacing[2] };
  perAxis(a.spacing, ia.axes, "--spacing", spacing);
  if (ia.fortranOrder && (!a.displacement.empty() || !a.potentials.empty()))
    throw UsageError("--displacement and --potentials need a C-ordered input (save it with np.ascontiguousarray)");
  if (positional.size() > 2)
    return runGridSeries(positional, a, spacing, ia);
  const TableFormat format = tableFormatFor(a.output);
  OutputFile output(a.output);
  std::unique_ptr<OutputFile> displacementOut(a.displacement.empty() ? nullptr : new OutputFile(a.displacement));
  std::unique_ptr<OutputFile> potentialsOut(a.potentials.empty() ? nullptr : new OutputFile(a.potentials));
  const Image ib = readInputLogged(positional[1], InputOptions{}, a.execution.verbose);
  gpu.wait();
  if (!sameGrid(ia, ib))
    throw UsageError("A is " + ia.describe() + ", B " + ib.describe() + ": they must share one grid");
  const std::vector<double> A = densityOf(ia, positional[0]), B = densityOf(ib, positional[1]);
  const GridSinkhornResult r = solvePair(A, B, ia.dims, spacing, a, displacementOut || potentialsOut);
  Table t;
  t.columns = { "cost", "iterations", "error" };
  t.values = { r.cost, static_cast<double>(r.iterations), r.error };
  writeTableLogged(output, t, format, a.output, a.execution.verbose);
  // numpy's shape of the image: C order, slowest axis first.
  std::vector<int64_t> shape;
  for (int k = ia.axes - 1; k >= 0; --k)
    shape.push_back(ia.dims[k]);
  if (displacementOut)
  {
    std::vector<int64_t> s = shape;
    s.push_back(3);
    writeArrayNpy(*displacementOut, ScalarType::Float64, s, r.displacement.data(),
      r.displacement.size() * sizeof(double));
    displacementOut->commit();
  }
  if (potentialsOut)
  {
    GridField both = r.sourcePotential;
    both.insert(both.end(), r.targetPotential.begin(), r.targetPotential.end());
    std::vector<int64_t> s = { 2 };
    s.insert(s.end(), shape.begin(), shape.end());
    writeArrayNpy(*potentialsOut, ScalarType::Float64, s, both.data(), both.size() * sizeof(double));
    potentialsOut->commit();
  }
  return ExitSuccess;
}

// --diagrams: one row per dimension, optionally the matching.
int runDiagrams(const std::vector<std::string>& positional, const TransportArguments& a)
{
  if (positional.size() != 2)
    throw UsageError("--diagrams takes two inputs: X Y (persistence diagrams)");
  if (a.methodGiven || a.regGiven)
    throw UsageError("--diagrams uses the log domain at --relative-reg, not --method or --reg");
  if (!a.plan.empty())
    throw UsageError("--diagrams builds no plan to write: use --matching");
  DiagramDistanceOptions o = a.diagram;
  if (a.iterationsGiven)
    o.numItermax = a.options.numItermax;
  if (a.stopGiven)
    o.stopThr = a.options.stopThr;
  o.threads = a.execution.threads;
  const TableFormat format = tableFormatFor(a.output);
  const TableFormat matchingFormat = a.matching.empty() ? format : tableFormatFor(a.matching);
  OutputFile output(a.output);
  std::unique_ptr<OutputFile> matchingOut(a.matching.empty() ? nullptr : new OutputFile(a.matching));
  const std::vector<DiagramPair> X = readDiagram(positional[0]), Y = readDiagram(positional[1]);
  std::vector<DimensionDistance> result;
  try
  {
    result = diagramDistances(X, Y, o);
  }
  catch (const std::invalid_argument& e)
  {
    throw UsageError(e.what());
  }
  Table t, m;
  t.columns = { "dimension", "distance", "finite_distance", "essential_cost", "iterations" };
  m.columns = { "dimension", "first", "second" };
  for (const DimensionDistance& r : result)
  {
    if (!r.warnings.empty())
      warn("dimension " + std::to_string(r.dimension) + ": " + r.warnings);
    for (double v : { static_cast<double>(r.dimension), r.distance, r.finiteDistance, r.essentialCost,
           static_cast<double>(r.iterations) })
      t.values.push_back(v);
    for (const auto& pair : r.matching)
      for (double v :
        { static_cast<double>(r.dimension), static_cast<double>(pair.first), static_cast<double>(pair.second) })
        m.values.push_back(v);
  }
  writeTableLogged(output, t, format, a.output, a.execution.verbose);
  if (matchingOut)
    writeTableLogged(*matchingOut, m, matchingFormat, a.matching, a.execution.verbose);
  return ExitSuccess;
}
} // namespace

int runTransport(const std::vector<std::string>& args)
{
  TransportArguments a;
  OptionParser parser("topovox transport [options] A B M -o OUTPUT",
    "Entropic optimal transport (Sinkhorn) between pairs of histograms sharing one\n"
    "cost matrix, with POT's arguments and iterations; between densities on an\n"
    "image grid (--grid); between persistence diagrams (--diagrams).");
  addTransportOptions(parser, a);
  const std::vector<std::string> positional = parser.parse(args);
  if (a.execution.help)
  {
    std::fputs(parser.help().c_str(), stdout);
    return ExitSuccess;
  }
  if (a.output.empty())
    throw UsageError("no output: give -o OUTPUT");
  if (a.grid && a.diagrams)
    throw UsageError("--grid and --diagrams exclude each other");
  if (!a.diagrams && (!a.matching.empty() || a.diagramOptionGiven))
    throw UsageError("--matching, --order, --internal-p and --relative-reg go with --diagrams");
  if (a.diagrams)
    return runDiagrams(positional, a);
  if (a.grid)
    return runGrid(positional, a);
  if (!a.displacement.empty() || !a.potentials.empty() || !a.spacing.empty() || a.fromFirst)
    throw UsageError("--displacement, --potentials, --spacing and --from-first go with --grid");
  if (positional.size() != 3)
    throw UsageError("expected three inputs: A B M (see topovox transport --help)");
  const TableFormat format = tableFormatFor(a.output);
  if (!a.plan.empty() && !endsWith(a.plan, ".npy"))
    throw UsageError("--plan writes a .npy array");
  OutputFile output(a.output);
  std::unique_ptr<OutputFile> planOutput(a.plan.empty() ? nullptr : new OutputFile(a.plan));
  int64_t na, da, nb, db, mr, mc;
  std::vector<double> A = histograms(positional[0], na, da), B = histograms(positional[1], nb, db);
  const Image m = readImage(positional[2], InputOptions{});
  if (m.axes != 2 && !(m.axes == 1 && m.dims[0] == 1))
    throw UsageError(positional[2] + " must be a d x d cost matrix");
  mc = m.dims[0];
  mr = m.dims[1];
  const std::vector<double> M = valuesOf(m);
  if (da != db || mr != da || mc != da)
    throw UsageError("A, B and M disagree on d: A has " + std::to_string(da) + ", B " + std::to_string(db) +
      ", M is " + std::to_string(mr) + " x " + std::to_string(mc));
  const int64_t pairs = std::max(na, nb);
  if ((na != 1 && na != pairs) || (nb != 1 && nb != pairs))
    throw UsageError("A and B must hold one histogram or the same number of them");
  auto spread = [pairs, da](std::vector<double>& h, int64_t n) {
    if (n == 1 && pairs > 1)
    {
      const std::vector<double> one = h;
      h.clear();
      for (int64_t p = 0; p < pairs; ++p)
        h.insert(h.end(), one.begin(), one.end());
    }
    (void)da;
  };
  spread(A, na);
  spread(B, nb);
  SinkhornOptions o = a.options;
  o.threads = a.execution.threads;
  o.device = a.execution.device;
  o.computePlans = planOutput != nullptr;
  SinkhornResult r;
  try
  {
    r = sinkhorn(A, B, M, pairs, da, o);
  }
  catch (const std::invalid_argument& e)
  {
    throw UsageError(e.what());
  }
  warn(r.warnings);
  Table t;
  t.columns = { "pair", "cost", "iterations", "error" };
  for (int64_t p = 0; p < pairs; ++p)
  {
    t.values.push_back(static_cast<double>(p));
    t.values.push_back(r.costs[static_cast<size_t>(p)]);
    t.values.push_back(r.iterations[static_cast<size_t>(p)]);
    t.values.push_back(r.errors[static_cast<size_t>(p)]);
  }
  writeTableLogged(output, t, format, a.output, a.execution.verbose);
  if (planOutput)
  {
    writeArrayNpy(*planOutput, ScalarType::Float64, { pairs, da, da }, r.plans.data(),
      r.plans.size() * sizeof(double));
    planOutput->commit();
  }
  return ExitSuccess;
}

} // namespace cli
} // namespace topovox

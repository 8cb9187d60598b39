// CommandTransport.cpp - `topovox transport A B M -o OUTPUT`: entropic
// optimal transport between pairs of histograms (Kernels' Sinkhorn.h, POT's
// sinkhorn / sinkhorn_log / sinkhorn2 mirrored). One row per pair: pair,
// cost, iterations, error; --plan writes the plans as a .npy array.
#include "Commands.h"

#include "CommandSteps.h"
#include "CommonOptions.h"
#include "Errors.h"
#include "ImageInput.h"
#include "ImageWriter.h"
#include "InputFile.h"
#include "Messages.h"
#include "OutputFile.h"
#include "TableWriter.h"

#include "topovox/Sinkhorn.h"

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
};

void addTransportOptions(OptionParser& p, TransportArguments& a)
{
  SinkhornOptions& o = a.options;
  p.section("Sinkhorn (POT's arguments)");
  p.value("reg", 0, "R", "the entropic regularisation", "1", [&o](const std::string& t) { o.reg = parseNumber(t); });
  p.value("method", 0, "METHOD", "sinkhorn (scaling) or sinkhorn_log (log domain)", "sinkhorn",
    [&o](const std::string& t) {
      if (t == "sinkhorn")
        o.method = SinkhornMethod::Sinkhorn;
      else if (t == "sinkhorn_log")
        o.method = SinkhornMethod::SinkhornLog;
      else
        throw UsageError("expected sinkhorn or sinkhorn_log, got '" + t + "'");
    });
  p.value("iterations", 0, "N", "numItermax: the most iterations", "1000",
    [&o](const std::string& t) { o.numItermax = static_cast<int>(parseInteger(t, 1, 100000000)); });
  p.value("stop-threshold", 0, "E", "stopThr: the marginal error to stop at (checked\nevery 10 iterations)", "1e-09",
    [&o](const std::string& t) { o.stopThr = parseNumber(t); });
  p.section("Output");
  p.value("output", 'o', "OUTPUT", "required. the table: pair,cost,iterations,error\n(.csv, .npy or -)", "",
    [&a](const std::string& t) { a.output = t; });
  p.value("plan", 0, "FILE", "also write the plans, a .npy of shape (pairs, d, d)", "",
    [&a](const std::string& t) { a.plan = t; });
  addExecutionOptions(p, a.execution);
  p.epilog("A and B: histograms as .npy arrays of shape (d,) or (pairs, d) (nonnegative;\n"
    "a single A or B is used for every pair); M: the d x d cost matrix (.npy).\n"
    "The cost is POT's sinkhorn2: <plan, M>.\n\n"
    "Examples:\n"
    "  topovox transport a.npy b.npy M.npy --reg 0.05 -o costs.csv\n"
    "  topovox transport a.npy b.npy M.npy --method sinkhorn_log --reg 0.001 --plan plans.npy -o -");
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
} // namespace

int runTransport(const std::vector<std::string>& args)
{
  TransportArguments a;
  OptionParser parser("topovox transport [options] A B M -o OUTPUT",
    "Entropic optimal transport (Sinkhorn) between pairs of histograms sharing one\n"
    "cost matrix, with POT's arguments and iterations.");
  addTransportOptions(parser, a);
  const std::vector<std::string> positional = parser.parse(args);
  if (a.execution.help)
  {
    std::fputs(parser.help().c_str(), stdout);
    return ExitSuccess;
  }
  if (positional.size() != 3)
    throw UsageError("expected three inputs: A B M (see topovox transport --help)");
  if (a.output.empty())
    throw UsageError("no output: give -o OUTPUT");
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
    writeArrayNpy(planOutput->stream(), ScalarType::Float64, { pairs, da, da }, r.plans.data(),
      r.plans.size() * sizeof(double));
    planOutput->commit();
  }
  return ExitSuccess;
}

} // namespace cli
} // namespace topovox

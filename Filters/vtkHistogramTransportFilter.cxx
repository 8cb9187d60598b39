// vtkHistogramTransportFilter.cxx - the VTK adapter of topovox::sinkhorn for
// histograms in tables: the histograms and bin centres read from the
// table's layout, the pairs to compare, one row of results per pair.
#include "vtkHistogramTransportFilter.h"

#include "vtkTopoVoxDensity.h"

#include "topovox/GridSinkhorn.h"
#include "topovox/Sinkhorn.h"

#include "vtkDataArray.h"
#include "vtkDoubleArray.h"
#include "vtkFieldData.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkIntArray.h"
#include "vtkObjectFactory.h"
#include "vtkTable.h"

#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

vtkStandardNewMacro(vtkHistogramTransportFilter);

vtkHistogramTransportFilter::vtkHistogramTransportFilter()
{
  this->SetNumberOfInputPorts(2);
}

int vtkHistogramTransportFilter::FillInputPortInformation(int port, vtkInformation* info)
{
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkTable");
  if (port == 1)
    info->Set(vtkAlgorithm::INPUT_IS_OPTIONAL(), 1);
  return 1;
}

namespace
{
struct Histograms
{
  std::vector<std::vector<double>> values; // per histogram, per bin
  std::vector<double> centres;
};

// The table's histograms in either layout; an empty string or what is wrong.
std::string histogramsOf(vtkTable* t, Histograms& h)
{
  auto* binValues = vtkDataArray::SafeDownCast(t->GetColumnByName("bin_values"));
  auto* binExtents = vtkDataArray::SafeDownCast(t->GetColumnByName("bin_extents"));
  if (binValues && binExtents)
  {
    h.values.assign(1, std::vector<double>());
    for (vtkIdType r = 0; r < t->GetNumberOfRows(); ++r)
    {
      h.values[0].push_back(binValues->GetTuple1(r));
      h.centres.push_back(binExtents->GetTuple1(r));
    }
    return h.centres.empty() ? "the histogram has no bins" : "";
  }
  std::vector<vtkDataArray*> columns;
  bool namesAreNumbers = true;
  for (vtkIdType c = 0; c < t->GetNumberOfColumns(); ++c)
    if (auto* column = vtkDataArray::SafeDownCast(t->GetColumn(c)))
    {
      columns.push_back(column);
      const char* name = column->GetName();
      char* end = nullptr;
      const double x = name ? std::strtod(name, &end) : 0.0;
      namesAreNumbers = namesAreNumbers && name && *name && end && *end == '\0' && std::isfinite(x);
      h.centres.push_back(namesAreNumbers ? x : static_cast<double>(h.centres.size()));
    }
  if (columns.empty() || t->GetNumberOfRows() == 0)
    return "the table has no numeric columns (bins) or no rows (histograms)";
  if (!namesAreNumbers)
    for (size_t k = 0; k < h.centres.size(); ++k)
      h.centres[k] = static_cast<double>(k);
  if (auto* given = vtkDataArray::SafeDownCast(t->GetFieldData()->GetAbstractArray("BinCenters")))
  {
    if (given->GetNumberOfTuples() != static_cast<vtkIdType>(columns.size()))
      return "the field data array BinCenters has " + std::to_string(given->GetNumberOfTuples()) +
        " values for " + std::to_string(columns.size()) + " bins";
    for (size_t k = 0; k < columns.size(); ++k)
      h.centres[k] = given->GetTuple1(static_cast<vtkIdType>(k));
  }
  for (vtkIdType r = 0; r < t->GetNumberOfRows(); ++r)
  {
    std::vector<double> row;
    for (vtkDataArray* column : columns)
      row.push_back(column->GetTuple1(r));
    h.values.push_back(row);
  }
  return {};
}

// Unit mass (the densities' rule, topovox::normalizeDensity); an empty
// string or why it cannot be.
std::string normalise(std::vector<double>& v, size_t which)
{
  try
  {
    topovox::normalizeDensity(v, "histogram " + std::to_string(which) + ":");
  }
  catch (const std::invalid_argument& e)
  {
    return e.what();
  }
  return {};
}
} // namespace

int vtkHistogramTransportFilter::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkTable* first = vtkTable::GetData(inputVector[0]);
  vtkTable* second = vtkTable::GetData(inputVector[1]);
  vtkTable* output = vtkTable::GetData(outputVector);
  if (!first || first->GetNumberOfRows() == 0)
    return 1; // nothing to compare (e.g. a rank other than 0)
  Histograms a, b;
  std::string why = histogramsOf(first, a);
  if (why.empty() && second)
    why = histogramsOf(second, b);
  if (why.empty() && second && a.centres != b.centres)
    why = "the two tables' bins differ (" + std::to_string(a.centres.size()) + " and " +
      std::to_string(b.centres.size()) + " bins, or other centres)";
  // The pairs: k with k (a single histogram against every other), or
  // consecutive histograms of the first table.
  std::vector<std::pair<size_t, size_t>> pairs;
  if (second)
  {
    const size_t n = std::max(a.values.size(), b.values.size());
    if (why.empty() && a.values.size() != b.values.size() && a.values.size() != 1 && b.values.size() != 1)
      why = "the tables hold " + std::to_string(a.values.size()) + " and " + std::to_string(b.values.size()) +
        " histograms: give as many, or one on either side";
    for (size_t k = 0; k < n; ++k)
      pairs.push_back({ a.values.size() == 1 ? 0 : k, b.values.size() == 1 ? 0 : k });
  }
  else
  {
    if (why.empty() && a.values.size() < 2)
      why = "one histogram alone: connect a second table, or give one histogram per row to compare consecutive ones";
    for (size_t k = 0; k + 1 < a.values.size(); ++k)
      pairs.push_back({ k, k + 1 });
  }
  for (size_t k = 0; why.empty() && k < a.values.size(); ++k)
    why = normalise(a.values[k], k);
  for (size_t k = 0; why.empty() && second && k < b.values.size(); ++k)
    why = normalise(b.values[k], k);
  if (!why.empty())
  {
    vtkErrorMacro(<< "Histogram transport: " << why << ".");
    return 0;
  }
  if (!second)
    b = a; // normalised
  const int64_t d = static_cast<int64_t>(a.centres.size());
  std::vector<double> M(static_cast<size_t>(d * d)), sa, sb;
  for (int64_t i = 0; i < d; ++i)
    for (int64_t j = 0; j < d; ++j)
      M[static_cast<size_t>(i * d + j)] = std::pow(std::fabs(a.centres[i] - a.centres[j]), this->CostPower);
  for (const auto& p : pairs)
  {
    sa.insert(sa.end(), a.values[p.first].begin(), a.values[p.first].end());
    sb.insert(sb.end(), b.values[p.second].begin(), b.values[p.second].end());
  }
  topovox::SinkhornOptions o = topovox_vtk::sinkhornOptions(
    this->Reg, this->Method, this->MaximumIterations, this->StopThreshold, 0 /* every core */);
  o.progress = [this](double f) {
    this->UpdateProgress(0.05 + 0.9 * f);
    return !this->CheckAbort();
  };
  this->SetProgressText("Histogram transport");
  this->UpdateProgress(0.05);
  topovox::SinkhornResult r;
  try
  {
    r = topovox::sinkhorn(sa, sb, M, static_cast<int64_t>(pairs.size()), d, o);
  }
  catch (const topovox::Aborted&)
  {
    vtkWarningMacro(<< "Histogram transport: aborted by the user.");
    return 1;
  }
  catch (const std::exception& e)
  {
    vtkErrorMacro(<< "Histogram transport: " << e.what() << ".");
    return 0;
  }
  if (!r.warnings.empty())
    vtkWarningMacro(<< "Histogram transport: " << r.warnings << ".");
  vtkNew<vtkIntArray> firstIndex, secondIndex, iterations;
  vtkNew<vtkDoubleArray> cost, wasserstein, error;
  firstIndex->SetName("First");
  secondIndex->SetName("Second");
  cost->SetName("TransportCost");
  wasserstein->SetName("Wasserstein");
  iterations->SetName("Iterations");
  error->SetName("MarginalError");
  for (size_t k = 0; k < pairs.size(); ++k)
  {
    firstIndex->InsertNextValue(static_cast<int>(pairs[k].first));
    secondIndex->InsertNextValue(static_cast<int>(pairs[k].second));
    cost->InsertNextValue(r.costs[k]);
    wasserstein->InsertNextValue(std::pow(std::max(0.0, r.costs[k]), 1.0 / this->CostPower));
    iterations->InsertNextValue(r.iterations[k]);
    error->InsertNextValue(r.errors[k]);
  }
  for (vtkAbstractArray* column : std::initializer_list<vtkAbstractArray*>{
         firstIndex, secondIndex, cost, wasserstein, iterations, error })
    output->AddColumn(column);
  this->UpdateProgress(1.0);
  return 1;
}

void vtkHistogramTransportFilter::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Reg: " << this->Reg << " Method: " << this->Method << " CostPower: " << this->CostPower << "\n";
}

// vtkPersistenceDiagramDistanceFilter.cxx - the VTK adapter of
// topovox::diagramDistance: two tables of pairs in, one distance per
// dimension and the matching out.
#include "vtkPersistenceDiagramDistanceFilter.h"

#include "topovox/DiagramDistance.h"

#include "vtkDataArray.h"
#include "vtkDoubleArray.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkIntArray.h"
#include "vtkObjectFactory.h"
#include "vtkTable.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

vtkStandardNewMacro(vtkPersistenceDiagramDistanceFilter);

vtkPersistenceDiagramDistanceFilter::vtkPersistenceDiagramDistanceFilter()
{
  this->SetNumberOfInputPorts(2);
  this->SetNumberOfOutputPorts(2);
}

int vtkPersistenceDiagramDistanceFilter::FillInputPortInformation(int, vtkInformation* info)
{
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkTable");
  return 1;
}

namespace
{
// One diagram's points of one dimension.
struct Points
{
  std::vector<topovox::DiagramPoint> finite;
  std::vector<int> finiteIds;
  std::vector<double> essentialBirths;
};

// The table's pairs by dimension (0..3); an empty string or what is missing.
std::string pointsOf(vtkTable* t, Points (&out)[4])
{
  auto* dim = vtkDataArray::SafeDownCast(t->GetColumnByName("Dimension"));
  auto* birth = vtkDataArray::SafeDownCast(t->GetColumnByName("Birth"));
  auto* death = vtkDataArray::SafeDownCast(t->GetColumnByName("Death"));
  auto* id = vtkDataArray::SafeDownCast(t->GetColumnByName("PairIdentifier"));
  if (!dim || !birth || !death)
    return "the tables need numeric columns Dimension, Birth and Death (the Pairs output of Persistence Diagram)";
  for (vtkIdType r = 0; r < t->GetNumberOfRows(); ++r)
  {
    const int d = static_cast<int>(dim->GetTuple1(r));
    if (d < 0 || d > 3)
      continue;
    const double b = birth->GetTuple1(r), e = death->GetTuple1(r);
    if (std::isinf(e))
      out[d].essentialBirths.push_back(b);
    else
    {
      out[d].finite.push_back({ b, e });
      out[d].finiteIds.push_back(id ? static_cast<int>(id->GetTuple1(r)) : static_cast<int>(r));
    }
  }
  return {};
}
} // namespace

int vtkPersistenceDiagramDistanceFilter::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkTable* first = vtkTable::GetData(inputVector[0]);
  vtkTable* second = vtkTable::GetData(inputVector[1]);
  vtkTable* distances = vtkTable::GetData(outputVector, 0);
  vtkTable* matching = vtkTable::GetData(outputVector, 1);
  if (!first || !second)
  {
    vtkErrorMacro(<< "Diagram distance: two tables of pairs are needed.");
    return 0;
  }
  if (first->GetNumberOfRows() == 0 && second->GetNumberOfRows() == 0)
    return 1; // e.g. ranks other than 0: nothing to compare
  Points x[4], y[4];
  std::string why = pointsOf(first, x);
  if (why.empty())
    why = pointsOf(second, y);
  if (!why.empty())
  {
    vtkErrorMacro(<< "Diagram distance: " << why << ".");
    return 0;
  }
  topovox::DiagramDistanceOptions o;
  o.order = this->Order;
  o.internalP = this->InternalP > 0 ? this->InternalP : INFINITY;
  o.relativeReg = this->RelativeRegularization;
  o.numItermax = this->MaximumIterations;
  vtkNew<vtkIntArray> dimension, iterations, mDim, mFirst, mSecond;
  vtkNew<vtkDoubleArray> distance, finite, essential;
  dimension->SetName("Dimension");
  distance->SetName("Distance");
  finite->SetName("FiniteDistance");
  essential->SetName("EssentialCost");
  iterations->SetName("Iterations");
  mDim->SetName("Dimension");
  mFirst->SetName("FirstPair");
  mSecond->SetName("SecondPair");
  for (int d = 0; d < 4; ++d)
  {
    if (x[d].finite.empty() && y[d].finite.empty() && x[d].essentialBirths.empty() && y[d].essentialBirths.empty())
      continue;
    topovox::DiagramDistance r;
    double essentialCost = 0;
    try
    {
      r = topovox::diagramDistance(x[d].finite, y[d].finite, o);
      essentialCost = topovox::essentialCost(x[d].essentialBirths, y[d].essentialBirths, o.order);
    }
    catch (const std::exception& e)
    {
      vtkErrorMacro(<< "Diagram distance: " << e.what() << ".");
      return 0;
    }
    if (!r.warnings.empty())
      vtkWarningMacro(<< "Diagram distance, dimension " << d << ": " << r.warnings << ".");
    dimension->InsertNextValue(d);
    finite->InsertNextValue(r.distance);
    essential->InsertNextValue(essentialCost);
    distance->InsertNextValue(std::pow(std::pow(r.distance, o.order) + essentialCost, 1.0 / o.order));
    iterations->InsertNextValue(r.iterations);
    for (size_t i = 0; i < r.matchX.size(); ++i)
    {
      mDim->InsertNextValue(d);
      mFirst->InsertNextValue(x[d].finiteIds[i]);
      mSecond->InsertNextValue(r.matchX[i] < 0 ? -1 : y[d].finiteIds[static_cast<size_t>(r.matchX[i])]);
    }
    for (size_t j = 0; j < r.matchY.size(); ++j)
      if (r.matchY[j] < 0) // points of the second diagram matched to the diagonal
      {
        mDim->InsertNextValue(d);
        mFirst->InsertNextValue(-1);
        mSecond->InsertNextValue(y[d].finiteIds[j]);
      }
  }
  distances->AddColumn(dimension);
  distances->AddColumn(distance);
  distances->AddColumn(finite);
  distances->AddColumn(essential);
  distances->AddColumn(iterations);
  matching->AddColumn(mDim);
  matching->AddColumn(mFirst);
  matching->AddColumn(mSecond);
  return 1;
}

void vtkPersistenceDiagramDistanceFilter::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Order: " << this->Order << " InternalP: " << this->InternalP
     << " RelativeRegularization: " << this->RelativeRegularization << "\n";
}

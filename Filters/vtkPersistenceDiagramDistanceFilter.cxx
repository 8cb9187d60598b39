// vtkPersistenceDiagramDistanceFilter.cxx - the VTK adapter of
// topovox::diagramDistances: two tables of pairs in, one distance per
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
// The table's pairs; an empty string or what is missing.
std::string pairsOf(vtkTable* t, std::vector<topovox::DiagramPair>& out)
{
  auto* dim = vtkDataArray::SafeDownCast(t->GetColumnByName("Dimension"));
  auto* birth = vtkDataArray::SafeDownCast(t->GetColumnByName("Birth"));
  auto* death = vtkDataArray::SafeDownCast(t->GetColumnByName("Death"));
  auto* id = vtkDataArray::SafeDownCast(t->GetColumnByName("PairIdentifier"));
  if (!dim || !birth || !death)
    return "the tables need numeric columns Dimension, Birth and Death (the Pairs output of Persistence Diagram)";
  for (vtkIdType r = 0; r < t->GetNumberOfRows(); ++r)
    out.push_back({ static_cast<int>(dim->GetTuple1(r)), birth->GetTuple1(r), death->GetTuple1(r),
      id ? static_cast<int64_t>(id->GetTuple1(r)) : static_cast<int64_t>(r) });
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
  std::vector<topovox::DiagramPair> x, y;
  std::string why = pairsOf(first, x);
  if (why.empty())
    why = pairsOf(second, y);
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
  std::vector<topovox::DimensionDistance> result;
  try
  {
    result = topovox::diagramDistances(x, y, o);
  }
  catch (const std::exception& e)
  {
    vtkErrorMacro(<< "Diagram distance: " << e.what() << ".");
    return 0;
  }
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
  for (const topovox::DimensionDistance& r : result)
  {
    if (!r.warnings.empty())
      vtkWarningMacro(<< "Diagram distance, dimension " << r.dimension << ": " << r.warnings << ".");
    dimension->InsertNextValue(r.dimension);
    finite->InsertNextValue(r.finiteDistance);
    essential->InsertNextValue(r.essentialCost);
    distance->InsertNextValue(r.distance);
    iterations->InsertNextValue(r.iterations);
    for (const auto& m : r.matching)
    {
      mDim->InsertNextValue(r.dimension);
      mFirst->InsertNextValue(static_cast<int>(m.first));
      mSecond->InsertNextValue(static_cast<int>(m.second));
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

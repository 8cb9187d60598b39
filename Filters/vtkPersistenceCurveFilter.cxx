// vtkPersistenceCurveFilter.cxx - the VTK adapter of topovox::persistenceCurve.
#include "vtkPersistenceCurveFilter.h"

#include "topovox/Persistence.h"

#include "vtkDataArray.h"
#include "vtkDoubleArray.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkObjectFactory.h"
#include "vtkTable.h"
#include "vtkTypeInt64Array.h"

#include <stdexcept>
#include <string>

vtkStandardNewMacro(vtkPersistenceCurveFilter);

int vtkPersistenceCurveFilter::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkTable* input = vtkTable::GetData(inputVector[0]);
  vtkTable* output = vtkTable::GetData(outputVector);
  if (!input || input->GetNumberOfRows() == 0)
    return 1; // no pairs (e.g. a rank other than 0): an empty curve
  auto* dim = vtkDataArray::SafeDownCast(input->GetColumnByName("Dimension"));
  auto* pers = vtkDataArray::SafeDownCast(input->GetColumnByName("Persistence"));
  if (!dim || !pers)
  {
    vtkErrorMacro(<< "Persistence curve: the input table needs numeric columns Dimension and "
                     "Persistence (the Pairs output of the Persistence Diagram filter).");
    return 0;
  }
  std::vector<int> dimensions(static_cast<size_t>(input->GetNumberOfRows()));
  std::vector<double> persistence(dimensions.size());
  int top = 0;
  for (vtkIdType i = 0; i < input->GetNumberOfRows(); ++i)
  {
    dimensions[i] = static_cast<int>(dim->GetTuple1(i));
    persistence[i] = pers->GetTuple1(i);
    top = std::max(top, dimensions[i]);
  }
  topovox::PersistenceCurve curve;
  try
  {
    curve = topovox::persistenceCurve(dimensions, persistence);
  }
  catch (const std::exception& e)
  {
    vtkErrorMacro(<< "Persistence curve: " << e.what() << ".");
    return 0;
  }
  const vtkIdType n = static_cast<vtkIdType>(curve.persistence.size());
  vtkNew<vtkDoubleArray> p;
  p->SetName("Persistence");
  p->SetNumberOfTuples(n);
  vtkNew<vtkTypeInt64Array> all;
  all->SetName("All");
  all->SetNumberOfTuples(n);
  output->AddColumn(p);
  vtkNew<vtkTypeInt64Array> perDim[4];
  for (int k = 0; k <= top; ++k)
  {
    perDim[k]->SetName(("Dimension" + std::to_string(k)).c_str());
    perDim[k]->SetNumberOfTuples(n);
    output->AddColumn(perDim[k]);
  }
  output->AddColumn(all);
  for (vtkIdType j = 0; j < n; ++j)
  {
    p->SetValue(j, curve.persistence[j]);
    int64_t sum = 0;
    for (int k = 0; k <= top; ++k)
    {
      perDim[k]->SetValue(j, curve.pairs[j][k]);
      sum += curve.pairs[j][k];
    }
    all->SetValue(j, sum);
  }
  return 1;
}

void vtkPersistenceCurveFilter::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
}

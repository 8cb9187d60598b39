// vtkPersistencePlotFilter.cxx - a persistence diagram or barcode as 2D
// geometry: the table's columns in, the barcode's rows from the kernel
// (topovox::barcodeRows), one cell per pair out.
#include "vtkPersistencePlotFilter.h"

#include "topovox/DiagramLayout.h"

#include "vtkCellArray.h"
#include "vtkCellData.h"
#include "vtkDataArray.h"
#include "vtkDoubleArray.h"
#include "vtkInformation.h"
#include "vtkInformationVector.h"
#include "vtkIdTypeArray.h"
#include "vtkIntArray.h"
#include "vtkObjectFactory.h"
#include "vtkPoints.h"
#include "vtkPolyData.h"
#include "vtkSignedCharArray.h"
#include "vtkTable.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <stdexcept>
#include <vector>

vtkStandardNewMacro(vtkPersistencePlotFilter);

int vtkPersistencePlotFilter::FillInputPortInformation(int, vtkInformation* info)
{
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkTable");
  return 1;
}

int vtkPersistencePlotFilter::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  vtkTable* input = vtkTable::GetData(inputVector[0]);
  vtkPolyData* output = vtkPolyData::GetData(outputVector);
  if (!input || input->GetNumberOfRows() == 0)
    return 1; // no pairs (e.g. a rank other than 0): an empty plot
  auto* dim = vtkDataArray::SafeDownCast(input->GetColumnByName("Dimension"));
  auto* birth = vtkDataArray::SafeDownCast(input->GetColumnByName("Birth"));
  auto* death = vtkDataArray::SafeDownCast(input->GetColumnByName("Death"));
  auto* id = vtkDataArray::SafeDownCast(input->GetColumnByName("PairIdentifier"));
  auto* birthId = vtkDataArray::SafeDownCast(input->GetColumnByName("BirthId"));
  auto* deathId = vtkDataArray::SafeDownCast(input->GetColumnByName("DeathId"));
  if (!dim || !birth || !death)
  {
    vtkErrorMacro(<< "Persistence plot: the input table needs numeric columns Dimension, Birth and Death "
                     "(the Pairs output of the Persistence Diagram filter).");
    return 0;
  }
  const vtkIdType n = input->GetNumberOfRows();
  std::vector<int> dimensions(static_cast<size_t>(n));
  std::vector<double> births(dimensions.size()), deaths(dimensions.size()), persistence(dimensions.size());
  bool superlevel = false;
  double lo = INFINITY, hi = -INFINITY;
  for (vtkIdType i = 0; i < n; ++i)
  {
    dimensions[i] = static_cast<int>(dim->GetTuple1(i));
    births[i] = birth->GetTuple1(i);
    deaths[i] = death->GetTuple1(i);
    persistence[i] = std::fabs(deaths[i] - births[i]);
    superlevel = superlevel || deaths[i] < births[i];
    for (double v : { births[i], deaths[i] })
      if (std::isfinite(v))
      {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
  }
  const bool barcode = this->Layout == BARCODE;
  std::vector<int64_t> rows;
  if (barcode)
    try
    {
      rows = topovox::barcodeRows(dimensions, births, persistence,
        this->SortBy ? topovox::BarcodeOrder::Persistence : topovox::BarcodeOrder::Birth, superlevel);
    }
    catch (const std::exception& e)
    {
      vtkErrorMacro(<< "Persistence plot: " << e.what() << ".");
      return 0;
    }
  // Essential classes end a little past the far end of the values.
  if (!(hi >= lo))
    lo = hi = 0; // no finite value at all
  const double margin = 0.05 * (hi > lo ? hi - lo : 1.0);
  const double far = superlevel ? lo - margin : hi + margin;
  const double near = superlevel ? hi + margin : lo - margin;

  vtkNew<vtkPoints> points;
  points->SetDataTypeToDouble();
  vtkNew<vtkCellArray> verts, lines;
  vtkNew<vtkIntArray> pairId, dimension, row;
  vtkNew<vtkDoubleArray> pers, birthValue, deathValue;
  vtkNew<vtkSignedCharArray> finite;
  vtkNew<vtkIdTypeArray> birthVoxel, deathVoxel;
  birthValue->SetName("Birth");
  deathValue->SetName("Death");
  birthVoxel->SetName("BirthId");
  deathVoxel->SetName("DeathId");
  pairId->SetName("PairIdentifier");
  dimension->SetName("Dimension");
  pers->SetName("Persistence");
  finite->SetName("IsFinite");
  row->SetName("Row");
  // Per cell: the pair's identity and values, so that an extract of
  // selected points or bars can be fed to Feature Regions as its pairs.
  auto addCell = [&](int id, int d, double p, bool f, int r, vtkIdType i) {
    birthValue->InsertNextValue(i >= 0 ? births[i] : 0.0);
    deathValue->InsertNextValue(i >= 0 ? deaths[i] : 0.0);
    birthVoxel->InsertNextValue(i >= 0 && birthId ? static_cast<vtkIdType>(birthId->GetTuple1(i)) : -1);
    deathVoxel->InsertNextValue(i >= 0 && deathId ? static_cast<vtkIdType>(deathId->GetTuple1(i)) : -1);
    pairId->InsertNextValue(id);
    dimension->InsertNextValue(d);
    pers->InsertNextValue(p);
    finite->InsertNextValue(f ? 1 : 0);
    row->InsertNextValue(r);
  };
  for (vtkIdType i = 0; i < n; ++i)
  {
    const bool isFinite = std::isfinite(deaths[i]);
    const double end = isFinite ? deaths[i] : far;
    const int identifier = id ? static_cast<int>(id->GetTuple1(i)) : static_cast<int>(i);
    if (barcode)
    {
      const double y = static_cast<double>(rows[i]);
      const vtkIdType line[2] = { points->InsertNextPoint(births[i], y, 0), points->InsertNextPoint(end, y, 0) };
      lines->InsertNextCell(2, line);
      addCell(identifier, dimensions[i], persistence[i], isFinite, static_cast<int>(rows[i]), i);
    }
    else
    {
      const vtkIdType vertex = points->InsertNextPoint(births[i], end, 0);
      verts->InsertNextCell(1, &vertex);
      addCell(identifier, dimensions[i], persistence[i], isFinite, -1, i);
    }
  }
  if (!barcode)
  {
    // Guides (vtkPolyData orders vertices before lines, as the arrays do):
    // the diagonal, the edge where essential classes sit, the band's edge.
    auto guide = [&](double x0, double y0, double x1, double y1) {
      const vtkIdType line[2] = { points->InsertNextPoint(x0, y0, 0), points->InsertNextPoint(x1, y1, 0) };
      lines->InsertNextCell(2, line);
      addCell(-1, -1, 0.0, true, -1, -1);
    };
    guide(near, near, far, far);
    guide(near, far, far, far);
    if (this->BandPersistence > 0)
    {
      const double t = superlevel ? -this->BandPersistence : this->BandPersistence;
      guide(near, near + t, far - t, far);
    }
  }
  output->SetPoints(points);
  if (barcode)
    output->SetLines(lines);
  else
  {
    output->SetVerts(verts);
    output->SetLines(lines);
  }
  for (vtkDataArray* a : std::initializer_list<vtkDataArray*>{
         pairId, dimension, pers, finite, row, birthValue, deathValue, birthVoxel, deathVoxel })
    output->GetCellData()->AddArray(a);
  output->GetCellData()->SetActiveScalars("Dimension");
  return 1;
}

void vtkPersistencePlotFilter::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "Layout: " << this->Layout << " SortBy: " << this->SortBy
     << " BandPersistence: " << this->BandPersistence << "\n";
}

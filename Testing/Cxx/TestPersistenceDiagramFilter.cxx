// TestPersistenceDiagramFilter.cxx - vtkPersistenceDiagramFilter through VTK:
// its table of pairs equals the reference engine's diagram (the full
// boundary matrix reduced by PHAT, an independent engine; Testing/Python and
// Testing/cli compare with CubicalRipser and GUDHI), for point and cell data,
// V and T, sublevel and superlevel, with NaN voxels; the diagram follows
// TTK's layout; and bad input is reported through vtkErrorMacro.
#include "vtkPersistenceDiagramFilter.h"

#include "topovox/Persistence.h"

#include "vtkCellData.h"
#include "TestHarness.h"
#include "vtkCommand.h"
#include "vtkDataArray.h"
#include "vtkDoubleArray.h"
#include "vtkFloatArray.h"
#include "vtkImageData.h"
#include "vtkNew.h"
#include "vtkPointData.h"
#include "vtkPolyData.h"
#include "vtkTable.h"
#include "vtkUnstructuredGrid.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace
{
using topovox_test::EventCollector;
using topovox_test::expect;
using topovox_test::failures;

using Triple = std::tuple<int, double, double>;

std::vector<Triple> tableTriples(vtkTable* t)
{
  std::vector<Triple> out;
  auto* d = vtkDataArray::SafeDownCast(t->GetColumnByName("Dimension"));
  auto* b = vtkDataArray::SafeDownCast(t->GetColumnByName("Birth"));
  auto* e = vtkDataArray::SafeDownCast(t->GetColumnByName("Death"));
  if (!d || !b || !e)
    return out;
  for (vtkIdType i = 0; i < t->GetNumberOfRows(); ++i)
    out.emplace_back(static_cast<int>(d->GetTuple1(i)), b->GetTuple1(i), e->GetTuple1(i));
  std::sort(out.begin(), out.end());
  return out;
}

void checkCase(bool cellData, int construction, int filtration, bool withNan, std::mt19937& rng)
{
  const int dims[3] = { 7, 6, 5 };
  vtkNew<vtkImageData> image;
  image->SetDimensions(dims);
  image->SetSpacing(0.5, 2.0, 1.0);
  image->SetOrigin(10, 20, 30);
  const int n[3] = { cellData ? 6 : 7, cellData ? 5 : 6, cellData ? 4 : 5 };
  std::vector<float> values(static_cast<size_t>(n[0] * n[1] * n[2]));
  std::uniform_int_distribution<int> level(0, 5);
  for (auto& v : values)
    v = static_cast<float>(level(rng));
  if (withNan)
    for (size_t i = 0; i < values.size(); i += 9)
      values[i] = std::numeric_limits<float>::quiet_NaN();
  vtkNew<vtkFloatArray> a;
  a->SetName("f");
  a->SetNumberOfTuples(static_cast<vtkIdType>(values.size()));
  for (size_t i = 0; i < values.size(); ++i)
    a->SetValue(static_cast<vtkIdType>(i), values[i]);
  if (cellData)
    image->GetCellData()->AddArray(a);
  else
    image->GetPointData()->AddArray(a);

  vtkNew<vtkPersistenceDiagramFilter> f;
  f->SetInputDataObject(0, image);
  f->SetInputArrayToProcess(0, 0, 0,
    cellData ? vtkDataObject::FIELD_ASSOCIATION_CELLS : vtkDataObject::FIELD_ASSOCIATION_POINTS, "f");
  f->SetConstruction(construction);
  f->SetFiltration(filtration);
  f->Update();
  const std::string what = std::string(cellData ? "cells" : "points") + (construction ? " T" : " V") +
    (filtration ? " superlevel" : " sublevel") + (withNan ? " NaN" : "");

  topovox::PersistenceOptions o;
  o.construction = construction ? topovox::Construction::T : topovox::Construction::V;
  o.filtration = filtration ? topovox::Filtration::Superlevel : topovox::Filtration::Sublevel;
  const auto reference = topovox::computePersistenceReference(
    topovox::GridView::contiguous(values.data(), topovox::ScalarType::Float32, n[0], n[1], n[2]), o);
  std::vector<Triple> want;
  for (const auto& p : reference.pairs)
    want.emplace_back(p.dimension, p.birth, p.death);
  std::sort(want.begin(), want.end());
  auto* table = vtkTable::SafeDownCast(f->GetOutputDataObject(1));
  expect(tableTriples(table) == want, what + ": pairs equal the reference engine's");

  // Voxel ids hold the values (and so are never NaN voxels).
  auto* bid = vtkDataArray::SafeDownCast(table->GetColumnByName("BirthId"));
  auto* did = vtkDataArray::SafeDownCast(table->GetColumnByName("DeathId"));
  auto* birth = vtkDataArray::SafeDownCast(table->GetColumnByName("Birth"));
  auto* death = vtkDataArray::SafeDownCast(table->GetColumnByName("Death"));
  bool ok = bid && did;
  for (vtkIdType i = 0; ok && i < table->GetNumberOfRows(); ++i)
  {
    ok = values[static_cast<size_t>(bid->GetTuple1(i))] == birth->GetTuple1(i);
    const vtkIdType d = static_cast<vtkIdType>(did->GetTuple1(i));
    ok = ok && (d < 0 ? std::isinf(death->GetTuple1(i)) : values[static_cast<size_t>(d)] == death->GetTuple1(i));
  }
  expect(ok, what + ": voxel ids hold the birth and death values");

  auto* diagram = vtkUnstructuredGrid::SafeDownCast(f->GetOutputDataObject(0));
  expect(diagram->GetNumberOfCells() == table->GetNumberOfRows() + 1, what + ": a line per pair and the diagonal");
  auto* ids = vtkDataArray::SafeDownCast(diagram->GetCellData()->GetArray("PairIdentifier"));
  expect(ids && ids->GetTuple1(diagram->GetNumberOfCells() - 1) == -1, what + ": the diagonal last");
  for (const char* name : { "CriticalType", "ttkVertexScalarField", "Coordinates" })
    expect(diagram->GetPointData()->GetArray(name) != nullptr, what + ": point array " + name);
  // Critical voxels lie inside the image's world bounds.
  auto* points = vtkPolyData::SafeDownCast(f->GetOutputDataObject(2));
  double bounds[6];
  image->GetBounds(bounds);
  bool inside = points->GetNumberOfPoints() > 0;
  for (vtkIdType i = 0; inside && i < points->GetNumberOfPoints(); ++i)
  {
    double x[3];
    points->GetPoint(i, x);
    for (int k = 0; k < 3; ++k)
      inside = inside && x[k] >= bounds[2 * k] - 1e-9 && x[k] <= bounds[2 * k + 1] + 1e-9;
  }
  expect(inside, what + ": critical voxels inside the image");
}

void checkError(vtkImageData* image, int component, const std::string& reason)
{
  vtkNew<vtkPersistenceDiagramFilter> f;
  vtkNew<EventCollector> errors;
  f->AddObserver(vtkCommand::ErrorEvent, errors);
  f->SetInputDataObject(0, image);
  f->SetComponent(component);
  f->Update();
  expect(errors->Messages.find(reason) != std::string::npos, "error says '" + reason + "'");
  expect(vtkTable::SafeDownCast(f->GetOutputDataObject(1))->GetNumberOfRows() == 0,
    "no partial output after '" + reason + "'");
}
} // namespace

int main()
{
  std::mt19937 rng(5);
  for (bool cellData : { false, true })
    for (int construction : { 0, 1 })
      for (int filtration : { 0, 1 })
        checkCase(cellData, construction, filtration, false, rng);
  checkCase(false, 0, 0, true, rng);
  checkCase(true, 1, 1, true, rng);

  vtkNew<vtkImageData> vectors;
  vectors->SetDimensions(4, 4, 4);
  vtkNew<vtkDoubleArray> v;
  v->SetName("velocity");
  v->SetNumberOfComponents(3);
  v->SetNumberOfTuples(64);
  v->Fill(1.0);
  vectors->GetPointData()->SetScalars(v);
  checkError(vectors, -1, "has 3 components: choose one");
  checkError(vectors, 5, "component 5 does not exist");
  vtkNew<vtkImageData> bare;
  bare->SetDimensions(3, 3, 3);
  checkError(bare, -1, "no scalar array");
  std::printf("%d failures\n", failures);
  return failures == 0 ? 0 : 1;
}

// TestEulerCurveFilter.cxx - vtkEulerCurveFilter through VTK: every VTK
// scalar type, point and cell data, both constructions and filtrations,
// multi-component arrays, against the brute-force cell count of the kernel
// tests (an independent oracle); and every error path reports through
// vtkErrorMacro without crashing.
#include "vtkEulerCurveFilter.h"

#include "BruteForceEuler.h"

#include "vtkCellData.h"
#include "TestHarness.h"
#include "vtkCommand.h"
#include "vtkDataArray.h"
#include "vtkDoubleArray.h"
#include "vtkExecutive.h"
#include "vtkFloatArray.h"
#include "vtkImageData.h"
#include "vtkNew.h"
#include "vtkPointData.h"
#include "vtkStringArray.h"
#include "vtkTable.h"
#include "vtkTypeInt16Array.h"
#include "vtkTypeInt32Array.h"
#include "vtkTypeInt64Array.h"
#include "vtkTypeInt8Array.h"
#include "vtkTypeUInt16Array.h"
#include "vtkTypeUInt32Array.h"
#include "vtkTypeUInt64Array.h"
#include "vtkTypeUInt8Array.h"

#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace
{
using topovox_test::EventCollector;
using topovox_test::expect;
using topovox_test::failures;

template <typename ArrayT>
void checkType(const char* name, std::mt19937& rng)
{
  using T = typename ArrayT::ValueType;
  const int dims[3] = { 6, 5, 4 };
  for (bool cellData : { false, true })
  {
    vtkNew<vtkImageData> image;
    image->SetDimensions(dims);
    const int n[3] = { cellData ? dims[0] - 1 : dims[0], cellData ? dims[1] - 1 : dims[1],
      cellData ? dims[2] - 1 : dims[2] };
    const int count = n[0] * n[1] * n[2];
    // Two components: the filter must read component 1.
    vtkNew<ArrayT> array;
    array->SetName("values");
    array->SetNumberOfComponents(2);
    array->SetNumberOfTuples(count);
    std::uniform_int_distribution<int> d(0, 4);
    std::vector<T> values(count);
    for (int i = 0; i < count; ++i)
    {
      values[i] = static_cast<T>(d(rng));
      array->SetTypedComponent(i, 0, T(9));
      array->SetTypedComponent(i, 1, values[i]);
    }
    if (cellData)
      image->GetCellData()->AddArray(array);
    else
      image->GetPointData()->AddArray(array);

    for (int construction : { 0, 1 })
      for (int filtration : { 0, 1 })
      {
        vtkNew<vtkEulerCurveFilter> filter;
        filter->SetInputData(image);
        filter->SetInputArrayToProcess(0, 0, 0,
          cellData ? vtkDataObject::FIELD_ASSOCIATION_CELLS : vtkDataObject::FIELD_ASSOCIATION_POINTS,
          "values");
        filter->SetComponent(1);
        filter->SetConstruction(construction);
        filter->SetFiltration(filtration);
        filter->SetDevice(vtkEulerCurveFilter::DEVICE_CPU);
        filter->Update();
        vtkTable* table = filter->GetOutput();
        const std::string what = std::string(name) + (cellData ? " cells" : " points") +
          (construction ? " T" : " V") + (filtration ? " superlevel" : " sublevel");
        vtkDataArray* thresholds = vtkDataArray::SafeDownCast(table->GetColumnByName("Threshold"));
        vtkDataArray* euler = vtkDataArray::SafeDownCast(table->GetColumnByName("EulerCharacteristic"));
        if (!thresholds || !euler)
        {
          expect(false, what + ": output columns missing");
          continue;
        }
        std::vector<double> t(thresholds->GetNumberOfTuples());
        for (size_t j = 0; j < t.size(); ++j)
          t[j] = thresholds->GetTuple1(j);
        const int64_t bdims[3] = { n[0], n[1], n[2] };
        const auto expected = topovox::test::bruteForceCounts(values, bdims,
          construction ? topovox::Construction::T : topovox::Construction::V,
          filtration ? topovox::Filtration::Superlevel : topovox::Filtration::Sublevel, t);
        bool same = t.size() == expected.size() && !t.empty();
        const char* columns[4] = { "Vertices", "Edges", "Squares", "Cubes" };
        for (size_t j = 0; same && j < t.size(); ++j)
        {
          const auto& e = expected[j];
          same = euler->GetTuple1(j) == double(e[0] - e[1] + e[2] - e[3]);
          for (int k = 0; same && k < 4; ++k)
          {
            auto* col = vtkDataArray::SafeDownCast(table->GetColumnByName(columns[k]));
            same = col && col->GetTuple1(j) == double(e[k]);
          }
        }
        expect(same, what + ": equals the brute-force count");
        expect(std::string(filter->GetLastDevice()) == "cpu", what + ": ran on the CPU");
      }
  }
}

void checkErrors()
{
  vtkNew<vtkImageData> image;
  image->SetDimensions(4, 4, 1);
  vtkNew<vtkFloatArray> a;
  a->SetName("a");
  a->SetNumberOfTuples(16);
  a->FillValue(1.0f);
  image->GetPointData()->SetScalars(a);

  auto run = [&](vtkEulerCurveFilter* f, const std::string& what, const std::string& reason) {
    vtkNew<EventCollector> errors;
    f->AddObserver(vtkCommand::ErrorEvent, errors);
    f->GetExecutive()->AddObserver(vtkCommand::ErrorEvent, errors);
    f->SetInputData(image);
    f->Update();
    expect(errors->Count > 0, what + ": reported an error");
    expect(errors->Messages.find(reason) != std::string::npos,
      what + ": the error says why (" + reason + ")");
    expect(f->GetOutput()->GetNumberOfRows() == 0, what + ": no partial output");
  };
  {
    vtkNew<vtkEulerCurveFilter> f;
    f->SetComponent(3);
    run(f, "missing component", "component 3 does not exist");
  }
  {
    vtkNew<vtkEulerCurveFilter> f;
    f->SetThresholdMode(vtkEulerCurveFilter::THRESHOLDS_LIST);
    f->AddThreshold(2);
    f->AddThreshold(1);
    run(f, "decreasing list", "strictly increasing");
  }
  {
    vtkNew<vtkEulerCurveFilter> f;
    f->SetThresholdMode(vtkEulerCurveFilter::THRESHOLDS_LIST);
    run(f, "empty list", "threshold list is empty");
  }
  {
    vtkNew<vtkEulerCurveFilter> f;
    f->SetInputArrayToProcess(0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, "nothing");
    vtkNew<vtkImageData> bare;
    bare->SetDimensions(3, 3, 3);
    vtkNew<EventCollector> errors;
    f->AddObserver(vtkCommand::ErrorEvent, errors);
    f->SetInputData(bare);
    f->Update();
    expect(errors->Count > 0 && errors->Messages.find("no scalar array") != std::string::npos,
      "no array: says so ('" + errors->Messages + "')");
  }
  {
    // A GPU request without a GPU (this test runs on CI) warns and works.
    vtkNew<vtkEulerCurveFilter> f;
    f->SetDevice(vtkEulerCurveFilter::DEVICE_GPU);
    vtkNew<EventCollector> warnings;
    f->AddObserver(vtkCommand::WarningEvent, warnings);
    f->SetInputData(image);
    f->Update();
    expect(f->GetOutput()->GetNumberOfRows() == 1, "GPU request: a curve is produced");
    const bool gpu = std::string(f->GetLastDevice()) == "gpu";
    expect(gpu || warnings->Count > 0, "GPU request without a GPU: a warning");
  }
}
} // namespace

int TestEulerCurveFilter(int, char*[])
{
  std::mt19937 rng(7);
  checkType<vtkTypeInt8Array>("int8", rng);
  checkType<vtkTypeUInt8Array>("uint8", rng);
  checkType<vtkTypeInt16Array>("int16", rng);
  checkType<vtkTypeUInt16Array>("uint16", rng);
  checkType<vtkTypeInt32Array>("int32", rng);
  checkType<vtkTypeUInt32Array>("uint32", rng);
  checkType<vtkTypeInt64Array>("int64", rng);
  checkType<vtkTypeUInt64Array>("uint64", rng);
  checkType<vtkFloatArray>("float", rng);
  checkType<vtkDoubleArray>("double", rng);
  checkErrors();
  std::printf("%d failures\n", failures);
  return failures == 0 ? 0 : 1;
}

int main(int argc, char* argv[])
{
  return TestEulerCurveFilter(argc, argv);
}

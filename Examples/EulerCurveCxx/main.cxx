// The Euler characteristic curve of VTK's analytic Wavelet image, computed
// with vtkEulerCurveFilter in a plain VTK program.
//   euler_curve_example [half-size]    (default 32: a 65^3 image)
#include "vtkEulerCurveFilter.h"

#include "vtkDataArray.h"
#include "vtkNew.h"
#include "vtkRTAnalyticSource.h"
#include "vtkTable.h"

#include <cstdio>
#include <cstdlib>

int main(int argc, char* argv[])
{
  const int half = argc > 1 ? std::atoi(argv[1]) : 32;
  vtkNew<vtkRTAnalyticSource> wavelet;
  wavelet->SetWholeExtent(-half, half, -half, half, -half, half);

  vtkNew<vtkEulerCurveFilter> curve;
  curve->SetInputConnection(wavelet->GetOutputPort());
  curve->SetThresholdMode(vtkEulerCurveFilter::THRESHOLDS_BINS);
  curve->SetNumberOfBins(16);
  curve->Update();

  vtkTable* table = curve->GetOutput();
  if (table->GetNumberOfRows() == 0)
  {
    std::fprintf(stderr, "no curve was computed\n");
    return 1;
  }
  vtkDataArray* t = vtkDataArray::SafeDownCast(table->GetColumnByName("Threshold"));
  vtkDataArray* chi = vtkDataArray::SafeDownCast(table->GetColumnByName("EulerCharacteristic"));
  std::printf("Euler curve of a %d^3 Wavelet on the %s:\n", 2 * half + 1, curve->GetLastDevice());
  for (vtkIdType j = 0; j < table->GetNumberOfRows(); ++j)
    std::printf("t=%.3f chi=%lld \n", t->GetTuple1(j), static_cast<long long>(chi->GetTuple1(j)));
  return 0;
}

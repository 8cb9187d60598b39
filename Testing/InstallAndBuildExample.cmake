# Installs the build tree into a scratch prefix, then checks what a user of
# the install gets: the plugin loads from PV_PLUGIN_PATH in pvpython,
# `import topovox` works, and Examples/EulerCurveCxx builds against it with
# find_package(TopoVox) and runs.
set(prefix "${WORK_DIR}/prefix")
file(REMOVE_RECURSE "${WORK_DIR}")
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}")
  endif()
  set(last_output "${out}${err}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${prefix}")

if(PVPYTHON)
  file(WRITE "${WORK_DIR}/load.py" "
from paraview.simple import Wavelet, EulerCharacteristicCurve
from paraview import servermanager as sm
import topovox
c = EulerCharacteristicCurve(Input=Wavelet())
c.UpdatePipeline()
print('rows', sm.Fetch(c).GetNumberOfRows(), topovox.vtkEulerCurveFilter.__name__)
")
  set(ENV{PV_PLUGIN_PATH} "${prefix}/${LIBDIR}/paraview-5.11/plugins/TopoVox")
  set(ENV{PYTHONPATH} "${prefix}/${PYTHON_DESTINATION}")
  run(${PVPYTHON} "${WORK_DIR}/load.py")
  if(NOT last_output MATCHES "rows 256 vtkEulerCurveFilter")
    message(FATAL_ERROR "the installed plugin did not produce a 256-row curve")
  endif()
endif()

run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/Examples/EulerCurveCxx" -B "${WORK_DIR}/example"
  -G "${GENERATOR}" "-DCMAKE_PREFIX_PATH=${prefix}" -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build "${WORK_DIR}/example")
run("${WORK_DIR}/example/euler_curve_example" 24)
if(NOT last_output MATCHES "chi=1 ")
  message(FATAL_ERROR "the example's last threshold is not the whole (contractible) image")
endif()

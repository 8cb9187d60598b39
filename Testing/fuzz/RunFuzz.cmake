# Builds the readers' fuzz target with clang++ (libFuzzer, ASan, UBSan) in
# WORK_DIR and runs it for SECONDS on a copy of the corpus kept in
# Testing/fuzz/corpus (new inputs it finds stay in WORK_DIR). Any crash,
# sanitizer report or hang fails the test. Without clang it says "SKIP".
find_program(CLANGXX NAMES clang++ clang++-14)
if(NOT CLANGXX)
  message("SKIP: no clang++ (Debian: clang, libclang-rt-14-dev)")
  return()
endif()
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
endfunction()
run(${CMAKE_COMMAND} -S "${SOURCE_DIR}/CommandLine/fuzz" -B "${WORK_DIR}/build"
  -DCMAKE_CXX_COMPILER=${CLANGXX} -DCMAKE_BUILD_TYPE=RelWithDebInfo)
run(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
file(REMOVE_RECURSE "${WORK_DIR}/corpus")
file(COPY "${SOURCE_DIR}/Testing/fuzz/corpus/image_reader/" DESTINATION "${WORK_DIR}/corpus")
execute_process(
  COMMAND "${WORK_DIR}/build/fuzz_image_reader" -max_total_time=${SECONDS} -timeout=10
          -rss_limit_mb=2048 -print_final_stats=1 "${WORK_DIR}/corpus"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(REGEX MATCH "stat::number_of_executed_units: *[0-9]+" runs "${err}")
message("${runs}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the fuzzer found a failure (exit ${rc}):\n${err}")
endif()

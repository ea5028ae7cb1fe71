# The Python extension (python/): built when Debian's pybind11 (pybind11-dev,
# python3-pybind11) is there, into build/python/wasmwarp (a package to put on
# PYTHONPATH), and installed with `cmake --install` into
# PREFIX/lib/pythonX.Y/site-packages/wasmwarp.
option(WW_PYTHON "Build the Python extension when pybind11 is available" ON)
if(NOT WW_PYTHON)
  return()
endif()
# Debian's interpreter, whose NumPy, pytest and pybind11 come from apt,
# before any other python3 on PATH.
if(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()
find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
set(PYBIND11_FINDPYTHON ON)
find_package(pybind11 CONFIG QUIET)
if(NOT Python3_FOUND OR NOT pybind11_FOUND)
  message(STATUS "wasmwarp: Python extension OFF (needs python3-dev and pybind11-dev)")
  return()
endif()
pybind11_add_module(_wasmwarp ${CMAKE_CURRENT_LIST_DIR}/src/module.cc)
target_link_libraries(_wasmwarp PRIVATE ww_api)
set(WW_PY_PACKAGE ${PROJECT_BINARY_DIR}/python/wasmwarp)
set_target_properties(_wasmwarp PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${WW_PY_PACKAGE})
set(WW_PY_FILES __init__.py __init__.pyi py.typed)
foreach(f IN LISTS WW_PY_FILES)
  add_custom_command(TARGET _wasmwarp POST_BUILD
                     COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_CURRENT_LIST_DIR}/wasmwarp/${f} ${WW_PY_PACKAGE}/${f})
endforeach()
set(WW_PYTHON_SITE "lib/python${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}/site-packages"
    CACHE STRING "where cmake --install puts the Python package, under the prefix")
install(TARGETS _wasmwarp LIBRARY DESTINATION ${WW_PYTHON_SITE}/wasmwarp)
list(TRANSFORM WW_PY_FILES PREPEND ${CMAKE_CURRENT_LIST_DIR}/wasmwarp/)
install(FILES ${WW_PY_FILES} DESTINATION ${WW_PYTHON_SITE}/wasmwarp)
message(STATUS "wasmwarp: Python extension ON (${Python3_EXECUTABLE}, ${Python3_VERSION})")

if(WW_BUILD_TESTS)
  execute_process(COMMAND ${Python3_EXECUTABLE} -c "import numpy, pytest" RESULT_VARIABLE ww_py_test_deps
                  OUTPUT_QUIET ERROR_QUIET)
  find_program(WW_WAT2WASM_PY wat2wasm)
  if(ww_py_test_deps EQUAL 0 AND WW_WAT2WASM_PY)
    add_test(NAME python_api
             COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${PROJECT_BINARY_DIR}/python WAT2WASM=${WW_WAT2WASM_PY}
                     ${Python3_EXECUTABLE} -m pytest -q -p no:cacheprovider ${CMAKE_CURRENT_LIST_DIR}/tests)
    set_tests_properties(python_api PROPERTIES LABELS python TIMEOUT 300)
    # `pip install .` into a fresh virtual environment (pyproject.toml,
    # setup.py), then the same tests against the installed package.
    execute_process(COMMAND ${Python3_EXECUTABLE} -c "import setuptools, wheel, pip, venv" RESULT_VARIABLE ww_py_pip
                    OUTPUT_QUIET ERROR_QUIET)
    if(ww_py_pip EQUAL 0)
      add_test(NAME python_package COMMAND ${CMAKE_COMMAND} -E env WAT2WASM=${WW_WAT2WASM_PY} bash
                                           ${CMAKE_CURRENT_LIST_DIR}/tests/package.sh ${PROJECT_BINARY_DIR}
                                           ${Python3_EXECUTABLE})
      # Its `cmake --build` of the build tree never overlaps the install
      # test's reading of it.
      set_tests_properties(python_package PROPERTIES LABELS python TIMEOUT 600 RESOURCE_LOCK build_tree)
    else()
      message(STATUS "wasmwarp: Python package test OFF (needs python3-pip, python3-setuptools, python3-wheel)")
    endif()
  else()
    message(STATUS "wasmwarp: Python tests OFF (need python3-numpy, python3-pytest and wat2wasm)")
  endif()
endif()

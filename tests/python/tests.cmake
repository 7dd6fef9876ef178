# The Python package (src/python/): pytest on the python3 the package is built for
# (Debian's), with the package the build leaves in build/python and the real `ordo` binary
# (ORDO_BINARY); one ctest entry per file. (test_distributed.py, beside them, is registered by
# tests/dask/tests.cmake.) Each pytest has its own --basetemp: pytest's shared default under /tmp
# is not safe for sessions that ctest -j2 runs at once.
if(TARGET ordo_python)
  foreach(name test_translate test_streaming test_glossary test_files test_whisper)
    add_test(NAME Python.${name}
      COMMAND ${ORDO_PYTHON3_EXECUTABLE} -m pytest -q -p no:cacheprovider
              --basetemp=${CMAKE_BINARY_DIR}/pytest-tmp-${name} ${CMAKE_CURRENT_LIST_DIR}/${name}.py)
    set_tests_properties(Python.${name} PROPERTIES LABELS integration TIMEOUT 600
      ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;ORDO_BINARY=$<TARGET_FILE:ordo_cli>")
  endforeach()
endif()

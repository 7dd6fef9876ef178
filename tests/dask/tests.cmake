# Corpus translation on a Dask cluster (python3 -m ordo.distributed): pytest on the
# interpreter the package is built for (Debian's python3, with python3-dask/-distributed), the
# package from build/python, loopback LocalClusters only, against the real `ordo translate`.
# The test file sits with the package's other tests in tests/python/.
if(TARGET ordo_python)
  add_test(NAME Dask.distributed
    COMMAND ${ORDO_PYTHON3_EXECUTABLE} -m pytest -q -p no:cacheprovider --basetemp=${CMAKE_BINARY_DIR}/pytest-tmp-distributed
            ${CMAKE_SOURCE_DIR}/tests/python/test_distributed.py)
  set_tests_properties(Dask.distributed PROPERTIES LABELS integration TIMEOUT 600
    ENVIRONMENT "PYTHONPATH=${CMAKE_BINARY_DIR}/python;ORDO_BUILD_DIR=${CMAKE_BINARY_DIR}")
endif()

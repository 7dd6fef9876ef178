# The page `ordo serve` serves (src/web), in a real browser: pytest + python3-selenium driving
# Debian's headless chromium through /usr/bin/chromedriver, against the real `ordo serve` on
# 127.0.0.1 (tests/web/test_page.py). Debian's own python3, which has pytest and selenium.
find_program(ORDO_DEBIAN_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT ORDO_DEBIAN_PYTHON)
  set(ORDO_DEBIAN_PYTHON python3)
endif()
add_test(NAME web.page
  COMMAND ${ORDO_DEBIAN_PYTHON} -m pytest -q -p no:cacheprovider --basetemp=${CMAKE_BINARY_DIR}/pytest-tmp-web
          ${CMAKE_CURRENT_LIST_DIR}/test_page.py)
set_tests_properties(web.page PROPERTIES LABELS integration TIMEOUT 600
  ENVIRONMENT "ORDO_BUILD_DIR=${CMAKE_BINARY_DIR};ORDO_SOURCE_DIR=${CMAKE_SOURCE_DIR}")

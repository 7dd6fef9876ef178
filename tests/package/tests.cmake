# The Debian package (cmake/package.cmake): cpack -G DEB, its contents and dependencies, and the
# package unpacked into a throw-away root translating, serving, building a find_package(ordo)
# program, with its systemd unit verified (tests/package/package_test.sh). Needs the whole
# build (the binary, the man page): slow.
add_test(NAME Package.DebBuildsInstallsAndTranslates
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/package_test.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR} ${PROJECT_VERSION}
          ${CMAKE_CXX_COMPILER} "${CMAKE_CXX_FLAGS}")
set_tests_properties(Package.DebBuildsInstallsAndTranslates PROPERTIES TIMEOUT 900 LABELS slow)

# The Debian package: `cpack -G DEB` in the build folder writes ordo_<version>_amd64.deb
# (docs/operations.md). Included by the root CMakeLists.txt after its install() rules, which
# give the package its binary, libordo (+ its SentencePiece shim, libordo_cli and
# libordo_serve), headers, CMake package files, bundled models (/usr/share/ordo/models) and
# presets. This file adds what only a system package has: the man page, the systemd unit,
# /etc/ordo/models.json (a conffile) and the maintainer scripts. Those go to absolute paths, so
# they are a component of their own left out of a plain `cmake --install --prefix DIR`
# (EXCLUDE_FROM_ALL): only the package has them. Dependencies come from dpkg-shlibdeps (the
# libraries the ELF files need: LibTorch, oneDNN, ICU, ...), so they are Debian's own package
# names at the versions this build linked.

# ---------------------------------------------------------------- man page, from --help
# ordo(1) is written from `ordo --help` and each subcommand's --help by tools/package/man_page.py
# whenever the command line changes. Part of the default build only with the launcher:
# sanitizer builds (ORDO_CLI_LAUNCHER=OFF, tools/ci/sanitize.sh) do not run the binary to build.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  if(ORDO_CLI_LAUNCHER)
    set(ordo_man_all ALL)
  else()
    set(ordo_man_all "")
  endif()
  set(ORDO_MAN_PAGE ${CMAKE_BINARY_DIR}/man/ordo.1.gz)
  add_custom_command(OUTPUT ${ORDO_MAN_PAGE}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
    COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tools/package/man_page.py $<TARGET_FILE:ordo_cli>
            ${CMAKE_BINARY_DIR}/man/ordo.1 ${PROJECT_VERSION}
    COMMAND gzip -9 -n -f ${CMAKE_BINARY_DIR}/man/ordo.1
    DEPENDS ordo_cli ${ORDO_CLI_CODE} ${ORDO_SERVE_CODE} ordo ordo_sentencepiece ${CMAKE_SOURCE_DIR}/tools/package/man_page.py
    COMMENT "Writing the man page ordo(1) from ordo --help"
    VERBATIM)
  add_custom_target(ordo_man ${ordo_man_all} DEPENDS ${ORDO_MAN_PAGE})
  # OPTIONAL: a build of single targets has no man page; the package test checks the .deb has it.
  install(FILES ${ORDO_MAN_PAGE} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 OPTIONAL)
endif()

# ---------------------------------------------------------------- system files (package only)
install(FILES tools/package/ordo.service DESTINATION /lib/systemd/system COMPONENT system EXCLUDE_FROM_ALL)
install(FILES tools/package/models.json DESTINATION /etc/ordo COMPONENT system EXCLUDE_FROM_ALL)

# ---------------------------------------------------------------- CPack
set(CPACK_PACKAGE_NAME ordo)
set(CPACK_PACKAGE_VENDOR "ordo")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "ordo maintainers <ordo@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "C++ inference for encoder-decoder transformers: translation and summarization")
set(CPACK_PACKAGE_DESCRIPTION
  "ordo loads Hugging Face model folders as downloaded (Marian/opus-mt, M2M100, NLLB, FSMT,\n\
BART, mBART, Pegasus, T5) and gives the tokens of transformers' generate() on the CPU.\n\
It runs as a command (ordo translate, ordo summarize), as an HTTP server with\n\
LibreTranslate's API (ordo serve, the ordo.service unit) or as a library (libordo, with its\n\
headers and CMake package files for find_package(ordo)). Small bundled demo models\n\
(en-de, de-en, dialogsum) are in /usr/share/ordo/models.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
# One .deb with every component: the default install and the system files above.
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE amd64)
execute_process(COMMAND dpkg --print-architecture OUTPUT_VARIABLE ordo_deb_arch
  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(ordo_deb_arch)
  set(CPACK_DEBIAN_PACKAGE_ARCHITECTURE ${ordo_deb_arch})
endif()
set(CPACK_DEBIAN_FILE_NAME "ordo_${PROJECT_VERSION}_${CPACK_DEBIAN_PACKAGE_ARCHITECTURE}.deb")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The Python package (src/python), when built, is an extension for one Python minor version.
if(TARGET ordo_python AND Python3_Interpreter_FOUND)
  math(EXPR ordo_next_minor "${Python3_VERSION_MINOR} + 1")
  set(CPACK_DEBIAN_PACKAGE_RECOMMENDS
    "python3 (>= ${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}~), python3 (<< ${Python3_VERSION_MAJOR}.${ordo_next_minor})")
endif()
# libordo_cli.so and libordo_serve.so find libordo.so.0 beside them ($ORIGIN): dpkg-shlibdeps
# looks there too.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CMAKE_INSTALL_LIBDIR})
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${CMAKE_SOURCE_DIR}/tools/package/conffiles ${CMAKE_SOURCE_DIR}/tools/package/postinst
  ${CMAKE_SOURCE_DIR}/tools/package/prerm ${CMAKE_SOURCE_DIR}/tools/package/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# The models are most of the package and compress little: gzip, not xz (same size, seconds).
set(CPACK_DEBIAN_COMPRESSION_TYPE gzip)
set(CPACK_STRIP_FILES ON)
# cpack packs what the build built (cmake --build build first): its "preinstall" step would
# otherwise build every target (tests included) outside the caller's control.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)
include(CPack)

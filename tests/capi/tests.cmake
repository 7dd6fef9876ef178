# The C ABI (include/ordo/ordo_c.h, src/capi/): plain C programs built with the system's C
# compiler against the build tree's libordo.so (tests/capi/capi_test.sh).
find_program(ORDO_C_COMPILER NAMES gcc cc)
if(ORDO_C_COMPILER)
  add_test(NAME CApi.ErrorPaths
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/capi/capi_test.sh error ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}
            ${CMAKE_CURRENT_SOURCE_DIR}/data/hf/marian_opus_en_mg ${ORDO_C_COMPILER})
  set_tests_properties(CApi.ErrorPaths PROPERTIES LABELS unit TIMEOUT 300)
  add_test(NAME CApi.ExampleTranslatesLikeTheCommandLine
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/capi/capi_test.sh example ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}
            ${CMAKE_CURRENT_SOURCE_DIR}/data/hf/marian_opus_en_mg ${ORDO_C_COMPILER})
  set_tests_properties(CApi.ExampleTranslatesLikeTheCommandLine PROPERTIES LABELS integration TIMEOUT 600)
  # The bundled en-de model: the glossary's term has to be one the model translates.
  add_test(NAME CApi.GlossaryTranslatesLikeTheCommandLine
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/capi/capi_test.sh glossary ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}
            ${CMAKE_SOURCE_DIR}/models/en-de ${ORDO_C_COMPILER})
  set_tests_properties(CApi.GlossaryTranslatesLikeTheCommandLine PROPERTIES LABELS integration TIMEOUT 600)
  add_test(NAME CApi.GlossaryLeavesSentencesWithoutATermUnchanged
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/capi/capi_test.sh glossary-untouched ${CMAKE_SOURCE_DIR}
            ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR}/models/en-de ${ORDO_C_COMPILER})
  set_tests_properties(CApi.GlossaryLeavesSentencesWithoutATermUnchanged PROPERTIES LABELS integration TIMEOUT 600)
  add_test(NAME CApi.FilesTranslateAsTheCommandLine
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/capi/capi_test.sh file ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}
            ${CMAKE_SOURCE_DIR}/models/en-de ${ORDO_C_COMPILER})
  set_tests_properties(CApi.FilesTranslateAsTheCommandLine PROPERTIES LABELS integration TIMEOUT 600)
  add_test(NAME CApi.TranscribesAsTheCommandLine
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/capi/capi_test.sh transcribe ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}
            ${CMAKE_CURRENT_SOURCE_DIR}/data/hf/whisper ${ORDO_C_COMPILER})
  set_tests_properties(CApi.TranscribesAsTheCommandLine PROPERTIES LABELS integration TIMEOUT 600)
endif()

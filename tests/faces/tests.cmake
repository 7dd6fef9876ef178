# The faces' clients: real client libraries of the APIs `ordo serve` answers, driven against the
# real binary. deepl-node (DeepL's official Node.js client, tests/faces/deepl_node/) calls the
# DeepL API v2 routes, openai (OpenAI's, tests/faces/openai_node/) the audio routes; each skipped
# (77) only where its node_modules are not installed (tools/test.sh runs `npm ci --prefix
# tests/faces/<face>`).
add_test(NAME faces.deepl_node
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/deepl_node/run.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
set_tests_properties(faces.deepl_node PROPERTIES LABELS integration TIMEOUT 600 SKIP_RETURN_CODE 77)
add_test(NAME faces.openai_node
  COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/openai_node/run.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
set_tests_properties(faces.openai_node PROPERTIES LABELS integration TIMEOUT 600 SKIP_RETURN_CODE 77)

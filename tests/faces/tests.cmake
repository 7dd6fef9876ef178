# The faces' clients: real client libraries of the APIs `ordo serve` answers, driven against the
# real binary by node_client.sh. deepl-node (DeepL's official Node.js client,
# tests/faces/deepl_node/) calls the DeepL API v2 routes, openai (OpenAI's, tests/faces/openai_node/)
# the audio routes; each skipped (77) only where its node_modules are not installed (tools/test.sh
# runs `npm ci --prefix tests/faces/<face>`).
set(ORDO_NODE_CLIENT bash ${CMAKE_CURRENT_LIST_DIR}/node_client.sh ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR})
add_test(NAME faces.deepl_node
  COMMAND ${ORDO_NODE_CLIENT} deepl_node deepl-node "k-deepl-node name=deepl-node daily_char_limit=100000000"
          ${CMAKE_SOURCE_DIR}/models/en-de)
set_tests_properties(faces.deepl_node PROPERTIES LABELS integration TIMEOUT 600 SKIP_RETURN_CODE 77)
add_test(NAME faces.openai_node
  COMMAND ${ORDO_NODE_CLIENT} openai_node openai "k-openai-node name=openai-node"
          ${CMAKE_SOURCE_DIR}/tests/data/hf/whisper ${CMAKE_SOURCE_DIR}/models/en-de)
set_tests_properties(faces.openai_node PROPERTIES LABELS integration TIMEOUT 600 SKIP_RETURN_CODE 77)

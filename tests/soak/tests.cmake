# The soak script (tools/serve/soak.sh: ordo-serve-load --mix paced at 70 % of the measured
# capacity, /proc sampling into a CSV, ordo-plot-csv's pictures) on the real binary for half a
# minute: it must end with every request answered as expected (no 5xx, none dropped), the fds at
# rest as before and both pictures written. RSS is allowed 20 % here (the first minute grows the
# allocator's pools; the 20-minute run in docs/operations.md holds it to 5 % after 2 minutes).
add_test(NAME Soak.HalfAMinuteOfMixedLoadEndsClean
  COMMAND ${CMAKE_COMMAND} -E env ORDO_BUILD_DIR=${CMAKE_BINARY_DIR} WORK=${CMAKE_BINARY_DIR}/tests/soak-work
          CAPACITY_SECONDS=10 INTERVAL=5 WARMUP_MINUTES=0.1 RSS_GROWTH_LIMIT=20
          bash -c "bash ${CMAKE_SOURCE_DIR}/tools/serve/soak.sh --minutes 0.5 && test -s ${CMAKE_BINARY_DIR}/tests/soak-work/soak.png && test -s ${CMAKE_BINARY_DIR}/tests/soak-work/soak_latency.png")
set_tests_properties(Soak.HalfAMinuteOfMixedLoadEndsClean PROPERTIES TIMEOUT 300 LABELS slow)

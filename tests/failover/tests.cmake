# Failover behind HAProxy (configs/serving/haproxy.cfg, tools/serve/failover.sh): two replicas of
# the real binary on 127.0.0.1, paced mixed load through HAProxy, one replica killed (SIGKILL)
# and restarted, the other stopped (SIGTERM) and restarted: no client request may fail and no
# restarting replica may get a request before its /ready said 200. A short run of the script
# (docs/operations.md has the full one). Needs haproxy (tools/lib/deps.sh); skipped without it.
add_test(NAME Failover.KilledAndRestartedReplicasLoseNoRequest
  COMMAND ${CMAKE_COMMAND} -E env ORDO_BUILD_DIR=${CMAKE_BINARY_DIR} WORK=${CMAKE_BINARY_DIR}/tests/failover-work
          BASE_PORT=auto RATE=3 SECONDS_TOTAL=36 KILL_AT=8 TERM_AT=20
          bash ${CMAKE_SOURCE_DIR}/tools/serve/failover.sh)
set_tests_properties(Failover.KilledAndRestartedReplicasLoseNoRequest PROPERTIES TIMEOUT 400 LABELS slow
  SKIP_RETURN_CODE 77)

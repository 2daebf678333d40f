# CTest helpers for tests that need the test control plane (see README.md).
#
#   include(${PROJECT_SOURCE_DIR}/tests/testenv/testenv.cmake)
#
#   # One control plane shared by several tests: a fixture that starts and stops it.
#   phasescale_testenv_fixture(testenv)
#   add_test(NAME kube_watch COMMAND ${PHASESCALE_TESTENV_RUN} $<TARGET_FILE:kube_it> watch)
#   set_tests_properties(kube_watch PROPERTIES FIXTURES_REQUIRED testenv LABELS integration)
#
#   # A control plane of its own, started and stopped around one test.
#   phasescale_testenv_add_test(NAME kube_restart COMMAND $<TARGET_FILE:kube_it> restart)
#
# Tests run through run-in-testenv.sh / with-testenv.sh see KUBECONFIG and the
# PHASESCALE_TESTENV_* variables, and kubectl on the PATH. Every test that starts a control plane
# requires the fixture testenv-binaries (testenv.build, tests/CMakeLists.txt), as these do.

set(PHASESCALE_TESTENV_SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR})
set(PHASESCALE_TESTENV_DIR ${CMAKE_BINARY_DIR}/testenv
    CACHE PATH "State directory of the shared test control plane (ctest fixture)")
# Prefix for a test command that runs against the fixture's control plane.
set(PHASESCALE_TESTENV_RUN ${PHASESCALE_TESTENV_SOURCE_DIR}/run-in-testenv.sh ${PHASESCALE_TESTENV_DIR})

# phasescale_testenv_fixture(FIXTURE): tests FIXTURE_start and FIXTURE_stop (label
# integration) that start and stop the control plane in PHASESCALE_TESTENV_DIR. The
# control plane also stops if ctest itself goes away (PHASESCALE_TESTENV_OWNER_PID).
function(phasescale_testenv_fixture fixture)
    # start.sh must be ctest's own child for OWNER_PID=parent to name ctest.
    add_test(NAME ${fixture}_start
        COMMAND ${PHASESCALE_TESTENV_SOURCE_DIR}/start.sh ${PHASESCALE_TESTENV_DIR})
    # The binaries come from testenv.build (tests/CMakeLists.txt).
    set_tests_properties(${fixture}_start PROPERTIES
        FIXTURES_SETUP ${fixture} FIXTURES_REQUIRED testenv-binaries LABELS integration
        TIMEOUT 300 ENVIRONMENT PHASESCALE_TESTENV_OWNER_PID=parent)
    add_test(NAME ${fixture}_stop
        COMMAND ${PHASESCALE_TESTENV_SOURCE_DIR}/stop.sh ${PHASESCALE_TESTENV_DIR})
    set_tests_properties(${fixture}_stop PROPERTIES
        FIXTURES_CLEANUP ${fixture} LABELS integration)
endfunction()

# phasescale_testenv_add_test(NAME name COMMAND cmd...): a test (label integration) that
# runs cmd inside a control plane of its own (with-testenv.sh). Add fixtures of its own with
# set_property(TEST name APPEND PROPERTY FIXTURES_REQUIRED ...), which keeps testenv-binaries.
function(phasescale_testenv_add_test)
    cmake_parse_arguments(arg "" "NAME" "COMMAND" ${ARGN})
    add_test(NAME ${arg_NAME}
        COMMAND ${PHASESCALE_TESTENV_SOURCE_DIR}/with-testenv.sh ${arg_COMMAND})
    set_tests_properties(${arg_NAME} PROPERTIES LABELS integration
        FIXTURES_REQUIRED testenv-binaries)
endfunction()

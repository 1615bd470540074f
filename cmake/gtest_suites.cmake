# Run by ctest (a directory's TEST_INCLUDE_FILES, written by
# iowatch_add_test_suites in tests/unit/CMakeLists.txt): registers one ctest
# test per GoogleTest suite of a test binary, `<binary> --gtest_filter=Suite.*`.
# A process per test case cost more than the tests: an AddressSanitizer
# binary takes 0.09 s to start and 0.05 s to check for leaks at exit, and its
# ~1,400 cases ran in 398 s of CPU one by one against 159 s binary by binary.
# A suite keeps ctest's -R and its two cores busy without that cost.
#
# Inputs: IOWATCH_TEST_BINARY, IOWATCH_TEST_TARGET, IOWATCH_TEST_SUITES_FILE
# (the cached list, rewritten when the binary is newer), IOWATCH_TEST_ENVIRONMENT.
# The binary exits 77 when a test skipped itself and none failed
# (tests/unit/unit_test_main.cc): ctest then shows the suite as skipped.
if(NOT EXISTS "${IOWATCH_TEST_BINARY}")
  # As gtest_discover_tests does: a test that fails, named after what is missing.
  add_test("${IOWATCH_TEST_TARGET}_NOT_BUILT" "${IOWATCH_TEST_TARGET}_NOT_BUILT")
  return()
endif()
if(NOT EXISTS "${IOWATCH_TEST_SUITES_FILE}"
   OR "${IOWATCH_TEST_BINARY}" IS_NEWER_THAN "${IOWATCH_TEST_SUITES_FILE}")
  execute_process(COMMAND "${IOWATCH_TEST_BINARY}" --gtest_list_tests
                  OUTPUT_VARIABLE listing RESULT_VARIABLE listed ERROR_QUIET)
  set(content "")
  if(NOT listed EQUAL 0)
    # A binary that cannot list its tests fails as a test of its own, with its output.
    set(name "${IOWATCH_TEST_TARGET}.list_tests")
    string(APPEND content
           "add_test([==[${name}]==] [==[${IOWATCH_TEST_BINARY}]==] --gtest_list_tests)\n")
  else()
    string(REPLACE "\n" ";" lines "${listing}")
    foreach(line IN LISTS lines)
      # A suite's line is its name and a dot at the line's start ("Suite.", or
      # "Prefix/Suite.  # TypeParam = ..."); its tests follow, indented.
      if(line MATCHES "^([^ #][^ ]*)\\.( |$)")
        set(suite "${CMAKE_MATCH_1}")
        string(APPEND content
               "add_test([==[${suite}]==] [==[${IOWATCH_TEST_BINARY}]==] "
               "[==[--gtest_filter=${suite}.*]==])\n"
               "set_tests_properties([==[${suite}]==] PROPERTIES "
               "ENVIRONMENT [==[${IOWATCH_TEST_ENVIRONMENT}]==] TIMEOUT 300 "
               "SKIP_RETURN_CODE 77)\n")
      endif()
    endforeach()
  endif()
  file(WRITE "${IOWATCH_TEST_SUITES_FILE}" "${content}")
endif()
include("${IOWATCH_TEST_SUITES_FILE}")

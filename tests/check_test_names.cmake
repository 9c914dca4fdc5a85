# cmake -P check_test_names.cmake <tests dir>
# catch_discover_tests passes test names through CMake lists, where ';' separates items and an
# unbalanced '[' or ']' merges the names that follow. A test whose name holds one of them is
# silently merged into another, whose filter then matches nothing, and Catch2 v2 calls that a pass.
# So test names must not contain them.
file(GLOB_RECURSE sources "${CMAKE_ARGV3}/*.cpp")
set(bad 0)
foreach(source ${sources})
  file(STRINGS "${source}" lines REGEX "TEST_CASE\\(\"")
  foreach(line IN LISTS lines)
    string(REGEX MATCH "TEST_CASE\\(\"[^\"]*\"" name "${line}")
    if(name MATCHES "[][;]")
      message(NOTICE "${source}: test name with [, ] or ; breaks ctest registration: ${name}")
      math(EXPR bad "${bad} + 1")
    endif()
  endforeach()
endforeach()
if(bad GREATER 0)
  message(FATAL_ERROR "${bad} test name(s) to rename")
endif()
message(STATUS "all test names register cleanly")

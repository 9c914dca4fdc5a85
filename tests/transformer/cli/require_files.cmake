# Shared by run_cli.cmake and run_twice.cmake: each of FILES ('|' between paths or globs) must match
# at least one file; a line "no file PATTERN" is added to the caller's `failures` for each that does not.
function(gradformer_require_files files)
  string(REPLACE "|" ";" patterns "${files}")
  foreach(pattern IN LISTS patterns)
    file(GLOB found "${pattern}")
    if(NOT found)
      string(APPEND failures "no file ${pattern}\n")
    endif()
  endforeach()
  set(failures "${failures}" PARENT_SCOPE)
endfunction()

# cmake -DDIRS=<dir,dir> -P check_outputs.cmake
# A chapter's program, and the commands the chapter runs, write what they make under runs/ of the
# folder they run in (claims.h's output_path; gradformer's own runs/ folders), never beside it, so a
# program run from the repository's root leaves the repository as it was. This checks the folders a
# chapter's run tests ran in: nothing at their top but runs/ (and quick/, figures/, the folders the
# build made for the quick run and for the figures' refresh).
string(REPLACE "," ";" DIRS "${DIRS}")
set(strays "")
foreach(dir IN LISTS DIRS)
  file(GLOB entries LIST_DIRECTORIES true RELATIVE ${dir} ${dir}/* ${dir}/.*)
  foreach(entry IN LISTS entries)
    if(NOT entry MATCHES "^(runs|quick|figures)$")
      list(APPEND strays ${dir}/${entry})
    endif()
  endforeach()
endforeach()
if(strays)
  string(REPLACE ";" "\n  " strays "${strays}")
  message(FATAL_ERROR "written outside runs/ (write them through output_path, or under runs/):\n  ${strays}")
endif()

# Writes OUT, a header defining WAFER_GIT_DESCRIBE as `git describe` of SRC
# says it now, and touches it only when that changed: run at every build
# (not only at configure), so that a binary never reports the commit it was
# configured at rather than the one it was built from.
#   cmake -DSRC=<source dir> -DOUT=<header> -P git_describe.cmake
set(describe "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --dirty --tags
                  WORKING_DIRECTORY ${SRC}
                  OUTPUT_VARIABLE out OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0 AND out)
    set(describe "${out}")
  endif()
endif()
set(text "#define WAFER_GIT_DESCRIBE \"${describe}\"\n")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()

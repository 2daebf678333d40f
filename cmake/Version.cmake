# phasescale's version for `--version` and the operator's phasescale_build_info: the project's
# VERSION plus, in a git checkout, the commit it was configured at ("unknown" elsewhere, e.g. a
# source tarball or no git). One generated header, <phasescale/version.hpp>, through the
# interface target phasescale::version. A commit reconfigures the build (the reflog of HEAD is a
# configure dependency), so the revision follows the checkout.
set(PHASESCALE_REVISION "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  # Only a checkout of phasescale itself: a tarball unpacked inside another repository is not.
  execute_process(
    COMMAND ${GIT_EXECUTABLE} -C ${PROJECT_SOURCE_DIR} rev-parse --show-toplevel
    OUTPUT_VARIABLE top OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  execute_process(
    COMMAND ${GIT_EXECUTABLE} -C ${PROJECT_SOURCE_DIR} rev-parse --short=12 HEAD
    OUTPUT_VARIABLE revision OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE failed ERROR_QUIET)
  file(REAL_PATH "${PROJECT_SOURCE_DIR}" source_dir)
  if(top)
    file(REAL_PATH "${top}" top)
  endif()
  if(NOT failed AND revision AND top STREQUAL source_dir)
    set(PHASESCALE_REVISION ${revision})
    execute_process(
      COMMAND ${GIT_EXECUTABLE} -C ${PROJECT_SOURCE_DIR} rev-parse --path-format=absolute
              --git-path logs/HEAD
      OUTPUT_VARIABLE head_log OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(head_log AND EXISTS ${head_log})
      set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
                   ${head_log})
    endif()
  endif()
endif()

set(PHASESCALE_VERSION_DIR ${PROJECT_BINARY_DIR}/generated/version)
configure_file(${CMAKE_CURRENT_LIST_DIR}/version.hpp.in
               ${PHASESCALE_VERSION_DIR}/phasescale/version.hpp @ONLY)
add_library(phasescale_version INTERFACE)
add_library(phasescale::version ALIAS phasescale_version)
target_include_directories(phasescale_version INTERFACE ${PHASESCALE_VERSION_DIR})
message(STATUS "phasescale ${PROJECT_VERSION}, revision ${PHASESCALE_REVISION}")

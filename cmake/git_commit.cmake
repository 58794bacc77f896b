# SPDX-License-Identifier: GPL-3.0-or-later
# Writes OUTPUT, a header defining TS_GIT_COMMIT: the checkout's commit (12 hex digits, with "+" when
# tracked files differ from it), or "unknown" outside a checkout. Run at every build
# (CMakeLists.txt, target ts_git_commit); the file is rewritten only when the text changes, so only
# what includes it recompiles, and only then.
#   cmake -DSOURCE_DIR=... -DOUTPUT=... -P git_commit.cmake
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE result)
if(NOT result EQUAL 0 OR commit STREQUAL "")
  set(commit unknown)
else()
  execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE changes ERROR_QUIET RESULT_VARIABLE result)
  if(result EQUAL 0 AND NOT changes STREQUAL "")
    string(APPEND commit "+")
  endif()
endif()
set(text "// Written by cmake/git_commit.cmake at build time.\n#define TS_GIT_COMMIT \"${commit}\"\n")
set(old "")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUTPUT} "${text}")
endif()

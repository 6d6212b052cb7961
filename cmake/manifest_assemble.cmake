# cmake -DHEAD=<file> -DFRAGMENTS=<a.yaml|b.yaml|...> -DOUT=<file> -P manifest_assemble.cmake
#
# Writes the default manifest: HEAD as it is (it ends with `plugins:`), then
# each fragment in the order given. A fragment is a plugin folder's
# manifest.yaml: its leading lines that start with '#' at column 0 are notes
# for that file and are left out; the rest is its entry, indented under
# `plugins:`. OUT is rewritten only when its text changes (else touched).
file(READ "${HEAD}" text)
if(NOT text MATCHES "\nplugins:\n$")
  message(FATAL_ERROR "${HEAD}: must end with the line 'plugins:'")
endif()
string(REPLACE "|" ";" fragments "${FRAGMENTS}")
foreach(fragment IN LISTS fragments)
  file(READ "${fragment}" body)
  string(REGEX REPLACE "^(#[^\n]*\n)+" "" body "${body}")
  if(NOT body MATCHES "^  " OR body MATCHES "\n[^ \n]")
    message(FATAL_ERROR "${fragment}: after its leading comment, every line must be indented (an entry under 'plugins:')")
  endif()
  if(NOT body MATCHES "\n$")
    string(APPEND body "\n")
  endif()
  string(APPEND text "${body}")
endforeach()
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(old STREQUAL text)
  file(TOUCH "${OUT}") # up to date for the build tool; what embeds it is not rebuilt
else()
  file(WRITE "${OUT}" "${text}")
endif()

# critpath — cmake/relocatable.cmake: install paths that follow the installed file, not the
# configure-time prefix, so that `cmake --install --prefix P` and a moved install both work.
#
#   critpath_relocatable(<subdir> <anchor> <prefix> <out_prefix> <out_libdir> <out_includedir>)
#
# <out_prefix>: the way from a file installed in CMAKE_INSTALL_<subdir-value> (e.g. "bin" or
# "lib/pkgconfig") up to the install prefix, as <anchor>/.. (the installed file's own directory
# as its reader spells it: "$here" in a shell script, "${pcfiledir}" in a .pc file); the
# absolute CMAKE_INSTALL_PREFIX when <subdir> is absolute. <out_libdir>, <out_includedir>:
# CMAKE_INSTALL_LIBDIR / _INCLUDEDIR under <prefix> (how the reader names the prefix), or as
# they are when absolute.
function(critpath_relocatable subdir anchor prefix out_prefix out_libdir out_includedir)
  if(IS_ABSOLUTE "${subdir}")
    set(${out_prefix} "${CMAKE_INSTALL_PREFIX}" PARENT_SCOPE)
  else()
    file(RELATIVE_PATH up "/${subdir}" "/")
    string(REGEX REPLACE "/$" "" up "${up}")
    set(${out_prefix} "${anchor}/${up}" PARENT_SCOPE)
  endif()
  foreach(d LIBDIR INCLUDEDIR)
    if(IS_ABSOLUTE "${CMAKE_INSTALL_${d}}")
      set(value "${CMAKE_INSTALL_${d}}")
    else()
      set(value "${prefix}/${CMAKE_INSTALL_${d}}")
    endif()
    if(d STREQUAL "LIBDIR")
      set(${out_libdir} "${value}" PARENT_SCOPE)
    else()
      set(${out_includedir} "${value}" PARENT_SCOPE)
    endif()
  endforeach()
endfunction()

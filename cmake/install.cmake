# critpath — cmake/install.cmake: what `cmake --install` puts where (included by the top-level
# CMakeLists.txt after every target exists).
#
#   <prefix>/lib*/libcritpath.so*                   the tracer (preload it or link -lcritpath)
#   <prefix>/include/critpath.h                     the region API
#   <prefix>/bin/critpath-run, ...                  launcher and tools (tools/)
#   <prefix>/share/doc/critpath/*.md, examples/     documentation and the bundled example
#   <prefix>/lib*/cmake/critpath/                   find_package(critpath) -> critpath::critpath
#   <prefix>/lib*/pkgconfig/critpath.pc             pkg-config --cflags --libs critpath
#
# The test yield shim, the tests and the benchmarks are not installed.
include(CMakePackageConfigHelpers)

set(CRITPATH_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/critpath
    CACHE STRING "Where critpathConfig.cmake is installed, relative to the prefix")
set(CRITPATH_INSTALL_PKGCONFIGDIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig
    CACHE STRING "Where critpath.pc is installed, relative to the prefix")

# --- Library and header --------------------------------------------------------------------------
install(TARGETS critpath EXPORT critpathTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT devel)
install(FILES ${PROJECT_SOURCE_DIR}/include/critpath.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT devel)

# --- Tools -------------------------------------------------------------------------------------
# tools/CMakeLists.txt lists its scripts in CRITPATH_TOOL_SCRIPTS (names relative to tools/).
foreach(script ${CRITPATH_TOOL_SCRIPTS})
  install(PROGRAMS ${PROJECT_SOURCE_DIR}/tools/${script}
    DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
endforeach()

# --- Documentation and example -----------------------------------------------------------------
file(GLOB CRITPATH_DOC_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${CRITPATH_DOC_FILES} ${PROJECT_SOURCE_DIR}/README.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT doc OPTIONAL)
install(FILES ${PROJECT_SOURCE_DIR}/examples/jacobi_imbalance.c
  DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples COMPONENT doc OPTIONAL)

# --- CMake package: find_package(critpath) -> critpath::critpath ---------------------------------
install(EXPORT critpathTargets NAMESPACE critpath::
  DESTINATION ${CRITPATH_INSTALL_CMAKEDIR} COMPONENT devel)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/critpathConfig.cmake.in
  ${CMAKE_BINARY_DIR}/cmake/critpathConfig.cmake
  INSTALL_DESTINATION ${CRITPATH_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_DOCDIR)
# 0.x releases: only the same minor version is compatible.
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/critpathConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/critpathConfig.cmake
              ${CMAKE_BINARY_DIR}/cmake/critpathConfigVersion.cmake
  DESTINATION ${CRITPATH_INSTALL_CMAKEDIR} COMPONENT devel)

# --- pkg-config ----------------------------------------------------------------------------------
# Relocatable: the prefix is derived from the .pc file's own location (${pcfiledir}), so the
# file is right for any `cmake --install --prefix`.
critpath_relocatable("${CRITPATH_INSTALL_PKGCONFIGDIR}" "\${pcfiledir}" "\${prefix}" CRITPATH_PC_PREFIX
                     CRITPATH_PC_LIBDIR CRITPATH_PC_INCLUDEDIR)
# The MPI the library was built against, by its pkg-config name (Debian ships both).
if(CRITPATH_MPI STREQUAL "openmpi")
  set(CRITPATH_PC_MPI ompi-c)
else()
  set(CRITPATH_PC_MPI mpich)
endif()
configure_file(${CMAKE_CURRENT_LIST_DIR}/critpath.pc.in ${CMAKE_BINARY_DIR}/cmake/critpath.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/cmake/critpath.pc
  DESTINATION ${CRITPATH_INSTALL_PKGCONFIGDIR} COMPONENT devel)

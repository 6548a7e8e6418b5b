# Debian packages: `cpack -G DEB` in the build directory (after the build)
# makes one package per install component (scripts/check-package.sh):
#
#   runtime  libforkless<SOVERSION>  the shared library, with its SONAME link
#   dev      libforkless-dev         header, libforkless.so link, libforkless.a,
#                                    forkless.pc, the CMake package files, the
#                                    section 3 manual pages
#   command  forkless                the forkless program, its bench helpers,
#                                    bash completion, forkless(1)
#
# An install() rule without COMPONENT belongs to "command"
# (CMAKE_INSTALL_DEFAULT_COMPONENT_NAME, set before the subdirectories), so
# a file that nobody assigned still lands in a package. Every component
# installed is packaged: CPACK_COMPONENTS_ALL is left to CPack.
# Dependencies on libc and the like come from dpkg-shlibdeps.

get_target_property(fl_soversion forkless_shared SOVERSION)

set(CPACK_PACKAGE_NAME forkless)
set(CPACK_PACKAGE_VENDOR "forkless maintainers")
set(CPACK_PACKAGE_CONTACT "forkless maintainers <maintainers@forkless.invalid>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
# No CPACK_PACKAGE_DESCRIPTION_SUMMARY: CPackDeb would put it first in
# every package's Description; each component's description below starts
# with its own summary line instead.
set(CPACK_PACKAGE_HOMEPAGE_URL "https://forkless.invalid/")
set(CPACK_RESOURCE_FILE_README ${PROJECT_SOURCE_DIR}/README.md)

set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# Packages hold the files as installed for /usr (DESTDIR staging), so that
# forkless.pc's prefix is /usr, not the staging directory.
set(CPACK_SET_DESTDIR ON)
set(CPACK_INSTALL_PREFIX /usr)

set(CPACK_DEBIAN_PACKAGE_MAINTAINER "forkless maintainers <maintainers@forkless.invalid>")
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE ${CPACK_PACKAGE_HOMEPAGE_URL})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Inter-component dependencies (CPACK_COMPONENT_<C>_DEPENDS) become
# Depends: with the exact version.
set(CPACK_DEBIAN_ENABLE_COMPONENT_DEPENDS ON)

set(CPACK_COMPONENTS_GROUPING IGNORE)

set(CPACK_COMPONENT_RUNTIME_DISPLAY_NAME "forkless shared library")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION
  "The shared library libforkless.so.${fl_soversion}.")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libforkless${fl_soversion})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
# A shlibs file in the package of a shared library (the runtime one), for
# dpkg-shlibdeps of the packages built against it.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION
  "Start programs on Linux without fork(): shared library
forkless starts programs without fork(): clone(CLONE_VM|CLONE_VFORK), a
clean child (default signals, only fds 0-2 open) and exact errors.

This package holds the shared library.")

set(CPACK_COMPONENT_DEV_DISPLAY_NAME "forkless development files")
set(CPACK_COMPONENT_DEV_DEPENDS runtime)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libforkless-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_DESCRIPTION
  "Start programs on Linux: development files
forkless starts programs without fork(): clone(CLONE_VM|CLONE_VFORK), a
clean child (default signals, only fds 0-2 open) and exact errors.

This package holds the header forkless.h, the static library, the
pkg-config file and the CMake package (find_package(forkless)).")

set(CPACK_COMPONENT_COMMAND_DISPLAY_NAME "the forkless command")
set(CPACK_DEBIAN_COMMAND_PACKAGE_NAME forkless)
set(CPACK_DEBIAN_COMMAND_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_COMMAND_DESCRIPTION
  "Run programs and pipelines without fork(), with exact errors
forkless run does in one process what env -C -i, timeout, prlimit, setsid,
unshare, setpriv, taskset, nice and ionice do together; forkless pipe runs
a pipeline without a shell; forkless bench measures process creation.

The command is linked statically against the library.")

# Stripped, as Debian ships binaries (the build tree keeps the symbols).
set(CPACK_STRIP_FILES ON)
# The shared library's package runs ldconfig through a trigger, as
# debhelper's packages do.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/deb-runtime/triggers "activate-noawait ldconfig\n")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${CMAKE_CURRENT_BINARY_DIR}/deb-runtime/triggers)

# The bench's tiny target is static on purpose: its exec is the floor that
# the spawn benches measure against.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/deb-command/forkless
  "forkless: statically-linked-binary [usr/libexec/forkless/tiny]\n")
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/deb-command/forkless
  DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides COMPONENT command)

# Each package's /usr/share/doc/PACKAGE/changelog.gz, from CHANGELOG.md.
add_custom_command(OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/changelog.gz
  COMMAND gzip -9n -c ${PROJECT_SOURCE_DIR}/CHANGELOG.md > ${CMAKE_CURRENT_BINARY_DIR}/changelog.gz
  DEPENDS ${PROJECT_SOURCE_DIR}/CHANGELOG.md VERBATIM)
add_custom_target(fl_changelog ALL DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/changelog.gz)
foreach(pair "runtime;libforkless${fl_soversion}" "dev;libforkless-dev" "command;forkless")
  list(GET pair 0 component)
  list(GET pair 1 package)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/changelog.gz
    DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${package} COMPONENT ${component})
endforeach()

include(CPack)

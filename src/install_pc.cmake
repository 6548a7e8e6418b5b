# Run at install time, by `cmake --install` and by cpack (see
# src/CMakeLists.txt, which sets fl_pc_in and fl_pc_out just before):
# writes forkless.pc from forkless.pc.configured with this install's prefix.
file(READ "${fl_pc_in}" fl_pc)
string(REGEX REPLACE "(^|\n)prefix=[^\n]*" "\\1prefix=${CMAKE_INSTALL_PREFIX}" fl_pc "${fl_pc}")
file(WRITE "${fl_pc_out}" "${fl_pc}")

"""Cross toolchains: one per arch x compiler of the catalogue (model.py), whether this machine can use them
(probing.py), and the files `isaforge toolchain write` generates for them from isa.toml, each of its own renderer:
Meson cross files (meson_files.py), CMake toolchain files (cmake_files.py) and Conan host profiles with their QEMU
machine files (conan_profiles.py); generated.py says which files are theirs. The tests check the checked-in copies
under toolchains/ are up to date.
"""

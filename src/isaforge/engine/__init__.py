"""An engine's kernel libraries and dispatch, generated from its own catalogue (docs/engines.md).

enginegen.py (next to this package) is the command Meson, CMake and Conan run; the modules here are its parts, each
of one job: the model (model.py), reading engine.toml (load.py, declared.py, toml_fields.py, sources.py), the kernel
tree and its checks (kernels.py, checks.py), what the compiler builds (compiler.py, plan.py), and the renderers of
the build's library lines, the C header, the dispatch tables and the manifest (build_lines.py, c_header.py,
c_dispatch.py, manifest.py), written all or nothing by generate.py. Standard library only, like codegen.py: an
installed prefix or a Conan package runs them as they are.
"""

"""The CI matrix of ci/matrix.toml: cells of target × compiler × build type, each with the QEMU CPU models its tests
run on, and the local runner `isaforge matrix run` and the GitHub workflow made from it.

- definition: ci/matrix.toml parsed and validated against the catalogue (Matrix, Cell, BuildType).
- plan: which cells `--only` selects, and whether this machine can run one.
- run: build and test cells (pytest with JUnit XML per cell), with a live status line.
- results: outcomes per cell and CPU model, read from the JUnit XML.
- report: the per-cell lines, the summary table and the closing line.
- github: .github/workflows/cross.yml.
- plugin: the pytest plugin a cell's run loads (`-p isaforge.matrix.plugin --matrix-cell NAME`).
"""

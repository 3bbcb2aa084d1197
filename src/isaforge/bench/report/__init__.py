"""What the bench says, from results alone (nothing here runs a tool): libisaforge's figures, goals and markdown
(results, goals, libisaforge, figures), the plans' and quantized plans' sections (plans, quantized), the side by
side (sidebyside) and an engine's hot loops (engine)."""

# How each figure is measured: docs/bench.md, beside docs/performance.md where `make bench` writes the report.
METHOD = "bench.md"

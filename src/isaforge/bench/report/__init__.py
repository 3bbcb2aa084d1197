"""What the bench says, from results alone (nothing here runs a tool): libisaforge's figures, goals and markdown
(results, goals, libisaforge, figures), the plans' and quantized plans' sections (plans, quantized), the side by
side (sidebyside) and an engine's hot loops (engine)."""

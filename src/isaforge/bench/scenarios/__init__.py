"""What the bench runs: GEMM shapes, libisaforge's counted GEMMs and plans (gemms), its quantized plans (qplans), the
side by side with the peer libraries and their harnesses (sidebyside, peers), and an engine's kernels (engine)."""

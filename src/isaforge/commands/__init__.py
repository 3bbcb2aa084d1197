"""Subcommands of `isaforge`; each is registered in isaforge.cli.SUBCOMMANDS."""

"""Per-paper experiment definitions and the numbers each paper reports, for the chapter notebooks."""

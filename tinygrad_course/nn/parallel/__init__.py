"""`tc.nn.parallel`: reserved for data-parallel wrappers (none yet)."""

"""ptoc: compile PTO tile kernels written in Python and run them on a bit-exact model."""

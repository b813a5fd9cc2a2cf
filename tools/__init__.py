"""Developer tools of ptoc (run from a checkout; not part of the installed package)."""

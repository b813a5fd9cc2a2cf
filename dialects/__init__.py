"""ptoc.dialects"""

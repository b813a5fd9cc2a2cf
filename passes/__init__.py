"""ptoc.passes"""

"""The PTO target: instruction catalog, numpy semantics, programs, text and binary forms.

This floor imports only the standard library, numpy and ml_dtypes.
"""

"""ptoc's runner of the ISA authors' conformance tests (AVS, ``tests/asl`` of pto-spec).

``python -m tools.avs --spec /path/to/pto-spec`` parses each test file
(:mod:`.syntax`), interprets it (:mod:`.interp`) with the ASL model functions it calls
bound to ptoc (:mod:`.model`), and reports per family (:mod:`.runner`). See
``docs/conformance.md``.
"""

"""ptoc.passes: the compiler passes, one subpackage per pass, in pipeline order.

``lower_compound`` (compound ``tile`` ops -> direct ones), ``legalize`` (``tile`` ->
``pto``), ``allocate`` (schedule, hands, refs, GPRs) and ``emit`` (``pto`` -> ``Program``);
beside them the shared infrastructure: ``pipeline`` (``compile_module``), ``stages``,
``universe`` (the ``xdsl-opt`` entry point), ``diagnostics``, ``geometry``, ``validate``
and ``execute``.
"""

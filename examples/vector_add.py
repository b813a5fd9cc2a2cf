"""Vector add on four PEs: each PE adds its own 8-row slice of the tensors.

``pt.pe()`` is the PE index; in a load or store offset it becomes a per-PE base
address (PE p reads rows 8p .. 8p+7), so all four PEs run the same bundles.

    ptoc verify examples/vector_add.py::vector_add
"""

import ptoc
import ptoc.lang as pt

ROWS, COLS, PES = 32, 64, 4
PER_PE = ROWS // PES  # rows each PE handles

Vec = ptoc.Tensor[ptoc.fp32, ROWS, COLS]


@ptoc.kernel(pes=PES)
def vector_add(x: Vec, y: Vec, out: Vec):
    rows = (pt.pe() * PER_PE, PER_PE)  # this PE's slice
    pt.store(out, pt.load(x, rows=rows) + pt.load(y, rows=rows), rows=rows)

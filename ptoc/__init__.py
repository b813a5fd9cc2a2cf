"""ptoc: compile PTO tile kernels written in Python and run them on a bit-exact model.

    import ptoc
    import ptoc.lang as pt

    @ptoc.kernel
    def softmax(x: ptoc.Tensor[ptoc.fp32, 8, 64], out: ptoc.Tensor[ptoc.fp32, 8, 64]):
        t = pt.load(x)
        e = pt.exp(t - pt.row_max(t))
        pt.store(out, e / pt.row_sum(e))

    prog = ptoc.compile(softmax)        # -> ptoc.Program: .asm(), .encode(), .stats()
    ptoc.verify(softmax, x=x)           # machine == reference, bit for bit
    ptoc.report(softmax, "s.html")      # one HTML page: timeline, graph, bundles, stages

The compiler and the executor are imported on first use, so ``import ptoc`` and the
assembler commands stay fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ptoc.backend.errors import AsmError, DecodeError, Error
from ptoc.backend.target import MachineConfig
from ptoc.runtime.faults import (
    BundleControlFault,
    IllegalInstructionFault,
    MachineFault,
    TileAllocationFault,
    TileLegalityFault,
)

from .dtypes import DTYPES, DType
from .errors import (
    InputError,
    KernelError,
    OutputError,
    ReferenceFault,
    ToleranceError,
    VerifyError,
)
from .kernel import Kernel, kernel
from .tensor import Scalar, ScalarSpec, Tensor, TensorSpec

# every catalog DataType by its ptoc name (generated from the catalog: see dtypes.py)
fp64, fp32, tf32, hf32 = DTYPES["fp64"], DTYPES["fp32"], DTYPES["tf32"], DTYPES["hf32"]
fp16, bf16, hif8 = DTYPES["fp16"], DTYPES["bf16"], DTYPES["hif8"]
e4m3, e5m2, e3m2, e2m3 = DTYPES["e4m3"], DTYPES["e5m2"], DTYPES["e3m2"], DTYPES["e2m3"]
e2m1x2, e1m2x2, e8m0, hif4x2 = (
    DTYPES["e2m1x2"],
    DTYPES["e1m2x2"],
    DTYPES["e8m0"],
    DTYPES["hif4x2"],
)
s64, s32, s16, s8, s4x2 = (
    DTYPES["s64"],
    DTYPES["s32"],
    DTYPES["s16"],
    DTYPES["s8"],
    DTYPES["s4x2"],
)
u64, u32, u16, u8, u4x2 = (
    DTYPES["u64"],
    DTYPES["u32"],
    DTYPES["u16"],
    DTYPES["u8"],
    DTYPES["u4x2"],
)
pred = DTYPES["pred"]

#: lazily imported names -> their module (these pull in xDSL and the compiler)
_LAZY = {
    "compile": "ptoc.driver:compile_kernel",
    "CompileError": "ptoc.errors",
    "STAGES": "ptoc.driver",
    "Program": "ptoc.program",
    "Stats": "ptoc.program",
    "run": "ptoc.execute",
    "reference": "ptoc.execute",
    "verify": "ptoc.execute",
    "report": "ptoc.reporting",
    "Outputs": "ptoc.execute",
    "lang": "ptoc.lang",
}

if TYPE_CHECKING:
    from . import lang
    from .driver import STAGES
    from .driver import compile_kernel as compile
    from .errors import CompileError
    from .execute import Outputs, reference, run, verify
    from .program import Program, Stats
    from .reporting import report


def __getattr__(name: str) -> Any:
    where = _LAZY.get(name)
    if where is None:
        raise AttributeError(f"module 'ptoc' has no attribute {name!r}")
    module, _, attr = where.partition(":")  # "module:attribute" when the names differ
    mod = importlib.import_module(module)
    value = mod if name == "lang" else getattr(mod, attr or name)
    globals()[name] = value
    return value


__all__ = [
    "STAGES", "AsmError", "BundleControlFault", "CompileError", "DType", "DecodeError",
    "Error", "IllegalInstructionFault", "InputError", "Kernel", "KernelError", "MachineConfig",
    "MachineFault", "OutputError", "Outputs", "Program", "ReferenceFault", "Scalar",
    "ScalarSpec", "Stats", "Tensor", "TensorSpec", "TileAllocationFault", "TileLegalityFault",
    "ToleranceError", "VerifyError",
    "bf16", "compile", "e1m2x2", "e2m1x2", "e2m3", "e3m2", "e4m3", "e5m2", "e8m0", "fp16",
    "fp32", "fp64", "hf32", "hif4x2", "hif8", "kernel", "lang", "pred", "reference", "report",
    "run", "s4x2", "s8", "s16", "s32", "s64", "tf32", "u4x2", "u8", "u16", "u32", "u64",
    "verify",
]  # fmt: skip

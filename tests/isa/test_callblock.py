"""The CPython entry of the compiled runners (``callblock.c``): built where the
interpreter's headers and a C compiler exist, it only marshals a call into the certified
``arith.c`` block entries, so a call through it writes the same results and answers the
same packed status as the ctypes call; without it the runners keep the ctypes route,
with the same tiles, queues and status."""

from __future__ import annotations

import ctypes
import shutil
import sysconfig
import textwrap
from pathlib import Path

import numpy as np
import pytest

from ptoc.backend.asm import parse
from ptoc.backend.isa.datatypes import DataType
from ptoc.backend.isa.semantics import arith_kernels as ak
from ptoc.backend.isa.semantics import compiled
from ptoc.runtime import Machine, MachineConfig
from ptoc.runtime.ops import native

HAVE_CC = shutil.which(compiled._compiler()[0]) is not None
HAVE_HEADERS = (Path(sysconfig.get_paths().get("include") or "") / "Python.h").exists()


@pytest.fixture(scope="module")
def call():  # type: ignore[no-untyped-def]
    ext = compiled.extension("callblock")
    if ext is None:
        buildable = HAVE_CC and HAVE_HEADERS and compiled.enabled()
        assert not buildable, compiled.status("callblock")
        pytest.skip(f"no extension here: {compiled.status('callblock')}")
    if ak.block_entries() is None:
        pytest.skip("no compiled arith kernel here")
    return ext.call


def test_the_extension_is_built_where_headers_and_a_compiler_exist() -> None:
    ext = compiled.extension("callblock")
    assert (ext is not None) == (HAVE_CC and HAVE_HEADERS and compiled.enabled())


@pytest.mark.parametrize("op", ["add", "div", "max"])
def test_a_call_through_the_extension_is_the_ctypes_call(call, op: str) -> None:  # type: ignore[no-untyped-def]
    entries = ak.block_entries()
    assert entries is not None
    kernel = ak.compiled_arith()
    rng = np.random.default_rng(3)
    raw = rng.integers(0, 1 << 32, (2, 4, 3, 8), dtype=np.uint64).astype(np.uint32)
    x, y = raw.view(np.float32)  # every binade, NaN payloads, infinities, +-0
    strides = (24, 8, 1)
    plan = ak.ArithPlan(kernel, op, DataType.FP32, (4, 3, 8), strides, strides, strides)
    outs, packs, statuses = [], [], []
    for through in ("ctypes", "extension"):
        z = np.full((4, 3, 8), 7, np.float32)
        status = np.zeros(4, np.uint8)
        args = ak.arg_block(plan)
        args[4] = ak.writable_address(status)
        if through == "ctypes":
            args[1], args[2], args[3] = ak.address(x), ak.address(y), ak.writable_address(z)
            packed = entries[0](args)
        else:
            entry_at = ctypes.cast(entries[0], ctypes.c_void_p).value
            packed = call(entry_at, ctypes.addressof(args), ak.address(x), ak.address(y),
                          ak.writable_address(z))  # fmt: skip
        outs.append(z.view(np.uint32).copy())
        packs.append(packed)
        statuses.append(status.tolist())
    assert np.array_equal(outs[0], outs[1])
    assert packs[0] == packs[1] and statuses[0] == statuses[1]
    if op != "max":  # raw operands raise flags: the status words were written
        assert any(statuses[0])


def test_the_extension_refuses_bad_calls(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError):
        call(1, 2, 3)
    with pytest.raises(ValueError):
        call(0, 0, 0, 0, 0)


def _tiles(monkeypatch, with_extension: bool):  # type: ignore[no-untyped-def]
    """The machine after TADD, TMAX and a row sum of raw FP32 tiles, with the runners'
    call through the extension or through ctypes."""
    if not with_extension:
        monkeypatch.setattr(native, "_caller", lambda: None)
    text = """\
        BSTART.TLOAD FP32
        C.B.DIMI 8, ->LB0
        C.B.DIMI 4, ->LB1
        B.IOR a0, s0
        B.IOT mask=1111, last, ->T<128B>
        BSTOP
        BSTART.TLOAD FP32
        C.B.DIMI 8, ->LB0
        C.B.DIMI 4, ->LB1
        B.IOR a1, s0
        B.IOT mask=1111, last, ->T<128B>
        BSTOP
        BSTART.VEC TADD, FP32
        C.B.DIMI 8, ->LB0
        C.B.DIMI 4, ->LB1
        B.IOT T#2, T#1, mask=1111, last, ->U<128B>
        BSTOP
        BSTART.VEC TMAX, FP32
        C.B.DIMI 8, ->LB0
        C.B.DIMI 4, ->LB1
        B.IOT U#1, T#1, mask=1111, last, ->U<128B>
        BSTOP
        BSTART.SFU TROWSUM, FP32
        C.B.DIMI 8, ->LB0
        C.B.DIMI 4, ->LB1
        B.IOT U#1, mask=1111, last, ->U<128B>
        BSTOP
        """
    program = parse(textwrap.dedent(text))
    raw = np.random.default_rng(9).integers(0, 1 << 32, 4096, dtype=np.uint64)
    snaps = []
    for _ in range(2):  # the first run prepares the plans, the second takes the runners
        m = Machine(MachineConfig(gm_size=1 << 16))
        m.load_gm(0, raw.astype(np.uint32))
        for pe in range(4):
            m.set_gpr("a0", pe * 128, pe=pe)
            m.set_gpr("a1", 4096 + pe * 128, pe=pe)
        m.set_gpr("s0", 32)
        m.run(program)
        snaps.append(m.snapshot())
    return snaps[1]


def test_the_runners_give_the_same_machine_with_or_without_the_extension(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    with_ext = _tiles(monkeypatch, True)
    without = _tiles(monkeypatch, False)
    assert with_ext == without

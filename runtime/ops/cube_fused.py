"""Fused forms (``engine.execute_untraced``) of the common CUBE bundles: the transport
load, the transport store and the plain matrix operation.

Speed only: each performs what the generic runner of :mod:`.cube` and ``engine.commit``
do on the common path -- source lookup, mask coverage, descriptor checks, capacity, the
GM probe, the computation, publication, status -- without the per-bundle context object
and without re-deriving facts that are static per bundle. Anything unusual (an empty
queue position, another source descriptor, a probe, allocation or semantic fault, a grid
launch recording its GM accesses) returns False before any effect, and the generic path
then raises whatever fault applies, in its order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ptoc.backend.isa import DataType, info
from ptoc.backend.isa import cube as isa_cube
from ptoc.backend.isa.cube import CubeLayout
from ptoc.backend.isa.fields import PAD_NULL
from ptoc.backend.isa.semantics import fpatr as sf
from ptoc.backend.isa.semantics import matmul as sm
from ptoc.backend.isa.semantics import matmul_kernels as kernels
from ptoc.backend.isa.semantics.arith_kernels import address, writable_address
from ptoc.backend.isa.semantics.core import SemanticError, to_bits
from ptoc.backend.isa.semantics.floatfmt import NX, OF, RNE

from ..alloc import Slot, template
from ..bundle import BundlePlan
from ..engine import (
    POOLED_BYTES,
    Fused,
    build_tile,
    fused_sources,
    geometry,
    gpr_words,
    or_status,
    pooled_payload,
    region,
)
from ..faults import MachineFault
from ..memory import Footprint, footprint, gather, scatter_plan
from ..payloads import PayloadPool
from ..state import MachineState
from ..tiles import Layout, Tile, tile_maker

_Geometry = tuple[tuple[int, ...], int, slice | list[int], object]

#: a matrix bundle's source descriptors, (:attr:`Tile.key`, capacity) in stream order
Signature = tuple[tuple[tuple[object, ...], int], ...]

#: how many source signatures one matrix bundle remembers (a loop body sees few)
MAX_SIGNATURES = 8


def never(state: MachineState, plan: BundlePlan) -> bool:
    """The fused form of a bundle that always takes the generic path."""
    return False


def _geometries(mask: int) -> Callable[[int], _Geometry]:
    """``engine.geometry`` of ``mask`` per machine size, kept by the runner."""
    known: dict[int, _Geometry] = {}

    def of(npes: int) -> _Geometry:
        g = known.get(npes)
        if g is None:
            g = known[npes] = geometry(mask, npes)
        return g

    return of


#: what a transport bundle's probe found for one set of B.IOR words: the footprint, the
#: stride words, and whether its rows are disjoint strided views of a dense memory
_Probe = tuple[Footprint, np.ndarray, bool]


class _Probes:
    """The GM probes (``memory.footprint``) of one transport bundle, by machine and B.IOR
    words: a probe is a function of them, so a bundle that moves the same rectangle
    again reuses it. Faulting probes are not kept (the generic path raises them)."""

    def __init__(self, name: str, dt: DataType, vr: int, vc: int, write: bool, stride: int):
        self.name, self.dt, self.vr, self.vc, self.write = name, dt, vr, vc, write
        self.stride = stride  # the omission default of the stride word
        self.row_bytes = vc * info(dt).carrier.itemsize
        self.known: dict[object, _Probe] = {}

    def probe(
        self, state: MachineState, plan: BundlePlan, pes: tuple[int, ...], p: int,
        pidx: slice | list[int], pkey: object,
    ) -> _Probe | None:  # fmt: skip
        """The probe of this execution, or None when it faults."""
        cfg = state.config
        ior = plan.ior
        if ior is None:
            key: object = (cfg.gm_size, cfg.pes)
        else:
            gpr = state.gpr
            key = (cfg.gm_size, cfg.pes, gpr[:, ior.sources[0]].tobytes(),
                   gpr[:, ior.sources[1]].tobytes())  # fmt: skip
        hit = self.known.get(key)
        if hit is not None:
            return hit
        base = gpr_words(state, plan, 0, 0, p, pidx, pkey)
        step = gpr_words(state, plan, 1, self.stride, p, pidx, pkey)
        try:
            fp = footprint(self.dt, base, step, self.vr, self.vc, cfg.gm_size, self.name,
                           self.write, pes)  # fmt: skip
        except MachineFault:
            return None
        dense = fp.dense
        views = (
            dense is not None
            and fp.nbytes == self.row_bytes // self.vc
            and all(s >= self.row_bytes or self.vr == 1 for _, s in dense)
        )
        out = (fp, step, views)
        if len(self.known) < 8:
            self.known[key] = out
        return out


def _storage_address(a: np.ndarray) -> int:
    """The address of a writable C-contiguous array (cheaper than ``ctypes.data``; a
    byte view, as ml_dtypes formats export no buffer)."""
    return writable_address(a.view(np.uint8))


def _dense_gm(state: MachineState) -> np.ndarray | None:
    """The global memory as one contiguous byte array, or None (a sparse memory)."""
    gm = state.gm
    return gm if isinstance(gm, np.ndarray) and gm.flags.c_contiguous else None


def _probed(
    state: MachineState, plan: BundlePlan, geo: Callable[[int], _Geometry], probes: _Probes
) -> tuple[tuple[int, ...], slice | list[int], Footprint, np.ndarray, bool] | None:
    """What a fused transport bundle needs before any effect: (PEs, their payload index,
    the probed footprint, the B.IOR strides, whether rows are strided views), or None
    when the generic path must run (a grid's access log, a PE the machine lacks, a
    footprint that faults)."""
    if state.access_log is not None:  # a grid launch records what it reads and writes
        return None
    npes = state.config.pes
    pes, p, pidx, pkey = geo(npes)
    if pes[-1] >= npes:
        return None
    got = probes.probe(state, plan, pes, p, pidx, pkey)
    if got is None:
        return None
    fp, step, views = got
    return pes, pidx, fp, step, views


def fused_load(
    plan: BundlePlan, name: str, dt: DataType, slot: Slot | str, vr: int, vc: int, pad: int,
    stride: int,
) -> Fused:  # fmt: skip
    """The fused CUBE transport load of ``vr`` x ``vc`` ``dt`` elements into ``slot``
    (padding ``pad``; ``stride``: the B.IOR stride's omission default)."""
    if isinstance(slot, str) or plan.source_pos:
        return never
    mask, hand = slot.mask, slot.hand
    geo = _geometries(mask)
    probes = _Probes(name, dt, vr, vc, False, stride)
    carrier, rows, cols = slot.carrier, slot.rows, slot.cols
    #: machine PEs -> the storage a new tile starts from (build_tile's padding and
    #: poison), read-only; kept when small
    starts: dict[int, np.ndarray] = {}
    make = tile_maker(dt, rows, cols, vr, vc, slot.layout, mask, slot.capacity, pad != PAD_NULL)
    start_bytes = rows * cols * carrier.itemsize  # per PE

    def start(npes: int, pes: tuple[int, ...]) -> np.ndarray:
        s = starts.get(npes)
        if s is None:
            s = template(dt, (npes, rows, cols), PAD_NULL).copy()
            if pad != PAD_NULL:
                s[list(pes)] = template(dt, (1, rows, cols), pad)
            s.flags.writeable = False
            if s.nbytes <= 1 << 16:
                starts[npes] = s
        return s.copy()

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        got = _probed(state, plan, geo, probes)
        if got is None:
            return False
        pes, pidx, fp, _, views = got
        gm = _dense_gm(state)
        if views and gm is not None:
            # each PE's rows copied straight from a strided view of the memory into
            # the new storage (gather, then build_tile, without the intermediate)
            assert fp.dense is not None
            npes, eb = state.config.pes, fp.nbytes
            if len(pes) == 1 and npes * start_bytes < POOLED_BYTES:
                # one PE, a small tile: the rows copied once into a pool's block, which
                # holds the padding and poison already (build_tile's storage)
                b, s = fp.dense[0]
                rows_view = np.ndarray((1, vr, vc), carrier, gm, b, (0, s, eb))
                payload, at = pooled_payload(slot, rows_view, pad, pes, npes)
            else:
                payload = start(npes, pes)
                for pe, (b, s) in zip(pes, fp.dense, strict=True):
                    payload[pe, :vr, :vc] = np.ndarray((vr, vc), carrier, gm, b, (s, eb))
                at = _storage_address(payload)  # a matrix bundle passes it to the kernel
                payload.flags.writeable = False
            tile = make(payload, 0, None, at)
        else:
            tile = build_tile(state, name, slot, gather(state.gm, fp, dt), pad, pes, pidx,
                              numbered=False)  # fmt: skip
        if not state.push_one(hand, tile):  # capacity: the generic path raises the fault
            return False
        tile.serial = state.next_serial()
        return True

    return fused


def fused_store(
    plan: BundlePlan, name: str, dt: DataType, layout: CubeLayout, vr: int, vc: int,
    stride: int,
) -> Fused:  # fmt: skip
    """The fused CUBE transport store of a fully defined ``vr`` x ``vc`` ``dt`` source of
    ``layout`` (``stride``: the B.IOR stride's omission default)."""
    if len(plan.source_pos) != 1:
        return never
    g = isa_cube.geometry(layout, dt, vr, vc)
    want = (dt, Layout.of_cube(layout), vr, vc, g.cols, g.rows, True)
    #: source capacity -> whether the descriptor is legal there (TileCubeDescriptorLegal)
    legal: dict[int, bool] = {}
    mask = plan.mask
    geo = _geometries(mask)
    probes = _Probes(name, dt, vr, vc, True, stride)
    carrier = info(dt).carrier

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        srcs = fused_sources(state, plan, mask)
        if srcs is None:
            return False
        t = srcs[0]
        if t.key != want:
            return False
        ok = legal.get(t.capacity)
        if ok is None:
            ok = isa_cube.shape_rule(t.capacity, layout, dt, vr, vc) is None
            if len(legal) < 16:
                legal[t.capacity] = ok
        if not ok:
            return False
        got = _probed(state, plan, geo, probes)
        if got is None:
            return False
        pes, pidx, fp, step, views = got
        written = state.gm_written  # (the memory's written-chunk record: gm_pool)
        gm = _dense_gm(state)
        if views and gm is not None:
            # scatter_plan's DenseWrites, applied in PE order, without building them or
            # copying a subset of the PEs' rows first
            assert fp.dense is not None
            payload, eb = t.payload, fp.nbytes
            for pe, (b, s) in zip(pes, fp.dense, strict=True):
                np.ndarray((vr, vc), carrier, gm, b, (s, eb))[...] = payload[pe, :vr, :vc]
                if written is not None:
                    written.rows(b, s, vr, vc * eb)
            return True
        mem = state.gm
        for w in scatter_plan(mem, fp, t.payload[pidx, :vr, :vc], step):
            w.apply(mem)
            if written is not None:
                w.record(written)
        return True

    return fused


def signature(tiles: Sequence[Tile]) -> Signature | None:
    """The descriptors a matrix bundle's checks read of its sources, or None when one is
    not fully defined by its descriptor (its definedness map must be read)."""
    out = []
    for t in tiles:
        k = t.key
        if not k[6]:
            return None
        out.append((k, t.capacity))
    return tuple(out)


class Accepted:
    """A source signature the generic runner accepted, with what the fused form needs
    to publish D for it: D's descriptor, a constructor of D tiles and the storage D
    starts from per machine size (see :meth:`MatrixForm.start`)."""

    __slots__ = ("make", "pools", "signature", "slot", "starts")

    def __init__(self, sig: Signature, slot: Slot) -> None:
        self.signature, self.slot = sig, slot
        # D's padding is Null (undefined), as build_tile publishes it
        self.make = tile_maker(slot.dtype, slot.rows, slot.cols, slot.valid_rows,
                               slot.valid_cols, slot.layout, slot.mask, slot.capacity,
                               False)  # fmt: skip
        self.starts: dict[int, np.ndarray] = {}
        #: machine PEs -> recycled storage for D without C (see :meth:`MatrixForm.fresh`)
        self.pools: dict[int, PayloadPool] = {}

    def matches(self, tiles: Sequence[Tile]) -> bool:
        """Whether ``tiles`` carry this signature (tuple comparisons: the enums in a
        descriptor compare by identity, where a dict lookup would hash them)."""
        for t, (key, capacity) in zip(tiles, self.signature, strict=True):
            if t.key != key or t.capacity != capacity:
                return False
        return True


class MatrixForm:
    """The static facts of a plain matrix bundle (Local A, B and, for the ACC forms, C;
    no scale, bias, vector or scalar parameter, no RowMax/GroupMax output) that its
    fused form needs, and the source signatures the generic runner accepted with the D
    destination each derived."""

    def __init__(
        self, a_type: DataType, b_type: DataType, mx: bool, f: sf.Fpatr,
        pos: dict[str, int], rmode: int, sat: bool,
    ) -> None:  # fmt: skip
        self.a_type, self.b_type, self.mx, self.f = a_type, b_type, mx, f
        self.a, self.b, self.c = pos["A"], pos["B"], pos.get("C")
        self.rmode, self.sat = rmode, sat
        #: the source signatures the generic runner accepted (a loop body sees few)
        self.accepted: list[Accepted] = []
        #: the FP16/BF16 route applies: ``matmul`` folds with the compiled
        #: ``kernels.fold_half`` (RNE, no scale) and B.FPATR post-processes nothing, so
        #: D is the fold (the kernel may still decline per PE, which the numpy path
        #: then settles)
        self.half = (
            a_type in _HALF and b_type in _HALF and not mx and rmode in (0, RNE)
            and f.pre_quant_mode == 0 and f.relu_mode == 0 and not f.row_max
            and not f.group_max
        )  # fmt: skip
        self.fp16 = (int(a_type == DataType.FP16), int(b_type == DataType.FP16))

    @staticmethod
    def start(
        got: Accepted, npes: int, pes: tuple[int, ...], c: np.ndarray | None
    ) -> np.ndarray:
        """A new (npes, Rows, Col) storage for D: build_tile's poison outside the valid
        regions and, in them, zeros or C's values (the kernel adds into them in place);
        the one without C is kept per machine size (read-only, copied)."""
        base = got.starts.get(npes) if c is None else None
        if base is None:
            slot = got.slot
            base = template(slot.dtype, (npes, slot.rows, slot.cols), PAD_NULL).copy()
            m = slot.valid_rows
            for q, pe in enumerate(pes):
                base[pe, :m] = 0 if c is None else c[q]
            if c is not None:
                return base
            base.flags.writeable = False
            if base.nbytes <= 1 << 16:
                got.starts[npes] = base
        return base.copy()

    @staticmethod
    def fresh(
        got: Accepted, npes: int, pes: tuple[int, ...]
    ) -> tuple[np.ndarray, np.ndarray, int]:
        """What :meth:`start` makes without C, in recycled storage (speed only): the
        read-only payload, a writable view of its storage and its address. A pool's
        block holds the poison and padding already; only D's valid rows are zeroed."""
        pool = got.pools.get(npes)
        if pool is None:
            base = MatrixForm.start(got, npes, pes, None)
            pool = got.pools[npes] = PayloadPool(base.shape, base.dtype, base, writable=True)
        payload, storage, at = pool.take_writable()
        m = got.slot.valid_rows
        for pe in pes:
            storage[pe, :m] = 0
        return payload, storage, at

    def accept(self, tiles: Sequence[Tile], d_slot: Slot) -> None:
        """Remember that the generic runner passed every check on sources of these
        descriptors and derived ``d_slot`` (the checks read nothing else of them)."""
        sig = signature(tiles)
        if sig is None or len(self.accepted) >= MAX_SIGNATURES or self.match(tiles):
            return
        self.accepted.append(Accepted(sig, d_slot))

    def match(self, tiles: Sequence[Tile]) -> Accepted | None:
        """The accepted signature ``tiles`` carry, or None."""
        for got in self.accepted:
            if got.matches(tiles):
                return got
        return None

    def products(
        self, av: np.ndarray, bv: np.ndarray, cv: np.ndarray | None, p: int, slot: Slot
    ) -> tuple[np.ndarray, np.ndarray]:
        """D (P, M, N) in ``slot``'s carrier and the status per PE: one
        :func:`~ptoc.backend.isa.semantics.matmul.matmul` per participating PE."""
        ds = []
        status = np.zeros(p, np.uint8)
        for q in range(p):
            r = sm.matmul(
                av[q], self.a_type, bv[q], self.b_type,
                acc=None if cv is None else cv[q],
                mx=self.mx, rmode=self.rmode, sat=self.sat, fpatr=self.f,
            )  # fmt: skip
            ds.append(r.d)
            status[q] = r.status
        d = np.stack(ds)
        if d.dtype != slot.carrier:
            d = d.astype(slot.carrier)
        return d, status

    def half_payload(
        self, a: Tile, b: Tile, c: Tile | None, npes: int, pes: tuple[int, ...],
        pidx: slice | list[int], pkey: object, got: Accepted,
    ) -> tuple[np.ndarray, np.ndarray, int] | None:  # fmt: skip
        """D's storage (npes, Rows, Col), its status per PE and their OR, computed by
        the compiled FP16/BF16 fold (``kernels.fold_half_by``: what ``matmul`` computes
        on this route) straight from the operands' storage into the new one; a PE whose
        fold the kernel declines gets :meth:`products`' result. None: no kernel (the
        caller takes :meth:`products`)."""
        kernel = kernels.compiled_half()
        if kernel is None:
            return None
        m, k = a.valid_rows, a.valid_cols
        n = b.valid_cols
        slot = got.slot
        if c is None:
            payload, storage, at = self.fresh(got, npes, pes)
        else:
            payload = storage = self.start(got, npes, pes, region(c, pidx, pkey))
            at = _storage_address(payload)
        pe_bytes = payload.strides[0]
        a16, b16 = self.fp16
        xa, xb = _rows_address(a), _rows_address(b)
        sa, sb = a.payload.strides[0], b.payload.strides[0]
        av = bv = None
        status = np.zeros(len(pes), np.uint8)
        seen = 0
        for q, pe in enumerate(pes):
            # a copy of a strided operand is held until the kernel has read it (its
            # address alone would not keep it alive: the next allocation could reuse it)
            held = []
            if xa:
                x = xa + pe * sa
            else:
                av = region(a, pidx, pkey) if av is None else av
                held.append(to_bits(av[q]))
                x = address(held[-1])
            if xb:
                y = xb + pe * sb
            else:
                bv = region(b, pidx, pkey) if bv is None else bv
                held.append(to_bits(bv[q]))
                y = address(held[-1])
            flags = kernel(x, a16, y, b16, at + pe * pe_bytes, m, n, k)
            if flags < 0:  # the route does not apply on this PE: the numpy path decides
                one = slice(q, q + 1)
                d, st = self.products(
                    region(a, pidx, pkey)[one], region(b, pidx, pkey)[one],
                    None if c is None else region(c, pidx, pkey)[one], 1, slot,
                )  # fmt: skip
                storage[pe, :m, :n] = d[0]
                word = int(st[0])
            else:
                word = (NX if flags & 1 else 0) | (OF | NX if flags & 2 else 0)
            status[q] = word
            seen |= word
        return payload, status, seen


_HALF = frozenset({DataType.FP16, DataType.BF16})


def _rows_address(t: Tile) -> int:
    """The storage address of ``t`` when each PE's valid region is one C-contiguous
    block at it (whole rows of a C-contiguous payload), else 0; the payload address is
    asked once per tile (:attr:`Tile.address`, -1: not contiguous)."""
    if t.valid_cols != t.cols and t.valid_rows > 1:
        return 0
    x = t.address
    if not x:
        pl = t.payload
        x = t.address = address(pl) if pl.flags.c_contiguous else -1
    return max(x, 0)


def fused_matrix(plan: BundlePlan, name: str, form: MatrixForm) -> Fused:
    """The fused form of a plain matrix bundle (:class:`MatrixForm`): it runs when its
    sources carry a signature the generic runner accepted."""
    mask = plan.mask
    geo = _geometries(mask)
    ia, ib, ic = form.a, form.b, form.c

    def fused(state: MachineState, plan: BundlePlan) -> bool:
        cfg = state.config
        pes, p, pidx, pkey = geo(cfg.pes)
        if pes[-1] >= cfg.pes:
            return False
        srcs = fused_sources(state, plan, mask)
        if srcs is None:
            return False
        accepted = form.match(srcs)
        if accepted is None:
            return False
        slot = accepted.slot
        a, b = srcs[ia], srcs[ib]
        c = None if ic is None else srcs[ic]
        try:
            got = None
            if form.half and slot.cols == b.valid_cols:  # D's rows are whole storage rows
                got = form.half_payload(a, b, c, cfg.pes, pes, pidx, pkey, accepted)
            if got is None:
                cv = None if c is None else region(c, pidx, pkey)
                d, st = form.products(region(a, pidx, pkey), region(b, pidx, pkey), cv, p,
                                      slot)  # fmt: skip
                tile = build_tile(state, name, slot, d, PAD_NULL, pes, pidx, numbered=False)
                seen = 1
            else:
                payload, st, seen = got
                payload.flags.writeable = False
                tile = accepted.make(payload, 0, None, 0)
        except (MachineFault, SemanticError):
            return False  # nothing has changed: the generic path raises it in order
        if not state.push_one(slot.hand, tile):  # capacity: the generic path faults
            return False
        tile.serial = state.next_serial()
        if seen:  # (OR-ing zeros changes nothing)
            or_status(state, st, pidx, p)
        return True

    return fused


__all__ = [
    "MAX_SIGNATURES",
    "Accepted",
    "MatrixForm",
    "Signature",
    "fused_load",
    "fused_matrix",
    "fused_store",
    "never",
    "signature",
]

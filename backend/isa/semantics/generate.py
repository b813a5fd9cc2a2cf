"""TCI, TTRI and THISTOGRAM: generated sequences, triangular masks, prefix histograms.

Authority: ASL ``asl/tile/model/execution/generation.asl`` (TCI, TTRI),
``asl/tile/model/execution/complex.asl`` (THISTOGRAM),
``asl/tile/model/legality/indexed-layout.asl`` (histogram filter rules),
``asl/block/model/dispatch/scalar-schema.asl`` (GPR value legality) and the
instruction contracts in ``asl/tile/irregular-and-complex/initialization/``.

GPR operands arrive as raw per-PE uint64 values (P,). B.IOR slots: TCI RegSrc0 = start,
RegSrc1 = direction; TTRI RegSrc0 = signed diagonal, RegSrc1 = orientation. Omitting
B.IOR is the executor's business (it passes zeros: start 0 ascending, diagonal 0 lower).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..datatypes import DataType, info
from .core import SemanticError, no_status

_D = DataType
TCI_DTYPES = frozenset({_D.S32, _D.S16, _D.U32, _D.U16})
TTRI_DTYPES = frozenset({_D.FP32, _D.FP16, _D.S32, _D.S16, _D.U32, _D.U16})
HISTOGRAM_SOURCE_DTYPES = frozenset({_D.U16, _D.U32})
#: TTRI diagonal domain, ``integer {-65535..65535}`` (SInt of the full 64-bit GPR).
DIAGONAL_LIMIT = 65535


def _words(gpr: np.ndarray) -> list[int]:
    """Raw per-PE GPR values as unsigned 64-bit Python ints."""
    return [int(v) & 0xFFFFFFFFFFFFFFFF for v in np.asarray(gpr).reshape(-1).tolist()]


def _flag_legal(gpr: np.ndarray, what: str) -> str | None:
    """A flag GPR must be exactly 0 or 1 as a full 64-bit unsigned value."""
    if any(v > 1 for v in _words(gpr)):
        return f"{what} must be exactly zero or one"
    return None


def tci_scalars_legal(direction_gpr: np.ndarray) -> str | None:
    """TCI preflight: the direction (RegSrc1) is exactly 0 (ascending) or 1 (descending)."""
    return _flag_legal(direction_gpr, "TCI direction")


#: generated tiles by (operation, DataType, shape, per-PE operands): a bundle run again
#: generates the same tile (each call returns its own copy)
_GENERATED: dict[tuple[object, ...], np.ndarray] = {}


def _generated(key: tuple[object, ...], make: Callable[[], np.ndarray]) -> np.ndarray:
    t = _GENERATED.get(key)
    if t is None:
        t = make()
        if t.nbytes <= 1 << 16:
            if len(_GENERATED) >= 256:
                _GENERATED.clear()
            _GENERATED[key] = t
    return t.copy()


def tci(
    dt: DataType, shape: tuple[int, int], start_gpr: np.ndarray, direction_gpr: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """TCI: one row ``dst[0, k] = start + k`` (ascending) or ``start - k`` (descending).

    ``shape`` is the destination valid shape and must be (1, ValidCol). The start is the
    low element-width bits of the GPR (higher bits are ignored); the sequence wraps modulo
    the element width. Returns ``(dst (P, 1, ValidCol), status)``.
    """
    dt = DataType(dt)
    if dt not in TCI_DTYPES:
        raise ValueError(f"TCI does not support {dt.name}")
    rows, cols = shape
    if rows != 1:
        raise ValueError("TCI destination ValidRow is one")
    rule = tci_scalars_legal(direction_gpr)
    if rule is not None:
        raise SemanticError(rule)
    ti = info(dt)
    mask = (1 << ti.bits) - 1
    starts = tuple(v & mask for v in _words(start_gpr))
    descs = tuple(v == 1 for v in _words(direction_gpr))

    def make() -> np.ndarray:
        start = np.array(starts, np.uint64)
        k = np.arange(cols, dtype=np.uint64)
        # uint64 arithmetic wraps modulo 2**64; masking then gives the element-width
        # modulo
        desc = np.array(descs, bool)
        seq = np.where(desc[:, None], start[:, None] - k, start[:, None] + k) & np.uint64(mask)
        unsigned = np.dtype(f"uint{ti.bits}")
        return seq.astype(unsigned).view(ti.carrier).reshape(len(starts), 1, cols)

    dst = _generated(("TCI", dt, cols, starts, descs), make)
    return dst, no_status(len(starts))


def ttri_scalars_legal(diagonal_gpr: np.ndarray, orientation_gpr: np.ndarray) -> str | None:
    """TTRI preflight: diagonal (signed 64-bit) in -65535..65535, orientation 0 or 1."""
    if any(abs(d) > DIAGONAL_LIMIT for d in _signed(_words(diagonal_gpr))):
        return "TTRI diagonal is outside -65535..65535"
    return _flag_legal(orientation_gpr, "TTRI orientation")


def _signed(words: list[int]) -> list[int]:
    return [v - (1 << 64) if v >> 63 else v for v in words]


def _one(dt: DataType) -> np.ndarray:
    """TileTTRIOneEncoding: the exact typed one."""
    return np.ones((), dtype=info(dt).carrier)


def ttri(
    dt: DataType, shape: tuple[int, int], diagonal_gpr: np.ndarray, orientation_gpr: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """TTRI: typed 0/1 triangular mask of valid ``shape`` (VR, VC).

    Orientation 0 (lower): ``dst[r, c] = 1`` iff ``c <= r + diagonal``; orientation 1
    (upper): iff ``c >= r + diagonal``; otherwise typed +0. The boundary comparison is
    exact (no wrap). Returns ``(dst (P, VR, VC), status)``.
    """
    dt = DataType(dt)
    if dt not in TTRI_DTYPES:
        raise ValueError(f"TTRI does not support {dt.name}")
    rule = ttri_scalars_legal(diagonal_gpr, orientation_gpr)
    if rule is not None:
        raise SemanticError(rule)
    vr, vc = shape
    diags = tuple(_signed(_words(diagonal_gpr)))
    uppers = tuple(v == 1 for v in _words(orientation_gpr))

    def make() -> np.ndarray:
        diag = np.array(diags, np.int64)
        upper = np.array(uppers, bool)
        r = np.arange(vr, dtype=np.int64)[None, :, None]
        c = np.arange(vc, dtype=np.int64)[None, None, :]
        boundary = r + diag[:, None, None]
        selected = np.where(upper[:, None, None], c >= boundary, c <= boundary)
        carrier = info(dt).carrier
        return np.where(selected, _one(dt), np.zeros((), dtype=carrier)).astype(carrier)

    dst = _generated(("TTRI", dt, vr, vc, diags, uppers), make)
    return dst, no_status(len(diags))


def thistogram_shapes_legal(
    src_dt: DataType,
    src_valid: tuple[int, int],
    filt_valid: tuple[int, int] | None,
    byte_id: int,
) -> str | None:
    """THISTOGRAM source-type, ByteId and filter-extent rules (filter definedness aside).

    U16: ByteId 0 filters on filter[row, 0] for every source row, ByteId 1 is unfiltered,
    2 and 3 are illegal. U32: ByteId 2/1/0 need one/two/three filter rows at column 0,
    ByteId 3 is unfiltered.
    """
    src_dt = DataType(src_dt)
    if src_dt not in HISTOGRAM_SOURCE_DTYPES:
        return f"THISTOGRAM source DataType {src_dt.name} is not U16 or U32"
    if not 0 <= byte_id <= 3 or (src_dt == _D.U16 and byte_id > 1):
        return f"THISTOGRAM ByteId {byte_id} is illegal for {src_dt.name}"
    needed = _filter_rows_needed(src_dt, byte_id, src_valid[0])
    if needed and (filt_valid is None or filt_valid[0] < needed or filt_valid[1] < 1):
        return f"THISTOGRAM filter needs {needed} valid rows at column 0"
    return None


def _filter_rows_needed(src_dt: DataType, byte_id: int, src_rows: int) -> int:
    if src_dt == _D.U16:
        return src_rows if byte_id == 0 else 0
    return 3 - byte_id


def thistogram(
    src_dt: DataType, src: np.ndarray, filt: np.ndarray | None, byte_id: int
) -> tuple[np.ndarray, np.ndarray]:
    """THISTOGRAM: per source row, the inclusive prefix histogram of one selected byte.

    ``src`` is (P, R, C) U16/U32; ``filt`` the U8 filter's valid region (P, FR, FC), or
    None for the unfiltered ByteIds. Only values whose more-significant bytes match the
    filter count: U16 ByteId 0 matches the high byte against ``filt[row, 0]``; U32 ByteId
    2/1/0 match bytes 3, 3-2, 3-1 against the global prefix ``filt[0..2, 0]``. Result
    ``dst[row, bin]`` is the number of counted values whose selected byte is <= ``bin``.
    Returns ``(dst U32 (P, R, 256), status)``.
    """
    src_dt = DataType(src_dt)
    p, r, _c = src.shape
    fshape = None if filt is None else filt.shape[1:]
    rule = thistogram_shapes_legal(src_dt, (r, _c), fshape, byte_id)
    if rule is not None:
        raise SemanticError(rule)
    v = src.astype(np.uint32)

    def byte(k: int) -> np.ndarray:
        return (v >> np.uint32(8 * k)) & np.uint32(0xFF)

    selected = np.ones(v.shape, dtype=bool)
    if filt is not None:
        f = filt.astype(np.uint32)
        if src_dt == _D.U16 and byte_id == 0:
            selected = byte(1) == f[:, :r, :1]
        elif src_dt == _D.U32:
            # Global prefix: filter rows 0, 1, 2 hold bytes 3, 2, 1 of the wanted values.
            for frow, k in enumerate(range(3, byte_id, -1)):
                selected &= byte(k) == f[:, frow : frow + 1, :1]
    bins = byte(byte_id).astype(np.int64)
    flat = (np.arange(p * r, dtype=np.int64).reshape(p, r, 1) * 256 + bins)[selected]
    counts = np.bincount(flat, minlength=p * r * 256).reshape(p, r, 256)
    return np.cumsum(counts, axis=2).astype(np.uint32), no_status(p)

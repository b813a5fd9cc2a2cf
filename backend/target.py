"""The target: one simulated PTO core's parameters (DECISIONS D1-D3), described once.

Hands, queue depth, per-PE Local capacity, PEs and global-memory size, with their
defaults and their limits. The compiler passes take one :class:`MachineConfig` (the
target they compile for), the executor one (the machine it models), and the command
lines parse ``--machine depth=4,capacity=16384`` with :meth:`MachineConfig.parse`.

The defaults are the architectural values; tests use tiny machines (``depth=4``,
``capacity=16384``) to stress eviction and allocation.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from ptoc.backend.errors import Error
from ptoc.backend.literals import LiteralError, parse_int

#: 64 MiB of byte-addressed global memory unless configured otherwise
DEFAULT_GM_SIZE = 64 << 20
#: the largest global memory the model addresses (1 TiB); a memory above 256 MiB is
#: paged lazily, so it costs only the pages a program touches (DECISIONS D13)
MAX_GM_SIZE = 1 << 40
#: the ``TILE_CAPACITY`` reset value: Local tile bytes per PE
DEFAULT_CAPACITY = 262144
#: blocks (tile bundles and scalar blocks) one run may execute before it is stopped
DEFAULT_MAX_STEPS = 10**8

#: the inclusive ranges of the counted parameters: four hands T, U, M, N (D1), at most
#: 16 reachable entries per hand (D2), at most four PEs
LIMITS: dict[str, tuple[int, int]] = {"hands": (1, 4), "depth": (1, 16), "pes": (1, 4)}


class ConfigError(Error):
    """A machine description that names an unknown or out-of-range parameter."""


@dataclass(frozen=True)
class MachineConfig:
    """The shape of one simulated PTO core.

    ``hands`` (1..4) Local tile queues T, U, M, N; ``depth`` (1..16) reachable entries per
    queue; ``capacity`` bytes of Local tile storage per PE (the ``TILE_CAPACITY`` reset
    value 262144 by default); ``pes`` (1..4) processing elements, PE0 being the most
    significant PE_MASK bit; ``gm_size`` bytes of global memory; ``max_steps`` the
    number of blocks one run may execute (D12: a program that loops longer stops with
    an error naming the block, never hangs). ``max_steps`` bounds a run rather than
    shaping the core, so :meth:`text` names it only when it differs from its default.
    """

    hands: int = LIMITS["hands"][1]
    depth: int = LIMITS["depth"][1]
    capacity: int = DEFAULT_CAPACITY
    pes: int = LIMITS["pes"][1]
    gm_size: int = DEFAULT_GM_SIZE
    max_steps: int = DEFAULT_MAX_STEPS

    def __post_init__(self) -> None:
        for name, (lo, hi) in LIMITS.items():
            v = getattr(self, name)
            if not lo <= v <= hi:
                raise ConfigError(f"machine parameter {name}={v} is outside {lo}..{hi}")
        if self.capacity < 0:
            raise ConfigError(f"machine parameter capacity={self.capacity} is negative")
        if self.max_steps <= 0:
            raise ConfigError(f"machine parameter max_steps={self.max_steps} must be positive")
        if self.gm_size <= 0:
            raise ConfigError(f"machine parameter gm_size={self.gm_size} must be positive")
        if self.gm_size > MAX_GM_SIZE:
            raise ConfigError(
                f"machine parameter gm_size={_bytes(self.gm_size)} exceeds the "
                f"{_bytes(MAX_GM_SIZE)} the model addresses"
            )

    @classmethod
    def parse(cls, text: str, base: MachineConfig | None = None) -> MachineConfig:
        """``"depth=4,capacity=16384"`` -> a config (unnamed fields keep ``base``/defaults).

        Values accept Python integer syntax (``0x1000``) and the suffixes K, M, G
        (powers of 1024), e.g. ``gm_size=16M``.
        """
        base = base or cls()
        known = {f.name for f in fields(cls)}
        values: dict[str, int] = {}
        for part in (p.strip() for p in text.split(",")):
            if not part:
                continue
            name, sep, raw = part.partition("=")
            name = name.strip().replace("-", "_")
            if not sep or name not in known:
                raise ConfigError(
                    f"bad machine parameter {part!r} (expected NAME=VALUE with NAME one of "
                    f"{', '.join(sorted(known))})"
                )
            values[name] = _parse_int(raw.strip(), name)
        return replace(base, **values)

    def text(self) -> str:
        """The parameters in :meth:`parse` syntax."""
        return ",".join(
            f"{f.name}={getattr(self, f.name)}"
            for f in fields(self)
            if f.name != "max_steps" or self.max_steps != DEFAULT_MAX_STEPS
        )


_SUFFIX = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def _parse_int(raw: str, name: str) -> int:
    scale = 1
    digits = raw
    if raw[-1:].upper() in _SUFFIX:
        scale, digits = _SUFFIX[raw[-1].upper()], raw[:-1]
    try:
        return parse_int(digits) * scale
    except LiteralError as e:
        raise ConfigError(f"machine parameter {name}: {e}") from None


def _bytes(n: int) -> str:
    """``4294967296`` -> ``4G``; other sizes as they are (huge ones in hex)."""
    for suffix, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= scale and n % scale == 0 and n // scale < 10**6:
            return f"{n // scale}{suffix}"
    return str(n) if n < 10**15 else hex(n)

"""Comparison and rounding modes as xDSL enum attributes (B.DATR CMode / RMode codes)."""

from __future__ import annotations

from enum import StrEnum

from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition

from ptoc.backend.isa.fields import CMODE_NAMES, RMODE_NAMES


class CMode(StrEnum):
    """TCMP/TCMPS relation; the B.DATR CMode code is the position in CMODE_NAMES."""

    EQ = "eq"
    NE = "ne"
    LT = "lt"
    GT = "gt"
    LE = "le"
    GE = "ge"

    @property
    def code(self) -> int:
        return CMODE_NAMES.index(self.name)


class RMode(StrEnum):
    """Rounding of TCVT/TQUANT/TDEQUANT; the B.DATR RMode code (0 is 'op default')."""

    RNE = "rne"
    RTZ = "rtz"
    RTM = "rtm"
    RTP = "rtp"
    RNA = "rna"
    RTO = "rto"
    RHB = "rhb"

    @property
    def code(self) -> int:
        return RMODE_NAMES.index(self.name)


@irdl_attr_definition
class CModeAttr(EnumAttribute[CMode], SpacedOpaqueSyntaxAttribute):
    """A comparison: ``#tile.cmode lt``."""

    name = "tile.cmode"


@irdl_attr_definition
class RModeAttr(EnumAttribute[RMode], SpacedOpaqueSyntaxAttribute):
    """A rounding mode: ``#tile.rmode rtz``."""

    name = "tile.rmode"


def rmode_code(attr: RModeAttr | None) -> int:
    """The B.DATR RMode code; an absent attribute is 0, the operation's default."""
    return 0 if attr is None else attr.data.code

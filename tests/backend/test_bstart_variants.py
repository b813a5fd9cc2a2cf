"""The BSTART encoding variants (the Shared TLSU functions of BSTART.TMOV and
BSTART.TSTORE): text, words and decoded commands agree, and the variant selects its
form's operation under its own Function."""

from __future__ import annotations

import pytest

from ptoc.backend import asm
from ptoc.backend.encoding import decode_command, encode_command
from ptoc.backend.isa import Family, bstart_mnemonic, catalog, op_by_selector
from ptoc.backend.program import TileStart

VARIANTS = sorted(catalog.FORM_VARIANTS.items())


@pytest.mark.parametrize("word, base", VARIANTS, ids=[w for w, _ in VARIANTS])
def test_variant_words_round_trip(word: str, base: tuple[str, int]) -> None:
    form_mnemonic, function = base
    start = asm.parse(f"{word} FP16\n").commands[0]
    assert start == TileStart(Family.TLSU, function, 4)
    assert start.op is not None and start.op.bstart == form_mnemonic
    assert asm.format_command(start) == f"{word} FP16"
    value, bits = encode_command(start)
    assert bits == 32 and (value >> 20) & 31 == function and value >> 27 == 4
    assert decode_command(value, bits) == start
    assert bstart_mnemonic(Family.TLSU, function) == word


def test_the_catalog_variants_are_the_shared_functions() -> None:
    assert {fn: w for w, (_, fn) in VARIANTS} == {
        9: "BSTART.TMOV.L2S.INSERT",
        10: "BSTART.TMOV.L2S.PUBLISH",
        11: "BSTART.TMOV.S2L.BROADCAST",
        12: "BSTART.TMOV.S2L.EXTRACT",
        14: "BSTART.TSTORE.SPART",
    }
    tmov, tstore = op_by_selector(Family.TLSU, 2), op_by_selector(Family.TLSU, 1)
    assert all(op_by_selector(Family.TLSU, fn) is tmov for fn in (9, 10, 11, 12))
    assert op_by_selector(Family.TLSU, 14) is tstore
    # the base words keep their own Functions
    assert bstart_mnemonic(Family.TLSU, 2) == "BSTART.TMOV"
    assert bstart_mnemonic(Family.TLSU, 1) == "BSTART.TSTORE"

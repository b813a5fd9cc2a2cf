"""Generate ``catalog.py`` from the PTO-ISA 0.58.3 machine-readable catalogs.

Usage::

    python -m ptoc.backend.isa.generate [--spec DIR] [--check]

``DIR`` holds ``tile-operations.json``, ``command-forms.json``, ``scalar-forms.json`` and
``instruction-contracts.json`` (default: ``../shared/spec/pto-spec-0.58.3`` next to the
repository). The seed overrides of DECISIONS D4 come from ``seed_overrides.py``, the
type sets of the executable ASL predicates (D9) from ``asl_type_sets.py``.
``--check`` exits 1 when the checked-in module differs from what would be generated.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from . import seed_overrides as so
from .asl_type_sets import ASL_DTYPES, ASL_TYPE_PAIRS, ASL_TYPE_RULES
from .datatypes import DataType

CATALOG_PATH = Path(__file__).with_name("catalog.py")
DEFAULT_SPEC = Path(__file__).resolve().parents[2].parent / "shared/spec/pto-spec-0.58.3"
SPEC_FILES = (
    "tile-operations.json",
    "command-forms.json",
    "scalar-forms.json",
    "instruction-contracts.json",
)

#: scalar instructions the executor runs in standard blocks (D12): every 32-bit ALU form,
#: the BRU compares and condition setters, SETRET, the AGU loads and stores of GPRs
#: (immediate, register, PC-relative and compressed addressing), and the 16-bit forms.
#: C.SETRET also owns the c.movi words whose RegDst is 10 (c.movi's not-equal
#: constraint), so the decoder reads those words as C.SETRET and never as c.movi. The
#: FSU forms compute FP64/FP32 scalars (``asl/scalar/model/dispatch/fsu.asl``). The
#: 48-bit HL forms, C.SETC.TGT, jumps inside a block, atomics and SYS forms are not
#: listed.
SCALAR_MNEMONICS = (
    # ALU
    "ADD", "ADDW", "SUB", "SUBW", "AND", "ANDW", "OR", "ORW", "XOR", "XORW",
    "ADDI", "ADDIW", "SUBI", "SUBIW", "ANDI", "ANDIW", "ORI", "ORIW", "XORI", "XORIW",
    "SLL", "SLLW", "SRL", "SRLW", "SRA", "SRAW", "SLLI", "SLLIW", "SRLI", "SRLIW",
    "SRAI", "SRAIW", "MIN", "MINU", "MAX", "MAXU",
    "MUL", "MULU", "MULW", "MULUW", "MADD", "MADDW",
    "DIV", "DIVU", "DIVW", "DIVUW", "REM", "REMU", "REMW", "REMUW",
    "BXS", "BXU", "CLZ", "CTZ", "BCNT", "BIC", "BIS", "REV", "CSEL",
    "LUI", "C.MOVI", "C.MOVR", "C.SETRET",
    "C.ADD", "C.ADDI", "C.AND", "C.OR", "C.SUB", "C.SLLI", "C.SRLI",
    "C.SEXT.B", "C.SEXT.H", "C.SEXT.W", "C.ZEXT.B", "C.ZEXT.H", "C.ZEXT.W",
    # BRU
    "CMP.EQ", "CMP.NE", "CMP.LT", "CMP.GE", "CMP.LTU", "CMP.GEU",
    "CMP.EQI", "CMP.NEI", "CMP.LTI", "CMP.GEI", "CMP.LTUI", "CMP.GEUI",
    "CMP.AND", "CMP.OR", "CMP.ANDI", "CMP.ORI",
    "SETC.EQ", "SETC.NE", "SETC.LT", "SETC.GE", "SETC.LTU", "SETC.GEU",
    "SETC.EQI", "SETC.NEI", "SETC.LTI", "SETC.GEI", "SETC.LTUI", "SETC.GEUI",
    "SETC.AND", "SETC.OR", "SETC.ANDI", "SETC.ORI", "C.SETC.EQ", "C.SETC.NE", "SETRET",
    "C.CMP.EQI", "C.CMP.NEI",
    # AGU
    "LB", "LBU", "LH", "LHU", "LW", "LWU", "LD",
    "LBI", "LBUI", "LHI", "LHUI", "LWI", "LWUI", "LDI",
    "LHI.U", "LHUI.U", "LWI.U", "LWUI.U", "LDI.U",
    "LB.PCR", "LBU.PCR", "LH.PCR", "LHU.PCR", "LW.PCR", "LWU.PCR", "LD.PCR",
    "SB", "SH", "SW", "SD", "SH.U", "SW.U", "SD.U",
    "SBI", "SHI", "SWI", "SDI", "SHI.U", "SWI.U", "SDI.U",
    "SB.PCR", "SH.PCR", "SW.PCR", "SD.PCR",
    "C.LDI", "C.LWI", "C.SDI", "C.SWI",
    # FSU
    "FADD", "FSUB", "FMUL", "FDIV", "FMIN", "FMAX",
    "FMADD", "FMSUB", "FNMADD", "FNMSUB", "FABS", "FSQRT", "FRECIP", "FEXP",
    "FEQ", "FNE", "FLT", "FGE", "FEQS", "FNES", "FLTS", "FGES",
    "FCVT", "FCVTA", "FCVTM", "FCVTN", "FCVTP", "FCVTZ", "SCVTF", "UCVTF",
)  # fmt: skip
#: header and boundary commands ptoc encodes (every form of each)
COMMAND_MNEMONICS = (
    "BSTART.TEPL", "BSTART.STD", "BSTART.FP", "BSTART.SYS",
    "BSTART.TLOAD", "BSTART.TSTORE", "BSTART.TMOV", "BSTART.TPREFETCH",
    "BSTART.MGATHER", "BSTART.MSCATTER", "BSTART.MGATHER.MASK", "BSTART.MSCATTER.MASK",
    "BSTART.MGATHER.CAS", "BSTART.GMOV",
    "BSTART.TMATMUL", "BSTART.TMATMUL.BIAS", "BSTART.TMATMUL.ACC",
    "BSTART.TMATMULMX", "BSTART.TMATMULMX.BIAS", "BSTART.TMATMULMX.ACC",
    "BSTART.TGEMV", "BSTART.TGEMV.BIAS", "BSTART.TGEMV.ACC",
    "BSTART.TGEMVMX", "BSTART.TGEMVMX.BIAS", "BSTART.TGEMVMX.ACC",
    "B.DATR", "B.DIM", "C.B.DIMI", "B.IOR", "B.IOT", "B.IOS", "B.CATR", "B.HINT",
    "B.FPATR", "BSTOP", "C.BSTOP",
)  # fmt: skip

_DT_NAMES = [dt.name for dt in DataType]
_DT_RE = re.compile(r"\b(" + "|".join(sorted(_DT_NAMES, key=len, reverse=True)) + r")\b")
_LIST_RE = re.compile(
    r"(exactly(?: one of)?|one of|DataTypes are)\s+((?:[A-Za-z0-9]+,?\s*(?:or |and )?)+)"
)


def load_spec(spec: Path) -> dict[str, Any]:
    return {name: json.loads((spec / name).read_text()) for name in SPEC_FILES}


# --------------------------------------------------------------------------- forms


def _form_row(f: dict[str, Any]) -> str:
    mask = match = 0
    shift = 0
    for e in f["encoding"]:
        mask |= int(e["mask"], 16) << shift
        match |= int(e["match"], 16) << shift
        shift += e["width_bits"]
    constraints = {c["field"]: c for c in f.get("constraints", [])}
    fields = []
    for fd in f["fields"]:
        pieces = ", ".join(
            f"FieldPiece({p['instruction_lsb']}, {p['value_lsb']}, {p['width']})"
            for p in fd["pieces"]
        )
        c = constraints.get(fd["name"])
        extra = ""
        if fd.get("signedness") == "signed":
            extra += ", signed=True"
        if c and c["operator"] == "one-of":
            extra += f", allowed=frozenset({sorted(c['values'])!r})"
        elif c and c["operator"] == "not-equal":
            extra += f", excluded={c['value']}"
        fields.append(f"FieldDef({fd['name']!r}, {fd['width']}, ({pieces},){extra})")
    summary = f.get("semantic_summary", "")
    return (
        f"    CommandForm(\n        {f['form_id']!r}, {f['mnemonic']!r}, {f['asm']!r}, "
        f"{f['length_bits']}, 0x{mask:x}, 0x{match:x},\n        (\n"
        + "".join(f"            {x},\n" for x in fields)
        + f"        ),\n        {summary!r},\n    ),\n"
    )


def _variant_forms(f: dict[str, Any]) -> list[dict[str, Any]]:
    """One form of each ``encoding_variants`` entry of a BSTART form (the Shared TLSU
    functions 9..12 of BSTART.TMOV and 14 of BSTART.TSTORE): the base form's fields
    under the variant's own match, spelled ``BSTART.<variant name>``."""
    out = []
    for v in f.get("encoding_variants", []):
        mnemonic = f"BSTART.{v['name']}"
        out.append(
            {
                **f,
                "form_id": f"{f['form_id']}_f{v['function']}",
                "mnemonic": mnemonic,
                "asm": f["asm"].replace(f["mnemonic"], mnemonic, 1),
                "encoding": v["encoding"],
                "variant_of": f["form_id"],
                "semantic_summary": (
                    f"Function {v['function']} ({v['name']}) of {f['mnemonic']}: "
                    f"{f.get('semantic_summary', '')}"
                ),
            }
        )
    return out


def forms_source(spec: dict[str, Any]) -> str:
    base = [
        f for f in spec["command-forms.json"]["forms"] if f["mnemonic"] in COMMAND_MNEMONICS
    ]
    cmds = base + [v for f in base for v in _variant_forms(f)]
    scal = [f for f in spec["scalar-forms.json"]["forms"] if f["mnemonic"] in SCALAR_MNEMONICS]
    key = lambda f: (f["mnemonic"], f["form_id"])  # noqa: E731
    out = "COMMAND_FORMS: tuple[CommandForm, ...] = (\n"
    out += "".join(_form_row(f) for f in sorted(cmds, key=key))
    out += ")\n\nSCALAR_FORMS: tuple[CommandForm, ...] = (\n"
    out += "".join(_form_row(f) for f in sorted(scal, key=key))
    out += ")\n\n#: the catalog's AGU record of every scalar load and store, by mnemonic\n"
    out += "SCALAR_AGU: dict[str, AguDef] = {\n"
    for f in sorted(scal, key=key):
        a = f.get("agu")
        if a is not None:
            out += (
                f"    {f['mnemonic']!r}: AguDef({a['action']!r}, {a['address_kind']!r}, "
                f"{a['size_bytes']}, {a['signed_load']}, {a['offset_scale']}, "
                f"{a['update_mode']!r}),\n"
            )
    out += "}\n\n"
    out += (
        "#: BSTART encoding variants: variant mnemonic -> (the form it varies, the TLSU\n"
        "#: Function it selects); the variant decodes to that form's operation\n"
    )
    out += "FORM_VARIANTS: dict[str, tuple[str, int]] = {\n"
    for f in sorted(base, key=key):
        for v in f.get("encoding_variants", []):
            out += f"    'BSTART.{v['name']}': ({f['mnemonic']!r}, {v['function']}),\n"
    out += "}\n\n"
    # the ASL numbers forms by their position in the JSON catalogs (DecodeScalarForm,
    # DecodeCommandForm); the conformance tooling maps ptoc's forms to those numbers
    for name, file, chosen in (
        ("COMMAND_FORM_INDEX", "command-forms.json", cmds),
        ("SCALAR_FORM_INDEX", "scalar-forms.json", scal),
    ):
        ids = {f["form_id"] for f in chosen}
        listed = enumerate(spec[file]["forms"])
        pos = {f["form_id"]: i for i, f in listed if f["form_id"] in ids}
        for f in chosen:  # a variant is numbered as the form it varies
            if "variant_of" in f:
                pos[f["form_id"]] = pos[f["variant_of"]]
        out += f"#: form_id -> its index in ``{file}`` (the ASL's form number)\n"
        out += f"{name}: dict[str, int] = {{\n"
        rows = sorted(pos.items(), key=lambda kv: kv[1])
        out += "".join(f"    {k!r}: {v},\n" for k, v in rows)
        out += "}\n"
        count = name.replace("_INDEX", "_COUNT")
        out += f"{count} = {len(spec[file]['forms'])}  # forms in ``{file}``\n"
        # the forms ptoc leaves out, so that a word of one is told from an illegal word
        other = name.replace("_FORM_INDEX", "_FORMS_NOT_MODELLED")
        out += f"#: ``{file}`` forms ptoc does not list: (mnemonic, length_bits, mask, match)\n"
        out += f"{other}: tuple[tuple[str, int, int, int], ...] = (\n"
        for f in spec[file]["forms"]:
            if f["form_id"] in ids:
                continue
            mask = match = shift = 0
            for e in f["encoding"]:
                mask |= int(e["mask"], 16) << shift
                match |= int(e["match"], 16) << shift
                shift += e["width_bits"]
            out += f"    ({f['mnemonic']!r}, {f['length_bits']}, 0x{mask:x}, 0x{match:x}),\n"
        out += ")\n\n"
    return out.rstrip("\n") + "\n"


# --------------------------------------------------------------------------- ops


def _types_from_legality(sentences: list[str]) -> frozenset[DataType]:
    """The first "exactly X, Y, or Z" list about the selected/source DataType."""
    for s in sentences:
        low = s.lower()
        if "index" in low.split("datatype")[0] or "destination datatype" in low:
            continue
        m = _LIST_RE.search(s)
        if m and ("DataType" in s or "source" in low):
            names = _DT_RE.findall(m.group(2))
            if len(names) >= 2:
                return frozenset(DataType[n] for n in names)
    return frozenset()


def _types_from_block(block: list[str]) -> frozenset[DataType]:
    for line in block:
        m = re.match(r"BSTART\.\w+ \w+, ([A-Za-z0-9|]+)$", line.strip())
        if m and "|" in m.group(1):
            return frozenset(DataType[n] for n in m.group(1).split("|"))
    return frozenset()


def _dtypes(
    name: str, block: list[str], contract: dict[str, Any]
) -> tuple[frozenset[DataType], str]:
    """The legal BSTART DataTypes and where they come from: a seed sentence (D4), else
    the executable ASL predicate (D9, ``asl_type_sets``), else the contract prose."""
    if name in so.DTYPES:
        return so.DTYPES[name]
    asl = ASL_DTYPES[name]  # every operation has an entry (tests/isa/test_asl_type_sets.py)
    if asl.types is not None:
        return asl.types, f"ASL {asl.predicate}"
    prose = _types_from_block(block) or _types_from_legality(contract.get("legality", []))
    return prose, f"contract prose ({asl.note})" if asl.note else "contract prose"


def _dims(mnemonic: str, block: list[str], contract: dict[str, Any]) -> list[tuple]:
    if mnemonic in so.DIMS:
        return [(lb, mean, req, dflt, False, None) for lb, mean, req, dflt in so.DIMS[mnemonic]]
    dims: dict[int, tuple] = {}
    for line in block:
        for lb, meaning, rest in re.findall(r"LB([012])\s*=\s*([A-Za-z_]+)([^,;]*)", line):
            n = int(lb)
            optional = "optional" in rest or ("optional" in line and n > 0)
            if n in dims:
                continue
            zero = None
            if "zero or omission defaults to" in rest or "zero or omission" in line:
                zero = re.search(r"defaults to (\w+)", line)
            if meaning == "sort_width":
                dims[n] = (n, "sort_width", False, "32", True, "32")
            else:
                dflt = {1: "1", 2: "ValidCol"}.get(n) if optional or n > 0 else None
                dims[n] = (n, meaning, not optional and n == 0, dflt, False, zero)
    if not dims and any(line.strip().startswith("B.DIM LB0") for line in block):
        dims = {
            0: (0, "ValidCol", True, None, False, None),
            1: (1, "ValidRow", False, "1", False, None),
            2: (2, "Col", False, "ValidCol", False, None),
        }
    if mnemonic == "TSTORE":
        dims = {
            n: (n, m, False, f"source {m}", False, None)
            for n, m in ((0, "ValidCol"), (1, "ValidRow"), (2, "Col"))
        }
    if contract.get("classification", [""])[0:1] == ["matrix-and-matrix-vector"]:
        pass
    return [dims[k] for k in sorted(dims)]


def _ior(mnemonic: str, operands: list[dict[str, str]]) -> list[tuple[str, str, int | None]]:
    roles = {o["field"]: o["role"] for o in operands}
    slots = [f for f in so.IOR_SLOT_ORDER if f in roles]
    defaults = so.IOR_DEFAULTS.get(mnemonic, {})
    return [(f"RegSrc{i}", f"{f}: {roles[f]}", defaults.get(f, 0)) for i, f in enumerate(slots)]


def _op_row(op: dict[str, Any], rec: dict[str, Any]) -> str:
    name = op["name"]
    c = rec["contract"]
    family = op["family"]
    engine = op["engine"]
    mode = op.get("mode")
    fn = op["function"]
    selector = (mode << 5) | fn if mode is not None else fn
    bstart = f"BSTART.{engine}" if family == "TEPL" else op["command_mnemonic"]
    block = rec.get("block", [])
    notes: list[str] = list(so.SEED_NOTES.get(name, ()))
    types, dtype_source = _dtypes(name, block, c)
    if name in so.DTYPES:
        notes.append(dtype_source)
    operands = c["operands"]
    srcs = tuple(
        sorted(
            (o["field"] for o in operands if o["field"].startswith("source")),
            key=lambda f: int(f[6:]),
        )
    )
    dsts = tuple(
        sorted(
            (o["field"] for o in operands if o["field"].startswith("destination")),
            key=lambda f: int(f[11:]),
        )
    )
    role = {o["field"]: o["role"] for o in operands}
    ior = _ior(name, operands)
    dims = _dims(name, block, rec)
    datr = op["datr_contract"]
    datr_required = any(
        ln.strip().startswith("B.DATR") and "optional" not in ln and "mandatory" in ln
        for ln in block
    ) or name in ("TQUANT", "TDEQUANT", "THISTOGRAM")
    ios_legal = family != "TEPL" and any("B.IOS" in ln for ln in block)
    # further type rules: the ASL's, each narrowed where a seed sentence states its own
    rules = {k: v for k, (v, _) in ASL_TYPE_RULES.get(name, {}).items()}
    rules.update(so.TYPE_RULES.get(name, {}))
    pairs = so.TYPE_PAIRS.get(name) or ASL_TYPE_PAIRS.get(name, (frozenset(), ""))[0]

    def fs(ts: frozenset[DataType]) -> str:
        return "frozenset({" + ", ".join(f"D.{t.name}" for t in sorted(ts)) + "})"

    lines = [
        "    OpDef(",
        f"        mnemonic={name!r},",
        f"        family=Family.{family},",
        f"        engine=Engine.{engine},",
        f"        mode={mode!r},",
        f"        function={fn},",
        f"        selector=0x{selector:03x},",
        f"        bstart={bstart!r},",
        f"        classification={tuple(rec.get('classification', ()))!r},",
        f"        summary={rec.get('summary', '')!r},",
        f"        sources={tuple(role[s] for s in srcs)!r},",
        f"        destinations={tuple(role[d] for d in dsts)!r},",
        f"        operands={tuple((o['field'], o['role']) for o in operands)!r},",
        "        dims=("
        + "".join(
            f"DimDef({lb}, {m!r}, {r!r}, {d!r}, {z!r}, {zm!r}), " for lb, m, r, d, z, zm in dims
        )
        + "),",
        "        ior=(" + "".join(f"IorSlot({f!r}, {m!r}, {d!r}), " for f, m, d in ior) + "),",
        f"        ior_legal={bool(ior)!r},",
        f"        ios_legal={ios_legal!r},",
        f"        datr_fields=frozenset({sorted(datr['allowed_nonzero_fields'])!r}),",
        f"        pad_union={datr['pad_union']!r},",
        f"        datr_required={datr_required!r},",
        f"        dtypes={fs(types)},",
        f"        dtype_source={dtype_source!r},",
        "        type_rules={" + ", ".join(f"{k!r}: {fs(v)}" for k, v in rules.items()) + "},",
        "        type_pairs=frozenset({"
        + ", ".join(f"(D.{a.name}, D.{b.name})" for a, b in sorted(pairs))
        + "}),",
        f"        block={tuple(block)!r},",
        f"        defaults={tuple(c.get('defaults', ()))!r},",
        f"        legality={tuple(c.get('legality', ()))!r},",
        f"        exceptions={tuple(c.get('exceptions', ()))!r},",
        f"        field_zero_meanings={dict(c.get('field_zero_meanings', {}))!r},",
        f"        examples={tuple(c.get('examples', ()))!r},",
        f"        seed_notes={tuple(notes)!r},",
        "    ),",
    ]
    return "\n".join(lines) + "\n"


def ops_source(spec: dict[str, Any]) -> str:
    tops = spec["tile-operations.json"]
    recs = spec["instruction-contracts.json"]["records"]
    out = "OPS: tuple[OpDef, ...] = (\n"
    out += "".join(_op_row(op, recs[op["name"]]) for op in tops["operations"])
    out += ")\n\n"
    reserved: list[int] = []
    for lo, hi in tops["reserved"]["tepl_selector_ranges"]:
        reserved.extend(range(int(lo, 16), int(hi, 16) + 1))
    out += f"RESERVED_TEPL_SELECTORS = frozenset({sorted(reserved)!r})\n"
    out += f"DELETED_NAMES = frozenset({sorted(tops['deleted_names'])!r})\n"
    out += f"REJECTED_NAMES = frozenset({sorted(tops['rejected_names'])!r})\n"
    return out


HEADER = '''"""The PTO instruction catalog. GENERATED by ``python -m ptoc.backend.isa.generate``
from the PTO-ISA/pto-spec 0.58.3 catalogs (BSD-3), ``seed_overrides.py`` and
``asl_type_sets.py``. DO NOT EDIT.
"""

# ruff: noqa: E501
from .datatypes import DataType as D
from .schema import AguDef, CommandForm, DimDef, Engine, Family, FieldDef, FieldPiece
from .schema import IorSlot, OpDef

'''


def generate(spec_dir: Path) -> str:
    spec = load_spec(spec_dir)
    return HEADER + forms_source(spec) + "\n" + ops_source(spec)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ptoc.backend.isa.generate")
    ap.add_argument("--spec", type=Path, default=DEFAULT_SPEC)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    text = generate(args.spec)
    if args.check:
        if CATALOG_PATH.read_text() != text:
            print(f"{CATALOG_PATH} is stale: regenerate it", file=sys.stderr)
            return 1
        return 0
    CATALOG_PATH.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

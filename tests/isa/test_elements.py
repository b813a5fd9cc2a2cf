"""The one element-type model: DataTypes plus the packed one-bit predicate, and the
views the dialects and the user API take of it."""

from __future__ import annotations

import numpy as np
import pytest

import ptoc
from ptoc.backend.isa import DataType, info
from ptoc.backend.isa.elements import ELEMENT_TYPES, PRED, ElementType, element_type
from ptoc.dialects.dtypes import DType, carrier, dtype_attr, element_bits, is_pred
from ptoc.dtypes import DTYPES


def test_the_predicate_is_one_packed_bit_without_a_datatype() -> None:
    assert PRED.is_pred and PRED.datatype is None and PRED.name == "PRED"
    assert PRED.bits == 1 and PRED.carrier == np.dtype(bool) and PRED.info is None
    assert not PRED.is_float and not PRED.is_int
    assert PRED.storage_bytes(9) == 2


@pytest.mark.parametrize("dt", list(DataType))
def test_a_datatype_element_reads_the_catalog_facts(dt: DataType) -> None:
    e = element_type(dt)
    assert e is ELEMENT_TYPES[dt.name] and e == ElementType(dt) and not e.is_pred
    assert (e.bits, e.carrier, e.is_float, e.is_int) == (
        info(dt).bits,
        info(dt).carrier,
        info(dt).is_float,
        info(dt).is_int,
    )


def test_the_dialect_attribute_and_the_user_objects_are_views_of_the_model() -> None:
    assert [d.value for d in DType] == list(ELEMENT_TYPES)
    assert list(DTYPES) == [name.lower() for name in ELEMENT_TYPES]
    for name, e in ELEMENT_TYPES.items():
        attr = dtype_attr(name)
        assert attr.element is e
        assert (is_pred(attr), element_bits(attr), carrier(attr)) == (
            e.is_pred,
            e.bits,
            e.carrier,
        )
        user = DTYPES[name.lower()]
        assert user.element is e and user.catalog_name == name
        assert (user.bits, user.carrier, user.datatype) == (e.bits, e.carrier, e.datatype)
    assert ptoc.pred.element is PRED and repr(ptoc.fp32) == "ptoc.fp32"


def test_unknown_names_are_refused() -> None:
    with pytest.raises(KeyError):
        element_type("FP33")

"""The slot and field tables of compiled/kernels/slots.py are complete: every name of
FLOAT_SLOTS, INT_SLOTS, SIZE_FIELDS and EVAL_SIZE_FIELDS has its module constant
(F_<NAME>, I_<NAME>, SZ_<NAME>, EV_<NAME>, upper case) equal to its position, and no
constant of those prefixes is left without a name (a slot added to a tuple but not
numbered, or numbered twice, would make the kernels read another slot's memory)."""
import pytest

from caspar_backend.compiled.kernels import slots

TABLES = (("F_", slots.FLOAT_SLOTS), ("I_", slots.INT_SLOTS), ("SZ_", slots.SIZE_FIELDS),
          ("EV_", slots.EVAL_SIZE_FIELDS))
#: constants with a table's prefix that are not one of its entries
NOT_ENTRIES = {"I_FIRST_SCRATCH"}


@pytest.mark.parametrize("prefix, names", TABLES, ids=[p for p, _ in TABLES])
def test_every_entry_has_its_position_as_constant(prefix, names):
    for k, name in enumerate(names):
        assert getattr(slots, prefix + name.upper()) == k, name


@pytest.mark.parametrize("prefix, names", TABLES, ids=[p for p, _ in TABLES])
def test_no_constant_without_an_entry(prefix, names):
    wanted = {prefix + name.upper() for name in names}
    for const, value in vars(slots).items():
        if const.startswith(prefix) and const.isupper() and const not in NOT_ENTRIES:
            assert const in wanted, f"{const} = {value} has no entry in the {prefix} table"


def test_first_scratch_splits_structure_from_scratch():
    assert slots.INT_SLOTS[slots.I_FIRST_SCRATCH] == "FILTER_STATE"
    assert slots.INT_SLOTS[slots.I_FIRST_SCRATCH:] == ("FILTER_STATE", "STOP", "TEAM")

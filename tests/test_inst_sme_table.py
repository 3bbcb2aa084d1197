"""The rows of the SME and SME2 forms: well-formed words and fields (their encodings are cross-checked against
llvm-mc and GNU as in test_inst_sme.py)."""

from __future__ import annotations

from isaforge import inst_sme
from isaforge.inst_sme_table import rows

# The features GNU as 2.40 knows SME forms by, and SME2, which it does not know.
FEATURES = {"sme", "sme-i16i64", "sme-f64f64", "sme2"}


def test_every_row_is_a_32_bit_word_of_a_known_feature():
    table = list(rows())
    assert table
    for mnemonic, base, feature, _, _ in table:
        assert 0 <= base < 1 << 32 and feature in FEATURES, mnemonic


def test_each_form_is_one_row_and_its_fields_are_clear_of_its_fixed_bits_and_of_each_other():
    assert len(inst_sme.forms()) == len(list(rows()))
    for form in inst_sme.forms():
        taken = form.base
        for name, field in form.fields.items():
            bits = sum(1 << b for b in field.bits if b is not None)
            assert not bits & taken, (form.text({n: 0 for n in form.fields}), name)
            taken |= bits

"""Issue 42: a 429 said "0.1 MiB … more than its 0.1 MiB": two sizes a refusal compares never read alike."""

from __future__ import annotations

import pytest

from controller.platform.store.sql import _sizes


@pytest.mark.parametrize(("larger", "smaller"), [(110_000, 100_000), (104_900, 104_858), (60 << 20, (60 << 20) - 1),
                                                 (2_048, 2_047), (150_000, 104_857)])
def test_two_different_sizes_never_read_alike(larger: int, smaller: int):
    would, limit = _sizes(larger, smaller)
    assert would != limit


def test_sizes_read_in_a_fitting_unit():
    assert _sizes(150_000, 104_857) == ("146.5 KiB", "102.4 KiB")
    assert _sizes(50 << 20, 20 << 20) == ("50.0 MiB", "20.0 MiB")
    assert _sizes(104_900, 104_858) == ("104,900 bytes", "104,858 bytes")

"""tc.set_num_threads / tc.get_num_threads limit the BLAS threads, like torch's."""
import pytest

import tinygrad_course as tc


def test_set_and_get_num_threads_round_trip():
    before = tc.get_num_threads()
    try:
        tc.set_num_threads(1)
        assert tc.get_num_threads() == 1
        x = tc.randn(64, 64)
        assert (x @ x).shape == (64, 64)
    finally:
        tc.set_num_threads(before)
    assert tc.get_num_threads() == before


def test_set_num_threads_rejects_zero():
    with pytest.raises(RuntimeError, match="positive"):
        tc.set_num_threads(0)

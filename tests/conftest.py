"""Fixtures shared by every test folder."""
import pytest

from devices import DEVICES


@pytest.fixture(params=DEVICES)
def device(request):
    """Each device in turn: "cpu", then "cuda" (skipped with a clear reason where no GPU is usable)."""
    return request.param

"""Shared settings for the tc.nn tests."""
import pytest
from hypothesis import settings

import tinygrad_course as tc

settings.register_profile("nn", max_examples=15, deadline=None)
settings.load_profile("nn")


@pytest.fixture(autouse=True)
def _seed():
    tc.manual_seed(0)
    yield
    tc.set_grad_enabled(True)

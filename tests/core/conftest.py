"""Shared settings for the framework-core tests: modest Hypothesis budgets, no deadlines.

`TC_HYPOTHESIS_PROFILE=thorough` runs many more examples (for a bug hunt, not for `make test`)."""
import os

import pytest
from hypothesis import settings

import tinygrad_course as tc

settings.register_profile("core", max_examples=25, deadline=None)
settings.register_profile("thorough", max_examples=400, deadline=None)
settings.load_profile(os.environ.get("TC_HYPOTHESIS_PROFILE", "core"))


@pytest.fixture(autouse=True)
def _restore_global_state():
    """Each test starts with gradients enabled and float32 as the default dtype."""
    yield
    tc.set_grad_enabled(True)
    tc.set_default_dtype(tc.float32)

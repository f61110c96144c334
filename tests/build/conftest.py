"""Every build-mode test leaves the framework on its reference implementation, with no component calls counted."""
import pytest

from tinygrad_course import build, seams


@pytest.fixture(autouse=True)
def _reference_after():
    yield
    build.use_reference()
    seams.reset_calls()

"""Chapter 01's view components in build mode: the framework's views are made from the learner's stride
arithmetic, and a rule that goes wrong at run time is named and left out (the reference goes on), while
numbers that would read outside the storage are refused before any element is read."""
from __future__ import annotations

import numpy as np
import pytest

import tinygrad_course as tc
from tinygrad_course import build, seams
from tinygrad_course.build.components import BY_NAME
from tinygrad_course.build.package import load, save


@pytest.fixture(autouse=True)
def _reference_after():
    yield
    seams.uninstall()


def _install_unchecked(folder):
    build.session.install(load(folder), folder)


def test_the_learners_rules_make_the_views_and_a_failing_one_is_left_out(tmp_path):
    save(tmp_path, BY_NAME["permute_strides"], "def permute_strides(shape, strides, dims):\n"
         "    return tuple(shape[d] for d in dims), tuple(strides[d] for d in dims)\n\n\n"
         "def expand_strides(shape, strides, new_shape):\n    raise NotImplementedError\n", [],
         "01_tensors.ipynb, cell ex01_10")
    save(tmp_path, BY_NAME["index_view"], "def index_view(shape, strides, offset, index):\n"
         "    if len(shape) > 2:\n        return shape\n"
         "    i = index[0]\n    return tuple(shape[1:]), tuple(strides[1:]), offset + i * strides[0]\n", [],
         "01_tensors.ipynb, cell ex01_11")
    _install_unchecked(tmp_path)
    x = tc.arange(12.0).view(3, 4)
    seams.reset_calls()
    assert x.T.stride() == (1, 4) and x[2].tolist() == [8.0, 9.0, 10.0, 11.0]
    assert seams.calls() == {"permute_strides": 1, "index_view": 1}
    cube = tc.arange(24.0).view(2, 3, 4)
    with pytest.warns(UserWarning, match=r"your index_view \(01_tensors.ipynb, cell ex01_11\) raised RuntimeError: "
                                         r"returned \(2, 3, 4\), expected \(shape, strides, offset\); it is left out"):
        row = cube[1]
    assert row.tolist() == np.arange(12.0, 24.0).reshape(3, 4).tolist() and "index_view" not in seams.installed()


def test_numbers_that_reach_outside_the_storage_are_refused():
    seams.install("index_view", lambda shape, strides, offset, index: ((4,), (1,), offset + 10))
    with pytest.raises(RuntimeError, match=r"index_view gave a view with shape \(4,\), strides \(1,\) and storage "
                                           r"offset 10, which reaches outside its storage of 12 elements"):
        tc.arange(12.0).view(3, 4)[0]

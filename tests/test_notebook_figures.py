"""Figures in committed notebooks are pictures: a matplotlib figure saved only as its text repr
(`<Figure size 640x480 with 1 Axes>`) means the reader sees a line of text where a plot was meant to be.
That happens when a cell returns a bare `matplotlib.figure.Figure` before any inline backend is active, and
nbval does not notice (it compares the text, which is the same every time)."""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("notebooks", "solutions", "exercises")
FIGURE_REPR = re.compile(r"<(matplotlib\.figure\.)?Figure size \d+(\.\d+)?x\d+(\.\d+)? with \d+ Axes>")
IMAGE_TYPES = ("image/png", "image/svg+xml", "image/jpeg")


def _notebooks():
    return [p for folder in FOLDERS for p in sorted((ROOT / folder).glob("*.ipynb"))]


def _text(value):
    return "".join(value) if isinstance(value, list) else (value or "")


def figures_shown_as_text(notebook):
    """(cell index, repr) for every output that holds a figure's text repr and no image."""
    found = []
    for index, cell in enumerate(notebook.get("cells", [])):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            texts = [_text(data.get("text/plain"))] if data else [_text(output.get("text"))]
            for text in texts:
                match = FIGURE_REPR.search(text)
                if match and not any(kind in data for kind in IMAGE_TYPES):
                    found.append((index, match.group(0)))
    return found


def test_the_detector_tells_an_image_from_a_text_repr():
    text_only = {"cells": [{"cell_type": "code", "outputs": [
        {"output_type": "execute_result", "data": {"text/plain": ["<Figure size 495x405 with 2 Axes>"]}},
        {"output_type": "stream", "name": "stdout", "text": "<Figure size 640x480 with 1 Axes>\n"}]}]}
    as_image = {"cells": [{"cell_type": "code", "outputs": [
        {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo=",
                                                 "text/plain": "<Figure size 495x405 with 2 Axes>"}}]}]}
    assert figures_shown_as_text(text_only) == [(0, "<Figure size 495x405 with 2 Axes>"),
                                                (0, "<Figure size 640x480 with 1 Axes>")]
    assert figures_shown_as_text(as_image) == []


@pytest.mark.parametrize("path", _notebooks(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_figure_is_saved_as_its_text_repr(path):
    found = figures_shown_as_text(json.loads(path.read_text(encoding="utf-8")))
    assert not found, (f"{path.relative_to(ROOT)}: figures saved as text instead of images in cells "
                       f"{[i for i, _ in found]} ({found[0][1]}); activate an inline backend "
                       f"(`%matplotlib inline`) before the cell and re-execute the notebook")


def _has_picture(notebook):
    for cell in notebook.get("cells", []):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if any(kind in data for kind in IMAGE_TYPES) or "<svg" in _text(data.get("text/html")):
                return True
    return False


@pytest.mark.parametrize("path", sorted((ROOT / "notebooks").glob("0[1-9]*.ipynb")), ids=lambda p: p.name)
def test_every_lecture_chapter_shows_at_least_one_picture(path):
    """Chapters 01-09 (and the lab) each explain something with a figure saved in the notebook."""
    assert _has_picture(json.loads(path.read_text(encoding="utf-8"))), f"{path.name} shows no figure"

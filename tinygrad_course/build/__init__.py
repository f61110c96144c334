"""Build mode: the code a learner writes in the exercises becomes the framework later chapters run on.

- `record("02")` (in an exercise notebook's setup cell) saves each solution cell into the learner's package
  (`mytorch/`, one readable .py file per component) as it runs, and checks it with its exercise's graded
  check, which ends inside the framework (`checks.py`);
- `use_learner()` (at the top of a later chapter) makes the framework call the learner's components
  wherever they exist and pass that check, through the seams of `tinygrad_course/seams.py`, with the
  reference as fallback and a warning for each component left out; `with use_reference(): ...` runs a
  block on the reference;
- `status()` prints the table: component, chapter, learner or reference, last check, calls;
- `python -m tinygrad_course.build status|milestone ...` does the same for an instructor or CI from a
  folder of notebooks, deciding each verdict in a process that never runs the learner's code.

See docs/build_mode.md.
"""
from .components import BY_NAME, COMPONENTS, Component, for_chapter
from .session import check_component, record, status, use_learner, use_reference

__all__ = ["COMPONENTS", "BY_NAME", "Component", "for_chapter", "record", "use_learner", "use_reference", "status",
           "check_component"]

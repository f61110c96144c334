"""``python -m tinygrad_course.grading`` is the same command as ``tinygrad-course``."""
from tinygrad_course.cli import main

raise SystemExit(main())

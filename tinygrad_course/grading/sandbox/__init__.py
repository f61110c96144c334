"""Running untrusted submissions: the execution plan, the worker process and its guard, the runner."""

"""Profiling, mirroring `torch.profiler`: `profile`, `record_function`, `ProfilerActivity`."""
from .events import EventList, FunctionEvent, FunctionEventAvg
from .profile import ProfilerActivity, profile, record_function, supported_activities

__all__ = ["profile", "record_function", "ProfilerActivity", "supported_activities", "EventList",
           "FunctionEvent", "FunctionEventAvg"]

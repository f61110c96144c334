"""What the checks of a learner's class whose methods become a framework class's share."""


def no_helpers(t, cls, framework_class):
    """A learner's layer class whose methods become the framework class's may add no method of its own."""
    extra = sorted(name for klass in cls.__mro__[:-1] if not klass.__module__.startswith("tinygrad_course")
                   for name, value in vars(klass).items() if callable(value) and not hasattr(framework_class, name))
    t.true(not extra, f"your {cls.__name__} to have no method nn.{framework_class.__name__} does not have "
           f"(yours: {', '.join(extra)})", why="inside the framework self is the framework's layer, which has no "
           "such method", hint="write a helper as a function outside the class, or inline it")


def defined(cls, attr):
    """What the learner's class (or a base class of theirs, never the framework's) binds to `attr`, or None."""
    for klass in cls.__mro__[:-1]:
        if attr in vars(klass) and not klass.__module__.startswith("tinygrad_course"):
            return vars(klass)[attr]
    return None


def learner_functions(cls, attrs) -> dict:
    """{method name: the function the learner's class defines for it (a property's getter)} for each of `attrs`
    it defines: what build mode installs as the method slot."""
    found = {}
    for attr in attrs:
        value = defined(cls, attr)
        if value is not None:
            found[attr] = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
    return found

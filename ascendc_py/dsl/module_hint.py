"""Did-you-mean for a misspelt submodule import of this package (kept apart from ``suggest``,
which imports difflib: this finder is installed when the package is imported)."""
from __future__ import annotations


class SubmoduleHint:
    """A meta-path finder consulted last: ``import ascendc_py.tesing`` (a submodule no finder
    found) raises ModuleNotFoundError with "did you mean 'ascendc_py.testing'?" when a
    submodule of that package is close; otherwise it stays out of the way."""

    @staticmethod
    def find_spec(fullname: str, path=None, target=None):
        import sys
        parent, _, name = fullname.rpartition(".")
        package = sys.modules.get(parent)
        if not parent.split(".")[0] == "ascendc_py" or package is None or \
                not hasattr(package, "__path__"):
            return None
        import pkgutil
        known = [m.name for m in pkgutil.iter_modules(package.__path__)]
        import difflib
        close = difflib.get_close_matches(name, known, n=1)
        if not close:
            return None
        raise ModuleNotFoundError(f"No module named '{fullname}': did you mean "
                                  f"'{parent}.{close[0]}'?", name=fullname)

    @classmethod
    def install(cls) -> None:
        import sys
        if not any(f is cls for f in sys.meta_path):
            sys.meta_path.append(cls)

"""`hierplan` as a light install sees it: the packages the engine and picture extras bring are hidden from import.

``python tests/without_extras.py ARGS...`` runs ``hierplan ARGS...`` in this interpreter with every module that
``local``, ``hf`` and ``pictures`` (pyproject.toml) bring found nowhere, as if they were not installed:
``importlib.util.find_spec`` returns None for them and importing one raises ModuleNotFoundError. Their
distributions' metadata stays, so the clean-venv test (tests/test_light_install.py) checks the install itself.
"""

from __future__ import annotations

import importlib.machinery
import sys

# Import names of what the extras bring that the light install does not (pyproject.toml: local, hf, pictures).
HIDDEN = frozenset({
    "xllamacpp", "gguf",                                                           # local
    "torch", "transformers", "accelerate", "langchain_huggingface", "llguidance",  # hf
    "huggingface_hub", "tokenizers", "safetensors",                                # hf, through transformers
    "pygraphviz",                                                                  # pictures
})


class _WithoutExtras(importlib.machinery.PathFinder):
    """sys.path's finder, blind to HIDDEN."""

    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname.partition(".")[0] in HIDDEN:
            return None
        return super().find_spec(fullname, path, target)


def hide() -> None:
    already = sorted(name for name in sys.modules if name.partition(".")[0] in HIDDEN)
    assert not already, f"imported before they could be hidden: {already}"
    sys.meta_path[:] = [_WithoutExtras if finder is importlib.machinery.PathFinder else finder
                        for finder in sys.meta_path]


if __name__ == "__main__":
    hide()
    from hierplan.cli.main import main

    code = main(sys.argv[1:])
    loaded = sorted(name for name in sys.modules if name.partition(".")[0] in HIDDEN)
    assert not loaded, loaded  # unreachable unless a finder other than sys.path's found them
    sys.exit(code)

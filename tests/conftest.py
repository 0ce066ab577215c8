"""Test isolation: user directories in tmp, and a guard that fails any real model load unless marked."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_user_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("HIERPLAN_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("HIERPLAN_DB", raising=False)
    monkeypatch.delenv("HIERPLAN_MODEL", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(autouse=True)
def _guard_real_model_loads(request, monkeypatch):
    """Every weight load goes through llamacpp_engine._load_engine (llama.cpp) or
    transformers_engine._from_pretrained (transformers); refuse both unless the test is marked."""
    if request.node.get_closest_marker("real_model"):
        return
    from hierplan.models.hf import engine as transformers_engine
    from hierplan.models.llamacpp import engine as llamacpp_engine

    def refuse(*args, **kwargs):
        raise AssertionError(
            f"{request.node.nodeid} tried to load real model weights; use a fake chat model "
            "or mark the test @pytest.mark.real_model"
        )

    monkeypatch.setattr(llamacpp_engine, "_load_engine", refuse)
    monkeypatch.setattr(llamacpp_engine, "_engines", {})  # an engine a marked test loaded is not reused here
    monkeypatch.setattr(transformers_engine, "_from_pretrained", refuse)


@pytest.fixture
def models(monkeypatch):
    """For in-process CLI tests: every model the CLI loads is the next scripted fake (or the exception) in
    ``scripts``; ``made`` records each fake, so tests can count its calls."""
    from fakes import ScriptedChatModel

    scripts: list = []
    made: list = []

    def fake_load(model=None, **kwargs):
        script = scripts.pop(0) if scripts else {}
        if isinstance(script, BaseException):
            raise script
        made.append(ScriptedChatModel(script=script))
        return made[-1]

    import hierplan.models

    monkeypatch.setattr(hierplan.models, "load_chat_model", fake_load, raising=False)
    return scripts, made

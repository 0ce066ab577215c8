"""`hierplan serve`'s own errors, in-process: each is one line and an exit code, before any server starts."""

from __future__ import annotations

import importlib.util

import pytest

from hierplan.cli.main import main


def test_serve_without_the_server_extra_says_what_to_install(monkeypatch, capsys):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "langgraph_cli" else real(name, *a))
    assert main(["serve"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == "hierplan: error: hierplan serve needs LangGraph Server: pip install 'hierplan[server]'"


def test_serve_takes_only_a_postgres_database(tmp_path, capsys):
    assert main(["serve", "--db", str(tmp_path / "runs.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "postgresql://" in err


def test_a_postgres_url_that_does_not_connect_is_one_line_without_the_password(capsys):
    pytest.importorskip("psycopg")
    from server_fixtures import free_port

    assert main(["serve", "--port", str(free_port()),
                 "--db", "postgresql://hier:s3cret-pw@127.0.0.1:1/runs?connect_timeout=2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot connect to postgresql://hier:***@127.0.0.1:1/runs" in err
    assert "s3cret-pw" not in err


def test_serve_writes_a_langgraph_json_with_the_checkpointer_entry_only_for_postgres(tmp_path):
    from hierplan.server.launch import ServeSpec, langgraph_config

    plain = langgraph_config(ServeSpec(workdir=tmp_path))
    assert plain["graphs"] == {"hierplan": "hierplan.server:make_graph"} and "checkpointer" not in plain
    on_pg = langgraph_config(ServeSpec(workdir=tmp_path, db="postgresql://u:pw@h/db"))
    assert on_pg["checkpointer"] == {"path": "hierplan.server.checkpointer.postgres_checkpointer"}
    assert "pw" not in str(on_pg)


def test_serve_refuses_a_port_in_use_instead_of_moving_silently(capsys):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"cannot listen on 127.0.0.1:{port}" in err


def test_serve_takes_the_run_options_and_passes_only_those_given_as_defaults():
    from hierplan.cli.main import build_parser
    from hierplan.cli.serve_cmd import server_defaults

    args = build_parser().parse_args(["serve", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
                                      "--temperature", "0", "--max-replans", "0", "--sequential", "--approve"])
    assert server_defaults(args) == {"model": "m", "base_url": "http://127.0.0.1:9/v1", "temperature": 0,
                                     "max_replans": 0, "parallel": False, "approve": True}
    assert server_defaults(build_parser().parse_args(["serve"])) == {}


def test_serve_refuses_a_base_url_with_a_password(capsys):
    assert main(["serve", "--base-url", "http://u:s3cret-pw@127.0.0.1:9/v1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--base-url must not hold a password" in err and "s3cret-pw" not in err

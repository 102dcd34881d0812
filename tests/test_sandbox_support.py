"""Where the machine cannot build the page sandbox, the verifier says so once, with what protection remains."""

from handbook.verify import sandbox


def test_a_missing_sandbox_is_said_once_with_what_remains(monkeypatch, capsys):
    monkeypatch.setattr(sandbox, "_probe_namespaces", lambda: "not running as root (test)")
    sandbox.support.cache_clear()
    try:
        first = sandbox.support()
        second = sandbox.support()
        err = capsys.readouterr().err
    finally:
        monkeypatch.undo()
        sandbox.support.cache_clear()
    assert first is second and not first.namespaces and not first.full
    assert err.count("WARNING: the page sandbox is not available: not running as root (test)") == 1, err
    assert err.count("WARNING: what remains: pages still run in their own session") == 1, err
    assert "Do not verify pages you have not read on this machine." in err

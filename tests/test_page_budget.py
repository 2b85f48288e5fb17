"""Page parameters pass the CLI's budgets (issue #49, P1/H2): a page whose -p run sizes take it beyond the limits
stops, before any kernel starts, with one line; within them, or with --yes, it is planned no differently."""

import pytest

from olr_book.build import page_budget
from olr_book.execute import BuildContext
from olr_book.manifest import load_pages, project_root, select_pages
from olr_core.budget import BudgetError
from olr_core.cli import main


@pytest.mark.parametrize("seeds", ["1000000000", "30000"])
def test_a_page_beyond_the_budget_stops_before_computing_with_one_line(seeds, tmp_path, capsys, monkeypatch):
    import olr_book.execute

    started = []
    monkeypatch.setattr(olr_book.execute.PageProcess, "__init__", lambda *a, **k: started.append(a))
    assert main(["notebook", "baselines", "-p", f"seeds={seeds}", "-o", str(tmp_path / "x.ipynb")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"olr: error: page baselines with -p seeds={seeds} plans") and err.count("\n") == 1
    assert "nothing was started" in err and "--yes" in err and not started


def test_yes_or_a_profile_sized_page_passes():
    root = project_root()
    context = BuildContext.create(root, "quick", None)
    page, = select_pages(load_pages(root), "baselines")
    params = page.parameters("quick")
    page_budget(context, page, params, {}, approved=False)                  # the profile's own sizes
    page_budget(context, page, {**params, "seeds": 30000}, {"seeds": 30000}, approved=True)
    with pytest.raises(BudgetError):
        page_budget(context, page, {**params, "seeds": 30000}, {"seeds": 30000}, approved=False)


def test_dask_at_an_http_port_fails_within_10_s_with_one_line_and_a_scheduler_passes():
    import http.server
    import socketserver
    import threading
    import time

    from olr_core.experiments.runner import dask_scheduler

    server = socketserver.TCPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    started = time.monotonic()
    with pytest.raises(ValueError) as refused:
        with dask_scheduler(f"tcp://127.0.0.1:{server.server_address[1]}"):
            pass
    server.shutdown()
    assert time.monotonic() - started < 10 and "\n" not in str(refused.value)
    assert "not a Dask scheduler" in str(refused.value) or "no Dask scheduler" in str(refused.value)
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=0, processes=False, protocol="tcp", dashboard_address=None) as cluster:
        with dask_scheduler(cluster.scheduler_address) as address:
            assert address == cluster.scheduler_address

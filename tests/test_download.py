import hashlib
import http.server
import threading
from dataclasses import replace

import pytest

from olr_core.data.download import ObtainManually, download
from olr_core.data.registry import get_spec


@pytest.fixture
def local_server(tmp_path):
    """A loopback HTTP server serving tmp_path (stops by itself at the end of the test)."""
    handler = lambda *a, **k: http.server.SimpleHTTPRequestHandler(*a, directory=str(tmp_path), **k)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_download_verifies_the_checksum(tmp_path, local_server):
    payload = b"1 qid:1 1:0.5\n"
    (tmp_path / "set.txt").write_bytes(payload)
    good = replace(get_spec("mq2008"), url=f"{local_server}/set.txt",
                   url_sha256="sha256:" + hashlib.sha256(payload).hexdigest())
    target = tmp_path / "data"
    target.mkdir()
    assert download("mq2008", target, good).read_bytes() == payload
    bad = replace(good, url_sha256="sha256:" + "0" * 64)
    with pytest.raises(ConnectionError, match="could not download"):
        download("mq2008", tmp_path / "data", replace(bad, dirnames=("other",)))


def test_sets_without_a_direct_url_explain_how_to_obtain_them(tmp_path):
    with pytest.raises(ObtainManually, match="Webscope"):
        download("yahoo", tmp_path)
    with pytest.raises(ObtainManually, match="generated"):
        download("synth-mq", tmp_path)

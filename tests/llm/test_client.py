"""LLMClient against a real local HTTP server speaking OpenAI chat completions.

:class:`ChatServer` is a threaded ``http.server`` whose replies each test scripts, so
retries, timeouts, HTTP errors, the cache and the repair round are exercised over real
sockets. ``test_llm_extractor.py`` reuses it.
"""
from __future__ import annotations

import importlib.util
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml

from raylake.config import LLMConfig
from raylake.errors import LLMError
from raylake.intent.model import IntentGraph
from raylake.llm import LLMClient, extract_json

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the default backlog of 5 drops concurrent connects (1 s SYN retry)


class ChatServer:
    """A local ``/v1`` endpoint: ``GET /v1/models`` and scripted ``POST /v1/chat/completions``.

    ``script`` holds one behaviour per chat request, consumed in order: a string (HTTP 200
    with that content), ``("status", code)``, ``("sleep", seconds)`` or ``("raw", body)``
    (HTTP 200 with that JSON body). With the script
    empty it echoes the last user message as ``echo:<text>``. ``chats`` records the JSON
    body of every chat request, ``headers`` their headers.
    """

    def __init__(self, models=("test-model",)):
        self.models = list(models)
        self.script: list = []
        self.chats: list[dict] = []
        self.headers: list[dict] = []
        self.model_calls = 0
        self.release = threading.Event()
        self._lock = threading.Lock()
        self.httpd = _Server(("127.0.0.1", 0), self._handler())
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.release.set()  # wake handlers sleeping past a client timeout
        self.httpd.shutdown()
        self.httpd.server_close()

    def _next(self, body: dict):
        with self._lock:
            self.chats.append(body)
            if self.script:
                return self.script.pop(0)
        return "echo:" + body["messages"][-1]["content"]

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _send(self, status: int, obj) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                if self.path != "/v1/models":
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                with server._lock:
                    server.model_calls += 1
                self._send(200, {"object": "list", "data": [{"id": m, "object": "model"} for m in server.models]})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path != "/v1/chat/completions":
                    return self._send(404, {"error": {"message": f"no route {self.path}"}})
                with server._lock:
                    server.headers.append(dict(self.headers))
                step = server._next(body)
                if isinstance(step, tuple) and step[0] == "status":
                    return self._send(step[1], {"error": {"message": f"scripted\nfailure {step[1]}"}})
                if isinstance(step, tuple) and step[0] == "raw":
                    return self._send(200, step[1])
                if isinstance(step, tuple) and step[0] == "sleep":
                    server.release.wait(step[1])
                    step = "late"
                self._send(200, {
                    "id": "chatcmpl-1", "object": "chat.completion", "model": body["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": step}, "finish_reason": "stop"}],
                })

        return Handler


@pytest.fixture
def server():
    s = ChatServer()
    yield s
    s.close()


def make_client(url: str, **kw) -> LLMClient:
    kw.setdefault("model", "test-model")
    client = LLMClient(LLMConfig(base_url=url, **kw))
    client.retry_backoff_s = 0.01
    return client


GOOD = {"trees": [{"tree_id": "t1", "entity": "University", "attributes": [{"attribute_id": "a1", "name": "state", "values": ["California"]}]}], "joins": []}


# --------------------------------------------------------------------------- chat


def test_chat_sends_an_openai_request_with_the_bearer_key(server):
    client = make_client(server.url, api_key="sk-test")
    assert client.available
    assert client.chat([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}], max_tokens=7) == "echo:hi"
    body, headers = server.chats[0], server.headers[0]
    assert body["model"] == "test-model" and body["temperature"] == 0.0 and body["max_tokens"] == 7
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert headers["Authorization"] == "Bearer sk-test"


def test_unconfigured_model_is_the_first_served_one(server):
    server.models = ["served-a", "served-b"]
    client = make_client(server.url, model=None)
    client.chat("one")
    client.chat("two")
    assert [c["model"] for c in server.chats] == ["served-a", "served-a"]
    assert server.model_calls == 1


def test_unconfigured_endpoint_is_a_clear_error():
    client = LLMClient(LLMConfig(base_url=None, model="m"))
    assert not client.available
    with pytest.raises(LLMError, match="RAYLAKE_LLM_BASE_URL"):
        client.chat("hi")


# --------------------------------------------------------------------------- JSON replies


@pytest.mark.parametrize(
    "reply",
    [
        json.dumps(GOOD),
        "```json\n" + json.dumps(GOOD, indent=2) + "\n```",
        "Here is the intent graph:\n```\n" + json.dumps(GOOD) + "\n```\nHope this helps.",
        "Sure! " + json.dumps(GOOD) + " Let me know if you need more.",
    ],
    ids=["plain", "json-fence", "bare-fence-with-prose", "prose-around"],
)
def test_complete_json_tolerates_fences_and_prose(server, reply):
    server.script = [reply]
    graph = make_client(server.url).complete_json("q", IntentGraph.from_json)
    assert graph.to_json() == GOOD
    assert len(server.chats) == 1


def test_malformed_json_gets_one_repair_round(server):
    bad = '{"trees": [{"tree_id": "t1", "entity": "University" "attributes": []}]'
    server.script = [bad, json.dumps(GOOD)]
    graph = make_client(server.url).complete_json("extract it", IntentGraph.from_json)
    assert graph.trees[0].entity == "University"
    repair = server.chats[1]["messages"]
    assert repair[0] == {"role": "user", "content": "extract it"}
    assert repair[1] == {"role": "assistant", "content": bad}
    assert "not valid JSON" in repair[2]["content"] and "delimiter" in repair[2]["content"]


def test_validation_error_is_quoted_in_the_repair_round(server):
    broken = dict(GOOD, joins=[{"from_tree": "t1", "from_attribute": "a1", "to_tree": "t9", "to_attribute": "a1"}])
    server.script = [json.dumps(broken), json.dumps(GOOD)]
    make_client(server.url).complete_json("q", IntentGraph.from_json)
    assert "unknown tree 't9'" in server.chats[1]["messages"][-1]["content"]


def test_two_bad_replies_raise_llm_error(server):
    server.script = ["no json here", "still {not json"]
    with pytest.raises(LLMError, match=r"LLM reply is not valid JSON: .*\(after one repair round\)$") as info:
        make_client(server.url).complete_json("q", IntentGraph.from_json)
    assert "\n" not in str(info.value)
    assert len(server.chats) == 2


def test_no_repair_round_when_disabled(server):
    server.script = ["[1, 2]"]
    with pytest.raises(LLMError, match="not valid JSON"):
        make_client(server.url).complete_json("q", IntentGraph.from_json, repair=False)
    assert len(server.chats) == 1


def test_extract_json_errors_name_the_problem():
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json("nothing to see")
    with pytest.raises(ValueError, match="Expecting"):
        extract_json('{"a": 1,')
    assert extract_json('[1] then {"a": {"b": 2}} and {"c": 3}') == {"a": {"b": 2}}


# --------------------------------------------------------------------------- HTTP failures


def test_5xx_is_retried_then_succeeds(server):
    server.script = [("status", 500), ("status", 503), "fine"]
    assert make_client(server.url, max_retries=2).chat("q") == "fine"
    assert len(server.chats) == 3


def test_persistent_5xx_raises_after_all_retries(server):
    server.script = [("status", 500)] * 3
    with pytest.raises(LLMError) as info:
        make_client(server.url, max_retries=2).chat("q")
    msg = str(info.value)
    assert msg.startswith(f"LLM returned HTTP 500 from {server.url}/chat/completions: ") and msg.endswith("(after 3 attempts)")
    assert "\n" not in msg
    assert len(server.chats) == 3


def test_401_is_not_retried(server):
    server.script = [("status", 401), "never sent"]
    with pytest.raises(LLMError, match=r"HTTP 401 .*RAYLAKE_LLM_API_KEY"):
        make_client(server.url, max_retries=3).chat("q")
    assert len(server.chats) == 1


def test_429_is_retried(server):
    server.script = [("status", 429), "ok"]
    assert make_client(server.url, max_retries=1).chat("q") == "ok"


def test_slow_server_times_out_within_the_timeout(server):
    server.script = [("sleep", 10)]
    start = time.monotonic()
    with pytest.raises(LLMError, match=r"did not answer within 0.3 s"):
        make_client(server.url, timeout_s=0.3, max_retries=0).chat("q")
    assert time.monotonic() - start < 1.5


def test_connection_refused_is_unreachable():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(LLMError, match=rf"^LLM endpoint {url}/chat/completions unreachable: .*\(after 2 attempts\)$"):
        make_client(url, max_retries=1).chat("q")


# --------------------------------------------------------------------------- cache


def test_cache_memory_disk_and_model_key(server, tmp_path):
    cache = str(tmp_path / "cache")
    first = make_client(server.url, cache_dir=cache)
    assert first.chat("q") == "echo:q"
    assert first.chat("q") == "echo:q"
    assert len(server.chats) == 1  # the second call came from memory
    assert make_client(server.url, cache_dir=cache).chat("q") == "echo:q"
    assert len(server.chats) == 1  # a new client reads the disk cache
    make_client(server.url, cache_dir=cache, model="other-model").chat("q")
    make_client(server.url, cache_dir=cache).chat("q", max_tokens=5)
    assert len(server.chats) == 3  # model and parameters are part of the key
    files = [os.path.join(d, f) for d, _, fs in os.walk(cache) for f in fs]
    assert len(files) == 3 and not any(os.path.basename(f).startswith(".tmp-") for f in files)
    assert json.load(open(files[0]))["reply"] == "echo:q"


def test_sampling_above_zero_is_not_cached(server, tmp_path):
    client = make_client(server.url, cache_dir=str(tmp_path))
    client.chat("q", temperature=0.7)
    client.chat("q", temperature=0.7)
    assert len(server.chats) == 2
    assert not os.listdir(tmp_path)


def test_unwritable_cache_does_not_fail_the_call(server, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    assert make_client(server.url, cache_dir=str(blocker / "cache")).chat("q") == "echo:q"


def test_concurrent_calls_from_threads(server, tmp_path):
    client = make_client(server.url, cache_dir=str(tmp_path))
    results: dict[int, str] = {}

    def ask(i: int) -> None:
        results[i] = client.chat(f"question {i % 8}")

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(32)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {i: f"echo:question {i % 8}" for i in range(32)}
    assert len([f for _, _, fs in os.walk(tmp_path) for f in fs]) == 8


# --------------------------------------------------------------------------- CLI check


def test_cli_check_lists_the_models(server, monkeypatch, capsys):
    import argparse

    from raylake.config import RaylakeContext
    from raylake.llm.cli import register

    monkeypatch.setattr(RaylakeContext, "_current", RaylakeContext(llm=LLMConfig(base_url=server.url, model="test-model")))
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["llm", "check", "--json"])
    assert args.func(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["models"] == ["test-model"] and out["model"] == "test-model" and out["base_url"] == server.url

    monkeypatch.setattr(RaylakeContext, "_current", RaylakeContext(llm=LLMConfig(base_url=server.url, model="absent")))
    with pytest.raises(LLMError, match="RAYLAKE_LLM_MODEL=absent is not served"):
        args.func(args)


# --------------------------------------------------------------------------- vLLM serving (no vLLM here)

needs_no_vllm = pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed")


@needs_no_vllm
def test_serve_module_and_app_build_without_vllm():
    from raylake.llm.serve import build_app

    assert type(build_app("/models/m", name="m", num_gpus=2, tensor_parallel_size=2)).__name__ == "Application"
    assert "vllm" not in sys.modules
    with pytest.raises(LLMError, match="pass num_gpus=2"):
        build_app("/models/m", name="m", num_gpus=1, tensor_parallel_size=2)


@needs_no_vllm
def test_serve_vllm_without_vllm_is_a_clear_error():
    from raylake.llm.serve import serve_vllm

    with pytest.raises(LLMError, match=r"install raylake\[gpu\] on the GPU nodes"):
        serve_vllm("/models/m", name="m")


def test_llm_serve_binds_loopback_unless_host_says_otherwise(monkeypatch, capsys):
    import argparse
    import inspect

    import raylake.llm.serve as llm_serve
    from raylake.llm.cli import register

    assert llm_serve.http_options() == {"host": "127.0.0.1", "port": 8000}
    assert llm_serve.http_options("0.0.0.0", 9001) == {"host": "0.0.0.0", "port": 9001}
    with pytest.raises(LLMError, match=r"--port must be in 1\.\.65535, got 0"):
        llm_serve.http_options(port=0)

    assert inspect.signature(llm_serve.serve_vllm).parameters["host"].default == "127.0.0.1"  # from Python too
    calls = []
    monkeypatch.setattr(llm_serve, "serve_vllm", lambda path, **kw: calls.append(kw) or f"http://{kw['host']}:{kw['port']}/v1")
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    # --address: the command returns at once instead of holding a local Ray until Ctrl-C
    for argv, host in ((["llm", "serve", "/models/m", "--json", "--address", "auto"], "127.0.0.1"),
                       (["llm", "serve", "/models/m", "--json", "--address", "auto", "--host", "0.0.0.0", "--port", "9001"], "0.0.0.0")):
        args = parser.parse_args(argv)
        assert args.func(args) == 0
        assert calls[-1]["host"] == host
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["base_url"] == "http://0.0.0.0:9001/v1"
    with pytest.raises(SystemExit):
        parser.parse_args(["llm", "serve", "--help"])
    assert "exposes the model to that network with no token" in " ".join(capsys.readouterr().out.split())


def test_served_reply_parses_in_the_client(server):
    """The deployment's OpenAI bodies are what the client reads."""
    from raylake.llm.serve import check_request, completion_body, sampling_kwargs

    body = {"model": "m", "messages": [{"role": "user", "content": "q"}], "temperature": 0, "max_tokens": 9, "stop": "##"}
    assert check_request(body, "m") is None
    assert check_request(dict(body, model="x"), "m")[0] == 404
    assert check_request(dict(body, stream=True), "m")[0] == 400
    assert sampling_kwargs(body) == {"temperature": 0.0, "max_tokens": 9, "stop": ["##"]}
    served = completion_body("m", "```json\n" + json.dumps(GOOD) + "\n```", "stop", 12, 30)
    assert served["usage"]["total_tokens"] == 42
    server.script = [("raw", served)]
    assert make_client(server.url).complete_json("q", IntentGraph.from_json).to_json() == GOOD


def test_serve_config_builds_the_app():
    from raylake.llm.serve import app_builder

    config = yaml.safe_load(open(os.path.join(ROOT, "cluster", "serve-vllm.yaml")))
    (app,) = config["applications"]
    assert app["import_path"] == "raylake.llm.serve:app_builder"
    assert app["deployments"][0]["name"] == app["args"]["name"]
    assert type(app_builder(app["args"])).__name__ == "Application"
    workers = yaml.safe_load(open(os.path.join(ROOT, "cluster", "llm-gpu-workers.yaml")))
    assert workers["available_node_types"]["llm_gpu"]["resources"]["GPU"] >= 1

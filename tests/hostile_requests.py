"""Hostile model servers and endpoints (hardening 3): tokens echoed without a known prefix, answers of the wrong types, bodies
that never end or drip, addresses where nothing listens. The servers run on loopback in this (the test) process."""
import json
import socket
import socketserver
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

from hostile_corpus import Case, _cfg

CANARY = "Zx9cAnArY7q2w8e4r6t1y3u5i0oP"          # a token with no known prefix: only its value can be redacted


class _Threaded(socketserver.ThreadingMixIn, HTTPServer):
    daemon_threads = True


def _answer(handler, status: int, body: bytes, content_type="application/json"):
    handler.send_response(status); handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body))); handler.end_headers(); handler.wfile.write(body)


def _chat(content, usage=None, logprobs=None) -> bytes:
    choice = {"message": {"content": content}, **({"logprobs": logprobs} if logprobs is not None else {})}
    return json.dumps({"choices": [choice], **({"usage": usage} if usage is not None else {})}).encode()


class Hostile(BaseHTTPRequestHandler):
    "One hostile behaviour per path prefix: /<behaviour>/v1/chat/completions."
    protocol_version = "HTTP/1.1"
    hits = 0

    def log_message(self, *a): pass

    def do_GET(self):                     # /echo_models/…: the token (and a terminal escape) as the served model's name
        echo = self.path.startswith("/echo_models/")
        name = f"served-{self.headers.get('Authorization', '').split()[-1]}\x1b[31mRED" if echo else "m"
        _answer(self, 200, json.dumps({"data": [{"id": name}]}).encode())

    def do_POST(self):
        type(self).hits += 1
        n = int(self.headers.get("Content-Length") or 0)
        self._body = self.rfile.read(n)
        auth = self.headers.get("Authorization", "")
        kind = self.path.strip("/").split("/")[0]
        try: getattr(self, "_" + kind)(auth)
        except (BrokenPipeError, ConnectionResetError): pass

    def _echo_error(self, auth):          # the token in a 401 body, plain and in JSON
        _answer(self, 401, json.dumps({"error": {"message": f"invalid key {auth.removeprefix('Bearer ')}; header was {auth}"}}).encode())

    def _echo_5xx(self, auth):
        _answer(self, 503, f"overloaded; your key {auth.split()[-1]} is rate limited".encode(), "text/plain")

    def _echo_answer(self, auth):         # the token inside an otherwise valid answer
        _answer(self, 200, _chat(json.dumps({"risk": 0.2, "care": 0.4, "note": auth}), {"prompt_tokens": 5, "completion_tokens": 3}))

    def _status_echo(self, auth):         # the request (the prompt) as a malformed status line
        self.wfile.write(b"HTTP/1.1 " + self._body[:60000].replace(b"\r", b" ").replace(b"\n", b" ") + b"\r\n\r\n"); self.wfile.flush()

    def _number_content(self, auth): _answer(self, 200, _chat(5))
    def _string_usage(self, auth): _answer(self, 200, _chat('{"risk": 0.2, "care": 0.4}', usage="many"))
    def _not_json(self, auth): _answer(self, 200, b"<html>" + b"x" * 1000)
    def _deep_json(self, auth): _answer(self, 200, b"[" * 200_000)
    def _int_token(self, auth):
        _answer(self, 200, _chat(None, logprobs={"content": [{"top_logprobs": [{"token": 7, "logprob": -0.1}]}]}))

    def _endless(self, auth):
        self.send_response(200); self.send_header("Transfer-Encoding", "chunked"); self.end_headers()
        chunk = b"10000\r\n" + b"x" * 65536 + b"\r\n"
        while True: self.wfile.write(chunk)

    def _drip(self, auth):
        self.send_response(200); self.send_header("Content-Length", "100000"); self.end_headers()
        for _ in range(100_000): self.wfile.write(b" "); self.wfile.flush(); time.sleep(0.5)

    def _slow_headers(self, auth):
        self.wfile.write(b"HTTP/1.1 200 OK\r\n"); self.wfile.flush()
        for _ in range(1000): self.wfile.write(b"X-Drip: a\r\n"); self.wfile.flush(); time.sleep(0.5)

    def _huge_declared(self, auth):
        self.send_response(200); self.send_header("Content-Length", str(10 ** 12)); self.end_headers(); self.wfile.write(b"{")


def serve() -> int:
    "Start the hostile server (once per process); its port."
    if getattr(serve, "port", None) is None:
        srv = _Threaded(("127.0.0.1", 0), Hostile)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        serve.port = srv.server_port
    return serve.port


def dead_port() -> int:
    "A loopback port where nothing listens (bound, then closed)."
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0)); return s.getsockname()[1]


def model_cfg(t: Path, base_url: str, mode: str = "json", **opts) -> Path:
    o = ", ".join(f"{k}: {json.dumps(v)}" for k, v in {"max_retries": 0, "timeout_s": 5, **opts}.items())
    return _cfg(t, f"reasoning: {{models: [{{id: m, backend: openai, scoring_mode: {mode}, base_url: '{base_url}', {o}}}]}}\n")


def cases(t: Path) -> list:
    t.mkdir(parents=True, exist_ok=True)
    port, dead = serve(), dead_port()
    url = lambda kind: f"http://127.0.0.1:{port}/{kind}/v1"
    run = lambda name, cfg, **kw: ["run", cfg, "--no-report", "--no-validity", "--out", t / f"{name}_run", "--cache", t / f"{name}.sqlite", *kw.get("extra", ())]
    env = {"CB_CANARY_TOKEN": CANARY}
    out = []
    add = lambda *a, **k: out.append(Case(*a, **k))
    # secrets by value: a token without a known prefix, echoed by the server, appears nowhere (stdout, stderr; files: test_requests)
    for kind in ("echo_error", "echo_5xx"):
        add(f"h26_requests_{kind}_token", run(kind, model_cfg(t, url(kind), api_key_env="CB_CANARY_TOKEN")), 1, forbid=(CANARY,), env=env)
    add("h26_requests_echo_answer_token", run("echo_answer", model_cfg(t, url("echo_answer"), api_key_env="CB_CANARY_TOKEN")), 0,
        forbid=(CANARY,), env=env)
    # answers of the wrong types: a failure of each call (bad_response), never a traceback or a failed batch
    for kind in ("number_content", "string_usage", "not_json", "deep_json"):
        add(f"h26_requests_{kind}", run(kind, model_cfg(t, url(kind))), 1)
    add("h26_requests_int_logprob_token", run("int_token", model_cfg(t, url("int_token"), mode="logprob")), 1)
    # bounded I/O: an endless body, a drip of body or headers, an absurd Content-Length end each call within its deadline
    add("h26_requests_endless_body", run("endless", model_cfg(t, url("endless"), max_answer_bytes=1 << 20)), 1)
    add("h26_requests_drip_body", run("drip", model_cfg(t, url("drip"), timeout_s=1, max_concurrency=8)), 1)
    add("h26_requests_drip_headers", run("slow_headers", model_cfg(t, url("slow_headers"), timeout_s=1, max_concurrency=8)), 1)
    add("h26_requests_huge_content_length", run("huge", model_cfg(t, url("huge_declared"))), 1)
    # a dead endpoint fails fast, naming the address and the reason, before any call is planned
    add("h26_requests_dead_endpoint_run", run("dead", model_cfg(t, f"http://127.0.0.1:{dead}/v1", max_retries=5, timeout_s=60)), 2,
        f"cannot reach http://127.0.0.1:{dead}: connection refused")
    add("h26_requests_dead_endpoint_validate", ["validate", model_cfg(t, f"http://127.0.0.1:{dead}/v1"), "--check-endpoints"], 2,
        f"cannot reach http://127.0.0.1:{dead}: connection refused")
    dead_em = _cfg(t, f"reasoning: {{models: [{{id: m, backend: openai, base_url: 'http://127.0.0.1:{dead}/v1'}}], "
                      "emulation: {raters: [{id: a, persona: p}, {id: b, persona: q}]}}\n")
    add("h26_requests_dead_endpoint_emulate", ["emulate", dead_em, "--out", t / "dead_emulation", "--cache", t / "dead_em.sqlite"], 2,
        f"cannot reach http://127.0.0.1:{dead}: connection refused")
    add("h26_requests_token_as_a_served_model_name", ["validate", model_cfg(t, url("echo_models"), api_key_env="CB_CANARY_TOKEN"),
                                                      "--check-endpoints"], 0, forbid=(CANARY, "\x1b"), env=env)
    add("h26_requests_prompt_as_a_status_line", run("status_echo", model_cfg(t, url("status_echo"))), 1, forbid=("lives alone", "LDL 190"))
    add("h26_requests_live_endpoint_validate", ["validate", model_cfg(t, url("echo_answer")), "--check-endpoints"], 0)
    add("h26_requests_max_answer_bytes_too_small", ["validate", model_cfg(t, url("echo_answer"), max_answer_bytes=10)], 2,
        "max_answer_bytes")
    add("h26_requests_timeout_of_a_year", ["validate", model_cfg(t, url("echo_answer"), timeout_s=31_536_000)], 2, "timeout_s <= 86400")
    add("h26_requests_max_new_tokens_billion", ["validate", _cfg(t, "reasoning: {models: [{id: m}], generation: {max_new_tokens: 1000000000}}\n")], 2,
        "1 <= max_new_tokens <= 131,072")
    add("h26_requests_batch_size_million", ["validate", _cfg(t, "reasoning: {models: [{id: m}], batch_size: 1000000}\n")], 2,
        "batch_size must be at most 4,096")
    return out

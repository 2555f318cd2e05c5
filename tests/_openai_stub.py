"""A scripted OpenAI-compatible chat server for the tests of the stacks that call a model (verifiers,
the docs' snippets): it answers each task by a script, so rewards and turns are known exactly.

``/v1/chat/completions`` (plain or streamed): the answer the script holds for the task whose query
opens the conversation, at the turn the conversation is at (the last one once the script runs out).
"""
from __future__ import annotations

import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _text(m: dict) -> str:
    return m["content"] if isinstance(m["content"], str) else "".join(p.get("text", "") for p in m["content"])


class _Handler(BaseHTTPRequestHandler):
    script: dict = {}  # task query -> answers by turn (set per server: a subclass each)

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        msgs = body["messages"]
        first = next(_text(m) for m in msgs if m["role"] == "user")
        turn = sum(m["role"] == "assistant" for m in msgs)
        answers = next((a for query, a in self.script.items() if query in first), ["no answer for this task"])
        reply = {"role": "assistant", "content": answers[min(turn, len(answers) - 1)]}
        head = {"id": "stub", "created": 0, "model": body["model"]}
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if body.get("stream"):
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            chunk = {**head, "object": "chat.completion.chunk"}
            for event in ({**chunk, "choices": [{"index": 0, "delta": reply, "finish_reason": None}]},
                          {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                          {**chunk, "choices": [], "usage": usage}):
                self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")
            return
        data = json.dumps({**head, "object": "chat.completion", "usage": usage,
                           "choices": [{"index": 0, "message": reply, "finish_reason": "stop"}]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextlib.contextmanager
def openai_stub(script: dict, port: int = 0):
    """Serve ``script`` (task query -> the answers, by turn) on 127.0.0.1; yields the base URL (``.../v1``)."""
    handler = type("ScriptedHandler", (_Handler,), {"script": dict(script)})
    srv = ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=10)


def solutions_script(tasks) -> dict:
    """Each task answered right at the first turn (its library solution, fenced)."""
    return {t.query: [f"```python\n{t.library_solution}\n```"] for t in tasks}

"""The ceiling reference for bench_gate.py: a bare FastAPI app with one `async def` route, nothing else.

Served by the same uvicorn as `hfvet serve` (same log level and access log), it shows what one
worker of this HTTP stack does on this machine at the moment: the gate cannot beat it.
"""

from __future__ import annotations

from fastapi import FastAPI

app = FastAPI()


@app.get("/hello")
async def hello() -> dict[str, str]:
    return {"status": "ok"}

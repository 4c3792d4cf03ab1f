"""Seed A's and B's client lines, spawned by the official MCP Python SDK.

usage: python bare_engram.py PATH_TO_ENGRAM_BINARY

Seed A's users registered `{"command": "engram"}` with no arguments. This starts the
binary exactly so (by name, from PATH, no arguments) in a home laid out as A left it
(`memories.duckdb`, `graph.json`) and checks that A's tools are served and work; then in
a plain home with `ENGRAM_TOOLS=compat-b` that B's tool list is served. Exits non-zero on
the first failure and prints a pytest-style summary line.
"""

import asyncio
import json
import os
import sys
import tempfile

from mcp import Client
from mcp.client.stdio import StdioServerParameters

ENGRAM = os.path.abspath(sys.argv[1])
BIN_DIR = os.path.dirname(ENGRAM)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def data(result):
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def env(home, **extra):
    # The binary is found on PATH by name, as A's client line finds it.
    return {"ENGRAM_HOME": home, "HOME": home, "PATH": BIN_DIR, "ENGRAM_MODEL": "none",
            "ENGRAM_MAINTENANCE_INTERVAL_HOURS": "0", **extra}


async def seed_a_client_line(home):
    # A's data folder as found in the wild: the DuckDB file and the graph beside it.
    open(os.path.join(home, "memories.duckdb"), "wb").write(b"DUCK" + b"\0" * 60)
    json.dump({"directed": True, "multigraph": False, "graph": {}, "nodes": [], "links": []},
              open(os.path.join(home, "graph.json"), "w"))
    params = StdioServerParameters(command="engram", args=[], env=env(home))
    async with Client(params) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        check({"store_memory", "recall_memory", "session_handoff"} <= names, f"bare engram in A's home serves A's tools: {sorted(names)}")
        r = await c.call_tool("store_memory", {"content": "Prefer pytest over unittest", "importance": 0.7, "category": "strategy", "user_id": "a-user"})
        check(not r.is_error, r)
        mid = data(r)["memory_id"]
        r = data(await c.call_tool("recall_memory", {"query": "pytest", "user_id": "a-user", "top_k": 3}))
        check(r["memoriesFound"] >= 1 and r["memories"][0]["id"] == mid, r)


async def configured_profile(home):
    params = StdioServerParameters(command="engram", args=[], env=env(home, ENGRAM_TOOLS="compat-b"))
    async with Client(params) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        check({"remember", "recall", "reinforce", "correct", "link", "forget", "stats"} <= names, f"ENGRAM_TOOLS=compat-b: {sorted(names)}")
        r = await c.call_tool("remember", {"content": "B's client line works bare", "type": "knowledge", "importance": 6})
        check(not r.is_error, r)


async def main():
    passed, failed = [], []
    for name, flow in [("seed A client line", seed_a_client_line), ("ENGRAM_TOOLS profile", configured_profile)]:
        with tempfile.TemporaryDirectory() as home:
            try:
                await flow(home)
                passed.append(name)
                print(f"PASS {name}")
            except BaseException as e:  # noqa: BLE001 - report every flow
                failed.append(name)
                print(f"FAIL {name}: {type(e).__name__}: {e}", file=sys.stderr)
    print(f"{len(passed)} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)


asyncio.run(main())

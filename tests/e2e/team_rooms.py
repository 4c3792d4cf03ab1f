"""A team server through the official MCP Python SDK: two users' tokens in the SDK's HTTP
client, alice's private memory absent from bob's calls, the shared one seen by both with
its author, and a client without a token refused. Argument: the engram binary. The store is
the home's SQLite file, or ENGRAM_STORE when the caller sets it."""

import asyncio
import os
import re
import subprocess
import sys
import tempfile
import queue
import threading

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

ENGRAM = os.path.abspath(sys.argv[1])
PASSED = []


def check(cond, what):
    if not cond:
        raise AssertionError(what)
    PASSED.append(what)


def env(home):
    e = {"ENGRAM_HOME": home, "PATH": os.environ.get("PATH", ""), "ENGRAM_MAINTENANCE_INTERVAL_HOURS": "0"}
    if os.environ.get("ENGRAM_STORE"):
        e["ENGRAM_STORE"] = os.environ["ENGRAM_STORE"]
    return e


def add_user(home, name):
    out = subprocess.run([ENGRAM, "team", "user", "add", name], env=env(home), capture_output=True, text=True, check=True).stdout
    return next(w for w in out.split() if w.startswith("engram_"))


def start(home):
    proc = subprocess.Popen([ENGRAM, "serve", "--http", "127.0.0.1:0", "--tools", "core"], env=env(home), stderr=subprocess.PIPE, text=True)
    found = queue.Queue()

    def drain():
        for line in proc.stderr:
            m = re.search(r"MCP over HTTP at (http://\S+/mcp)", line)
            if m:
                found.put(m.group(1))
        found.put(None)

    threading.Thread(target=drain, daemon=True).start()
    url = found.get(timeout=120)
    check(url is not None, "the server names its address")
    return proc, url


def as_user(url, token):
    return Client(streamable_http_client(url, http_client=create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})))


def data(r):
    return r.structured_content


async def main():
    home = tempfile.mkdtemp(prefix="engram-team-")
    alice, bob = add_user(home, "alice"), add_user(home, "bob")
    proc, url = start(home)
    try:
        async with as_user(url, alice) as a:
            p = data(await a.call_tool("remember", {"content": "Alice's locker code is kumquat-42", "room": "private"}))
            s = data(await a.call_tool("remember", {"content": "The team ships kumquat builds with Helm", "room": "team"}))
            private_id = p["id"]
            check(s["id"] != private_id, "alice writes two memories")
        async with as_user(url, bob) as b:
            r = data(await b.call_tool("recall", {"query": "kumquat locker", "room": "private", "mode": "exhaustive"}))
            check(all("locker" not in h["content"] for h in r["hits"]), "bob's recall in private finds nothing of alice's")
            r = data(await b.call_tool("recall", {"query": "kumquat Helm", "room": "team"}))
            check(any(h.get("author") == "alice" and "Helm" in h["content"] for h in r["hits"]), "bob sees the shared memory with its author")
            e = await b.call_tool("forget", {"id": private_id})
            check(e.is_error and "locker" not in str(e.content), "bob cannot forget alice's private memory; it is not found")
            ctx = data(await b.call_tool("context", {"room": "private"}))
            check("locker" not in str(ctx), "bob's briefing of private holds nothing of alice's")
        async with as_user(url, alice) as a:
            r = data(await a.call_tool("recall", {"query": "kumquat locker", "room": "private", "mode": "exhaustive"}))
            check(any("locker" in h["content"] for h in r["hits"]), "alice still finds her private memory")
        refused = False
        try:
            async with Client(url) as c:
                await c.call_tool("recall", {"query": "kumquat"})
        except BaseException:
            refused = True
        check(refused, "a client without a token is refused")
    finally:
        proc.kill()
        proc.wait()
    print(f"{len(PASSED)} passed, 0 failed")


asyncio.run(main())

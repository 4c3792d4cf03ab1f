"""A seed B user's client line after `engram setup`, spawned by the official MCP Python SDK.

usage: python seed_b_switch.py PATH_TO_ENGRAM_BINARY

The home holds B's `MEMORY_PROTOCOL.md` (`@`-included from CLAUDE.md) and B's
`~/.claude.json` entry for `engram-mcp`. After `engram setup claude`, the entry is started
exactly as Claude Code starts it (command, args, env from the file): B's tools are served,
and `reinforce` with a malformed id among good ones reinforces the good ones and lists the
bad one in `unknown_ids`, as B did. Prints a pytest-style summary line.
"""

import asyncio
import json
import os
import subprocess
import sys
import tempfile

from mcp import Client
from mcp.client.stdio import StdioServerParameters

ENGRAM = os.path.abspath(sys.argv[1])


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def data(result):
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


async def b_user(root):
    user, home = os.path.join(root, "user"), os.path.join(root, "user", ".engram")
    os.makedirs(os.path.join(user, ".claude"))
    os.makedirs(home)
    protocol = os.path.join(home, "MEMORY_PROTOCOL.md")
    open(protocol, "w").write("# Memory Protocol (engram)\n- call consolidation_candidates\n")
    open(os.path.join(user, ".claude", "CLAUDE.md"), "w").write(f"# Memory Protocol (engram)\n\n@{protocol}\n")
    json.dump({"mcpServers": {"engram": {"type": "stdio", "command": "/gone/bin/engram-mcp", "args": [],
                                         "env": {"ENGRAM_PRELOAD": "background", "ENGRAM_IDLE_UNLOAD_SEC": "300"}}}},
              open(os.path.join(user, ".claude.json"), "w"))
    base = {"HOME": user, "PATH": "/nonexistent", "ENGRAM_MODEL": "none", "ENGRAM_MAINTENANCE_INTERVAL_HOURS": "0"}
    out = subprocess.run([ENGRAM, "setup", "claude", "--non-interactive", "--no-model"], env=base,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True)
    check(out.returncode == 0, out.stdout + out.stderr)
    entry = json.load(open(os.path.join(user, ".claude.json")))["mcpServers"]["engram"]
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env={**base, **entry.get("env", {})})
    async with Client(params) as c:
        names = {t.name for t in (await c.list_tools()).tools}
        check({"stats", "link", "consolidation_candidates", "mark_consolidated", "skill_candidates"} <= names,
              f"the entry setup wrote serves B's tools: {sorted(names)}")
        ids = []
        for text in ["Deploys go through the staging cluster first", "The user prefers tabs over spaces"]:
            r = await c.call_tool("remember", {"content": text, "type": "knowledge", "importance": 6})
            check(not r.is_error, r)
            ids.append(data(r)["id"])
        r = await c.call_tool("reinforce", {"ids": ids + ["nope"], "strength": 2})
        check(not r.is_error, f"reinforce with one malformed id: {r}")
        d = data(r)
        check(d["unknown_ids"] == ["nope"], d)
        check(len(d["reinforced"]) == 2, d)


async def main():
    passed, failed = [], []
    for name, flow in [("seed B user after setup", b_user)]:
        with tempfile.TemporaryDirectory() as root:
            try:
                await flow(root)
                passed.append(name)
                print(f"PASS {name}")
            except BaseException as e:  # noqa: BLE001 - report every flow
                failed.append(name)
                print(f"FAIL {name}: {type(e).__name__}: {e}", file=sys.stderr)
    print(f"{len(passed)} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)


asyncio.run(main())

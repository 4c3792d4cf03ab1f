"""End-to-end test of `engram mcp` and `engram serve --http` with the official MCP Python SDK.

usage: python mcp_e2e.py PATH_TO_ENGRAM_BINARY

Drives the real binary through each tool profile: remember -> recall -> reinforce ->
correct -> forget (in that profile's own tool names and argument shapes), checks that bad
input comes back as a tool error naming the field while the server keeps answering, and
that the compat-c tool list carries seed C's names and required fields. Exits non-zero on
the first failure and prints a pytest-style summary line.
"""

import asyncio
import json
import os
import queue
import re
import subprocess
import sys
import tempfile
import threading

from mcp import Client
from mcp.client.stdio import StdioServerParameters

ENGRAM = os.path.abspath(sys.argv[1])
PASSED = []
FAILED = []


def server_env(home, **extra):
    """The environment of every server this test starts: its home, and no maintenance run
    on a timer (it would consolidate the test's memories at a moment of its own choosing;
    the maintenance tools are called explicitly below)."""
    return {"ENGRAM_HOME": home, "PATH": os.environ.get("PATH", ""), "ENGRAM_MAINTENANCE_INTERVAL_HOURS": "0", **extra}


def describe(e):
    """The innermost errors of an exception (groups unwrapped), one line each."""
    if isinstance(e, BaseExceptionGroup):
        return "; ".join(describe(x) for x in e.exceptions)
    return f"{type(e).__name__}: {e}"


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def data(result):
    """The structured result of a tool call (falls back to parsing the text)."""
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


def text(result):
    return "".join(getattr(c, "text", "") for c in result.content)


async def call(client, name, args, expect_error=False):
    r = await client.call_tool(name, args)
    if expect_error:
        check(r.is_error, f"{name}({args}) should fail, got {text(r)[:300]}")
    else:
        check(not r.is_error, f"{name}({args}) failed: {text(r)[:500]}")
    return r


async def flow_native(c, room):
    r = data(await call(c, "remember", {"content": "We deploy with blue-green switches", "kind": "decision", "importance": 0.8, "room": room}))
    check(r["action"] == "created", r)
    first = r["id"]
    b = data(await call(c, "remember", {"content": "Blue-green needs two identical stacks", "room": room}))["id"]
    hits = data(await call(c, "recall", {"query": "blue-green deploy", "room": room}))
    check(hits["hits"] and hits["hits"][0]["id"] in (first, b), hits)
    for key in ("score", "relevance", "activation", "importance", "source", "created_at"):
        check(key in hits["hits"][0], f"hit lacks {key}")
    check("not instructions" in hits["notice"], "recall marks its hits as data")
    check(hits["hits"][0]["source"].startswith("mcp:"), hits["hits"][0]["source"])
    r = data(await call(c, "reinforce", {"ids": [first, b], "strength": 2}))
    check(r["reinforced"] == [first, b], r)
    r = data(await call(c, "correct", {"id": first, "content": "We deploy with canary releases", "reason": "changed in Q3"}))
    new = r["new_id"]
    hits = data(await call(c, "recall", {"query": "deploy", "room": room, "kind": "decision"}))
    check(hits["hits"][0]["id"] == new, hits)
    r = data(await call(c, "forget", {"id": b}))
    check(r["to"] == "trash", r)
    # Bad input: tool errors naming the field; the server keeps answering.
    e = await call(c, "remember", {"content": "x" * (64 * 1024 + 1), "room": room}, expect_error=True)
    check("content" in text(e) and "65536" in text(e), text(e))
    e = await call(c, "remember", {"content": "ok", "importance": 11}, expect_error=True)
    check("importance" in text(e), text(e))
    e = await call(c, "remember", {"content": "ok", "importance": "high"}, expect_error=True)
    check("importance" in text(e), text(e))
    e = await call(c, "remember", {}, expect_error=True)
    check("content" in text(e), text(e))
    e = await call(c, "recall", {"query": "x", "mode": "slow"}, expect_error=True)
    check("mode" in text(e), text(e))
    e = await call(c, "forget", {"id": 999999}, expect_error=True)
    check("#999999" in text(e), text(e))
    e = await call(c, "reinforce", {"ids": "notalist"}, expect_error=True)
    check("ids" in text(e), text(e))
    # Still serving.
    hits = data(await call(c, "recall", {"query": "canary", "room": room}))
    check(hits["hits"][0]["id"] == new, hits)
    return new


async def flow_context_and_hub(c, room):
    data(await call(c, "handoff", {"summary": "Auth half done", "completed": ["login form"], "next_steps": ["add password reset", "write login tests"], "room": room}))
    ctx = data(await call(c, "context", {"room": room, "max_bytes": 4096}))
    check("Auth half done" in ctx["text"], ctx["text"])
    check(ctx["bytes"] <= 4096, ctx)
    steps = {s["step"]: s["status"] for s in ctx["last_handoff"]["next_steps"]}
    check(steps == {"add password reset": "pending", "write login tests": "pending"}, steps)


async def flow_engineering(c, room):
    r = data(await call(c, "track_failure", {"error": "deadlock on save", "component": "db", "severity": "critical", "room": room}))
    check(r["memory_id"] > 0, r)
    data(await call(c, "track_progress", {"feature": "password reset", "status": "done", "completion": 100, "room": room}))
    data(await call(c, "track_progress", {"feature": "search", "status": "in_progress", "completion": 40, "room": room}))
    e = await call(c, "track_failure", {"error": "x", "component": "db", "severity": "apocalyptic"}, expect_error=True)
    check("severity" in text(e), text(e))
    s = data(await call(c, "stats", {"room": room}))
    eng = s["engineering"]
    check(eng["failures_by_component"].get("db") == 1 and eng["failures_by_severity"].get("critical") == 1, eng)
    check([f["feature"] for f in eng["active_features"]] == ["search"], eng)
    ctx = data(await call(c, "context", {"room": room}))
    steps = {s["step"]: s["status"] for s in ctx["last_handoff"]["next_steps"]}
    check(steps["add password reset"] == "done", steps)


async def flow_compat_a(c, room):
    r = data(await call(c, "store_memory", {"content": "Prefer pytest over unittest", "importance": 0.7, "category": "strategy", "user_id": room}))
    check(r["result"].startswith("Stored new memory (id="), r)
    mid = r["memory_id"]
    r = data(await call(c, "recall_memory", {"query": "pytest", "user_id": room, "top_k": 3}))
    check(r["memoriesFound"] >= 1 and r["memories"][0]["id"] == mid and r["memories"][0]["category"] == "strategy", r)
    r = data(await call(c, "update_memory", {"memory_id": mid, "new_content": "Prefer pytest with xdist over unittest"}))
    check(r["result"] == f"Updated memory (id={mid})", r)
    r = data(await call(c, "session_handoff", {"summary": "done for today", "next_steps": ["ship"], "user_id": room}))
    check(r["result"].startswith("Session handoff stored"), r)
    r = data(await call(c, "recall_memory", {"query": "pytest", "user_id": room, "top_k": 3}))
    check(r["memories"][0]["handoff_validation"] == [{"step": "ship", "status": "pending"}], r)
    check(all(k in m for m in r["memories"] for k in ("score", "similarity", "strength")), r)
    r = data(await call(c, "track_failure", {"error": "timeout", "component": "api", "user_id": room}))
    check("memory_id" in r and "result" in r, r)
    r = data(await call(c, "memory_stats", {"user_id": room}))
    check(r["total"] >= 3 and "engineering" in r and "avg_strength" in r, r)
    r = data(await call(c, "store_memory", {"content": "Staging runs on port 8080", "importance": 0.5, "user_id": room}))
    r = data(await call(c, "store_memory", {"content": "Staging runs on port 9090", "importance": 0.5, "user_id": room}))
    check(r["result"].startswith("Replaced contradicting memory"), r)
    r = data(await call(c, "consolidate_memory", {"user_id": room}))
    check(r["result"].startswith("Consolidated") and isinstance(r["details"], list), r)
    e = await call(c, "update_memory", {"memory_id": 999999, "new_content": "x"}, expect_error=True)
    check("memory_id" in text(e), text(e))
    e = await call(c, "store_memory", {"content": "x"}, expect_error=True)
    check("importance" in text(e), text(e))
    await flow_compat_a_tasks(c, room)


async def flow_compat_a_tasks(c, room):
    """A's task and checkpoint tools: a task's handoff keeps A's extra fields, and each
    restore mode brings them back with its own share of the task's memories."""
    t = data(await call(c, "create_task", {"name": "Billing export", "goal": "CSV export of invoices", "user_id": room}))
    tid = t["task_id"]
    check(t["task"]["status"] == "planning", t)
    t = data(await call(c, "update_task", {"task_id": tid, "status": "in_progress"}))
    check(t["task"]["status"] == "in_progress", t)
    h = data(await call(c, "session_handoff", {
        "summary": "export skeleton in place", "next_steps": ["add currency column"], "user_id": room, "task_id": tid,
        "must_not_redo": [{"action": "stream rows through pandas", "reason": "too slow on 1M rows"}],
        "must_preserve": ["column order"], "working_set": {"files": ["export.rs"], "tools": ["cargo"]},
    }))
    check(h["task_id"] == tid and h["checkpoint_version"] == 1, h)
    f = data(await call(c, "track_failure", {"error": "encoding error", "component": "export", "severity": "minor", "user_id": room, "task_id": tid}))
    check(f["checkpoint_version"] == 2 and f["checkpoint_reason"] == "FAILURE", f)
    data(await call(c, "store_memory", {"content": "Invoices older than 2019 are archived", "importance": 0.2, "user_id": room, "metadata": {"task_id": tid}}))
    data(await call(c, "track_progress", {"feature": "billing export", "status": "review", "completion": 80, "user_id": room, "task_id": tid}))
    modes = {}
    for mode in ["FULL", "SELECTIVE", "NONE"]:
        r = data(await call(c, "restore_checkpoint", {"task_id": tid, "memory_restore_mode": mode}))
        check(r["state"]["must_not_redo"] == [{"action": "stream rows through pandas", "reason": "too slow on 1M rows"}], r)
        check(r["state"]["must_preserve"] == ["column order"] and r["state"]["working_set"]["files"] == ["export.rs"], r)
        check(r["state"]["goal"] == "CSV export of invoices" and r["checkpoint_version"] == 3, r)
        modes[mode] = len(r["memories"])
    # FULL: handoff, failure, the 0.2 memory, progress; SELECTIVE keeps the minor failure
    # (a failure) and drops the 0.2 memory; NONE brings none.
    check(modes == {"FULL": 4, "SELECTIVE": 3, "NONE": 0}, modes)
    cps = data(await call(c, "list_checkpoints", {"task_id": tid}))
    check([cp["version"] for cp in cps["checkpoints"]] == [3, 2, 1], cps)
    g = data(await call(c, "get_task", {"task_id": tid}))
    check(len(g["memories"]) == 1 and g["latest_checkpoint"]["version"] == 3, g)
    ls = data(await call(c, "list_tasks", {"user_id": room, "status": "in_progress"}))
    check([x["task_id"] for x in ls["tasks"]] == [tid], ls)
    e = await call(c, "restore_checkpoint", {"task_id": tid, "memory_restore_mode": "SOME"}, expect_error=True)
    check("memory_restore_mode" in text(e), text(e))
    r = data(await call(c, "recall_memory", {"query": "export", "user_id": room, "session_id": f"{room}-s"}))
    o = data(await call(c, "session_outcome", {"session_id": f"{room}-s", "outcome": "failure", "notes": "export broke on UTF-16", "user_id": room}))
    check(o["outcome"] == "failure" and o["lesson_id"] and "result" in o, o)


async def flow_compat_b(c, room):
    r = data(await call(c, "remember", {"content": "User likes dark mode", "type": "preference", "importance": 8, "room": room}))
    check(r["status"] == "created", r)
    mid = r["id"]
    again = data(await call(c, "remember", {"content": "User likes dark mode", "type": "preference", "importance": 8, "room": room}))
    check(again["status"] == "duplicate_reinforced" and again["id"] == mid, again)
    hits = data(await call(c, "recall", {"query": "dark mode", "room": room, "mode": "fast", "limit": 5}))
    check(hits["hits"][0]["id"] == mid and abs(hits["hits"][0]["importance"] - 0.8) < 1e-9, hits)
    r = data(await call(c, "reinforce", {"ids": [str(mid), "999999"], "strength": 2.0}))
    check(r["reinforced"] == [mid] and r["unknown_ids"] == [999999], r)
    check(data(await call(c, "forget", {"id": 999999}))["status"] == "not_found", "B answers unknown ids with a status")
    check(hits["hits"][0]["type"] == "preference", hits["hits"][0])
    r = data(await call(c, "correct", {"id": str(mid), "corrected_content": "User likes light mode", "reason": "changed"}))
    check(r["status"] == "corrected", r)
    data(await call(c, "link", {"src": r["new_id"], "dst": mid}))
    r = data(await call(c, "forget", {"id": r["new_id"]}))
    check(r["status"] == "forgotten", r)
    s = data(await call(c, "stats", {}))
    check("total_memories" in s and "by_type" in s and "links_by_kind" in s, s)
    # B's other four tools are in B's profile.
    check("clusters" in data(await call(c, "consolidation_candidates", {})), "consolidation_candidates")
    check("clusters" in data(await call(c, "skill_candidates", {})), "skill_candidates")
    ep = data(await call(c, "remember", {"content": "Session: tried the dark theme toggle", "type": "episode", "importance": 3, "room": room}))["id"]
    summary = data(await call(c, "remember", {"content": "The theme toggle lives in settings", "type": "knowledge", "importance": 6, "room": room}))["id"]
    r = data(await call(c, "mark_consolidated", {"episode_ids": [str(ep)], "new_memory_id": str(summary)}))
    check(r["status"] == "ok" and r["consolidated"] == [ep], r)
    data(await call(c, "reindex", {}))


# Seed C's published tool contract: name -> required fields (the agent tools engram serves).
C_REQUIRED = {
    "mem_save": {"title"},
    "mem_search": {"query"},
    "mem_context": set(),
    "mem_session_summary": {"content"},
    "mem_session_start": {"id"},
    "mem_session_end": {"id"},
    "mem_get_observation": {"id"},
    "mem_suggest_topic_key": set(),
    "mem_capture_passive": {"content"},
    "mem_update": {"id"},
    "mem_current_project": set(),
    "mem_pin": {"id"},
    "mem_unpin": {"id"},
    "mem_delete": {"id"},
    "mem_stats": set(),
    "mem_timeline": {"observation_id"},
    "mem_save_prompt": {"content"},
    "mem_list_projects": set(),
    "mem_judge": {"judgment_id", "relation"},
    "mem_compare": {"memory_id_a", "memory_id_b", "relation", "confidence", "reasoning"},
    "mem_review": {"action"},
    "mem_merge_projects": {"from", "to"},
    "mem_doctor": set(),
}


async def flow_compat_c(c, room):
    tools = {t.name: t for t in (await c.list_tools()).tools}
    check(set(C_REQUIRED) <= set(tools), f"missing C tools: {set(C_REQUIRED) - set(tools)}")
    for name, req in C_REQUIRED.items():
        got = set(tools[name].input_schema.get("required", []))
        check(got == req, f"{name} requires {got}, C requires {req}")
    for name in ("mem_get_observation", "mem_pin", "mem_delete"):
        check(tools[name].input_schema["properties"]["id"]["type"] == "integer", f"{name} takes integer ids")
    # C refuses a project it does not know (unknown_project); a session there makes it one.
    e = await call(c, "mem_save", {"title": "t", "content": "c", "project": room}, expect_error=True)
    check("unknown_project" in text(e), text(e))
    data(await call(c, "mem_session_start", {"id": f"s-{room}", "project": room}))
    r = data(await call(c, "mem_save", {"title": "Use SQLite", "content": "We chose SQLite for the local store", "type": "decision", "project": room}))
    check(r["result"].startswith('Memory saved: "Use SQLite" (decision)') and "Suggested topic_key: decision/use-sqlite" in r["result"], r)
    mid = r["id"]
    check(isinstance(mid, int), r)
    r = data(await call(c, "mem_search", {"query": "SQLite local store", "project": room}))
    check(r["results"][0]["id"] == mid and r["result"].startswith("Found 1 memories"), r)
    r = data(await call(c, "mem_search", {"query": "SQLite postgres", "project": room}))
    check(r["results"] == [], "match_mode all needs every word")
    r = data(await call(c, "mem_search", {"query": "SQLite postgres", "project": room, "match_mode": "any"}))
    check(r["results"][0]["id"] == mid, r)
    e = await call(c, "mem_search", {"query": "x", "match_mode": "some"}, expect_error=True)
    check("match_mode" in text(e), text(e))
    r = data(await call(c, "mem_get_observation", {"id": mid}))
    check(r["result"].startswith(f"#{mid} [decision] Use SQLite"), r)
    data(await call(c, "mem_update", {"id": mid, "content": "We chose SQLite (WAL) for the local store"}))
    r = data(await call(c, "mem_capture_passive", {"content": "## Key Learnings\n- Always enable WAL before concurrent writers\n- short", "project": room}))
    check("extracted=1 saved=1" in r["result"], r)
    r = data(await call(c, "mem_pin", {"id": mid}))
    check(r["pinned"] is True, r)
    r = data(await call(c, "mem_context", {"project": room}))
    check("Use SQLite" in r["result"] or "SQLite" in r["result"], r)
    data(await call(c, "mem_session_start", {"id": f"s-{room}", "project": room}))
    data(await call(c, "mem_session_summary", {"content": "Goal: storage. Done: SQLite.", "session_id": f"s-{room}", "project": room}))
    data(await call(c, "mem_session_end", {"id": f"s-{room}", "summary": "ok"}))
    r = data(await call(c, "mem_delete", {"id": mid}))
    check(r["result"] == f"Memory #{mid} soft-deleted", r)
    e = await call(c, "mem_get_observation", {"id": "abc"}, expect_error=True)
    check("id" in text(e), text(e))
    r = data(await call(c, "mem_save_prompt", {"content": "please make storage local", "session_id": f"s-{room}", "project": room}))
    check(r["result"].startswith('Prompt saved: "please make storage local"'), r)
    r = data(await call(c, "mem_list_projects", {}))
    # Two sessions: s-<room>, and manual-save-<room>, which C creates for saves naming none.
    check(any(p["name"] == room and p["prompt_count"] == 1 and p["session_count"] == 2 for p in r["projects"]), r)
    r = data(await call(c, "mem_current_project", {}))
    check("project" in r and "available_projects" in r, r)
    # C's judgment flow: a related save comes back with candidates to judge.
    a = data(await call(c, "mem_save", {"title": "Release cadence", "content": "Releases are cut from main on Fridays", "project": room}))
    b = data(await call(c, "mem_save", {"title": "Hotfix releases", "content": "Hotfix releases are cut from release branches", "project": room}))
    check(b["judgment_required"] is True and b["candidates"][0]["id"] == a["id"], b)
    check("CONFLICT REVIEW PENDING" in b["result"], b)
    e = await call(c, "mem_judge", {"judgment_id": b["judgment_id"], "relation": "maybe"}, expect_error=True)
    check("relation" in text(e), text(e))
    r = data(await call(c, "mem_judge", {"judgment_id": b["judgment_id"], "relation": "compatible", "reason": "different release kinds"}))
    check(r["relation"]["status"] == "judged" and r["relation"]["relation"] == "compatible", r)
    check(r["relation"]["judgment_status"] == "judged" and r["relation"]["sync_id"] == b["judgment_id"], r)
    r = data(await call(c, "mem_compare", {"memory_id_a": b["id"], "memory_id_b": a["id"], "relation": "scoped", "confidence": 0.8, "reasoning": "hotfixes only"}))
    check(r["sync_id"].startswith("rel-"), r)
    r = data(await call(c, "mem_review", {"action": "list", "project": room}))
    check(r["result"] == "No memories need review.", r)
    r = data(await call(c, "mem_merge_projects", {"from": room + "-old", "to": room}))
    check(r["moved"] == 0, r)


async def flow_admin(c, room):
    """Write-path resolution, validity, judgments, review and maintenance over MCP."""
    old = data(await call(c, "remember", {"content": "The project database is PostgreSQL.", "room": room}))
    new = data(await call(c, "remember", {"content": "We switched from PostgreSQL to SQLite for the project database.", "room": room}))
    check(new["action"] == "superseded" and new["touched"] == [old["id"]], new)
    hits = data(await call(c, "recall", {"query": "project database", "room": room}))
    check(hits["hits"][0]["id"] == new["id"], hits)
    past = data(await call(c, "recall", {"query": "project database", "room": room, "as_of": "2000-01-01"}))
    check(past["hits"] == [], past)
    e = await call(c, "recall", {"query": "x", "as_of": "last tuesday"}, expect_error=True)
    check("as_of" in text(e), text(e))
    both = data(await call(c, "recall", {"query": "project database", "room": room, "include_superseded": True}))
    check(any(h["id"] == old["id"] and h["superseded_by"] == new["id"] for h in both["hits"]), both)
    secret = data(await call(c, "remember", {"content": "CI token is ghp_abcdefghijklmnopqrstuvwxyz0123456789", "room": room}))
    check(secret["redacted"][0]["kind"] == "github_token", secret)
    x = data(await call(c, "explain", {"id": old["id"]}))
    check(x["tier_reason"].startswith("superseded by"), x)
    r = data(await call(c, "maintain", {"dry_run": True}))
    check(r["dry_run"] is True and "archived" in r, r)
    r = data(await call(c, "review", {"action": "list", "room": room}))
    check(r["count"] == 0, r)
    r = data(await call(c, "consolidation_candidates", {"room": room}))
    check(r["count"] == 0, r)
    e = await call(c, "judge", {"judgment_id": "rel-0", "relation": "related"}, expect_error=True)
    check("judgment_id" in text(e), text(e))
    r = data(await call(c, "reindex", {}))
    check("files" in r, r)
    r = await c.call_tool("doctor", {})
    check(any(row["check"].startswith("store") for row in data(r)["rows"]), text(r)[:300])


PROFILES = {
    "core": [flow_native, flow_context_and_hub],
    "engineering": [flow_native, flow_context_and_hub, flow_engineering],
    "admin": [flow_native, flow_admin],
    "all": [flow_native],
    "compat-a": [flow_compat_a],
    "compat-b": [flow_compat_b],
    "compat-c": [flow_compat_c],
}

EXPECTED_TOOLS = {
    "core": {"remember", "recall", "reinforce", "correct", "forget", "context", "handoff"},
    "compat-a": {"recall_memory", "store_memory", "update_memory", "session_handoff", "track_failure", "track_progress", "consolidate_memory", "memory_stats",
                 "session_outcome", "create_task", "update_task", "get_task", "list_tasks", "restore_checkpoint", "list_checkpoints"},
    "compat-b": {"remember", "recall", "reinforce", "correct", "link", "forget", "consolidation_candidates", "mark_consolidated", "skill_candidates", "reindex", "stats"},
}


async def run_profile(client, profile, transport):
    names = {t.name for t in (await client.list_tools()).tools}
    if profile in EXPECTED_TOOLS:
        check(names == EXPECTED_TOOLS[profile], f"{profile} lists {sorted(names)}")
    for t in (await client.list_tools()).tools:
        check(t.annotations is not None and t.annotations.read_only_hint is not None, f"{t.name} has annotations")
        check(t.description and len(t.description) > 20, f"{t.name} has a description")
    # The protocol in the profile's own tool names: a seed's agent is told what it can call.
    cue = {"compat-a": "recall_memory", "compat-b": "consolidation_candidates", "compat-c": "mem_search"}.get(profile, "Recall before acting")
    check(cue in (client.instructions or ""), f"server instructions carry the memory protocol ({cue})")
    for flow in PROFILES[profile]:
        await flow(client, f"{transport}-{profile}")


async def over_stdio(profile, home):
    params = StdioServerParameters(command=ENGRAM, args=["mcp", "--tools", profile], env=server_env(home))
    async with Client(params) as client:
        await run_profile(client, profile, "stdio")


def start_http(args, env):
    """Starts `engram serve --http 127.0.0.1:0 ARGS` and returns (process, URL).

    The server picks its own port and names it on stderr (no port is chosen here and then
    raced for); stderr is drained in a thread for the server's whole life, so its logging
    can never fill the pipe and block it. Waits up to 60 s, then fails loudly."""
    proc = subprocess.Popen([ENGRAM, "serve", "--http", "127.0.0.1:0", *args], env=env, stderr=subprocess.PIPE, text=True)
    found = queue.Queue()
    seen = []

    def drain():
        for line in proc.stderr:
            seen.append(line)
            m = re.search(r"MCP over HTTP at (http://\S+/mcp)", line)
            if m:
                found.put(m.group(1))
        found.put(None)

    threading.Thread(target=drain, daemon=True).start()
    try:
        url = found.get(timeout=60)
    except queue.Empty:
        url = None
    if url is None:
        proc.kill()
        raise RuntimeError("engram serve never said where it listens: " + "".join(seen))
    return proc, url


async def over_http(profile, home):
    proc, url = start_http(["--tools", profile], server_env(home))
    try:
        async with Client(url) as client:
            await run_profile(client, profile, "http")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def raw_stdio_survives_garbage(home):
    """Malformed JSON-RPC gets the protocol's error reply and the server keeps serving."""
    lines = [
        '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}',
        "this is not json",
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        "[[[[[[[[[[" * 100,
        '{"id": 5, "method": "tools/list"}',
        '{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
    ]
    p = subprocess.run([ENGRAM, "mcp"], input=("\n".join(lines) + "\n").encode() + b"\xff\xfe\n", capture_output=True, env=server_env(home), timeout=30)
    out = [json.loads(l) for l in p.stdout.decode().splitlines() if l.strip()]
    codes = sorted(o["error"]["code"] for o in out if "error" in o)
    check(codes == [-32700, -32700, -32700, -32600], f"error replies: {codes}")
    check(any(o.get("id") == 2 and "tools" in o.get("result", {}) for o in out), "still answers after garbage")
    check(all(isinstance(o, dict) and o.get("jsonrpc") == "2.0" for o in out), "stdout is JSON-RPC only")


def http_refuses_public_bind_without_token(home):
    p = subprocess.run([ENGRAM, "serve", "--http", "0.0.0.0:0"], capture_output=True, env=server_env(home), timeout=30)
    check(p.returncode != 0 and b"token" in p.stderr, p.stderr.decode())


async def http_with_token_refuses_requests_without_it(home):
    import httpx2 as httpx

    proc, url = start_http([], server_env(home, ENGRAM_HTTP_TOKEN="s3cret"))
    try:
        body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "1"}}}
        hdrs = {"Accept": "application/json, text/event-stream"}
        r = httpx.post(url, json=body, headers=hdrs, timeout=60)
        check(r.status_code == 401, f"no token: {r.status_code}")
        r = httpx.post(url, json=body, headers={**hdrs, "Authorization": "Bearer wrong"}, timeout=60)
        check(r.status_code == 401, f"wrong token: {r.status_code}")
        r = httpx.post(url, json=body, headers={**hdrs, "Authorization": "Bearer s3cret"}, timeout=60)
        check(r.status_code == 200, f"right token: {r.status_code}")
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def main():
    with tempfile.TemporaryDirectory() as home:
        tests = []
        for profile in PROFILES:
            tests.append((f"stdio/{profile}", lambda p=profile: over_stdio(p, home)))
            tests.append((f"http/{profile}", lambda p=profile: over_http(p, home)))
        for name, make in tests:
            try:
                await make()
                PASSED.append(name)
            except Exception as e:  # noqa: BLE001 - report every failure, then exit non-zero
                FAILED.append(name)
                print(f"FAILED {name}: {describe(e)}", file=sys.stderr)
        for name, fn in [("stdio/garbage", raw_stdio_survives_garbage), ("http/public-bind", http_refuses_public_bind_without_token)]:
            try:
                fn(home)
                PASSED.append(name)
            except Exception as e:  # noqa: BLE001
                FAILED.append(name)
                print(f"FAILED {name}: {describe(e)}", file=sys.stderr)
        try:
            await http_with_token_refuses_requests_without_it(home)
            PASSED.append("http/token")
        except Exception as e:  # noqa: BLE001
            FAILED.append("http/token")
            print(f"FAILED http/token: {describe(e)}", file=sys.stderr)
    print(f"mcp e2e: {len(PASSED)} passed, {len(FAILED)} failed")
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    asyncio.run(main())

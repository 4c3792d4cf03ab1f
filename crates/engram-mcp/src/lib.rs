//! engram's surfaces over the engine, as a library: the MCP server and the agent hooks.
//!
//! The binary (`crates/engram`) keeps flags, wiring and output; what a client speaks lives
//! here, so that every surface shares one adapter layer and none of them decides anything:
//!
//! - [`server`]: [`Shared`] (one store, its model, its lock, per process) and
//!   [`EngramServer`], the rmcp `ServerHandler`; [`stdio`] and [`http`] are the transports
//!   ([`unix_socket`]: the HTTP app on seed C's `ENGRAM_SOCKET`).
//! - [`tools`]: the tool registry and profile selection; [`native`], [`admin`],
//!   [`compat_a`] (with [`compat_a_tasks`]), [`compat_c`] are the profiles' tools, each a thin adapter over one
//!   `engram_store::Store` method.
//! - [`web`]: the HTTP surfaces merged beside `/mcp` inside its token layer (seed A's REST,
//!   seed C's API, the web UI); they live with the HTTP transport because they share its
//!   router, its token check and the server's one store.
//! - [`hooks`]: `engram hook <event>` for Claude Code, Codex and Gemini CLI.
//! - [`environment`]: the home, the layered settings and `ENGRAM_PROJECT`, read the same way
//!   by every surface. [`perf`]: the tool latency log.
//!
//! No embedding model is loaded here (this crate does not depend on candle): the binary
//! loads it and hands it to [`Shared::install_embedder`].
//!
//! # The wire format is the engine's
//!
//! A tool's structured result is the engine's own result type serialised by serde
//! (`engram_store::RememberOutcome`, `RecallResult`, `ReinforceOutcome`, `Brief`, …, whose
//! fields are documented where they are defined), with a profile's few extra keys beside
//! it, each named where it is added: `status` and `notice` (native), seed B's `type`
//! beside `kind` and `unknown_ids`, seed A's and C's renamed ids and text results. No
//! profile re-derives a field the engine computes (a score, a coverage, a filter): it asks
//! for it in the request ([`adapt`] parses what a caller may ask) and prints what came
//! back. So a change to the engine's types is a change to the wire, on purpose, and is
//! made in one place.

pub mod adapt;
pub mod admin;
pub mod auth;
pub mod compat_a;
pub mod compat_a_tasks;
pub mod compat_b_reply;
pub mod compat_c;
pub mod environment;
#[cfg(test)]
mod fuzz;
pub mod hooks;
pub mod http;
pub mod native;
pub mod perf;
pub mod server;
pub mod stdio;
pub mod tools;
pub mod unix_socket;
pub mod web;

pub use server::{EngramServer, INSTRUCTIONS, LoadOutcome, Loader, ModelState, Opener, Shared};

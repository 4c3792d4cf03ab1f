//! engram's surfaces over the engine, as a library: the MCP server and the agent hooks.
//!
//! The binary (`crates/engram`) keeps flags, wiring and output; what a client speaks lives
//! here, so that every surface shares one adapter layer and none of them decides anything:
//!
//! - [`server`]: [`Shared`] (one store, its model, its lock, per process) and
//!   [`EngramServer`], the rmcp `ServerHandler`; [`stdio`] and [`http`] are the transports.
//! - [`tools`]: the tool registry and profile selection; [`native`], [`admin`],
//!   [`compat_a`], [`compat_c`] are the profiles' tools, each a thin adapter over one
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

pub mod adapt;
pub mod admin;
pub mod compat_a;
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
pub mod web;

pub use server::{EngramServer, INSTRUCTIONS, ModelState, Opener, Shared};

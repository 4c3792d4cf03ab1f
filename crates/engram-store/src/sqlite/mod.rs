//! The SQLite backend: how the store's rows, indexes and files beside the database are
//! kept in one SQLite file. This part holds the candidate sources recall asks through
//! [`crate::storage::candidates`]: FTS5 channels and coverage, the embeddings table, the
//! in-memory vector index and its HNSW form, and the link walk.

#[cfg(feature = "ann")]
pub(crate) mod ann;
pub(crate) mod candidates;
pub(crate) mod embeddings;
mod filter;
mod graph;
mod index_upkeep;
mod lexical;
mod vector_index;
mod vector_search;

pub(crate) use vector_index::{VectorIndex, forget_saved_index};

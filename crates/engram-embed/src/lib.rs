//! Sentence encoders for engram (work in progress).

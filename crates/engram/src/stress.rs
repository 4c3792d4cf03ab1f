//! `engram stress-writer` (hidden): the writer the crash and concurrency harnesses kill.
//!
//! It opens the store once and writes in a loop, printing one line to stdout *after* each
//! call has returned (and flushing it), so whoever reads the pipe knows exactly which writes
//! were acknowledged:
//!
//! - `remember <uid>`: a memory was stored;
//! - `correct <old_id> <new_id>`: `old_id` is superseded by `new_id`;
//! - `forget <id>`: `id` is in the trash;
//! - `vanished <id>`: the memory just written was gone when the writer came to correct or
//!   forget it. Only a restore (`engram restore --force` under a running writer) does that:
//!   the store went back to the backup, which predates the memory. Nothing was acknowledged.
//!
//! Every tenth memory is corrected and every tenth (offset by five) forgotten, right after
//! it was written, so the harness can check each acknowledged state exactly. Recalls in
//! between log hits (writes too).

use engram_core::memory::IdRef;
use engram_store::{Error, RecallRequest, RememberRequest, Store};
use std::io::Write;

pub fn run(store: &mut Store, prefix: &str, count: Option<u64>, room: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let words = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
        "juliet", "kilo", "lima",
    ];
    let mut i: u64 = 0;
    while count.is_none_or(|c| i < c) {
        let w = |k: u64| words[((i * 7 + k * 3) % words.len() as u64) as usize];
        let content = format!(
            "{prefix} note {i}: {} {} {} (written by process {})",
            w(0),
            w(1),
            w(2),
            std::process::id()
        );
        let o = store.remember(RememberRequest {
            content,
            room: Some(room.to_string()),
            tags: vec!["stress".into()],
            source: Some("stress-writer".into()),
            // The harness measures durability of acknowledged writes: every write is its
            // own memory (resolution has its own tests).
            resolve: Some(false),
            ..Default::default()
        })?;
        writeln!(out, "remember {}", o.uid)?;
        out.flush()?;
        match i % 10 {
            9 => {
                match vanished(store.correct(
                    &IdRef::Id(o.id),
                    &format!("{prefix} note {i}, corrected"),
                    "stress",
                    Some("stress-writer"),
                ))? {
                    Some(c) => writeln!(out, "correct {} {}", c.old_id, c.new_id)?,
                    None => writeln!(out, "vanished {}", o.id)?,
                }
                out.flush()?;
            }
            4 => {
                match vanished(store.forget(&IdRef::Id(o.id)))? {
                    Some(f) => writeln!(out, "forget {}", f.id)?,
                    None => writeln!(out, "vanished {}", o.id)?,
                }
                out.flush()?;
            }
            2 | 7 => {
                let mut req = RecallRequest::new(format!("{prefix} {}", w(1)));
                req.room = Some(room.to_string());
                store.recall(&req)?;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// `Ok(None)` when the memory named no longer exists (see `vanished` above); any other
/// error stops the writer.
fn vanished<T>(r: engram_store::Result<T>) -> engram_store::Result<Option<T>> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(Error::NotFound { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

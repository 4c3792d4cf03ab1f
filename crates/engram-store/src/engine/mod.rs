//! The engine's operations, each as gather → decide (pure, in `engram_core`) → apply,
//! written over the storage interface ([`crate::storage`]): each reads and writes through
//! `Reads` and one `Tx` per write, never through SQL (the test below keeps it so), so the
//! next backend runs them unchanged.
//!
//! `remember` too: it gathers the write's neighbours (`neighbours.rs`, shared with
//! maintenance's consolidation) and embeds before the transaction, the core's
//! [`engram_core::plan`] decides what the write does, and `remember/apply.rs` writes the
//! plan in one `Tx`.

pub mod conflict_scan;
mod correct;
mod edit;
mod judgments;
mod neighbours;
mod reinforce;
mod remember;
mod sessions;
mod show;
pub mod tasks;
mod tiers;

#[cfg(test)]
mod tests {
    //! The storage boundary, checked: the engine's files (and the modules already moved
    //! onto the interface) hold no SQL and no driver, so a second backend needs none of
    //! their code changed.

    use std::path::Path;

    /// Engine files that still speak SQLite: none. Kept (empty) so a file that must wait
    /// for the interface is named here rather than silently skipped.
    const NOT_YET_ON_THE_INTERFACE: &[&str] = &[];

    /// Every `.rs` file under `dir`, folders included (`remember/` is one).
    fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                rust_files(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }

    /// What would mean SQL or the SQLite driver leaked into engine code.
    const SQL_MARKERS: &[&str] = &[
        "execute(",
        "execute_batch(",
        "prepare(",
        "prepare_cached(",
        "query_row(",
        "query_map(",
        "SELECT ",
        "INSERT INTO",
        "UPDATE ",
        "DELETE FROM",
        "PRAGMA",
    ];

    fn leaks(text: &str, driver_too: bool) -> Vec<String> {
        let mut found = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for m in SQL_MARKERS {
                if code.contains(m) {
                    found.push(format!("line {}: {m}", n + 1));
                }
            }
            if driver_too && (code.contains("rusqlite") || code.contains(".conn")) {
                found.push(format!("line {}: the SQLite driver", n + 1));
            }
        }
        found
    }

    #[test]
    fn the_detector_sees_sql() {
        assert!(!leaks(r#"tx.execute("UPDATE events SET x = 1", [])?;"#, false).is_empty());
        assert!(!leaks("let c = &self.conn;", true).is_empty());
        assert!(leaks("// UPDATE links: a comment", true).is_empty());
    }

    #[test]
    fn engine_code_speaks_only_the_storage_interface() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut engine = Vec::new();
        rust_files(&src.join("engine"), &mut engine);
        assert!(
            engine.iter().any(|p| p.ends_with("remember/apply.rs")),
            "the engine's subfolders were not scanned"
        );
        let mut files: Vec<(std::path::PathBuf, bool)> = engine
            .into_iter()
            .filter(|p| !NOT_YET_ON_THE_INTERFACE.iter().any(|n| p.ends_with(n)))
            .map(|p| (p, true))
            .collect();
        // Converted to the interface, outside `engine/` for their public paths.
        for f in [
            "hub.rs",
            "maintain.rs",
            "evidence.rs",
            "recent.rs",
            "browse.rs",
            "recall.rs",
            "store.rs",
            "embedding.rs",
            "parts.rs",
            "rooms.rs",
            "files/backup.rs",
            "files/git_sync.rs",
        ] {
            files.push((src.join(f), true));
        }
        // The files beside the database that move rows: export, import, the vault.
        let mut beside = Vec::new();
        rust_files(&src.join("files/transfer"), &mut beside);
        rust_files(&src.join("files/vault"), &mut beside);
        assert!(
            beside.iter().any(|p| p.ends_with("vault/reindex.rs"))
                && beside.iter().any(|p| p.ends_with("transfer/import.rs")),
            "files/transfer and files/vault were not scanned"
        );
        files.extend(beside.into_iter().map(|p| (p, true)));
        let mut bad = Vec::new();
        for (path, driver_too) in &files {
            let text = std::fs::read_to_string(path).unwrap();
            // This file's own list of markers is not a leak.
            let text = text.split("#[cfg(test)]").next().unwrap();
            for l in leaks(text, *driver_too) {
                bad.push(format!("{}: {l}", path.display()));
            }
        }
        assert!(files.len() > 20, "the engine's files were not found");
        assert!(bad.is_empty(), "SQL outside sqlite/:\n{}", bad.join("\n"));
    }

    /// One writer of `memories` rows: no file of the crate but its owner
    /// (`sqlite/memories.rs`) and the migrations (`sqlite/db.rs`) inserts or updates them,
    /// so the column list and the content hash are kept in one place.
    #[test]
    fn only_the_owner_writes_memories_rows() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        rust_files(&src, &mut files);
        let allowed = [
            "sqlite/memories.rs",
            "sqlite/db.rs",
            "postgres/memories.rs",
            "postgres/db.rs",
        ];
        let mut bad = Vec::new();
        for path in &files {
            if allowed.iter().any(|a| path.ends_with(a)) {
                continue;
            }
            let text = std::fs::read_to_string(path).unwrap();
            for (n, line) in text.lines().enumerate() {
                if line.contains(concat!("INSERT INTO ", "memories"))
                    || line.contains(concat!("UPDATE ", "memories"))
                {
                    bad.push(format!("{}:{}", path.display(), n + 1));
                }
            }
        }
        assert!(files.len() > 40, "the crate's files were not found");
        assert!(
            bad.is_empty(),
            "memories rows written outside sqlite/memories.rs and postgres/memories.rs:\n{}",
            bad.join("\n")
        );
    }
}

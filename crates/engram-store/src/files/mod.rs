//! Everything engram keeps as files rather than rows: the Markdown vault and its front
//! matter, JSONL export and import, the importers of other programs' data, backups, the
//! configuration file (with seed B's keys), seed C's git-chunk sync folder ([`git_sync`])
//! and where each of those lives ([`home::Home`]).
//!
//! These modules share one way of writing a file ([`fsutil::write_atomic`]) and learn
//! every path from one [`home::Home`], so a second storage backend changes nothing here:
//! the vault is fed by the `changes` table, never by a write path.

pub mod backup;
pub mod frontmatter;
pub mod fsutil;
pub mod git_sync;
pub mod home;
pub mod importers;
mod seed_b_config;
pub mod settings;
pub mod transfer;
pub mod vault;

#[cfg(test)]
mod tests {
    /// The store has one way to write a file: no module outside `files/fsutil.rs` defines
    /// its own `write_atomic` (there were four before `files/` gathered them).
    #[test]
    fn one_write_atomic_in_the_store() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut stack = vec![src.clone()];
        let mut defining = Vec::new();
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs")
                    && std::fs::read_to_string(&path)
                        .unwrap()
                        .contains(concat!("fn write", "_atomic("))
                {
                    defining.push(path.strip_prefix(&src).unwrap().to_path_buf());
                }
            }
        }
        assert_eq!(
            defining,
            vec![std::path::PathBuf::from("files/fsutil.rs")],
            "write_atomic is defined once"
        );
    }
}

//! The vault's reads and writes of rows, all through the storage interface: its file
//! records (`vault_files`, [`Tx::write_vault_file`]), the `meta` cursor over the change
//! log, and a hand edit applied to a memory, its revisions and its links. No SQL here: the
//! SQLite statements are `sqlite/vault_files.rs`'s and the row owners'.

use super::*;
use crate::storage::rows::{
    LinkWeight, LinkWrite, MemoryPatch, NewEvent, VaultFile, VaultFileWrite,
};
use crate::storage::{Reads, Tx};
use engram_core::memory::IdRef;

/// What engram last wrote or read at a path.
pub(super) struct Recorded {
    pub(super) uid: String,
    pub(super) hash: String,
    pub(super) size: i64,
    pub(super) mtime: i64,
}

pub(super) fn recorded(r: &dyn Reads) -> Result<HashMap<String, Recorded>> {
    Ok(r.vault_files(None)?
        .into_iter()
        .map(|f| {
            (
                f.path,
                Recorded {
                    uid: f.uid,
                    hash: f.hash,
                    size: f.size,
                    mtime: f.mtime,
                },
            )
        })
        .collect())
}

pub(super) fn record_file(
    tx: &mut dyn Tx,
    root: &Path,
    rel: &str,
    uid: &str,
    hash: &str,
) -> Result<()> {
    let meta = std::fs::metadata(root.join(rel)).map_err(io_err(&root.join(rel)))?;
    tx.write_vault_file(&VaultFileWrite::Record(&VaultFile {
        path: rel.to_string(),
        uid: uid.to_string(),
        hash: hash.to_string(),
        size: meta.len() as i64,
        mtime: mtime_ns(&meta),
    }))
}

pub(super) fn meta_get(r: &dyn Reads, key: &str) -> Result<Option<String>> {
    r.meta(key)
}

pub(super) fn meta_set(tx: &mut dyn Tx, key: &str, value: &str) -> Result<()> {
    tx.set_meta(key, value)
}

pub(super) fn max_seq(r: &dyn Reads) -> Result<i64> {
    r.last_change()
}

pub(super) fn load_by_id(r: &dyn Reads, id: MemoryId) -> Result<Option<Memory>> {
    r.memory(&IdRef::Id(id))
}

/// The file stem a memory has (its current file) or will get.
pub(super) fn stem_for(r: &dyn Reads, m: &Memory) -> Result<String> {
    Ok(match r.vault_files(Some(&m.uid))?.first() {
        Some(f) => stem_of(&f.path).to_string(),
        None => new_stem(m),
    })
}

/// Keeps `content` (a file's text) as a revision of `m`, with `m`'s other fields.
pub(super) fn add_revision(
    tx: &mut dyn Tx,
    m: &Memory,
    content: &str,
    reason: &str,
    at: Millis,
) -> Result<()> {
    let mut kept = m.clone();
    kept.content = content.to_string();
    tx.add_revision(&kept, reason, at, None)
}

/// Whether two memories differ in anything a file states (not `updated_at` or `id`).
pub(super) fn differs(a: &Memory, b: &Memory) -> bool {
    a.content != b.content
        || a.title != b.title
        || a.kind != b.kind
        || (a.importance - b.importance).abs() > 1e-9
        || a.tags != b.tags
        || a.room != b.room
        || a.topic_key != b.topic_key
        || a.pinned != b.pinned
        || a.tier != b.tier
        || a.source != b.source
        || a.session_id != b.session_id
        || a.created_at != b.created_at
        || a.valid_from != b.valid_from
        || a.valid_to != b.valid_to
        || a.metadata != b.metadata
}

/// Stores a hand edit: the previous text becomes a revision (`vault_edit`).
pub(super) fn update_from_file(
    tx: &mut dyn Tx,
    old: &Memory,
    new: &Memory,
    now: Millis,
) -> Result<()> {
    let mut new = new.clone();
    check_memory(&mut new)?;
    let text_changed = old.content != new.content || old.title != new.title;
    if text_changed
        || old.kind != new.kind
        || old.importance != new.importance
        || old.tags != new.tags
    {
        add_revision(tx, old, &old.content, "vault_edit", now)?;
    }
    tx.patch_memory(
        old.id,
        &MemoryPatch {
            content: Some(new.content.clone()),
            title: Some(new.title.clone()),
            kind: Some(new.kind),
            importance: Some(new.importance),
            tags: Some(new.tags.clone()),
            room: Some(new.room.clone()),
            topic_key: Some(new.topic_key.clone()),
            pinned: Some(new.pinned),
            tier: Some(new.tier),
            created_at: Some(new.created_at),
            valid_from: Some(new.valid_from),
            valid_to: Some(new.valid_to),
            source: Some(new.source.clone()),
            session_id: Some(new.session_id.clone()),
            metadata: Some(new.metadata.clone()),
            updated_at: Some(now),
            ..Default::default()
        },
    )?;
    tx.index_text(
        old.id,
        new.title.as_deref(),
        &new.content,
        &new.tags,
        new.metadata.get("context").and_then(|c| c.as_str()),
    )?;
    if text_changed {
        tx.set_embedding(old.id, None)?;
    }
    tx.append_event(&NewEvent {
        memory_id: old.id,
        kind: EventKind::Update,
        weight: 1.0,
        at: now,
        session_id: None,
        detail: Some("vault edit"),
    })
}

/// Makes a memory's outgoing links what its file lists. Returns whether anything changed.
pub(super) fn set_links(
    tx: &mut dyn Tx,
    src: MemoryId,
    want: &[(MemoryId, LinkKind, f64)],
    scope: super::record::LinksScope,
    now: Millis,
) -> Result<bool> {
    // A file manages only the kinds of link its format lists (seed B's: explicit).
    let have: Vec<(MemoryId, LinkKind, f64)> = tx
        .links_from(src)?
        .into_iter()
        .filter(|l| scope.covers(l.kind))
        .map(|l| (l.dst, l.kind, l.weight))
        .collect();
    let held = |d: &MemoryId, k: &LinkKind, w: &f64| {
        have.iter()
            .any(|(hd, hk, hw)| hd == d && hk == k && (hw - w).abs() < 5e-4)
    };
    let same = have.len() == want.len() && want.iter().all(|(d, k, w)| held(d, k, w));
    if same {
        return Ok(false);
    }
    for (d, k, _) in &have {
        if !want.iter().any(|(wd, wk, _)| wd == d && wk == k) {
            tx.delete_link(src, *d, *k)?;
        }
    }
    for (d, k, w) in want {
        if held(d, k, w) {
            continue;
        }
        // The file's weight, as written there (no cap: the file is the source).
        tx.upsert_link(&LinkWrite {
            src,
            dst: *d,
            kind: *k,
            weight: *w,
            mode: LinkWeight::Set,
            cap: f64::MAX,
            at: now,
        })?;
    }
    Ok(true)
}

/// The uid of a memory just stored.
pub(super) fn memory_uid(r: &dyn Reads, id: MemoryId) -> Result<String> {
    load_by_id(r, id)?
        .map(|m| m.uid)
        .ok_or_else(|| Error::not_found("id", format!("#{id}")))
}

/// The memory a uid names, if any.
pub(super) fn memory_id_of(r: &dyn Reads, uid: &str) -> Result<Option<MemoryId>> {
    r.memory_id(&IdRef::Uid(uid.to_string()))
}

/// Records a path as holding `uid` with no hash, so the next write replaces the file (the
/// uid goes back into it, or a redacted secret leaves the disk).
pub(super) fn mark_for_rewrite(tx: &mut dyn Tx, rel: &str, uid: &str) -> Result<()> {
    tx.write_vault_file(&VaultFileWrite::MarkForRewrite { path: rel, uid })
}

/// Drops what engram recorded about a path.
pub(super) fn forget_file(tx: &mut dyn Tx, rel: &str) -> Result<()> {
    tx.write_vault_file(&VaultFileWrite::Forget { path: rel })
}

/// Sends a memory whose file was deleted by hand to the trash.
pub(super) fn move_to_trash(tx: &mut dyn Tx, id: MemoryId, now: Millis) -> Result<()> {
    tx.patch_memory(id, &MemoryPatch::tier(Tier::Trash, now))?;
    Ok(())
}

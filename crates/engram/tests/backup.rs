//! `engram backup` and `engram restore --from`: a consistent copy while another process
//! writes, validation before anything is replaced, the replaced store kept, the vault copied.

mod support;

use serde_json::Value;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Duration;
use support::{Acked, command, integrity, missing, spawn_reader};

fn run(home: &Path, args: &[&str]) -> Output {
    command(home)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn ok_json(home: &Path, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = run(home, &all);
    assert!(
        out.status.success(),
        "engram {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn backup_and_restore_round_trip_while_another_process_writes() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    std::fs::create_dir(&a).unwrap();
    for i in 0..10 {
        ok_json(
            &a,
            &["remember", &format!("seed memory {i}"), "--room", "r"],
        );
    }
    // A file of its own in the vault, beside the ten the vault wrote.
    std::fs::create_dir_all(a.join("memories").join("r")).unwrap();
    std::fs::write(a.join("memories").join("r").join("note.md"), "# note\n").unwrap();

    // A writer keeps writing for the whole test.
    let mut writer = command(&a)
        .args(["stress-writer", "--prefix", "live"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Its output is read in a thread for its whole life, so its pipe never fills.
    let lines = spawn_reader(writer.stdout.take().unwrap());
    let next_line =
        |writer: &mut std::process::Child| match lines.recv_timeout(Duration::from_secs(60)) {
            Ok(line) => line,
            Err(e) => {
                let _ = writer.kill();
                let mut err = String::new();
                let _ = std::io::Read::read_to_string(&mut writer.stderr.take().unwrap(), &mut err);
                panic!("the writer stopped writing ({e}): {err}");
            }
        };
    let mut acked = Acked::default();
    for _ in 0..20 {
        acked.record(&next_line(&mut writer));
    }

    let bk = dir.path().join("bk");
    let info = ok_json(&a, &["backup", bk.to_str().unwrap()]);
    assert!(info["vault_files"].as_u64().unwrap() >= 11, "{info}");
    let backed_up = info["memories"].as_i64().unwrap();
    assert!(backed_up >= 10 + acked.remembered.len() as i64, "{info}");
    assert_eq!(integrity(&bk.join("engram.db")), ["ok"]);
    // Every write acknowledged before the backup started is in it.
    let lost = missing(&bk.join("engram.db"), &acked);
    assert!(lost.is_empty(), "{lost:?}");
    // A second backup into the same folder is refused.
    let out = run(&a, &["backup", bk.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));

    // Restore into an empty home: no --force needed; the vault comes along.
    let c = dir.path().join("c");
    let r = ok_json(&c, &["restore", "--from", bk.to_str().unwrap()]);
    assert_eq!(r["memories"].as_i64(), Some(backed_up));
    assert!(r["previous_db"].is_null());
    // The hand-written note came along (the vault may have given it front matter and a
    // place of its own since).
    fn files(d: &std::path::Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(d).unwrap().flatten() {
            if e.path().is_dir() {
                files(&e.path(), out);
            } else {
                out.push(std::fs::read_to_string(e.path()).unwrap_or_default());
            }
        }
    }
    let mut texts = Vec::new();
    files(&c.join("memories"), &mut texts);
    assert!(texts.iter().any(|t| t.contains("# note")), "{texts:?}");
    let recalled = ok_json(&c, &["recall", "seed memory", "--room", "r"]);
    assert!(!recalled["hits"].as_array().unwrap().is_empty());

    // Restoring over a store that holds memories needs --force ...
    let out = run(&a, &["restore", "--from", bk.to_str().unwrap(), "--json"]);
    assert_eq!(out.status.code(), Some(2));
    let e: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(e["error"]["field"], "force");
    // ... and, with it, happens while the writer keeps writing; the old store is kept.
    let r = ok_json(&a, &["restore", "--from", bk.to_str().unwrap(), "--force"]);
    let kept = r["previous_db"].as_str().unwrap();
    assert!(kept.contains("engram.db.before-restore-"), "{kept}");
    assert_eq!(integrity(Path::new(kept)), ["ok"]);
    assert!(
        r["previous_vault"]
            .as_str()
            .unwrap()
            .contains("memories.before-restore-")
    );
    // The writer is still alive and its writes still land: wait for a memory the backup
    // did not hold (written after the restore), then check the writer is still running.
    let in_backup: std::collections::HashSet<String> = {
        let c = rusqlite::Connection::open(bk.join("engram.db")).unwrap();
        let mut st = c.prepare("SELECT uid FROM memories").unwrap();
        st.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    loop {
        let line = next_line(&mut writer);
        let mut after = Acked::default();
        after.record(&line);
        if after.remembered.iter().any(|u| !in_backup.contains(u)) {
            // Written after the backup: once the restore had replaced the store, too?
            let c = rusqlite::Connection::open(a.join("engram.db")).unwrap();
            c.busy_timeout(Duration::from_secs(30)).unwrap();
            let uid = after.remembered.iter().next().unwrap();
            let n: i64 = c
                .query_row("SELECT count(*) FROM memories WHERE uid = ?1", [uid], |r| {
                    r.get(0)
                })
                .unwrap();
            if n == 1 {
                break;
            }
        }
    }
    if writer.try_wait().unwrap().is_some() {
        let mut err = String::new();
        std::io::Read::read_to_string(&mut writer.stderr.take().unwrap(), &mut err).unwrap();
        panic!("the writer died during the restore: {err}");
    }
    writer.kill().unwrap();
    writer.wait().unwrap();
    assert_eq!(integrity(&a.join("engram.db")), ["ok"]);
    let lost = missing(&a.join("engram.db"), &acked);
    assert!(
        lost.is_empty(),
        "what the backup held is in the restored store: {lost:?}"
    );
}

#[test]
fn restore_validates_the_backup_first() {
    let dir = tempfile::tempdir().unwrap();
    let h = dir.path().join("h");
    std::fs::create_dir(&h).unwrap();
    ok_json(&h, &["remember", "keep me", "--room", "r"]);

    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, vec![0x5a; 8192]).unwrap();
    let out = run(
        &h,
        &["restore", "--from", junk.to_str().unwrap(), "--force"],
    );
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a usable engram backup"));

    let foreign = dir.path().join("foreign.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE t (x); PRAGMA user_version = 999;")
        .unwrap();
    let out = run(
        &h,
        &["restore", "--from", foreign.to_str().unwrap(), "--force"],
    );
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("newer"));

    let missing_file = dir.path().join("nope");
    let out = run(&h, &["restore", "--from", missing_file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));

    // Nothing was replaced by the refused restores.
    let r = ok_json(&h, &["recall", "keep me", "--room", "r"]);
    assert_eq!(r["hits"].as_array().unwrap().len(), 1);
    assert!(std::fs::read_dir(&h).unwrap().all(|e| {
        !e.unwrap()
            .file_name()
            .to_string_lossy()
            .contains("before-restore")
    }));
}

//! Table tests of the subject · slot · value reading, in English, Japanese and Chinese.

use super::*;

fn r(s: &str) -> String {
    read(s).describe().unwrap_or_default()
}

#[test]
fn english_readings() {
    let mut bad = Vec::new();
    for (text, want) in [
        ("Alice's preferred editor is Vim.", "alice · editor · vim"),
        (
            "The Berlin office's chat tool is Slack.",
            "berlin office · chat tool · slack",
        ),
        (
            "The Berlin office uses Slack as its chat tool.",
            "berlin office · chat tool · slack",
        ),
        (
            "Alice prefers tabs for indentation.",
            "alice · indentation · tabs",
        ),
        ("Alice is on call this week.", "alice · on call · yes"),
        ("Bob is not on call this week.", "bob · on call · no"),
        ("My editor is Helix.", "user · editor · helix"),
        ("The user prefers pytest.", "user · ? · pytest"),
        (
            "We use PostgreSQL for the database.",
            "project · database · postgresql",
        ),
        (
            "Project Falcon uses PostgreSQL.",
            "project falcon · ? · postgresql",
        ),
        ("Build 2026.11.4 is green.", "build 2026.11.4 · ? · green"),
        (
            "The payments service timeout is 10s.",
            "payments service · timeout · 10s",
        ),
        ("The test runner is Vitest.", "? · test runner · vitest"),
        ("Test runner: vitest", "? · test runner · vitest"),
        (
            "OPS-4101: the export job is no longer paused.",
            "ops-4101 · export job · not paused",
        ),
        (
            "The project database is PostgreSQL.",
            "project · database · postgresql",
        ),
    ] {
        if r(text) != want {
            bad.push(format!("{text}: {} ≠ {want}", r(text)));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // "Redis is the session store": Redis is a value here, not who holds one.
    assert_eq!(read("Redis is the session store.").subject, None);
    // An imperative has no subject.
    assert_eq!(
        read("Don't use an ORM in the billing service.").subject,
        None
    );
    // Nothing to read.
    assert_eq!(read("Deploy after lunch").describe(), None);
}

#[test]
fn japanese_and_chinese_readings() {
    for (text, want) in [
        ("アリスのエディタはVimです。", "アリス · エディタ · vim"),
        (
            "ベルリン支社のチャットツールはSlackです。",
            "ベルリン支社 · チャットツール · slack",
        ),
        ("私のエディタはHelixです", "user · エディタ · helix"),
        (
            "4月から、モバイルチームのリーダーは田中さん",
            "モバイルチーム · リーダー · 田中さん",
        ),
        ("タイムアウトは30秒", "? · タイムアウト · 30秒"),
        (
            "柏林办公室的聊天工具是Slack。",
            "柏林办公室 · 聊天工具 · slack",
        ),
        ("我的编辑器是Vim", "user · 编辑器 · vim"),
        ("Alice的编辑器是Vim。", "alice · 编辑器 · vim"),
        ("测试框架是Vitest", "? · 测试框架 · vitest"),
    ] {
        assert_eq!(r(text), want, "{text}");
    }
}

#[test]
fn different_subjects_are_two_things() {
    let d = |a: &str, b: &str| differ(&read(a), &read(b));
    assert!(d("Alice prefers tabs.", "Bob prefers spaces.").is_some());
    assert!(
        d(
            "The Berlin office uses Slack.",
            "The Tokyo office uses Teams."
        )
        .is_some()
    );
    assert!(d("Project Falcon uses Go.", "Project Osprey uses Rust.").is_some());
    assert!(
        d(
            "OPS-4102: export paused.",
            "OPS-4101: export no longer paused."
        )
        .is_some()
    );
    assert!(d("Build 2026.11.4 is green.", "Build 2026.11.5 is red.").is_some());
    // A plain number after a noun is a value: the runtime changed, not the subject.
    assert!(d("Node 20 is the runtime.", "Node 22 is now the runtime.").is_none());
    assert!(
        d(
            "ベルリン支社のチャットツールはSlack",
            "東京支社のチャットツールはTeams"
        )
        .is_some()
    );
    assert!(d("柏林办公室的聊天工具是Slack", "东京办公室的聊天工具是Teams").is_some());
    // The same subject, a generic one, or an unread one never tells texts apart.
    assert!(d("Alice prefers tabs.", "Alice now prefers spaces.").is_none());
    assert!(d("The user prefers tabs.", "Alice prefers spaces.").is_none());
    assert!(
        d(
            "The project database is PostgreSQL.",
            "We switched to SQLite."
        )
        .is_none()
    );
    assert!(
        d(
            "The Berlin office uses Slack.",
            "The Berlin office switched to Teams."
        )
        .is_none()
    );
}

#[test]
fn slot_updates_and_repeats() {
    let upd = |a: &str, b: &str| same_slot_new_value(&read(a), &read(b));
    assert!(upd("Alice's editor is Vim.", "Alice's editor is Helix."));
    assert!(upd("My editor is Vim.", "My editor is Helix."));
    assert!(!upd("Alice's editor is Vim.", "Bob's editor is Helix."));
    assert!(!upd("My editor is Vim.", "My shell is fish."));
    assert!(!upd("My editor is Vim.", "My editor is Vim with plugins."));
    assert!(!upd(
        "The timeout is 10s for uploads.",
        "The timeout is 30s for downloads."
    ));
    assert!(upd(
        "PostgreSQL is the primary database.",
        "SQLite is now the primary database."
    ));
    assert!(upd(
        "The primary database is PostgreSQL.",
        "SQLite is now the primary database."
    ));
    assert!(!upd(
        "GitHub Actions is the CI for the app.",
        "CircleCI is the CI for the docs."
    ));
    // No subject read: only "X is Y" statements compare their slots.
    assert!(upd("The ORM is Drizzle.", "The ORM is Prisma."));
    assert!(upd("本番のNode.jsはv18。", "本番のNode.jsはv22。"));
    assert!(upd("测试框架是Jest", "测试框架是Vitest"));
    assert!(!upd(
        "テストはjestで実行している。",
        "テストはCIで実行している。"
    ));
    assert!(!upd("The ORM is Drizzle.", "The ORM is not Drizzle."));
    assert!(upd("Vim is my editor.", "Helix is now my editor."));
    assert!(upd("My editor is Vim.", "Helix is my editor."));
    assert!(!upd("Vim is Alice's editor.", "Helix is Bob's editor."));
    assert!(same_statement(
        &read("My editor is Vim."),
        &read("Vim is my editor.")
    ));
    assert!(same_statement(
        &read("Alice's editor is Vim."),
        &read("Alice's favourite editor is vim!")
    ));
}

#[test]
fn different_slots_are_two_things() {
    let d = |a: &str, b: &str| slots_differ(&read(a), &read(b));
    for (a, b) in [
        // A lower-case name stands where a subject does.
        (
            "alice prefers tabs for indentation",
            "bob prefers spaces for indentation",
        ),
        ("alice likes coffee", "bob does not like coffee"),
        (
            "Alice no longer works on the mobile app",
            "Bob works on the mobile app",
        ),
        // The same slot qualified another way.
        (
            "We use PostgreSQL for the orders database",
            "We use MongoDB for the analytics database",
        ),
        (
            "User prefers pytest for Python tests",
            "User prefers Jest for JavaScript tests",
        ),
        ("We use tabs in Go code", "We use spaces in Python code"),
        (
            "Python 3.11 is used in CI",
            "Python 3.12 is used on developer laptops",
        ),
        (
            "The login page uses OAuth",
            "The admin page uses SAML instead of OAuth",
        ),
        (
            "Alice uses Vim as her editor",
            "Carol switched from Vim to Helix",
        ),
        // Japanese and Chinese names and qualified topics.
        ("田中さんはVimを使っている", "佐藤さんはEmacsを使っている"),
        ("東京チームはSlackを使う", "大阪チームはTeamsを使う"),
        ("支付服务使用Redis做缓存", "搜索服务使用Memcached做缓存"),
        ("张三喜欢咖啡", "李四不喜欢咖啡"),
        ("张三从Vim换成了Helix", "李四使用Vim"),
    ] {
        assert!(
            d(a, b).is_some(),
            "{a} / {b}: {:?} / {:?}",
            read(a),
            read(b)
        );
    }
    for (a, b) in [
        // A number is the value changing, a narrower slot is the same slot.
        ("Node 20 is the runtime.", "Node 22 is now the runtime."),
        ("alice prefers tabs", "alice now prefers spaces"),
        ("The timeout is 10s.", "The upload timeout is 30s."),
        ("My editor is Vim.", "My preferred editor is Helix."),
        ("We use Jenkins for CI", "We switched to GitHub Actions"),
        ("张三喜欢咖啡", "张三不喜欢咖啡"),
    ] {
        assert!(
            d(a, b).is_none(),
            "{a} / {b}: {:?} / {:?}",
            read(a),
            read(b)
        );
    }
}

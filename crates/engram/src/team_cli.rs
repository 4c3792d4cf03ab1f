//! `engram team`: a team server's users and tokens, each verb one `Store` call.

use crate::cli::{TeamArgs, TeamCommand, TeamTokenCommand, TeamUserCommand};

pub fn run(a: TeamArgs, json: bool) -> anyhow::Result<()> {
    if let Some(url) = a.store {
        crate::open::set_store_flag(url);
    }
    let mut store = crate::open::open_store()?;
    match a.command {
        TeamCommand::User(TeamUserCommand::Add { name }) => {
            let token = store.team_add_user(&name)?;
            print_token(&name, &token, "added", json);
        }
        TeamCommand::Token(TeamTokenCommand::Add { name }) => {
            let token = store.team_new_token(&name)?;
            print_token(
                &name,
                &token,
                "has a new token (the old one no longer works)",
                json,
            );
        }
        TeamCommand::Token(TeamTokenCommand::Revoke { name }) => {
            store.team_revoke(&name)?;
            if json {
                println!("{}", serde_json::json!({ "user": name, "revoked": true }));
            } else {
                println!("{name}'s token is revoked: their requests get 401; their memories stay");
            }
        }
        TeamCommand::User(TeamUserCommand::List) => {
            let users = store.team_users()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&users)?);
            } else if users.is_empty() {
                println!("no users: this store is not a team server (see `engram team user add`)");
            } else {
                for u in users {
                    let state = if u.active { "active" } else { "revoked" };
                    println!(
                        "{}\t{state}\tsince {}",
                        u.name,
                        engram_core::time::format(u.token_changed_at)
                    );
                }
            }
        }
    }
    Ok(())
}

/// The token, once: it is not stored and cannot be shown again.
fn print_token(name: &str, token: &str, what: &str, json: bool) {
    if json {
        println!("{}", serde_json::json!({ "user": name, "token": token }));
    } else {
        println!("{name} {what}. Their token (shown once, keep it secret):\n{token}");
    }
}

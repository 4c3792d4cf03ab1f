//! A team server's people: users, their tokens, and who a request's token names.
//!
//! A token is 32 random bytes from the operating system, shown once as `engram_` and 64
//! hex digits; the store keeps only its SHA-256 (`team_users`, each backend's `team.rs`),
//! so a copy of the database authenticates no one. A revoke clears the hash (the user and
//! their memories stay); `token add` issues a fresh token and the old one stops working.
//! The server is in team mode once any user exists, revoked or not, so revoking the last
//! token never opens the server to everyone.

use crate::storage::rows::TeamUser;
use crate::{Error, Result, Store};
use sha2::{Digest, Sha256};

/// What every token starts with (so one found in a log or a file is recognisable).
pub const TOKEN_PREFIX: &str = "engram_";

/// The hex SHA-256 of a token: what is stored and looked up.
pub fn token_hash(token: &str) -> String {
    Sha256::digest(token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn fresh_token() -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| Error::Index(format!("cannot draw a random token: {e}")))?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("{TOKEN_PREFIX}{hex}"))
}

impl Store {
    /// Adds a user and returns their token (shown once; only its hash is kept). An
    /// existing name is refused.
    pub fn team_add_user(&mut self, name: &str) -> Result<String> {
        engram_core::team::check_user_name(name)?;
        let token = fresh_token()?;
        let hash = token_hash(&token);
        let now = self.now();
        let added = self.write(|tx| tx.add_team_user(name, &hash, now))?;
        if !added {
            return Err(engram_core::InputError::new(
                "name",
                format!("a user named {name:?} exists; `engram team token add {name}` gives them a new token"),
            )
            .into());
        }
        Ok(token)
    }

    /// Issues a new token for an existing user (the old one stops working); returns it.
    pub fn team_new_token(&mut self, name: &str) -> Result<String> {
        let token = fresh_token()?;
        let hash = token_hash(&token);
        self.set_token(name, Some(&hash))?;
        Ok(token)
    }

    /// Revokes a user's token: every request with it gets 401 from now on. The user and
    /// what they wrote stay.
    pub fn team_revoke(&mut self, name: &str) -> Result<()> {
        self.set_token(name, None)
    }

    fn set_token(&mut self, name: &str, hash: Option<&str>) -> Result<()> {
        let now = self.now();
        if self.write(|tx| tx.set_team_token(name, hash, now))? {
            Ok(())
        } else {
            Err(engram_core::InputError::new(
                "name",
                format!("no user named {name:?} (see `engram team user list`)"),
            )
            .into())
        }
    }

    /// Every user, by name (never a token or its hash).
    pub fn team_users(&self) -> Result<Vec<TeamUser>> {
        self.backend.unfiltered().team_users()
    }

    /// Whether the store is a team server's: any user, revoked or not.
    pub fn team_mode(&self) -> Result<bool> {
        Ok(!self.team_users()?.is_empty())
    }

    /// The user a presented token names, when it is a current one. The lookup is by the
    /// token's SHA-256, so the comparison the database makes is between hashes, never of
    /// the secret itself.
    pub fn team_authenticate(&self, token: &str) -> Result<Option<String>> {
        if !token.starts_with(TOKEN_PREFIX) {
            return Ok(None);
        }
        self.backend
            .unfiltered()
            .team_user_by_token(&token_hash(token))
    }
}

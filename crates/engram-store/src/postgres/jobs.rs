//! One process at a time for the jobs of a shared database ([`Job`]): a session-level
//! advisory lock, taken with `pg_try_advisory_lock` (never waiting) on a connection opened
//! for it alone. Dropping the [`JobLock`] closes that connection, which releases the lock
//! whatever happened meanwhile; a pooled connection is never used, since one returned to
//! the pool still holding the lock would keep every other server out for good.

use crate::storage::{Job, JobLock};
use crate::{Error, Result};
use postgres::{Config, NoTls};

/// The advisory lock key of each job ("engram" in ASCII, then the job): fixed, so every
/// server on the database agrees on it. The migrations' key is `db::MIGRATION_LOCK`.
fn key(job: Job) -> i64 {
    match job {
        Job::Maintenance => 0x0065_6e67_7261_6d01,
        Job::Backfill => 0x0065_6e67_7261_6d02,
    }
}

/// Takes `job`'s lock, or [`Error::Busy`] when another session holds it.
pub(crate) fn try_lock(config: &Config, target: &str, job: Job) -> Result<JobLock> {
    let mut client = config.connect(NoTls).map_err(|e| Error::Unavailable {
        target: target.to_string(),
        message: e.to_string(),
    })?;
    let got: bool = client
        .query_one("SELECT pg_try_advisory_lock($1)", &[&key(job)])?
        .get(0);
    if !got {
        return Err(Error::Busy {
            job: job.name(),
            target: target.to_string(),
        });
    }
    Ok(JobLock::held_by(Box::new(client)))
}

/// The key of the write lock a write takes once it has lost [`super::RACE_ATTEMPTS`] races.
const WRITE_KEY: i64 = 0x0065_6e67_7261_6d10;

/// Waits for the write lock (`pg_advisory_lock`, on a connection of its own like the jobs'
/// locks) and returns the connection holding it: the lock is released when it is dropped.
/// Taken before the write's transaction begins, so that transaction's snapshot already
/// sees every write committed by the lock's previous holder.
pub(crate) fn lock_writes(config: &Config, target: &str) -> Result<postgres::Client> {
    let mut client = config.connect(NoTls).map_err(|e| Error::Unavailable {
        target: target.to_string(),
        message: e.to_string(),
    })?;
    client.execute("SELECT pg_advisory_lock($1)", &[&WRITE_KEY])?;
    Ok(client)
}

//! One writer per thread across processes: a PostgreSQL session-level advisory lock per
//! thread, held on one dedicated connection per process.
//!
//! Advisory locks belong to the database session that took them, so they end with it: a
//! process that exits or is killed (even with `kill -9`) closes its socket, the server ends
//! the session at once and the thread is free. Only a host that vanishes without closing
//! its connections (power loss, network partition) keeps a lease until the server's TCP
//! keepalive gives up on the connection (`tcp_keepalives_idle` + `tcp_keepalives_interval`
//! × `tcp_keepalives_count`; see docs/scale.md).
//!
//! Within a process the set of held threads is tracked here too, since advisory locks are
//! re-entrant for the session that holds them.

use super::db::Db;
use crate::error::StoreError;
use oi_protocol::ThreadId;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use tokio_postgres::Client;

/// The advisory lock key of a thread: its 128-bit id folded to 64 bits.
pub(crate) fn lease_key(id: &ThreadId) -> i64 {
    let v = id.as_uuid().as_u128();
    // Truncation is the point: both halves fold into one key.
    ((v >> 64) as u64 ^ v as u64) as i64
}

/// The process's leases: which threads it writes, and the connection holding their locks.
#[derive(Default)]
pub(crate) struct Leases {
    held: Mutex<HashSet<ThreadId>>,
    conn: tokio::sync::Mutex<Option<Client>>,
}

impl Leases {
    /// Takes the lease of `id`, or fails with [`StoreError::Busy`] if another session (here
    /// or in another process) has it. Must be called on the database runtime.
    pub(crate) async fn acquire(&self, db: &Db, id: ThreadId) -> Result<(), StoreError> {
        let busy = || StoreError::Busy {
            id,
            path: db.display.clone().into(),
        };
        if !self
            .held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id)
        {
            return Err(busy());
        }
        let taken = self.try_lock(db, id).await;
        match taken {
            Ok(true) => Ok(()),
            Ok(false) => {
                self.forget(&id);
                Err(busy())
            }
            Err(e) => {
                self.forget(&id);
                Err(e)
            }
        }
    }

    async fn try_lock(&self, db: &Db, id: ThreadId) -> Result<bool, StoreError> {
        let mut guard = self.conn.lock().await;
        let client = match guard.take() {
            Some(c) if !c.is_closed() => c,
            previous => {
                let c = db.connect().await?;
                if previous.is_some() {
                    self.reacquire_all(&c, &id).await;
                }
                c
            }
        };
        let row = client
            .query_one("SELECT pg_try_advisory_lock($1)", &[&lease_key(&id)])
            .await;
        *guard = Some(client);
        Ok(row?.get(0))
    }

    /// The lease connection broke (database restart, network): the old locks died with it.
    /// Take them again on the new connection, and say loudly if another process got there
    /// first.
    async fn reacquire_all(&self, client: &Client, except: &ThreadId) {
        let held: Vec<ThreadId> = self
            .held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|id| *id != except)
            .copied()
            .collect();
        for id in held {
            let ok = client
                .query_one("SELECT pg_try_advisory_lock($1)", &[&lease_key(&id)])
                .await
                .map(|r| r.get::<_, bool>(0));
            if !matches!(ok, Ok(true)) {
                tracing::warn!(
                    "thread {id}: the connection holding its writer lease was lost and the \
                     lease could not be taken back; another process may write this thread too"
                );
            }
        }
    }

    fn forget(&self, id: &ThreadId) {
        self.held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
    }

    /// Gives the lease of `id` back (writer dropped), waiting until the database has it,
    /// so the thread can be resumed again right away, here or elsewhere.
    pub(crate) fn release(self: &Arc<Self>, db: &Db, id: ThreadId) {
        let me = self.clone();
        let done = db.run(async move {
            let guard = me.conn.lock().await;
            if let Some(client) = guard.as_ref()
                && let Err(e) = client
                    .query_one("SELECT pg_advisory_unlock($1)", &[&lease_key(&id)])
                    .await
            {
                tracing::debug!("thread {id}: releasing its lease: {e}");
            }
            me.forget(&id);
            Ok(())
        });
        if let Err(e) = done {
            tracing::warn!("thread {id}: releasing its writer lease: {e}");
            self.forget(&id);
        }
    }
}

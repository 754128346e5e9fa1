//! One writer per thread across processes: a PostgreSQL session-level advisory lock per
//! thread, held on one dedicated connection per process, plus a fencing generation.
//!
//! Advisory locks belong to the database session that took them, so they end with it: a
//! process that exits or is killed (even with `kill -9`) closes its socket, the server ends
//! the session at once and the thread is free. Only a host that vanishes without closing
//! its connections (power loss, network partition) keeps a lease until the server's TCP
//! keepalive gives up on the connection (`tcp_keepalives_idle` + `tcp_keepalives_interval`
//! × `tcp_keepalives_count`; see docs/scale.md).
//!
//! The lock also ends when the *server* restarts or the lease connection breaks while this
//! process keeps running: another process may then take the thread. So the lock alone is
//! not trusted for writing. Each time a lease is taken, the thread's row in
//! `oi_thread_leases` gets a new `generation`, and every append checks, in its own
//! transaction and under a row lock, that the generation is still the writer's
//! ([`check_generation`]). A writer whose lease was taken over is refused with
//! [`StoreError::LeaseLost`] instead of interleaving its records with the new writer's.
//! When the lease connection is found broken, the locks are taken again on a new one
//! ([`Leases::ensure`]): a thread nobody took in the meantime keeps its generation and its
//! writer carries on.
//!
//! Within a process the set of held threads is tracked here too, since advisory locks are
//! re-entrant for the session that holds them.

use super::db::Db;
use crate::error::StoreError;
use oi_protocol::ThreadId;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use tokio_postgres::{Client, GenericClient};

/// The advisory lock key of a thread: its 128-bit id folded to 64 bits.
pub(crate) fn lease_key(id: &ThreadId) -> i64 {
    let v = id.as_uuid().as_u128();
    // Truncation is the point: both halves fold into one key.
    ((v >> 64) as u64 ^ v as u64) as i64
}

/// Whether some database session holds `id`'s advisory lock. A `bigint` key shows in
/// `pg_locks` as its high half in `classid` and its low half in `objid`, with
/// `objsubid = 1`.
pub(crate) async fn is_held(client: &Client, id: &ThreadId) -> Result<bool, StoreError> {
    // Reinterpreting the key's bits is the point: `pg_locks` shows them as two oids.
    let bits = lease_key(id) as u64;
    let (high, low) = ((bits >> 32) as u32, bits as u32);
    let row = client
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_locks
                 WHERE locktype = 'advisory' AND granted AND objsubid = 1
                   AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
                   AND classid = $1 AND objid = $2)",
            &[&high, &low],
        )
        .await?;
    Ok(row.get(0))
}

/// The process's leases: which threads it writes (with the generation it holds), and the
/// connection holding their locks.
#[derive(Default)]
pub(crate) struct Leases {
    held: Mutex<HashMap<ThreadId, Generation>>,
    /// Threads whose lease was found taken over; their writers are refused.
    lost: Mutex<HashSet<ThreadId>>,
    conn: tokio::sync::Mutex<Option<Client>>,
}

/// The generation of a held lease; `0` while it is being taken.
pub(crate) type Generation = i64;

impl Leases {
    /// Takes the lease of `id` and returns its new generation, or fails with
    /// [`StoreError::Busy`] if another session (here or in another process) has it. Must be
    /// called inside an operation (see `db.rs`).
    pub(crate) async fn acquire(&self, db: &Db, id: ThreadId) -> Result<Generation, StoreError> {
        let busy = || StoreError::Busy {
            id,
            path: db.display.clone().into(),
        };
        {
            let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
            if held.contains_key(&id) {
                return Err(busy());
            }
            held.insert(id, 0);
        }
        match self.try_lock(db, id).await {
            Ok(Some(generation)) => {
                self.lost_set().remove(&id);
                self.held
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(id, generation);
                Ok(generation)
            }
            Ok(None) => {
                self.forget(&id);
                Err(busy())
            }
            Err(e) => {
                self.forget(&id);
                Err(e)
            }
        }
    }

    /// Takes the advisory lock and, when it was free, a new generation.
    async fn try_lock(&self, db: &Db, id: ThreadId) -> Result<Option<Generation>, StoreError> {
        let mut guard = self.conn.lock().await;
        let client = self.live_conn(db, &mut guard, Some(&id)).await?;
        let row = client
            .query_one("SELECT pg_try_advisory_lock($1)", &[&lease_key(&id)])
            .await?;
        if !row.get::<_, bool>(0) {
            return Ok(None);
        }
        let bumped = client
            .query_one(
                "INSERT INTO oi_thread_leases (thread_id, generation) VALUES ($1, 1)
                 ON CONFLICT (thread_id) DO UPDATE SET generation = oi_thread_leases.generation + 1
                 RETURNING generation",
                &[&id.to_string()],
            )
            .await;
        match bumped {
            Ok(row) => Ok(Some(row.get(0))),
            Err(e) => {
                // Do not keep a lock whose generation was not recorded.
                let _ = client
                    .query_one("SELECT pg_advisory_unlock($1)", &[&lease_key(&id)])
                    .await;
                Err(e.into())
            }
        }
    }

    /// The lease connection, opened again (and every held lock taken again on it, except
    /// `except`'s) if it broke.
    async fn live_conn<'a>(
        &self,
        db: &Db,
        guard: &'a mut Option<Client>,
        except: Option<&ThreadId>,
    ) -> Result<&'a Client, StoreError> {
        let broken = guard.as_ref().is_none_or(Client::is_closed);
        if broken {
            let had_one = guard.is_some();
            *guard = None;
            let c = db.connect().await?;
            if had_one {
                self.reacquire_all(&c, except).await?;
            }
            *guard = Some(c);
        }
        guard
            .as_ref()
            .ok_or_else(|| StoreError::Postgres("the lease connection is gone".into()))
    }

    /// The lease connection broke (database restart, network): the old locks died with it.
    /// Take them again on the new connection; a thread another session took (or took and
    /// let go) in the meantime is lost to this process, loudly.
    async fn reacquire_all(
        &self,
        client: &Client,
        except: Option<&ThreadId>,
    ) -> Result<(), StoreError> {
        let held: Vec<(ThreadId, Generation)> = self
            .held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .filter(|(id, g)| Some(*id) != except && **g != 0)
            .map(|(id, g)| (*id, *g))
            .collect();
        for (id, generation) in held {
            let locked: bool = client
                .query_one("SELECT pg_try_advisory_lock($1)", &[&lease_key(&id)])
                .await?
                .get(0);
            let current: Option<i64> = if locked {
                client
                    .query_opt(
                        "SELECT generation FROM oi_thread_leases WHERE thread_id = $1",
                        &[&id.to_string()],
                    )
                    .await?
                    .map(|r| r.get(0))
            } else {
                None
            };
            if current == Some(generation) {
                tracing::info!("thread {id}: writer lease taken back after the connection broke");
                continue;
            }
            if locked {
                client
                    .query_one("SELECT pg_advisory_unlock($1)", &[&lease_key(&id)])
                    .await?;
            }
            crate::notice!(
                "thread {id}: the connection holding its writer lease broke and another \
                 session has taken the thread since; this session's further records are refused"
            );
            self.lost_set().insert(id);
        }
        Ok(())
    }

    /// Before an append: `Err(LeaseLost)` if the lease of `id` is known to be lost; if the
    /// lease connection broke, it is reopened and the locks taken back first. The append's
    /// own [`check_generation`] is what guarantees the fence; this makes a lost lease
    /// known (and the lock held again) as early as possible.
    pub(crate) async fn ensure(&self, db: &Db, id: ThreadId) -> Result<(), StoreError> {
        if !self.lost_set().contains(&id) {
            let mut guard = self.conn.lock().await;
            self.live_conn(db, &mut guard, None).await?;
        }
        if self.lost_set().contains(&id) {
            return Err(StoreError::LeaseLost { id });
        }
        Ok(())
    }

    fn lost_set(&self) -> std::sync::MutexGuard<'_, HashSet<ThreadId>> {
        self.lost.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn forget(&self, id: &ThreadId) {
        self.held
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
    }

    /// Gives the lease of `id` back (writer dropped), waiting until the database has it
    /// when the calling thread may wait ([`Db::may_wait`]), so the thread can be resumed
    /// again right away, here or elsewhere; otherwise the release runs on without a waiter.
    pub(crate) fn release(self: &Arc<Self>, db: &Db, id: ThreadId) {
        let op = self.release_op(id);
        if !db.may_wait() {
            db.run_detached(op);
            return;
        }
        if let Err(e) = db.run(op) {
            crate::notice!("thread {id}: releasing its writer lease: {e}");
            self.forget(&id);
        }
    }

    /// [`Leases::release`] for async callers: returns once the database has the lease back.
    pub(crate) async fn release_async(self: &Arc<Self>, db: &Db, id: ThreadId) {
        if let Err(e) = db.run_async(self.release_op(id)).await {
            crate::notice!("thread {id}: releasing its writer lease: {e}");
            self.forget(&id);
        }
    }

    /// The operation that unlocks `id` on the lease connection and forgets it.
    fn release_op(
        self: &Arc<Self>,
        id: ThreadId,
    ) -> impl std::future::Future<Output = Result<(), StoreError>> + Send + 'static {
        let lost = self.lost_set().remove(&id);
        let me = self.clone();
        async move {
            let guard = me.conn.lock().await;
            if !lost
                && let Some(client) = guard.as_ref()
                && !client.is_closed()
                && let Err(e) = client
                    .query_one("SELECT pg_advisory_unlock($1)", &[&lease_key(&id)])
                    .await
            {
                tracing::debug!("thread {id}: releasing its lease: {e}");
            }
            me.forget(&id);
            Ok(())
        }
    }
}

/// In an append's transaction, before its inserts: the thread's lease generation must still
/// be `generation`. `FOR SHARE` keeps it so until the transaction ends: a session taking
/// the lease (which raises the generation) waits for this append to commit, and every
/// append after that is refused.
pub(crate) async fn check_generation(
    tx: &impl GenericClient,
    id: &ThreadId,
    generation: Generation,
) -> Result<(), StoreError> {
    let row = tx
        .query_opt(
            "SELECT generation FROM oi_thread_leases WHERE thread_id = $1 FOR SHARE",
            &[&id.to_string()],
        )
        .await?;
    match row.map(|r| r.get::<_, i64>(0)) {
        Some(g) if g == generation => Ok(()),
        _ => Err(StoreError::LeaseLost { id: *id }),
    }
}

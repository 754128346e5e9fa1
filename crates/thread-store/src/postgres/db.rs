//! Connections to PostgreSQL: a small pool and the embedded migrations, on the caller's
//! runtime.
//!
//! `tokio-postgres` is async, and so is the store: an operation is a future spawned on the
//! runtime the store was opened on (the caller's: the servers', the CLI's), which
//! [`Db::run_async`] awaits without holding a thread. Spawning rather than polling it in
//! the caller's task means an operation always finishes, even when its caller is cancelled:
//! a lease is never half taken, a transaction never half sent. The same runtime drives the
//! connections. Sync callers that remain (code off the runtime: the CLI's `sessions`
//! commands) park on the operation's answer ([`Db::run`]); a program with no runtime at all
//! (a test, a benchmark) opens its stores on one shared runtime made for that case only
//! ([`sync_runtime`]).
//!
//! Nothing waits on the server without a bound: opening a connection (TCP connect *and* the
//! startup/authentication handshake) is limited by [`StoreTimeouts::connect`], and every
//! operation [`Db::run`] hands over by [`StoreTimeouts::statement`], its clock stopped while
//! it opens a connection (so each bound is what its setting says). A server that is
//! stopped (SIGSTOP), blackholed by the network or stuck on a lock therefore gives a clear
//! error instead of a hang; connections that were in use when an operation timed out are
//! dropped, never reused.

use crate::error::StoreError;
use std::future::Future;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::{Client, Config, NoTls};

tokio::task_local! {
    /// When the operation running in this task times out (see `Db::spawn_with`).
    static OP_DEADLINE: Arc<Mutex<tokio::time::Instant>>;
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Connections kept for queries and appends (leases use one more, see `lease.rs`).
const POOL_SIZE: usize = 4;

/// How long the store waits on the database (`[thread_store] connect_timeout_sec` and
/// `statement_timeout_sec`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreTimeouts {
    /// Opening one connection: TCP connect, startup and authentication (default 10 s).
    pub connect: Duration,
    /// One store operation (a query, an append's transaction, taking a lease), including
    /// waiting for a pooled connection but not opening a new one (default 30 s).
    pub statement: Duration,
}

impl StoreTimeouts {
    /// Ten seconds to connect.
    pub const DEFAULT_CONNECT: Duration = Duration::from_secs(10);
    /// Thirty seconds per statement.
    pub const DEFAULT_STATEMENT: Duration = Duration::from_secs(30);
}

impl Default for StoreTimeouts {
    fn default() -> Self {
        StoreTimeouts {
            connect: Self::DEFAULT_CONNECT,
            statement: Self::DEFAULT_STATEMENT,
        }
    }
}
/// Held (transaction-scoped) while migrating, so servers starting together migrate once.
const MIGRATION_LOCK: i64 = 0x6f69_5f6d_6967_7261; // "oi_migra"

/// Versioned schema changes, applied in order, each once per database. Never edit a
/// released entry: add a new version.
const MIGRATIONS: &[(i32, &str)] = &[
    (
        1,
        r#"CREATE TABLE oi_threads (
        id TEXT COLLATE "C" PRIMARY KEY,
        created_at_ms BIGINT NOT NULL,
        updated_at_ms BIGINT NOT NULL,
        cwd TEXT NOT NULL,
        model_provider TEXT NOT NULL,
        model TEXT NOT NULL,
        source TEXT NOT NULL,
        preview TEXT NOT NULL DEFAULT '',
        name TEXT,
        archived BOOLEAN NOT NULL DEFAULT FALSE,
        forked_from_id TEXT,
        cli_version TEXT NOT NULL,
        git_sha TEXT,
        git_branch TEXT,
        git_origin_url TEXT
    );
    -- Ids collate bytewise ("C"), as in SQLite: keyset cursors then mean the same in both.
    CREATE INDEX oi_threads_by_created ON oi_threads (archived, created_at_ms, id);
    CREATE INDEX oi_threads_by_updated ON oi_threads (archived, updated_at_ms, id);
    CREATE TABLE oi_rollout_lines (
        thread_id TEXT COLLATE "C" NOT NULL REFERENCES oi_threads (id) ON DELETE CASCADE,
        seq BIGINT NOT NULL,
        line TEXT NOT NULL,
        PRIMARY KEY (thread_id, seq)
    );"#,
    ),
    (
        2,
        // The fencing generation of each thread's writer lease (see `lease.rs`). No foreign
        // key: a lease is taken before its thread's row is inserted.
        r#"CREATE TABLE oi_thread_leases (
        thread_id TEXT COLLATE "C" PRIMARY KEY,
        generation BIGINT NOT NULL
    );"#,
    ),
];

/// `postgresql://host:port/db` without user, password or options: safe to log and show.
pub(crate) fn redact_url(url: &str) -> String {
    match Config::from_str(url) {
        Ok(c) => describe(&c),
        Err(_) => "postgresql://<unparsable url>".into(),
    }
}

fn describe(c: &Config) -> String {
    let host = match c.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(p)) => p.display().to_string(),
        None => "localhost".into(),
    };
    let port = c.get_ports().first().copied().unwrap_or(5432);
    let db = c.get_dbname().or(c.get_user()).unwrap_or("");
    format!("postgresql://{host}:{port}/{db}")
}

/// A PostgreSQL database, reached from the runtime the store was opened on.
pub(crate) struct Db {
    /// The runtime that opened the store: it drives the connections and runs each
    /// operation. The store does not own it.
    handle: tokio::runtime::Handle,
    config: Config,
    timeouts: StoreTimeouts,
    /// What to show in messages: see [`redact_url`].
    pub(crate) display: String,
    idle: Arc<Mutex<Vec<Client>>>,
    permits: Arc<Semaphore>,
}

/// The runtime of sync callers that have none of their own (tests, benchmarks, a tool on a
/// plain thread): made once, on first need, and shared by every store they open. Callers
/// inside a runtime never use it.
fn sync_runtime() -> Result<tokio::runtime::Handle, StoreError> {
    static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt.handle().clone());
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("oi-postgres")
        .enable_all()
        .build()
        .map_err(|e| StoreError::Postgres(format!("cannot start the database runtime: {e}")))?;
    install_runtime(&RUNTIME, rt)
}

/// Keeps the first runtime set in `cell`. A racing caller's runtime may have won; ours is
/// then shut down without waiting, because this caller may be inside a current-thread
/// runtime, where dropping a runtime panics.
fn install_runtime(
    cell: &std::sync::OnceLock<tokio::runtime::Runtime>,
    rt: tokio::runtime::Runtime,
) -> Result<tokio::runtime::Handle, StoreError> {
    if let Err(loser) = cell.set(rt) {
        loser.shutdown_background();
    }
    cell.get()
        .map(|rt| rt.handle().clone())
        .ok_or_else(|| StoreError::Postgres("the database runtime is not set".into()))
}

/// A pooled connection; goes back to the pool on drop unless it broke.
pub(crate) struct Conn {
    client: Option<Client>,
    idle: Arc<Mutex<Vec<Client>>>,
    _permit: OwnedSemaphorePermit,
}

impl std::ops::Deref for Conn {
    type Target = Client;
    fn deref(&self) -> &Client {
        // Only `Drop` takes the client out.
        self.client.as_ref().unwrap_or_else(|| unreachable!())
    }
}

impl std::ops::DerefMut for Conn {
    fn deref_mut(&mut self) -> &mut Client {
        self.client.as_mut().unwrap_or_else(|| unreachable!())
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        if let Some(c) = self.client.take()
            && !c.is_closed()
        {
            self.idle.lock().unwrap_or_else(|p| p.into_inner()).push(c);
        }
    }
}

impl Db {
    /// Parses `url`, connects once (so a wrong URL fails here, with a message naming it) and
    /// applies pending migrations, on the caller's runtime.
    pub(crate) async fn open(url: &str, timeouts: StoreTimeouts) -> Result<Arc<Db>, StoreError> {
        let db = Self::prepare(url, timeouts, tokio::runtime::Handle::current())?;
        let d = db.clone();
        db.run_async(async move {
            let mut conn = d.conn().await?;
            migrate(&mut conn, &d.display).await
        })
        .await?;
        Ok(db)
    }

    /// [`Db::open`] for a sync caller: on the multi-thread runtime the calling thread
    /// belongs to (a blocking-pool thread does), else on [`sync_runtime`]. A current-thread
    /// runtime is not used: this thread may be the one that runs it, and would wait for itself.
    pub(crate) fn open_blocking(url: &str, timeouts: StoreTimeouts) -> Result<Arc<Db>, StoreError> {
        let handle = match tokio::runtime::Handle::try_current() {
            Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => h,
            _ => sync_runtime()?,
        };
        let db = Self::prepare(url, timeouts, handle)?;
        let d = db.clone();
        db.run(async move {
            let mut conn = d.conn().await?;
            migrate(&mut conn, &d.display).await
        })?;
        Ok(db)
    }

    /// Checks the URL and the timeouts; connects to nothing.
    fn prepare(
        url: &str,
        timeouts: StoreTimeouts,
        handle: tokio::runtime::Handle,
    ) -> Result<Arc<Db>, StoreError> {
        let shown = redact_url(url);
        let mut config = Config::from_str(url).map_err(|e| {
            StoreError::Invalid(format!(
                "thread_store.url `{shown}` is not a valid PostgreSQL URL ({e}); expected \
                 postgresql://USER[:PASSWORD]@HOST:PORT/DATABASE"
            ))
        })?;
        if config.get_ssl_mode() == SslMode::Require {
            return Err(StoreError::Invalid(format!(
                "thread_store.url `{shown}` asks for sslmode=require, but this build connects \
                 without TLS; use sslmode=disable on a trusted network (loopback, a private \
                 network, or a TLS-terminating proxy next to the server)"
            )));
        }
        // A `connect_timeout` in the URL only bounds the TCP connect; ours bounds the
        // handshake too (see `connect`), so the shorter of the two applies.
        let timeouts = StoreTimeouts {
            connect: config
                .get_connect_timeout()
                .map_or(timeouts.connect, |t| (*t).min(timeouts.connect)),
            ..timeouts
        };
        config.connect_timeout(timeouts.connect);
        config.application_name("open-interpreter");
        Ok(Arc::new(Db {
            handle,
            display: describe(&config),
            config,
            timeouts,
            idle: Arc::new(Mutex::new(Vec::new())),
            permits: Arc::new(Semaphore::new(POOL_SIZE)),
        }))
    }

    /// [`StoreTimeouts::statement`].
    pub(crate) fn statement_timeout(&self) -> Duration {
        self.timeouts.statement
    }

    /// [`Db::run_async`] for a sync caller: parks the calling thread until the operation
    /// answers. Not for a task of a current-thread runtime (it would wait for itself); any
    /// other thread may call it, a blocking-pool thread included.
    pub(crate) fn run<T: Send + 'static>(
        &self,
        fut: impl Future<Output = Result<T, StoreError>> + Send + 'static,
    ) -> Result<T, StoreError> {
        // A plain channel, not an executor: this may run inside another `block_on` (a
        // writer dropped while a sync call is under way), and only parks this thread.
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.spawn_with(fut, move |r| {
            let _ = tx.send(r);
        });
        rx.recv().map_err(|_| stopped())?
    }

    /// Whether the calling thread may park on [`Db::run`]: always when the store's runtime
    /// has workers of its own, otherwise only from a thread outside any runtime.
    pub(crate) fn may_wait(&self) -> bool {
        self.handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread
            || tokio::runtime::Handle::try_current().is_err()
    }

    /// Runs `fut` on the store's runtime and awaits it, at most [`StoreTimeouts::statement`]:
    /// past that, the operation is abandoned (a transaction it had open is rolled back by the
    /// server when its connection closes) and the pool is emptied, since its connections may
    /// be as stuck as the one that timed out. No thread waits for it.
    pub(crate) async fn run_async<T: Send + 'static>(
        &self,
        fut: impl Future<Output = Result<T, StoreError>> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.spawn_op(fut).await
    }

    /// Starts `fut` on the store's runtime with nobody waiting for it (bounded as
    /// [`Db::run_async`] says); a failure is logged.
    pub(crate) fn run_detached(
        &self,
        fut: impl Future<Output = Result<(), StoreError>> + Send + 'static,
    ) {
        let answer = self.spawn_op(fut);
        self.handle.spawn(async move {
            if let Err(e) = answer.await {
                tracing::debug!("thread store operation without a waiter: {e}");
            }
        });
    }

    /// Starts `fut` on the store's runtime, bounded as [`Db::run_async`] says; the returned
    /// future yields its result and may be awaited from anywhere.
    fn spawn_op<T: Send + 'static>(
        &self,
        fut: impl Future<Output = Result<T, StoreError>> + Send + 'static,
    ) -> impl Future<Output = Result<T, StoreError>> + Send + 'static {
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.spawn_with(fut, move |r| {
            let _ = tx.send(r);
        });
        async move { rx.await.map_err(|_| stopped())? }
    }

    /// Starts `fut` on the store's runtime, at most [`StoreTimeouts::statement`], and hands
    /// its result to `answer`.
    fn spawn_with<T: Send + 'static>(
        &self,
        fut: impl Future<Output = Result<T, StoreError>> + Send + 'static,
        answer: impl FnOnce(Result<T, StoreError>) + Send + 'static,
    ) {
        let limit = self.timeouts.statement;
        let idle = self.idle.clone();
        let shown = self.display.clone();
        self.handle.spawn(async move {
            let deadline = Arc::new(Mutex::new(tokio::time::Instant::now() + limit));
            let expired = {
                let deadline = deadline.clone();
                async move {
                    // The deadline moves while the operation connects (see `connect`).
                    loop {
                        let at = *lock(&deadline);
                        tokio::time::sleep_until(at).await;
                        if tokio::time::Instant::now() >= *lock(&deadline) {
                            return;
                        }
                    }
                }
            };
            let outcome = tokio::select! {
                biased;
                r = OP_DEADLINE.scope(deadline, fut) => Ok(r),
                () = expired => Err(()),
            };
            let result = match outcome {
                Ok(r) => r,
                Err(()) => {
                    idle.lock().unwrap_or_else(|p| p.into_inner()).clear();
                    Err(StoreError::Timeout(format!(
                        "the thread store at {shown} did not answer within {} s; the server \
                         may be stopped, overloaded or unreachable (raise \
                         [thread_store] statement_timeout_sec if it is only slow)",
                        limit.as_secs_f64()
                    )))
                }
            };
            answer(result);
        });
    }

    /// A new connection outside the pool, driven by the store's runtime: call it inside an
    /// operation. Bounded by [`StoreTimeouts::connect`], handshake included (the
    /// driver's own `connect_timeout` covers only the TCP connect: a stopped server accepts
    /// the connection in the kernel and then never answers).
    pub(crate) async fn connect(&self) -> Result<Client, StoreError> {
        let limit = self.timeouts.connect;
        // Connecting has its own bound: the operation's clock stops meanwhile, so a server
        // that never completes the handshake is reported as such (and after
        // `connect_timeout_sec`), whichever of the two settings is shorter.
        let started = tokio::time::Instant::now();
        let _ = OP_DEADLINE.try_with(|d| *lock(d) += limit);
        let connected = tokio::time::timeout(limit, self.config.connect(NoTls)).await;
        let _ = OP_DEADLINE.try_with(|d| *lock(d) -= limit.saturating_sub(started.elapsed()));
        let (client, connection) = connected
            .map_err(|_| {
                StoreError::Timeout(format!(
                    "cannot connect to the thread store at {}: no answer within {} s (the \
                     server may be stopped, overloaded or unreachable); check that it runs \
                     and that [thread_store] url in config.toml (or OI_THREAD_STORE_URL) is \
                     right, or raise [thread_store] connect_timeout_sec",
                    self.display,
                    limit.as_secs_f64()
                ))
            })?
            .map_err(|e| connect_error(&self.display, &e))?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("PostgreSQL connection closed: {e}");
            }
        });
        Ok(client)
    }

    /// A pooled connection (at most [`POOL_SIZE`] at once); call it inside an operation.
    pub(crate) async fn conn(&self) -> Result<Conn, StoreError> {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| StoreError::Postgres("the connection pool is closed".into()))?;
        let reused = {
            let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
            let mut found = None;
            while let Some(c) = idle.pop() {
                if !c.is_closed() {
                    found = Some(c);
                    break;
                }
            }
            found
        };
        let client = match reused {
            Some(c) => c,
            None => self.connect().await?,
        };
        Ok(Conn {
            client: Some(client),
            idle: self.idle.clone(),
            _permit: permit,
        })
    }
}

/// An operation's task ended without an answer: its runtime stopped.
fn stopped() -> StoreError {
    StoreError::Postgres(
        "the database task stopped before answering (the runtime that opened the thread store \
         has shut down)"
            .into(),
    )
}

fn connect_error(shown: &str, e: &tokio_postgres::Error) -> StoreError {
    // A refused login is the server's own words ("password authentication failed for user
    // oi"), not the driver's bare "db error".
    if let Some(db) = e.as_db_error() {
        return StoreError::Postgres(format!(
            "cannot connect to the thread store at {shown}: {} ({}); check the user and \
             password in [thread_store] url in config.toml (or OI_THREAD_STORE_URL)",
            db.message(),
            db.code().code()
        ));
    }
    StoreError::Postgres(format!(
        "cannot connect to the thread store at {shown}: {}; check that the server runs and \
         that [thread_store] url in config.toml (or OI_THREAD_STORE_URL) is right",
        crate::error::driver_message(e)
    ))
}

/// Applies the migrations this database lacks, under a transaction-scoped advisory lock.
async fn migrate(client: &mut Client, shown: &str) -> Result<(), StoreError> {
    let tx = client.transaction().await?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS oi_schema_migrations (
            version INTEGER PRIMARY KEY,
            applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
        )",
    )
    .await?;
    let applied: Vec<i32> = tx
        .query("SELECT version FROM oi_schema_migrations", &[])
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let newest_known = MIGRATIONS.last().map_or(0, |m| m.0);
    if let Some(v) = applied.iter().copied().find(|v| *v > newest_known) {
        return Err(StoreError::Postgres(format!(
            "the thread store at {shown} has schema version {v}, newer than this program \
             knows ({newest_known}); upgrade interpreter on this machine"
        )));
    }
    for (version, sql) in MIGRATIONS {
        if applied.contains(version) {
            continue;
        }
        tracing::info!("thread store {shown}: applying schema migration {version}");
        tx.batch_execute(sql).await?;
        tx.execute(
            "INSERT INTO oi_schema_migrations (version) VALUES ($1)",
            &[version],
        )
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::install_runtime;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("a test runtime: {e}"))
    }

    /// The loser of the race to set the database runtime is dropped inside the caller's
    /// current-thread runtime (as exec's store opening does); that must not panic.
    #[test]
    fn a_runtime_that_lost_the_race_is_dropped_inside_a_current_thread_runtime() {
        let cell = std::sync::OnceLock::new();
        let first = install_runtime(&cell, runtime()).unwrap_or_else(|e| panic!("{e}"));
        let caller = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap_or_else(|e| panic!("a test runtime: {e}"));
        let second = caller
            .block_on(async { install_runtime(&cell, runtime()) })
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(first.id(), second.id(), "the first runtime set is kept");
    }
}

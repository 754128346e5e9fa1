//! Connections to PostgreSQL: a private runtime, a small pool, and the embedded migrations.
//!
//! `tokio-postgres` is async, and the store is used both ways: synchronously (the engine's
//! writer thread, the CLI, like the SQLite index) and from async code (the servers). Each
//! store therefore owns a small runtime that drives its connections; an operation is a
//! future spawned there ([`Db::spawn_op`]), which [`Db::run`] waits for from any thread,
//! inside or outside the caller's own runtime, and [`Db::run_async`] awaits without holding
//! a thread.
//!
//! Nothing waits on the server without a bound: opening a connection (TCP connect *and* the
//! startup/authentication handshake) is limited by [`StoreTimeouts::connect`], and every
//! operation [`Db::run`] hands over by [`StoreTimeouts::statement`]. A server that is
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

/// Connections kept for queries and appends (leases use one more, see `lease.rs`).
const POOL_SIZE: usize = 4;

/// How long the store waits on the database (`[thread_store] connect_timeout_sec` and
/// `statement_timeout_sec`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoreTimeouts {
    /// Opening one connection: TCP connect, startup and authentication (default 10 s).
    pub connect: Duration,
    /// One store operation (a query, an append's transaction, taking a lease), including
    /// waiting for a pooled connection (default 30 s).
    pub statement: Duration,
}

impl StoreTimeouts {
    pub const DEFAULT_CONNECT: Duration = Duration::from_secs(10);
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

/// A PostgreSQL database and the runtime that talks to it.
pub(crate) struct Db {
    /// `Some` until drop; shut down in the background so dropping the store never blocks
    /// (or panics) inside an async context.
    runtime: Option<tokio::runtime::Runtime>,
    handle: tokio::runtime::Handle,
    config: Config,
    timeouts: StoreTimeouts,
    /// What to show in messages: see [`redact_url`].
    pub(crate) display: String,
    idle: Arc<Mutex<Vec<Client>>>,
    permits: Arc<Semaphore>,
}

impl Drop for Db {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
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
    /// applies pending migrations.
    pub(crate) fn open(url: &str, timeouts: StoreTimeouts) -> Result<Arc<Db>, StoreError> {
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
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("oi-postgres")
            .enable_all()
            .build()
            .map_err(|e| StoreError::Postgres(format!("cannot start the database runtime: {e}")))?;
        let db = Arc::new(Db {
            handle: runtime.handle().clone(),
            runtime: Some(runtime),
            display: describe(&config),
            config,
            timeouts,
            idle: Arc::new(Mutex::new(Vec::new())),
            permits: Arc::new(Semaphore::new(POOL_SIZE)),
        });
        let d = db.clone();
        db.run(async move {
            let mut conn = d.conn().await?;
            migrate(&mut conn, &d.display).await
        })?;
        Ok(db)
    }

    /// Runs `fut` on the database runtime and waits for it from the calling thread, at most
    /// [`StoreTimeouts::statement`]: past that, the operation is abandoned (a transaction it
    /// had open is rolled back by the server when its connection closes) and the pool is
    /// emptied, since its connections may be as stuck as the one that timed out.
    pub(crate) fn run<T: Send + 'static>(
        &self,
        fut: impl Future<Output = Result<T, StoreError>> + Send + 'static,
    ) -> Result<T, StoreError> {
        // `block_on` of a oneshot only parks this thread: it polls no database future, so it
        // works on a plain thread and inside a runtime alike.
        futures::executor::block_on(self.spawn_op(fut))
    }

    /// [`Db::run`] for async callers: the caller's task awaits the operation, no thread
    /// waits for it.
    pub(crate) async fn run_async<T: Send + 'static>(
        &self,
        fut: impl Future<Output = Result<T, StoreError>> + Send + 'static,
    ) -> Result<T, StoreError> {
        self.spawn_op(fut).await
    }

    /// Starts `fut` on the database runtime, bounded as [`Db::run`] says; the returned future
    /// yields its result and may be awaited from anywhere.
    fn spawn_op<T: Send + 'static>(
        &self,
        fut: impl Future<Output = Result<T, StoreError>> + Send + 'static,
    ) -> impl Future<Output = Result<T, StoreError>> + Send + 'static {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let limit = self.timeouts.statement;
        let idle = self.idle.clone();
        let shown = self.display.clone();
        self.handle.spawn(async move {
            let outcome = tokio::time::timeout(limit, fut).await;
            let result = match outcome {
                Ok(r) => r,
                Err(_) => {
                    idle.lock().unwrap_or_else(|p| p.into_inner()).clear();
                    Err(StoreError::Timeout(format!(
                        "the thread store at {shown} did not answer within {} s; the server \
                         may be stopped, overloaded or unreachable (raise \
                         [thread_store] statement_timeout_sec if it is only slow)",
                        limit.as_secs_f64()
                    )))
                }
            };
            let _ = tx.send(result);
        });
        async move {
            rx.await.map_err(|_| {
                StoreError::Postgres("the database task stopped unexpectedly".into())
            })?
        }
    }

    /// A new connection outside the pool, driven by the database runtime. Must be called
    /// on that runtime. Bounded by [`StoreTimeouts::connect`], handshake included (the
    /// driver's own `connect_timeout` covers only the TCP connect: a stopped server accepts
    /// the connection in the kernel and then never answers).
    pub(crate) async fn connect(&self) -> Result<Client, StoreError> {
        let limit = self.timeouts.connect;
        let (client, connection) = tokio::time::timeout(limit, self.config.connect(NoTls))
            .await
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

    /// A pooled connection (at most [`POOL_SIZE`] at once). Must be called on the runtime.
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

//! For tests of this and other crates: a private, empty PostgreSQL database per test.
//!
//! `scripts/test.sh` starts a throw-away server (`scripts/test-postgres.sh`) and exports its
//! URL as `OI_TEST_PG_URL`. Without it, tests that need PostgreSQL are skipped with a loud
//! message, except under CI (`CI` or `OI_REQUIRE_PG` set), where a missing server is a
//! failure: a suite that silently skips proves nothing.

use tokio_postgres::NoTls;

/// The variable holding the test server's URL.
pub const TEST_PG_URL_ENV: &str = "OI_TEST_PG_URL";

/// Creates a new database on the test server and returns its URL; `None` (after a loud
/// message on stderr) when no test server is configured outside CI.
///
/// # Panics
/// Under CI without `OI_TEST_PG_URL`, or when the test server cannot be used.
pub fn fresh_database(test: &str) -> Option<String> {
    let Ok(base) = std::env::var(TEST_PG_URL_ENV) else {
        let required =
            std::env::var_os("CI").is_some() || std::env::var_os("OI_REQUIRE_PG").is_some();
        assert!(
            !required,
            "{test}: {TEST_PG_URL_ENV} is not set; run the tests through scripts/test.sh, which \
             starts a private PostgreSQL"
        );
        eprintln!(
            "\n!!! SKIPPING the PostgreSQL part of {test}: {TEST_PG_URL_ENV} is not set \
             (scripts/test.sh sets it)\n"
        );
        return None;
    };
    let name = format!("oi_test_{}", uuid::Uuid::now_v7().simple());
    let create = format!("CREATE DATABASE {name}");
    let admin = base.clone();
    // Its own thread and runtime, so callers may be sync tests or async ones.
    let created = std::thread::spawn(move || -> Result<(), String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(async {
            let (client, conn) = tokio_postgres::connect(&admin, NoTls)
                .await
                .map_err(|e| format!("cannot connect to {admin}: {e}"))?;
            let driver = tokio::spawn(conn);
            client
                .batch_execute(&create)
                .await
                .map_err(|e| format!("{create}: {e}"))?;
            drop(client);
            let _ = driver.await;
            Ok(())
        })
    })
    .join();
    match created {
        Ok(Ok(())) => Some(with_dbname(&base, &name)),
        Ok(Err(e)) => panic!("{test}: the PostgreSQL test server is unusable: {e}"),
        Err(_) => panic!("{test}: creating a test database panicked"),
    }
}

/// `url` with its database replaced by `name` (as a `dbname` parameter, which wins over
/// the path).
fn with_dbname(url: &str, name: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}dbname={name}")
}

/// A PostgreSQL server of its own for one test, in a temporary directory: for tests that
/// stop, hang (SIGSTOP) or restart the server, which must not disturb the shared one.
/// Like `scripts/test-postgres.sh`: initdb + pg_ctl, 127.0.0.1 on a free port, superuser
/// `oi`; run as `nobody` when the tests run as root (initdb refuses root).
///
/// Dropping it always resumes a paused server, stops it and removes its directory, so a
/// failing test never leaves a stopped server behind.
pub struct PrivateServer {
    bin: std::path::PathBuf,
    dir: std::path::PathBuf,
    port: u16,
    paused: std::sync::Mutex<Vec<u32>>,
}

/// Why a [`PrivateServer`] could not be started.
pub type ServerError = String;

impl PrivateServer {
    /// Starts a server with trust authentication; `None` (after a loud message) when
    /// PostgreSQL is not installed, outside CI.
    ///
    /// # Panics
    /// Under CI (or `OI_REQUIRE_PG`) without PostgreSQL, or when the server does not start.
    pub fn start(test: &str) -> Option<PrivateServer> {
        Self::start_with(test, None)
    }

    /// Like [`PrivateServer::start`], with `scram-sha-256` password authentication for `oi`
    /// when `password` is given.
    ///
    /// # Panics
    /// See [`PrivateServer::start`].
    pub fn start_with(test: &str, password: Option<&str>) -> Option<PrivateServer> {
        let Some(bin) = pg_bin() else {
            let required =
                std::env::var_os("CI").is_some() || std::env::var_os("OI_REQUIRE_PG").is_some();
            assert!(
                !required,
                "{test}: PostgreSQL is not installed (pg_ctl not found); run \
                 tools/peers/install.sh"
            );
            eprintln!("\n!!! SKIPPING {test}: PostgreSQL is not installed (pg_ctl not found)\n");
            return None;
        };
        match Self::try_start(bin, password) {
            Ok(s) => Some(s),
            Err(e) => panic!("{test}: cannot start a private PostgreSQL: {e}"),
        }
    }

    fn try_start(
        bin: std::path::PathBuf,
        password: Option<&str>,
    ) -> Result<PrivateServer, ServerError> {
        let dir = std::env::temp_dir().join(format!("oi-test-pg-{}", uuid::Uuid::now_v7()));
        std::fs::create_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port: {e}"))?
            .port();
        let server = PrivateServer {
            bin,
            dir,
            port,
            paused: std::sync::Mutex::new(Vec::new()),
        };
        server.prepare_dir()?;
        let mut initdb = vec![
            server.tool("initdb").display().to_string(),
            "-D".into(),
            server.data().display().to_string(),
            "-U".into(),
            "oi".into(),
            "-E".into(),
            "UTF8".into(),
            "--no-sync".into(),
        ];
        match password {
            Some(pw) => {
                let file = server.dir.join("pwfile");
                std::fs::write(&file, pw).map_err(|e| format!("{}: {e}", file.display()))?;
                server.give_away(&file)?;
                initdb.push("--auth=scram-sha-256".into());
                initdb.push(format!("--pwfile={}", file.display()));
            }
            None => initdb.push("--auth=trust".into()),
        }
        server.as_server_user(&initdb)?;
        server.start_again()?;
        Ok(server)
    }

    /// The URL of database `postgres` as user `oi` (with `password` if given).
    pub fn url(&self, password: Option<&str>) -> String {
        let auth = match password {
            Some(pw) => format!("oi:{pw}"),
            None => "oi".into(),
        };
        format!(
            "postgresql://{auth}@127.0.0.1:{}/postgres?sslmode=disable",
            self.port
        )
    }

    /// Starts the server (again, after [`PrivateServer::stop`]) and waits until it accepts
    /// connections.
    pub fn start_again(&self) -> Result<(), ServerError> {
        let options = format!(
            "-c listen_addresses=127.0.0.1 -c port={} -c unix_socket_directories='{}' \
             -c fsync=off",
            self.port,
            self.dir.display()
        );
        self.as_server_user(&[
            self.tool("pg_ctl").display().to_string(),
            "-D".into(),
            self.data().display().to_string(),
            "-l".into(),
            self.dir.join("server.log").display().to_string(),
            "-w".into(),
            "-t".into(),
            "60".into(),
            "-o".into(),
            options,
            "start".into(),
        ])
    }

    /// Stops the server at once (`-m immediate`: connections are cut, like a crash) and
    /// waits until it is gone.
    pub fn stop(&self) -> Result<(), ServerError> {
        self.resume();
        self.as_server_user(&[
            self.tool("pg_ctl").display().to_string(),
            "-D".into(),
            self.data().display().to_string(),
            "-m".into(),
            "immediate".into(),
            "-w".into(),
            "stop".into(),
        ])
    }

    /// [`PrivateServer::stop`] then [`PrivateServer::start_again`].
    pub fn restart(&self) -> Result<(), ServerError> {
        self.stop()?;
        self.start_again()
    }

    /// Hangs the server: SIGSTOP to the postmaster and every backend. Connections stay
    /// open and nothing answers, as with a frozen host or a blackholed network.
    pub fn pause(&self) -> Result<(), ServerError> {
        let main = self.postmaster_pid()?;
        let mut pids = vec![main];
        pids.extend(children_of(main));
        for pid in &pids {
            signal(*pid, "STOP")?;
        }
        self.paused
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(pids);
        Ok(())
    }

    /// Undoes [`PrivateServer::pause`] (harmless when not paused).
    pub fn resume(&self) {
        let pids: Vec<u32> =
            std::mem::take(&mut *self.paused.lock().unwrap_or_else(|p| p.into_inner()));
        for pid in pids {
            let _ = signal(pid, "CONT");
        }
    }

    fn postmaster_pid(&self) -> Result<u32, ServerError> {
        let file = self.data().join("postmaster.pid");
        let text =
            std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        text.lines()
            .next()
            .and_then(|l| l.trim().parse().ok())
            .ok_or_else(|| format!("{}: no pid on its first line", file.display()))
    }

    fn data(&self) -> std::path::PathBuf {
        self.dir.join("data")
    }

    fn tool(&self, name: &str) -> std::path::PathBuf {
        self.bin.join(name)
    }

    fn is_root() -> bool {
        std::fs::metadata("/proc/self").is_ok_and(|m| {
            use std::os::unix::fs::MetadataExt;
            m.uid() == 0
        })
    }

    fn prepare_dir(&self) -> Result<(), ServerError> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&self.dir, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| format!("{}: {e}", self.dir.display()))?;
        self.give_away(&self.dir)
    }

    fn give_away(&self, path: &std::path::Path) -> Result<(), ServerError> {
        if !Self::is_root() {
            return Ok(());
        }
        run(std::process::Command::new("chown")
            .arg("nobody:nogroup")
            .arg(path))
    }

    fn as_server_user(&self, argv: &[String]) -> Result<(), ServerError> {
        let mut cmd = if Self::is_root() {
            let mut c = std::process::Command::new("setpriv");
            c.args([
                "--reuid=nobody",
                "--regid=nogroup",
                "--clear-groups",
                "--reset-env",
                "--",
            ]);
            c.args(argv);
            c
        } else {
            let mut c = std::process::Command::new(&argv[0]);
            c.args(&argv[1..]);
            c
        };
        cmd.current_dir(&self.dir);
        run(&mut cmd).map_err(|e| {
            let log = std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
            format!("{e}\n{log}")
        })
    }
}

impl Drop for PrivateServer {
    fn drop(&mut self) {
        self.resume();
        let _ = self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn pg_bin() -> Option<std::path::PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .find(|d| d.join("pg_ctl").is_file() && d.join("initdb").is_file())
    });
    if on_path.is_some() {
        return on_path;
    }
    let mut found: Vec<std::path::PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|d| d.join("pg_ctl").is_file())
        .collect();
    found.sort();
    found.pop()
}

fn run(cmd: &mut std::process::Command) -> Result<(), ServerError> {
    let out = cmd
        .output()
        .map_err(|e| format!("{cmd:?}: cannot run: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "{cmd:?}: {}: {}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
}

fn signal(pid: u32, sig: &str) -> Result<(), ServerError> {
    run(std::process::Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string()))
}

/// Processes whose parent is `pid` (PostgreSQL backends and helpers of a postmaster).
fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(child) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`; comm may contain spaces, so split after its `)`.
        let ppid = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid == Some(pid) {
            out.push(child);
        }
    }
    out
}

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

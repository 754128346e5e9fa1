//! The invariants of ARCHITECTURE.md that can be read from the workspace itself (`cargo xtask
//! tidy`, and this crate's tests). Two kinds:
//!
//! - The crate map, checked against `cargo metadata` ([`crate_map`]).
//! - Tidy checks on the source text, over [`scan`]: who may do what where ([`layers`]), no
//!   blocking on async workers ([`blocking`]), who owns a name ([`ownership`]), errors that
//!   stay typed ([`errors`]), circles in a crate's module graph ([`modules`]), and the size of files and functions ([`size`]).
//!
//! Every rule, allow-list and ceiling is a constant in its group's module, next to the check
//! that reads it; [`CHECKS`] lists the checks.

mod blocking;
mod crate_map;
mod errors;
mod layers;
mod modules;
mod ownership;
mod scan;
mod size;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use crate_map::Package;
use scan::Source;

/// Every check, by the name ARCHITECTURE.md gives it.
pub(crate) const CHECKS: &[(&str, Check)] = &[
    (
        "crate_dependencies_follow_the_architecture_map",
        crate_map::crate_dependencies_follow_the_architecture_map,
    ),
    (
        "the_engine_knows_no_front_end",
        crate_map::the_engine_knows_no_front_end,
    ),
    (
        "children_are_spawned_through_oi_process",
        layers::children_are_spawned_through_oi_process,
    ),
    (
        "only_the_host_serves_connections",
        layers::only_the_host_serves_connections,
    ),
    (
        "http_clients_are_built_by_oi_http",
        layers::http_clients_are_built_by_oi_http,
    ),
    (
        "the_v2_wire_is_declared_in_its_protocol_crate",
        layers::the_v2_wire_is_declared_in_its_protocol_crate,
    ),
    (
        "the_mcp_server_asks_the_client_through_declarations",
        layers::the_mcp_server_asks_the_client_through_declarations,
    ),
    (
        "front_ends_reach_storage_catalog_and_git_through_the_engine",
        layers::front_ends_reach_storage_catalog_and_git_through_the_engine,
    ),
    (
        "servers_do_not_block_async_workers",
        blocking::servers_do_not_block_async_workers,
    ),
    (
        "each_user_file_is_named_by_one_module",
        ownership::each_user_file_is_named_by_one_module,
    ),
    (
        "the_postgres_backend_does_not_import_the_local_one",
        ownership::the_postgres_backend_does_not_import_the_local_one,
    ),
    (
        "errors_do_not_flatten_to_strings",
        errors::errors_do_not_flatten_to_strings,
    ),
    (
        "modules_form_no_circles_outside_a_parent_and_its_children",
        modules::modules_form_no_circles_outside_a_parent_and_its_children,
    ),
    (
        "product_files_stay_under_800_lines",
        size::product_files_stay_under_800_lines,
    ),
    (
        "product_functions_stay_under_120_lines",
        size::product_functions_stay_under_120_lines,
    ),
];

/// A check: passes, or fails with what it found.
pub(crate) type Check = fn(&Workspace) -> Result<(), Failure>;

/// A check that failed: what it guards against, and each problem found (with a file and line
/// where there is one).
#[derive(Debug)]
pub(crate) struct Failure {
    what: String,
    problems: Vec<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:\n{}", self.what, self.problems.join("\n"))
    }
}

/// What the checks read, read once: the workspace's crates and its product sources.
pub(crate) struct Workspace {
    root: PathBuf,
    packages: BTreeMap<String, Package>,
    sources: Vec<Source>,
    /// `oi-test-support`'s library sources: only the size rules read them.
    test_support: Vec<Source>,
}

impl Workspace {
    /// Reads the workspace this crate belongs to.
    pub(crate) fn load() -> Workspace {
        let root = workspace_root();
        Workspace {
            packages: crate_map::workspace_packages(&root),
            sources: scan::product_sources(&root),
            test_support: scan::test_support_sources(&root),
            root,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Tidy checks (the rust-analyzer way): invariants read from the source text itself.
//
// They are textual on purpose: a scan of the files, with comments, string contents and
// test-only code blanked out first, is fast, has no dependencies and fails with a file and a
// line. What each one holds, and what it cannot see, is said on its check. Product code is
// `crates/*/src/**.rs` minus test code: `#[cfg(test)]` items (and the files of
// `#[cfg(test)] mod x;`); `oi-test-support`, integration tests, benches and examples are
// test code (the size rules read `oi-test-support` too). Every allow-list entry gives its reason, and an entry that no longer matches
// anything fails the check, so the lists only shrink.
// ---------------------------------------------------------------------------------------

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("workspace root")
}

/// Fails with every problem found, after checking that each allow-list entry was used.
fn report(what: &str, mut problems: Vec<String>, unused: Vec<String>) -> Result<(), Failure> {
    for u in unused {
        problems.push(format!(
            "allow-list entry {u} matches nothing any more: remove it"
        ));
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(Failure {
        what: what.to_string(),
        problems,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every check holds on this workspace: how `cargo test` (CI's `scripts/test.sh` runs
    /// `cargo xtask tidy` too, before the long build) fails on a broken invariant.
    #[test]
    fn tidy_checks_hold() {
        let ws = Workspace::load();
        let failures: Vec<String> = CHECKS
            .iter()
            .filter_map(|(name, check)| check(&ws).err().map(|f| format!("{name}: {f}")))
            .collect();
        assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    }

    /// The size rules read the mock model server too, and the other rules do not.
    #[test]
    fn test_support_is_read_for_sizes_only() {
        let ws = Workspace::load();
        let server = "crates/test-support/src/server.rs";
        assert!(ws.test_support.iter().any(|s| s.path == server));
        assert!(
            !ws.sources
                .iter()
                .any(|s| s.path.starts_with("crates/test-support/"))
        );
    }
}

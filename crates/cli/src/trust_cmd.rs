//! `interpreter trust [DIR]` / `interpreter untrust [DIR]`: edit the trusted-folder list
//! (`[projects."<dir>"] trust_level`) in the user config. A project's
//! `.openinterpreter/config.toml` is honoured only inside a trusted folder.

use crate::args::{EXIT_FAILURE, EXIT_OK, EXIT_USAGE, GlobalArgs};
use crate::out::outln;
use oi_config::TrustChange;
use std::path::PathBuf;

/// Run `trust` (`trusted = true`) or `untrust` for `dir`, else the repository root of the
/// working directory (`-C` or the process cwd), else the working directory itself.
pub(crate) fn run(global: &GlobalArgs, dir: Option<PathBuf>, trusted: bool) -> i32 {
    let home = match oi_config::find_home() {
        Ok(h) => h,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let cwd = match std::env::current_dir() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: cannot read the current directory: {e}");
            return EXIT_FAILURE;
        }
    };
    let base = match &global.cd {
        Some(cd) => cwd.join(cd),
        None => cwd,
    };
    let dir = match dir {
        Some(d) => base.join(d),
        None => oi_config::default_trust_dir(&base),
    };
    let dir = match dir.canonicalize() {
        Ok(d) => d,
        Err(e) => {
            eprintln!(
                "error: {}: {e}; pass an existing project folder",
                dir.display()
            );
            return EXIT_USAGE;
        }
    };
    let config = oi_config::user_config_path(&home);
    match oi_config::set_trust(&config, &dir, trusted) {
        Ok(TrustChange::Trusted) => {
            outln!(
                "Trusted {}: its .openinterpreter/config.toml (and those of its subfolders) now apply.",
                dir.display()
            );
            EXIT_OK
        }
        Ok(TrustChange::Removed) => {
            outln!(
                "No longer trusted: {}. Its project config will be ignored.",
                dir.display()
            );
            EXIT_OK
        }
        Ok(TrustChange::MarkedUntrusted(parent)) => {
            outln!(
                "Marked {} untrusted: it is inside the trusted folder {}, so it now has its own \
                 `trust_level = \"untrusted\"` entry. Its project config will be ignored.",
                dir.display(),
                parent.display()
            );
            EXIT_OK
        }
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_FAILURE
        }
    }
}

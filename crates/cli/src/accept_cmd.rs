//! `interpreter accept-project-config [DIR]`: show what the trusted project config that
//! applies in DIR widens, and record its content as accepted (see
//! `oi_config::project_consent`). Running the command is the consent; it prints what it
//! accepted so the terminal keeps a record.

use crate::args::{EXIT_FAILURE, EXIT_OK, EXIT_USAGE, GlobalArgs};
use crate::out::outln;
use oi_config::{ConfigLoadOptions, ConfigOverrides, ProjectConfigReview};
use std::path::PathBuf;

/// The review as shown before asking or accepting: the file, where it really is, and each
/// change on its own line.
pub(crate) fn describe(review: &ProjectConfigReview) -> String {
    let mut out = format!(
        "Project config {} ({}):",
        review.path.display(),
        match review.status {
            oi_config::ReviewStatus::Changed => "changed since you accepted it",
            oi_config::ReviewStatus::New => "not accepted yet",
            oi_config::ReviewStatus::Accepted => "accepted",
        }
    );
    if let Some(real) = &review.real_path {
        out.push_str(&format!("\n  the file is really {}", real.display()));
    }
    for c in &review.changes {
        out.push_str(&format!("\n  - {c}"));
    }
    // What the acceptance pins besides the file: the files its programs run.
    for (who, pins) in &review.launches {
        for path in pins.paths() {
            let changed = if review.changed_files.iter().any(|c| c == path) {
                " (changed since you accepted it)"
            } else {
                ""
            };
            out.push_str(&format!(
                "\n  - {who} runs {}{changed}; its content is part of what you accept",
                path.display()
            ));
        }
    }
    out
}

pub(crate) fn run(global: &GlobalArgs, dir: Option<PathBuf>) -> i32 {
    let base = match std::env::current_dir() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: cannot read the current directory: {e}");
            return EXIT_FAILURE;
        }
    };
    let base = match &global.cd {
        Some(cd) => base.join(cd),
        None => base,
    };
    let dir = dir.map(|d| base.join(d)).unwrap_or(base);
    // Measured against the user's own settings, without this invocation's flags: what is
    // accepted is the file, for every later session.
    let loaded = match oi_config::load_config(ConfigLoadOptions {
        home: None,
        cli_overrides: Vec::new(),
        overrides: ConfigOverrides {
            cwd: Some(dir.clone()),
            ..Default::default()
        },
    }) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let config = &loaded.config;
    let Some(review) = &config.project_config_review else {
        match (
            &config.project_config_path,
            &config.untrusted_project_config,
        ) {
            (Some(p), _) => outln!(
                "{} applies in {} and widens nothing (sandbox, approvals, MCP servers, notify, \
                 model endpoint); there is nothing to accept.",
                p.display(),
                dir.display()
            ),
            (None, Some(p)) => outln!(
                "{} is ignored: its folder is not trusted. Run `interpreter trust` first if you \
                 trust it.",
                p.display()
            ),
            (None, None) => outln!(
                "No project config applies in {}; there is nothing to accept.",
                dir.display()
            ),
        }
        return EXIT_OK;
    };
    outln!("{}", describe(review));
    if review.is_accepted() {
        outln!(
            "Already accepted with this content (sha256 {}).",
            review.sha256
        );
        return EXIT_OK;
    }
    match oi_config::project_consent::accept(&config.home, review) {
        Ok(()) => {
            outln!(
                "Accepted (sha256 {}). Sessions in {} now use it; a change to the file needs \
                 accepting again.",
                review.sha256,
                review.project_dir().display()
            );
            EXIT_OK
        }
        Err(e) => {
            eprintln!("error: cannot record the accepted project config: {e}");
            EXIT_FAILURE
        }
    }
}

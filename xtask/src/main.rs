//! Repository tasks, run as `cargo xtask <task>` (the alias is in `.cargo/config.toml`), the
//! way rust-analyzer keeps its own: code about the code, outside the product crates.
//!
//! - `cargo xtask tidy`: every invariant of ARCHITECTURE.md's "Checked by the tidy test", each
//!   by name; exits 1 if any fails. `cargo xtask tidy <name>…` runs only those.
// Reading the workspace (its files, `cargo metadata`) is not input from outside: a panic there
// is a failed run, with its message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod tidy;

use std::process::ExitCode;

const USAGE: &str = "usage: cargo xtask tidy [CHECK...]\n\n\
    tidy   check ARCHITECTURE.md's invariants in the source (all, or the named checks)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.split_first() {
        Some((task, names)) if task == "tidy" => tidy_task(names),
        Some((flag, _)) if flag == "-h" || flag == "--help" => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn tidy_task(names: &[String]) -> ExitCode {
    if let Some(unknown) = names
        .iter()
        .find(|n| !tidy::CHECKS.iter().any(|(name, _)| name == n))
    {
        let known: Vec<&str> = tidy::CHECKS.iter().map(|(name, _)| *name).collect();
        eprintln!(
            "no tidy check is called `{unknown}`; the checks are:\n  {}",
            known.join("\n  ")
        );
        return ExitCode::from(2);
    }
    let ws = tidy::Workspace::load();
    let mut failed = 0;
    for (name, check) in tidy::CHECKS {
        if !names.is_empty() && !names.iter().any(|n| n == name) {
            continue;
        }
        match check(&ws) {
            Ok(()) => println!("ok      {name}"),
            Err(failure) => {
                failed += 1;
                println!("FAILED  {name}\n{failure}\n");
            }
        }
    }
    if failed > 0 {
        eprintln!("tidy: {failed} check(s) failed; each problem says what to change");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

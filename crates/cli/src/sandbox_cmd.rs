//! `interpreter sandbox [-s MODE] -- CMD ARGS...`: run one command exactly as the agent's
//! commands would run, so users can check a policy. Exits with the command's exit code.

use crate::cli::{EXIT_FAILURE, EXIT_USAGE, GlobalArgs, SandboxArgs};
use oi_sandbox::{SandboxError, SandboxRequest};

pub async fn run(global: GlobalArgs, args: SandboxArgs) -> i32 {
    let loaded = match global.load_config() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    for w in &loaded.warnings {
        eprintln!("warning: {w}");
    }
    let cfg = loaded.config;
    let req = SandboxRequest {
        policy: &cfg.sandbox_policy,
        sandbox_cwd: &cfg.cwd,
        allow_git_writes: cfg.allow_git_writes,
    };
    match oi_sandbox::run_sandboxed(&args.command, &cfg.cwd, &req).await {
        Ok(code) => code,
        Err(e @ SandboxError::Unsupported(_)) => {
            eprintln!("error: {e}");
            EXIT_FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_FAILURE
        }
    }
}

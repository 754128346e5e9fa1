//! `interpreter sandbox [-s MODE] -- CMD ARGS...`: run one command exactly as the agent's
//! commands would run (same sandbox, same environment policy), so users can check a policy.
//! Exits with the command's exit code.

use crate::args::{EXIT_FAILURE, GlobalArgs, SandboxArgs};
use oi_sandbox::SandboxRequest;

pub(crate) async fn run(global: GlobalArgs, args: SandboxArgs) -> i32 {
    let cfg = match global.load_config_or_exit() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let pinned = cfg.launch_pinned_paths();
    let req = SandboxRequest {
        policy: &cfg.sandbox_policy,
        sandbox_cwd: &cfg.cwd,
        allow_git_writes: cfg.allow_git_writes,
        read_only: &pinned,
    };
    // The same environment the agent's commands get: [shell_environment_policy] applied and
    // this process's credentials removed.
    let env = cfg.command_env();
    match oi_sandbox::run_sandboxed_with_env(&args.command, &cfg.cwd, &req, Some(&env)).await {
        Ok(code) => code,
        // Unsupported (fail closed) and setup errors both say why and how to proceed.
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_FAILURE
        }
    }
}

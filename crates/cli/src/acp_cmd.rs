//! `interpreter acp`: the Agent Client Protocol over stdio (`oi-acp`'s method table, served
//! by the host), for editors. Also gives the service the way a sandboxed command runs in
//! the editor's terminal: this binary's `interpreter sandbox`, with the session's policy.

use crate::mcp_server_cmd::HostSettings;
use oi_core::SessionSource;
use oi_host::{HostOptions, ServiceContext, Services};
use oi_protocol::config_types::SandboxPolicy;
use std::path::Path;
use std::sync::Arc;

/// Serves ACP on stdin/stdout until stdin closes or a termination signal; the exit code.
pub(crate) async fn run(cli: HostSettings) -> i32 {
    let opts = HostOptions {
        cli_overrides: cli.cli_overrides,
        overrides: cli.overrides,
        ..HostOptions::new(SessionSource::Acp)
    };
    let options = oi_acp::AcpOptions {
        sandbox_launcher: std::env::current_exe().ok().map(|exe| {
            let launcher: oi_acp::SandboxLauncher = Arc::new(
                move |policy: &SandboxPolicy, cwd: &Path, _home: &Path, argv: &[String]| {
                    sandboxed_argv(&exe, policy, cwd, argv)
                },
            );
            launcher
        }),
    };
    let services = Services::new(move |ctx: &ServiceContext| oi_acp::methods(ctx, options.clone()));
    oi_host::run_stdio(opts, services).await
}

/// `EXE sandbox -C CWD -s MODE [-c sandbox_workspace_write.…] -- ARGV`: the command
/// confined by `policy` exactly as the agent's own commands are (the same config is read,
/// from the home the caller passes in the environment).
pub(crate) fn sandboxed_argv(
    exe: &Path,
    policy: &SandboxPolicy,
    cwd: &Path,
    argv: &[String],
) -> Vec<String> {
    let mut out = vec![
        exe.display().to_string(),
        "sandbox".into(),
        "-C".into(),
        cwd.display().to_string(),
        "-s".into(),
        policy.mode().as_str().to_string(),
    ];
    if let SandboxPolicy::WorkspaceWrite {
        writable_roots,
        network_access,
        exclude_tmpdir_env_var,
        exclude_slash_tmp,
    } = policy
    {
        let roots = toml::Value::Array(
            writable_roots
                .iter()
                .map(|r| toml::Value::String(r.display().to_string()))
                .collect(),
        );
        for (key, value) in [
            ("writable_roots", roots),
            ("network_access", toml::Value::Boolean(*network_access)),
            (
                "exclude_tmpdir_env_var",
                toml::Value::Boolean(*exclude_tmpdir_env_var),
            ),
            (
                "exclude_slash_tmp",
                toml::Value::Boolean(*exclude_slash_tmp),
            ),
        ] {
            out.push("-c".into());
            out.push(format!("sandbox_workspace_write.{key}={value}"));
        }
    }
    out.push("--".into());
    out.extend(argv.iter().cloned());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workspace_policy_is_passed_whole() {
        let argv = sandboxed_argv(
            Path::new("/bin/interpreter"),
            &SandboxPolicy::WorkspaceWrite {
                writable_roots: vec!["/tmp/a b".into()],
                network_access: true,
                exclude_tmpdir_env_var: false,
                exclude_slash_tmp: false,
            },
            Path::new("/w"),
            &["touch".into(), "x".into()],
        );
        assert_eq!(
            &argv[..6],
            [
                "/bin/interpreter",
                "sandbox",
                "-C",
                "/w",
                "-s",
                "workspace-write"
            ]
        );
        assert!(
            argv.contains(&r#"sandbox_workspace_write.writable_roots=["/tmp/a b"]"#.to_string()),
            "{argv:?}"
        );
        assert!(argv.contains(&"sandbox_workspace_write.network_access=true".to_string()));
        assert_eq!(&argv[argv.len() - 3..], ["--", "touch", "x"]);
    }
}

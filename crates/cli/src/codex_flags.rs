//! The launch flags of `codex app-server` (0.171, as its `--help` lists them), so a client that launches Codex's app
//! server (an IDE extension passes `--analytics-default-enabled`) can launch ours with the
//! same command line. Flags that mean something here are honoured (`--stdio`, a
//! capability token file); flags of features we do not have are accepted and logged;
//! authentication modes we cannot honour are refused, never ignored, so nobody ends up
//! with a server less protected than they asked for.

use crate::mcp_server_cmd::McpServerArgs;
use std::path::PathBuf;

/// Codex's `app-server` flags.
#[derive(clap::Args, Debug, Default)]
pub(crate) struct CodexAppServerFlags {
    /// Codex's spelling of the default: serve over stdin/stdout.
    #[arg(long, conflicts_with = "listen")]
    pub stdio: bool,
    /// Accepted for Codex's launchers and ignored: there is no analytics here.
    #[arg(long, hide = true)]
    pub analytics_default_enabled: bool,
    /// Accepted for Codex's launchers and ignored: unknown `-c` keys are already errors.
    #[arg(long, hide = true)]
    pub strict_config: bool,
    /// Accepted for Codex's launchers and ignored: there is no managed sign-in here.
    #[arg(long, hide = true)]
    pub startup_sign_out: bool,
    /// Codex feature toggles (`-c features.NAME=true`): accepted and ignored.
    #[arg(long, hide = true, value_name = "FEATURE")]
    pub enable: Vec<String>,
    #[arg(long, hide = true, value_name = "FEATURE")]
    pub disable: Vec<String>,
    /// Accepted and ignored: the client names itself in `initialize`.
    #[arg(long, hide = true, value_name = "JSON")]
    pub startup_client_info: Option<String>,
    /// Accepted and ignored: there are no skills here.
    #[arg(long, hide = true, value_name = "PATH")]
    pub cloud_skills_snapshot: Option<PathBuf>,
    /// Accepted and ignored: there is no code-mode host here.
    #[arg(long, hide = true, value_name = "URL")]
    pub code_mode_host: Option<String>,
    /// Codex prints its startup requirements and exits; refused (there are none here, and
    /// a launcher must not mistake a running server for that answer).
    #[arg(long, hide = true)]
    pub print_startup_config: bool,
    /// Codex's WebSocket authentication: only `capability-token` (a bearer token read
    /// from --ws-token-file) is supported.
    #[arg(long, value_name = "MODE", requires = "listen")]
    pub ws_auth: Option<String>,
    /// With --ws-auth capability-token: the file holding the token clients must send.
    #[arg(long, value_name = "FILE", requires = "ws_auth")]
    pub ws_token_file: Option<PathBuf>,
    #[arg(long, hide = true, value_name = "HEX")]
    pub ws_token_sha256: Option<String>,
    #[arg(long, hide = true, value_name = "FILE")]
    pub ws_shared_secret_file: Option<PathBuf>,
    #[arg(long, hide = true, value_name = "ISSUER")]
    pub ws_issuer: Option<String>,
    #[arg(long, hide = true, value_name = "AUDIENCE")]
    pub ws_audience: Option<String>,
    #[arg(long, hide = true, value_name = "SECS")]
    pub ws_max_clock_skew_seconds: Option<String>,
}

impl CodexAppServerFlags {
    /// Applies the flags to `serve`: `--stdio` as `--listen stdio://`, a capability token
    /// file as the bearer token. Errors for authentication this server cannot do.
    pub(crate) fn apply(&self, serve: &mut McpServerArgs) -> Result<(), String> {
        if self.analytics_default_enabled {
            tracing::debug!("--analytics-default-enabled: no analytics here; ignored");
        }
        if self.strict_config {
            tracing::debug!("--strict-config: unknown -c keys are always errors here; ignored");
        }
        let ignored = [
            ("--startup-sign-out", self.startup_sign_out),
            ("--enable", !self.enable.is_empty()),
            ("--disable", !self.disable.is_empty()),
            ("--startup-client-info", self.startup_client_info.is_some()),
            (
                "--cloud-skills-snapshot",
                self.cloud_skills_snapshot.is_some(),
            ),
            ("--code-mode-host", self.code_mode_host.is_some()),
        ];
        for (flag, _) in ignored.iter().filter(|(_, set)| *set) {
            tracing::debug!("{flag}: a Codex feature Open Interpreter does not have; ignored");
        }
        if self.print_startup_config {
            return Err(
                "--print-startup-config: there are no managed startup requirements here; start the server without it"
                    .to_string(),
            );
        }
        if self.stdio {
            serve.listen = None;
        }
        let signed = [
            ("--ws-token-sha256", self.ws_token_sha256.is_some()),
            (
                "--ws-shared-secret-file",
                self.ws_shared_secret_file.is_some(),
            ),
            ("--ws-issuer", self.ws_issuer.is_some()),
            ("--ws-audience", self.ws_audience.is_some()),
            (
                "--ws-max-clock-skew-seconds",
                self.ws_max_clock_skew_seconds.is_some(),
            ),
        ];
        if let Some((flag, _)) = signed.iter().find(|(_, set)| *set) {
            return Err(format!(
                "{flag}: signed and hashed WebSocket tokens are not supported; use --ws-auth capability-token --ws-token-file FILE, or --auth-token-env VAR"
            ));
        }
        match (self.ws_auth.as_deref(), &self.ws_token_file) {
            (None, _) => Ok(()),
            (Some("capability-token"), Some(file)) => {
                if serve.auth_token_env.is_some() {
                    return Err(
                        "--ws-token-file and --auth-token-env both name the token; pass one"
                            .to_string(),
                    );
                }
                serve.auth_token_file = Some(file.clone());
                Ok(())
            }
            (Some("capability-token"), None) => Err(
                "--ws-auth capability-token needs --ws-token-file FILE (the token clients send as `Authorization: Bearer`)"
                    .to_string(),
            ),
            (Some(other), _) => Err(format!(
                "--ws-auth {other}: only capability-token is supported (with --ws-token-file FILE); or use --auth-token-env VAR"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        serve: McpServerArgs,
        #[command(flatten)]
        codex: CodexAppServerFlags,
    }

    fn applied(flags: &[&str]) -> Result<McpServerArgs, String> {
        let mut cli = Cli::try_parse_from(std::iter::once("x").chain(flags.iter().copied()))
            .map_err(|e| e.to_string())?;
        cli.codex.apply(&mut cli.serve)?;
        Ok(cli.serve)
    }

    #[test]
    fn codex_launch_lines_parse() {
        let serve = applied(&["--analytics-default-enabled"]).unwrap();
        assert_eq!(serve.listen, None);
        let serve = applied(&["--stdio", "--strict-config"]).unwrap();
        assert_eq!(serve.listen, None);
        let serve = applied(&[
            "--enable",
            "apps",
            "--disable",
            "x",
            "--startup-client-info",
            "{}",
            "--startup-sign-out",
            "--listen",
            "ws://127.0.0.1:0",
        ])
        .unwrap();
        assert_eq!(serve.listen.as_deref(), Some("ws://127.0.0.1:0"));
        assert!(applied(&["--print-startup-config"]).is_err());
        assert!(applied(&["--stdio", "--listen", "ws://127.0.0.1:0"]).is_err());
        let serve = applied(&[
            "--listen",
            "ws://127.0.0.1:0",
            "--ws-auth",
            "capability-token",
            "--ws-token-file",
            "/t",
        ])
        .unwrap();
        assert_eq!(serve.auth_token_file, Some(PathBuf::from("/t")));
    }

    #[test]
    fn auth_we_cannot_do_is_refused() {
        let err = applied(&[
            "--listen",
            "ws://127.0.0.1:0",
            "--ws-auth",
            "signed-bearer-token",
        ])
        .unwrap_err();
        assert!(err.contains("only capability-token"), "{err}");
        let err = applied(&[
            "--listen",
            "ws://127.0.0.1:0",
            "--ws-auth",
            "capability-token",
        ])
        .unwrap_err();
        assert!(err.contains("--ws-token-file"), "{err}");
        let err = applied(&["--ws-shared-secret-file", "/s"]).unwrap_err();
        assert!(err.contains("not supported"), "{err}");
    }
}

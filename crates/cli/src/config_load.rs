//! Loading the config for a command, with the project-config consent it needs: refused
//! unless accepted, or asked on a terminal for the interactive modes.

use crate::args::{EXIT_FAILURE, EXIT_USAGE, GlobalArgs};
use oi_config::{ConfigLoadOptions, LoadedConfig};

impl GlobalArgs {
    /// Load the config for a headless front end: warnings go to stderr; an error is printed
    /// and turned into the usage exit code. A widening project config that was not accepted
    /// is refused unless `--accept-project-config` is given.
    pub(crate) fn load_config_or_exit(&self) -> Result<oi_config::Config, i32> {
        self.load_config_consented(false)
    }

    /// [`Self::load_config_or_exit`] for the interactive modes: an unaccepted widening project
    /// config is shown and the user asked, when stdin and stderr are terminals.
    pub(crate) fn load_config_or_ask(&self) -> Result<oi_config::Config, i32> {
        self.load_config_consented(true)
    }

    fn load_config_consented(&self, may_ask: bool) -> Result<oi_config::Config, i32> {
        let mut loaded = self.load_config().map_err(|e| {
            eprintln!("error: {e}");
            EXIT_USAGE
        })?;
        if let Some(review) = loaded.config.project_config_review.clone()
            && !review.is_accepted()
        {
            let accepted = self.accept_project_config || (may_ask && ask_to_accept(&review));
            if !accepted {
                eprintln!(
                    "error: {}; or run this command again with --accept-project-config",
                    review.refusal()
                );
                return Err(EXIT_USAGE);
            }
            oi_config::project_consent::accept(&loaded.config.home, &review).map_err(|e| {
                eprintln!("error: cannot record the accepted project config: {e}");
                EXIT_FAILURE
            })?;
            loaded = self.load_config().map_err(|e| {
                eprintln!("error: {e}");
                EXIT_USAGE
            })?;
            // The file changed between reading and accepting: what was accepted is not what
            // would run.
            if let Some(again) = &loaded.config.project_config_review
                && !again.is_accepted()
            {
                eprintln!(
                    "error: {} changed while it was being accepted; run again to review it",
                    again.path.display()
                );
                return Err(EXIT_USAGE);
            }
        }
        for w in &loaded.warnings {
            eprintln!("warning: {w}");
        }
        Ok(loaded.config)
    }

    pub(crate) fn load_config(&self) -> Result<LoadedConfig, oi_config::ConfigError> {
        let cli_overrides = self.cli_overrides()?;
        oi_config::load_config(ConfigLoadOptions {
            home: None,
            cli_overrides,
            overrides: self.overrides(),
        })
    }
}

/// Show an unaccepted widening project config and ask on the terminal; `false` without one.
fn ask_to_accept(review: &oi_config::ProjectConfigReview) -> bool {
    use std::io::{BufRead, IsTerminal, Write};
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        return false;
    }
    let mut err = std::io::stderr();
    let _ = writeln!(err, "{}", crate::accept_cmd::describe(review));
    let _ = write!(err, "Accept this project config and start? [y/N] ");
    let _ = err.flush();
    let mut answer = String::new();
    if std::io::stdin().lock().read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim(), "y" | "Y" | "yes" | "Yes")
}

//! Choosing and starting the terminal UI: `interpreter` (no subcommand) and
//! `interpreter resume` without a prompt open it when stdin and stdout are terminals and
//! `--no-tui` is not given; otherwise the line-based modes run.

use crate::args::{Cli, Command, EXIT_FAILURE, EXIT_USAGE, GlobalArgs, ResumeArgs};
use oi_core::SessionSource;
use oi_core::{ThreadManager, ThreadManagerOptions};
use oi_protocol::ThreadId;
use std::io::IsTerminal;

/// True when this invocation should open the TUI.
pub(crate) fn wants_tui(cli: &Cli) -> bool {
    if cli.no_tui || !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        return false;
    }
    match &cli.command {
        None => true,
        // `resume [--last] [ID]` with no prompt: continue the thread on screen.
        Some(Command::Resume(args)) => !args.json && args.args.len() <= usize::from(!args.last),
        Some(_) => false,
    }
}

/// Logs to `$HOME/log/tui.log` (0600), never to the screen; quiet unless `RUST_LOG`.
pub(crate) fn init_file_tracing() {
    let Ok(home) = oi_config::find_home() else {
        return;
    };
    let Ok(file) = oi_config::owner_only::open_log(&home, "tui.log") else {
        return;
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::sync::Mutex::new(file))
        .with_ansi(false)
        .try_init();
}

/// `interpreter [PROMPT]` on a terminal.
pub(crate) async fn run_tui(
    global: GlobalArgs,
    prompt: Option<String>,
    start: oi_tui::StartMode,
) -> i32 {
    run_tui_images(global, prompt, Vec::new(), start).await
}

/// `interpreter [-i FILE]… [PROMPT]` on a terminal: the images go with the first prompt, or
/// wait in the composer for one.
pub(crate) async fn run_tui_with_images(
    global: GlobalArgs,
    prompt: Option<String>,
    images: Vec<std::path::PathBuf>,
) -> i32 {
    run_tui_images(global, prompt, images, oi_tui::StartMode::New).await
}

async fn run_tui_images(
    global: GlobalArgs,
    prompt: Option<String>,
    images: Vec<std::path::PathBuf>,
    start: oi_tui::StartMode,
) -> i32 {
    let config = match global.load_config_or_ask() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let images = match crate::images::checked_images(&images, &config.model) {
        Ok(paths) => paths,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let models = oi_tui::run::catalog_entries(vec![config.model.clone()]);
    let manager = ThreadManager::new(ThreadManagerOptions {
        source: SessionSource::Cli,
        persist: true,
    });
    oi_tui::run(oi_tui::TuiOptions {
        config,
        manager,
        start,
        prompt,
        images,
        models,
    })
    .await
}

/// `interpreter resume [--last | ID]` on a terminal, without a prompt.
pub(crate) async fn run_resume_tui(mut global: GlobalArgs, args: ResumeArgs) -> i32 {
    let home = match oi_config::find_home() {
        Ok(h) => h,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let store = match oi_core::open_thread_store_async(&home).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_FAILURE;
        }
    };
    let summary = if args.last {
        let cwd = std::env::current_dir().ok();
        let found = match store.latest_async(cwd.as_deref()).await {
            Ok(None) => store.latest_async(None).await,
            found => found,
        };
        match found {
            Ok(Some(s)) => Some(s),
            Ok(None) => {
                eprintln!(
                    "error: there is no stored thread to resume; start one with `interpreter`"
                );
                return EXIT_FAILURE;
            }
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_FAILURE;
            }
        }
    } else if let Some(raw) = args.args.first() {
        let id: ThreadId = match raw.parse() {
            Ok(id) => id,
            Err(e) => {
                eprintln!(
                    "error: `{raw}` is not a thread id ({e}); see `interpreter sessions list`"
                );
                return EXIT_USAGE;
            }
        };
        match store.get_async(&id).await {
            Ok(Some(s)) => Some(s),
            Ok(None) => {
                eprintln!("error: thread not found: {id}; see `interpreter sessions list`");
                return EXIT_FAILURE;
            }
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_FAILURE;
            }
        }
    } else {
        None
    };
    let start = match &summary {
        Some(s) => {
            // Continue where the thread ran, unless -C / -m say otherwise.
            if global.cd.is_none() && s.cwd.is_dir() {
                global.cd = Some(s.cwd.clone());
            }
            if global.model.is_none() && !s.model.is_empty() {
                global.model = Some(s.model.clone());
            }
            oi_tui::StartMode::Resume(s.id)
        }
        None => oi_tui::StartMode::ResumePicker,
    };
    run_tui(global, None, start).await
}

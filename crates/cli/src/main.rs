//! `interpreter`: parses the command line and hands off to a front end. Every front end is
//! a thin adapter over `oi-core`; nothing here knows how a turn works.

mod accept_cmd;
mod acp_cmd;
mod args;
mod codex_flags;
mod config_load;
mod conventions;
mod exec;
mod exec_jsonl;
mod images;
mod interactive;
mod listen_token;
mod local_model_cmd;
mod mcp_cmd;
mod mcp_server_cmd;
mod out;
mod render;
mod sandbox_cmd;
mod sessions;
mod trust_cmd;
mod tui_cmd;

use crate::args::{
    AppServerCommand, Cli, Command, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, ExecCommand, GlobalArgs,
};
use crate::out::outln;
use clap::Parser;
use std::ffi::OsString;

fn main() {
    let code = main_with_args(std::env::args_os().collect());
    std::process::exit(code);
}

fn runtime() -> Result<tokio::runtime::Runtime, i32> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            eprintln!("error: cannot start the async runtime: {e}");
            EXIT_FAILURE
        })
}

fn init_tracing(log_file: Option<&std::path::Path>) {
    use tracing_subscriber::fmt::writer::MakeWriterExt;
    // Logs go to stderr only (stdout carries results or protocol), quiet unless RUST_LOG.
    let filter = || {
        tracing_subscriber::EnvFilter::try_from_default_env()
            // rmcp's own warnings repeat, in its internal terms, failures the MCP client
            // already reports in one line; `RUST_LOG=rmcp=debug` shows them when needed.
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,rmcp=off"))
    };
    // Server mode also keeps a log file: GUI MCP clients often discard stderr.
    // The log may quote prompts and tool output: owner-only (0600 in a 0700 folder), and a
    // file left more open by an older version is tightened.
    let file = log_file.and_then(|path| oi_config::owner_only::open_append(path).ok());
    let format = || PlainNotices(tracing_subscriber::fmt::format());
    let _ = match file {
        Some(f) => tracing_subscriber::fmt()
            .with_env_filter(filter())
            .with_writer(std::io::stderr.and(std::sync::Mutex::new(f)))
            .with_ansi(false)
            .event_format(format())
            .try_init(),
        None => tracing_subscriber::fmt()
            .with_env_filter(filter())
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .event_format(format())
            .try_init(),
    };
}

/// The log format, except for messages meant for the user as they are (the thread store's
/// fallbacks and failures, target [`oi_core::NOTICE_TARGET`]): those are one plain
/// line, `warning: <sentence>`, not a timestamped `WARN target: ...` log line.
struct PlainNotices<F>(F);

impl<S, N, F> tracing_subscriber::fmt::FormatEvent<S, N> for PlainNotices<F>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
    F: tracing_subscriber::fmt::FormatEvent<S, N>,
{
    fn format_event(
        &self,
        ctx: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut writer: tracing_subscriber::fmt::format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        if event.metadata().target() != oi_core::NOTICE_TARGET {
            return self.0.format_event(ctx, writer, event);
        }
        let mut message = MessageText(String::new());
        event.record(&mut message);
        writeln!(writer, "warning: {}", message.0)
    }
}

/// The `message` field of an event, as written.
struct MessageText(String);

impl tracing::field::Visit for MessageText {
    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        if field.name() == "message" {
            self.0.push_str(value);
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            use std::fmt::Write;
            let _ = write!(self.0, "{value:?}");
        }
    }
}

/// What each server (MCP, ACP, v2) is started with: the command line's config overrides. A
/// bad `-c` is a usage error, said here.
fn host_settings(global: &GlobalArgs) -> Result<crate::mcp_server_cmd::HostSettings, i32> {
    match global.cli_overrides() {
        Ok(cli_overrides) => Ok(crate::mcp_server_cmd::HostSettings {
            cli_overrides,
            overrides: global.overrides(),
        }),
        Err(e) => {
            eprintln!("error: {e}");
            Err(EXIT_USAGE)
        }
    }
}

fn main_with_args(args: Vec<OsString>) -> i32 {
    let cli = match parse(args) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let tui = crate::tui_cmd::wants_tui(&cli);
    init_logging(&cli, tui);
    if cli.global.accept_project_config
        && matches!(
            cli.command,
            Some(Command::McpServer(_) | Command::AppServer { .. } | Command::Acp)
        )
    {
        // A server starts sessions for its clients over time: accepting whatever file is there
        // at each start would be consent to files nobody reviewed.
        eprintln!(
            "error: --accept-project-config accepts a project config for a session started from \
             the command line; for a server, review the file and run `interpreter \
             accept-project-config DIR` once"
        );
        return EXIT_USAGE;
    }
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    crate::local_model_cmd::install_starter();
    run_command(&rt, cli, tui)
}

/// The command line, parsed; `Err` is the exit code after clap printed its help or error.
fn parse(mut args: Vec<OsString>) -> Result<Cli, i32> {
    // Installed under the name `interpreter-mcp-server` (e.g. a symlink): act as the server.
    let invoked_as = args.first().and_then(|a| {
        std::path::Path::new(a)
            .file_name()
            .map(|n| n.to_os_string())
    });
    if invoked_as.as_deref() == Some(std::ffi::OsStr::new("interpreter-mcp-server")) {
        args.insert(1, "mcp-server".into());
    }
    Cli::try_parse_from(args).map_err(|e| {
        let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
        let _ = e.print();
        code
    })
}

/// Where logs go: a file only under the TUI (the screen is its), the servers' own log files
/// besides stderr, stderr for the rest.
fn init_logging(cli: &Cli, tui: bool) {
    if tui {
        // The screen belongs to the TUI: logs go to a file only.
        crate::tui_cmd::init_file_tracing();
    } else {
        let log_name = match &cli.command {
            Some(Command::McpServer(_)) => Some("mcp-server.log"),
            Some(Command::Acp) => Some("acp.log"),
            Some(Command::AppServer { command: None, .. }) => Some("app-server.log"),
            _ => None,
        };
        let log_file = log_name.and_then(|name| {
            Some(oi_config::owner_only::log_path(
                &oi_config::find_home().ok()?,
                name,
            ))
        });
        init_tracing(log_file.as_deref());
    }
}

/// Runs the command (or the TUI or line mode without one) to its exit code.
fn run_command(rt: &tokio::runtime::Runtime, cli: Cli, tui: bool) -> i32 {
    match cli.command {
        Some(Command::LocalModel { command }) => rt.block_on(crate::local_model_cmd::run(command)),
        Some(Command::Exec(mut args)) => match args.command.take() {
            Some(ExecCommand::Resume(resume)) => {
                rt.block_on(crate::sessions::run_exec_resume(cli.global, args, resume))
            }
            None => rt.block_on(crate::exec::run_exec(cli.global, args)),
        },
        Some(Command::Resume(args)) if tui => {
            rt.block_on(crate::tui_cmd::run_resume_tui(cli.global, args))
        }
        Some(Command::Resume(args)) => rt.block_on(crate::sessions::run_resume(cli.global, args)),
        Some(Command::Sessions { command }) => {
            rt.block_on(crate::sessions::run_sessions(cli.global, command))
        }
        Some(Command::Sandbox(args)) => rt.block_on(crate::sandbox_cmd::run(cli.global, args)),
        Some(Command::Trust { dir }) => crate::trust_cmd::run(&cli.global, dir, true),
        Some(Command::Untrust { dir }) => crate::trust_cmd::run(&cli.global, dir, false),
        Some(Command::AcceptProjectConfig { dir }) => crate::accept_cmd::run(&cli.global, dir),
        Some(Command::Mcp { command }) => {
            let cli_overrides = match cli.global.cli_overrides() {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("error: {e}");
                    return EXIT_USAGE;
                }
            };
            let home = match oi_config::find_home() {
                Ok(h) => h,
                Err(e) => {
                    eprintln!("error: {e}");
                    return EXIT_USAGE;
                }
            };
            rt.block_on(crate::mcp_cmd::run(command, &home, &cli_overrides))
        }
        Some(Command::McpServer(args)) => {
            let opts = match host_settings(&cli.global) {
                Ok(opts) => opts,
                Err(code) => return code,
            };
            rt.block_on(crate::mcp_server_cmd::run(
                crate::mcp_server_cmd::Server::Mcp,
                opts,
                args,
            ))
        }
        Some(Command::Acp) => {
            let opts = match host_settings(&cli.global) {
                Ok(opts) => opts,
                Err(code) => return code,
            };
            rt.block_on(crate::acp_cmd::run(opts))
        }
        Some(Command::AppServer {
            command: Some(AppServerCommand::GenerateJsonSchema { out }),
            ..
        }) => match oi_app_server_protocol::export::write_schema(&out) {
            Ok(n) => {
                outln!("wrote {n} schema files to {}", out.display());
                EXIT_OK
            }
            Err(e) => {
                eprintln!("error: {e}");
                EXIT_USAGE
            }
        },
        Some(Command::AppServer {
            command: None,
            mut serve,
            codex,
        }) => {
            if let Err(e) = codex.apply(&mut serve) {
                eprintln!("error: {e}");
                return EXIT_USAGE;
            }
            let opts = match host_settings(&cli.global) {
                Ok(opts) => opts,
                Err(code) => return code,
            };
            rt.block_on(crate::mcp_server_cmd::run(
                crate::mcp_server_cmd::Server::App,
                opts,
                serve,
            ))
        }
        None if tui => rt.block_on(crate::tui_cmd::run_tui_with_images(
            cli.global, cli.prompt, cli.images,
        )),
        None if !cli.images.is_empty() => {
            eprintln!(
                "error: -i/--image works in the terminal UI and in `interpreter exec -i FILE PROMPT`; the line mode sends text only"
            );
            EXIT_USAGE
        }
        None => rt.block_on(crate::interactive::run(cli.global, cli.prompt)),
    }
}

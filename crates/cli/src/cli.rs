//! Command-line definition and dispatch.

use clap::{Args, Parser, Subcommand};
use oi_config::{ConfigLoadOptions, ConfigOverrides, LoadedConfig};
use oi_protocol::config_types::{AskForApproval, SandboxMode};
use std::ffi::OsString;
use std::path::PathBuf;

/// Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error.
pub const EXIT_OK: i32 = 0;
pub const EXIT_FAILURE: i32 = 1;
pub const EXIT_USAGE: i32 = 2;

#[derive(Parser, Debug)]
#[command(
    name = "interpreter",
    version,
    about = "A local coding agent for open models, speaking MCP both ways.",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Prompt for an interactive session.
    pub prompt: Option<String>,
}

#[derive(Args, Debug, Clone, Default)]
pub struct GlobalArgs {
    /// Override a config value: `-c key=value` (dotted key; value parsed as TOML, else a string).
    #[arg(short = 'c', long = "config", value_name = "key=value", global = true)]
    pub config: Vec<String>,
    /// Model to use.
    #[arg(short = 'm', long, global = true)]
    pub model: Option<String>,
    /// Configuration profile from config.toml.
    #[arg(short = 'p', long, global = true)]
    pub profile: Option<String>,
    /// Sandbox for commands the model runs.
    #[arg(short = 's', long, value_name = "MODE", global = true, value_parser = parse_sandbox)]
    pub sandbox: Option<SandboxMode>,
    /// When to ask before running commands.
    #[arg(short = 'a', long = "ask-for-approval", value_name = "POLICY", global = true, value_parser = parse_approval)]
    pub approval: Option<AskForApproval>,
    /// Working directory for the session.
    #[arg(short = 'C', long = "cd", value_name = "DIR", global = true)]
    pub cd: Option<PathBuf>,
    /// Use the local Ollama provider.
    #[arg(long, global = true)]
    pub oss: bool,
}

fn parse_sandbox(s: &str) -> Result<SandboxMode, String> {
    s.parse()
}

fn parse_approval(s: &str) -> Result<AskForApproval, String> {
    s.parse()
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run one turn headlessly and print the result.
    Exec(ExecArgs),
    /// Run the MCP server over stdio.
    McpServer,
    /// Run one command under a sandbox policy, to see what the agent may do.
    Sandbox(SandboxArgs),
    /// Continue a stored thread headlessly (like exec).
    Resume(ResumeArgs),
    /// Stored threads.
    Sessions {
        #[command(subcommand)]
        command: SessionsCommand,
    },
    /// Manage MCP servers (`[mcp_servers.*]`): add, list, get, remove, login, logout.
    Mcp {
        #[command(subcommand)]
        command: crate::mcp_cmd::McpCommand,
    },
}

#[derive(Args, Debug, Clone)]
pub struct ResumeArgs {
    /// Continue the most recent thread (of this directory if there is one, else any).
    #[arg(long)]
    pub last: bool,
    /// Print every event as one JSON line.
    #[arg(long)]
    pub json: bool,
    /// The thread id, then the prompt (`-` reads it from stdin). With --last, only the prompt.
    #[arg(value_name = "THREAD_ID|PROMPT")]
    pub args: Vec<String>,
}

#[derive(Subcommand, Debug, Clone)]
pub enum SessionsCommand {
    /// List stored threads, most recently updated first.
    List {
        #[arg(long)]
        json: bool,
        #[arg(long, default_value_t = 25)]
        limit: usize,
        /// Only threads whose title or first message contains this text.
        #[arg(long)]
        search: Option<String>,
        /// Include archived threads only.
        #[arg(long)]
        archived: bool,
    },
}

#[derive(Args, Debug, Clone)]
pub struct SandboxArgs {
    /// The command and its arguments (after `--`).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required = true,
        value_name = "CMD"
    )]
    pub command: Vec<String>,
}

#[derive(Args, Debug, Clone)]
pub struct ExecArgs {
    /// Print every event as one JSON line.
    #[arg(long)]
    pub json: bool,
    /// The prompt; `-` reads it from stdin.
    pub prompt: Option<String>,
}

impl GlobalArgs {
    /// `-c` pairs, parsed; the first bad one is a usage error.
    pub fn cli_overrides(&self) -> Result<Vec<(String, toml::Value)>, String> {
        self.config
            .iter()
            .map(|raw| oi_config::parse_cli_override(raw).map_err(|e| e.to_string()))
            .collect()
    }

    pub fn overrides(&self) -> ConfigOverrides {
        ConfigOverrides {
            model: self.model.clone(),
            model_provider: self.oss.then(|| "ollama".to_string()),
            profile: self.profile.clone(),
            cwd: self.cd.clone(),
            approval_policy: self.approval,
            sandbox_mode: self.sandbox,
            ..Default::default()
        }
    }

    /// Load the config for a front end: warnings go to stderr; an error is printed and
    /// turned into the usage exit code.
    pub fn load_config_or_exit(&self) -> Result<oi_config::Config, i32> {
        match self.load_config() {
            Ok(l) => {
                for w in &l.warnings {
                    eprintln!("warning: {w}");
                }
                Ok(l.config)
            }
            Err(e) => {
                eprintln!("error: {e}");
                Err(EXIT_USAGE)
            }
        }
    }

    pub fn load_config(&self) -> Result<LoadedConfig, String> {
        let cli_overrides = self.cli_overrides()?;
        oi_config::load_config(ConfigLoadOptions {
            home: None,
            cli_overrides,
            overrides: self.overrides(),
        })
        .map_err(|e| e.to_string())
    }
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
    let file = log_file.and_then(|path| {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).ok()?;
        }
        let mut opts = std::fs::OpenOptions::new();
        opts.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        opts.open(path).ok()
    });
    let _ = match file {
        Some(f) => tracing_subscriber::fmt()
            .with_env_filter(filter())
            .with_writer(std::io::stderr.and(std::sync::Mutex::new(f)))
            .with_ansi(false)
            .try_init(),
        None => tracing_subscriber::fmt()
            .with_env_filter(filter())
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .try_init(),
    };
}

pub fn main_with_args(mut args: Vec<OsString>) -> i32 {
    // Installed under the name `interpreter-mcp-server` (e.g. a symlink): act as the server.
    let invoked_as = args.first().and_then(|a| {
        std::path::Path::new(a)
            .file_name()
            .map(|n| n.to_os_string())
    });
    if invoked_as.as_deref() == Some(std::ffi::OsStr::new("interpreter-mcp-server")) {
        args.insert(1, "mcp-server".into());
    }
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            let _ = e.print();
            return code;
        }
    };
    let log_file = matches!(cli.command, Some(Command::McpServer))
        .then(|| oi_config::find_home().ok())
        .flatten()
        .map(|home| home.join("log").join("mcp-server.log"));
    init_tracing(log_file.as_deref());
    let rt = match runtime() {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    match cli.command {
        Some(Command::Exec(args)) => rt.block_on(crate::exec::run_exec(cli.global, args)),
        Some(Command::Resume(args)) => rt.block_on(crate::sessions::run_resume(cli.global, args)),
        Some(Command::Sessions { command }) => {
            rt.block_on(crate::sessions::run_sessions(cli.global, command))
        }
        Some(Command::Sandbox(args)) => rt.block_on(crate::sandbox_cmd::run(cli.global, args)),
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
        Some(Command::McpServer) => {
            let cli_overrides = match cli.global.cli_overrides() {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("error: {e}");
                    return EXIT_USAGE;
                }
            };
            rt.block_on(oi_mcp_server::run_main(oi_mcp_server::McpServerOptions {
                cli_overrides,
                overrides: cli.global.overrides(),
                home: None,
                extensions: vec![std::sync::Arc::new(oi_app_server::AppServerExtension)],
            }))
        }
        None => rt.block_on(crate::interactive::run(cli.global, cli.prompt)),
    }
}

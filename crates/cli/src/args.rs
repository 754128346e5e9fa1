//! The command line's definition (clap types), the exit codes and the help text: the leaf
//! every command module reads; `main.rs` dispatches.

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand};
use oi_config::ConfigOverrides;
use oi_protocol::config_types::{AskForApproval, SandboxMode};
use std::path::PathBuf;

use crate::conventions::with_config_help;
pub(crate) use crate::conventions::{EXIT_FAILURE, EXIT_OK, EXIT_USAGE};

const ROOT_AFTER_HELP: &str = with_config_help!(
    "Defaults: the model may read but not write (-s read-only) and asks before anything else
(-a on-request); `exec` declines approvals it cannot ask. For editing tasks pass
`-s workspace-write -a never`. Global options work before or after the subcommand.

",
    "  interpreter                                   # interactive session
  interpreter \"explain this repository\"          # interactive, first prompt given
  interpreter exec \"list the TODOs in src/\"       # one headless turn
  interpreter -s workspace-write -a never exec \"fix the failing test\"
  interpreter --oss -m qwen3-coder:30b exec \"summarise README.md\"
  interpreter mcp add docs -- npx -y @modelcontextprotocol/server-filesystem ~/docs"
);

#[derive(Parser, Debug)]
#[command(
    name = "interpreter",
    version,
    about = "A local coding agent for open models, speaking MCP both ways.",
    after_help = ROOT_AFTER_HELP,
    // A word that names a subcommand is the subcommand, never a prompt (`-- exec` sends it).
    subcommand_precedence_over_arg = true
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Option<Command>,
    /// First prompt of an interactive session (without one, type it at the `›` marker).
    pub prompt: Option<String>,
    /// An image for a vision model (PNG, JPEG, GIF or WebP, at most 10 MiB), sent with the
    /// first prompt, or attached to the composer when there is none; may repeat.
    #[arg(short = 'i', long = "image", value_name = "FILE")]
    pub images: Vec<PathBuf>,
    /// Use the line-based interactive mode instead of the full-screen terminal UI (the line
    /// mode is also used whenever stdin or stdout is not a terminal).
    #[arg(long, global = true)]
    pub no_tui: bool,
}

#[derive(Args, Debug, Clone, Default)]
pub(crate) struct GlobalArgs {
    /// Override a config value: `-c key=value` (dotted key; value parsed as TOML, else a string).
    #[arg(short = 'c', long = "config", value_name = "key=value", global = true)]
    pub config: Vec<String>,
    /// Model to use, e.g. `qwen3-coder:30b` (default: the provider's default model).
    #[arg(short = 'm', long, global = true)]
    pub model: Option<String>,
    /// Configuration profile: a `[profiles.<name>]` table of config.toml.
    #[arg(short = 'p', long, global = true)]
    pub profile: Option<String>,
    /// Sandbox for commands the model runs [default: read-only].
    #[arg(short = 's', long, value_name = "MODE", global = true, value_parser = sandbox_parser())]
    pub sandbox: Option<SandboxMode>,
    /// When to ask before running commands [default: on-request].
    #[arg(short = 'a', long = "ask-for-approval", value_name = "POLICY", global = true, value_parser = approval_parser())]
    pub approval: Option<AskForApproval>,
    /// Working directory for the session [default: the current directory].
    #[arg(short = 'C', long = "cd", value_name = "DIR", global = true)]
    pub cd: Option<PathBuf>,
    /// Use the local Ollama provider (http://localhost:11434/v1).
    #[arg(long, global = true)]
    pub oss: bool,
    /// Accept the project's `.openinterpreter/config.toml` as it is now, when it widens the
    /// session (sandbox, approvals, MCP servers, notify, model endpoint) and is new or changed
    /// since you last accepted it. Without this, `exec` refuses such a file.
    #[arg(long, global = true)]
    pub accept_project_config: bool,
}

/// `-s` values with what each allows, listed by `--help`.
fn sandbox_parser() -> impl TypedValueParser<Value = SandboxMode> {
    PossibleValuesParser::new([
        PossibleValue::new("read-only").help("read anywhere, write nowhere (default)"),
        PossibleValue::new("workspace-write")
            .help("also write in the working directory and temp dirs; no network"),
        PossibleValue::new("danger-full-access").help("no sandbox at all"),
    ])
    .try_map(|s| s.parse::<SandboxMode>())
}

/// `-a` values with when each asks, listed by `--help`.
fn approval_parser() -> impl TypedValueParser<Value = AskForApproval> {
    PossibleValuesParser::new([
        PossibleValue::new("untrusted")
            .alias("unless-trusted")
            .help("ask for every command not known to be read-only"),
        PossibleValue::new("on-failure")
            .help("run sandboxed; ask to rerun unsandboxed when it fails"),
        PossibleValue::new("on-request").help("the model decides when to ask (default)"),
        PossibleValue::new("never").help("never ask; failures go back to the model"),
    ])
    .try_map(|s| s.parse::<AskForApproval>())
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Run one turn headlessly and print the result.
    #[command(after_help = EXEC_AFTER_HELP)]
    Exec(ExecArgs),
    /// Run the MCP server over stdio (tools `codex` and `codex-reply`, and the v2 API), or
    /// over streamable HTTP with `--listen`.
    #[command(after_help = MCP_SERVER_AFTER_HELP)]
    McpServer(crate::mcp_server_cmd::McpServerArgs),
    /// Run the app server over stdio (or WebSocket / streamable HTTP with `--listen`): the
    /// v2 thread/turn API and the v1 methods, without MCP (for clients written for
    /// `codex app-server`, which it also takes the launch flags of).
    #[command(after_help = APP_SERVER_AFTER_HELP)]
    AppServer {
        #[command(subcommand)]
        command: Option<AppServerCommand>,
        #[command(flatten)]
        serve: crate::mcp_server_cmd::McpServerArgs,
        #[command(flatten)]
        codex: Box<crate::codex_flags::CodexAppServerFlags>,
    },
    /// Serve the Agent Client Protocol over stdio, for editors (Zed, JetBrains IDEs,
    /// Neovim, Emacs): sessions are stored threads, approvals are permission requests.
    #[command(after_help = ACP_AFTER_HELP)]
    Acp,
    /// Run one command under a sandbox policy, to see what the agent may do.
    #[command(after_help = SANDBOX_AFTER_HELP)]
    Sandbox(SandboxArgs),
    /// Continue a stored thread headlessly (like exec).
    #[command(after_help = RESUME_AFTER_HELP)]
    Resume(ResumeArgs),
    /// Stored threads.
    #[command(after_help = SESSIONS_AFTER_HELP)]
    Sessions {
        #[command(subcommand)]
        command: SessionsCommand,
    },
    /// Trust a project folder, so its `.openinterpreter/config.toml` applies (default: the
    /// repository root of the working directory).
    Trust {
        /// The folder to trust.
        dir: Option<PathBuf>,
    },
    /// Show what the project config that applies in DIR (default: the working directory)
    /// changes, and accept it as it is now.
    AcceptProjectConfig {
        /// The folder a session would start in.
        dir: Option<PathBuf>,
    },
    /// Stop trusting a project folder: its `.openinterpreter/config.toml` is ignored again.
    Untrust {
        /// The folder to stop trusting.
        dir: Option<PathBuf>,
    },
    /// Manage MCP servers (`[mcp_servers.*]`): add, list, get, remove, login, logout.
    #[command(after_help = crate::mcp_cmd::MCP_AFTER_HELP)]
    Mcp {
        #[command(subcommand)]
        command: crate::mcp_cmd::McpCommand,
    },
    /// The built-in local model (`model_provider = "local"`): install it now, see whether
    /// its server runs, stop it.
    LocalModel {
        #[command(subcommand)]
        command: crate::local_model_cmd::LocalModelCommand,
    },
}

/// `interpreter app-server` tools.
#[derive(Subcommand, Debug)]
pub(crate) enum AppServerCommand {
    /// Write the JSON Schema of every v2 request, response and notification we implement.
    GenerateJsonSchema {
        /// Directory to write into (created if missing).
        #[arg(long)]
        out: PathBuf,
    },
}

const APP_SERVER_AFTER_HELP: &str = with_config_help!(
    "  interpreter app-server
  interpreter app-server --listen ws://127.0.0.1:4500     # for codex --remote ws://127.0.0.1:4500
                                                          # (bearer token in $OPENINTERPRETER_HOME/listen-token)
  interpreter app-server generate-json-schema --out schema/"
);
const EXEC_AFTER_HELP: &str = with_config_help!(
    "  interpreter exec \"what does src/main.rs do?\"
  interpreter exec -s workspace-write -a never \"fix the failing test\"
  git diff | interpreter exec -
  interpreter exec --json \"list the TODOs\" | jq -c .msg.type"
);
const MCP_SERVER_AFTER_HELP: &str = with_config_help!(
    "  interpreter mcp-server
  RUST_LOG=debug interpreter mcp-server   # also logged to $OPENINTERPRETER_HOME/log/mcp-server.log
  npx @modelcontextprotocol/inspector interpreter mcp-server
  interpreter mcp-server --listen 127.0.0.1:8765          # streamable HTTP at http://127.0.0.1:8765/mcp
                                                          # (bearer token in $OPENINTERPRETER_HOME/listen-token)
  OI_TOKEN=$(openssl rand -hex 32) interpreter mcp-server --listen 0.0.0.0:8765 --auth-token-env OI_TOKEN"
);
const ACP_AFTER_HELP: &str = with_config_help!(
    "  interpreter acp                        # what an editor runs; see docs/acp.md
  interpreter -m qwen3-coder:30b acp     # the editor's sessions use this model
  RUST_LOG=debug interpreter acp         # also logged to $OPENINTERPRETER_HOME/log/acp.log"
);
const SANDBOX_AFTER_HELP: &str = with_config_help!(
    "  interpreter sandbox -- touch /tmp/x               # read-only: refused
  interpreter sandbox -s workspace-write -- touch ./x
  interpreter sandbox -s workspace-write -- curl https://example.com"
);
const RESUME_AFTER_HELP: &str = with_config_help!(
    "  interpreter resume --last \"and now add a test\"
  interpreter resume 0199a213-81c0-7800-8aa1-bbab2a035a53 \"continue\"
  echo \"summarise what you did\" | interpreter resume --last -"
);
const SESSIONS_AFTER_HELP: &str = with_config_help!(
    "  interpreter sessions list
  interpreter sessions list --search parser --limit 0
  interpreter sessions list --archived --json"
);

#[derive(Args, Debug, Clone)]
pub(crate) struct ResumeArgs {
    /// Continue the most recent thread (of this directory if there is one, else any).
    #[arg(long)]
    pub last: bool,
    /// Print every event as one JSON line.
    #[arg(long)]
    pub json: bool,
    /// Codex exec's JSON lines (see `exec --experimental-json`).
    #[arg(long, hide = true, conflicts_with = "json")]
    pub experimental_json: bool,
    /// Accept MCP servers' questions as `exec --accept-elicitations` does.
    #[arg(long)]
    pub accept_elicitations: bool,
    /// The thread id, then the prompt (`-` reads it from stdin). With --last, only the prompt.
    #[arg(value_name = "THREAD_ID|PROMPT")]
    pub args: Vec<String>,
}

#[derive(Subcommand, Debug, Clone)]
pub(crate) enum SessionsCommand {
    /// List stored threads, most recently updated first.
    #[command(after_help = SESSIONS_AFTER_HELP)]
    List {
        /// Print a JSON array of thread summaries instead of a table.
        #[arg(long)]
        json: bool,
        /// Show at most this many threads; 0 shows them all.
        #[arg(long, default_value_t = 25)]
        limit: usize,
        /// Only threads whose title or first message contains this text.
        #[arg(long)]
        search: Option<String>,
        /// List archived threads instead of active ones.
        #[arg(long)]
        archived: bool,
    },
}

#[derive(Args, Debug, Clone)]
pub(crate) struct SandboxArgs {
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
pub(crate) struct ExecArgs {
    /// Print every event as one JSON line (format: docs/exec-json.md).
    #[arg(long, conflicts_with = "experimental_json")]
    pub json: bool,
    /// Print Codex exec's JSON lines instead (`thread.started`, `item.*`, `turn.*`), what
    /// the Codex TypeScript SDK reads (docs/exec-json.md).
    #[arg(long)]
    pub experimental_json: bool,
    /// Answer MCP servers' questions (elicitations, such as a confirmation a tool asks for)
    /// with accept instead of declining them: each field gets its default, and a required
    /// yes/no field without one is answered yes. A question that needs an answer only a
    /// person could give (a required text field without a default) is still declined.
    #[arg(long)]
    pub accept_elicitations: bool,
    #[command(flatten)]
    pub codex: CodexExecFlags,
    /// The prompt; `-` reads it from stdin.
    pub prompt: Option<String>,
    #[command(subcommand)]
    pub command: Option<ExecCommand>,
}

/// `exec resume …`: Codex's spelling of `interpreter resume` (the Codex SDK uses it).
#[derive(Subcommand, Debug, Clone)]
pub(crate) enum ExecCommand {
    /// Continue a stored thread: `exec resume THREAD_ID [PROMPT]` or `exec resume --last`.
    Resume(ResumeArgs),
}

/// Flags of `codex exec` that its clients (the Codex TypeScript SDK) pass.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct CodexExecFlags {
    /// Accepted and ignored: `exec` runs outside git repositories too.
    #[arg(long, hide = true, global = true)]
    pub skip_git_repo_check: bool,
    /// Accepted and ignored: threads of `exec` are stamped `exec`.
    #[arg(long, hide = true, value_name = "SOURCE", global = true)]
    pub thread_source: Option<String>,
    /// Accepted and ignored: there are no such programs here.
    #[arg(long, hide = true, value_name = "PROGRAM", global = true)]
    pub cyber_access_program: Option<String>,
    /// Another folder commands may write in (with `-s workspace-write`); may repeat.
    #[arg(long, value_name = "DIR", global = true)]
    pub add_dir: Vec<PathBuf>,
    /// Not supported: refused with a message, never ignored.
    #[arg(long, hide = true, value_name = "FILE", global = true)]
    pub output_schema: Option<PathBuf>,
    /// An image to send with the prompt to a vision model (PNG, JPEG, GIF or WebP, at most
    /// 10 MiB); may repeat.
    #[arg(long, short = 'i', value_name = "FILE", global = true)]
    pub image: Vec<PathBuf>,
}

impl CodexExecFlags {
    /// Apply the flags that mean something here to `global`; refuse the ones that would be
    /// silently wrong to ignore.
    pub(crate) fn apply(&self, global: &mut GlobalArgs) -> Result<(), String> {
        if self.output_schema.is_some() {
            return Err("--output-schema is not supported: the answer is not constrained to a JSON schema here".into());
        }
        if !self.add_dir.is_empty() {
            let roots: Vec<toml::Value> = self
                .add_dir
                .iter()
                .map(|d| toml::Value::String(d.display().to_string()))
                .collect();
            global.config.push(format!(
                "sandbox_workspace_write.writable_roots={}",
                toml::Value::Array(roots)
            ));
        }
        Ok(())
    }
}

impl GlobalArgs {
    /// `-c` pairs, parsed; the first bad one is a usage error.
    pub(crate) fn cli_overrides(
        &self,
    ) -> Result<Vec<(String, toml::Value)>, oi_config::ConfigError> {
        self.config
            .iter()
            .map(|raw| oi_config::parse_cli_override(raw))
            .collect()
    }

    pub(crate) fn overrides(&self) -> ConfigOverrides {
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
}

//! `interpreter mcp add|list|get|remove|login|logout`: manage `[mcp_servers.*]`.
//!
//! `add` and `remove` edit only the user config (`$HOME/config.toml`) with `toml_edit`, so
//! comments, ordering and formatting of everything else survive. `list` and `get` show the
//! effective servers (user config, project config and `-c` overrides layered), with secret
//! values masked as `*****` in both the tables and `--json`.

mod call;
mod edit;
mod oauth;
mod show;

use crate::out::outln;
use clap::{ArgGroup, Args, Subcommand};
use oi_config::OAuthCredentialsStoreMode;
use oi_config::mcp::{McpServerConfig, is_valid_server_name};
use std::collections::BTreeMap;
use std::path::Path;

/// Ends `interpreter mcp --help` and the help of each `mcp` subcommand.
pub(crate) const MCP_AFTER_HELP: &str = crate::conventions::with_config_help!(
    "`add` and `remove` edit the user config only; `list` and `get` show every layer.\n\n",
    "  interpreter mcp add docs -- npx -y @modelcontextprotocol/server-filesystem ~/docs
  interpreter mcp add github --env GITHUB_TOKEN=env:GITHUB_TOKEN -- github-mcp-server stdio
  interpreter mcp add linear --url https://mcp.linear.app/mcp
  interpreter mcp list --probe
  interpreter mcp get docs --json
  interpreter mcp remove docs"
);

const EXIT_OK: i32 = 0;
const EXIT_FAILURE: i32 = 1;
const EXIT_USAGE: i32 = 2;

#[derive(Subcommand, Debug)]
pub(crate) enum McpCommand {
    /// Add a server to the user config (replacing one with the same name).
    #[command(after_help = MCP_AFTER_HELP)]
    Add(AddArgs),
    /// List configured servers.
    #[command(after_help = MCP_AFTER_HELP)]
    List(ListArgs),
    /// Show one server's configuration.
    #[command(after_help = MCP_AFTER_HELP)]
    Get(GetArgs),
    /// Remove a server from the user config.
    #[command(after_help = MCP_AFTER_HELP)]
    Remove(RemoveArgs),
    /// Log in to a streamable HTTP server with OAuth.
    #[command(after_help = MCP_AFTER_HELP)]
    Login(LoginArgs),
    /// Delete stored OAuth credentials for a server.
    #[command(after_help = MCP_AFTER_HELP)]
    Logout(LogoutArgs),
    /// Connect to one server as a session does, list its tools and call one (for tests,
    /// e.g. the MCP conformance suite's client scenarios).
    #[command(hide = true)]
    Call(call::CallArgs),
}

#[derive(Args, Debug)]
#[command(
    override_usage = "interpreter mcp add [OPTIONS] <NAME> (--url <URL> | -- <COMMAND>...)",
    group(ArgGroup::new("transport").required(true).args(["url", "command"]))
)]
pub(crate) struct AddArgs {
    /// Server name (e.g. letters, numbers, '-', '_', '.'); tools appear as mcp__<name>__<tool>.
    pub name: String,
    /// Environment variable for a stdio server, KEY=VALUE (repeatable). Use `KEY=env:HOST_VAR`
    /// to read a host variable at launch instead of storing the value.
    #[arg(long, value_name = "KEY=VALUE", conflicts_with = "url")]
    pub env: Vec<String>,
    /// URL of a streamable HTTP server.
    #[arg(long)]
    pub url: Option<String>,
    /// Environment variable holding a bearer token for the HTTP server.
    #[arg(long, value_name = "ENV_VAR", requires = "url")]
    pub bearer_token_env_var: Option<String>,
    /// Pre-registered OAuth client id for the HTTP server.
    #[arg(long, value_name = "ID", requires = "url")]
    pub oauth_client_id: Option<String>,
    /// RFC 8707 resource to request OAuth tokens for.
    #[arg(long, value_name = "RESOURCE", requires = "url")]
    pub oauth_resource: Option<String>,
    /// The stdio server's command and arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<String>,
}

#[derive(Args, Debug)]
pub(crate) struct ListArgs {
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Start every enabled server and report whether it starts and how many tools it exposes.
    #[arg(long)]
    pub probe: bool,
}

#[derive(Args, Debug)]
pub(crate) struct GetArgs {
    /// Name of the server, as shown by `interpreter mcp list`.
    pub name: String,
    /// Print the server's settings as JSON (secrets masked).
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub(crate) struct RemoveArgs {
    /// Name of the server to remove from the user config.
    pub name: String,
}

#[derive(Args, Debug)]
pub(crate) struct LoginArgs {
    /// Name of a configured streamable HTTP server.
    pub name: String,
    /// OAuth scopes to request, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub scopes: Vec<String>,
}

#[derive(Args, Debug)]
pub(crate) struct LogoutArgs {
    /// Name of the server whose stored OAuth credentials to delete.
    pub name: String,
}

/// Run one `mcp` subcommand. Prints its own messages; returns the exit code
/// (0 ok, 1 runtime failure, 2 usage or configuration error).
pub(crate) async fn run(
    cmd: McpCommand,
    home: &Path,
    cli_overrides: &[(String, toml::Value)],
) -> i32 {
    match cmd {
        McpCommand::Add(args) => add(args, home, cli_overrides).await,
        McpCommand::Remove(args) => remove(args, home, cli_overrides),
        McpCommand::List(args) => match effective(home, cli_overrides) {
            Ok((servers, store)) => show::list(&servers, home, store, args.json, args.probe).await,
            Err(code) => code,
        },
        McpCommand::Get(args) => match effective(home, cli_overrides) {
            Ok((servers, store)) => show::get(&servers, home, store, &args.name, args.json).await,
            Err(code) => code,
        },
        McpCommand::Login(args) => match effective(home, cli_overrides) {
            Ok((servers, store)) => {
                oauth::login(&servers, home, store, &args.name, &args.scopes).await
            }
            Err(code) => code,
        },
        McpCommand::Logout(args) => match effective(home, cli_overrides) {
            Ok((servers, store)) => oauth::logout(&servers, home, store, &args.name),
            Err(code) => code,
        },
        McpCommand::Call(args) => match effective(home, cli_overrides) {
            Ok((servers, store)) => call::run(&servers, home, store, args).await,
            Err(code) => code,
        },
    }
}

/// The layered (user, project, `-c`) servers and where their OAuth tokens are kept, or the
/// exit code after printing the error.
fn effective(
    home: &Path,
    cli_overrides: &[(String, toml::Value)],
) -> Result<(BTreeMap<String, McpServerConfig>, OAuthCredentialsStoreMode), i32> {
    let loaded = oi_config::load_config(oi_config::ConfigLoadOptions {
        home: Some(home.to_path_buf()),
        cli_overrides: cli_overrides.to_vec(),
        overrides: Default::default(),
    })
    .map_err(|e| {
        eprintln!("error: {e}");
        EXIT_USAGE
    })?;
    for w in &loaded.warnings {
        eprintln!("warning: {w}");
    }
    Ok((
        loaded.config.mcp_servers,
        loaded.config.mcp_oauth_credentials_store,
    ))
}

async fn add(args: AddArgs, home: &Path, cli_overrides: &[(String, toml::Value)]) -> i32 {
    if !is_valid_server_name(&args.name) {
        eprintln!(
            "error: invalid server name '{}' (use printable ASCII without spaces or slashes, e.g. letters, numbers, '-', '_', '.')",
            args.name
        );
        return EXIT_USAGE;
    }
    // Clap cannot see that these need --url (the command comes after `--`): say so, as Codex does.
    if args.url.is_none() {
        let http_only = [
            (
                "--bearer-token-env-var",
                args.bearer_token_env_var.is_some(),
            ),
            ("--oauth-client-id", args.oauth_client_id.is_some()),
            ("--oauth-resource", args.oauth_resource.is_some()),
        ];
        if let Some((flag, _)) = http_only.iter().find(|(_, set)| *set) {
            eprintln!(
                "error: {flag} applies only to HTTP servers (--url); a stdio server (`-- COMMAND`) passes secrets with --env KEY=env:HOST_VAR"
            );
            return EXIT_USAGE;
        }
    }
    let (entry, cfg) = match edit::server_table(&args) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let config = oi_config::user_config_path(home);
    if let Err(e) = edit::upsert_server(&config, &args.name, entry) {
        eprintln!("error: {e}");
        return EXIT_FAILURE;
    }
    warn_about_literal_env(&args.env, &config);
    outln!("Added global MCP server '{}'.", args.name);
    // Only for a login offered now; the config's own problems are for `list` to report.
    let store = oi_config::load_config(oi_config::ConfigLoadOptions {
        home: Some(home.to_path_buf()),
        cli_overrides: cli_overrides.to_vec(),
        overrides: Default::default(),
    })
    .map(|l| l.config.mcp_oauth_credentials_store)
    .unwrap_or_default();
    oauth::after_add(&args.name, &cfg, home, store).await;
    EXIT_OK
}

/// `--env KEY=VALUE` stores VALUE in the file as written: say so (never echoing the value),
/// and how to keep a secret out of it.
fn warn_about_literal_env(env: &[String], config: &Path) {
    for (key, value) in env.iter().filter_map(|pair| pair.split_once('=')) {
        if value.starts_with("env:") || value.is_empty() {
            continue;
        }
        eprintln!(
            "warning: --env {key}=...: the value is written as is into {}. If it is a secret, keep it out of the file: \
             `--env {key}=env:HOST_VAR` reads HOST_VAR from your environment when the server starts, or \
             `env_vars = [\"{key}\"]` in [mcp_servers.<name>] passes your {key} through.",
            config.display()
        );
    }
}

fn remove(args: RemoveArgs, home: &Path, cli_overrides: &[(String, toml::Value)]) -> i32 {
    let path = oi_config::user_config_path(home);
    match edit::remove_server(&path, &args.name) {
        Ok(true) => {
            outln!("Removed global MCP server '{}'.", args.name);
            EXIT_OK
        }
        Ok(false) => {
            outln!("No MCP server named '{}' found.", args.name);
            // Say where it does come from, if another layer defines it.
            if let Ok(loaded) = oi_config::load_config(oi_config::ConfigLoadOptions {
                home: Some(home.to_path_buf()),
                cli_overrides: cli_overrides.to_vec(),
                overrides: Default::default(),
            }) && loaded.config.mcp_servers.contains_key(&args.name)
            {
                match &loaded.config.project_config_path {
                    Some(p) => outln!(
                        "It is defined in the project config {}; edit that file to remove it.",
                        p.display()
                    ),
                    None => outln!("It is set by a `-c` override, not by {}.", path.display()),
                }
            }
            EXIT_OK
        }
        Err(e) => {
            eprintln!("error: {e}");
            EXIT_FAILURE
        }
    }
}

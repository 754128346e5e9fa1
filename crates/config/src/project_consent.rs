//! Consent to a project layer that widens what the agent may do.
//!
//! Trust of a folder covers its subfolders, and anything that can write a subfolder (a
//! sandboxed command, a `git pull`) can plant `sub/.openinterpreter/config.toml` there. So a
//! trusted project layer that would widen the session — a wider sandbox, fewer approvals, an
//! MCP server, a `notify` program, another model endpoint — is honoured only once the user has
//! accepted *that file's content*: its SHA-256 is recorded in
//! `$OPENINTERPRETER_HOME/accepted-project-configs.toml` (0600, written under the edit lock).
//! Until then the layer is left out (so a front end that does not ask still runs with the
//! narrower settings), and the front ends that start sessions refuse with [`ProjectConfigReview::refusal`].
//!
//! What counts as widening is measured, not guessed from key names: the session is typed once
//! with and once without the project layer, and the two results are compared.
//!
//! An acceptance also covers what the layer launches: the files named on the command lines of
//! the MCP servers, the `notify` program and the hooks it adds are pinned by content
//! ([`crate::launch_pins`]); a change to one of them asks again.

use crate::ConfigError;
use crate::launch_pins::LaunchPins;
use crate::typed::Config;
use oi_protocol::config_types::{AskForApproval, SandboxPolicy};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The record of accepted project configs, in the home folder.
pub const ACCEPTED_FILE: &str = "accepted-project-configs.toml";

/// Whether the user accepted a widening project layer as it is now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReviewStatus {
    /// Accepted with this exact content: the layer applies.
    Accepted,
    /// Never accepted: the layer is left out.
    New,
    /// Accepted once, but the content (or a file it launches) changed since: the layer is
    /// left out.
    Changed,
}

/// A program a project layer launches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Launcher {
    /// The MCP server of that name (a stdio server the layer adds or changes).
    McpServer(String),
    /// The `notify` program.
    Notify,
    /// A hook command, by its key (`hooks::HookCommand::key`).
    Hook(String),
}

impl std::fmt::Display for Launcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Launcher::McpServer(name) => write!(f, "MCP server `{name}`"),
            Launcher::Notify => f.write_str("`notify`"),
            Launcher::Hook(key) => write!(f, "hook `{key}`"),
        }
    }
}

/// A trusted project layer that widens the session, and whether it was accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectConfigReview {
    /// The `.openinterpreter/config.toml` that was found.
    pub path: PathBuf,
    /// Where it really is, when a symlink on the way points elsewhere.
    pub real_path: Option<PathBuf>,
    /// Hex SHA-256 of the content that was read.
    pub sha256: String,
    /// What the layer changes, one phrase each ("sandbox: danger-full-access instead of
    /// read-only").
    pub changes: Vec<String>,
    /// The files the layer's programs name, pinned to their content now (what an acceptance
    /// records beside the config's fingerprint).
    pub launches: Vec<(Launcher, LaunchPins)>,
    /// For a `Changed` review: the launched files whose content is not the accepted one (or
    /// that were not part of the acceptance). Empty when the config itself changed.
    pub changed_files: Vec<PathBuf>,
    /// Whether the user accepted the layer as it is, never, or before it changed.
    pub status: ReviewStatus,
}

impl ProjectConfigReview {
    /// Whether the user accepted the layer as it is now.
    pub fn is_accepted(&self) -> bool {
        self.status == ReviewStatus::Accepted
    }

    /// The folder that holds the `.openinterpreter/` (what `accept-project-config` takes).
    pub fn project_dir(&self) -> PathBuf {
        self.path
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
            .unwrap_or_else(|| self.path.clone())
    }

    fn shown_path(&self) -> String {
        match &self.real_path {
            Some(real) => format!("{} (-> {})", self.path.display(), real.display()),
            None => self.path.display().to_string(),
        }
    }

    /// The line shown when a session starts with the accepted layer applied.
    pub fn notice(&self) -> String {
        format!(
            "project config {} applies (accepted): {}",
            self.shown_path(),
            self.changes.join("; ")
        )
    }

    /// Why a session is not started with the layer, and how to accept it.
    pub fn refusal(&self) -> String {
        let files_changed;
        let why = match self.status {
            ReviewStatus::Changed if !self.changed_files.is_empty() => {
                let shown: Vec<String> = self
                    .changed_files
                    .iter()
                    .map(|f| {
                        let by = self
                            .launches
                            .iter()
                            .find(|(_, pins)| pins.paths().any(|p| p == f))
                            .map(|(who, _)| format!(" (run by {who})"))
                            .unwrap_or_default();
                        format!("{}{by}", f.display())
                    })
                    .collect();
                files_changed = format!(
                    "accepted, but what it launches changed since: {}",
                    shown.join(", ")
                );
                files_changed.as_str()
            }
            ReviewStatus::Changed => "changed since you accepted it",
            _ => "not accepted yet",
        };
        format!(
            "project config {} is {why} and would change this session: {}. Review the file; \
             to accept it run `interpreter accept-project-config {}`, or remove the file",
            self.shown_path(),
            self.changes.join("; "),
            self.project_dir().display()
        )
    }
}

pub(crate) fn sha256_hex(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

fn accepted_path(home: &Path) -> PathBuf {
    home.join(ACCEPTED_FILE)
}

/// Prefix of a record key that holds a path's bytes in hex (a path that is not UTF-8).
const BYTES_KEY: &str = "bytes:";

/// The record's key for `path`: exactly its bytes. A UTF-8 path is its own key (as records
/// have always been written); any other is `bytes:` and its bytes in hex, never its displayed
/// form, where `u\xff` and `u\xfe` both read `u\u{FFFD}`. A UTF-8 path containing U+FFFD is
/// written as bytes too, so a record made by an older version for a non-UTF-8 path (keyed by
/// its displayed form) matches nothing and is asked again.
fn key_of(path: &Path) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        match path.to_str() {
            Some(s) if !s.contains(char::REPLACEMENT_CHARACTER) => s.to_string(),
            _ => format!("{BYTES_KEY}{}", hex::encode(path.as_os_str().as_bytes())),
        }
    }
    #[cfg(not(unix))]
    {
        path.display().to_string()
    }
}

/// The path a record key names (see [`key_of`]).
fn path_of_key(key: &str) -> PathBuf {
    #[cfg(unix)]
    if let Some(bytes) = key
        .strip_prefix(BYTES_KEY)
        .and_then(|h| hex::decode(h).ok())
    {
        use std::os::unix::ffi::OsStringExt;
        return PathBuf::from(std::ffi::OsString::from_vec(bytes));
    }
    PathBuf::from(key)
}

/// What an acceptance recorded: the config's fingerprint and those of the files it launches.
struct AcceptedRecord {
    sha256: String,
    files: BTreeMap<String, String>,
    /// The key of the file the path led to when it was accepted, when a symlink on the way
    /// led elsewhere (`None`: the path was the file itself).
    real: Option<String>,
}

/// The acceptance recorded for `config`, if any. An unreadable record accepts nothing.
fn accepted_record(home: &Path, config: &Path) -> Option<AcceptedRecord> {
    let text = crate::project_file::read_text_capped(
        &accepted_path(home),
        crate::project_file::CONFIG_FILE_MAX_BYTES,
    )
    .ok()?;
    let table: toml::Table = text.parse().ok()?;
    let entry = table.get(&key_of(config))?;
    let real = match entry.get("real") {
        None => None,
        Some(r) => Some(r.as_str()?.to_string()),
    };
    let sha256 = entry.get("sha256")?.as_str()?.to_string();
    let files = match entry.get("files") {
        None => BTreeMap::new(),
        Some(files) => files
            .as_table()?
            .iter()
            .map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
            .collect::<Option<_>>()?,
    };
    Some(AcceptedRecord {
        sha256,
        files,
        real,
    })
}

/// The launched files of `launches` keyed as the record keys them.
fn launched_files(launches: &[(Launcher, LaunchPins)]) -> BTreeMap<String, String> {
    launches
        .iter()
        .flat_map(|(_, pins)| pins.files.iter())
        .map(|f| (key_of(&f.path), f.sha256.clone()))
        .collect()
}

/// Record that the user accepted `review`'s file with the content that was reviewed.
pub fn accept(home: &Path, review: &ProjectConfigReview) -> Result<(), ConfigError> {
    let path = accepted_path(home);
    let io_err = |source| ConfigError::Read {
        path: path.clone(),
        source,
    };
    let _lock = crate::edit::lock(&path).map_err(io_err)?;
    let text = crate::edit::read_or_empty(&path).map_err(io_err)?;
    let mut doc: toml_edit::DocumentMut =
        text.parse()
            .map_err(|e: toml_edit::TomlError| ConfigError::Parse {
                path: path.clone(),
                message: e.to_string().trim().replace('\n', " "),
            })?;
    if doc.is_empty() {
        doc.decor_mut().set_prefix(
            "# Project config files you accepted (`interpreter accept-project-config`).\n\
             # A file whose content changes has to be accepted again.\n",
        );
    }
    let mut entry = toml_edit::Table::new();
    entry.insert("sha256", toml_edit::value(review.sha256.clone()));
    if let Some(real) = &review.real_path {
        entry.insert("real", toml_edit::value(key_of(real)));
    }
    let files = launched_files(&review.launches);
    if !files.is_empty() {
        let mut t = toml_edit::InlineTable::new();
        for (path, sha) in files {
            t.insert(&path, sha.into());
        }
        entry.insert("files", toml_edit::value(t));
    }
    doc.insert(&key_of(&review.path), toml_edit::Item::Table(entry));
    crate::edit::write_atomically(&path, &doc.to_string()).map_err(io_err)
}

/// Whether the layer at `config` (leading to `real`, when a symlink on the way leads
/// elsewhere), with content `sha256` launching `launches`, was accepted as it is; for
/// `Changed` because of launched files only, which files.
pub(crate) fn status(
    home: &Path,
    config: &Path,
    real: Option<&Path>,
    sha256: &str,
    launches: &[(Launcher, LaunchPins)],
) -> (ReviewStatus, Vec<PathBuf>) {
    let Some(record) = accepted_record(home, config) else {
        return (ReviewStatus::New, Vec::new());
    };
    // The same path leading to another file is another file: accepted anew.
    if record.sha256 != sha256 || record.real != real.map(key_of) {
        return (ReviewStatus::Changed, Vec::new());
    }
    let now = launched_files(launches);
    if now == record.files {
        return (ReviewStatus::Accepted, Vec::new());
    }
    // The same config, but what it launches is not what was accepted: name the files.
    let mut changed: Vec<PathBuf> = now
        .iter()
        .filter(|(path, sha)| record.files.get(*path) != Some(sha))
        .map(|(path, _)| path_of_key(path))
        .collect();
    changed.extend(
        record
            .files
            .keys()
            .filter(|path| !now.contains_key(*path))
            .map(|path| path_of_key(path)),
    );
    (ReviewStatus::Changed, changed)
}

/// The programs the layer launches and the files they are pinned to: every enabled stdio MCP
/// server that `with` has and `without` does not have as it is, and `notify` when it differs.
/// `without` is `None` when the session cannot be typed without the layer: then every one of
/// them is the layer's.
pub(crate) fn launches(
    without: Option<&Config>,
    with: &Config,
    project_dir: &Path,
) -> Result<Vec<(Launcher, LaunchPins)>, ConfigError> {
    let mut out = Vec::new();
    let unpinnable = |who: &Launcher, e: crate::project_file::ProjectFileError| {
        ConfigError::Other(format!(
            "the project config in {} runs a file with {who} that cannot be checked before each \
             launch: {e}; keep the programs it runs small, or run them from outside the project",
            project_dir.display()
        ))
    };
    for (name, server) in &with.mcp_servers {
        let crate::mcp::McpServerTransportConfig::Stdio {
            command, args, cwd, ..
        } = &server.transport
        else {
            continue;
        };
        if !server.enabled || without.is_some_and(|w| w.mcp_servers.get(name) == Some(server)) {
            continue;
        }
        let who = Launcher::McpServer(name.clone());
        let mut argv = vec![command.clone()];
        argv.extend(args.iter().cloned());
        let base = cwd
            .as_ref()
            .map(|d| with.cwd.join(d))
            .unwrap_or_else(|| with.cwd.clone());
        let pins =
            crate::launch_pins::pin(&argv, &base, project_dir).map_err(|e| unpinnable(&who, e))?;
        out.push((who, pins));
    }
    if let Some(argv) = with.notify.as_ref().filter(|a| !a.is_empty())
        && without.is_none_or(|w| w.notify != with.notify)
    {
        let pins = crate::launch_pins::pin(argv, &with.cwd, project_dir)
            .map_err(|e| unpinnable(&Launcher::Notify, e))?;
        out.push((Launcher::Notify, pins));
    }
    // Every hook of the layer: `without` has none of them.
    for hook in with.hooks.from_project() {
        let who = Launcher::Hook(hook.key.clone());
        let pins = crate::launch_pins::pin(&hook.argv(), &with.cwd, project_dir)
            .map_err(|e| unpinnable(&who, e))?;
        out.push((who, pins));
    }
    Ok(out)
}

/// How much a policy lets commands do, for "is this wider" (higher: more).
fn approval_rank(a: AskForApproval) -> u8 {
    match a {
        AskForApproval::Untrusted => 0,
        AskForApproval::OnFailure | AskForApproval::OnRequest => 1,
        AskForApproval::Never => 2,
    }
}

fn sandbox_widens(without: &Config, with: &Config) -> bool {
    use SandboxPolicy::*;
    let rank = |p: &SandboxPolicy| match p {
        ReadOnly => 0,
        WorkspaceWrite { .. } => 1,
        DangerFullAccess => 2,
    };
    let (a, b) = (&without.sandbox_policy, &with.sandbox_policy);
    if rank(b) != rank(a) {
        return rank(b) > rank(a);
    }
    match (a, b) {
        (
            WorkspaceWrite {
                writable_roots: ra,
                network_access: na,
                exclude_tmpdir_env_var: ta,
                exclude_slash_tmp: sa,
            },
            WorkspaceWrite {
                writable_roots: rb,
                network_access: nb,
                exclude_tmpdir_env_var: tb,
                exclude_slash_tmp: sb,
            },
        ) => {
            rb.iter().any(|r| !ra.contains(r))
                || (*nb && !*na)
                || (*ta && !*tb)
                || (*sa && !*sb)
                || (with.allow_git_writes && !without.allow_git_writes)
        }
        _ => false,
    }
}

/// What the project layer widens, comparing the session typed without it and with it.
pub(crate) fn widening(without: &Config, with: &Config) -> Vec<String> {
    let mut out = Vec::new();
    if sandbox_widens(without, with) {
        out.push(format!(
            "sandbox {} instead of {}",
            describe_sandbox(with),
            describe_sandbox(without)
        ));
    }
    if approval_rank(with.approval_policy) > approval_rank(without.approval_policy) {
        out.push(format!(
            "approval policy {} instead of {}",
            with.approval_policy, without.approval_policy
        ));
    }
    for (name, server) in &with.mcp_servers {
        if !server.enabled {
            continue;
        }
        let what = match &server.transport {
            crate::mcp::McpServerTransportConfig::Stdio { command, args, .. } => {
                let mut argv = vec![command.clone()];
                argv.extend(args.iter().cloned());
                format!("runs `{}` unsandboxed", argv.join(" "))
            }
            crate::mcp::McpServerTransportConfig::StreamableHttp { url, .. } => {
                format!("at {url}")
            }
        };
        match without.mcp_servers.get(name) {
            None => out.push(format!("adds MCP server `{name}` ({what})")),
            Some(before) if before != server => {
                out.push(format!("changes MCP server `{name}` ({what})"))
            }
            Some(_) => {}
        }
    }
    if with.notify.is_some() && with.notify != without.notify {
        out.push(format!(
            "runs notify program `{}` after each turn",
            with.notify.as_deref().unwrap_or_default().join(" ")
        ));
    }
    for hook in with.hooks.from_project() {
        out.push(format!(
            "runs {} outside the sandbox{}",
            hook.describe(),
            hook.matcher
                .as_ref()
                .map(|m| format!(" (tools matching `{}`)", m.pattern()))
                .unwrap_or_default()
        ));
    }
    out.extend(environment_widening(
        &without.shell_environment_policy,
        &with.shell_environment_policy,
    ));
    if with.history_persistence == crate::HistoryPersistence::SaveAll
        && without.history_persistence == crate::HistoryPersistence::None
    {
        out.push("saves the prompts you type to history.jsonl (your config says none)".into());
    }
    for (id, provider) in &with.model_providers {
        if *id == with.model_provider_id || without.model_providers.get(id) == Some(provider) {
            continue;
        }
        let key = provider
            .env_key
            .as_deref()
            .map(|k| format!(" with the key in ${k}"))
            .unwrap_or_default();
        out.push(format!(
            "defines model provider `{id}` at {}{key} (model lists ask it)",
            provider
                .base_url
                .as_deref()
                .unwrap_or("its default endpoint")
        ));
    }
    if with.model_provider != without.model_provider {
        let key = with
            .model_provider
            .env_key
            .as_deref()
            .map(|k| format!(" with the key in ${k}"))
            .unwrap_or_default();
        out.push(format!(
            "sends requests to {}{key}",
            with.model_provider
                .base_url
                .as_deref()
                .unwrap_or("the provider's default endpoint")
        ));
    }
    out
}

/// What a project's `[shell_environment_policy]` lets commands see (or sets for them) that
/// the policy without it does not: more inherited variables, the secret-looking names, an
/// exclusion lifted, an `include_only` widened, variables set (`PATH`, `LD_PRELOAD`… change
/// what commands run, and `notify` and approved unsandboxed commands get them too).
fn environment_widening(
    without: &crate::ShellEnvironmentPolicy,
    with: &crate::ShellEnvironmentPolicy,
) -> Vec<String> {
    use crate::ShellEnvironmentInherit as Inherit;
    let rank = |i: Inherit| match i {
        Inherit::None => 0,
        Inherit::Core => 1,
        Inherit::All => 2,
    };
    let name = |i: Inherit| match i {
        Inherit::None => "none",
        Inherit::Core => "core",
        Inherit::All => "all",
    };
    let mut out = Vec::new();
    if rank(with.inherit) > rank(without.inherit) {
        out.push(format!(
            "commands inherit {} environment variables instead of {}",
            name(with.inherit),
            name(without.inherit)
        ));
    }
    if with.ignore_default_excludes && !without.ignore_default_excludes {
        out.push(
            "commands see variables whose names contain KEY, SECRET or TOKEN (ignore_default_excludes)"
                .into(),
        );
    }
    let patterns = |v: &[crate::shell_env::EnvPattern]| -> Vec<String> {
        v.iter().map(|p| p.as_str().to_string()).collect()
    };
    let (ex_without, ex_with) = (patterns(&without.exclude), patterns(&with.exclude));
    let lifted: Vec<&String> = ex_without.iter().filter(|p| !ex_with.contains(p)).collect();
    if !lifted.is_empty() {
        let shown: Vec<&str> = lifted.iter().map(|s| s.as_str()).collect();
        out.push(format!(
            "commands see variables excluded before: {}",
            shown.join(", ")
        ));
    }
    let (only_without, only_with) = (
        patterns(&without.include_only),
        patterns(&with.include_only),
    );
    if !only_without.is_empty()
        && (only_with.is_empty() || only_with.iter().any(|p| !only_without.contains(p)))
    {
        out.push("commands see variables outside your include_only list".into());
    }
    let set: Vec<&str> = with
        .set
        .iter()
        .filter(|(k, v)| without.set.get(*k) != Some(*v))
        .map(|(k, _)| k.as_str())
        .collect();
    if !set.is_empty() {
        out.push(format!("sets {} for commands", set.join(", ")));
    }
    out
}

fn describe_sandbox(c: &Config) -> String {
    match &c.sandbox_policy {
        SandboxPolicy::WorkspaceWrite {
            writable_roots,
            network_access,
            ..
        } => {
            let mut s = "workspace-write".to_string();
            if *network_access {
                s.push_str(" with network");
            }
            if !writable_roots.is_empty() {
                let roots: Vec<String> = writable_roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect();
                s.push_str(&format!(" (also writes {})", roots.join(", ")));
            }
            if c.allow_git_writes {
                s.push_str(" (writes .git)");
            }
            s
        }
        other => other.mode().to_string(),
    }
}

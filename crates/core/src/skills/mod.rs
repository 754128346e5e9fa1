//! Skills: folders with a `SKILL.md` (front matter `name` and `description`, then
//! instructions; scripts and other files beside it), the format Codex and Claude Code read.
//!
//! Where they are found, first name wins: a trusted project's `.openinterpreter/skills/`,
//! then `$OPENINTERPRETER_HOME/skills/`, then — when `[skills] other_agents` says so —
//! `~/.codex/skills` (`$CODEX_HOME/skills`) and `~/.claude/skills`. A skill is a folder
//! directly in one of these, or one level deeper (a folder of skills).
//!
//! The model sees only names and descriptions, within `[skills] max_prompt_tokens`
//! (`prompt`), and loads a skill's instructions when it decides to, with the `load_skill`
//! tool every harness profile offers (`tool`). A skill's scripts are run by the model as
//! any command: the sandbox and approvals apply.
//!
//! Every `SKILL.md` is read with the bounded reader: a regular file of at most
//! [`SKILL_MAX_BYTES`], really inside its skills folder (a symlink out of it is refused,
//! with the reason), never inside the agent's home unless the folder is. Everything here
//! blocks except [`discover_async`].

pub(crate) mod preload;
pub(crate) mod prompt;
pub(crate) mod refresh;
pub(crate) mod tool;

use crate::custom_prompts::{front_matter_field, front_matter_fields, split_front_matter};
use oi_config::project_file::{Within, read_text_capped_in};
use oi_config::{Config, SkillSelector};
use std::path::{Path, PathBuf};

/// The largest `SKILL.md` read.
pub const SKILL_MAX_BYTES: u64 = 64 * 1024;
/// Skill folders looked at, at most, per skills folder.
const MAX_SKILLS_PER_ROOT: usize = 200;
/// Codex's limits on the front matter's fields.
const MAX_NAME_CHARS: usize = 64;
const MAX_DESCRIPTION_CHARS: usize = 1024;
/// The file that makes a folder a skill.
pub const SKILL_FILE: &str = "SKILL.md";

/// Where a skill was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkillScope {
    /// The trusted project's `.openinterpreter/skills/`.
    Repo,
    /// `$OPENINTERPRETER_HOME/skills/`.
    User,
    /// `~/.codex/skills` (opted in).
    Codex,
    /// `~/.claude/skills` (opted in).
    Claude,
}

impl SkillScope {
    /// How front ends name it: `repo`, `user`, `codex`, `claude`.
    pub fn as_str(self) -> &'static str {
        match self {
            SkillScope::Repo => "repo",
            SkillScope::User => "user",
            SkillScope::Codex => "codex",
            SkillScope::Claude => "claude",
        }
    }
}

/// One skill found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skill {
    /// The front matter's `name`.
    pub name: String,
    /// The front matter's `description`: when to use the skill.
    pub description: String,
    /// Codex's `metadata.short-description`, when given.
    pub short_description: Option<String>,
    /// Its `SKILL.md`.
    pub path: PathBuf,
    /// The skill's folder (its scripts and files are relative to it).
    pub dir: PathBuf,
    /// Where it was found.
    pub scope: SkillScope,
    /// MCP servers the skill needs (front matter `mcp-servers`, or `mcp_servers`).
    pub mcp_servers: Vec<String>,
    /// `false` when a `[[skills.config]]` entry turned it off.
    pub enabled: bool,
}

/// A `SKILL.md` that was not used, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkillError {
    /// The `SKILL.md` (or the skills folder).
    pub path: PathBuf,
    /// Why it was not used.
    pub message: String,
}

/// Why a `SKILL.md` cannot be used; its text is the reason shown.
#[derive(Debug, thiserror::Error)]
pub enum SkillFileError {
    /// Not read: missing, not a regular file, too large, a link out of its folder.
    #[error(transparent)]
    Read(#[from] oi_config::project_file::ProjectFileError),
    /// No `---` front matter at the top.
    #[error(
        "has no front matter: start the file with `---`, a `name:` and a `description:` line, and `---`"
    )]
    NoFrontMatter,
    /// A required field (`name`, `description`) is missing.
    #[error("has no `{0}` in its front matter")]
    Missing(&'static str),
    /// The name is too long or not one line.
    #[error("its `name` must be one line of at most {MAX_NAME_CHARS} characters")]
    BadName,
    /// The skill's file is no longer under any skills folder of the config.
    #[error("{0} is no longer in a skills folder")]
    Moved(PathBuf),
    /// The blocking task reading it stopped.
    #[error("reading the skill stopped: {0}")]
    Stopped(String),
}

/// What discovery found: the skills (first name wins; disabled ones included, marked), the
/// files it could not use, and the folders it read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkillsFound {
    /// The skills, in discovery order.
    pub skills: Vec<Skill>,
    /// The `SKILL.md` files not used.
    pub errors: Vec<SkillError>,
    /// The skills folders that exist, in the order they were read.
    pub roots: Vec<(SkillScope, PathBuf)>,
}

impl SkillsFound {
    /// The skills the model may use.
    pub fn enabled(&self) -> impl Iterator<Item = &Skill> {
        self.skills.iter().filter(|s| s.enabled)
    }

    /// The enabled skill called `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.enabled().find(|s| s.name == name)
    }
}

/// Where other agents keep their files: the user's home (`HOME`) and `CODEX_HOME`.
#[derive(Clone, Debug, Default)]
pub(crate) struct AgentHomes {
    pub user: Option<PathBuf>,
    pub codex: Option<PathBuf>,
}

impl AgentHomes {
    fn from_env() -> Self {
        Self {
            user: std::env::var_os("HOME").map(PathBuf::from),
            codex: std::env::var_os("CODEX_HOME").map(PathBuf::from),
        }
    }
}

/// The skills folders of `config` (its home, cwd and `[skills]`), most specific first,
/// with the folder each skill's files must stay inside. Blocking (reads the user config
/// to decide trust).
fn roots(config: &Config, homes: &AgentHomes) -> Vec<(SkillScope, PathBuf, PathBuf)> {
    let mut out = Vec::new();
    match oi_config::trusted_project_folder(&config.home, &config.cwd, "skills") {
        Ok(Some((dir, project_root))) => out.push((SkillScope::Repo, dir, project_root)),
        Ok(None) => {}
        Err(e) => tracing::warn!("cannot decide whether the project's skills are trusted: {e}"),
    }
    let own = config.home.join("skills");
    out.push((SkillScope::User, own.clone(), own));
    let user_home = homes.user.as_ref();
    for agent in &config.skills.other_agents {
        let dir = match agent.as_str() {
            "codex" => homes
                .codex
                .clone()
                .or_else(|| user_home.map(|h| h.join(".codex")))
                .map(|d| (SkillScope::Codex, d.join("skills"))),
            "claude" => user_home.map(|h| (SkillScope::Claude, h.join(".claude").join("skills"))),
            _ => None,
        };
        if let Some((scope, dir)) = dir {
            out.push((scope, dir.clone(), dir));
        }
    }
    out
}

/// Finds the skills `config` sees. Blocking: see [`discover_async`].
pub fn discover(config: &Config) -> SkillsFound {
    discover_in(config, &AgentHomes::from_env())
}

/// [`discover`] with other agents' folders under `homes`.
pub(crate) fn discover_in(config: &Config, homes: &AgentHomes) -> SkillsFound {
    let mut found = SkillsFound::default();
    for (scope, dir, within) in roots(config, homes) {
        if !dir.is_dir() {
            continue;
        }
        found.roots.push((scope, dir.clone()));
        for path in skill_files(&dir, &mut found.errors) {
            let read = read_skill(&path, scope, &within, &config.home);
            match read {
                Ok(mut skill) => {
                    if found.skills.iter().any(|s| s.name == skill.name) {
                        tracing::debug!(
                            "skill `{}` at {} is hidden by an earlier one of that name",
                            skill.name,
                            path.display()
                        );
                        continue;
                    }
                    skill.enabled = !is_disabled(&skill, &config.skills.disabled);
                    found.skills.push(skill);
                }
                Err(e) => found.errors.push(SkillError {
                    path,
                    message: e.to_string(),
                }),
            }
        }
    }
    found
}

/// [`discover`] on the blocking pool.
pub async fn discover_async(config: Config) -> SkillsFound {
    tokio::task::spawn_blocking(move || discover(&config))
        .await
        .unwrap_or_else(|e| {
            tracing::warn!("looking for skills stopped: {e}");
            SkillsFound::default()
        })
}

fn is_disabled(skill: &Skill, disabled: &[SkillSelector]) -> bool {
    disabled.iter().any(|d| match d {
        SkillSelector::Name(n) => *n == skill.name,
        SkillSelector::Path(p) => *p == skill.path || *p == skill.dir,
    })
}

/// The `SKILL.md` files of `root`: in each folder directly in it, else in each folder one
/// level deeper; in name order, at most [`MAX_SKILLS_PER_ROOT`].
fn skill_files(root: &Path, errors: &mut Vec<SkillError>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in sorted_dirs(root) {
        let file = dir.join(SKILL_FILE);
        if file.symlink_metadata().is_ok() {
            out.push(file);
            continue;
        }
        // A folder of skills (`skills/<group>/<skill>/SKILL.md`).
        for inner in sorted_dirs(&dir) {
            let file = inner.join(SKILL_FILE);
            if file.symlink_metadata().is_ok() {
                out.push(file);
            }
        }
    }
    if out.len() > MAX_SKILLS_PER_ROOT {
        errors.push(SkillError {
            path: root.to_path_buf(),
            message: format!(
                "{} skills found; only the first {MAX_SKILLS_PER_ROOT} by name are used",
                out.len()
            ),
        });
        out.truncate(MAX_SKILLS_PER_ROOT);
    }
    out
}

/// The folders in `dir` (a symlink to a folder counts; where it leads is checked when its
/// `SKILL.md` is read), hidden ones left out, in name order.
fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .take(MAX_SKILLS_PER_ROOT * 4)
        .collect();
    out.sort();
    out
}

/// Reads and checks one `SKILL.md`.
fn read_skill(
    path: &Path,
    scope: SkillScope,
    within: &Path,
    home: &Path,
) -> Result<Skill, SkillFileError> {
    let bounds = Within {
        root: within,
        excluded: Some(home),
    };
    let text = read_text_capped_in(path, SKILL_MAX_BYTES, Some(&bounds))?;
    let (front, _) = split_front_matter(&text);
    if front.is_empty() {
        return Err(SkillFileError::NoFrontMatter);
    }
    let fields = front_matter_fields(front);
    let field = |keys: &[&str]| front_matter_field(&fields, keys);
    let name = field(&["name"]).ok_or(SkillFileError::Missing("name"))?;
    if name.chars().count() > MAX_NAME_CHARS || name.chars().any(char::is_control) {
        return Err(SkillFileError::BadName);
    }
    let description = field(&["description"]).ok_or(SkillFileError::Missing("description"))?;
    let description: String = description.chars().take(MAX_DESCRIPTION_CHARS).collect();
    let mut mcp_servers: Vec<String> = field(&["mcp-servers", "mcp_servers"])
        .map(|list| {
            list.trim_matches(['[', ']'])
                .split(',')
                .map(|s| s.trim().trim_matches(['"', '\'']).to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let dir = path.parent().unwrap_or(path);
    let codex = codex_metadata(dir, &bounds);
    for server in codex.mcp_servers {
        if !mcp_servers.contains(&server) {
            mcp_servers.push(server);
        }
    }
    Ok(Skill {
        name,
        description,
        short_description: field(&["short-description", "short_description"])
            .or(codex.short_description),
        path: path.to_path_buf(),
        dir: path.parent().unwrap_or(path).to_path_buf(),
        scope,
        mcp_servers,
        enabled: true,
    })
}

/// The largest `agents/openai.yaml` read.
const OPENAI_YAML_MAX_BYTES: u64 = 16 * 1024;

/// What a Codex skill's `agents/openai.yaml` adds: the MCP servers of its
/// `dependencies.tools` (`- type: mcp` items' `value`) and `interface.short_description`.
#[derive(Default)]
struct CodexMetadata {
    mcp_servers: Vec<String>,
    short_description: Option<String>,
}

/// Reads `dir/agents/openai.yaml` if there is one, with the bounds of the skill itself. A
/// line reader, not YAML: it knows the few keys used here, and an unreadable file adds
/// nothing (the skill is still usable).
fn codex_metadata(dir: &Path, bounds: &Within<'_>) -> CodexMetadata {
    let path = dir.join("agents").join("openai.yaml");
    if path.symlink_metadata().is_err() {
        return CodexMetadata::default();
    }
    let text = match read_text_capped_in(&path, OPENAI_YAML_MAX_BYTES, Some(bounds)) {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!("ignoring {}: {e}", path.display());
            return CodexMetadata::default();
        }
    };
    let mut out = CodexMetadata::default();
    let mut item: Vec<(String, String)> = Vec::new();
    let flush = |item: &mut Vec<(String, String)>, out: &mut CodexMetadata| {
        let get = |k: &str| {
            item.iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        };
        if get("type").as_deref() == Some("mcp")
            && let Some(server) = get("value").filter(|v| !v.is_empty())
            && !out.mcp_servers.contains(&server)
        {
            out.mcp_servers.push(server);
        }
        item.clear();
    };
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(rest) = trimmed.strip_prefix("- ") {
            flush(&mut item, &mut out);
            if let Some((k, v)) = rest.split_once(':') {
                item.push((k.trim().to_string(), unquote_yaml(v)));
            }
        } else if let Some((k, v)) = trimmed.split_once(':') {
            let k = k.trim();
            if k == "short_description" && out.short_description.is_none() {
                out.short_description = Some(unquote_yaml(v)).filter(|v| !v.is_empty());
            }
            item.push((k.to_string(), unquote_yaml(v)));
        }
    }
    flush(&mut item, &mut out);
    out
}

fn unquote_yaml(v: &str) -> String {
    v.trim().trim_matches(['"', '\'']).to_string()
}

/// The instructions of `skill` (its `SKILL.md` without the front matter), read again now:
/// the file may have changed since it was listed.
pub fn read_body(skill: &Skill, config: &Config) -> Result<String, SkillFileError> {
    let within = roots(config, &AgentHomes::from_env())
        .into_iter()
        .find(|(scope, dir, _)| *scope == skill.scope && skill.path.starts_with(dir))
        .map(|(_, _, within)| within)
        .ok_or_else(|| SkillFileError::Moved(skill.path.clone()))?;
    let bounds = Within {
        root: &within,
        excluded: Some(&config.home),
    };
    let text = read_text_capped_in(&skill.path, SKILL_MAX_BYTES, Some(&bounds))?;
    Ok(split_front_matter(&text).1.trim().to_string())
}

/// The MCP servers `skill` names that `config` does not configure (or disables).
pub fn missing_mcp_servers(skill: &Skill, config: &Config) -> Vec<String> {
    skill
        .mcp_servers
        .iter()
        .filter(|name| {
            !config
                .mcp_servers
                .get(name.as_str())
                .is_some_and(|s| s.enabled)
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests;

//! Finding and reading the config files and layering them: user, trusted project, profile,
//! `-c` overrides. The merged table is typed by [`crate::resolve`].

use crate::ConfigError;
use crate::layer::ConfigLayer;
use crate::overrides::apply_dotted;
use crate::resolve::{THREAD_STORE_HINT, TypedInputs, build_config};
use crate::schema::{NonNegative, Table, ThreadStoreToml};
use crate::typed::{ConfigLoadOptions, LoadedConfig};
use crate::unknown_keys::{validate_cli_key, warn_unknown_in_file};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The config file's name, in the home directory (the user config) and in a project's
/// `.openinterpreter/` folder. Named here only; others call [`user_config_path`].
const CONFIG_FILE: &str = "config.toml";

/// `home/config.toml`: the user config, which `trust`, `config/value/write` and
/// `mcp add/remove` edit.
pub fn user_config_path(home: &Path) -> PathBuf {
    home.join(CONFIG_FILE)
}

/// `$OPENINTERPRETER_HOME`, else `~/.openinterpreter`.
pub fn find_home() -> Result<PathBuf, ConfigError> {
    if let Ok(h) = std::env::var("OPENINTERPRETER_HOME")
        && !h.trim().is_empty()
    {
        return Ok(PathBuf::from(h));
    }
    dirs::home_dir()
        .map(|h| h.join(".openinterpreter"))
        .ok_or_else(|| {
            ConfigError::Other(
                "cannot find your home directory; set OPENINTERPRETER_HOME to a writable directory"
                    .into(),
            )
        })
}

/// The folder of prompt files, in the home directory and in a project's `.openinterpreter/`.
const PROMPTS_DIR: &str = "prompts";

/// Where prompt files (`*.md`) are read from, most specific first: the nearest
/// `.openinterpreter/prompts/` at or above `cwd` when `cwd` is in a folder the user trusted
/// (and that prompt folder is inside the trusted one), then `home/prompts/`. Only folders
/// that exist are listed. It reads the user config (with the bounded reader) to decide
/// trust: call it off async workers. A project's prompts are text a repository chose, so
/// an untrusted project contributes none.
pub fn prompt_folders(home: &Path, cwd: &Path) -> Result<Vec<PathBuf>, ConfigError> {
    let mut folders = Vec::new();
    folders.extend(trusted_project_folder(home, cwd, PROMPTS_DIR)?.map(|(dir, _)| dir));
    let own = home.join(PROMPTS_DIR);
    if own.is_dir() && !folders.contains(&own) {
        folders.push(own);
    }
    Ok(folders)
}

/// The nearest `.openinterpreter/<name>/` folder at or above `cwd`, when `cwd` is in a folder
/// the user trusted and that folder is inside the trusted one, with the trusted root (what
/// the folder's files must stay inside). Neither the `.openinterpreter` folder nor `<name>`
/// may be a symlink (they may lead anywhere). `None` for an untrusted project or when there
/// is no such folder. Reads the user config: call it off async workers.
pub fn trusted_project_folder(
    home: &Path,
    cwd: &Path,
    name: &str,
) -> Result<Option<(PathBuf, PathBuf)>, ConfigError> {
    let user = read_layer(&user_config_path(home), None)?
        .map(|(t, _)| t)
        .unwrap_or_default();
    let crate::Trust::Trusted(root) = crate::trust_of(&user, cwd) else {
        return Ok(None);
    };
    let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
    let found = cwd
        .ancestors()
        .take_while(|dir| dir.starts_with(&root))
        .map(|dir| dir.join(".openinterpreter"))
        // A symlinked `.openinterpreter` is no config folder (it may lead anywhere).
        .filter(|dir| !dir.is_symlink())
        .map(|dir| dir.join(name))
        .find(|dir| dir.is_dir() && !dir.is_symlink());
    Ok(found.map(|dir| (dir, root)))
}

/// Read one config file with the bounded reader (a FIFO or device is refused, not waited on);
/// a project's config must really be inside its `.openinterpreter/` folder (`within`).
fn read_layer(
    path: &Path,
    within: Option<&crate::project_file::Within<'_>>,
) -> Result<Option<(toml::Table, String)>, ConfigError> {
    let text = match crate::project_file::read_text_capped_in(
        path,
        crate::project_file::CONFIG_FILE_MAX_BYTES,
        within,
    ) {
        Ok(t) => t,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(ConfigError::File(e)),
    };
    let table = parse_layer(path, &text)?;
    Ok(Some((table, text)))
}

/// One config file's text as a table; errors name `path`.
fn parse_layer(path: &Path, text: &str) -> Result<toml::Table, ConfigError> {
    text.parse::<toml::Table>().map_err(|e| ConfigError::Parse {
        path: path.to_path_buf(),
        message: e.to_string().trim().replace('\n', " ").replace("  ", " "),
    })
}

/// Checks `text` as `home`'s user config would be read, touching no file: TOML syntax, the
/// size bound, every value's type and range, as [`load_config`] would find them with no
/// project layer and no overrides. `Ok` carries the warnings the file would give (unknown
/// keys among them). What a config editor runs on the would-be file before writing it.
pub fn check_user_config(home: &Path, text: &str) -> Result<Vec<String>, ConfigError> {
    let user_path = user_config_path(home);
    let max = crate::project_file::CONFIG_FILE_MAX_BYTES;
    if text.len() as u64 > max {
        return Err(ConfigError::File(
            crate::project_file::ProjectFileError::TooLarge {
                path: user_path.display().to_string(),
                size: text.len() as u64,
                max,
            },
        ));
    }
    let table = parse_layer(&user_path, text)?;
    let mut warnings = Vec::new();
    warn_unknown_in_file(
        &table,
        text,
        &user_path.display().to_string(),
        &mut warnings,
    );
    let layers = [ConfigLayer {
        name: "user",
        path: Some(user_path.clone()),
        value: table.clone(),
    }];
    let opts = ConfigLoadOptions {
        home: Some(home.to_path_buf()),
        cli_overrides: Vec::new(),
        overrides: Default::default(),
    };
    let ctx = Typing {
        opts: &opts,
        home,
        // Nothing in typing depends on the session's folder but relative paths; the home
        // is a folder that exists.
        cwd: home,
        user_path: &user_path,
        flags: &toml::Table::new(),
    };
    ctx.typed(&table, None, &layers, &mut warnings)?;
    Ok(warnings)
}

/// Merge `over` into `base`, recursing into tables.
pub(crate) fn deep_merge(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => deep_merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// The project config folder's name.
const PROJECT_CONFIG_DIR: &str = ".openinterpreter";

/// What the search for a project config found.
enum FoundConfig {
    /// `<dir>/.openinterpreter/config.toml`, in a real folder.
    At(PathBuf),
    /// A config file behind a `.openinterpreter` that is a symlink (to `target`): not a
    /// config folder. The search stops there: no config further up is used in its place.
    Linked { config: PathBuf, target: PathBuf },
}

/// The nearest `.openinterpreter/config.toml` at or above `cwd`, excluding the user config.
fn find_project_config(cwd: &Path, user_config: &Path) -> Option<FoundConfig> {
    for dir in cwd.ancestors() {
        let folder = dir.join(PROJECT_CONFIG_DIR);
        let candidate = folder.join(CONFIG_FILE);
        // Anything at that name counts (a FIFO too): the reader refuses what is not a
        // regular file, rather than the layer silently disappearing.
        if candidate == user_config || !candidate.exists() {
            continue;
        }
        // A symlinked folder leads elsewhere (`sub/.openinterpreter -> /tmp/x`): whatever is
        // there was not written in the project, and the sandbox does not guard it.
        if std::fs::symlink_metadata(&folder).is_ok_and(|m| m.file_type().is_symlink()) {
            let target = folder.canonicalize().unwrap_or_else(|_| folder.clone());
            return Some(FoundConfig::Linked {
                config: candidate,
                target,
            });
        }
        return Some(FoundConfig::At(candidate));
    }
    None
}

/// The warning for a config behind a symlinked `.openinterpreter`.
fn linked_folder_notice(config: &Path, target: &Path) -> String {
    let folder = config.parent().unwrap_or(config);
    format!(
        "ignoring project config {}: {} is a symlink (to {}), not a folder of the project; a \
         project config is read only from a real .openinterpreter folder, so replace the link \
         with one",
        config.display(),
        folder.display(),
        target.display()
    )
}

/// Load the effective configuration.
pub fn load_config(opts: ConfigLoadOptions) -> Result<LoadedConfig, ConfigError> {
    let home = match opts.home.clone() {
        Some(h) => h,
        None => find_home()?,
    };
    let mut warnings = Vec::new();
    let cwd = session_cwd(opts.overrides.cwd.as_deref())?;

    let user_path = user_config_path(&home);
    let mut merged = toml::Table::new();
    let mut layers = Vec::new();
    let mut user_table = toml::Table::new();
    if let Some((t, text)) = read_layer(&user_path, None)? {
        user_table = t.clone();
        let origin = user_path.display().to_string();
        warn_unknown_in_file(&t, &text, &origin, &mut warnings);
        deep_merge(&mut merged, &t);
        layers.push(ConfigLayer {
            name: "user",
            path: Some(user_path.clone()),
            value: t,
        });
    }
    let found = match find_project_config(&cwd, &user_path) {
        Some(FoundConfig::At(p)) => Some(p),
        Some(FoundConfig::Linked { config, target }) => {
            warnings.push(linked_folder_notice(&config, &target));
            None
        }
        None => None,
    };
    let (project_path, untrusted_project_config) =
        crate::trust::gate_project_config(found, &user_table);
    if let Some(p) = &untrusted_project_config {
        warnings.push(crate::trust::untrusted_notice(p));
    }
    // The files without the project layer: what a widening project layer is measured against.
    let user_merged = merged.clone();
    let mut project: Option<(PathBuf, toml::Table, String)> = None;
    let project_folder = project_path.as_deref().and_then(Path::parent);
    let within = project_folder.map(|root| crate::project_file::Within {
        root,
        excluded: None,
    });
    if let Some(p) = &project_path
        && let Some((mut t, text)) = read_layer(p, within.as_ref())?
    {
        crate::project_keys::restrict(&mut t, &user_merged, p, &user_path, &mut warnings);
        let origin = p.display().to_string();
        warn_unknown_in_file(&t, &text, &origin, &mut warnings);
        deep_merge(&mut merged, &t);
        layers.push(ConfigLayer {
            name: "project",
            path: Some(p.clone()),
            value: t.clone(),
        });
        project = Some((p.clone(), t, text));
    }

    // -c overrides apply after the files (and after the profile, below).
    let mut flags = toml::Table::new();
    for (k, v) in &opts.cli_overrides {
        validate_cli_key(k)?;
        apply_dotted(&mut flags, k, v.clone());
    }
    if !flags.is_empty() {
        layers.push(ConfigLayer {
            name: "session_flags",
            path: None,
            value: flags.clone(),
        });
    }

    let ctx = Typing {
        opts: &opts,
        home: &home,
        cwd: &cwd,
        user_path: &user_path,
        flags: &flags,
    };
    let mut config = ctx.typed(&merged, project_path.clone(), &layers, &mut warnings)?;
    config.untrusted_project_config = untrusted_project_config.clone();
    let Some((path, table, text)) = project else {
        return Ok(LoadedConfig { config, warnings });
    };

    let project = ProjectLayer { path, table, text };
    let base = WithoutProject {
        merged: &user_merged,
        layers: &layers,
        untrusted_project_config,
    };
    review_project_layer(&ctx, config, project, base, warnings)
}

/// The project layer as read (after its keys were restricted).
struct ProjectLayer {
    path: PathBuf,
    table: toml::Table,
    text: String,
}

/// What the session is without the project layer.
struct WithoutProject<'a> {
    /// The user file and flags, merged.
    merged: &'a toml::Table,
    /// Every layer, the project's included (it is left out here).
    layers: &'a [ConfigLayer],
    untrusted_project_config: Option<PathBuf>,
}

/// A project layer that widens what the session may do applies only once the user accepted
/// it (as it is now); otherwise the session runs without it and says why.
fn review_project_layer(
    ctx: &Typing<'_>,
    mut config: crate::Config,
    project: ProjectLayer,
    base: WithoutProject<'_>,
    mut warnings: Vec<String>,
) -> Result<LoadedConfig, ConfigError> {
    let ProjectLayer { path, table, text } = project;
    let home = ctx.home;
    let untrusted_project_config = base.untrusted_project_config;
    let without_layers: Vec<ConfigLayer> = base
        .layers
        .iter()
        .filter(|l| l.name != "project")
        .cloned()
        .collect();
    let mut scratch = Vec::new();
    let without = ctx.typed(base.merged, None, &without_layers, &mut scratch);
    let changes = match &without {
        Ok(without) => crate::project_consent::widening(without, &config),
        // The session cannot be typed without the layer (it defines the profile in use, say):
        // what it widens cannot be measured, so every widening key it sets counts.
        Err(_) => crate::project_keys::widening_keys(&table),
    };
    if changes.is_empty() {
        return Ok(LoadedConfig { config, warnings });
    }
    let sha256 = crate::project_consent::sha256_hex(&text);
    let real_path = path.canonicalize().ok().filter(|r| *r != path);
    let project_dir = path
        .parent()
        .and_then(Path::parent)
        .unwrap_or(&path)
        .to_path_buf();
    let launches = crate::project_consent::launches(without.as_ref().ok(), &config, &project_dir)?;
    let (status, changed_files) =
        crate::project_consent::status(home, &path, real_path.as_deref(), &sha256, &launches);
    let review = crate::ProjectConfigReview {
        status,
        path,
        real_path,
        sha256,
        changes,
        launches,
        changed_files,
    };
    if review.is_accepted() {
        warnings.push(review.notice());
        pin_launches(&mut config, &review.launches);
        config.project_config_review = Some(review);
        return Ok(LoadedConfig { config, warnings });
    }
    // Not accepted: the session runs without the layer, and says why.
    match without {
        Ok(mut without) => {
            without.untrusted_project_config = untrusted_project_config;
            list_refused_hooks(&mut without, &config, review.status);
            warnings.push(review.refusal());
            without.project_config_review = Some(review);
            Ok(LoadedConfig {
                config: without,
                warnings,
            })
        }
        Err(_) => Err(ConfigError::Other(review.refusal())),
    }
}

/// The hooks of a project layer that was not accepted, added to the session's list as
/// untrusted: shown (v2 `hooks/list`), never run.
fn list_refused_hooks(
    without: &mut crate::Config,
    with: &crate::Config,
    status: crate::ReviewStatus,
) {
    let trust = match status {
        crate::ReviewStatus::Changed => crate::hooks::HookTrust::Modified,
        _ => crate::hooks::HookTrust::Untrusted,
    };
    for hook in with.hooks.from_project() {
        let mut hook = hook.clone();
        hook.trust = trust;
        without.hooks.commands.push(hook);
    }
}

/// Hands each program of an accepted layer the files it is pinned to, so every launch checks
/// them (not only this start).
fn pin_launches(
    config: &mut crate::Config,
    launches: &[(
        crate::project_consent::Launcher,
        crate::launch_pins::LaunchPins,
    )],
) {
    use crate::project_consent::Launcher;
    for (who, pins) in launches {
        match who {
            Launcher::McpServer(name) => {
                if let Some(server) = config.mcp_servers.get_mut(name) {
                    server.launch_pins = Some(pins.clone());
                }
            }
            Launcher::Notify => config.notify_pins = Some(pins.clone()),
            Launcher::Hook(key) => {
                if let Some(hook) = config.hooks.commands.iter_mut().find(|h| h.key == *key) {
                    hook.pins = Some(pins.clone());
                }
            }
        }
    }
}

/// Everything but the merged files that typing a session needs; typed once with the project
/// layer and once without it, to see what the layer changes.
struct Typing<'a> {
    opts: &'a ConfigLoadOptions,
    home: &'a Path,
    cwd: &'a Path,
    user_path: &'a Path,
    flags: &'a toml::Table,
}

impl Typing<'_> {
    fn typed(
        &self,
        merged: &toml::Table,
        project_path: Option<PathBuf>,
        layers: &[ConfigLayer],
        warnings: &mut Vec<String>,
    ) -> Result<crate::Config, ConfigError> {
        // Profile: typed override > -c profile > file `profile`.
        let profile_name = self
            .opts
            .overrides
            .profile
            .clone()
            .or_else(|| {
                self.flags
                    .get("profile")
                    .and_then(|v| v.as_str().map(str::to_string))
            })
            .or_else(|| {
                merged
                    .get("profile")
                    .and_then(|v| v.as_str().map(str::to_string))
            });
        let mut effective = merged.clone();
        let profile = match &profile_name {
            Some(name) => Some(profile_table(merged, name, self.user_path)?),
            None => None,
        };
        if let Some(profile) = &profile {
            deep_merge(&mut effective, profile);
        }
        deep_merge(&mut effective, self.flags);
        let typed = build_config(TypedInputs {
            effective: &effective,
            opts: self.opts,
            home: self.home.to_path_buf(),
            cwd: self.cwd.to_path_buf(),
            user_path: self.user_path.to_path_buf(),
            project_path,
            profile_name: profile_name.clone(),
            warnings,
        });
        match typed {
            Ok(mut config) => {
                config.layers = layers.to_vec();
                config.hooks = crate::hooks::from_layers(layers)?;
                warnings.extend(config.hooks.warnings.iter().cloned());
                Ok(config)
            }
            Err(ConfigError::Invalid {
                origin,
                key,
                message,
            }) => Err(ConfigError::Invalid {
                origin: origin_for(layers, profile_name.as_deref().zip(profile.as_ref()), &key)
                    .unwrap_or(origin),
                key,
                message,
            }),
            Err(e) => Err(e),
        }
    }
}

/// The session's working directory: the front end's `cwd` (relative to the process's),
/// else the process's own, canonicalized.
fn session_cwd(requested: Option<&Path>) -> Result<PathBuf, ConfigError> {
    let process_cwd = std::env::current_dir()
        .map_err(|e| ConfigError::Other(format!("cannot read the current directory: {e}")))?;
    let cwd = match requested {
        Some(c) if c.is_absolute() => c.to_path_buf(),
        Some(c) => process_cwd.join(c),
        None => process_cwd,
    };
    cwd.canonicalize().map_err(|e| {
        ConfigError::Other(format!(
            "working directory {} is not usable: {e}; pass an existing directory with -C/--cd or `cwd`",
            cwd.display()
        ))
    })
}

/// The `[profiles.<name>]` table of the merged files, to layer over them as a table (its
/// types and unknown keys are checked with the rest of the schema, see `schema::ProfileToml`).
fn profile_table(
    merged: &toml::Table,
    name: &str,
    user_path: &Path,
) -> Result<toml::Table, ConfigError> {
    let profiles = merged.get("profiles").and_then(toml::Value::as_table);
    profiles
        .and_then(|p| p.get(name))
        .and_then(toml::Value::as_table)
        .cloned()
        .ok_or_else(|| {
            let known: Vec<String> = profiles
                .map(|t| t.keys().cloned().collect())
                .unwrap_or_default();
            ConfigError::Other(format!(
                "profile `{name}` is not defined; add a [profiles.{name}] table to {} (defined profiles: {})",
                user_path.display(),
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            ))
        })
}

/// Which layer set `key` (the highest-priority one wins), to name it in errors: `-c`
/// overrides, then the active profile (named with the file that holds it), then the project
/// file, then the user file.
fn origin_for(
    layers: &[ConfigLayer],
    profile: Option<(&str, &toml::Table)>,
    key: &str,
) -> Option<String> {
    let file_of = |l: &ConfigLayer| match &l.path {
        Some(p) => p.display().to_string(),
        None => "-c override".to_string(),
    };
    // Highest priority first; the profile sits between `-c` and the files.
    let mut sources: Vec<(String, &toml::Table)> = Vec::new();
    let mut profile = profile;
    for l in layers.iter().rev() {
        if l.path.is_some()
            && let Some((name, table)) = profile.take()
        {
            let holder = layers
                .iter()
                .rev()
                .find(|l| l.path.is_some() && defines(&l.value, &["profiles", name]))
                .map(file_of)
                .unwrap_or_else(|| "config".to_string());
            let name = crate::key_path::dotted(&[name]);
            sources.push((format!("{holder} [profiles.{name}]"), table));
        }
        sources.push((file_of(l), &l.value));
    }
    let server;
    let owned: Vec<String>;
    let parts: Vec<&str> = match key.strip_prefix("mcp_servers.") {
        // `mcp_servers.<name>...`: the name itself may contain dots, so it is looked up
        // among the servers the layers define rather than split off.
        Some(rest) => {
            server = mcp_server_in(layers, rest)?;
            vec!["mcp_servers", server.as_str()]
        }
        None => {
            owned = crate::de_error::key_parts(key)
                .unwrap_or_else(|| key.split('.').map(str::to_string).collect());
            owned.iter().map(String::as_str).collect()
        }
    };
    // A missing key (`model_providers.box.base_url`) is blamed on the layer that wrote the
    // nearest table around it.
    (1..=parts.len()).rev().find_map(|n| {
        sources
            .iter()
            .find(|(_, table)| defines(table, &parts[..n]))
            .map(|(origin, _)| origin.clone())
    })
}

/// The longest server name defined in some layer that `rest` (a key after `mcp_servers.`)
/// starts with.
fn mcp_server_in(layers: &[ConfigLayer], rest: &str) -> Option<String> {
    layers
        .iter()
        .filter_map(|l| l.value.get("mcp_servers")?.as_table())
        .flat_map(|servers| servers.keys())
        .filter(|name| {
            rest.strip_prefix(name.as_str())
                .is_some_and(|after| after.is_empty() || after.starts_with(['.', '[']))
        })
        .max_by_key(|name| name.len())
        .cloned()
}

/// Does `table` set the key at `parts` (or a value on the way to it)?
fn defines(table: &toml::Table, parts: &[&str]) -> bool {
    let mut cur = table;
    for (i, part) in parts.iter().enumerate() {
        match cur.get(*part) {
            None => return false,
            Some(_) if i + 1 == parts.len() => return true,
            Some(toml::Value::Table(next)) => cur = next,
            Some(_) => return true,
        }
    }
    false
}

/// Where the threads of `home` are kept: `OI_THREAD_STORE_URL`, else `[thread_store] url` of
/// the user config (`home/config.toml`); `None` (or blank) means local files under `home`.
///
/// Only the user config counts: a project's `.openinterpreter/config.toml` cannot send the
/// user's threads to another database, and every front end of one home agrees on the store.
pub fn thread_store_url(home: &Path) -> Result<Option<String>, ConfigError> {
    thread_store_settings(home).map(|s| s.url)
}

/// The `[thread_store]` section of the user config (see [`thread_store_url`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadStoreSettings {
    /// `OI_THREAD_STORE_URL`, else `url`; `None` for local files.
    pub url: Option<String>,
    /// `connect_timeout_sec` (default 10, at least 1).
    pub connect_timeout: Duration,
    /// `statement_timeout_sec` (default 30, at least 1).
    pub statement_timeout: Duration,
}

/// The `[thread_store]` section of the user config (`home/config.toml`), with
/// `OI_THREAD_STORE_URL` overriding its `url`. Only the user config counts (see
/// [`thread_store_url`]).
pub fn thread_store_settings(home: &Path) -> Result<ThreadStoreSettings, ConfigError> {
    let env_url = std::env::var("OI_THREAD_STORE_URL").ok();
    let path = user_config_path(home);
    let table = match read_layer(&path, None)? {
        Some((table, _)) => table,
        None => toml::Table::new(),
    };
    /// The one table this reads; the rest of the file is skipped unread (and checked when
    /// the config is loaded).
    #[derive(serde::Deserialize)]
    struct UserStore {
        thread_store: Option<Table<ThreadStoreToml>>,
    }
    let store: UserStore = serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(
        |e: serde_path_to_error::Error<toml::de::Error>| {
            let key = crate::de_error::key_of(e.path());
            let message = match key.as_str() {
                "thread_store" => THREAD_STORE_HINT.to_string(),
                "thread_store.url" => format!(
                    "{}: [thread_store] url = \"postgresql://USER@HOST:PORT/DB\"",
                    crate::de_error::toml_message(e.inner())
                ),
                _ => format!(
                    "{}: a number of seconds, e.g. [thread_store] connect_timeout_sec = 10",
                    crate::de_error::toml_message(e.inner())
                ),
            };
            ConfigError::Invalid {
                origin: path.display().to_string(),
                key,
                message,
            }
        },
    )?;
    let t = store.thread_store.map(|t| t.0).unwrap_or_default();
    let secs = |v: Option<NonNegative>, default: u64| {
        Duration::from_secs(v.map_or(default, |n| n.0).max(1))
    };
    let url = match env_url {
        Some(u) => Some(u),
        None => t.url,
    };
    Ok(ThreadStoreSettings {
        url: url.filter(|u| !u.trim().is_empty()),
        connect_timeout: secs(t.connect_timeout_sec, 10),
        statement_timeout: secs(t.statement_timeout_sec, 30),
    })
}

/// `mcp_state_key_file` of the user config (`home/config.toml`): the file holding the key
/// that seals what `interpreter mcp-server` gives MCP 2026-07-28 clients to hold (request
/// states of approvals, task ids). A relative path is resolved against `home`. Only the user
/// config counts: a project cannot choose the key. `None` when it is not set.
pub fn mcp_state_key_file(home: &Path) -> Result<Option<std::path::PathBuf>, ConfigError> {
    let path = user_config_path(home);
    let Some((table, _)) = read_layer(&path, None)? else {
        return Ok(None);
    };
    match table.get("mcp_state_key_file") {
        None => Ok(None),
        Some(toml::Value::String(s)) if !s.trim().is_empty() => Ok(Some(home.join(s.trim()))),
        Some(other) => Err(ConfigError::Invalid {
            origin: path.display().to_string(),
            key: "mcp_state_key_file".into(),
            message: format!(
                "expected the path of a file, got {}: mcp_state_key_file = \"/etc/openinterpreter/mcp-state-key\"",
                match other {
                    toml::Value::String(_) => "an empty string",
                    _ => other.type_str(),
                }
            ),
        }),
    }
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "load_project_tests.rs"]
mod project_tests;

#[cfg(test)]
#[path = "load_tables_tests.rs"]
mod table_tests;

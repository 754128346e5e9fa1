//! Where an effective setting came from: a front end's flag, a `-c` override, the active
//! profile, the project or user file, or the built-in default. `/config` in the TUI shows it
//! beside each value.

use crate::Config;
use std::path::PathBuf;

/// The layer that decided a key's value (the highest-priority one that sets it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A typed command-line flag (`-m`, `-s`, `-a`, `-p`...) or a request's typed setting.
    Flag,
    /// A `-c key=value` override (or a request's `config` map).
    Override,
    /// The `[profiles.<name>]` table in use.
    Profile(String),
    /// The trusted project's `.openinterpreter/config.toml`.
    Project(PathBuf),
    /// The user's `config.toml`.
    User(PathBuf),
    /// Nothing sets it: the built-in default.
    Default,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Flag => f.write_str("command-line flag"),
            Origin::Override => f.write_str("-c override"),
            Origin::Profile(name) => write!(f, "profile `{name}`"),
            Origin::Project(p) => write!(f, "project {}", p.display()),
            Origin::User(p) => write!(f, "user {}", p.display()),
            Origin::Default => f.write_str("default"),
        }
    }
}

impl Config {
    /// Where the value of the dotted `key` (`model`, `tui.theme`, `history.persistence`)
    /// came from, by the loader's precedence: flags, `-c`, the profile, the project file,
    /// the user file, else the default.
    pub fn origin_of(&self, key: &str) -> Origin {
        let parts: Vec<&str> = key.split('.').collect();
        if self.flag_keys.contains(&key) {
            return Origin::Flag;
        }
        if self
            .layers
            .iter()
            .any(|l| l.path.is_none() && defines(&l.value, &parts))
        {
            return Origin::Override;
        }
        if let Some(name) = &self.profile {
            let in_profile = self.layers.iter().any(|l| {
                l.value
                    .get("profiles")
                    .and_then(|p| p.get(name))
                    .and_then(toml::Value::as_table)
                    .is_some_and(|t| defines(t, &parts))
            });
            if in_profile {
                return Origin::Profile(name.clone());
            }
        }
        for l in self.layers.iter().rev() {
            if let Some(path) = &l.path
                && defines(&l.value, &parts)
            {
                return if l.name == "project" {
                    Origin::Project(path.clone())
                } else {
                    Origin::User(path.clone())
                };
            }
        }
        Origin::Default
    }
}

/// Does `table` hold a value at `parts`?
fn defines(table: &toml::Table, parts: &[&str]) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return false;
    };
    match (table.get(*first), rest.is_empty()) {
        (Some(_), true) => true,
        (Some(toml::Value::Table(t)), false) => defines(t, rest),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ConfigLoadOptions, ConfigOverrides, load_config};

    #[test]
    fn each_key_names_the_layer_that_set_it() {
        let home = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let user = home.path().join("config.toml");
        std::fs::write(
            &user,
            "model = \"m\"\nprofile = \"p\"\napproval_policy = \"never\"\n[tui]\ntheme = \"light\"\n\
             [profiles.p]\nmodel_reasoning_effort = \"high\"\n",
        )
        .unwrap();
        let loaded = load_config(ConfigLoadOptions {
            home: Some(home.path().to_path_buf()),
            cli_overrides: vec![("max_turn_steps".into(), toml::Value::Integer(9))],
            overrides: ConfigOverrides {
                cwd: Some(work.path().to_path_buf()),
                sandbox_mode: Some(oi_protocol::config_types::SandboxMode::WorkspaceWrite),
                ..Default::default()
            },
        })
        .unwrap();
        let c = loaded.config;
        assert_eq!(c.origin_of("model"), Origin::User(user.clone()));
        assert_eq!(c.origin_of("tui.theme"), Origin::User(user.clone()));
        assert_eq!(
            c.origin_of("model_reasoning_effort"),
            Origin::Profile("p".into())
        );
        assert_eq!(c.origin_of("max_turn_steps"), Origin::Override);
        assert_eq!(c.origin_of("sandbox_mode"), Origin::Flag);
        assert_eq!(c.origin_of("shell_timeout_ms"), Origin::Default);
        assert_eq!(c.origin_of("tui.status_line"), Origin::Default);
        assert_eq!(c.tui_theme.as_deref(), Some("light"));
    }
}

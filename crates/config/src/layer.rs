//! One source of settings as it was written: a leaf that the typed config, the loader and
//! per-layer readers (`hooks`) share.

use std::path::PathBuf;

/// One source of settings, for `config/read` and diagnostics.
#[derive(Clone, Debug)]
pub struct ConfigLayer {
    /// `user`, `project` or `session_flags`.
    pub name: &'static str,
    /// The file it was read from; `None` for `-c` overrides.
    pub path: Option<PathBuf>,
    /// Its settings as written.
    pub value: toml::Table,
}

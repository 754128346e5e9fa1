//! Writing the terminal UI's own settings (`[tui] theme`, `[tui] status_line`) into the
//! user's `config.toml`: what `/theme` and `/statusline` choose is kept for the next session.
//! The file keeps its comments and layout (toml_edit), and is written like every other
//! writer does it (see [`crate::edit`]).

use crate::ConfigError;
use std::path::Path;
use toml_edit::{DocumentMut, Item, Table};

/// A `[tui]` value: one name or a list of names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TuiValue {
    /// A single name.
    Text(String),
    /// A list of names.
    List(Vec<String>),
}

/// Sets `[tui] key` in the config file at `path` (created if missing); `None` removes the
/// key, so the default applies again.
pub fn set_tui_setting(path: &Path, key: &str, value: Option<TuiValue>) -> Result<(), ConfigError> {
    crate::edit::update_text(
        path,
        |source| ConfigError::Other(format!("cannot update {}: {source}", path.display())),
        |text| {
            let mut doc: DocumentMut =
                text.parse()
                    .map_err(|e: toml_edit::TomlError| ConfigError::Parse {
                        path: path.to_path_buf(),
                        message: e.to_string().trim().replace('\n', " "),
                    })?;
            let tui = doc
                .entry("tui")
                .or_insert_with(|| Item::Table(Table::new()))
                .as_table_like_mut()
                .ok_or_else(|| ConfigError::Invalid {
                    origin: path.display().to_string(),
                    key: "tui".into(),
                    message: "expected a table: [tui] theme = \"dark\"".into(),
                })?;
            match value {
                None => {
                    tui.remove(key);
                }
                Some(TuiValue::Text(text)) => {
                    tui.insert(key, toml_edit::value(text));
                }
                Some(TuiValue::List(items)) => {
                    let list: toml_edit::Array = items.into_iter().collect();
                    tui.insert(key, toml_edit::value(list));
                }
            }
            Ok((Some(doc.to_string()), ()))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_and_removes_keys_keeping_the_rest_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "# my model\nmodel = \"m\"\n").unwrap();
        set_tui_setting(&path, "theme", Some(TuiValue::Text("light".into()))).unwrap();
        set_tui_setting(
            &path,
            "status_line",
            Some(TuiValue::List(vec![
                "model-name".into(),
                "current-dir".into(),
            ])),
        )
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# my model\nmodel = \"m\"\n"), "{text}");
        let t: toml::Table = text.parse().unwrap();
        assert_eq!(t["tui"]["theme"].as_str(), Some("light"));
        assert_eq!(t["tui"]["status_line"].as_array().unwrap().len(), 2);
        set_tui_setting(&path, "theme", None).unwrap();
        let t: toml::Table = std::fs::read_to_string(&path).unwrap().parse().unwrap();
        assert!(t["tui"].get("theme").is_none());
        // A file that is not TOML is left alone, with an error naming it.
        std::fs::write(&path, "model = \n").unwrap();
        let e = set_tui_setting(&path, "theme", None).unwrap_err();
        assert!(e.to_string().contains("config.toml"), "{e}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "model = \n");
    }
}

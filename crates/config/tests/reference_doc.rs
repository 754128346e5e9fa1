//! docs/configuration.md's key table is generated from `oi_config::keys`, and every TOML
//! example in the docs loads. Run with `UPDATE_DOCS=1` to rewrite the generated section.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use oi_config::keys::{KEY_DOCS, TOP_LEVEL_KEYS, reference_markdown};
use oi_config::project_keys;
use oi_config::{ConfigLoadOptions, ConfigOverrides, load_config};
use std::path::{Path, PathBuf};

const BEGIN: &str =
    "<!-- BEGIN GENERATED: config keys (crates/config/tests/reference_doc.rs) -->\n";
const END: &str = "<!-- END GENERATED: config keys -->";
const RULES_BEGIN: &str =
    "<!-- BEGIN GENERATED: project rules (crates/config/tests/reference_doc.rs) -->\n";
const RULES_END: &str = "<!-- END GENERATED: project rules -->";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Load `text` as the user config of a fresh home; returns the warnings.
fn load(text: &str) -> Result<Vec<String>, String> {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), text).unwrap();
    load_config(ConfigLoadOptions {
        home: Some(home.path().to_path_buf()),
        cli_overrides: Vec::new(),
        overrides: ConfigOverrides {
            cwd: Some(home.path().to_path_buf()),
            ..Default::default()
        },
    })
    .map(|l| l.warnings)
    .map_err(|e| e.to_string())
}

#[test]
fn every_honoured_key_is_documented_once() {
    let documented: Vec<&str> = KEY_DOCS.iter().map(|d| d.key).collect();
    for k in TOP_LEVEL_KEYS {
        assert_eq!(
            documented.iter().filter(|d| *d == k).count(),
            1,
            "`{k}` needs exactly one KeyDoc"
        );
    }
    for d in &documented {
        assert!(TOP_LEVEL_KEYS.contains(d), "KeyDoc for unknown key `{d}`");
    }
}

#[test]
fn every_documented_example_loads_without_warnings() {
    for d in KEY_DOCS {
        // Some keys need a model for a non-default provider.
        let text = format!("model = \"m\"\n{}\n", d.example).replacen(
            "model = \"m\"\nmodel = ",
            "model = ",
            1,
        );
        match load(&text) {
            Ok(w) => assert!(w.is_empty(), "{}: {w:?}", d.key),
            Err(e) => panic!("example of `{}` does not load: {e}\n{text}", d.key),
        }
    }
}

/// Checks (or, with `UPDATE_DOCS`, rewrites) the section of docs/configuration.md between
/// `begin` and `end` against `want`.
fn generated_section(begin: &str, end: &str, want: &str) {
    let path = repo().join("docs/configuration.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let (Some(a), Some(b)) = (doc.find(begin), doc.find(end)) else {
        panic!("docs/configuration.md lacks the markers {begin:?} … {end:?}");
    };
    let current = &doc[a + begin.len()..b];
    if current != want {
        if std::env::var_os("UPDATE_DOCS").is_some() {
            let updated = format!("{}{begin}{want}{}", &doc[..a], &doc[b..]);
            std::fs::write(&path, updated).unwrap();
        } else {
            panic!(
                "docs/configuration.md is out of date; run `UPDATE_DOCS=1 cargo test -p oi-config --test reference_doc`"
            );
        }
    }
}

#[test]
fn configuration_md_has_the_generated_table() {
    generated_section(BEGIN, END, &reference_markdown());
}

#[test]
fn configuration_md_has_the_generated_project_rules() {
    generated_section(RULES_BEGIN, RULES_END, &project_keys::reference_markdown());
}

/// ```toml blocks of a markdown file, with their line numbers.
fn toml_blocks(path: &Path) -> Vec<(usize, String)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        match &mut current {
            None if line.trim() == "```toml" => current = Some((i + 1, String::new())),
            None => {}
            Some(_) if line.trim() == "```" => out.extend(current.take()),
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
        }
    }
    out
}

#[test]
fn every_toml_example_in_the_docs_loads_without_warnings() {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.push(repo().join("README.md"));
    let mut checked = 0;
    for file in files {
        for (line, block) in toml_blocks(&file) {
            let name = format!("{}:{line}", file.display());
            match load(&block) {
                Ok(w) => assert!(w.is_empty(), "{name}: {w:?}\n{block}"),
                Err(e) => panic!("{name} does not load: {e}\n{block}"),
            }
            checked += 1;
        }
    }
    assert!(checked >= 5, "only {checked} TOML examples found");
}

//! The order in which a folder's names are tried, which folder wins, and the bounds every
//! name is read with.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use super::*;
use std::fs;

/// A repository (`repo/.git`) with a working folder `repo/sub`, and an agent home apart.
struct Tree {
    _dir: tempfile::TempDir,
    repo: PathBuf,
    sub: PathBuf,
    home: PathBuf,
}

fn tree() -> Tree {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let repo = base.join("repo");
    let sub = repo.join("sub");
    let home = base.join("home");
    fs::create_dir_all(repo.join(".git")).unwrap();
    fs::create_dir_all(&sub).unwrap();
    fs::create_dir_all(&home).unwrap();
    Tree {
        _dir: dir,
        repo,
        sub,
        home,
    }
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// The doc found from `cwd`: its path and text, or the warning.
fn find(t: &Tree, cwd: &Path, fallbacks: &[&str]) -> Result<(PathBuf, String), String> {
    find_max(t, cwd, fallbacks, 32 * 1024)
}

fn find_max(
    t: &Tree,
    cwd: &Path,
    fallbacks: &[&str],
    max: usize,
) -> Result<(PathBuf, String), String> {
    match project_doc(cwd, &t.home, max, &names(fallbacks)) {
        (Some(doc), None) => Ok((PathBuf::from(doc.path), doc.text)),
        (None, Some(warning)) => Err(warning),
        (None, None) => Err("none".into()),
        (Some(doc), Some(w)) => panic!("both {doc:?} and {w}"),
    }
}

fn mkfifo(p: &Path) {
    let st = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap();
    assert!(st.success(), "mkfifo {p:?}");
}

#[test]
fn names_are_tried_built_in_first_then_the_fallbacks_in_order() {
    assert_eq!(
        candidate_names(&[]),
        ["AGENTS.override.md", "AGENTS.md", "AGENT.md"]
    );
    assert_eq!(
        candidate_names(&names(&[
            "CLAUDE.md",
            "",
            "AGENTS.md",
            "QWEN.md",
            "CLAUDE.md"
        ])),
        [
            "AGENTS.override.md",
            "AGENTS.md",
            "AGENT.md",
            "CLAUDE.md",
            "QWEN.md"
        ]
    );
}

#[test]
fn a_fallback_is_used_only_when_named_and_only_where_agents_md_is_absent() {
    let t = tree();
    let fallbacks = ["CLAUDE.md", "QWEN.md"];
    fs::write(t.sub.join("QWEN.md"), "qwen rules").unwrap();
    // Not named: not read.
    assert_eq!(find(&t, &t.sub, &[]), Err("none".into()));
    assert_eq!(
        find(&t, &t.sub, &fallbacks),
        Ok((t.sub.join("QWEN.md"), "qwen rules".into()))
    );
    // The config's order decides between fallbacks.
    fs::write(t.sub.join("CLAUDE.md"), "claude rules").unwrap();
    assert_eq!(find(&t, &t.sub, &fallbacks).unwrap().1, "claude rules");
    assert_eq!(
        find(&t, &t.sub, &["QWEN.md", "CLAUDE.md"]).unwrap().1,
        "qwen rules"
    );
    // AGENTS.md wins over every fallback, AGENTS.override.md over AGENTS.md.
    fs::write(t.sub.join("AGENTS.md"), "agents rules").unwrap();
    assert_eq!(find(&t, &t.sub, &fallbacks).unwrap().1, "agents rules");
    fs::write(t.sub.join("AGENTS.override.md"), "override rules").unwrap();
    assert_eq!(find(&t, &t.sub, &fallbacks).unwrap().1, "override rules");
    // A name with a folder in it is looked for under each folder, like Codex joins it.
    let t = tree();
    fs::create_dir(t.sub.join("docs")).unwrap();
    fs::write(t.sub.join("docs/agents.md"), "nested name").unwrap();
    assert_eq!(
        find(&t, &t.sub, &["docs/agents.md"]).unwrap().1,
        "nested name"
    );
}

#[test]
fn the_nearest_folder_with_any_name_wins_and_the_walk_stops_at_the_repository() {
    let t = tree();
    fs::write(t.repo.join("AGENTS.md"), "root agents").unwrap();
    fs::write(t.sub.join("CLAUDE.md"), "sub claude").unwrap();
    assert_eq!(
        find(&t, &t.sub, &["CLAUDE.md"]),
        Ok((t.sub.join("CLAUDE.md"), "sub claude".into()))
    );
    // Without the key the root's AGENTS.md is the nearest doc.
    assert_eq!(find(&t, &t.sub, &[]).unwrap().1, "root agents");
    // Nothing above the repository root is read, whatever its name.
    let t = tree();
    fs::write(t.repo.parent().unwrap().join("CLAUDE.md"), "not ours").unwrap();
    assert_eq!(find(&t, &t.sub, &["CLAUDE.md"]), Err("none".into()));
}

#[test]
fn a_fallback_is_read_with_the_bounds_of_agents_md() {
    let t = tree();
    // Cut head+tail to project_doc_max_bytes; 0 reads nothing.
    let text: String = (0..10_000).map(|i| format!("rule {i}\n")).collect();
    fs::write(t.sub.join("CLAUDE.md"), &text).unwrap();
    let (_, seen) = find_max(&t, &t.sub, &["CLAUDE.md"], 2000).unwrap();
    assert!(seen.len() < 2200, "{}", seen.len());
    assert!(seen.starts_with("rule 0\n") && seen.ends_with("rule 9999\n"));
    assert!(seen.contains("bytes omitted"), "{seen}");
    assert_eq!(find_max(&t, &t.sub, &["CLAUDE.md"], 0), Err("none".into()));

    // A FIFO is refused at once, with a warning naming it; a later name or a doc further up
    // is not used in its place.
    let t = tree();
    mkfifo(&t.sub.join("CLAUDE.md"));
    fs::write(t.sub.join("QWEN.md"), "qwen rules").unwrap();
    fs::write(t.repo.join("AGENTS.md"), "root agents").unwrap();
    let w = find(&t, &t.sub, &["CLAUDE.md", "QWEN.md"]).unwrap_err();
    assert!(
        w.starts_with("CLAUDE.md not used") && w.contains("FIFO"),
        "{w}"
    );
}

#[test]
fn a_fallback_leading_out_of_the_project_or_into_the_home_is_not_read() {
    let t = tree();
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("notes.md"), "outside secret").unwrap();
    fs::write(t.home.join(".credentials.json"), "home secret").unwrap();
    for target in [
        outside.path().join("notes.md"),
        t.home.join(".credentials.json"),
    ] {
        let link = t.sub.join("CLAUDE.md");
        let _ = fs::remove_file(&link);
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let w = find(&t, &t.sub, &["CLAUDE.md"]).unwrap_err();
        assert!(
            w.starts_with("CLAUDE.md not used") && w.contains("outside"),
            "{target:?}: {w}"
        );
    }
    // A link that stays inside the repository is fine.
    fs::write(t.repo.join("claude-shared.md"), "shared rules").unwrap();
    let link = t.sub.join("CLAUDE.md");
    fs::remove_file(&link).unwrap();
    std::os::unix::fs::symlink("../claude-shared.md", &link).unwrap();
    assert_eq!(find(&t, &t.sub, &["CLAUDE.md"]).unwrap().1, "shared rules");
}

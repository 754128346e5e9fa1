//! The files a request names, shown to the model with the request.
//!
//! The 1.5B model on the real tier rarely reads a file before changing it: it writes the
//! command it guesses the file needs. "Fix the typo in greet.py so that test_greet.py
//! passes" got `sed 's/greet/greeti/'`, "change the server port to 8080" a `sed` of
//! `8080` to `8081`, "greet the person named in name.txt" a greeting with no name — each
//! in runs where a `cat` of the file would have told it what to write. Under the `minimal`
//! harness (the profile for the smallest models), the files the request names that exist,
//! are small, are text and lie inside the working directory are put in front of the model
//! when the turn starts, as a note in the thread's history (so it is in the rollout, and
//! the turn's checks count the files as read). Bounded by count, size and a share of the
//! window; dotfiles and key files are never shown this way (the model can still read them).
//! A question of which file defines a name gets the files that hold it, as a search
//! would list them.

use crate::answer_check::{NAMED_FILES_MARKER as MARKER, find_named, named_paths};
use crate::session::Session;
use oi_protocol::models::ResponseItem;
use std::path::Path;

/// At most this many files...
const MAX_FILES: usize = 4;
/// ...of at most this size each...
const MAX_FILE_BYTES: u64 = 8 * 1024;
/// ...and this much in all, or an eighth of the window (at ~3 bytes a token) if less.
const MAX_TOTAL_BYTES: usize = 16 * 1024;

/// Files shown as holding a name a question asks about, at most.
const MAX_FOUND_FILES: usize = 5;

/// Names of a request looked up, at most.
const MAX_NAMES_TRIED: usize = 8;

/// Extensions of files that hold keys: not shown unasked.
const KEY_FILES: &[&str] = &["pem", "key", "p12", "pfx", "jks", "keystore", "kdbx"];

/// Adds the note for this turn's request when the session's profile shows named files.
pub(crate) async fn attach(sess: &Session, turn_id: &str) {
    let ctx = sess.turn_context();
    if !crate::harness::gives_named_context_up_front(crate::harness::resolve(&ctx.config)) {
        return;
    }
    let request = crate::answer_check::request_of(&sess.state().history);
    if request.trim().is_empty() {
        return;
    }
    let cwd = ctx.config.cwd.clone();
    let window = usize::try_from(sess.context_window()).unwrap_or(0);
    let budget = MAX_TOTAL_BYTES.min(window.saturating_mul(3) / 8);
    let note = tokio::task::spawn_blocking(move || note(&request, &cwd, budget)).await;
    if let Ok(Some(text)) = note {
        sess.push_history(turn_id, vec![ResponseItem::developer_text(text)])
            .await;
    }
}

/// The note for `request` in `cwd`, within `budget` bytes of file text; `None` when no
/// named file qualifies. Reads the disk: call it off the async workers.
pub(crate) fn note(request: &str, cwd: &Path, budget: usize) -> Option<String> {
    let root = cwd.canonicalize().ok()?;
    let mut shown: Vec<(String, String)> = Vec::new();
    let mut used = 0usize;
    // Each name not found where it is written is searched for (bounded): only the first
    // few names are tried.
    for path in named_paths(request).into_iter().take(MAX_NAMES_TRIED) {
        if shown.len() == MAX_FILES {
            break;
        }
        let Some(text) = readable(&root, &path) else {
            continue;
        };
        if used + text.len() > budget {
            continue;
        }
        used += text.len();
        shown.push((path, text));
    }
    let found = where_named(request, &root);
    if shown.is_empty() && found.is_none() {
        return None;
    }
    let mut out = format!("{MARKER}\n");
    if !shown.is_empty() {
        out.push_str("The files the request names, as they are now (already read for you):\n");
    }
    for (path, text) in &shown {
        let text = text.strip_suffix('\n').unwrap_or(text);
        out.push_str(&format!("<file path=\"{path}\">\n{text}\n</file>\n"));
    }
    if asks_for_a_spelling_fix(request)
        && let Some(hint) = look_alikes(&shown)
    {
        out.push_str(&hint);
    }
    if let Some(found) = found {
        out.push_str(&found);
    }
    if let Some(hint) = rename_command(request, &shown) {
        out.push_str(&hint);
    }
    out.push_str("</named_files>");
    Some(out)
}

/// Files holding a name a question asks the defining file of ("Which file defines the
/// function load_settings?"), with the lines that hold it: what `grep -rn` would print.
/// Recorded on the real tier (round 15): the 1.5B model answered both such questions
/// with a made-up call or an unrun `grep` fence. At most [`MAX_FOUND_FILES`] files,
/// two lines each; the search is bounded as the answer check's is.
fn where_named(request: &str, root: &Path) -> Option<String> {
    if !crate::answer_check::is_question(request) {
        return None;
    }
    let name = crate::answer_check::asked_definition(request)?;
    let files = crate::answer_check::files_naming(root, &name)?;
    if files.is_empty() {
        return None;
    }
    let mut out = format!(
        "The files in this project that contain `{name}` (searched for you), with its lines:\n"
    );
    for file in files.iter().take(MAX_FOUND_FILES) {
        let Some(text) = readable(root, file) else {
            out.push_str(&format!("- {file}\n"));
            continue;
        };
        for (n, line) in text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains(name.as_str()))
            .take(2)
        {
            let line: String = line.trim().chars().take(160).collect();
            out.push_str(&format!("- {file} line {}: `{line}`\n", n + 1));
        }
    }
    Some(out)
}

/// For "rename the function a to b in x.py and y.py" with every file shown: the one command
/// that changes every use (recorded on the real tier: the 1.5B model, with both files in
/// front of it, moved them away, called a made-up `rename_function` tool, or changed one
/// file of two). The model still runs it, under the approvals.
fn rename_command(request: &str, shown: &[(String, String)]) -> Option<String> {
    let (old, new, files) = crate::answer_check::renamed_name(request)?;
    let all_shown = files.iter().all(|f| {
        shown
            .iter()
            .any(|(path, text)| path == f && text.contains(old.as_str()))
    });
    let plain = files.iter().all(|f| {
        f.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
    });
    if !all_shown || !plain {
        return None;
    }
    Some(format!(
        "To rename `{old}` to `{new}` in these files, one command changes every use: `sed -i 's/\\b{old}\\b/{new}/g' {}`\n",
        files.join(" ")
    ))
}

/// "Fix the typo in …", "a misspelled word", "correct the spelling".
fn asks_for_a_spelling_fix(request: &str) -> bool {
    let lower = request.to_lowercase();
    ["typo", "misspel", "spelling", "spelled wrong", "spelt"]
        .iter()
        .any(|w| lower.contains(w))
}

/// Words of one shown file that are one letter away from a word of another, neither word
/// being in the other file: where a typo most likely is (recorded on the real tier: with
/// greet.py and test_greet.py in front of it, the 1.5B model changed `Ada` or `greet`, never
/// `Helo`). `None` when no such pair is found; at most three pairs.
fn look_alikes(shown: &[(String, String)]) -> Option<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut seen: Vec<(String, String)> = Vec::new();
    for (i, (path, text)) in shown.iter().enumerate() {
        for (other_path, other) in shown.iter().skip(i + 1) {
            let (ours, theirs) = (words(text), words(other));
            for (word, line) in &ours {
                for (near, near_line) in &theirs {
                    // Cheapest test first: two files of 8 KiB hold a thousand words each.
                    let apart = word.len().abs_diff(near.len()) <= 4
                        && one_edit_apart(word, near)
                        && word.to_lowercase() != near.to_lowercase()
                        && !theirs.iter().any(|(w, _)| w == word)
                        && !ours.iter().any(|(w, _)| w == near);
                    let pair = (word.clone(), near.clone());
                    if apart && !seen.contains(&pair) {
                        lines.push(format!(
                            "- `{word}` ({path} line {line}) and `{near}` ({other_path} line {near_line})\n"
                        ));
                        seen.push(pair);
                    }
                }
            }
        }
    }
    if lines.is_empty() {
        return None;
    }
    let mut out =
        String::from("Words one letter apart between these files (a typo is often one of them):\n");
    for line in lines.into_iter().take(3) {
        out.push_str(&line);
    }
    Some(out)
}

/// The words of `text` (runs of letters, four or more) with the line each is first on.
fn words(text: &str) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for word in line.split(|c: char| !c.is_alphabetic()) {
            if word.chars().count() >= 4 && !out.iter().any(|(w, _)| w == word) {
                out.push((word.to_string(), n + 1));
            }
        }
    }
    out
}

/// One letter added, removed, changed, or two neighbours swapped.
fn one_edit_apart(a: &str, b: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let (short, long) = if a.len() <= b.len() {
        (&a, &b)
    } else {
        (&b, &a)
    };
    match long.len() - short.len() {
        0 => {
            let diff: Vec<usize> = (0..a.len()).filter(|&i| a[i] != b[i]).collect();
            diff.len() == 1
                || (diff.len() == 2
                    && diff[1] == diff[0] + 1
                    && a[diff[0]] == b[diff[1]]
                    && a[diff[1]] == b[diff[0]])
        }
        1 => {
            let first = (0..short.len())
                .find(|&i| short[i] != long[i])
                .unwrap_or(short.len());
            short[first..] == long[first + 1..]
        }
        _ => false,
    }
}

/// The text of `path` as the request names it, when it may be shown: a small UTF-8 file
/// inside `root` (after links), not a dotfile or a key file.
fn readable(root: &Path, path: &str) -> Option<String> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    if name.starts_with('.')
        || path
            .split('/')
            .any(|part| part == ".." || (part.starts_with('.') && part != "."))
        || ext.is_some_and(|e| KEY_FILES.contains(&e.as_str()))
    {
        return None;
    }
    let found = find_named(root, path)?.canonicalize().ok()?;
    if !found.starts_with(root) {
        return None;
    }
    let meta = found.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
        return None;
    }
    let bytes = std::fs::read(&found).ok()?;
    if bytes.len() as u64 > MAX_FILE_BYTES || bytes.contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::{MARKER, note};

    fn dir(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (p, c) in files {
            let path = dir.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, c).unwrap();
        }
        dir
    }

    #[test]
    fn the_files_a_request_names_are_shown_as_they_are() {
        let d = dir(&[
            (
                "greet.py",
                "def greet(name):\n    return f\"Helo, {name}!\"\n",
            ),
            ("test_greet.py", "from greet import greet\n"),
            ("other.py", "x = 1\n"),
        ]);
        let text = note(
            "Fix the typo in greet.py so that test_greet.py passes.",
            d.path(),
            16 * 1024,
        )
        .unwrap();
        assert_eq!(
            text,
            format!(
                "{MARKER}\nThe files the request names, as they are now (already read for you):\n<file path=\"greet.py\">\ndef greet(name):\n    return f\"Helo, {{name}}!\"\n</file>\n<file path=\"test_greet.py\">\nfrom greet import greet\n</file>\n</named_files>"
            )
        );
        // docs/harness.md shows the note as it is sent.
        let one = note("Fix the typo in greet.py.", d.path(), 16 * 1024).unwrap();
        let docs = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/harness.md"),
        )
        .unwrap();
        assert!(docs.contains(&format!("```text\n{one}\n```")), "{one}");
        // A name without its folder is found below the working directory.
        let d = dir(&[("src/app/config.toml", "port = 8000\n")]);
        let text = note("In config.toml, set port to 8080.", d.path(), 16 * 1024).unwrap();
        assert!(
            text.contains("<file path=\"config.toml\">\nport = 8000\n</file>"),
            "{text}"
        );
        // `./name` is a file of the working directory too; a dot folder is not shown.
        let d = dir(&[("a.txt", "a\n"), (".git/config", "x\n")]);
        let text = note("Read ./a.txt and .git/config.", d.path(), 16 * 1024).unwrap();
        assert!(
            text.contains("<file path=\"./a.txt\">\na\n</file>") && !text.contains(".git"),
            "{text}"
        );
    }

    #[test]
    fn a_spelling_fix_points_at_words_one_letter_apart() {
        let d = dir(&[
            (
                "greet.py",
                "def greet(name):\n    return f\"Helo, {name}!\"\n",
            ),
            (
                "test_greet.py",
                "from greet import greet\n\nassert greet(\"Ada\") == \"Hello, Ada!\", greet(\"Ada\")\nprint(\"ok\")\n",
            ),
        ]);
        let request = "Fix the typo in greet.py so that test_greet.py passes.";
        let text = note(request, d.path(), 16 * 1024).unwrap();
        assert!(
            text.ends_with("Words one letter apart between these files (a typo is often one of them):\n- `Helo` (greet.py line 2) and `Hello` (test_greet.py line 3)\n</named_files>"),
            "{text}"
        );
        // Only when the request asks for a spelling fix.
        let text = note(
            "Make test_greet.py pass by editing greet.py.",
            d.path(),
            16 * 1024,
        )
        .unwrap();
        assert!(!text.contains("one letter apart"), "{text}");
        // A word both files use is not a look-alike of anything.
        let d = dir(&[
            ("a.py", "names = load()\nname = names[0]\n"),
            ("b.py", "names = []\n"),
        ]);
        let text = note("Fix the typo in a.py and b.py.", d.path(), 16 * 1024).unwrap();
        assert!(!text.contains("one letter apart"), "{text}");
        for (a, b, near) in [
            ("Helo", "Hello", true),
            ("recieve", "receive", true),
            ("greet", "great", true),
            ("name", "names", true),
            ("greet", "greet", false),
            ("abcd", "abdc", true),
            ("abcd", "badc", false),
            ("Hello", "Help", false),
        ] {
            assert_eq!(super::one_edit_apart(a, b), near, "{a} {b}");
        }
    }

    #[test]
    fn a_question_of_where_a_name_is_defined_gets_the_files_that_hold_it() {
        let d = dir(&[
            ("app/util.py", "def helper(x):\n    return x\n"),
            (
                "lib/io/files.py",
                "import os\n\ndef load_settings(path):\n    return open(path).read()\n",
            ),
        ]);
        let text = note(
            "Which file in this project defines the function load_settings? Answer with the file's path.",
            d.path(),
            16 * 1024,
        )
        .unwrap();
        assert_eq!(
            text,
            format!(
                "{MARKER}\nThe files in this project that contain `load_settings` (searched for you), with its lines:\n- lib/io/files.py line 3: `def load_settings(path):`\n</named_files>"
            )
        );
        // Not a question, or a name no file holds: nothing to add.
        assert!(
            note(
                "Define the function load_settings in lib.py",
                d.path(),
                16 * 1024
            )
            .is_none()
        );
        assert!(note("Which file defines parse_args?", d.path(), 16 * 1024).is_none());
    }

    #[test]
    fn a_rename_across_shown_files_gets_the_command_that_does_it() {
        let d = dir(&[
            (
                "shop.py",
                "def compute_total(prices):\n    return sum(prices)\n",
            ),
            (
                "main.py",
                "from shop import compute_total\n\nprint(compute_total([1, 2, 3]))\n",
            ),
        ]);
        let request =
            "Rename the function compute_total to calculate_total in shop.py and main.py.";
        let text = note(request, d.path(), 16 * 1024).unwrap();
        assert!(
            text.ends_with("To rename `compute_total` to `calculate_total` in these files, one command changes every use: `sed -i 's/\\bcompute_total\\b/calculate_total/g' shop.py main.py`\n</named_files>"),
            "{text}"
        );
        // A file that does not hold the name, or is not shown: no command.
        let text = note(
            "Rename the function helper to assist in shop.py and main.py.",
            d.path(),
            16 * 1024,
        )
        .unwrap();
        assert!(!text.contains("sed -i"), "{text}");
    }

    #[test]
    fn what_may_not_be_shown_is_not() {
        let d = dir(&[
            (".env", "TOKEN=secret\n"),
            ("server.pem", "-----BEGIN-----\n"),
            ("big.txt", &"x".repeat(9 * 1024)),
            ("blob.bin", "a\0b"),
            ("ok.txt", "fine\n"),
        ]);
        // Outside the working directory, by path or through a link.
        let outside = dir(&[("secret.txt", "outside\n")]);
        std::os::unix::fs::symlink(outside.path().join("secret.txt"), d.path().join("link.txt"))
            .unwrap();
        let request = "Look at .env, server.pem, big.txt, blob.bin, link.txt, ../secret.txt, /etc/hostname and missing.txt.";
        assert_eq!(note(request, d.path(), 16 * 1024), None);
        // The budget: a file that does not fit is left out.
        assert_eq!(note("Read ok.txt.", d.path(), 3), None);
        assert!(note("Read ok.txt.", d.path(), 5).is_some());
    }
}

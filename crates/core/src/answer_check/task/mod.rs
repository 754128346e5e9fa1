//! What the task's own words say is true once it is done, checked against the working
//! directory and the commands the turn ran.
//!
//! Small models do part of a task and claim the rest (recorded on Qwen2.5-Coder-1.5B: a
//! script written but not made executable, one directory of three created, a file written
//! with other content than asked, lines said deleted that are still there). The request
//! names what must hold: files and folders to create, text a file must contain or must no
//! longer contain, a script to make executable, a test that must pass. Only the plainest
//! wordings count, and each expectation is one that a correct solution cannot miss, so a
//! task done right is never held back; anything the words leave open is not checked.

mod preserve;
mod verify;
mod wordings;
mod words;

pub(crate) use preserve::FilesBefore;
pub(crate) use verify::{
    Step, TestRun, contains_word, files_naming, test_command, test_run, unmet,
};
pub(crate) use wordings::asked_definition;
use wordings::{
    column_totals, contents, created_files, data_reads, executables, folders, named_functions,
    passing_tests, placeholders, removals, renames, set_values,
};
pub(crate) use words::looks_like_path;
use words::{Token, sentences, tokenize};

/// "Rename the function a to b in x.py and y.py": the old name, the new one and the files
/// the rename is asked in (a code name only, not a file's rename).
pub(crate) fn renamed_name(request: &str) -> Option<(String, String, Vec<String>)> {
    for sentence in sentences(request) {
        let mut out = Vec::new();
        renames(&tokenize(&sentence), &mut out);
        let (mut old, mut new, mut files) = (None, None, Vec::new());
        for e in out {
            match e {
                Expectation::Lacks { path, text } => {
                    old = Some(text);
                    files.push(path);
                }
                Expectation::Holds { text, .. } => new = Some(text),
                _ => {}
            }
        }
        if let (Some(old), Some(new)) = (old, new)
            && !files.is_empty()
        {
            return Some((old, new, files));
        }
    }
    None
}

/// The paths a request names (`greet.py`, `src/app.toml`), in order, each once.
pub(crate) fn named_paths(request: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for sentence in sentences(request) {
        for token in tokenize(&sentence) {
            let word = token
                .text
                .trim_matches(|c: char| matches!(c, ',' | ';' | ':' | '!' | '?' | '(' | ')'))
                .trim_end_matches('.');
            if looks_like_path(word) && !out.iter().any(|p| p == word) {
                out.push(word.to_string());
            }
        }
    }
    out
}

/// Where `path`, as a request names it, is under `cwd` (a name without its folder is
/// looked for, bounded, as the checks do).
pub(crate) fn find_named(cwd: &std::path::Path, path: &str) -> Option<std::path::PathBuf> {
    verify::find(cwd, path)
}

/// One thing the request says is true when the task is done.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Expectation {
    /// `path` exists; as a directory when `dir`.
    Exists { path: String, dir: bool },
    /// `path` is not empty: a script or program the request asks for has code in it
    /// (recorded: `touch count.py` for "a Python script count.py that prints 1 to 5").
    NotEmpty { path: String },
    /// `path` no longer exists.
    Gone { path: String },
    /// `path` has an execute bit.
    Executable { path: String },
    /// `path` contains `text`.
    Holds { path: String, text: String },
    /// `path` has a line that is `text` (trimmed): "add a line 'walk the dog' to todo.txt"
    /// (recorded: `walk the dogn`, which contains the text, ended as a false success).
    HoldsLine { path: String, text: String },
    /// `path` no longer contains `text` (as a whole word when it is one).
    Lacks { path: String, text: String },
    /// The test `file` (or command) was run after the last change, and passed.
    Passes { test: String },
    /// `path` sets one of `keys` (the setting's words, and them joined: `server_port`) to
    /// `value` on a `key = value` / `key: value` line, and the last word's own line, when
    /// there is just one, no longer holds another value.
    Sets {
        path: String,
        keys: Vec<String>,
        value: String,
    },
    /// `old` in `path` is replaced by `new` (in every occurrence when `every`): each line
    /// that held `old` holds `new` in its place. Checked against the file as it was when
    /// the turn started (see `preserve`); `Lacks`/`Holds` check the words themselves.
    Replaced {
        path: String,
        old: String,
        new: String,
        every: bool,
    },
    /// `path` holds, as its whole text, the form the request gives ("in the form Hello,
    /// <name>!"): `before`, then something for `placeholder` (not nothing), then `after`;
    /// and when the sentence names a file for the placeholder (`source`: `name.txt` for
    /// `<name>`), that file's text.
    Form {
        path: String,
        before: String,
        placeholder: String,
        after: String,
        source: Option<String>,
    },
    /// A call of the turn used `path` (a result computed from a file needs the file read).
    Read { path: String },
    /// `out` holds the sum of the `column` column of the CSV file `csv`.
    ColumnTotal {
        csv: String,
        column: String,
        out: String,
    },
}

/// The expectations the request's words state. Sentences that negate ("do not create …")
/// or are conditional ("if …") state none.
pub(crate) fn expectations(request: &str) -> Vec<Expectation> {
    let mut out = Vec::new();
    for sentence in sentences(request) {
        let tokens = tokenize(&sentence);
        if tokens
            .iter()
            .any(|t| t.is(&["not", "never", "if", "unless", "without", "whether"]))
            || tokens.iter().any(|t| !t.quoted && t.lower.ends_with("n't"))
        {
            continue;
        }
        for e in sentence_expectations(&tokens) {
            if !out.contains(&e) {
                out.push(e);
            }
        }
    }
    wordings::form(request, &mut out);
    out
}

fn sentence_expectations(tokens: &[Token]) -> Vec<Expectation> {
    let mut out = Vec::new();
    folders(tokens, &mut out);
    executables(tokens, &mut out);
    contents(tokens, &mut out);
    removals(tokens, &mut out);
    renames(tokens, &mut out);
    created_files(tokens, &mut out);
    passing_tests(tokens, &mut out);
    set_values(tokens, &mut out);
    named_functions(tokens, &mut out);
    column_totals(tokens, &mut out);
    data_reads(tokens, &mut out);
    placeholders(tokens, &mut out);
    out
}

fn push_new(out: &mut Vec<Expectation>, e: Expectation) {
    if !out.contains(&e) {
        out.push(e);
    }
}

#[cfg(test)]
mod tests;

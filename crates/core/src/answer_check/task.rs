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

use std::path::{Path, PathBuf};

/// One thing the request says is true when the task is done.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Expectation {
    /// `path` exists; as a directory when `dir`.
    Exists { path: String, dir: bool },
    /// `path` no longer exists.
    Gone { path: String },
    /// `path` has an execute bit.
    Executable { path: String },
    /// `path` contains `text`.
    Holds { path: String, text: String },
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
    /// A call of the turn used `path` (a result computed from a file needs the file read).
    Read { path: String },
    /// `out` holds the sum of the `column` column of the CSV file `csv`.
    ColumnTotal {
        csv: String,
        column: String,
        out: String,
    },
}

/// A piece of a sentence: a word, a quoted span, or punctuation that separates lists.
#[derive(Clone, Debug, PartialEq)]
struct Token {
    /// As written, without quotes.
    text: String,
    /// Lower case, for matching words.
    lower: String,
    /// Written in quotes or backticks.
    quoted: bool,
}

impl Token {
    fn is(&self, words: &[&str]) -> bool {
        !self.quoted && words.contains(&self.lower.as_str())
    }

    fn is_path(&self) -> bool {
        looks_like_path(&self.text)
    }
}

/// Verbs that make something new.
const CREATE: &[&str] = &[
    "create", "write", "make", "add", "generate", "save", "mkdir",
];
/// Verbs that take something away.
const REMOVE: &[&str] = &["delete", "remove", "rm", "drop", "erase"];
/// Words that introduce what a file must contain.
const HOLDING: &[&str] = &["containing", "contains", "contain", "saying", "says"];
/// Words that name folders.
const FOLDERS: &[&str] = &[
    "directory",
    "directories",
    "folder",
    "folders",
    "dir",
    "dirs",
];
/// Words inside a list of names that are not names.
const LIST_GLUE: &[&str] = &[",", "and", "&", "named", "called", ":", "the", "a", "an"];
/// Extensions of files that are run as programs.
const SCRIPT_EXTENSIONS: &[&str] = &["sh", "bash", "py", "pl", "rb", "js", "zsh"];

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

/// "Create greeting.txt … in the form Hello, <name>!": `<name>` stands for something to
/// fill in, so a file the sentence makes must not hold it as written (recorded: the 1.5B
/// model wrote `Hello, <name>!` and said it was done).
fn placeholders(tokens: &[Token], out: &mut Vec<Expectation>) {
    let written: Vec<String> = out
        .iter()
        .filter_map(|e| match e {
            Expectation::Exists { path, dir: false } => Some(path.clone()),
            _ => None,
        })
        .collect();
    for t in tokens.iter().filter(|t| !t.quoted) {
        let Some(inner) = t
            .text
            .trim_end_matches([',', '.', '!', '?'])
            .strip_prefix('<')
            .and_then(|r| r.strip_suffix('>'))
        else {
            continue;
        };
        if inner.is_empty() || !inner.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        for path in &written {
            push_new(
                out,
                Expectation::Lacks {
                    path: path.clone(),
                    text: format!("<{inner}>"),
                },
            );
        }
    }
}

/// Verbs that give something a new value.
const SET: &[&str] = &[
    "change", "set", "update", "bump", "increase", "raise", "lower", "decrease",
];

/// "In config.toml, change the server port to 8080", "set `name` = \"demo\" in a.toml": the
/// value a setting is given must be in the one file the sentence names. Only numbers and
/// quoted values count ("change the greeting to uppercase" names no text to find).
fn set_values(tokens: &[Token], out: &mut Vec<Expectation>) {
    let Some(verb) = tokens.iter().position(|t| t.is(SET)) else {
        return;
    };
    let mut files: Vec<&Token> = tokens.iter().filter(|t| t.is_path()).collect();
    files.dedup_by(|a, b| a.text == b.text);
    let [file] = files.as_slice() else {
        return;
    };
    let mut from = verb + 1;
    for i in verb + 1..tokens.len() {
        if !(tokens[i].is(&["to"]) || (!tokens[i].quoted && tokens[i].text == "=")) {
            continue;
        }
        let words = setting_words(&tokens[from.min(i)..i]);
        from = i + 2;
        let Some(value) = tokens.get(i + 1).filter(|v| is_value(v)) else {
            continue;
        };
        // The value ends its phrase: "to 8080", "to 8080 in a.toml", "to 2, and …"; not
        // "to 4 spaces".
        let ends = tokens
            .get(i + 2)
            .is_none_or(|n| n.is(&[",", "and", "in", "inside", "of", "for"]));
        if ends {
            push_new(
                out,
                Expectation::Holds {
                    path: file.text.clone(),
                    text: value.text.clone(),
                },
            );
            if !words.is_empty() {
                push_new(
                    out,
                    Expectation::Sets {
                        path: file.text.clone(),
                        keys: words,
                        value: value.text.clone(),
                    },
                );
            }
        }
    }
}

/// The words that name a setting before its new value: "the server port" in "change the
/// server port to 8080", "port" in "the port from 8000 to 8080", "`port`" in "`port` = 8080".
fn setting_words(tokens: &[Token]) -> Vec<String> {
    let until = tokens
        .iter()
        .position(|t| t.is(&["from"]))
        .unwrap_or(tokens.len());
    tokens[..until]
        .iter()
        .filter(|t| {
            !t.is_path()
                && identifier(&t.text)
                && !t.is(&[
                    "the", "a", "an", "in", "of", "and", "value", "setting", "settings", "option",
                    "field", "key", "entry", "its", "file",
                ])
        })
        .map(|t| t.lower.clone())
        .collect()
}

/// The `key = value` and `key: value` lines of a file, keys in lower case without quotes,
/// values without quotes, a trailing comma or a `#` comment.
fn keyed_lines(content: &str) -> Vec<(String, String)> {
    let quotes: &[char] = &['"', '\''];
    content
        .lines()
        .filter_map(|line| {
            let at = line.find('=').or_else(|| line.find(':'))?;
            let key = line[..at].trim().trim_matches(quotes).to_ascii_lowercase();
            let ok = !key.is_empty()
                && key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
            let value = line[at + 1..].split(" #").next().unwrap_or("").trim();
            let value = value
                .trim_end_matches([',', ';'])
                .trim()
                .trim_matches(quotes);
            ok.then(|| (key, value.to_string()))
        })
        .collect()
}

fn check_sets(path: &str, content: &str, keys: &[String], value: &str) -> Option<String> {
    let lines = keyed_lines(content);
    let joined: Vec<String> = ["_", "-", ".", ""].iter().map(|j| keys.join(j)).collect();
    let named = |k: &String| keys.contains(k) || joined.contains(k);
    let last = keys.last()?;
    if !lines.iter().any(|(k, _)| named(k)) {
        // No `key = value` line for the setting: the value alone is checked (`Holds`).
        return None;
    }
    let Some((set_key, _)) = lines.iter().find(|(k, v)| named(k) && v == value) else {
        return Some(format!("`{path}` does not set `{last}` to `{value}`"));
    };
    let own: Vec<&(String, String)> = lines.iter().filter(|(k, _)| k == last).collect();
    match own.as_slice() {
        [(_, old)] if old != value && set_key != last => Some(format!(
            "`{path}` still sets `{last}` to `{old}` (change that line, do not add another)"
        )),
        _ => None,
    }
}

/// A value a file can be checked for: a quoted span that is no path, or a number.
fn is_value(t: &Token) -> bool {
    if t.quoted {
        return !t.text.trim().is_empty() && !t.is_path();
    }
    let digits = t.text.trim_start_matches(['-', '+']);
    digits.starts_with(|c: char| c.is_ascii_digit())
        && !digits.ends_with('.')
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
}

fn push_new(out: &mut Vec<Expectation>, e: Expectation) {
    if !out.contains(&e) {
        out.push(e);
    }
}

/// "Add a function greet to utils.py", "create mathx.py with a function mul(a, b)": the
/// function (method, class) the task makes must be named in its file.
fn named_functions(tokens: &[Token], out: &mut Vec<Expectation>) {
    if !tokens
        .iter()
        .any(|t| t.is(CREATE) || t.is(&["implement", "define"]))
    {
        return;
    }
    let Some(kind) = tokens
        .iter()
        .position(|t| t.is(&["function", "method", "class"]))
    else {
        return;
    };
    let mut at = kind + 1;
    if tokens.get(at).is_some_and(|t| t.is(&["named", "called"])) {
        at += 1;
    }
    let Some(name) = tokens.get(at) else {
        return;
    };
    let name_text = name.text.trim_end_matches("()");
    if !identifier(name_text)
        || name.is(STOP_WORDS)
        || name.is(&[
            "that",
            "which",
            "the",
            "a",
            "an",
            "named",
            "called",
            "returning",
        ])
    {
        return;
    }
    let mut files: Vec<&Token> = tokens.iter().filter(|t| t.is_path()).collect();
    files.dedup_by(|a, b| a.text == b.text);
    let file = match files.as_slice() {
        [one] => *one,
        _ => match tokens[at + 1..].iter().find(|t| t.is_path()) {
            Some(f) => f,
            None => return,
        },
    };
    push_new(
        out,
        Expectation::Holds {
            path: file.text.clone(),
            text: name_text.to_string(),
        },
    );
}

/// "Write the total of the amount column of sales.csv to total.txt": the named column's
/// sum must be in the file written.
fn column_totals(tokens: &[Token], out: &mut Vec<Expectation>) {
    let Some(at) = tokens.iter().position(|t| t.is(&["total", "sum"])) else {
        return;
    };
    let rest: Vec<&Token> = tokens[at + 1..]
        .iter()
        .filter(|t| !t.is(&["the"]))
        .collect();
    let column = match rest.as_slice() {
        [of, col, word, ..] if of.is(&["of"]) && word.is(&["column", "field"]) => col,
        [of, word, col, ..] if of.is(&["of"]) && word.is(&["column", "field"]) => col,
        _ => return,
    };
    if !name_like(column) || column.is_path() {
        return;
    }
    let Some(csv) = tokens
        .iter()
        .find(|t| t.is_path() && extension(&t.text).is_some_and(|e| e.eq_ignore_ascii_case("csv")))
    else {
        return;
    };
    let Some(written) = out.iter().rev().find_map(|e| match e {
        Expectation::Exists { path, dir: false } if *path != csv.text => Some(path.clone()),
        _ => None,
    }) else {
        return;
    };
    push_new(
        out,
        Expectation::ColumnTotal {
            csv: csv.text.clone(),
            column: column.text.clone(),
            out: written,
        },
    );
}

/// "Read sales.csv and write … to total.txt", "create greeting.txt that greets the person
/// named in name.txt": a file the result comes from must be read by the turn.
fn data_reads(tokens: &[Token], out: &mut Vec<Expectation>) {
    let written: Vec<String> = out
        .iter()
        .filter_map(|e| match e {
            Expectation::Exists { path, dir: false } => Some(path.clone()),
            _ => None,
        })
        .collect();
    if written.is_empty() {
        return;
    }
    for (i, t) in tokens.iter().enumerate() {
        let source = tokens[..i]
            .iter()
            .rev()
            .find(|p| !p.is(&["the", "a", "file"]))
            .is_some_and(|p| p.is(&["read", "reading", "from", "in", "of", "using", "on"]));
        if t.is_path() && source && !written.contains(&t.text) {
            push_new(
                out,
                Expectation::Read {
                    path: t.text.clone(),
                },
            );
        }
    }
}

/// "Create the directories logs, data and tmp", "make a folder named `out`", "mkdir -p a/b".
fn folders(tokens: &[Token], out: &mut Vec<Expectation>) {
    let Some(verb) = tokens.iter().position(|t| t.is(CREATE)) else {
        return;
    };
    if tokens[verb].lower == "mkdir" {
        for t in tokens[verb + 1..].iter().take_while(|t| name_like(t)) {
            if !t.text.starts_with('-') {
                out.push(Expectation::Exists {
                    path: t.text.clone(),
                    dir: true,
                });
            }
        }
        return;
    }
    let Some(at) = tokens[verb..].iter().position(|t| t.is(FOLDERS)) else {
        return;
    };
    let at = verb + at;
    // Names after the word ("directories a, b and c"), else before it ("the a and b folders").
    let mut names = list_after(tokens, at + 1);
    if names.is_empty() {
        names = list_before(tokens, verb + 1, at);
    }
    let marked = tokens
        .get(at + 1)
        .is_some_and(|t| t.is(&["named", "called", ":"]));
    let plural = tokens[at].lower.ends_with('s');
    if names.len() == 1 && !marked && !plural && !plainly_a_name(&names[0]) {
        // "create a directory structure …": one plain word is not surely a name.
        return;
    }
    let parent = parent_folder(tokens, at + 1);
    for name in names {
        let path = match &parent {
            Some(p) => format!("{}/{}", p.trim_end_matches('/'), name.text),
            None => name.text.clone(),
        };
        out.push(Expectation::Exists { path, dir: true });
    }
}

/// "… inside src", "… in the `app` folder": where the listed folders go.
fn parent_folder(tokens: &[Token], from: usize) -> Option<String> {
    let at = tokens[from..]
        .iter()
        .position(|t| t.is(&["in", "inside", "under", "within"]))?;
    let rest: Vec<&Token> = tokens[from + at + 1..]
        .iter()
        .filter(|t| !t.is(&["the", "a", "an"]))
        .collect();
    let name = rest.first()?;
    (name_like(name) && (plainly_a_name(name) || rest.get(1).is_some_and(|t| t.is(FOLDERS))))
        .then(|| name.text.clone())
}

/// Names listed from `from`: `a, b and c`, skipping "named", "called", ":" and articles.
fn list_after(tokens: &[Token], from: usize) -> Vec<Token> {
    let mut names = Vec::new();
    for (i, t) in tokens.iter().enumerate().skip(from) {
        if t.is(LIST_GLUE) {
            continue;
        }
        // A name is followed by the list's glue, a word that ends the list, or nothing:
        // in "a folder out and put x.txt in it", `put` starts a new clause.
        let ends_item = tokens
            .get(i + 1)
            .is_none_or(|n| n.is(&[",", "and", "&"]) || n.is(STOP_WORDS));
        if !name_like(t) || t.is(STOP_WORDS) || !ends_item {
            break;
        }
        names.push(t.clone());
    }
    names
}

/// Names listed between the verb and the folder word: "create the logs and data folders".
fn list_before(tokens: &[Token], from: usize, to: usize) -> Vec<Token> {
    let names: Vec<Token> = tokens[from..to]
        .iter()
        .filter(|t| !t.is(LIST_GLUE) && !is_number_word(t))
        .cloned()
        .collect();
    if names.iter().all(|t| name_like(t) && !t.is(STOP_WORDS)) && names.len() >= 2 {
        names
    } else {
        Vec::new()
    }
}

/// Words that end a list of names.
const STOP_WORDS: &[&str] = &[
    "for",
    "with",
    "to",
    "in",
    "inside",
    "under",
    "within",
    "that",
    "which",
    "where",
    "each",
    "one",
    "so",
    "then",
    "also",
    "of",
    "at",
    "on",
    "into",
    "structure",
    "tree",
];

fn is_number_word(t: &Token) -> bool {
    t.is(&[
        "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "new", "empty",
    ]) || t.lower.chars().all(|c| c.is_ascii_digit())
}

/// A token that can be a file or folder name.
fn name_like(t: &Token) -> bool {
    !t.text.is_empty()
        && t.text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '~'))
}

/// A name no English word is: quoted, or with `/`, `_`, `-`, `.` or a digit in it.
fn plainly_a_name(t: &Token) -> bool {
    t.quoted || t.text.contains(['/', '_', '-', '.']) || t.text.chars().any(|c| c.is_ascii_digit())
}

/// "Make deploy.sh executable", "an executable script run.sh", "chmod +x tool.py".
fn executables(tokens: &[Token], out: &mut Vec<Expectation>) {
    let Some(at) = tokens
        .iter()
        .position(|t| t.is(&["executable", "+x", "u+x", "a+x"]))
    else {
        return;
    };
    for (i, t) in tokens.iter().enumerate() {
        let script =
            t.is_path() && extension(&t.text).is_some_and(|e| SCRIPT_EXTENSIONS.contains(&e));
        // The word right before "executable" ("make run executable") or right after "+x".
        let named = t.is_path() && (i + 1 == at || i == at + 1);
        if script || named {
            out.push(Expectation::Executable {
                path: t.text.clone(),
            });
        }
    }
}

/// "Create hello.txt containing 'hi'", "with the text `hi`", "write 'hi' to a.txt",
/// "append 'done' to log.txt".
fn contents(tokens: &[Token], out: &mut Vec<Expectation>) {
    for (i, t) in tokens.iter().enumerate() {
        let introduces = t.is(HOLDING)
            || (t.is(&["with"])
                && tokens.get(i + 1).is_some_and(|n| {
                    n.is(&["the", "text", "content", "contents", "line", "word"])
                }));
        let text = introduces.then(|| content_after(tokens, i + 1)).flatten();
        if let Some(text) = text
            && let Some(file) = tokens[..i].iter().rev().find(|t| t.is_path())
        {
            out.push(Expectation::Holds {
                path: file.text.clone(),
                text,
            });
        }
        // "write/append/add (the line) 'text' to (the end of) file".
        if t.is(&["write", "append", "add", "put", "echo"]) {
            let mut rest = tokens[i + 1..]
                .iter()
                .skip_while(|t| t.is(&["the", "a", "line", "text", "word", "string"]));
            if let Some(q) = rest.next().filter(|q| q.quoted && !q.is_path())
                && rest
                    .next()
                    .is_some_and(|w| w.is(&["to", "into", "in", "at"]))
                && let Some(file) = rest
                    .find(|t| !t.is(&["the", "end", "of", "file", "bottom"]))
                    .filter(|t| t.is_path())
            {
                out.push(Expectation::Holds {
                    path: file.text.clone(),
                    text: q.text.clone(),
                });
            }
        }
    }
}

/// The text a "containing …" phrase asks for: a quoted span, or one word ending the
/// sentence ("containing hi"), after "the text", "the word" and the like.
fn content_after(tokens: &[Token], from: usize) -> Option<String> {
    let rest: Vec<&Token> = tokens[from..]
        .iter()
        .skip_while(|t| {
            t.is(&[
                "the", "text", "content", "contents", "line", "word", "just", "only", "exactly",
                ":", "a", "single",
            ])
        })
        .collect();
    let first = rest.first()?;
    if first.quoted {
        return (!first.text.trim().is_empty()).then(|| first.text.clone());
    }
    // One plain word that ends the sentence.
    (rest.len() == 1 && name_like(first) && !first.is_path()).then(|| first.text.clone())
}

/// "Delete the lines containing 'TODO' from notes.txt", "remove the word 'draft' from a.md",
/// "delete old.log", "replace 'apple' with 'banana' everywhere in notes.txt".
fn removals(tokens: &[Token], out: &mut Vec<Expectation>) {
    let Some(verb) = tokens
        .iter()
        .position(|t| t.is(REMOVE) || t.is(&["replace"]))
    else {
        return;
    };
    let replace = tokens[verb].lower == "replace";
    // "In notes.txt, replace …" names the file first.
    let target = tokens[verb + 1..]
        .iter()
        .rev()
        .find(|t| t.is_path())
        .or_else(|| tokens[..verb].iter().find(|t| t.is_path()));
    let lines = tokens[verb + 1..].iter().any(|t| {
        t.is(&[
            "line",
            "lines",
            "word",
            "words",
            "text",
            "occurrence",
            "occurrences",
            "entry",
            "entries",
            "mention",
            "mentions",
        ]) || t.is(HOLDING)
    });
    if replace {
        // "replace X with Y [everywhere] in F".
        let Some(with) = tokens[verb + 1..]
            .iter()
            .position(|t| t.is(&["with", "by"]))
        else {
            return;
        };
        let with = verb + 1 + with;
        let old = one_value(&tokens[verb + 1..with]);
        let new = tokens
            .get(with + 1)
            .filter(|t| t.quoted || (name_like(t) && !t.is_path()));
        let every = tokens.iter().any(|t| t.is(&["everywhere", "all", "every"]));
        if let Some(file) = target {
            if let (Some(old), true) = (&old, every) {
                out.push(Expectation::Lacks {
                    path: file.text.clone(),
                    text: old.clone(),
                });
            }
            if let Some(new) = new {
                out.push(Expectation::Holds {
                    path: file.text.clone(),
                    text: new.text.clone(),
                });
            }
        }
        return;
    }
    if lines {
        let from = tokens[verb + 1..]
            .iter()
            .position(|t| t.is(&["from", "in"]));
        let Some(from) = from.map(|f| verb + 1 + f) else {
            return;
        };
        let Some(file) = tokens[from + 1..].iter().find(|t| t.is_path()) else {
            return;
        };
        if let Some(text) = one_value(&tokens[verb + 1..from]) {
            out.push(Expectation::Lacks {
                path: file.text.clone(),
                text,
            });
        }
        return;
    }
    // "delete (the file) old.log".
    let named: Vec<&Token> = tokens[verb + 1..]
        .iter()
        .filter(|t| !t.is(&["the", "file", "files", ",", "and", "folder", "directory"]))
        .collect();
    if !named.is_empty() && named.iter().all(|t| t.is_path()) {
        for t in named {
            out.push(Expectation::Gone {
                path: t.text.clone(),
            });
        }
    }
}

/// The one value a phrase names: its only quoted span, or the word after "containing",
/// "the word", "mentioning" and the like.
fn one_value(tokens: &[Token]) -> Option<String> {
    let quoted: Vec<&Token> = tokens.iter().filter(|t| t.quoted && !t.is_path()).collect();
    if let [one] = quoted.as_slice() {
        return Some(one.text.clone());
    }
    if !quoted.is_empty() {
        return None;
    }
    let at = tokens.iter().position(|t| {
        t.is(HOLDING) || t.is(&["word", "mentioning", "mentions", "mention", "with"])
    })?;
    let next = tokens.get(at + 1)?;
    (name_like(next)
        && !next.is(STOP_WORDS)
        && !next.is(&["the", "a", "an"])
        && tokens.len() == at + 2)
        .then(|| next.text.clone())
}

/// "Rename the function load to read_config in a.py and b.py" (every file named stops
/// using the old name and uses the new one); "rename a.txt to b.txt".
fn renames(tokens: &[Token], out: &mut Vec<Expectation>) {
    let Some(verb) = tokens.iter().position(|t| t.is(&["rename"])) else {
        return;
    };
    let Some(to) = tokens[verb + 1..].iter().position(|t| t.is(&["to"])) else {
        return;
    };
    let to = verb + 1 + to;
    let old = tokens[verb + 1..to]
        .iter()
        .rev()
        .find(|t| !t.is(&["the", "function", "method", "class", "variable", "file"]));
    let new = tokens.get(to + 1);
    let (Some(old), Some(new)) = (old, new) else {
        return;
    };
    if old.is_path() && new.is_path() {
        out.push(Expectation::Gone {
            path: old.text.clone(),
        });
        out.push(Expectation::Exists {
            path: new.text.clone(),
            dir: false,
        });
        return;
    }
    if !identifier(&old.text) || !identifier(&new.text) {
        return;
    }
    // `greet()` names the function `greet`.
    let (old, new) = (
        old.text.trim_end_matches("()"),
        new.text.trim_end_matches("()"),
    );
    for file in tokens[to + 2..].iter().filter(|t| t.is_path()) {
        out.push(Expectation::Lacks {
            path: file.text.clone(),
            text: old.to_string(),
        });
        out.push(Expectation::Holds {
            path: file.text.clone(),
            text: new.to_string(),
        });
    }
}

fn identifier(s: &str) -> bool {
    let s = s.trim_end_matches("()");
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// "Create a file hello.txt", "write a script count.py that …": the files a create verb
/// names, up to the first word that says where they come from.
fn created_files(tokens: &[Token], out: &mut Vec<Expectation>) {
    let Some(verb) = tokens
        .iter()
        .position(|t| t.is(&["create", "write", "make", "generate", "save"]))
    else {
        return;
    };
    for t in &tokens[verb + 1..] {
        if t.is(&[
            "from", "using", "based", "reading", "read", "of", "in", "inside", "into", "to",
            "under", "that", "which",
        ]) {
            break;
        }
        if t.is_path() {
            out.push(Expectation::Exists {
                path: t.text.clone(),
                dir: false,
            });
        }
    }
    // "write the total of the amount column to total.txt": the file after `to`/`into`.
    if matches!(tokens[verb].lower.as_str(), "write" | "save")
        && let Some(to) = tokens[verb + 1..]
            .iter()
            .position(|t| t.is(&["to", "into"]))
        && let Some(file) = tokens[verb + 2 + to..]
            .iter()
            .find(|t| !t.is(&["the", "a", "file", "new"]))
        && file.is_path()
    {
        let e = Expectation::Exists {
            path: file.text.clone(),
            dir: false,
        };
        if !out.contains(&e) {
            out.push(e);
        }
    }
}

/// "… so that test_calc.py passes", "make `python3 -m pytest` pass".
fn passing_tests(tokens: &[Token], out: &mut Vec<Expectation>) {
    if !tokens
        .iter()
        .any(|t| t.is(&["pass", "passes", "passing", "succeed", "succeeds", "green"]))
    {
        return;
    }
    for t in tokens {
        let name = t.text.rsplit('/').next().unwrap_or(&t.text);
        let test_file = t.is_path()
            && (name.starts_with("test_")
                || name.contains("_test.")
                || name.contains(".test.")
                || name.contains(".spec."));
        let command = t.quoted
            && t.text.contains(' ')
            && (t.lower.contains("test") || t.lower.contains("make"));
        if test_file || command {
            out.push(Expectation::Passes {
                test: t.text.clone(),
            });
        }
    }
}

/// The request cut into sentences: at line breaks, and at `.`, `;`, `!` or `?` before a
/// space (not inside `hello.txt` or a quoted span).
fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let prev = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1).copied();
        match quote {
            Some(q) if c == q && closes_quote(q, next) => quote = None,
            Some(_) => {}
            None if opens_quote(c, prev) && chars[i + 1..].contains(&c) => quote = Some(c),
            None => {}
        }
        let ends = quote.is_none()
            && (c == '\n'
                || (matches!(c, '.' | ';' | '!' | '?') && next.is_none_or(char::is_whitespace)));
        if ends {
            if c != '\n' {
                current.push(c);
            }
            out.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    out.push(current);
    out.retain(|s| !s.trim().is_empty());
    out
}

fn opens_quote(c: char, prev: Option<char>) -> bool {
    matches!(c, '"' | '`' | '\u{201c}') || (c == '\'' && prev.is_none_or(|p| !p.is_alphanumeric()))
}

fn closes_quote(q: char, next: Option<char>) -> bool {
    q != '\'' || next.is_none_or(|n| !n.is_alphanumeric())
}

/// Words, quoted spans and list commas of one sentence; a sentence's final `.`, `,` and
/// the like are not part of the word before them.
fn tokenize(sentence: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let chars: Vec<char> = sentence.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let prev = i.checked_sub(1).map(|p| chars[p]);
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if opens_quote(c, prev) {
            let close = if c == '\u{201c}' { '\u{201d}' } else { c };
            if let Some(len) = (i + 1..chars.len())
                .find(|&j| chars[j] == close && closes_quote(close, chars.get(j + 1).copied()))
            {
                let text: String = chars[i + 1..len].iter().collect();
                tokens.push(Token {
                    lower: text.to_lowercase(),
                    text,
                    quoted: true,
                });
                i = len + 1;
                continue;
            }
        }
        if matches!(c, ',' | ':' | '(' | ')') {
            tokens.push(Token {
                text: c.to_string(),
                lower: c.to_string(),
                quoted: false,
            });
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && !chars[i].is_whitespace() && !matches!(chars[i], ',' | '(' | ')') {
            i += 1;
        }
        let word: String = chars[start..i].iter().collect();
        // A trailing `:` or sentence mark is punctuation, not part of the word.
        let trimmed = word.trim_end_matches(['.', ':', ';', '!', '?', '"', '\'']);
        if !trimmed.is_empty() {
            tokens.push(Token {
                lower: trimmed.to_lowercase(),
                text: trimmed.to_string(),
                quoted: false,
            });
        }
        if word.ends_with(':') {
            tokens.push(Token {
                text: ":".into(),
                lower: ":".into(),
                quoted: false,
            });
        }
    }
    tokens
}

/// A path: one word with a `/` or a file extension (`hello.txt`, `src/lib.rs`), not a URL
/// or a number.
pub(crate) fn looks_like_path(word: &str) -> bool {
    if word.is_empty()
        || word.contains("://")
        || word.chars().any(char::is_whitespace)
        || !word.chars().any(|c| c.is_ascii_alphabetic())
        || word.ends_with('.')
        || matches!(word.to_ascii_lowercase().as_str(), "e.g" | "i.e" | "etc")
    {
        return false;
    }
    let ok_chars = word
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '~'));
    ok_chars && (word.contains('/') && word.len() > 1 || extension(word).is_some())
}

/// The extension of a file name: 1–6 ASCII letters or digits after a non-empty stem, with at
/// least one letter (not `1.5`).
fn extension(word: &str) -> Option<&str> {
    let name = word.rsplit('/').next().unwrap_or(word);
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty()
        && (1..=6).contains(&ext.len())
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
        && ext.chars().any(|c| c.is_ascii_alphabetic()))
    .then_some(ext)
}

/// The name a question asks the defining file of ("Which file in this project defines the
/// function load_settings?", "Where is `parse_args` defined?"): a code name (quoted, with
/// `_` or `()`, or after "function"/"class"/"method"), not a path. The caller checks the
/// answer against the files that hold it.
pub(crate) fn asked_definition(request: &str) -> Option<String> {
    let tokens = tokenize(request);
    let about_a_file = tokens.iter().any(|t| {
        t.is(&[
            "file", "files", "defined", "defines", "define", "declared", "declares", "where",
        ])
    });
    if !about_a_file {
        return None;
    }
    tokens.iter().enumerate().find_map(|(i, t)| {
        let after_kind = i > 0 && tokens[i - 1].is(&["function", "class", "method", "def"]);
        let name = t.text.trim_end_matches("()");
        let code_like = t.quoted || name.contains('_') || t.text.ends_with("()") || after_kind;
        (code_like && identifier(name) && !t.is_path() && name.len() >= 3 && !t.is(STOP_WORDS))
            .then(|| name.to_string())
    })
}

/// Bytes read, in all, when looking for the files that name something.
const SEARCH_BYTES: u64 = 16 * 1024 * 1024;
/// Files larger than this are not searched (generated or data files).
const SEARCH_FILE_BYTES: u64 = 512 * 1024;

/// The files under `cwd` (as relative paths) that contain `name` as a whole word, bounded
/// in depth, entries and bytes; `None` when the bounds were hit before the search ended
/// (then nothing is claimed about the tree).
pub(crate) fn files_naming(cwd: &Path, name: &str) -> Option<Vec<String>> {
    let mut found = Vec::new();
    let mut queue = std::collections::VecDeque::from([(cwd.to_path_buf(), 0usize)]);
    let (mut seen, mut bytes) = (0usize, 0u64);
    while let Some((dir, depth)) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > SEARCH_ENTRIES || bytes > SEARCH_BYTES {
                return None;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let file_name = entry.file_name();
            let skip = file_name.to_str().is_none_or(|n| {
                n.starts_with('.')
                    || matches!(n, "node_modules" | "target" | "venv" | "__pycache__")
            });
            if skip {
                continue;
            }
            if kind.is_dir() {
                if depth + 1 < SEARCH_DEPTH {
                    queue.push_back((entry.path(), depth + 1));
                }
                continue;
            }
            let size = entry.metadata().map_or(u64::MAX, |m| m.len());
            if !kind.is_file() || size > SEARCH_FILE_BYTES {
                continue;
            }
            bytes += size;
            if let Some(text) = read(&entry.path())
                && contains_word(&text, name)
                && let Ok(rel) = entry.path().strip_prefix(cwd)
            {
                found.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    found.sort();
    Some(found)
}

/// Bytes read of a file whose content is checked.
const MAX_CHECKED_BYTES: u64 = 1024 * 1024;
/// How deep, and how many entries, the search for a file named without its folder goes.
const SEARCH_DEPTH: usize = 4;
const SEARCH_ENTRIES: usize = 4000;

/// What the commands of the turn did, for [`Expectation::Passes`]: each call in order, with
/// whether it ran a command, whether it succeeded and whether it may have written files.
#[derive(Clone, Debug)]
pub(crate) struct Step {
    pub command: Option<String>,
    pub ok: bool,
    pub writes: bool,
    /// The call's raw arguments, whatever the tool (a read tool's path, a patch's text).
    pub args: String,
}

/// The expectations that do not hold, each as a phrase for the model and the user
/// ("`run.sh` is not executable"). Reads the disk: call off the async workers.
pub(crate) fn unmet(expectations: &[Expectation], cwd: &Path, steps: &[Step]) -> Vec<String> {
    let mut out = Vec::new();
    for e in expectations {
        if let Some(problem) = check_one(e, cwd, steps) {
            out.push(problem);
        }
    }
    out
}

fn check_one(e: &Expectation, cwd: &Path, steps: &[Step]) -> Option<String> {
    match e {
        Expectation::Exists { path, dir } => {
            let found = find(cwd, path);
            match (found, dir) {
                (None, true) => Some(format!("the folder `{path}` does not exist")),
                (None, false) => Some(format!("`{path}` does not exist")),
                (Some(p), true) if !p.is_dir() => Some(format!("`{path}` is not a folder")),
                _ => None,
            }
        }
        Expectation::Gone { path } => cwd
            .join(path)
            .symlink_metadata()
            .is_ok()
            .then(|| format!("`{path}` still exists")),
        Expectation::Executable { path } => {
            let Some(p) = find(cwd, path) else {
                return Some(format!("`{path}` does not exist"));
            };
            (!is_executable(&p))
                .then(|| format!("`{path}` is not executable (it needs `chmod +x {path}`)"))
        }
        Expectation::Holds { path, text } => {
            let Some(p) = find(cwd, path) else {
                return Some(format!("`{path}` does not exist"));
            };
            let content = read(&p)?;
            (!content.contains(text.as_str()))
                .then(|| format!("`{path}` does not contain `{text}`"))
        }
        Expectation::Lacks { path, text } => {
            let content = read(&find(cwd, path)?)?;
            let placeholder = text.starts_with('<') && text.ends_with('>');
            contains_word(&content, text).then(|| {
                if placeholder {
                    format!("`{path}` still holds the placeholder `{text}`: write the real value in its place")
                } else {
                    format!("`{path}` still contains `{text}`")
                }
            })
        }
        Expectation::Passes { test } => passes(test, steps),
        Expectation::Sets { path, keys, value } => {
            check_sets(path, &read(&find(cwd, path)?)?, keys, value)
        }
        Expectation::Read { path } => {
            // Only a file there is data to read (`in src/app` may name where to create).
            if !cwd.join(path).is_file() {
                return None;
            }
            let name = path.rsplit('/').next().unwrap_or(path);
            (!steps.iter().any(|s| s.ok && s.args.contains(name))).then(|| {
                format!("`{path}` was not read: no command or tool of this turn used it, so what was written from it cannot be right")
            })
        }
        Expectation::ColumnTotal { csv, column, out } => {
            let total = column_sum(&read(&find(cwd, csv)?)?, column)?;
            let written = read(&find(cwd, out)?)?;
            (!numbers_in(&written).any(|n| (n - total).abs() <= 1e-6 * total.abs().max(1.0)))
                .then(|| {
                    format!("`{out}` does not hold the total of the `{column}` column of `{csv}` (compute it from the file, for example with python3, and write it)")
                })
        }
    }
}

/// The sum of a column of a plain CSV text (a header row, commas, numbers in that column);
/// `None` when the text is not that plain, so nothing is claimed about it.
fn column_sum(text: &str, column: &str) -> Option<f64> {
    if text.contains('"') {
        return None;
    }
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<&str> = lines.next()?.split(',').map(str::trim).collect();
    let at = header.iter().position(|h| h.eq_ignore_ascii_case(column))?;
    let mut sum = 0.0;
    for line in lines {
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != header.len() {
            return None;
        }
        sum += fields[at].parse::<f64>().ok()?;
    }
    Some(sum)
}

/// The numbers written in `text` (`Total: 128`, `128.0`).
fn numbers_in(text: &str) -> impl Iterator<Item = f64> + '_ {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .filter_map(|w| w.trim_matches('.').parse::<f64>().ok())
}

/// Whether the last run of `test` came after the last change and passed.
fn passes(test: &str, steps: &[Step]) -> Option<String> {
    let name = test.rsplit('/').next().unwrap_or(test);
    let stem = name.split('.').next().unwrap_or(name);
    // A Python test file also runs under a test runner that finds it by itself.
    let python = name.ends_with(".py");
    let runs_test = |s: &Step| {
        s.command.as_deref().is_some_and(|c| {
            c.contains(test)
                || c.contains(name)
                || (!stem.is_empty() && c.contains(stem))
                || (python && (c.contains("pytest") || c.contains("unittest")))
        })
    };
    let last_run = steps.iter().rposition(runs_test);
    let last_write = steps
        .iter()
        .rposition(|s| s.writes && s.ok && !runs_test(s));
    match (last_run, last_write) {
        (None, _) => Some(format!("`{test}` was not run to check the result")),
        (Some(r), Some(w)) if w > r => {
            Some(format!("`{test}` was not run again after the last change"))
        }
        (Some(r), _) if !steps[r].ok => Some(format!(
            "`{test}` still fails (its last run exited with an error)"
        )),
        _ => None,
    }
}

/// `text` appears in `content`; as a whole word when `text` is one word (so `load` is not
/// found in `load_config`).
fn contains_word(content: &str, text: &str) -> bool {
    if !identifier(text) {
        return content.contains(text);
    }
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    content.match_indices(text).any(|(i, _)| {
        let before = content[..i].chars().next_back();
        let after = content[i + text.len()..].chars().next();
        !before.is_some_and(word) && !after.is_some_and(word)
    })
}

/// `path` under `cwd`; a bare name not found there is looked for in the folders below (a
/// task may say "create hello.txt in the out folder"), bounded.
fn find(cwd: &Path, path: &str) -> Option<PathBuf> {
    let direct = if Path::new(path).is_absolute() {
        PathBuf::from(path)
    } else {
        cwd.join(path)
    };
    if direct.symlink_metadata().is_ok() {
        return Some(direct);
    }
    if path.contains('/') {
        return None;
    }
    let mut queue = std::collections::VecDeque::from([(cwd.to_path_buf(), 0usize)]);
    let mut seen = 0usize;
    while let Some((dir, depth)) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > SEARCH_ENTRIES {
                return None;
            }
            let name = entry.file_name();
            if name.to_str() == Some(path) {
                return Some(entry.path());
            }
            let skip = matches!(
                name.to_str(),
                Some(".git" | "node_modules" | "target" | ".venv" | "venv" | "__pycache__")
            );
            if !skip && depth + 1 < SEARCH_DEPTH && entry.file_type().is_ok_and(|t| t.is_dir()) {
                queue.push_back((entry.path(), depth + 1));
            }
        }
    }
    None
}

fn read(path: &Path) -> Option<String> {
    oi_config::project_file::read_text_capped(path, MAX_CHECKED_BYTES).ok()
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

#[cfg(test)]
#[path = "task_tests.rs"]
mod tests;

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
    out
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
            contains_word(&content, text).then(|| format!("`{path}` still contains `{text}`"))
        }
        Expectation::Passes { test } => passes(test, steps),
    }
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

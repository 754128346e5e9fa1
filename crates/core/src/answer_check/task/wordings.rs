//! The wordings that state an expectation: one function per kind of task, each reading only
//! the plainest phrasing of it.

use super::words::looks_like_path;
use super::words::{
    CREATE, FOLDERS, HOLDING, REMOVE, SCRIPT_EXTENSIONS, STOP_WORDS, Token, content_after,
    extension, identifier, is_value, list_after, list_before, name_like, one_value, parent_folder,
    plainly_a_name, tokenize,
};
use super::{Expectation, push_new};

/// "Create greeting.txt … in the form Hello, <name>!": `<name>` stands for something to
/// fill in, so a file the sentence makes must not hold it as written (recorded: the 1.5B
/// model wrote `Hello, <name>!` and said it was done).
pub(super) fn placeholders(tokens: &[Token], out: &mut Vec<Expectation>) {
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

/// "… in the form Hello, <name>!": the whole text of the one file written, with one
/// placeholder, read from the request as written (the form's punctuation is part of it): from
/// the word after `form`/`format` to the end of the sentence after the placeholder.
pub(super) fn form(request: &str, out: &mut Vec<Expectation>) {
    let written: Vec<&String> = out
        .iter()
        .filter_map(|e| match e {
            Expectation::Exists { path, dir: false } => Some(path),
            _ => None,
        })
        .collect();
    let [path] = written.as_slice() else {
        return;
    };
    let path = (*path).clone();
    let lower = request.to_ascii_lowercase();
    let Some(at) = [" form ", " format "]
        .iter()
        .filter_map(|w| lower.find(w).map(|i| i + w.len()))
        .min()
    else {
        return;
    };
    let rest = &request[at..];
    let (Some(open), Some(close)) = (rest.find('<'), rest.find('>')) else {
        return;
    };
    if close < open {
        return;
    }
    // The form ends where its sentence does: at punctuation followed by a space or the end.
    let tail = &rest[close + 1..];
    let end = tail
        .char_indices()
        .find(|&(i, c)| {
            matches!(c, '.' | '!' | '?') && tail[i + 1..].starts_with(char::is_whitespace)
        })
        .map_or(tail.trim_end().len(), |(i, _)| i + 1);
    let after = tail[..end].trim_end();
    let after = after.strip_suffix('.').unwrap_or(after);
    let placeholder = &rest[open + 1..close];
    let before = &rest[..open];
    if placeholder.is_empty()
        || !placeholder
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        || before.contains(['<', '>'])
        || after.contains(['<', '>'])
        || before.len() > 200
    {
        return;
    }
    let source = request[..at]
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| matches!(c, ',' | '.' | '`' | '\'' | '"' | ';' | ':')))
        .filter(|w| looks_like_path(w) && *w != path)
        .find(|w| {
            let name = w.rsplit('/').next().unwrap_or(w);
            name.split('.').next() == Some(placeholder)
        })
        .map(str::to_string);
    push_new(
        out,
        Expectation::Form {
            path,
            before: before.to_string(),
            placeholder: placeholder.to_string(),
            after: after.to_string(),
            source,
        },
    );
}

/// Verbs that give something a new value.
pub(super) const SET: &[&str] = &[
    "change", "set", "update", "bump", "increase", "raise", "lower", "decrease",
];

/// "In config.toml, change the server port to 8080", "set `name` = \"demo\" in a.toml": the
/// value a setting is given must be in the one file the sentence names. Only numbers and
/// quoted values count ("change the greeting to uppercase" names no text to find).
pub(super) fn set_values(tokens: &[Token], out: &mut Vec<Expectation>) {
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
pub(super) fn setting_words(tokens: &[Token]) -> Vec<String> {
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

/// "Add a function greet to utils.py", "create mathx.py with a function mul(a, b)": the
/// function (method, class) the task makes must be named in its file.
pub(super) fn named_functions(tokens: &[Token], out: &mut Vec<Expectation>) {
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
pub(super) fn column_totals(tokens: &[Token], out: &mut Vec<Expectation>) {
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
pub(super) fn data_reads(tokens: &[Token], out: &mut Vec<Expectation>) {
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
pub(super) fn folders(tokens: &[Token], out: &mut Vec<Expectation>) {
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

/// "Make deploy.sh executable", "an executable script run.sh", "chmod +x tool.py".
pub(super) fn executables(tokens: &[Token], out: &mut Vec<Expectation>) {
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
pub(super) fn contents(tokens: &[Token], out: &mut Vec<Expectation>) {
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
            let filler = ["the", "a", "line", "text", "word", "string"];
            let a_line = tokens[i + 1..]
                .iter()
                .take_while(|t| t.is(&filler))
                .any(|t| t.is(&["line"]));
            let mut rest = tokens[i + 1..].iter().skip_while(|t| t.is(&filler));
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
                if a_line {
                    out.push(Expectation::HoldsLine {
                        path: file.text.clone(),
                        text: q.text.clone(),
                    });
                }
            }
        }
    }
}

/// "Delete the lines containing 'TODO' from notes.txt", "remove the word 'draft' from a.md",
/// "delete old.log", "replace 'apple' with 'banana' everywhere in notes.txt".
pub(super) fn removals(tokens: &[Token], out: &mut Vec<Expectation>) {
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
                if let Some(old) = old {
                    out.push(Expectation::Replaced {
                        path: file.text.clone(),
                        old,
                        new: new.text.clone(),
                        every,
                    });
                }
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

/// "Rename the function load to read_config in a.py and b.py" (every file named stops
/// using the old name and uses the new one); "rename a.txt to b.txt".
pub(super) fn renames(tokens: &[Token], out: &mut Vec<Expectation>) {
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

/// "Create a file hello.txt", "write a script count.py that …": the files a create verb
/// names, up to the first word that says where they come from.
pub(super) fn created_files(tokens: &[Token], out: &mut Vec<Expectation>) {
    file_written_to(tokens, out);
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
            let code = tokens
                .iter()
                .any(|t| t.is(&["script", "program", "prints"]));
            let empty = tokens.iter().any(|t| t.is(&["empty", "blank"]));
            if code && !empty {
                out.push(Expectation::NotEmpty {
                    path: t.text.clone(),
                });
            }
        }
    }
}

/// "Write the total of the amount column to total.txt", "record the deploy in deploys.log":
/// the file after `to`/`into`/`in` must be there afterwards, and hold something unless the
/// sentence asks for nothing (recorded on Qwen2.5-Coder-1.5B: the skill's instructions
/// repeated as the answer, exit 0, no deploys.log; then, without the skill, `touch
/// deploys.log` and "The file `deploys.log` has been created.", exit 0).
fn file_written_to(tokens: &[Token], out: &mut Vec<Expectation>) {
    let Some(verb) = tokens
        .iter()
        .position(|t| t.is(&["write", "save", "record", "log"]))
    else {
        return;
    };
    let into: &[&str] = if tokens[verb].is(&["record", "log"]) {
        &["to", "into", "in"]
    } else {
        &["to", "into"]
    };
    if let Some(to) = tokens[verb + 1..].iter().position(|t| t.is(into))
        && let Some(file) = tokens[verb + 2 + to..]
            .iter()
            .find(|t| !t.is(&["the", "a", "file", "new"]))
        && file.is_path()
    {
        push_new(
            out,
            Expectation::Exists {
                path: file.text.clone(),
                dir: false,
            },
        );
        let nothing = tokens
            .iter()
            .any(|t| t.is(&["empty", "blank", "nothing", "truncate", "clear"]));
        if !nothing {
            push_new(
                out,
                Expectation::NotEmpty {
                    path: file.text.clone(),
                },
            );
        }
        // What is recorded names the version it is about (recorded: "Deployment logged in
        // deploys.log" for the deploy of version 2.4.1).
        if tokens[verb].is(&["record", "log"]) {
            for version in tokens.iter().filter_map(|t| version_of(&t.text)) {
                push_new(
                    out,
                    Expectation::Holds {
                        path: file.text.clone(),
                        text: version.to_string(),
                    },
                );
            }
        }
    }
}

/// `2.4.1`, `v1.2` (a trailing full stop or comma is the sentence's): a version number.
fn version_of(word: &str) -> Option<&str> {
    let word = word.trim_end_matches(['.', ',', ';', ':']);
    let digits = word.strip_prefix('v').unwrap_or(word);
    let parts: Vec<&str> = digits.split('.').collect();
    (parts.len() >= 2
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())))
    .then_some(word)
}

/// "… so that test_calc.py passes", "make `python3 -m pytest` pass".
pub(super) fn passing_tests(tokens: &[Token], out: &mut Vec<Expectation>) {
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

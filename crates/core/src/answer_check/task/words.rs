//! Reading a request: sentences, words and quoted spans, and the small phrases (lists of
//! names, "containing …", "inside …") the wording rules are built from.

/// A piece of a sentence: a word, a quoted span, or punctuation that separates lists.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Token {
    /// As written, without quotes.
    pub(super) text: String,
    /// Lower case, for matching words.
    pub(super) lower: String,
    /// Written in quotes or backticks.
    pub(super) quoted: bool,
}

impl Token {
    pub(super) fn is(&self, words: &[&str]) -> bool {
        !self.quoted && words.contains(&self.lower.as_str())
    }

    pub(super) fn is_path(&self) -> bool {
        looks_like_path(&self.text)
    }
}

/// A value a file can be checked for: a quoted span that is no path, or a number.
pub(super) fn is_value(t: &Token) -> bool {
    if t.quoted {
        return !t.text.trim().is_empty() && !t.is_path();
    }
    let digits = t.text.trim_start_matches(['-', '+']);
    digits.starts_with(|c: char| c.is_ascii_digit())
        && !digits.ends_with('.')
        && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
}

/// "… inside src", "… in the `app` folder": where the listed folders go.
pub(super) fn parent_folder(tokens: &[Token], from: usize) -> Option<String> {
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
pub(super) fn list_after(tokens: &[Token], from: usize) -> Vec<Token> {
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
pub(super) fn list_before(tokens: &[Token], from: usize, to: usize) -> Vec<Token> {
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
pub(super) const STOP_WORDS: &[&str] = &[
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

pub(super) fn is_number_word(t: &Token) -> bool {
    t.is(&[
        "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "new", "empty",
    ]) || t.lower.chars().all(|c| c.is_ascii_digit())
}

/// A token that can be a file or folder name.
pub(super) fn name_like(t: &Token) -> bool {
    !t.text.is_empty()
        && t.text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '~'))
}

/// A name no English word is: quoted, or with `/`, `_`, `-`, `.` or a digit in it.
pub(super) fn plainly_a_name(t: &Token) -> bool {
    t.quoted || t.text.contains(['/', '_', '-', '.']) || t.text.chars().any(|c| c.is_ascii_digit())
}

/// The text a "containing …" phrase asks for: a quoted span, or one word ending the
/// sentence ("containing hi"), after "the text", "the word" and the like.
pub(super) fn content_after(tokens: &[Token], from: usize) -> Option<String> {
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

/// The one value a phrase names: its only quoted span, or the word after "containing",
/// "the word", "mentioning" and the like.
pub(super) fn one_value(tokens: &[Token]) -> Option<String> {
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

pub(super) fn identifier(s: &str) -> bool {
    let s = s.trim_end_matches("()");
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

/// The request cut into sentences: at line breaks, and at `.`, `;`, `!` or `?` before a
/// space (not inside `hello.txt` or a quoted span).
pub(super) fn sentences(text: &str) -> Vec<String> {
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

pub(super) fn opens_quote(c: char, prev: Option<char>) -> bool {
    matches!(c, '"' | '`' | '\u{201c}') || (c == '\'' && prev.is_none_or(|p| !p.is_alphanumeric()))
}

pub(super) fn closes_quote(q: char, next: Option<char>) -> bool {
    q != '\'' || next.is_none_or(|n| !n.is_alphanumeric())
}

/// Words, quoted spans and list commas of one sentence; a sentence's final `.`, `,` and
/// the like are not part of the word before them.
pub(super) fn tokenize(sentence: &str) -> Vec<Token> {
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
pub(super) fn extension(word: &str) -> Option<&str> {
    let name = word.rsplit('/').next().unwrap_or(word);
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty()
        && (1..=6).contains(&ext.len())
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
        && ext.chars().any(|c| c.is_ascii_alphabetic()))
    .then_some(ext)
}

/// Verbs that make something new.
pub(super) const CREATE: &[&str] = &[
    "create", "write", "make", "add", "generate", "save", "mkdir",
];
/// Verbs that take something away.
pub(super) const REMOVE: &[&str] = &["delete", "remove", "rm", "drop", "erase"];
/// Words that introduce what a file must contain.
pub(super) const HOLDING: &[&str] = &["containing", "contains", "contain", "saying", "says"];
/// Words that name folders.
pub(super) const FOLDERS: &[&str] = &[
    "directory",
    "directories",
    "folder",
    "folders",
    "dir",
    "dirs",
];
/// Words inside a list of names that are not names.
pub(super) const LIST_GLUE: &[&str] = &[",", "and", "&", "named", "called", ":", "the", "a", "an"];
/// Extensions of files that are run as programs.
pub(super) const SCRIPT_EXTENSIONS: &[&str] = &["sh", "bash", "py", "pl", "rb", "js", "zsh"];

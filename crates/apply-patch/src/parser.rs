//! Text → [`Patch`]. Strict about structure (so a malformed patch is reported with the line
//! and what was expected), lenient about the envelope (heredoc wrappers, CRLF, a missing final
//! newline, blank context lines that lost their leading space).

use std::fmt;
use std::path::PathBuf;

use crate::invocation;

const BEGIN_PATCH: &str = "*** Begin Patch";
const END_PATCH: &str = "*** End Patch";
const ADD_FILE: &str = "*** Add File: ";
const DELETE_FILE: &str = "*** Delete File: ";
const UPDATE_FILE: &str = "*** Update File: ";
const MOVE_TO: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";

/// A parsed patch: one entry per file header, in patch order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Patch {
    /// The file sections, in patch order.
    pub hunks: Vec<FileHunk>,
    /// An `Add File` of a file that exists replaces its content (a harness profile's
    /// whole-file write). A parsed patch has `false`: there it is refused, so a model that
    /// means to edit never silently drops a file's lines.
    pub add_replaces: bool,
}

/// One `*** Add File` / `*** Delete File` / `*** Update File` section. Paths are exactly as
/// written in the patch (relative or absolute); [`crate::plan_patch`] resolves them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileHunk {
    /// `contents` is every `+` line followed by `\n` (empty when the section has no lines).
    Add {
        /// The file to create.
        path: PathBuf,
        /// Its content.
        contents: String,
    },
    /// `*** Delete File`: removes a file.
    Delete {
        /// The file to remove.
        path: PathBuf,
    },
    /// `*** Update File`: changes a file in place, or moves it.
    Update {
        /// The file to change.
        path: PathBuf,
        /// Where it moves to (`*** Move to`), if anywhere.
        move_to: Option<PathBuf>,
        /// The `@@` chunks, in file order.
        chunks: Vec<UpdateChunk>,
    },
}

impl FileHunk {
    /// The path named in the section header.
    pub fn path(&self) -> &PathBuf {
        match self {
            FileHunk::Add { path, .. }
            | FileHunk::Delete { path }
            | FileHunk::Update { path, .. } => path,
        }
    }
}

/// One `@@` section of an update.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UpdateChunk {
    /// Text after `@@ `: a line that must appear (searching forward) before this chunk.
    pub change_context: Option<String>,
    /// Context, removed and added lines in patch order.
    pub lines: Vec<HunkLine>,
    /// `*** End of File` followed this chunk: its old lines should sit at the end of the file.
    pub is_end_of_file: bool,
    /// 1-based line of the patch where this chunk starts (for error messages).
    pub patch_line: usize,
}

/// A line of an update chunk, without its one-character prefix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HunkLine {
    /// ` ` prefix (or an entirely empty line): present before and after.
    Context(String),
    /// `-` prefix.
    Remove(String),
    /// `+` prefix.
    Add(String),
}

impl UpdateChunk {
    /// Lines the file must contain before the change (context + removed).
    pub fn old_lines(&self) -> Vec<&str> {
        old_lines(&self.lines)
    }

    /// Lines the file will contain after the change (context + added).
    pub fn new_lines(&self) -> Vec<&str> {
        self.lines
            .iter()
            .filter_map(|l| match l {
                HunkLine::Context(s) | HunkLine::Add(s) => Some(s.as_str()),
                HunkLine::Remove(_) => None,
            })
            .collect()
    }
}

/// Context + removed lines of a run of hunk lines.
pub(crate) fn old_lines(lines: &[HunkLine]) -> Vec<&str> {
    lines
        .iter()
        .filter_map(|l| match l {
            HunkLine::Context(s) | HunkLine::Remove(s) => Some(s.as_str()),
            HunkLine::Add(_) => None,
        })
        .collect()
}

/// A structural problem in the patch text. `line` is 1-based in the text given to
/// [`parse_patch`] (after any heredoc wrapper, counted in the original input).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// The 1-based line of the problem.
    pub line: usize,
    /// What is wrong and how to write it instead.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Invalid patch at line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Parse a patch. Accepts the bare `*** Begin Patch … *** End Patch` text, or the same wrapped
/// in a heredoc (`<<'EOF' … EOF`, `apply_patch <<'EOF' … EOF`, `bash -lc "apply_patch <<'EOF' …"`).
pub fn parse_patch(input: &str) -> Result<Patch, ParseError> {
    let (text, offset) = unwrap_envelope(input);
    Parser::new(&text, offset).parse()
}

/// Strip a shell/heredoc wrapper if there is one. Returns the patch text and how many input
/// lines precede its first line (so error line numbers point into the caller's input).
fn unwrap_envelope(input: &str) -> (String, usize) {
    let first = input.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    if first.trim().starts_with("***") {
        return (input.to_string(), 0);
    }
    let extracted = invocation::extract_from_script(input, true)
        .map(|(body, _)| body)
        .or_else(|| {
            let argv = shlex::split(input.trim())?;
            invocation::extract_from_argv(&argv).map(|(body, _)| body)
        });
    match extracted {
        Some(body) => {
            let body_first = body
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim();
            let offset = input
                .lines()
                .position(|l| l.trim() == body_first)
                .unwrap_or(0);
            let leading_blank = body.lines().take_while(|l| l.trim().is_empty()).count();
            (body, offset.saturating_sub(leading_blank))
        }
        None => (input.to_string(), 0),
    }
}

struct Parser<'a> {
    /// Lines with any `\r` line-ending stripped.
    lines: Vec<&'a str>,
    pos: usize,
    offset: usize,
}

impl<'a> Parser<'a> {
    fn new(text: &'a str, offset: usize) -> Self {
        let lines = text
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l))
            .collect();
        Parser {
            lines,
            pos: 0,
            offset,
        }
    }

    /// 1-based line number of index `idx` in the caller's input.
    fn line_no(&self, idx: usize) -> usize {
        idx + 1 + self.offset
    }

    fn err(&self, idx: usize, message: impl Into<String>) -> ParseError {
        ParseError {
            line: self.line_no(idx),
            message: message.into(),
        }
    }

    fn peek(&self) -> Option<&'a str> {
        self.lines.get(self.pos).copied()
    }

    fn parse(mut self) -> Result<Patch, ParseError> {
        while self.peek().is_some_and(|l| l.trim().is_empty()) {
            self.pos += 1;
        }
        match self.peek() {
            Some(l) if l.trim() == BEGIN_PATCH => self.pos += 1,
            Some(l) => {
                return Err(self.err(
                    self.pos,
                    format!("expected '{BEGIN_PATCH}' as the first line, got {l:?}"),
                ));
            }
            None => return Err(self.err(0, format!("empty patch; expected '{BEGIN_PATCH}'"))),
        }

        let mut hunks = Vec::new();
        loop {
            let Some(line) = self.peek() else {
                return Err(self.err(
                    self.lines.len().saturating_sub(1),
                    format!("patch ended without '{END_PATCH}'; add it as the last line"),
                ));
            };
            let trimmed = line.trim();
            if trimmed == END_PATCH {
                let end = self.pos;
                if hunks.is_empty() {
                    return Err(self.err(
                        end,
                        format!(
                            "the patch has no file sections; add '{ADD_FILE}<path>', \
                             '{UPDATE_FILE}<path>' or '{DELETE_FILE}<path>' before '{END_PATCH}'"
                        ),
                    ));
                }
                self.pos += 1;
                self.expect_only_blank_after(end)?;
                break;
            }
            if trimmed.is_empty() {
                // Blank lines between file sections are harmless.
                self.pos += 1;
                continue;
            }
            hunks.push(self.parse_file_hunk()?);
        }
        Ok(Patch {
            hunks,
            add_replaces: false,
        })
    }

    fn expect_only_blank_after(&self, end: usize) -> Result<(), ParseError> {
        match self.lines[self.pos..]
            .iter()
            .position(|l| !l.trim().is_empty())
        {
            None => Ok(()),
            Some(i) => Err(self.err(
                self.pos + i,
                format!(
                    "unexpected text after '{END_PATCH}' (line {}); the patch must end there",
                    self.line_no(end)
                ),
            )),
        }
    }

    fn header_path(&self, line: &str, prefix: &str) -> Result<PathBuf, ParseError> {
        let path = line.trim_start()[prefix.len()..].trim();
        if path.is_empty() {
            return Err(self.err(
                self.pos,
                format!("'{}' needs a file path", prefix.trim_end()),
            ));
        }
        Ok(PathBuf::from(path))
    }

    fn parse_file_hunk(&mut self) -> Result<FileHunk, ParseError> {
        let line = self.lines[self.pos];
        let header = line.trim_start();
        if header.starts_with(ADD_FILE) {
            let path = self.header_path(line, ADD_FILE)?;
            self.pos += 1;
            let mut contents = String::new();
            while let Some(l) = self.peek() {
                let Some(rest) = l.strip_prefix('+') else {
                    break;
                };
                contents.push_str(rest);
                contents.push('\n');
                self.pos += 1;
            }
            self.expect_section_boundary("in an Add File section every line must start with '+'")?;
            Ok(FileHunk::Add { path, contents })
        } else if header.starts_with(DELETE_FILE) {
            let path = self.header_path(line, DELETE_FILE)?;
            self.pos += 1;
            self.expect_section_boundary("a Delete File section has no body")?;
            Ok(FileHunk::Delete { path })
        } else if header.starts_with(UPDATE_FILE) {
            let header_idx = self.pos;
            let path = self.header_path(line, UPDATE_FILE)?;
            self.pos += 1;
            let mut move_to = None;
            if let Some(l) = self.peek()
                && l.trim_start().starts_with(MOVE_TO)
            {
                move_to = Some(self.header_path(l, MOVE_TO)?);
                self.pos += 1;
            }
            let chunks = self.parse_chunks()?;
            if chunks.is_empty() && move_to.is_none() {
                return Err(self.err(
                    header_idx,
                    format!(
                        "'{UPDATE_FILE}{}' has no changes; add at least one '@@' hunk",
                        path.display()
                    ),
                ));
            }
            Ok(FileHunk::Update {
                path,
                move_to,
                chunks,
            })
        } else {
            Err(self.err(
                self.pos,
                format!(
                    "unknown line {line:?}; expected a file header ('{ADD_FILE}<path>', \
                     '{DELETE_FILE}<path>', '{UPDATE_FILE}<path>') or '{END_PATCH}'"
                ),
            ))
        }
    }

    /// After an Add/Delete section the next non-blank line must start a new section.
    fn expect_section_boundary(&self, hint: &str) -> Result<(), ParseError> {
        match self.peek() {
            Some(l) if !l.trim().is_empty() && !l.trim_start().starts_with("***") => Err(self.err(
                self.pos,
                format!("unexpected line {l:?}; {hint} (or start the next '*** ' header)"),
            )),
            _ => Ok(()),
        }
    }

    fn parse_chunks(&mut self) -> Result<Vec<UpdateChunk>, ParseError> {
        let mut chunks: Vec<UpdateChunk> = Vec::new();
        let mut current: Option<UpdateChunk> = None;
        while let Some(line) = self.peek() {
            let trimmed = line.trim();
            if trimmed == END_OF_FILE {
                let Some(mut chunk) = current.take() else {
                    return Err(
                        self.err(self.pos, format!("'{END_OF_FILE}' must follow hunk lines"))
                    );
                };
                if chunk.lines.is_empty() {
                    return Err(
                        self.err(self.pos, format!("'{END_OF_FILE}' follows an empty hunk"))
                    );
                }
                chunk.is_end_of_file = true;
                chunks.push(chunk);
                self.pos += 1;
                continue;
            }
            if trimmed.starts_with("***") && !line.starts_with([' ', '+', '-']) {
                break; // next file header or End Patch
            }
            if line.starts_with("@@") {
                if let Some(chunk) = current.take() {
                    self.finish_chunk(chunk, &mut chunks)?;
                }
                let ctx = line.strip_prefix("@@").unwrap_or("").trim();
                // Some models write `@@ -12,3 +12,4 @@`-style headers; their text is not a context line.
                let ctx = strip_unified_range(ctx);
                current = Some(UpdateChunk {
                    change_context: (!ctx.is_empty()).then(|| ctx.to_string()),
                    lines: Vec::new(),
                    is_end_of_file: false,
                    patch_line: self.line_no(self.pos),
                });
                self.pos += 1;
                continue;
            }
            let hunk_line = if let Some(rest) = line.strip_prefix(' ') {
                HunkLine::Context(rest.to_string())
            } else if let Some(rest) = line.strip_prefix('-') {
                HunkLine::Remove(rest.to_string())
            } else if let Some(rest) = line.strip_prefix('+') {
                HunkLine::Add(rest.to_string())
            } else if line.is_empty() {
                // Editors and models often drop the space on blank context lines.
                HunkLine::Context(String::new())
            } else if line.starts_with('\\') {
                // `\ No newline at end of file` from diff tools: trailing newlines are kept anyway.
                self.pos += 1;
                continue;
            } else {
                return Err(self.err(
                    self.pos,
                    format!(
                        "unexpected line {line:?} in an update hunk; every hunk line must start with \
                         ' ' (context), '-' (remove) or '+' (add), or be '@@ …', '{END_OF_FILE}' \
                         or the next '*** ' header"
                    ),
                ));
            };
            let patch_line = self.line_no(self.pos);
            let chunk = current.get_or_insert_with(|| UpdateChunk {
                change_context: None,
                lines: Vec::new(),
                is_end_of_file: false,
                patch_line,
            });
            chunk.lines.push(hunk_line);
            self.pos += 1;
        }
        if let Some(chunk) = current.take() {
            self.finish_chunk(chunk, &mut chunks)?;
        }
        Ok(chunks)
    }

    fn finish_chunk(
        &self,
        chunk: UpdateChunk,
        chunks: &mut Vec<UpdateChunk>,
    ) -> Result<(), ParseError> {
        if chunk.lines.is_empty() {
            return Err(ParseError {
                line: chunk.patch_line,
                message: "empty hunk; an '@@' line must be followed by ' ', '-' or '+' lines"
                    .into(),
            });
        }
        chunks.push(chunk);
        Ok(())
    }
}

/// `-12,3 +12,4 @@ fn x` → `fn x`; anything else unchanged.
fn strip_unified_range(ctx: &str) -> &str {
    let mut parts = ctx.splitn(3, ' ');
    let (Some(a), Some(b)) = (parts.next(), parts.next()) else {
        return ctx;
    };
    let is_range = |s: &str, sign: char| {
        s.strip_prefix(sign)
            .is_some_and(|r| !r.is_empty() && r.chars().all(|c| c.is_ascii_digit() || c == ','))
    };
    if is_range(a, '-') && is_range(b, '+') {
        parts.next().unwrap_or("").trim_start_matches("@@").trim()
    } else {
        ctx
    }
}

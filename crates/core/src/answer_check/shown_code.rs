//! Python functions the model wrote in its answer for a file the request names, instead of
//! writing them into it.
//!
//! Asked to "implement the function is_palindrome in text_utils.py so that
//! test_text_utils.py passes", the 1.5B model on the real tier answered with a correct
//! ```` ```python ```` block defining `is_palindrome`, and no call: the file kept its
//! `raise NotImplementedError`. When such an answer would be sent back anyway (the task is
//! unfinished), the engine writes the shown functions over the ones of the same name in the
//! one file the request names, as a shell call under the approval policy, and the model sees
//! the result. Only top-level `def`s whose names the file already defines are replaced
//! (with their decorators), and the block's own imports the file lacks are added at its top;
//! nothing else of the file changes. This module only reads text.

use super::is_question;
use super::task::looks_like_path;

/// Largest file rewritten this way.
pub(crate) const MAX_FILE_BYTES: u64 = 64 * 1024;

/// The file of the request the shown code may go to: the one Python file it names that is
/// not a test (tests are what the code must pass, not where it goes). `None` for a question
/// or when the request names no such file or several.
pub(crate) fn code_file(request: &str) -> Option<String> {
    if is_question(request) {
        return None;
    }
    let mut files: Vec<String> = Vec::new();
    for word in request.split_whitespace() {
        let quote = |c: char| {
            matches!(
                c,
                '`' | '\'' | '"' | ',' | ';' | ':' | '(' | ')' | '?' | '!'
            )
        };
        let word = word
            .trim_start_matches(quote)
            .trim_end_matches(|c: char| quote(c) || c == '.');
        if !looks_like_path(word) || !word.ends_with(".py") {
            continue;
        }
        let name = word.rsplit('/').next().unwrap_or(word);
        if name.starts_with("test_") || name.ends_with("_test.py") || name == "conftest.py" {
            continue;
        }
        if !files.iter().any(|f| f == word) {
            files.push(word.to_string());
        }
    }
    match files.as_slice() {
        [one] => Some(one.clone()),
        _ => None,
    }
}

/// `content` (the file `file` as it is) with the functions the answer's one Python block
/// defines put in place of the file's functions of the same names, and the names replaced.
/// `None` when the answer holds no such block, several blocks, or no function the file
/// defines.
pub(crate) fn with_shown_functions(
    answer: &str,
    content: &str,
    file: &str,
) -> Option<(String, Vec<String>)> {
    let block = block_of_the_files_functions(answer, content)?;
    let shown = top_level_defs(&block);
    let mut lines: Vec<String> = content.lines().map(str::to_string).collect();
    let mut replaced = Vec::new();
    let block_lines: Vec<&str> = block.lines().collect();
    for def in &shown {
        let Some(at) = top_level_defs(&lines.join("\n"))
            .into_iter()
            .find(|d| d.name == def.name)
        else {
            continue;
        };
        let body = block_lines[def.start..def.end]
            .iter()
            .map(|l| l.to_string());
        lines.splice(at.start..at.end, body);
        replaced.push(def.name.clone());
    }
    if replaced.is_empty() {
        return None;
    }
    // The block's imports the file lacks go first (after a shebang or docstring line is not
    // worth the guess: imports at the very top are valid Python).
    // An import of the file's own module is the test's line copied into the block
    // (recorded on the real tier, round 16: `from text_utils import is_palindrome` above the
    // function, written into text_utils.py, a circular import that broke the fix).
    let module = module_of(file);
    let imports: Vec<String> = block
        .lines()
        .filter(|l| l.starts_with("import ") || l.starts_with("from "))
        .filter(|l| !imports_module(l, &module))
        .filter(|l| !lines.iter().any(|have| have.trim() == l.trim()))
        .map(str::to_string)
        .collect();
    let mut out = imports;
    out.extend(lines);
    let mut text = out.join("\n");
    text.push('\n');
    Some((text, replaced))
}

/// The text of a new Python file the answer shows whole: its one Python block (a fence
/// marked `python`, or unmarked and starting with a python shebang or a `def`), with a final
/// line break. `None` when there is none or several, or it is empty.
pub(crate) fn new_file_text(answer: &str) -> Option<String> {
    let mut blocks = python_blocks(answer).into_iter();
    let block = blocks.next()?;
    if blocks.next().is_some() || block.trim().is_empty() {
        return None;
    }
    Some(format!("{}\n", block.trim_end()))
}

/// The names of the top-level functions `content` defines, in order.
pub(crate) fn function_names(content: &str) -> Vec<String> {
    top_level_defs(content)
        .into_iter()
        .map(|d| d.name)
        .collect()
}

/// The module a Python file is imported as: `pkg/text_utils.py` → `text_utils`.
fn module_of(file: &str) -> String {
    let name = file.rsplit('/').next().unwrap_or(file);
    name.strip_suffix(".py").unwrap_or(name).to_string()
}

/// Whether an import line imports `module` (`import m`, `import m as x`, `from m import f`,
/// `from .m import f`, `from pkg.m import f`).
fn imports_module(line: &str, module: &str) -> bool {
    let named = if let Some(rest) = line.strip_prefix("from ") {
        rest.split_whitespace().next().unwrap_or("")
    } else if let Some(rest) = line.strip_prefix("import ") {
        rest.split_whitespace()
            .next()
            .unwrap_or("")
            .trim_end_matches(',')
    } else {
        return false;
    };
    named.rsplit('.').next() == Some(module)
}

/// The one Python block of the answer that defines a function the file defines (other
/// blocks, such as an example of calling it, are left out). `None` when none or several do.
fn block_of_the_files_functions(answer: &str, content: &str) -> Option<String> {
    let defined: Vec<String> = top_level_defs(content)
        .into_iter()
        .map(|d| d.name)
        .collect();
    let mut found = python_blocks(answer)
        .into_iter()
        .filter(|b| top_level_defs(b).iter().any(|d| defined.contains(&d.name)));
    let block = found.next()?;
    found.next().is_none().then_some(block)
}

/// The bodies of the answer's fenced blocks that are Python (or have no language and start
/// like Python).
fn python_blocks(answer: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut lines = answer.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.trim_start().strip_prefix("```") else {
            continue;
        };
        let info = info.trim().to_ascii_lowercase();
        let mut body = Vec::new();
        for l in lines.by_ref() {
            if l.trim_start().starts_with("```") {
                break;
            }
            body.push(l);
        }
        blocks.push((info, body.join("\n")));
    }
    blocks
        .into_iter()
        .filter(|(info, body)| {
            let start = body.trim_start();
            matches!(info.as_str(), "python" | "py" | "python3")
                || (info.is_empty()
                    && (start.starts_with("def ")
                        || (start.starts_with("#!")
                            && start.lines().next().is_some_and(|l| l.contains("python")))))
        })
        .map(|(_, body)| body)
        .collect()
}

/// One top-level function: its name and its lines `start..end` (decorators included,
/// trailing blank lines not).
struct Def {
    name: String,
    start: usize,
    end: usize,
}

fn top_level_defs(text: &str) -> Vec<Def> {
    let lines: Vec<&str> = text.lines().collect();
    let mut defs = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let Some(name) = def_name(line) else {
            i += 1;
            continue;
        };
        let mut start = i;
        while start > 0 && lines[start - 1].starts_with('@') {
            start -= 1;
        }
        let mut end = i + 1;
        while end < lines.len() {
            let l = lines[end];
            let top_level = !l.is_empty() && !l.starts_with(char::is_whitespace);
            if top_level && !l.starts_with('#') {
                break;
            }
            end += 1;
        }
        // Trailing blank lines and top-level comments belong to what follows.
        while end > i + 1 && (lines[end - 1].trim().is_empty() || lines[end - 1].starts_with('#')) {
            end -= 1;
        }
        defs.push(Def {
            name: name.to_string(),
            start,
            end,
        });
        i = end.max(i + 1);
    }
    defs
}

/// `name` of a top-level `def name(` or `async def name(` line.
fn def_name(line: &str) -> Option<&str> {
    let rest = line
        .strip_prefix("def ")
        .or_else(|| line.strip_prefix("async def "))?;
    let name = rest.split('(').next()?.trim();
    (!name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_')).then_some(name)
}

#[cfg(test)]
mod tests;

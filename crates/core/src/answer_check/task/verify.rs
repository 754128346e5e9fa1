//! Whether an expectation holds: the working directory and the turn's commands, read with
//! bounds.

use super::Expectation;
use super::words::identifier;
use std::path::{Path, PathBuf};

/// The `key = value` and `key: value` lines of a file, keys in lower case without quotes,
/// values without quotes, a trailing comma or a `#` comment.
pub(super) fn keyed_lines(content: &str) -> Vec<(String, String)> {
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

pub(super) fn check_sets(
    path: &str,
    content: &str,
    keys: &[String],
    value: &str,
) -> Option<String> {
    let lines = keyed_lines(content);
    let joined: Vec<String> = ["_", "-", ".", ""].iter().map(|j| keys.join(j)).collect();
    let named = |k: &String| keys.contains(k) || joined.contains(k);
    let last = keys.last()?;
    if !lines.iter().any(|(k, _)| named(k)) {
        // No `key = value` line for the setting: the value alone is checked (`Holds`).
        return None;
    }
    let Some((set_key, _)) = lines.iter().find(|(k, v)| named(k) && v == value) else {
        // Quote the line to change: a small model that never read the file guesses the key
        // (recorded: `sed` on `server_port = …` in a file that says `port = 8000`).
        let now = content
            .lines()
            .find(|l| keyed_lines(l).first().is_some_and(|(k, _)| named(k)))
            .map(|l| format!(" (the line to change reads `{}`)", l.trim()))
            .unwrap_or_default();
        return Some(format!("`{path}` does not set `{last}` to `{value}`{now}"));
    };
    let own: Vec<&(String, String)> = lines.iter().filter(|(k, _)| k == last).collect();
    match own.as_slice() {
        [(_, old)] if old != value && set_key != last => Some(format!(
            "`{path}` still sets `{last}` to `{old}` (change that line, do not add another)"
        )),
        _ => None,
    }
}

/// Bytes read, in all, when looking for the files that name something.
pub(super) const SEARCH_BYTES: u64 = 16 * 1024 * 1024;
/// Files larger than this are not searched (generated or data files).
pub(super) const SEARCH_FILE_BYTES: u64 = 512 * 1024;

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
pub(super) const MAX_CHECKED_BYTES: u64 = 1024 * 1024;
/// How deep, and how many entries, the search for a file named without its folder goes.
pub(super) const SEARCH_DEPTH: usize = 4;
pub(super) const SEARCH_ENTRIES: usize = 4000;

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
    let mut out: Vec<String> = Vec::new();
    for e in expectations {
        // One problem once: a file that should exist and hold a word is missing once.
        if let Some(problem) = check_one(e, cwd, steps)
            && !out.contains(&problem)
        {
            out.push(problem);
        }
    }
    // A problem said more fully by another ("`greeting.txt` does not exist" beside
    // "`greeting.txt` does not exist: for example `…`") is said once, fully.
    let said_more_fully = |p: &String, all: &[String]| {
        all.iter()
            .any(|q| q != p && q.starts_with(p.as_str()) && q[p.len()..].starts_with(':'))
    };
    let all = out.clone();
    out.retain(|p| !said_more_fully(p, &all));
    out
}

pub(super) fn check_one(e: &Expectation, cwd: &Path, steps: &[Step]) -> Option<String> {
    match e {
        Expectation::Exists { path, dir } => {
            let found = find(cwd, path);
            match (found, dir) {
                (None, true) => Some(format!("the folder `{path}` does not exist")),
                (None, false) => Some(format!("`{path}` does not exist")),
                (Some(p), true) if !p.is_dir() => Some(format!("`{path}` is not a folder")),
                (Some(p), false) if path.ends_with(".py") => python_syntax(path, &p),
                _ => None,
            }
        }
        Expectation::Form {
            path,
            before,
            placeholder,
            after,
            source,
        } => check_form(cwd, path, (before, placeholder, after), source.as_deref()),
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
        Expectation::NotEmpty { path } => {
            let content = read(&find(cwd, path)?)?;
            content
                .trim()
                .is_empty()
                .then(|| format!("`{path}` is empty: write the code the task asks for into it"))
        }
        Expectation::HoldsLine { path, text } => {
            let content = read(&find(cwd, path)?)?;
            // Without the text at all, `Holds` says so.
            (content.contains(text.as_str())
                && !content.lines().any(|l| l.trim() == text.trim()))
            .then(|| format!("`{path}` has no line that is exactly `{text}`: the line holds more than was asked"))
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
        // Needs the file as it was: see `preserve`.
        Expectation::Replaced { .. } => None,
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
            let data = read(&find(cwd, csv)?)?;
            let total = column_sum(&data, column)?;
            let written = read(&find(cwd, out)?)?;
            (!numbers_in(&written).any(|n| (n - total).abs() <= 1e-6 * total.abs().max(1.0)))
                .then(|| {
                    format!("`{out}` does not hold the total of the `{column}` column of `{csv}` ({}; compute it from the file and write it{})", column_place(&data, column).unwrap_or_default(), total_command(&data, column, csv, out).map(|c| format!(", for example with `{c}`")).unwrap_or_default())
                })
        }
    }
}

/// Largest Python file whose syntax is checked.
const MAX_PARSED_BYTES: u64 = 256 * 1024;

/// A Python file the task makes must parse (recorded: `echo "1\n2\n3" > count.py` written
/// as "a script that prints 1 to 5", and the run exited 0). Parsed by `python3`'s own `ast`,
/// which runs nothing of the file; nothing is claimed without `python3`.
fn python_syntax(path: &str, file: &Path) -> Option<String> {
    if file.metadata().map_or(true, |m| m.len() > MAX_PARSED_BYTES) {
        return None;
    }
    const PARSE: &str = "import ast, sys\nsrc = open(sys.argv[1], encoding='utf-8', errors='replace').read()\nast.parse(src, sys.argv[1])";
    let out = oi_process::command_std("python3")
        .args(["-I", "-c", PARSE])
        .arg(file)
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    if out.status.success() {
        return None;
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let why = err.lines().rev().find(|l| !l.trim().is_empty())?.trim();
    why.contains("Error").then(|| {
        format!("`{path}` is not valid Python ({why}): write it as Python source, for example with a quoted heredoc")
    })
}

/// See [`Expectation::Form`].
fn check_form(
    cwd: &Path,
    path: &str,
    (before, placeholder, after): (&str, &str, &str),
    source: Option<&str>,
) -> Option<String> {
    let (before, after) = (before.trim_start(), after.trim_end());
    // The command that writes it, when the value comes from a file.
    let command = source
        .filter(|name| find(cwd, name).is_some_and(|p| p.is_file()))
        .and_then(|name| form_command(path, before, after, name));
    let Some(file) = find(cwd, path) else {
        return command.map(|c| format!("`{path}` does not exist: for example `{c}`"));
    };
    let text = read(&file)?;
    let text = text.trim();
    let form = format!("{before}<{placeholder}>{after}");
    let filled = text
        .strip_prefix(before)
        .and_then(|rest| rest.strip_suffix(after))
        .map(str::trim)
        .filter(|middle| !middle.is_empty());
    let example = command
        .map(|c| format!(": for example `{c}`"))
        .unwrap_or_default();
    let Some(middle) = filled else {
        return Some(format!(
            "`{path}` does not hold `{form}` with `<{placeholder}>` filled in (it holds `{text}`){example}"
        ));
    };
    // The placeholder itself left in: `Lacks` says so.
    if middle == format!("<{placeholder}>") {
        return None;
    }
    // The file the request names for the placeholder (`name.txt` for `<name>`).
    if let Some(name) = source
        && let Some(p) = find(cwd, name).filter(|p| p.is_file())
        && let Some(value) = read(&p)
        && !value.trim().is_empty()
        && value.trim().lines().count() == 1
        && middle.trim_end_matches(['.', '!', '?', ',']) != value.trim()
    {
        return Some(format!(
            "`{path}` holds `{text}`, but `{name}` says `{}`: `<{placeholder}>` should be that{example}",
            value.trim()
        ));
    }
    None
}

/// The sum of a column of a plain CSV text (a header row, commas, numbers in that column);
/// `None` when the text is not that plain, so nothing is claimed about it.
pub(super) fn column_sum(text: &str, column: &str) -> Option<f64> {
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

/// Where `column` is in a CSV's lines, in the words of the tools a model reaches for: the
/// 1.5B model summed `$3`, `$5`, `$6` and `split(',')[2]` of a two-column file (every
/// round of the everyday bench). Only the position: the model still computes the total.
fn column_place(text: &str, column: &str) -> Option<String> {
    let (header, fields, at) = header_column(text, column)?;
    Some(format!(
        "the first line is the header `{}`; `{column}` is field {} of {}: `${}` in awk with `-F,` (skip the header with `NR>1`), `line.split(',')[{at}]` in Python",
        header.trim(),
        at + 1,
        fields,
        at + 1,
    ))
}

/// A plain CSV's header line, its number of fields, and where `column` is among them.
fn header_column<'a>(text: &'a str, column: &str) -> Option<(&'a str, usize, usize)> {
    let header = text.lines().find(|l| !l.trim().is_empty())?;
    let fields: Vec<&str> = header.split(',').map(str::trim).collect();
    let at = fields.iter().position(|h| h.eq_ignore_ascii_case(column))?;
    Some((header, fields.len(), at))
}

/// A command that writes the column's total: a small model copies a command it is shown
/// far more reliably than it follows a description of one (recorded on the real tier,
/// rounds 20 and 21: `grep 'amount' | awk '{sum+=$2}'`, the header's line summed without
/// `-F,`, in all four runs, after the description above).
fn total_command(text: &str, column: &str, csv: &str, out: &str) -> Option<String> {
    let (_, _, at) = header_column(text, column)?;
    let (csv, out) = (shlex::try_quote(csv).ok()?, shlex::try_quote(out).ok()?);
    Some(format!(
        "awk -F, 'NR>1 {{s += ${}}} END {{print s}}' {csv} > {out}",
        at + 1
    ))
}

/// The command that writes `before<value of name>after` into `path`, the value read from
/// the file `name` when it runs (double quotes: inside single ones `$(…)` stays text, the
/// mistake recorded on the real tier in every failed read-then-write run of rounds 20–21).
fn form_command(path: &str, before: &str, after: &str, name: &str) -> Option<String> {
    let quoted = |t: &str| {
        t.chars().fold(String::new(), |mut out, c| {
            if matches!(c, '\\' | '"' | '$' | '`') {
                out.push('\\');
            }
            out.push(c);
            out
        })
    };
    let (name, path) = (shlex::try_quote(name).ok()?, shlex::try_quote(path).ok()?);
    Some(format!(
        "echo \"{}$(cat {name}){}\" > {path}",
        quoted(before),
        quoted(after)
    ))
}

/// The numbers written in `text` (`Total: 128`, `128.0`).
pub(super) fn numbers_in(text: &str) -> impl Iterator<Item = f64> + '_ {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .filter_map(|w| w.trim_matches('.').parse::<f64>().ok())
}

/// Programs that run tests (or a script that does), by name.
const TEST_RUNNERS: &[&str] = &[
    "python", "python3", "python2", "pytest", "py.test", "bash", "sh", "node", "deno", "bun",
    "ruby", "perl", "php", "go", "cargo", "npm", "npx", "yarn", "pnpm", "make", "uv", "poetry",
    "tox", "nox", "env", "timeout", "java", "dotnet",
];

/// The shell script a command call's raw arguments hold: `command`/`cmd` as a string, or an
/// argv list (`bash -lc X` is `X`; anything else its words joined).
fn script_of(args: &str) -> String {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(args) else {
        return args.to_string();
    };
    let command = v.get("command").or_else(|| v.get("cmd")).unwrap_or(&v);
    match command {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(items) => {
            let words: Vec<&str> = items.iter().filter_map(|w| w.as_str()).collect();
            match words.as_slice() {
                [shell, flag, script] if matches!(*flag, "-c" | "-lc") && shell.ends_with("sh") => {
                    (*script).to_string()
                }
                _ => words.join(" "),
            }
        }
        _ => args.to_string(),
    }
}

/// The simple commands of a script, each as its words (environment assignments before the
/// program dropped): split at line ends, `;`, `&&`, `||` and `|`; comments left out.
fn commands_of(script: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for line in script.lines() {
        let line = line.trim();
        if line.starts_with('#') {
            continue;
        }
        for part in line.split(['&', ';', '|']) {
            let words: Vec<String> = shlex::split(part)
                .unwrap_or_else(|| part.split_whitespace().map(str::to_string).collect())
                .into_iter()
                .skip_while(|w| w.contains('=') && !w.starts_with('-'))
                .collect();
            if !words.is_empty() {
                out.push(words);
            }
        }
    }
    out
}

/// Whether the last run of `test` came after the last change and passed.
pub(crate) fn test_run(test: &str, steps: &[Step]) -> TestRun {
    let name = test.rsplit('/').next().unwrap_or(test);
    let stem = name.split('.').next().unwrap_or(name);
    // A Python test file also runs under a test runner that finds it by itself.
    let python = name.ends_with(".py");
    // A command runs the test when one of its commands starts with a program that runs
    // tests and names it; a command that only mentions it does not (recorded: `echo "python
    // test_greet.py" >> fix.sh` counted as a passing run, a false success).
    let runs_test = |s: &Step| {
        s.command.as_deref().is_some_and(|args| {
            commands_of(&script_of(args)).iter().any(|words| {
                let Some(first) = words.first() else {
                    return false;
                };
                let program = first.rsplit('/').next().unwrap_or(first);
                let names_it = |w: &String| {
                    w == test
                        || w == name
                        || w.ends_with(&format!("/{name}"))
                        || (!stem.is_empty() && w.contains(stem))
                };
                let is_the_test = names_it(first) && first.contains(name);
                let runner = TEST_RUNNERS.contains(&program)
                    && (words[1..].iter().any(names_it)
                        || (python
                            && words
                                .iter()
                                .any(|w| w.contains("pytest") || w.contains("unittest"))));
                is_the_test || runner
            })
        })
    };
    let last_run = steps.iter().rposition(runs_test);
    let last_write = steps
        .iter()
        .rposition(|s| s.writes && s.ok && !runs_test(s));
    match (last_run, last_write) {
        (None, _) => TestRun::NotRun,
        (Some(r), Some(w)) if w > r => TestRun::NotRunSinceChange,
        (Some(r), _) if !steps[r].ok => TestRun::Failed,
        _ => TestRun::Passed,
    }
}

/// How the turn's commands left a test the task names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TestRun {
    /// Its last run came after the last change, and passed.
    Passed,
    /// No command of the turn ran it.
    NotRun,
    /// A change came after its last run.
    NotRunSinceChange,
    /// Its last run, after the last change, failed.
    Failed,
}

/// [`test_run`] as the phrase for the model and the user; `None` when it passed.
pub(super) fn passes(test: &str, steps: &[Step]) -> Option<String> {
    match test_run(test, steps) {
        TestRun::Passed => None,
        TestRun::NotRun => Some(format!("`{test}` was not run to check the result")),
        TestRun::NotRunSinceChange => {
            Some(format!("`{test}` was not run again after the last change"))
        }
        TestRun::Failed => Some(format!(
            "`{test}` still fails (its last run exited with an error)"
        )),
    }
}

/// The command that runs a test file the way its language does (`python3 test_greet.py`),
/// or a quoted command as written; `None` for a file of another kind.
pub(crate) fn test_command(test: &str) -> Option<String> {
    if test.contains(' ') {
        return Some(test.to_string());
    }
    let runner = match test.rsplit_once('.').map(|(_, ext)| ext) {
        Some("py") => "python3",
        Some("sh") => "sh",
        Some("js" | "mjs" | "cjs") => "node",
        Some("rb") => "ruby",
        _ => return None,
    };
    let safe = test
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'));
    safe.then(|| format!("{runner} {test}"))
}

/// `text` appears in `content`; as a whole word when `text` is one word (so `load` is not
/// found in `load_config`).
pub(crate) fn contains_word(content: &str, text: &str) -> bool {
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
pub(super) fn find(cwd: &Path, path: &str) -> Option<PathBuf> {
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

pub(super) fn read(path: &Path) -> Option<String> {
    oi_config::project_file::read_text_capped(path, MAX_CHECKED_BYTES).ok()
}

pub(super) fn is_executable(path: &Path) -> bool {
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

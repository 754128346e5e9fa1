//! SWE-agent's viewer calls on a session: the open file and its window live on the session
//! ([`Session::open_file`]); windows are rendered from the file's text, read with the patch
//! path's bounded reader; `edit` and `create` are whole-file changes through
//! `file_io::set_content` (the patch path: approval, diff, atomic apply, events).

use super::call::{ToolCall, ToolOutcome};
use super::file_io::{read, resolve, set_content};
use crate::harness::viewer::{
    OpenFile, ViewRequest, WINDOW, clamp_top, line_count, render, replace_lines, scrolled,
    top_for_line,
};
use crate::session::Session;
use oi_protocol::models::FunctionCallOutput;
use std::path::Path;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

const NOTHING_OPEN: &str = "No file is open. Call `open` with the file's path first.";

/// `open`, `goto`, `scroll_up`, `scroll_down`: moves the window and shows it.
pub(super) async fn view(sess: &Session, request: ViewRequest, cwd: &Path) -> ToolOutcome {
    let (path, shown, line) = match &request {
        ViewRequest::Open { path, line } => (resolve(cwd, Path::new(path)), path.clone(), *line),
        _ => match sess.open_file() {
            Some(f) => (f.path, f.shown, None),
            None => return ToolOutcome::err(NOTHING_OPEN),
        },
    };
    let text = match read(&path).await {
        Ok(Some(text)) => text,
        Ok(None) => {
            return ToolOutcome::err(format!(
                "{shown} does not exist. Use `find_file` to find the file, or `create` to make it."
            ));
        }
        Err(e) => return ToolOutcome::err(format!("cannot open {shown}: {e}")),
    };
    let total = line_count(&text);
    let at = |line: u64| usize::try_from(line).unwrap_or(usize::MAX);
    let top = match request {
        ViewRequest::Open { .. } => line.map_or(1, |l| top_for_line(at(l), total)),
        ViewRequest::Goto(line) => {
            if line == 0 || at(line) > total.max(1) {
                return ToolOutcome::err(format!(
                    "line {line} is outside {shown}, which has {total} lines; give a line from 1 to {}",
                    total.max(1)
                ));
            }
            top_for_line(at(line), total)
        }
        ViewRequest::Scroll { down } => {
            let from = sess.open_file().map_or(1, |f| clamp_top(f.top, total));
            scrolled(from, down, total)
        }
    };
    sess.set_open_file(OpenFile {
        path,
        shown: shown.clone(),
        top,
    });
    ToolOutcome::ok(render(&shown, &text, top))
}

/// `edit`: replaces a line range of the open file and shows the window around it.
pub(super) async fn edit(
    sess: &Arc<Session>,
    call: &ToolCall<'_>,
    (first, last): (u64, u64),
    replacement: &str,
    cwd: &Path,
    cancel: &CancellationToken,
) -> ToolOutcome {
    let Some(open) = sess.open_file() else {
        return ToolOutcome::err(NOTHING_OPEN);
    };
    let old = match read(&open.path).await {
        Ok(Some(text)) => text,
        Ok(None) => {
            return ToolOutcome::err(format!(
                "{} no longer exists; `create` it or `open` another file",
                open.shown
            ));
        }
        Err(e) => return ToolOutcome::err(format!("edit: {e}")),
    };
    let new = match replace_lines(&old, first, last, replacement) {
        Ok(new) => new,
        Err(message) => {
            return ToolOutcome::err(format!("edit: {message}. No file was changed."));
        }
    };
    if new == old {
        return ToolOutcome::err(
            "edit: the new lines are the same as the old ones, so nothing changed.",
        );
    }
    let mut outcome = set_content(sess, call, open.path.clone(), new.clone(), cwd, cancel).await;
    if outcome.output.success == Some(true) {
        let first = usize::try_from(first).unwrap_or(usize::MAX);
        let top = top_for_line(first, line_count(&new));
        sess.set_open_file(OpenFile { top, ..open });
        let shown = sess.open_file().map(|f| f.shown).unwrap_or_default();
        outcome.output = FunctionCallOutput::text(
            format!(
                "{}\nThe file now reads (check the lines you changed; fix mistakes with another `edit`):\n{}",
                outcome.output.text_content(),
                render(&shown, &new, top)
            ),
            true,
        );
    }
    outcome
}

/// `create`: makes an empty file (through the patch path) and opens it.
pub(super) async fn create(
    sess: &Arc<Session>,
    call: &ToolCall<'_>,
    path: &Path,
    cwd: &Path,
    cancel: &CancellationToken,
) -> ToolOutcome {
    let target = resolve(cwd, path);
    let shown = path.display().to_string();
    match read(&target).await {
        Ok(None) => {}
        Ok(Some(_)) => {
            return ToolOutcome::err(format!(
                "{shown} already exists; `open` it to see and edit it"
            ));
        }
        Err(e) => return ToolOutcome::err(format!("create: {e}")),
    }
    let outcome = set_content(sess, call, target.clone(), String::new(), cwd, cancel).await;
    if outcome.output.success == Some(true) {
        sess.set_open_file(OpenFile {
            path: target,
            shown: shown.clone(),
            top: 1,
        });
        let mut outcome = outcome;
        outcome.output = FunctionCallOutput::text(
            format!(
                "{}\n{}Add its lines with `edit` (`start_line` 1, `end_line` 1). The window shows {WINDOW} lines.",
                outcome.output.text_content(),
                render(&shown, "", 1)
            ),
            true,
        );
        return outcome;
    }
    outcome
}

//! `interpreter resume` and `interpreter sessions list`: stored threads from the CLI.

use crate::args::{
    EXIT_FAILURE, EXIT_OK, EXIT_USAGE, ExecArgs, GlobalArgs, ResumeArgs, SessionsCommand,
};
use crate::exec::{Format, drive_turn, read_prompt};
use crate::out::outln;
use oi_core::{
    CoreError, ListQuery, SessionSource, ThreadManager, ThreadManagerOptions, ThreadSummary,
};
use oi_protocol::ThreadId;
use serde_json::json;
use std::path::{Path, PathBuf};

/// The engine that reads (and, for `resume`, continues) the stored threads, and their home.
/// Stored threads are read through the engine, which opens the store once for both.
fn engine() -> Result<(ThreadManager, PathBuf), oi_config::ConfigError> {
    let home = oi_config::find_home()?;
    let manager = ThreadManager::new(ThreadManagerOptions {
        source: SessionSource::Exec,
        persist: true,
    });
    Ok((manager, home))
}

pub(crate) async fn run_resume(global: GlobalArgs, args: ResumeArgs) -> i32 {
    let format = Format::of(args.json, args.experimental_json);
    run_resume_as(global, args, format).await
}

/// `exec resume THREAD_ID [PROMPT]`: `resume` with `exec`'s flags and output format.
pub(crate) async fn run_exec_resume(
    mut global: GlobalArgs,
    exec: ExecArgs,
    mut resume: ResumeArgs,
) -> i32 {
    if let Err(e) = exec.codex.apply(&mut global) {
        eprintln!("error: {e}");
        return EXIT_USAGE;
    }
    if !exec.codex.image.is_empty() {
        eprintln!(
            "error: -i/--image is not supported with `exec resume`; start a new thread with `exec -i FILE PROMPT`"
        );
        return EXIT_USAGE;
    }
    if exec.prompt.is_some() {
        eprintln!("error: give the prompt after `resume THREAD_ID`, not before `resume`");
        return EXIT_USAGE;
    }
    let format = match Format::of(exec.json, exec.experimental_json) {
        Format::Human => Format::of(resume.json, resume.experimental_json),
        f => f,
    };
    resume.accept_elicitations |= exec.accept_elicitations;
    run_resume_as(global, resume, format).await
}

/// `resume` printing in `format` (`exec resume` passes the format given to `exec`).
pub(crate) async fn run_resume_as(mut global: GlobalArgs, args: ResumeArgs, format: Format) -> i32 {
    let (manager, home) = match engine() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_FAILURE;
        }
    };
    let mut rest = args.args.into_iter();
    let summary = if args.last {
        let cwd = std::env::current_dir().ok();
        let found = match manager.latest_stored_thread(&home, cwd.as_deref()).await {
            Ok(None) => manager.latest_stored_thread(&home, None).await,
            found => found,
        };
        match found {
            Ok(Some(s)) => s,
            Ok(None) => {
                eprintln!(
                    "error: there is no stored thread to resume; start one with `interpreter exec`"
                );
                return EXIT_FAILURE;
            }
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_FAILURE;
            }
        }
    } else {
        let Some(raw) = rest.next() else {
            eprintln!("error: give a thread id (see `interpreter sessions list`) or use --last");
            return EXIT_USAGE;
        };
        let id: ThreadId = match raw.parse() {
            Ok(id) => id,
            Err(e) => {
                eprintln!(
                    "error: `{raw}` is not a thread id ({e}); see `interpreter sessions list`"
                );
                return EXIT_USAGE;
            }
        };
        match manager.stored_thread(&home, &id).await {
            Ok(Some(s)) => s,
            Ok(None) => {
                eprintln!("error: thread not found: {id}; see `interpreter sessions list`");
                return EXIT_FAILURE;
            }
            Err(e) => {
                eprintln!("error: {e}");
                return EXIT_FAILURE;
            }
        }
    };
    let prompt = match read_prompt(rest.next()) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    // Continue where the thread ran, unless -C says otherwise.
    if global.cd.is_none() && summary.cwd.is_dir() {
        global.cd = Some(summary.cwd.clone());
    }
    if global.model.is_none() && !summary.model.is_empty() {
        global.model = Some(summary.model.clone());
    }
    let config = match global.load_config_or_exit() {
        Ok(c) => c,
        Err(code) => return code,
    };
    let reasoning = crate::render::ReasoningDisplay::from_config(&config);
    let new = match manager.resume_thread(summary.id, config).await {
        Ok(n) => n,
        Err(e) => {
            eprintln!("error: {e}");
            return match e {
                CoreError::Config(_) => EXIT_USAGE,
                _ => EXIT_FAILURE,
            };
        }
    };
    for w in new.session_configured.initial_messages.iter().flatten() {
        if let oi_protocol::protocol::EventMsg::Warning(w) = w {
            eprintln!("warning: {}", w.message);
        }
    }
    let thread = new.thread.clone();
    let questions = crate::exec::Questions::of(args.accept_elicitations);
    let code = drive_turn(new, prompt, format, reasoning, questions).await;
    manager.shutdown_all().await;
    crate::exec::saved_or_failure(&thread, code)
}

fn summary_json(s: &ThreadSummary) -> serde_json::Value {
    json!({
        "id": s.id.to_string(),
        "name": s.name,
        "preview": s.preview,
        "created_at": s.created_at,
        "updated_at": s.updated_at,
        "cwd": s.cwd,
        "model_provider": s.model_provider,
        "model": s.model,
        "source": s.source,
        "archived": s.archived,
        "forked_from_id": s.forked_from_id.map(|f| f.to_string()),
        "path": s.path,
    })
}

fn local_time(unix: i64) -> String {
    chrono::DateTime::from_timestamp(unix, 0)
        .map(|t| {
            t.with_timezone(&chrono::Local)
                .format("%Y-%m-%d %H:%M")
                .to_string()
        })
        .unwrap_or_else(|| "-".into())
}

/// Up to `limit` threads (0: all of them), newest first, fetched page by page.
async fn list_threads(
    manager: &ThreadManager,
    home: &Path,
    limit: usize,
    search: Option<String>,
    archived: bool,
) -> Result<Vec<ThreadSummary>, CoreError> {
    let wanted = if limit == 0 { usize::MAX } else { limit };
    let mut out = Vec::new();
    let mut cursor = None;
    while out.len() < wanted {
        let page = manager
            .list_stored_threads(
                home,
                &ListQuery {
                    cursor,
                    limit: (wanted - out.len()).min(ListQuery::MAX_LIMIT),
                    search: search.clone(),
                    archived: archived.then_some(true),
                    ..ListQuery::default()
                },
            )
            .await?;
        out.extend(page.data);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    Ok(out)
}

pub(crate) async fn run_sessions(_global: GlobalArgs, cmd: SessionsCommand) -> i32 {
    let SessionsCommand::List {
        json,
        limit,
        search,
        archived,
    } = cmd;
    let (manager, home) = match engine() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_FAILURE;
        }
    };
    let search = search.filter(|s| !s.trim().is_empty());
    let threads = match list_threads(&manager, &home, limit, search.clone(), archived).await {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_FAILURE;
        }
    };
    if json {
        let v: Vec<_> = threads.iter().map(summary_json).collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&v).unwrap_or_else(|_| "[]".into())
        );
        return EXIT_OK;
    }
    if threads.is_empty() {
        match (&search, archived) {
            (Some(text), true) => outln!("No archived thread matches \"{text}\"."),
            (Some(text), false) => outln!(
                "No thread matches \"{text}\" (searched titles and first messages; add --archived for archived threads)."
            ),
            (None, true) => outln!("No archived threads."),
            (None, false) => {
                outln!("No stored threads yet. Start one with `interpreter exec \"<prompt>\"`.")
            }
        }
        return EXIT_OK;
    }
    for s in &threads {
        let mut title: String = s.title().replace('\n', " ");
        if title.chars().count() > 60 {
            title = title.chars().take(59).collect::<String>() + "…";
        }
        outln!(
            "{}  {}  {}  {}",
            s.id,
            local_time(s.updated_at),
            s.cwd.display(),
            title
        );
    }
    EXIT_OK
}

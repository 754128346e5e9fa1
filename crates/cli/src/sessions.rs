//! `interpreter resume` and `interpreter sessions list`: stored threads from the CLI.

use crate::cli::{EXIT_FAILURE, EXIT_OK, EXIT_USAGE, GlobalArgs, ResumeArgs, SessionsCommand};
use crate::exec::{drive_turn, read_prompt};
use oi_core::{CoreError, ThreadManager, ThreadManagerOptions};
use oi_protocol::ThreadId;
use oi_thread_store::{ListQuery, SessionSource, ThreadStore, ThreadSummary};
use serde_json::json;

fn open_store() -> Result<ThreadStore, String> {
    let home = oi_config::find_home().map_err(|e| e.to_string())?;
    ThreadStore::open(&home).map_err(|e| e.to_string())
}

pub async fn run_resume(mut global: GlobalArgs, args: ResumeArgs) -> i32 {
    let store = match open_store() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_FAILURE;
        }
    };
    let mut rest = args.args.into_iter();
    let summary = if args.last {
        let cwd = std::env::current_dir().ok();
        let found = store.latest(cwd.as_deref()).and_then(|s| match s {
            Some(s) => Ok(Some(s)),
            None => store.latest(None),
        });
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
        match store.get(&id) {
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
    let manager = ThreadManager::new(ThreadManagerOptions {
        source: SessionSource::Exec,
        persist: true,
    });
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
    let code = drive_turn(&new, prompt, args.json).await;
    manager.shutdown_all().await;
    crate::exec::saved_or_failure(&new.thread, code)
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

pub async fn run_sessions(_global: GlobalArgs, cmd: SessionsCommand) -> i32 {
    let SessionsCommand::List {
        json,
        limit,
        search,
        archived,
    } = cmd;
    let store = match open_store() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_FAILURE;
        }
    };
    let q = ListQuery {
        limit: limit.clamp(1, ListQuery::MAX_LIMIT),
        search: search.filter(|s| !s.trim().is_empty()),
        archived: archived.then_some(true),
        ..ListQuery::default()
    };
    let page = match store.list(&q) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_FAILURE;
        }
    };
    if json {
        let v: Vec<_> = page.data.iter().map(summary_json).collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&v).unwrap_or_else(|_| "[]".into())
        );
        return EXIT_OK;
    }
    if page.data.is_empty() {
        println!("No stored threads yet. Start one with `interpreter exec \"<prompt>\"`.");
        return EXIT_OK;
    }
    for s in &page.data {
        let mut title: String = s.title().replace('\n', " ");
        if title.chars().count() > 60 {
            title = title.chars().take(59).collect::<String>() + "…";
        }
        println!(
            "{}  {}  {}  {}",
            s.id,
            local_time(s.updated_at),
            s.cwd.display(),
            title
        );
    }
    EXIT_OK
}

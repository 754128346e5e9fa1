//! Reading `oi_threads`: one row, and keyset-paginated pages with the local index's
//! filters, sort keys and cursors (a cursor from one backend means the same in the other).

use crate::error::StoreError;
use crate::paging::{Cursor, escape_like};
use crate::types::{GitInfo, ListQuery, SessionSource, SortKey, ThreadPage, ThreadSummary};
use oi_protocol::ThreadId;
use std::path::PathBuf;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

const COLUMNS: &str = "id, created_at_ms, updated_at_ms, cwd, model_provider, model, source, \
    preview, name, archived, forked_from_id, cli_version, git_sha, git_branch, git_origin_url";

pub(crate) async fn get(
    conn: &tokio_postgres::Client,
    id: &ThreadId,
) -> Result<Option<ThreadSummary>, StoreError> {
    let row = conn
        .query_opt(
            &format!("SELECT {COLUMNS} FROM oi_threads WHERE id = $1"),
            &[&id.to_string()],
        )
        .await?;
    row.as_ref().map(summary_from_row).transpose()
}

pub(crate) async fn list(
    conn: &tokio_postgres::Client,
    q: &ListQuery,
    after: Option<&Cursor>,
) -> Result<ThreadPage, StoreError> {
    let (col, sort_index) = match q.sort_key {
        SortKey::CreatedAt => ("created_at_ms", 1),
        SortKey::UpdatedAt => ("updated_at_ms", 2),
    };
    let dir = if q.descending { "DESC" } else { "ASC" };
    let limit = q.limit.clamp(1, ListQuery::MAX_LIMIT);
    let mut args: Vec<Box<dyn ToSql + Sync + Send>> = vec![Box::new(q.archived == Some(true))];
    let mut sql = format!("SELECT {COLUMNS} FROM oi_threads WHERE archived = $1");
    let mut any_of = |sql: &mut String, column: &str, values: Vec<String>| {
        if values.is_empty() {
            return;
        }
        args.push(Box::new(values));
        sql.push_str(&format!(" AND {column} = ANY(${})", args.len()));
    };
    if let Some(cwds) = &q.cwd {
        let cwds = cwds
            .iter()
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        any_of(&mut sql, "cwd", cwds);
    }
    if let Some(providers) = &q.model_providers {
        any_of(&mut sql, "model_provider", providers.clone());
    }
    if let Some(sources) = &q.sources {
        let sources = sources.iter().map(|s| s.as_str().to_string()).collect();
        any_of(&mut sql, "source", sources);
    }
    if let Some(term) = q.search.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
        args.push(Box::new(format!("%{}%", escape_like(term))));
        let n = args.len();
        sql.push_str(&format!(
            " AND (preview ILIKE ${n} ESCAPE '\\' OR name ILIKE ${n} ESCAPE '\\')"
        ));
    }
    if let Some(c) = after {
        let op = if q.descending { "<" } else { ">" };
        args.push(Box::new(c.value));
        args.push(Box::new(c.id.clone()));
        let n = args.len();
        sql.push_str(&format!(" AND ({col}, id) {op} (${}, ${n})", n - 1));
    }
    args.push(Box::new(i64::try_from(limit + 1).unwrap_or(i64::MAX)));
    sql.push_str(&format!(
        " ORDER BY {col} {dir}, id {dir} LIMIT ${}",
        args.len()
    ));
    let refs: Vec<&(dyn ToSql + Sync)> = args.iter().map(|a| a.as_ref() as _).collect();
    let rows = conn.query(&sql, &refs).await?;
    let mut page = Vec::with_capacity(rows.len());
    for r in &rows {
        page.push((summary_from_row(r)?, r.try_get::<_, i64>(sort_index)?));
    }
    let next_cursor = if page.len() > limit {
        page.truncate(limit);
        page.last().map(|(last, value)| {
            Cursor {
                value: *value,
                id: last.id.to_string(),
            }
            .encode(q)
        })
    } else {
        None
    };
    Ok(ThreadPage {
        data: page.into_iter().map(|(s, _)| s).collect(),
        next_cursor,
    })
}

fn summary_from_row(r: &Row) -> Result<ThreadSummary, StoreError> {
    let parse_id = |s: String| {
        s.parse::<ThreadId>()
            .map_err(|_| StoreError::Postgres(format!("oi_threads holds an invalid id `{s}`")))
    };
    let created_ms: i64 = r.try_get(1)?;
    let updated_ms: i64 = r.try_get(2)?;
    let source: String = r.try_get(6)?;
    let forked: Option<String> = r.try_get(10)?;
    let git_sha: Option<String> = r.try_get(12)?;
    let git_branch: Option<String> = r.try_get(13)?;
    let git_origin: Option<String> = r.try_get(14)?;
    let git = GitInfo::from_columns(git_sha, git_branch, git_origin);
    Ok(ThreadSummary {
        id: parse_id(r.try_get(0)?)?,
        // Threads in the database have no file.
        path: PathBuf::new(),
        created_at: created_ms.div_euclid(1000),
        updated_at: updated_ms.div_euclid(1000),
        cwd: PathBuf::from(r.try_get::<_, String>(3)?),
        model_provider: r.try_get(4)?,
        model: r.try_get(5)?,
        source: source.parse().unwrap_or(SessionSource::Unknown),
        preview: r.try_get(7)?,
        name: r.try_get(8)?,
        archived: r.try_get(9)?,
        forked_from_id: forked.map(parse_id).transpose()?,
        cli_version: r.try_get(11)?,
        git,
    })
}

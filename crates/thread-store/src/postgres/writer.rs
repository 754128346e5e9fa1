//! The writer of one thread's records in PostgreSQL: each append one transaction under the
//! thread's lease, safe to retry after a lost answer.

use super::db::Db;
use super::lease::{self, Leases};
use super::{line_text, now_ms};
use crate::error::StoreError;
use crate::record::{encode_line, format_timestamp, preview_text, truncate_preview};
use crate::types::{RolloutItem, RolloutLine};
use oi_protocol::ThreadId;
use std::sync::Arc;

/// Appends records to one thread in PostgreSQL while holding its lease.
pub(crate) struct PgWriter {
    pub(super) db: Arc<Db>,
    pub(super) leases: Arc<Leases>,
    pub(super) id: ThreadId,
    /// The lease generation this writer holds; appends are refused once it changed.
    pub(super) generation: lease::Generation,
    /// `seq` of the next record.
    pub(super) next_seq: i64,
    pub(super) has_preview: bool,
    /// Set by [`PgWriter::close`], which gave the lease back already.
    pub(super) released: bool,
}

impl std::fmt::Debug for PgWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgWriter")
            .field("id", &self.id)
            .field("database", &self.db.display)
            .finish_non_exhaustive()
    }
}

impl PgWriter {
    pub(crate) fn thread_id(&self) -> ThreadId {
        self.id
    }

    /// How long one operation of this writer waits for the server (`statement_timeout_sec`).
    pub(crate) fn statement_timeout(&self) -> std::time::Duration {
        self.db.statement_timeout()
    }

    pub(crate) fn append_all(&mut self, items: &[RolloutItem]) -> Result<(), StoreError> {
        futures::executor::block_on(self.append_all_async(items))
    }

    /// [`PgWriter::append_all`] for async callers.
    pub(crate) async fn append_all_async(
        &mut self,
        items: &[RolloutItem],
    ) -> Result<(), StoreError> {
        let ts = format_timestamp(chrono::Utc::now());
        let lines: Vec<RolloutLine> = items
            .iter()
            .map(|item| RolloutLine {
                timestamp: ts.clone(),
                item: item.clone(),
            })
            .collect();
        self.append_lines(&lines).await
    }

    /// Inserts the records and refreshes the thread's row in one transaction.
    pub(super) async fn append_lines(&mut self, lines: &[RolloutLine]) -> Result<(), StoreError> {
        if lines.is_empty() {
            return Ok(());
        }
        let mut texts = Vec::with_capacity(lines.len());
        let mut preview = None;
        for l in lines {
            let mut buf = Vec::new();
            encode_line(&mut buf, &l.timestamp, &l.item)?;
            texts.push(line_text(buf)?);
            if !self.has_preview
                && preview.is_none()
                && let Some(text) = preview_text(&l.item)
            {
                preview = Some(truncate_preview(text));
            }
        }
        let count = i64::try_from(texts.len())
            .map_err(|_| StoreError::Invalid("too many records in one append".into()))?;
        let seqs: Vec<i64> = (self.next_seq..self.next_seq + count).collect();
        let thread = self.id;
        let generation = self.generation;
        let db = self.db.clone();
        let leases = self.leases.clone();
        let new_preview = preview.clone();
        self.db
            .run_async(async move {
                leases.ensure(&db, thread).await?;
                let id = thread.to_string();
                let mut conn = db.conn().await?;
                let tx = conn.transaction().await?;
                lease::check_generation(&tx, &thread, generation).await?;
                let inserted = tx
                    .execute(
                        "INSERT INTO oi_rollout_lines (thread_id, seq, line)
                     SELECT $1, s, l FROM unnest($2::BIGINT[], $3::TEXT[]) AS r (s, l)",
                        &[&id, &seqs, &texts],
                    )
                    .await;
                match inserted {
                    Ok(_) => {}
                    Err(e) if is_unique_violation(&e) => {
                        // Only this writer inserts under its generation: the same records are
                        // there already, from an earlier try whose commit went through but whose
                        // answer was lost with the connection. Check that, and call it done.
                        drop(tx);
                        return already_written(&conn, &id, &seqs, &texts).await;
                    }
                    Err(e) => return Err(e.into()),
                }
                tx.execute(
                    "UPDATE oi_threads SET updated_at_ms = GREATEST(updated_at_ms, $2),
                    preview = COALESCE($3, preview) WHERE id = $1",
                    &[&id, &now_ms(), &new_preview],
                )
                .await?;
                tx.commit().await?;
                Ok(())
            })
            .await?;
        self.next_seq += count;
        if preview.is_some() {
            self.has_preview = true;
        }
        Ok(())
    }
}

impl PgWriter {
    /// Gives the thread's lease back and returns once the database has it: what dropping
    /// the writer does, for async callers (a drop may not wait on every thread).
    pub(crate) async fn close(mut self) {
        self.released = true;
        self.leases.release_async(&self.db, self.id).await;
    }
}

impl Drop for PgWriter {
    fn drop(&mut self) {
        if !self.released {
            self.leases.release(&self.db, self.id);
        }
    }
}

fn is_unique_violation(e: &tokio_postgres::Error) -> bool {
    e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION)
}

/// After a duplicate key on retry: `Ok` if the rows at `seqs` are exactly `texts` (the
/// earlier try committed), else an error naming the conflict.
async fn already_written(
    conn: &tokio_postgres::Client,
    id: &str,
    seqs: &[i64],
    texts: &[String],
) -> Result<(), StoreError> {
    let stored: Vec<String> = conn
        .query(
            "SELECT line FROM oi_rollout_lines WHERE thread_id = $1 AND seq = ANY($2)
             ORDER BY seq",
            &[&id, &seqs],
        )
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect();
    if stored.as_slice() == texts {
        return Ok(());
    }
    Err(StoreError::Postgres(format!(
        "thread {id}: records {}..{} were written by another session; this session's \
         records are not saved. Resume the thread to continue from what is stored",
        seqs.first().copied().unwrap_or(0),
        seqs.last().copied().unwrap_or(0)
    )))
}

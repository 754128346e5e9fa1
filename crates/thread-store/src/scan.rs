//! Walking `sessions/YYYY/MM/DD`: the day directories, their rollout files, and the
//! directory mtimes the index records to tell which day directories changed.

use crate::error::StoreError;
use crate::record::system_time_ms;
use std::path::{Path, PathBuf};

/// A rollout file found on disk, with its modification time.
pub(crate) struct FoundFile {
    pub path: PathBuf,
    pub mtime_ms: i64,
}

/// Subdirectories of `dir` whose names are all digits, highest first.
fn numeric_subdirs_desc(dir: &Path) -> Result<Vec<PathBuf>, StoreError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(StoreError::io(dir, e)),
    };
    let mut out: Vec<(u32, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let n = e.file_name().to_str()?.parse::<u32>().ok()?;
            Some((n, e.path()))
        })
        .collect();
    out.sort_by_key(|e| std::cmp::Reverse(e.0));
    Ok(out.into_iter().map(|(_, p)| p).collect())
}

/// `sessions/YYYY/MM/DD` directories, newest day first.
pub(crate) fn day_dirs_newest_first(sessions: &Path) -> Result<Vec<PathBuf>, StoreError> {
    let mut days = Vec::new();
    for year in numeric_subdirs_desc(sessions)? {
        for month in numeric_subdirs_desc(&year)? {
            days.extend(numeric_subdirs_desc(&month)?);
        }
    }
    Ok(days)
}

/// The `.jsonl` files of one day directory, sorted by name (i.e. by creation time).
pub(crate) fn files_in(day: &Path) -> Result<Vec<FoundFile>, StoreError> {
    let entries = std::fs::read_dir(day).map_err(|e| StoreError::io(day, e))?;
    let mut out: Vec<FoundFile> = entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.ends_with(".jsonl"))
        })
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            meta.is_file().then(|| FoundFile {
                path: e.path(),
                mtime_ms: meta.modified().map(system_time_ms).unwrap_or(0),
            })
        })
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(out)
}

/// The `.jsonl` files of one day directory, from the directory listing alone (the entry
/// type comes with the listing on common filesystems: no stat per file).
pub(crate) fn rollout_names(day: &Path) -> Result<Vec<PathBuf>, StoreError> {
    let entries = std::fs::read_dir(day).map_err(|e| StoreError::io(day, e))?;
    Ok(entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.ends_with(".jsonl"))
                && e.file_type().is_ok_and(|t| t.is_file())
        })
        .map(|e| e.path())
        .collect())
}

/// A directory whose mtime is this close to the time it is listed may change again within
/// the same timestamp tick (coarse clocks, 1–2 s filesystems) without its mtime moving.
pub(crate) const RACY_NS: i64 = 3_000_000_000;
/// Recorded instead of a directory's mtime when it was too recent to trust.
pub(crate) const UNSEEN: i64 = -1;

pub(crate) fn dir_mtime_ns(dir: &Path) -> Option<i64> {
    let t = std::fs::metadata(dir).and_then(|m| m.modified()).ok()?;
    Some(system_time_ns(t))
}

fn system_time_ns(t: std::time::SystemTime) -> i64 {
    match t.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_nanos()).unwrap_or(i64::MAX),
    }
}

/// `mtime` if it is old enough to be trusted, else [`UNSEEN`] (listed again next time).
pub(crate) fn trusted(mtime_ns: i64) -> i64 {
    let now = system_time_ns(std::time::SystemTime::now());
    if now.saturating_sub(mtime_ns) < RACY_NS {
        UNSEEN
    } else {
        mtime_ns
    }
}

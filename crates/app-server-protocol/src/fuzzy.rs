//! `fuzzyFileSearch` and its session variant: params, results and notifications. The
//! match objects keep Codex's snake_case field names (`file_name`, `match_type`).
#![allow(missing_docs)] // TODO(issue 49): document this module's fields and variants

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `fuzzyFileSearch`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchParams {
    pub query: String,
    /// Folders to search (each walked with its `.gitignore` rules).
    pub roots: Vec<String>,
    /// A newer search with the same token stops this one, which answers with no files.
    #[serde(default)]
    pub cancellation_token: Option<String>,
}

/// Whether a match is a file or a folder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FuzzyFileSearchMatchType {
    File,
    Directory,
}

/// One match, best first in its list.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct FuzzyFileSearchResult {
    /// The root it was found under.
    pub root: String,
    /// Its path relative to `root`.
    pub path: String,
    pub match_type: FuzzyFileSearchMatchType,
    /// The last component of `path`.
    pub file_name: String,
    pub score: u32,
    /// Character positions in `path` that matched the query.
    pub indices: Vec<u32>,
}

/// The result of `fuzzyFileSearch`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct FuzzyFileSearchResponse {
    pub files: Vec<FuzzyFileSearchResult>,
}

/// `fuzzyFileSearch/sessionStart`: walk these roots once for the updates that follow.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionStartParams {
    pub session_id: String,
    pub roots: Vec<String>,
}

/// `fuzzyFileSearch/sessionUpdate`: a new query (answered by notifications).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionUpdateParams {
    pub session_id: String,
    pub query: String,
}

/// `fuzzyFileSearch/sessionStop`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionStopParams {
    pub session_id: String,
}

/// `fuzzyFileSearch/sessionUpdated`: the latest query's matches.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionUpdatedNotification {
    pub session_id: String,
    pub query: String,
    pub files: Vec<FuzzyFileSearchResult>,
}

/// `fuzzyFileSearch/sessionCompleted`: the update's search is done.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FuzzyFileSearchSessionCompletedNotification {
    pub session_id: String,
}

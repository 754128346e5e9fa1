//! What each key may do when a project layer (`.openinterpreter/config.toml`) sets it.
//!
//! A project layer is written by whoever could write the repository: its author, a `git
//! pull`, a sandboxed command planting `sub/.openinterpreter/config.toml`. Trusting the folder
//! lets it apply; what it may then change depends on the key, and every key of the schema has
//! exactly one [`ProjectRule`] here ([`PROJECT_RULES`], wildcards `*` standing for any table
//! name). A test enumerates the schema (every field of every table, `crates/config/src/schema.rs`
//! and the `[mcp_servers]` schema) and fails for a key without a rule, or for a key whose rule
//! the loader does not enforce: each `Widens` key must be caught by the measured widening
//! check, each `Bounded` key clamped, each `UserOnly` key dropped. So a key added later cannot
//! slip through unclassified.
//!
//! The rules are applied in two places: [`restrict`] drops `UserOnly` keys and clamps
//! `Bounded` ones in the project table before it is layered (with one warning each), and
//! `project_consent::widening` measures what the remaining `Widens` keys change.

use std::path::Path;

/// How a key set by a project layer is treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProjectRule {
    /// Changes what the model is told or how answers are shown, not what the agent may do
    /// or spend: applies as written.
    Neutral,
    /// Can widen what the agent may do: measured (the session typed with and without the
    /// layer), it applies only with the user's consent when it widens; narrowing needs none.
    Widens,
    /// A size, count or duration: a project layer may set it up to `ceiling` (or up to the
    /// user's own value when that is higher); more is clamped, with a warning.
    Bounded {
        /// The most a project layer may set.
        ceiling: u64,
    },
    /// Only the user's own config sets it: a project layer's value is ignored, with a warning.
    UserOnly,
}

/// One key (or every key of a table, `table.*`) and its rule.
#[derive(Clone, Copy, Debug)]
pub struct ProjectKey {
    /// Dotted key path; `*` stands for any one name (a profile, a provider id, a server).
    pub path: &'static str,
    /// How a project layer's value is treated.
    pub rule: ProjectRule,
    /// What the key can do, for the documentation.
    pub why: &'static str,
}

const fn key(path: &'static str, rule: ProjectRule, why: &'static str) -> ProjectKey {
    ProjectKey { path, rule, why }
}

use ProjectRule::{Bounded, Neutral, UserOnly, Widens};

/// Every key of the schema a project layer may write, and its rule. A `[profiles.<name>]`
/// key follows the rule of the top-level key of the same name (see [`rule_for`]).
pub const PROJECT_RULES: &[ProjectKey] = &[
    key("model", Neutral, "the model name"),
    key(
        "model_provider",
        Widens,
        "your prompts and the provider's key go to another endpoint",
    ),
    key("model_reasoning_effort", Neutral, "a request parameter"),
    key("model_reasoning_summary", Neutral, "a request parameter"),
    key("model_verbosity", Neutral, "a request parameter"),
    key(
        "model_context_window",
        Bounded { ceiling: 1 << 20 },
        "how large requests grow before the history is compacted",
    ),
    key(
        "model_auto_compact_token_limit",
        Bounded { ceiling: 1 << 20 },
        "how large requests grow before the history is compacted",
    ),
    key(
        "model_max_output_tokens",
        Neutral,
        "never more than the model's window leaves",
    ),
    key("tool_call_format", Neutral, "how tool calls are written"),
    key(
        "harness",
        Neutral,
        "which tools the model is shown; every tool runs under the same sandbox and approvals",
    ),
    key("approval_policy", Widens, "fewer approvals"),
    key("sandbox_mode", Widens, "a wider sandbox"),
    key(
        "sandbox_workspace_write.*",
        Widens,
        "more writable folders, network, `.git` writes",
    ),
    key(
        "profile",
        Widens,
        "picks a profile, which may set any of its keys",
    ),
    key(
        "model_providers.*.*",
        Widens,
        "a provider added or changed: requests (and the key in its `env_key`) go to its endpoint, model lists included",
    ),
    key(
        "mcp_servers.*.name",
        Neutral,
        "accepted from older configs, no effect",
    ),
    key(
        "mcp_servers.*.experimental_environment",
        Neutral,
        "accepted from Codex, no effect",
    ),
    key(
        "mcp_servers.*.bearer_token",
        Widens,
        "refused in every config (a secret in a file): use `bearer_token_env_var`",
    ),
    key(
        "mcp_servers.*.protocol_version",
        Widens,
        "which protocol revision a server is spoken to in: a change to a server, reviewed as one",
    ),
    key(
        "mcp_servers.*.*",
        Widens,
        "an MCP server added or changed: it runs outside the sandbox",
    ),
    key("base_instructions", Neutral, "what the model is told"),
    key("instructions", Neutral, "what the model is told"),
    key("developer_instructions", Neutral, "what the model is told"),
    key("compact_prompt", Neutral, "what the model is told"),
    key(
        "approval_timeout_sec",
        Bounded { ceiling: 3600 },
        "how long a turn waits for an answer",
    ),
    key(
        "parked_turn_timeout_sec",
        Bounded { ceiling: 86_400 },
        "how long a turn parked at an approval can still be resumed",
    ),
    key(
        "max_turn_steps",
        Bounded { ceiling: 1000 },
        "model requests one turn may make",
    ),
    key(
        "tool_output_max_bytes",
        Bounded { ceiling: 1 << 20 },
        "tool output held and sent to the model",
    ),
    key(
        "shell_timeout_ms",
        Bounded { ceiling: 3_600_000 },
        "how long a command may run",
    ),
    key("hide_agent_reasoning", Neutral, "what is shown"),
    key("show_raw_agent_reasoning", Neutral, "what is shown"),
    key(
        "project_doc_max_bytes",
        Bounded {
            ceiling: 256 * 1024,
        },
        "how much of AGENTS.md is read and sent with every request",
    ),
    key(
        "project_doc_fallback_filenames",
        Neutral,
        "which of the project's own files are its instructions, as writing AGENTS.md would: each is read only if it is a regular file inside the project, within `project_doc_max_bytes`",
    ),
    key(
        "skills.other_agents",
        UserOnly,
        "reads skill folders in your home (`~/.codex/skills`, `~/.claude/skills`) into every request",
    ),
    key(
        "skills.max_prompt_tokens",
        Bounded { ceiling: 8192 },
        "what the list of skills costs in every request",
    ),
    key(
        "skills.config",
        Neutral,
        "which skills are offered to the model (text, not permissions: a skill's scripts run as any command)",
    ),
    key(
        "notify",
        Widens,
        "a program run after each turn, outside the sandbox",
    ),
    key(
        "hooks",
        Widens,
        "commands run at session start, around tool calls (a pre-tool hook can block them) and at turn end, outside the sandbox",
    ),
    key(
        "include_plan_tool",
        Neutral,
        "whether the model is offered the plan tool",
    ),
    key(
        "history.persistence",
        Widens,
        "`save-all` saves your prompts where your config says `none`",
    ),
    key(
        "history.max_bytes",
        Neutral,
        "accepted from Codex, not used",
    ),
    key("tui.theme", Neutral, "the terminal UI's colours"),
    key(
        "tui.status_line",
        Neutral,
        "what the terminal UI's status line shows",
    ),
    key(
        "projects.*.*",
        UserOnly,
        "which folders are trusted: a project cannot trust itself",
    ),
    key(
        "shell_environment_policy.*",
        Widens,
        "commands (and `notify`) see more of your environment (secrets included), or variables set for them",
    ),
    key(
        "thread_store.*",
        UserOnly,
        "where your threads are kept, shared by every session of your home",
    ),
    key(
        "mcp_oauth_credentials_store",
        UserOnly,
        "where your MCP tokens are kept",
    ),
    key(
        "mcp_state_key_file",
        UserOnly,
        "the key sealing the approval states and task ids `mcp-server` hands clients: a key the repository knows would let them be forged",
    ),
];

/// Does the dotted `pattern` (with `*` for one name, and a trailing `.*` for any key of a
/// table) cover the key at `parts`?
fn covers(pattern: &str, parts: &[&str]) -> bool {
    let pat: Vec<&str> = pattern.split('.').collect();
    pat.len() == parts.len() && pat.iter().zip(parts).all(|(p, k)| *p == "*" || p == k)
}

/// The entry that covers the key at `parts`: a profile's key (`profiles.<name>.<key>...`)
/// follows the top-level key of that name.
pub fn entry_for(parts: &[&str]) -> Option<&'static ProjectKey> {
    if let ["profiles", _, rest @ ..] = parts
        && !rest.is_empty()
    {
        return entry_for(rest);
    }
    PROJECT_RULES.iter().find(|k| covers(k.path, parts))
}

/// The rule of the key at `parts`.
pub fn rule_for(parts: &[&str]) -> Option<ProjectRule> {
    entry_for(parts).map(|k| k.rule)
}

/// Every key path `table` sets, down to the keys the rules name: a table the rules cover as a
/// whole (`mcp_servers.<name>`, `shell_environment_policy.set`) is one path.
pub(crate) fn set_paths(table: &toml::Table) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    collect(table, &mut Vec::new(), &mut out);
    out
}

fn collect(table: &toml::Table, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    for (k, v) in table {
        prefix.push(k.clone());
        let parts: Vec<&str> = prefix.iter().map(String::as_str).collect();
        match v {
            // A table the rules do not name as a key: look inside.
            toml::Value::Table(t) if entry_for(&parts).is_none() => collect(t, prefix, out),
            _ => out.push(prefix.clone()),
        }
        prefix.pop();
    }
}

/// The `Widens` keys `project` sets, as phrases ("sets `notify`"): what is named when the
/// session cannot be typed without the layer, so what it widens cannot be measured.
pub(crate) fn widening_keys(project: &toml::Table) -> Vec<String> {
    set_paths(project)
        .into_iter()
        .filter(|parts| {
            let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
            rule_for(&refs) == Some(Widens)
        })
        .map(|parts| format!("sets `{}`", crate::key_path::dotted(&parts)))
        .collect()
}

/// Applies the `UserOnly` and `Bounded` rules to a project layer's table before it is
/// layered: `UserOnly` keys are dropped, `Bounded` numbers above their bound clamped to it
/// (the bound is the rule's ceiling, or what `user` — the files without the layer — sets
/// there, when higher). One warning per key, naming the file.
pub(crate) fn restrict(
    project: &mut toml::Table,
    user: &toml::Table,
    path: &Path,
    user_path: &Path,
    warnings: &mut Vec<String>,
) {
    for parts in set_paths(project) {
        let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
        let shown = crate::key_path::dotted(&parts);
        match rule_for(&refs) {
            Some(UserOnly) => {
                remove(project, &refs);
                warnings.push(format!(
                    "project config {}: `{shown}` is ignored: only your own config ({}) sets it",
                    path.display(),
                    user_path.display()
                ));
            }
            Some(Bounded { ceiling }) => {
                let Some(value) = get(project, &refs).and_then(number) else {
                    continue; // a wrong type is reported when the layer is typed
                };
                let bound = get(user, &refs).and_then(number).unwrap_or(0).max(ceiling);
                if value > bound {
                    set(project, &refs, toml::Value::Integer(saturating_i64(bound)));
                    warnings.push(format!(
                        "project config {}: `{shown}` is {value}, more than a project config may \
                         set; {bound} is used (your own config.toml may set more)",
                        path.display()
                    ));
                }
            }
            _ => {}
        }
    }
}

fn number(v: &toml::Value) -> Option<u64> {
    match v {
        toml::Value::Integer(i) => u64::try_from(*i).ok(),
        // Truncation is the documented meaning of a fractional count.
        toml::Value::Float(f) if f.is_finite() && *f >= 0.0 => Some(*f as u64),
        _ => None,
    }
}

fn saturating_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn get<'a>(table: &'a toml::Table, parts: &[&str]) -> Option<&'a toml::Value> {
    let (last, parents) = parts.split_last()?;
    let mut cur = table;
    for p in parents {
        cur = cur.get(*p)?.as_table()?;
    }
    cur.get(*last)
}

fn table_at<'a>(table: &'a mut toml::Table, parents: &[&str]) -> Option<&'a mut toml::Table> {
    let mut cur = table;
    for p in parents {
        cur = cur.get_mut(*p)?.as_table_mut()?;
    }
    Some(cur)
}

fn remove(table: &mut toml::Table, parts: &[&str]) {
    if let Some((last, parents)) = parts.split_last()
        && let Some(t) = table_at(table, parents)
    {
        t.remove(*last);
    }
}

fn set(table: &mut toml::Table, parts: &[&str], value: toml::Value) {
    if let Some((last, parents)) = parts.split_last()
        && let Some(t) = table_at(table, parents)
    {
        t.insert(last.to_string(), value);
    }
}

/// How a rule reads in the documentation.
fn describe(rule: ProjectRule) -> String {
    match rule {
        Neutral => "applies".into(),
        Widens => "applies only once you accept the file, when it widens".into(),
        Bounded { ceiling } => format!("at most {ceiling} (more is clamped, with a warning)"),
        UserOnly => "ignored, with a warning (your own config only)".into(),
    }
}

/// The table of docs/configuration.md that says what a project config may set, rendered
/// from [`PROJECT_RULES`].
pub fn reference_markdown() -> String {
    let mut out = String::from("| key in a project config | what happens | why |\n|---|---|---|\n");
    for k in PROJECT_RULES {
        let shown = k.path.replace(".*.*", ".<name>.*").replace("*.", "<name>.");
        out.push_str(&format!(
            "| `{shown}` | {} | {} |\n",
            describe(k.rule),
            k.why
        ));
    }
    out.push_str(
        "| `profiles.<name>.<key>` | as `<key>` above | a profile's keys are the top-level ones |\n",
    );
    out
}

#[cfg(test)]
#[path = "project_keys_tests.rs"]
mod tests;

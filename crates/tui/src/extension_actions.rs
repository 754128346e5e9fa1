//! The I/O behind `/skills` and `/prompts:`: finding skills and reading prompt files, on
//! the blocking pool, through the engine's one loader of each.

use crate::app::SkillRow;
use oi_config::Config;
use oi_core::custom_prompts::{self, Invocation, PromptError};
use oi_core::skills;

/// The skills `config` sees, as `/skills` shows them, and the files not used.
pub(crate) async fn skill_rows(config: Config) -> (Vec<SkillRow>, Vec<(String, String)>) {
    let found = skills::discover_async(config.clone()).await;
    let rows = found
        .skills
        .iter()
        .map(|s| SkillRow {
            name: s.name.clone(),
            description: s.description.clone(),
            scope: s.scope.as_str().to_string(),
            path: s.path.display().to_string(),
            enabled: s.enabled,
            missing_mcp: skills::missing_mcp_servers(s, &config),
        })
        .collect();
    let errors = found
        .errors
        .iter()
        .map(|e| (e.path.display().to_string(), e.message.clone()))
        .collect();
    (rows, errors)
}

/// The custom prompts of `config`'s home and project: (name, description).
pub(crate) async fn custom_prompt_list(config: &Config) -> Vec<(String, String)> {
    let (home, cwd) = (config.home.clone(), config.cwd.clone());
    tokio::task::spawn_blocking(move || {
        let folders = custom_prompts::prompt_folders(&home, &cwd);
        custom_prompts::load_all(&folders)
            .0
            .into_iter()
            .map(|p| {
                let hint = p
                    .argument_hint
                    .clone()
                    .map(|h| format!(" ({h})"))
                    .unwrap_or_default();
                (
                    p.name.clone(),
                    format!("{}{hint}", p.summary().unwrap_or_default()),
                )
            })
            .collect()
    })
    .await
    .unwrap_or_default()
}

/// The prompt `name` with `args` in place, or why it cannot be sent.
pub(crate) async fn expand_custom_prompt(
    config: &Config,
    name: String,
    args: String,
) -> Result<String, PromptError> {
    let (home, cwd) = (config.home.clone(), config.cwd.clone());
    tokio::task::spawn_blocking(move || {
        let folders = custom_prompts::prompt_folders(&home, &cwd);
        let prompt = custom_prompts::find(&folders, &name)?;
        let invocation = Invocation::parse(&args)?;
        custom_prompts::expand_invocation(&prompt, &invocation)
    })
    .await
    .unwrap_or_else(|e| Err(PromptError::Stopped(e.to_string())))
}

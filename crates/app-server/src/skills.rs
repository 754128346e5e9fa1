//! `skills/list`: the skills each asked-for working directory sees — the engine's discovery
//! (`oi_core::skills`) under the config that directory loads (its trusted project, `[skills]`)
//! — with the MCP servers each needs and whether they are configured, and the `SKILL.md`
//! files that could not be used.

use crate::protocol::ThreadOverrides;
use crate::protocol::methods as m;
use crate::protocol::skills::{
    SkillDependencies, SkillErrorInfo, SkillMetadata, SkillToolDependency, SkillsListEntry,
    SkillsListParams, SkillsListResponse,
};
use crate::{Conn, method};
use oi_core::skills::{SkillScope, SkillsFound, discover_async, missing_mcp_servers};
use oi_jsonrpc::{Execution, MethodTable, RequestContext, RpcError};
use std::path::PathBuf;
use std::sync::Arc;

pub(crate) fn register(t: &mut MethodTable, conn: &Arc<Conn>) {
    method::<m::SkillsList, _, _>(t, conn, Execution::Spawn, list);
}

async fn list(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: SkillsListParams,
) -> Result<SkillsListResponse, RpcError> {
    let cwds: Vec<Option<PathBuf>> = if p.cwds.is_empty() {
        vec![None]
    } else {
        p.cwds.iter().map(|c| Some(PathBuf::from(c))).collect()
    };
    let mut data = Vec::new();
    for cwd in cwds {
        let overrides = ThreadOverrides {
            cwd,
            ..Default::default()
        };
        let config = conn.load_config(&overrides).await?.config;
        let found = discover_async(config.clone()).await;
        data.push(entry(&config, &found));
    }
    Ok(SkillsListResponse { data })
}

fn entry(config: &oi_config::Config, found: &SkillsFound) -> SkillsListEntry {
    let skills = found
        .skills
        .iter()
        .map(|s| {
            let missing = missing_mcp_servers(s, config);
            let tools: Vec<SkillToolDependency> = s
                .mcp_servers
                .iter()
                .map(|name| SkillToolDependency {
                    kind: "mcp".into(),
                    value: name.clone(),
                    description: Some(if missing.contains(name) {
                        format!("MCP server `{name}` is not configured: add it with `interpreter mcp add {name} …`")
                    } else {
                        format!("MCP server `{name}` (configured)")
                    }),
                })
                .collect();
            SkillMetadata {
                name: s.name.clone(),
                description: s.description.clone(),
                short_description: s.short_description.clone(),
                path: s.path.display().to_string(),
                scope: match s.scope {
                    SkillScope::Repo => "repo",
                    SkillScope::User | SkillScope::Codex | SkillScope::Claude => "user",
                }
                .to_string(),
                enabled: s.enabled,
                dependencies: (!tools.is_empty()).then_some(SkillDependencies { tools }),
            }
        })
        .collect();
    SkillsListEntry {
        cwd: config.cwd.display().to_string(),
        skills,
        errors: found
            .errors
            .iter()
            .map(|e| SkillErrorInfo {
                path: e.path.display().to_string(),
                message: e.message.clone(),
            })
            .collect(),
    }
}

//! Methods of Codex features this server does not have, which Codex's own clients call
//! while starting: `configRequirements/read`, `hooks/list`, `skills/list`,
//! `plugin/installed`, `account/bedrock/checkGovCloudRequirements`. Each answers what is
//! true here: no requirements, no hooks, no skills, no plugins, no Bedrock.

use crate::protocol::absent::*;
use crate::protocol::methods as m;
use crate::{Conn, method};
use oi_jsonrpc::{Execution, MethodTable};
use std::sync::Arc;

pub(crate) fn register(t: &mut MethodTable, conn: &Arc<Conn>) {
    method::<m::ConfigRequirementsRead, _, _>(t, conn, Execution::Inline, |_c, _x, _p| async {
        Ok(ConfigRequirementsReadResponse::default())
    });
    method::<m::HooksList, _, _>(t, conn, Execution::Inline, |_c, _x, _p| async {
        Ok(HooksListResponse::default())
    });
    method::<m::SkillsList, _, _>(t, conn, Execution::Inline, |_c, _x, _p| async {
        Ok(SkillsListResponse::default())
    });
    method::<m::PluginInstalled, _, _>(t, conn, Execution::Inline, |_c, _x, _p| async {
        Ok(PluginInstalledResponse::default())
    });
    method::<m::BedrockCheckGovCloudRequirements, _, _>(
        t,
        conn,
        Execution::Inline,
        |_c, _x, _p| async { Ok(BedrockCheckGovCloudRequirementsResponse::default()) },
    );
}

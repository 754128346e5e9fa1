//! MCP prompts as slash commands and MCP resources as `@` mentions. Each ready server's
//! prompts are `/mcp__<server>__<prompt>` commands in the slash popup; running one asks for
//! its arguments in a small form (the elicitation form), gets the prompt and sends its text
//! as the user's message. `@<server>:<uri>` names a resource: the `@` popup completes the
//! listed ones, and sending a message reads each mentioned resource into it. The runner does
//! the MCP requests; this is the state and the decisions.

use super::*;
use crate::overlay::PromptArgs;

/// What the servers offer the user, from the status snapshot the runner takes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct McpCatalog {
    /// The prompts, every server's.
    pub prompts: Vec<McpPrompt>,
    /// (server, uri, name)
    pub resources: Vec<(String, String, String)>,
}

/// One prompt a server lists.
#[derive(Clone, Debug, PartialEq)]
pub struct McpPrompt {
    /// The server's name in `[mcp_servers]`.
    pub server: String,
    /// The prompt's name on the server.
    pub name: String,
    /// What it does, as the server says.
    pub description: String,
    /// (name, description, required)
    pub arguments: Vec<(String, String, bool)>,
}

impl McpPrompt {
    /// The slash command's name, without the `/`.
    pub fn command(&self) -> String {
        format!("mcp__{}__{}", self.server, self.name)
    }
}

/// Most resources the `@` popup offers for one query.
const RESOURCE_MATCHES: usize = 10;

impl McpCatalog {
    /// The catalog of every ready server in `status` (the `prompts` and `resources` its
    /// snapshot holds: what the server listed when it became ready).
    pub fn from_status(status: &[oi_core::mcp::McpServerStatus]) -> Self {
        let mut catalog = McpCatalog::default();
        for s in status {
            catalog.add_server(&s.name, &s.prompts, &s.resources);
        }
        catalog
    }

    /// Adds one server's listed prompts and resources (raw MCP `Prompt` and `Resource`
    /// objects), replacing what the catalog had for it.
    pub fn add_server(
        &mut self,
        server: &str,
        prompts: &[serde_json::Value],
        resources: &[serde_json::Value],
    ) {
        self.prompts.retain(|p| p.server != server);
        self.resources.retain(|(s, _, _)| s != server);
        for p in prompts {
            let arguments = p
                .get("arguments")
                .and_then(|a| a.as_array())
                .into_iter()
                .flatten()
                .map(|a| {
                    (
                        text(a, "name"),
                        text(a, "description"),
                        a.get("required").and_then(|r| r.as_bool()) == Some(true),
                    )
                })
                .filter(|(name, _, _)| !name.is_empty())
                .collect();
            self.prompts.push(McpPrompt {
                server: server.to_string(),
                name: text(p, "name"),
                description: text(p, "description"),
                arguments,
            });
        }
        for r in resources {
            self.resources
                .push((server.to_string(), text(r, "uri"), text(r, "name")));
        }
    }
}

fn text(v: &serde_json::Value, key: &str) -> String {
    v.get(key)
        .and_then(|x| x.as_str())
        .unwrap_or_default()
        .to_string()
}

impl App {
    /// Replaces what the MCP servers offer (prompts and resources).
    pub fn set_mcp_catalog(&mut self, catalog: McpCatalog) {
        if self.mcp_catalog == catalog {
            return;
        }
        self.mcp_catalog = catalog;
        // What is typed may match only now (a prompt listed after the popup closed): look
        // again. The actions are already under way or no longer wanted.
        if self.overlay.is_none() {
            let _ = self.refresh_popup();
        }
    }

    /// The slash popup's rows for what is typed after `/`: the built-in commands, then the
    /// MCP prompts, as (name, description).
    pub fn command_entries(&self, typed: &str) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = crate::slash::filter(typed)
            .into_iter()
            .map(|(n, _, d)| (n.to_string(), d.to_string()))
            .collect();
        // Prompts show once `/m` is typed, so the built-in list stays short at `/`.
        if !typed.is_empty() {
            out.extend(
                self.mcp_catalog
                    .prompts
                    .iter()
                    .filter(|p| p.command().contains(typed))
                    .map(|p| (p.command(), format!("MCP prompt · {}", p.description))),
            );
            out.extend(self.custom_prompt_entries(typed));
        }
        out
    }

    /// The `@` popup's rows: resources matching the query (`@server:uri`), then files.
    pub fn file_popup_entries(&self) -> Vec<String> {
        let mut out = self.resource_matches();
        out.extend(self.file_matches.iter().cloned());
        out
    }

    fn resource_matches(&self) -> Vec<String> {
        let Some((_, query)) = self.composer.at_token() else {
            return Vec::new();
        };
        if query.is_empty() {
            return Vec::new();
        }
        let q = query.to_lowercase();
        self.mcp_catalog
            .resources
            .iter()
            .filter(|(server, uri, name)| {
                format!("{server}:{uri}").to_lowercase().contains(&q)
                    || name.to_lowercase().contains(&q)
            })
            .take(RESOURCE_MATCHES)
            .map(|(server, uri, _)| format!("@{server}:{uri}"))
            .collect()
    }

    /// `/mcp__server__prompt [name=value …]`: the prompt's form when it has arguments not
    /// given inline, else the request for it. `None` when no server offers that prompt.
    pub fn mcp_prompt_command(&mut self, name: &str, args: &str) -> Option<Vec<AppAction>> {
        let prompt = self
            .mcp_catalog
            .prompts
            .iter()
            .find(|p| p.command() == name)?
            .clone();
        if self.is_running() {
            self.push_error(format!(
                "`/{name}` is not available while a turn runs; press Esc to interrupt it first"
            ));
            return Some(vec![]);
        }
        let mut given = serde_json::Map::new();
        for pair in args.split_whitespace() {
            match pair.split_once('=') {
                Some((k, v)) if prompt.arguments.iter().any(|(n, _, _)| n == k) => {
                    given.insert(k.to_string(), serde_json::Value::String(v.to_string()));
                }
                _ => {
                    let known: Vec<&str> = prompt
                        .arguments
                        .iter()
                        .map(|(n, _, _)| n.as_str())
                        .collect();
                    self.push_error(format!(
                        "`{pair}` is not an argument of `/{name}`; give `name=value` with a name among: {}",
                        if known.is_empty() { "(none)".to_string() } else { known.join(", ") }
                    ));
                    return Some(vec![]);
                }
            }
        }
        let missing = prompt
            .arguments
            .iter()
            .any(|(n, _, _)| !given.contains_key(n));
        if !missing {
            return Some(vec![AppAction::GetMcpPrompt {
                server: prompt.server,
                prompt: prompt.name,
                arguments: given,
            }]);
        }
        // The form: one text field per argument, filled with what was given inline.
        let mut properties = serde_json::Map::new();
        for (n, d, _) in &prompt.arguments {
            let mut field = serde_json::json!({"type": "string", "title": n, "description": d});
            if let Some(v) = given.get(n) {
                field["default"] = v.clone();
            }
            properties.insert(n.clone(), field);
        }
        let required: Vec<&str> = prompt
            .arguments
            .iter()
            .filter(|(_, _, r)| *r)
            .map(|(n, _, _)| n.as_str())
            .collect();
        let request = serde_json::json!({
            "message": format!("Arguments for the prompt `{}` (Enter sends it, Esc cancels)", prompt.name),
            "requestedSchema": {"type": "object", "properties": properties, "required": required},
        });
        let form = ElicitationForm::from_request(&prompt.server, serde_json::Value::Null, &request);
        self.open(Overlay::PromptArgs(PromptArgs {
            server: prompt.server,
            prompt: prompt.name,
            form,
        }));
        Some(vec![])
    }

    pub(super) fn prompt_args_key(&mut self, mut p: PromptArgs, key: KeyEvent) -> Vec<AppAction> {
        match key.code {
            KeyCode::Esc => {
                self.close_overlay();
                return vec![];
            }
            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                self.close_overlay();
                return vec![];
            }
            KeyCode::Enter => match p.form.content() {
                Ok(serde_json::Value::Object(arguments)) => {
                    self.close_overlay();
                    return vec![AppAction::GetMcpPrompt {
                        server: p.server,
                        prompt: p.prompt,
                        arguments,
                    }];
                }
                Ok(_) => {}
                Err(e) => p.form.error = Some(e),
            },
            _ => keys::edit_form(&mut p.form, key),
        }
        self.overlay = Some(Overlay::PromptArgs(p));
        vec![]
    }

    /// A prompt's text (and images), got by the runner: sent as the user's message.
    pub fn send_prompt(&mut self, input: oi_core::mcp::prompts::PromptInput) -> Vec<AppAction> {
        if input.text.trim().is_empty() && input.images.is_empty() {
            self.push_error("the prompt came back empty; nothing was sent".into());
            return vec![];
        }
        let mut items = vec![UserInput::text(input.text)];
        if !input.images.is_empty() {
            match oi_core::image_input::vision_refusal(&self.status.model) {
                Some(why) => self.push_cell(HistoryCell::Warning {
                    message: format!("the prompt's images were left out: {why}"),
                }),
                None => items.extend(
                    input
                        .images
                        .into_iter()
                        .map(|image_url| UserInput::Image { image_url }),
                ),
            }
        }
        vec![AppAction::Op(Op::UserInput {
            items,
            overrides: std::mem::take(&mut self.pending_overrides),
        })]
    }

    /// The `@server:uri` mentions in `text` that name a server this session has.
    pub(super) fn resource_mentions(&self, text: &str) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = Vec::new();
        for token in text.split_whitespace() {
            let Some((server, uri)) = token.strip_prefix('@').and_then(|t| t.split_once(':'))
            else {
                continue;
            };
            let known = self.status.mcp.contains_key(server)
                || self
                    .mcp_catalog
                    .resources
                    .iter()
                    .any(|(s, _, _)| s == server);
            let pair = (server.to_string(), uri.to_string());
            if known && !uri.is_empty() && !out.contains(&pair) {
                out.push(pair);
            }
        }
        out
    }

    /// A message whose mentioned resources could not be read: nothing was sent, the draft
    /// comes back, and the settings it would have carried wait for the next message.
    pub fn mentions_failed(&mut self, text: &str, overrides: TurnOverrides, error: String) {
        self.mention_echo = None;
        self.pending_overrides = overrides;
        self.composer.set_text(text);
        self.push_error(error);
    }

    /// What the user cell shows for an echoed message: for one sent with resources, the
    /// typed text and a line per resource (their contents went to the model, not the screen).
    pub(super) fn user_echo(&mut self, message: &str) -> String {
        match self.mention_echo.take() {
            Some((typed, mentions)) if message.starts_with(&typed) => {
                let mut text = typed;
                for (server, uri) in mentions {
                    text.push_str(&format!("\n+ @{server}:{uri} (read into the message)"));
                }
                text
            }
            _ => message.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn app_with_catalog() -> App {
        let mut app = App::new(Composer::default());
        app.status.model = "mock-model".into();
        app.status.mcp.insert("everything".into(), McpState::Ready);
        app.set_mcp_catalog(McpCatalog::from_status(&[oi_core::mcp::McpServerStatus {
            name: "everything".into(),
            state: oi_core::mcp::McpServerState::Ready,
            transport: "stdio",
            tools: vec![],
            withheld_tools: vec![],
            resources: vec![json!({"uri": "demo://resource/static/document/structure.md", "name": "structure.md"})],
            resource_templates: vec![],
            prompts: vec![
                json!({"name": "simple-prompt", "description": "A prompt with no arguments"}),
                json!({"name": "args-prompt", "description": "two arguments", "arguments": [
                    {"name": "city", "description": "Name of the city", "required": true},
                    {"name": "state", "description": "Name of the state"}
                ]}),
            ],
            last_error: None,
            protocol: None,
        }]));
        app
    }

    #[test]
    fn prompts_join_the_slash_popup_and_resources_the_at_popup() {
        let mut app = app_with_catalog();
        let names: Vec<String> = app
            .command_entries("mcp__")
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(
            names,
            [
                "mcp__everything__simple-prompt",
                "mcp__everything__args-prompt"
            ]
        );
        assert!(
            app.command_entries("")
                .iter()
                .all(|(n, _)| !n.starts_with("mcp__"))
        );
        app.composer.set_text("read @struct");
        assert_eq!(
            app.file_popup_entries(),
            ["@everything:demo://resource/static/document/structure.md"]
        );
    }

    #[test]
    fn a_prompt_with_arguments_opens_a_form_and_inline_ones_skip_it() {
        let mut app = app_with_catalog();
        assert!(app.mcp_prompt_command("mcp__nobody__x", "").is_none());
        let acts = app
            .mcp_prompt_command("mcp__everything__args-prompt", "")
            .unwrap();
        assert!(acts.is_empty());
        assert!(matches!(app.overlay, Some(Overlay::PromptArgs(_))));
        app.overlay = None;
        let acts = app
            .mcp_prompt_command("mcp__everything__args-prompt", "city=Paris state=TX")
            .unwrap();
        assert!(matches!(
            &acts[..],
            [AppAction::GetMcpPrompt { prompt, arguments, .. }]
                if prompt == "args-prompt" && arguments["city"] == "Paris"
        ));
        let acts = app
            .mcp_prompt_command("mcp__everything__args-prompt", "town=Paris")
            .unwrap();
        assert!(acts.is_empty());
        assert!(
            app.take_pending().iter().any(|c| matches!(c,
            HistoryCell::Error { message } if message.contains("`town=Paris` is not an argument")))
        );
    }

    #[test]
    fn mentions_name_known_servers_only() {
        let app = app_with_catalog();
        assert_eq!(
            app.resource_mentions(
                "see @everything:demo://a and @someone:x and a@b:c and @everything:demo://a"
            ),
            [("everything".to_string(), "demo://a".to_string())]
        );
    }
}

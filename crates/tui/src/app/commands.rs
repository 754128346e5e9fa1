//! Submitting the composer: turns and slash commands.

use super::*;
use crate::slash::{self, Parsed, SlashCommand};

impl App {
    pub(super) fn submit(&mut self, text: String) -> Vec<AppAction> {
        if let Some(parsed) = slash::parse(&text) {
            return match parsed {
                Parsed::Command(cmd, args) => self.run_command(cmd, &args),
                Parsed::Unknown(name) => {
                    if let Some(prompt) = name.strip_prefix(PROMPT_COMMAND_PREFIX) {
                        let args = text
                            .trim()
                            .split_once(char::is_whitespace)
                            .map_or("", |(_, a)| a);
                        return vec![AppAction::RunCustomPrompt {
                            name: prompt.to_string(),
                            args: args.trim().to_string(),
                        }];
                    }
                    if name.starts_with("mcp__") {
                        // The runner lists the server's prompts first: the catalog may
                        // predate the server's readiness.
                        let args = text
                            .trim()
                            .split_once(char::is_whitespace)
                            .map_or("", |(_, a)| a);
                        return vec![AppAction::RunMcpPrompt {
                            name,
                            args: args.trim().to_string(),
                        }];
                    }
                    self.push_error(format!(
                        "Unknown command `/{name}`. Type /help to see the commands; it was not sent to the model."
                    ));
                    vec![]
                }
            };
        }
        if let Some(command) = text.strip_prefix('!') {
            let command = command.trim();
            if command.is_empty() {
                self.push_error("Type a command after `!`, e.g. `!git status`".into());
                return vec![];
            }
            return vec![AppAction::RunShell(command.to_string())];
        }
        self.prompts_to_save.push(text.clone());
        if self.is_running() {
            return vec![self.steer(text)];
        }
        match self.message_items(text.clone()) {
            Ok(items) => {
                let overrides = std::mem::take(&mut self.pending_overrides);
                let mentions = self.resource_mentions(&text);
                if mentions.is_empty() {
                    vec![AppAction::Op(Op::UserInput { items, overrides })]
                } else {
                    self.mention_echo = Some((text.clone(), mentions.clone()));
                    vec![AppAction::SendWithResources {
                        text,
                        items,
                        overrides,
                        mentions,
                    }]
                }
            }
            Err(why) => {
                // Nothing was sent: the draft comes back for the user to change.
                self.prompts_to_save.pop();
                self.composer.set_text(&text);
                self.push_error(why);
                vec![]
            }
        }
    }

    pub(super) fn user_turn(&mut self, text: String) -> AppAction {
        AppAction::Op(Op::UserInput {
            items: self.prompt_items(text),
            overrides: std::mem::take(&mut self.pending_overrides),
        })
    }

    fn run_command(&mut self, cmd: SlashCommand, args: &str) -> Vec<AppAction> {
        let busy = |app: &mut App, what: &str| {
            app.push_error(format!(
                "`/{what}` is not available while a turn runs; press Esc to interrupt it first"
            ));
            vec![]
        };
        match cmd {
            SlashCommand::Quit | SlashCommand::Exit => {
                self.should_quit = true;
                vec![AppAction::Quit]
            }
            SlashCommand::Help => {
                self.push_info("Commands", slash::help_lines());
                vec![]
            }
            SlashCommand::New if self.is_running() => busy(self, "new"),
            SlashCommand::New => vec![AppAction::NewThread],
            SlashCommand::Resume if self.is_running() => busy(self, "resume"),
            SlashCommand::Resume if !args.is_empty() => match args.parse() {
                Ok(id) => vec![AppAction::Resume(id)],
                Err(_) => {
                    self.push_error(format!(
                        "`{args}` is not a thread id; run /resume without arguments to pick one"
                    ));
                    vec![]
                }
            },
            SlashCommand::Resume => vec![AppAction::OpenResumePicker],
            SlashCommand::Fork if self.is_running() => busy(self, "fork"),
            SlashCommand::Fork => vec![AppAction::Fork],
            SlashCommand::Compact => vec![AppAction::Op(Op::Compact)],
            SlashCommand::Diff => vec![AppAction::ShowDiff],
            SlashCommand::Plan => {
                self.show_plan();
                vec![]
            }
            SlashCommand::Mention => {
                self.composer.set_text("@");
                self.refresh_popup()
            }
            SlashCommand::Status => {
                let lines = self.status_lines();
                self.push_info("Status", lines);
                vec![]
            }
            SlashCommand::Skills => vec![AppAction::ShowSkills],
            SlashCommand::Mcp => vec![AppAction::ShowMcp {
                verbose: args == "verbose",
            }],
            SlashCommand::Init if self.is_running() => busy(self, "init"),
            SlashCommand::Init => vec![AppAction::Init],
            SlashCommand::Logout => vec![AppAction::Logout],
            SlashCommand::Model => {
                let items = self.model_items();
                if items.is_empty() {
                    self.push_error("No models are known; set `model` in config.toml".into());
                    return vec![];
                }
                self.overlay = Some(Overlay::Picker(Picker::new("Choose a model", items)));
                vec![]
            }
            SlashCommand::Harness => {
                use oi_protocol::config_types::Harness;
                let items = Harness::ALL
                    .into_iter()
                    .map(|h| PickerItem {
                        label: h.as_str().to_string(),
                        detail: h.summary().to_string(),
                        value: PickerValue::Harness(h),
                    })
                    .collect();
                self.overlay = Some(Overlay::Picker(Picker::new("Harness profile", items)));
                vec![]
            }
            SlashCommand::Review if self.is_running() => busy(self, "review"),
            SlashCommand::Review => vec![AppAction::Review],
            SlashCommand::Copy => match self.last_answer() {
                Some(text) => vec![AppAction::Copy(text)],
                None => {
                    self.push_error("There is no answer to copy yet".into());
                    vec![]
                }
            },
            SlashCommand::Rename if args.is_empty() => {
                self.push_error("Give the new name: `/rename NAME`".into());
                vec![]
            }
            SlashCommand::Rename => vec![AppAction::Rename(args.to_string())],
            SlashCommand::Undo if self.is_running() => busy(self, "undo"),
            SlashCommand::Undo => self.ask_undo(),
            SlashCommand::Clear
            | SlashCommand::Export
            | SlashCommand::Archive
            | SlashCommand::Delete
            | SlashCommand::Theme
            | SlashCommand::Statusline
            | SlashCommand::Config
            | SlashCommand::Title => self.run_daily_command(cmd, args),
            SlashCommand::Approvals => {
                let items = APPROVAL_PRESETS
                    .iter()
                    .enumerate()
                    .map(|(i, (label, desc, _, _))| PickerItem {
                        label: label.to_string(),
                        detail: desc.to_string(),
                        value: PickerValue::ApprovalPreset(i),
                    })
                    .collect();
                self.overlay = Some(Overlay::Picker(Picker::new("Approvals", items)));
                vec![]
            }
        }
    }

    /// The prompt `/init` sends, as a turn.
    pub fn init_turn(&mut self) -> AppAction {
        self.user_turn(INIT_PROMPT.to_string())
    }

    fn model_items(&self) -> Vec<PickerItem> {
        let mut items = Vec::new();
        let mut models = self.models.clone();
        if !models.iter().any(|(m, _)| *m == self.status.model) && !self.status.model.is_empty() {
            models.insert(0, (self.status.model.clone(), vec![]));
        }
        for (model, efforts) in models {
            if efforts.is_empty() {
                items.push(PickerItem {
                    label: model.clone(),
                    detail: String::new(),
                    value: PickerValue::Model {
                        model,
                        effort: None,
                    },
                });
            } else {
                for e in efforts {
                    items.push(PickerItem {
                        label: format!("{model} {}", e.as_str()),
                        detail: "reasoning effort".into(),
                        value: PickerValue::Model {
                            model: model.clone(),
                            effort: Some(e),
                        },
                    });
                }
            }
        }
        items
    }

    /// Sets the `/model` catalog: `(model id, efforts as strings)`.
    pub fn set_models(&mut self, models: Vec<(String, Vec<String>)>) {
        self.models = models
            .into_iter()
            .map(|(m, e)| (m, e.iter().filter_map(|s| effort_from(s)).collect()))
            .collect();
    }

    /// Opens the `/resume` picker over `(id, title, detail)` rows.
    pub fn open_resume_picker(&mut self, threads: Vec<(oi_protocol::ThreadId, String, String)>) {
        // The thread on screen is not one to resume (it is stored, and newest, from the start).
        let threads: Vec<_> = threads
            .into_iter()
            .filter(|(id, _, _)| id.to_string() != self.status.thread_id)
            .collect();
        if threads.is_empty() {
            self.push_info("No stored threads to resume", vec![]);
            return;
        }
        let items = threads
            .into_iter()
            .map(|(id, label, detail)| PickerItem {
                label,
                detail,
                value: PickerValue::Thread(id),
            })
            .collect();
        self.overlay = Some(Overlay::Picker(Picker::new(
            "Resume a thread (type to search)",
            items,
        )));
    }

    fn status_lines(&self) -> Vec<String> {
        let s = &self.status;
        let mut out = vec![
            format!("thread    {}", s.thread_id),
            format!(
                "model     {}{} via {}",
                s.model,
                s.effort
                    .map(|e| format!(" ({})", e.as_str()))
                    .unwrap_or_default(),
                s.provider
            ),
            format!("cwd       {}", s.cwd.display()),
            format!(
                "sandbox   {} · approval {}",
                s.sandbox.map(|m| m.to_string()).unwrap_or_default(),
                s.approval.map(|a| a.to_string()).unwrap_or_default()
            ),
            format!("tokens    {} used in this thread", s.total_tokens),
        ];
        match (s.context_window, s.context_left_percent()) {
            (Some(w), Some(p)) => out.push(match &s.context_window_source {
                Some(source) => format!("context   {p}% left of {w} ({source})"),
                None => format!("context   {p}% left of {w}"),
            }),
            _ => out.push("context   window size unknown".into()),
        }
        let ready = s.mcp.values().filter(|m| **m == McpState::Ready).count();
        out.push(format!("mcp       {ready}/{} servers ready", s.mcp.len()));
        out
    }

    /// `/mcp`: one block per server. `tools` = (server, tool, description, approval mode).
    pub fn show_mcp(&mut self, verbose: bool, servers: Vec<McpServerRow>) {
        if servers.is_empty() {
            self.push_info(
                "No MCP servers configured",
                vec!["add one with `interpreter mcp add NAME -- COMMAND`".into()],
            );
            return;
        }
        let mut lines = Vec::new();
        for s in servers {
            let state = match self.status.mcp.get(&s.name) {
                Some(McpState::Ready) => "ready".to_string(),
                Some(McpState::Starting) | None => "starting".to_string(),
                Some(McpState::Failed(_)) => "failed".to_string(),
                Some(McpState::Cancelled) => "cancelled".to_string(),
            };
            let state = if s.enabled { state } else { "disabled".into() };
            let withheld = if s.withheld.is_empty() {
                String::new()
            } else {
                format!(" ({} withheld)", s.withheld.len())
            };
            let protocol = s
                .protocol
                .as_ref()
                .map(|p| format!(" · protocol {p}"))
                .unwrap_or_default();
            lines.push(format!(
                "{} · {state} · {}{protocol} · {} tools{withheld}",
                s.name,
                s.transport,
                s.tools.len()
            ));
            let error = s.error.or_else(|| match self.status.mcp.get(&s.name) {
                Some(McpState::Failed(e)) => Some(e.clone()),
                _ => None,
            });
            if let Some(e) = error {
                // Every line: the last ones usually say how to fix it.
                let mut e_lines = e.lines();
                lines.push(format!(
                    "  last error: {}",
                    e_lines.next().unwrap_or_default()
                ));
                lines.extend(e_lines.map(|l| format!("    {l}")));
            }
            if verbose {
                for (tool, desc, approval) in &s.tools {
                    let desc = desc.lines().next().unwrap_or_default();
                    lines.push(format!("  {tool} [{approval}] {desc}"));
                }
                for (tool, why) in &s.withheld {
                    lines.push(format!("  {tool} [withheld] {why}"));
                }
                if !s.resources.is_empty() {
                    lines.push(format!("  resources: {}", first_few(&s.resources)));
                }
                if !s.prompts.is_empty() {
                    lines.push(format!("  prompts: {}", first_few(&s.prompts)));
                }
            }
        }
        self.push_info("MCP servers", lines);
    }
}

/// A list for one status line: all of a short list, or the first few and how many more
/// (servers such as server-everything list a hundred resources).
fn first_few(items: &[String]) -> String {
    const SHOWN: usize = 5;
    if items.len() <= SHOWN {
        return items.join(", ");
    }
    format!(
        "{}, … {} more ({} in all)",
        items[..SHOWN].join(", "),
        items.len() - SHOWN,
        items.len()
    )
}

impl App {
    /// `/diff`'s result: the pager opens on it and the scrollback notes it in one line.
    pub fn show_diff(&mut self, diff: String) {
        let pager = crate::pager::DiffPager {
            diff,
            view: crate::transcript::TranscriptView {
                // The diff opens at its top, not its end.
                scroll: usize::MAX / 2,
                ..crate::transcript::TranscriptView::default()
            },
        };
        self.push_cell(HistoryCell::Info {
            title: pager.title(),
            lines: vec!["shown in the pager; /diff opens it again".into()],
        });
        self.overlay = Some(crate::overlay::Overlay::Diff(pager));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::composer::Composer;
    use crate::overlay::{Overlay, PickerValue};
    use oi_protocol::config_types::Harness;

    #[test]
    fn the_harness_picker_lists_every_profile() {
        let mut app = App::new(Composer::default());
        let _ = app.run_command(SlashCommand::Harness, "");
        let Some(Overlay::Picker(picker)) = &app.overlay else {
            panic!("no picker: {:?}", app.overlay);
        };
        let listed: Vec<Harness> = picker
            .items
            .iter()
            .filter_map(|i| match i.value {
                PickerValue::Harness(h) => Some(h),
                _ => None,
            })
            .collect();
        assert_eq!(listed, Harness::ALL);
        for name in [
            "claude-code-bare",
            "zcode",
            "kimi-cli",
            "deepseek-tui",
            "swe-agent",
        ] {
            assert!(
                picker
                    .items
                    .iter()
                    .any(|i| i.label == name && !i.detail.is_empty()),
                "{name}"
            );
        }
        // Typing a name narrows the list to it.
        let mut picker = picker.clone();
        picker.query = "swe".into();
        assert_eq!(picker.visible()[0].label, "swe-agent");
    }
}

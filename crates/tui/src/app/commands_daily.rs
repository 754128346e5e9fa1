//! The everyday commands of the TUI's third pass: `/clear`, `/export`, `/archive`,
//! `/delete`, `/theme`, `/statusline`, `/config` and `/title`. The app side: arguments,
//! pickers and confirmations; the runner does the I/O (`run_daily.rs`).

use super::*;
use crate::overlay::DailyChoice;
use crate::slash::SlashCommand;
use crate::status_items::{DEFAULT_ITEMS, STATUS_ITEMS, StatusItem};
use crate::theme::{THEMES, Theme, ThemeName};
use oi_protocol::ThreadId;

/// Which stored-thread command a thread picker serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadCommand {
    /// `/archive`.
    Archive,
    /// `/delete`.
    Delete,
}

/// A `[tui]` setting to keep in the user's config.toml (`None` removes it).
#[derive(Clone, Debug, PartialEq)]
pub struct TuiSetting {
    /// The key under `[tui]`.
    pub key: &'static str,
    /// Its value; `None` removes it.
    pub value: Option<oi_config::tui_settings::TuiValue>,
}

impl App {
    pub(super) fn run_daily_command(&mut self, cmd: SlashCommand, args: &str) -> Vec<AppAction> {
        let busy = |app: &mut App, what: &str| {
            app.push_error(format!(
                "`/{what}` is not available while a turn runs; press Esc to interrupt it first"
            ));
            vec![]
        };
        match cmd {
            SlashCommand::Clear if self.is_running() => busy(self, "clear"),
            SlashCommand::Clear => {
                // Ctrl+T shows the new conversation only, like the screen.
                self.transcript.clear();
                vec![AppAction::ClearScreen, AppAction::NewThread]
            }
            SlashCommand::Export => {
                let path = (!args.is_empty()).then(|| PathBuf::from(args));
                vec![AppAction::Export {
                    path,
                    replace: false,
                }]
            }
            SlashCommand::Archive | SlashCommand::Delete if self.is_running() => busy(
                self,
                if cmd == SlashCommand::Archive {
                    "archive"
                } else {
                    "delete"
                },
            ),
            SlashCommand::Archive | SlashCommand::Delete => {
                let which = if cmd == SlashCommand::Archive {
                    ThreadCommand::Archive
                } else {
                    ThreadCommand::Delete
                };
                if args.is_empty() {
                    return vec![AppAction::PickThread(which)];
                }
                match args.parse::<ThreadId>() {
                    Ok(id) => self.daily_chosen(match which {
                        ThreadCommand::Archive => DailyChoice::Archive(id),
                        ThreadCommand::Delete => DailyChoice::AskDelete(id, id.to_string()),
                    }),
                    Err(_) => {
                        self.push_error(format!(
                            "`{args}` is not a thread id; run `/{}` without arguments to pick a thread",
                            if which == ThreadCommand::Archive { "archive" } else { "delete" }
                        ));
                        vec![]
                    }
                }
            }
            SlashCommand::Theme if args.is_empty() => {
                let items = THEMES
                    .iter()
                    .map(|(t, name, detail)| PickerItem {
                        label: if *t == self.theme.name {
                            format!("{name} (current)")
                        } else {
                            name.to_string()
                        },
                        detail: detail.to_string(),
                        value: PickerValue::Daily(DailyChoice::Theme(*t)),
                    })
                    .collect();
                self.overlay = Some(Overlay::Picker(Picker::new("Theme", items)));
                vec![]
            }
            SlashCommand::Theme => match ThemeName::parse(args) {
                Some(t) => self.daily_chosen(DailyChoice::Theme(t)),
                None => {
                    let names: Vec<&str> = THEMES.iter().map(|(_, n, _)| *n).collect();
                    self.push_error(format!(
                        "There is no theme `{args}`; the themes are {}",
                        names.join(", ")
                    ));
                    vec![]
                }
            },
            SlashCommand::Statusline if args.is_empty() => {
                self.open_statusline_picker(0);
                vec![]
            }
            SlashCommand::Statusline if args == "reset" => {
                self.daily_chosen(DailyChoice::ResetStatusLine)
            }
            SlashCommand::Statusline => self.statusline_args(args),
            SlashCommand::Config => vec![AppAction::ShowConfig],
            SlashCommand::Title if args.is_empty() => {
                match self.status.thread_name.clone() {
                    Some(name) => self.push_info(
                        &format!("This thread's title: “{name}”"),
                        vec!["change it with /title NAME".into()],
                    ),
                    None => self.push_info(
                        "This thread has no title",
                        vec!["/resume and `interpreter sessions list` show its first message instead; set one with /title NAME".into()],
                    ),
                }
                vec![]
            }
            SlashCommand::Title => vec![AppAction::Rename(args.to_string())],
            _ => vec![],
        }
    }

    /// A row of one of these commands' pickers was chosen (or `/archive ID` and the like).
    pub(super) fn daily_chosen(&mut self, choice: DailyChoice) -> Vec<AppAction> {
        match choice {
            DailyChoice::Archive(id) => vec![AppAction::ArchiveThread(id)],
            DailyChoice::AskDelete(id, label) => {
                let items = vec![
                    PickerItem {
                        label: "Delete it".into(),
                        detail: "its messages are removed from the store for good".into(),
                        value: PickerValue::Daily(DailyChoice::Delete(id)),
                    },
                    PickerItem {
                        label: "Keep it".into(),
                        detail: "/archive hides a thread without deleting it".into(),
                        value: PickerValue::Daily(DailyChoice::KeepThread),
                    },
                ];
                self.overlay = Some(Overlay::Picker(Picker::new(
                    &format!("Delete the thread “{label}” for good?"),
                    items,
                )));
                vec![]
            }
            DailyChoice::Delete(id) => vec![AppAction::DeleteThread(id)],
            DailyChoice::KeepThread => {
                self.push_info("Kept the thread", vec![]);
                vec![]
            }
            DailyChoice::ReplaceExport(path) => vec![AppAction::Export {
                path: Some(path),
                replace: true,
            }],
            DailyChoice::KeepExport => {
                self.push_info("Nothing exported; the file was left as it was", vec![]);
                vec![]
            }
            DailyChoice::Theme(name) => {
                self.theme = Theme::named(name);
                let mut lines = vec!["new output is drawn with it; saved as `[tui] theme`".into()];
                if name != ThemeName::Mono && !self.theme.color {
                    lines.push("NO_COLOR is set, so no colour is shown".into());
                }
                self.push_info(&format!("Theme: {}", name.as_str()), lines);
                vec![AppAction::SaveTuiSetting(TuiSetting {
                    key: "theme",
                    value: Some(oi_config::tui_settings::TuiValue::Text(
                        name.as_str().to_string(),
                    )),
                })]
            }
            DailyChoice::ToggleStatusItem(item) => {
                let mut items = self.status_items.clone();
                match items.iter().position(|i| *i == item) {
                    Some(at) if items.len() > 1 => {
                        items.remove(at);
                    }
                    Some(_) => {
                        self.push_error("The status line needs at least one item".into());
                    }
                    None => {
                        // In the picker's order, so the line reads the same way each time.
                        items.push(item);
                        let rank = |i: &StatusItem| {
                            STATUS_ITEMS
                                .iter()
                                .position(|(s, _, _)| s == i)
                                .unwrap_or(0)
                        };
                        items.sort_by_key(rank);
                    }
                }
                let at = STATUS_ITEMS
                    .iter()
                    .position(|(s, _, _)| *s == item)
                    .unwrap_or(0);
                let actions = self.set_status_items(items);
                // The picker stays open for the next item.
                self.open_statusline_picker(at);
                actions
            }
            DailyChoice::ResetStatusLine => {
                self.status_items = DEFAULT_ITEMS.to_vec();
                self.push_info("Status line: back to the default items", vec![]);
                vec![AppAction::SaveTuiSetting(TuiSetting {
                    key: "status_line",
                    value: None,
                })]
            }
        }
    }

    /// `/statusline ITEMS`: exactly these items, in this order.
    fn statusline_args(&mut self, args: &str) -> Vec<AppAction> {
        let ids: Vec<String> = args
            .split([',', ' '])
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let (items, unknown) = crate::status_items::parse_items(&ids);
        if !unknown.is_empty() || items.is_empty() {
            let known: Vec<&str> = STATUS_ITEMS.iter().map(|(_, id, _)| *id).collect();
            self.push_error(format!(
                "Unknown status line item(s): {}; the items are {}",
                unknown.join(", "),
                known.join(", ")
            ));
            return vec![];
        }
        self.set_status_items(items)
    }

    fn set_status_items(&mut self, items: Vec<StatusItem>) -> Vec<AppAction> {
        let ids: Vec<String> = items.iter().map(|i| i.id().to_string()).collect();
        self.status_items = items;
        vec![AppAction::SaveTuiSetting(TuiSetting {
            key: "status_line",
            value: Some(oi_config::tui_settings::TuiValue::List(ids)),
        })]
    }

    fn open_statusline_picker(&mut self, selected: usize) {
        let mut items: Vec<PickerItem> = STATUS_ITEMS
            .iter()
            .map(|(item, id, detail)| PickerItem {
                label: format!(
                    "[{}] {id}",
                    if self.status_items.contains(item) {
                        "x"
                    } else {
                        " "
                    }
                ),
                detail: detail.to_string(),
                value: PickerValue::Daily(DailyChoice::ToggleStatusItem(*item)),
            })
            .collect();
        items.push(PickerItem {
            label: "reset".into(),
            detail: "back to the default items".into(),
            value: PickerValue::Daily(DailyChoice::ResetStatusLine),
        });
        let mut picker = Picker::new(
            "Status line: Enter turns an item on or off, Esc closes",
            items,
        );
        picker.selected = selected;
        self.overlay = Some(Overlay::Picker(picker));
    }

    /// Opens the `/archive` or `/delete` picker: this thread first, then the stored ones
    /// (`(id, title, detail)` rows, newest first).
    pub fn open_thread_command_picker(
        &mut self,
        which: ThreadCommand,
        threads: Vec<(ThreadId, String, String)>,
    ) {
        let current = self.status.thread_id.clone();
        let mut items = Vec::new();
        let mut others = Vec::new();
        for (id, label, detail) in threads {
            let row = |label: String, value| PickerItem {
                label,
                detail: detail.clone(),
                value,
            };
            let value = |label: &str| match which {
                ThreadCommand::Archive => PickerValue::Daily(DailyChoice::Archive(id)),
                ThreadCommand::Delete => {
                    PickerValue::Daily(DailyChoice::AskDelete(id, label.to_string()))
                }
            };
            if id.to_string() == current {
                items.push(row(format!("this thread · {label}"), value(&label)));
            } else {
                others.push(row(label.clone(), value(&label)));
            }
        }
        items.extend(others);
        if items.is_empty() {
            self.push_info(
                "No stored threads",
                vec!["a thread is stored once you send it a message".into()],
            );
            return;
        }
        let title = match which {
            ThreadCommand::Archive => "Archive a thread (type to search)",
            ThreadCommand::Delete => "Delete a thread (type to search)",
        };
        self.overlay = Some(Overlay::Picker(Picker::new(title, items)));
    }

    /// The `[tui]` settings of the config this session started with; ids that are not
    /// status line items are named in a warning.
    pub fn apply_tui_settings(&mut self, theme: Option<&str>, status_line: Option<&[String]>) {
        if let Some(name) = theme {
            match ThemeName::parse(name) {
                Some(t) => self.theme = Theme::named(t),
                None => self.push_cell(HistoryCell::Warning {
                    message: format!(
                        "[tui] theme = {name:?} is not a theme; using dark (the themes: {})",
                        THEMES
                            .iter()
                            .map(|(_, n, _)| *n)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                }),
            }
        }
        if let Some(ids) = status_line {
            let (items, unknown) = crate::status_items::parse_items(ids);
            if !unknown.is_empty() {
                self.push_cell(HistoryCell::Warning {
                    message: format!(
                        "[tui] status_line: {} not known here, left out (/statusline lists the items)",
                        unknown.join(", ")
                    ),
                });
            }
            if !items.is_empty() {
                self.status_items = items;
            }
        }
    }

    /// `/export` found its file already there: ask before replacing it.
    pub fn ask_export_replace(&mut self, path: PathBuf) {
        let items = vec![
            PickerItem {
                label: "Replace it".into(),
                detail: path.display().to_string(),
                value: PickerValue::Daily(DailyChoice::ReplaceExport(path.clone())),
            },
            PickerItem {
                label: "Keep it".into(),
                detail: "give /export another path".into(),
                value: PickerValue::Daily(DailyChoice::KeepExport),
            },
        ];
        self.overlay = Some(Overlay::Picker(Picker::new(
            &format!("{} exists. Replace it?", path.display()),
            items,
        )));
    }

    /// Shows the effective settings and where each came from (`/config`).
    pub fn show_config(&mut self, lines: Vec<String>) {
        self.push_info("Effective settings (value · where it came from)", lines);
    }

    /// The thread's title changed (`/title`, `/rename`) or was read from the store.
    pub fn set_thread_name(&mut self, name: Option<String>) {
        self.status.thread_name = name.filter(|n| !n.trim().is_empty());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved(actions: &[AppAction]) -> Option<Vec<String>> {
        actions.iter().find_map(|a| match a {
            AppAction::SaveTuiSetting(TuiSetting {
                key: "status_line",
                value: Some(oi_config::tui_settings::TuiValue::List(ids)),
            }) => Some(ids.clone()),
            _ => None,
        })
    }

    #[test]
    fn status_items_toggle_in_picker_order_and_never_all_go() {
        let mut app = App::new(crate::composer::Composer::default());
        app.status_items = vec![StatusItem::CurrentDir];
        let on = app.daily_chosen(DailyChoice::ToggleStatusItem(StatusItem::ModelName));
        assert_eq!(
            saved(&on).unwrap(),
            ["model-name", "current-dir"],
            "kept in the picker's order"
        );
        app.daily_chosen(DailyChoice::ToggleStatusItem(StatusItem::ModelName));
        assert_eq!(app.status_items, [StatusItem::CurrentDir]);
        // The last item stays, with an error saying why.
        app.daily_chosen(DailyChoice::ToggleStatusItem(StatusItem::CurrentDir));
        assert_eq!(app.status_items, [StatusItem::CurrentDir]);
        assert!(app.take_pending().iter().any(
            |c| matches!(c, HistoryCell::Error { message } if message.contains("at least one"))
        ));
        // The picker stays open for the next item.
        assert!(matches!(app.overlay, Some(Overlay::Picker(_))));
    }

    #[test]
    fn bad_arguments_are_named_and_change_nothing() {
        let mut app = App::new(crate::composer::Composer::default());
        let before = app.status_items.clone();
        assert!(
            app.submit("/statusline model-name,five-hour-limit".into())
                .is_empty()
        );
        assert_eq!(app.status_items, before);
        assert!(app.submit("/theme solarized".into()).is_empty());
        assert!(app.submit("/delete not-an-id".into()).is_empty());
        let errors: Vec<String> = app
            .take_pending()
            .into_iter()
            .filter_map(|c| match c {
                HistoryCell::Error { message } => Some(message),
                _ => None,
            })
            .collect();
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors[0].contains("five-hour-limit"), "{errors:?}");
        assert!(errors[1].contains("solarized") && errors[1].contains("light"));
        assert!(errors[2].contains("not a thread id"));
    }
}

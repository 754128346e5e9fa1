//! What the model, the user and a failed turn are told about an unfinished answer: one
//! wording per [`Unfinished`] kind, kept together so the three stay consistent.

use super::*;

impl Unfinished {
    /// The note the model gets before it tries again. `text_mode`: calls are taught as
    /// `<tool_call>` text (`tool_call_format = "text"`).
    pub(crate) fn nudge(&self, tools: &[ToolSpec], text_mode: bool) -> String {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        let how = if text_mode {
            "To run a tool, write the <tool_call> block itself, with nothing after it."
        } else {
            "To run a tool, call it: answer with only the call, with no explanation around it."
        };
        match self {
            Unfinished::UnrunCall { name, offered } => {
                let unknown = if *offered {
                    String::new()
                } else {
                    format!(" There is no tool named `{name}`.")
                };
                format!(
                    "Your last answer contains a `{name}` call written as text. It was NOT run: nothing happened.{unknown} {how} The tools are: {}.",
                    names.join(", ")
                )
            }
            Unfinished::Claim { quote } => format!(
                "Your last answer says \"{quote}\", but no tool ran in this turn, so nothing was done. Do the work with the tools now ({}). {how} If you cannot do it, say plainly that it was not done.",
                names.join(", ")
            ),
            Unfinished::WorkShown => format!(
                "Your last answer shows the change, but no tool made it: the files are unchanged. Make the change yourself with the tools ({}). {how}",
                names.join(", ")
            ),
            Unfinished::Announced => format!(
                "You said what you will do, but no tool ran: nothing was done yet. Do it now with the tools ({}). {how}",
                names.join(", ")
            ),
            Unfinished::OutputNotReported { output } => format!(
                "Your answer does not say what the command printed, which is what the user asked. It printed:\n```\n{output}\n```\nTell the user exactly that output."
            ),
            Unfinished::Parroted => format!(
                "Do not repeat the note. Continue the user's task with the tools ({}). {how}",
                names.join(", ")
            ),
            Unfinished::GaveUpOnError => format!(
                "Your change failed and nothing was changed, so the task is not done. Read the error above, fix the call as it says, and call the tool again ({}). {how}",
                names.join(", ")
            ),
            Unfinished::MissingPath { path } => format!(
                "`{path}` does not exist in this project, so that answer is wrong. Look in the project with the tools ({}) and answer with a path that exists. {how}",
                names.join(", ")
            ),
            Unfinished::NotDone { missing } => format!(
                "The task is not finished: {}. Finish it now with the tools ({}). {how} If you cannot, say plainly what was not done.",
                missing.join("; "),
                names.join(", ")
            ),
            Unfinished::FileNotNamed { name } => format!(
                "Your answer names no file that contains `{name}`, but a file in this project does. Search for it with the tools ({}), for example the command `grep -rn {name} .`, and answer with that file's path. {how}",
                names.join(", ")
            ),
        }
    }

    /// What the user is told when the retry did not help: the turn fails with this.
    pub(crate) fn failure(&self, text_mode: bool) -> String {
        let fix = if text_mode {
            "The model does not follow the tool-call format; try a larger model."
        } else {
            "If this model keeps doing it, set `tool_call_format = \"text\"` (docs/providers.md, \"Tool calls as text\")."
        };
        match self {
            Unfinished::UnrunCall {
                name,
                offered: true,
            } => format!(
                "the model's answer contains a `{name}` call that was not run (it was written as text inside the answer), so the task was not done. {fix}"
            ),
            Unfinished::UnrunCall {
                name,
                offered: false,
            } => format!(
                "the model's answer contains a call of `{name}`, a tool that does not exist, so nothing was run and the task was not done. {fix}"
            ),
            Unfinished::Claim { quote } => format!(
                "the model's answer claims work (\"{quote}\") but no tool ran in this turn, so nothing was done. {fix}"
            ),
            Unfinished::WorkShown => format!(
                "the model's answer shows the code or patch for the requested change, but no tool wrote it, so the files are unchanged. {fix}"
            ),
            Unfinished::Announced => format!(
                "the model said what it would do and stopped without running any tool, so nothing was done. {fix}"
            ),
            Unfinished::OutputNotReported { .. } => format!(
                "the user asked what the command printed, and the model's answer does not say (the command's output is in the events). {fix}"
            ),
            Unfinished::Parroted => format!(
                "the model answered by repeating the note it was sent about its previous answer instead of doing the task, so the task was not done. {fix}"
            ),
            Unfinished::GaveUpOnError => format!(
                "the model's change failed and it answered with the error instead of fixing the call, so no file was changed and the task was not done. {fix}"
            ),
            Unfinished::MissingPath { path } => format!(
                "the model answered with `{path}`, which does not exist, so the question was not answered. {fix}"
            ),
            Unfinished::NotDone { missing } => format!(
                "the task is not done: {} (checked in the working directory after the model's answer)",
                missing.join("; ")
            ),
            Unfinished::FileNotNamed { name } => format!(
                "the question was not answered: the model's answer names no file that contains `{name}`, and a file in the working directory does"
            ),
        }
    }

    /// The warning shown when the model is asked to try again.
    pub(crate) fn warning(&self) -> String {
        match self {
            Unfinished::UnrunCall { name, .. } => format!(
                "the model wrote a `{name}` call inside its answer text, where it cannot be run; asking it to make the call properly"
            ),
            Unfinished::Claim { quote } => format!(
                "the model's answer claims work (\"{quote}\") but no tool ran; asking it to do the work or say it was not done"
            ),
            Unfinished::WorkShown => {
                "the model showed the change in its answer instead of making it; asking it to make it".to_string()
            }
            Unfinished::Announced => {
                "the model said what it would do and stopped before doing it; asking it to go on".to_string()
            }
            Unfinished::OutputNotReported { .. } => {
                "the model's answer does not report the output it was asked for; asking it to".to_string()
            }
            Unfinished::Parroted => {
                "the model repeated the note it was sent instead of answering; asking it once more"
                    .to_string()
            }
            Unfinished::GaveUpOnError => {
                "the model's change failed and it passed the error on; asking it to fix the call"
                    .to_string()
            }
            Unfinished::MissingPath { path } => format!(
                "the model answered with `{path}`, which does not exist; asking it to look in the project"
            ),
            Unfinished::NotDone { missing } => format!(
                "the task is not finished: {}; asking the model to finish it",
                missing.join("; ")
            ),
            Unfinished::FileNotNamed { name } => format!(
                "the model's answer names no file that contains `{name}`, and a file in the working directory does; asking it to search"
            ),
        }
    }
}

//! The up-front load of a skill the request clearly names, for the smallest models.
//!
//! On the real tier the 1.5B model lists skills it never loads, or loads one and then
//! recites it. Under the `minimal` harness (the profile for the smallest models), when the
//! request names exactly one enabled skill — every word of the skill's name is a word of
//! the request, as "Record the deploy of version 2.4.1" names `record-deploy` — the skill
//! is loaded when the turn starts, as if the model had called `load_skill`: the same read,
//! bounds, warnings and `skill_loaded` event, its text put in the thread's history as a
//! note. Two skills named at once, a skill already loaded in the thread, or a body larger
//! than an eighth of the window load nothing up front; `load_skill` still loads any skill.

use super::Skill;
use crate::session::Session;
use oi_protocol::models::ResponseItem;

/// How the note starts.
pub(crate) const MARKER: &str = "<skill_loaded>";

/// Loads the skill `sess`'s request names, when its profile loads skills up front.
pub(crate) async fn attach(sess: &Session, turn_id: &str) {
    let ctx = sess.turn_context();
    if !crate::harness::gives_named_context_up_front(crate::harness::resolve(&ctx.config)) {
        return;
    }
    let (request, loaded) = {
        let st = sess.state();
        let request = crate::answer_check::request_of(&st.history);
        let loaded: Vec<String> = st.history.iter().filter_map(loaded_skill_text).collect();
        (request, loaded)
    };
    let Some(skill) = named_skill(&request, ctx.skills.enabled()) else {
        return;
    };
    let head = super::tool::loaded_head(skill);
    if loaded.iter().any(|t| t.contains(&head)) {
        return;
    }
    // Checked before the load, which announces it: a skill too large for the window is
    // left to `load_skill`.
    let window = usize::try_from(sess.context_window()).unwrap_or(0);
    let size = tokio::fs::metadata(&skill.path)
        .await
        .map_or(u64::MAX, |m| m.len());
    if usize::try_from(size).unwrap_or(usize::MAX) > window.saturating_mul(3) / 8 {
        return;
    }
    let skill = skill.clone();
    let call_id = format!("preload:{}", skill.name);
    let Ok(text) = super::tool::load(sess, turn_id, &call_id, &skill).await else {
        return;
    };
    let note = format!(
        "{MARKER}\nThe request matches the skill `{}`, so it was loaded for you (as `{}` would). Do what it says for this request, with the request's own values:\n{text}\n</skill_loaded>",
        skill.name,
        super::tool::LOAD_SKILL
    );
    sess.push_history(turn_id, vec![ResponseItem::developer_text(note)])
        .await;
}

/// The text of a history item that may hold a loaded skill: a tool output or a note.
fn loaded_skill_text(item: &ResponseItem) -> Option<String> {
    match item {
        ResponseItem::FunctionCallOutput { output, .. } => Some(output.text_content()),
        ResponseItem::Message { .. } => item.message_text(),
        _ => None,
    }
}

/// The one skill among `skills` whose name `request` names; `None` when none or several do.
pub(crate) fn named_skill<'a>(
    request: &str,
    skills: impl Iterator<Item = &'a Skill>,
) -> Option<&'a Skill> {
    let words = words(request);
    let mut named = skills.filter(|s| names(&words, &s.name));
    let first = named.next()?;
    named.next().is_none().then_some(first)
}

/// Whether the request's `words` hold every word of `name` (of three letters or more; a
/// request word may go on: `deploys` holds `deploy`).
fn names(words: &[String], name: &str) -> bool {
    let parts: Vec<String> = words_of(name).filter(|w| w.chars().count() >= 3).collect();
    !parts.is_empty() && parts.iter().all(|p| words.iter().any(|w| w.starts_with(p)))
}

fn words(text: &str) -> Vec<String> {
    words_of(text).collect()
}

fn words_of(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

#[cfg(test)]
mod tests {
    use super::named_skill;
    use crate::skills::{Skill, SkillScope};
    use std::path::PathBuf;

    fn skill(name: &str) -> Skill {
        Skill {
            name: name.into(),
            description: String::new(),
            short_description: None,
            path: PathBuf::from(format!("/s/{name}/SKILL.md")),
            dir: PathBuf::from(format!("/s/{name}")),
            scope: SkillScope::User,
            mcp_servers: Vec::new(),
            enabled: true,
        }
    }

    fn pick<'a>(request: &str, skills: &'a [Skill]) -> Option<&'a str> {
        named_skill(request, skills.iter()).map(|s| s.name.as_str())
    }

    #[test]
    fn a_request_naming_every_word_of_one_skill_picks_it() {
        let skills = [skill("record-deploy"), skill("word-count"), skill("pdf")];
        assert_eq!(
            pick("Record the deploy of version 2.4.1 in deploys.log", &skills),
            Some("record-deploy")
        );
        assert_eq!(
            pick("Count the words of notes.txt", &skills),
            Some("word-count")
        );
        assert_eq!(pick("Turn report.PDF into text", &skills), Some("pdf"));
    }

    #[test]
    fn a_partial_or_ambiguous_match_picks_none() {
        let skills = [skill("record-deploy"), skill("word-count")];
        // One word of the name is not a match.
        assert_eq!(pick("Deploy version 2.4.1", &skills), None);
        // A word inside another word is not a match.
        assert_eq!(pick("the recorder redeployed it", &skills), None);
        // Two skills named: neither is clearly the one.
        assert_eq!(pick("record the deploy and count the words", &skills), None);
        // Names of short words only never match.
        assert_eq!(pick("go to it", &[skill("go-to")]), None);
    }
}

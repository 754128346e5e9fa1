//! The skills section of the context: names and descriptions, within a token budget.
//!
//! Small windows are the point: a 1.5B model with an 8K window cannot pay for every skill's
//! instructions in every request, nor even for a long list. Skills are listed in discovery
//! order (project, then own, then other agents'), each description cut to one short
//! paragraph; what does not fit is named (names cost little) or counted, and the model is
//! told so — nothing is left out silently.

use super::SkillsFound;
use crate::context_window::{estimate_tokens, text_size};

/// The longest description shown in the list (the rest is in the skill itself).
const DESCRIPTION_CHARS: usize = 240;

fn tokens(text: &str) -> usize {
    usize::try_from(estimate_tokens(text_size(text))).unwrap_or(usize::MAX)
}

/// The `<skills>` section for the model, `None` when no skill is enabled. At most about
/// `budget` tokens (the estimate of `context_window`); `0` lists no skill, only how many
/// there are and how to load one.
pub(crate) fn section(found: &SkillsFound, budget: usize) -> Option<String> {
    let skills: Vec<_> = found.enabled().collect();
    if skills.is_empty() {
        return None;
    }
    let head = format!(
        "<skills>\nSkills are instructions for particular tasks, written by the user or the project. When the task matches a skill's description, call `{}` with its name before anything else and follow what it says; run its scripts with the shell from the skill's folder.\n",
        super::tool::LOAD_SKILL
    );
    let tail = "</skills>";
    let mut used = tokens(&head) + tokens(tail);
    // Room for the note about the skills left out, kept while more may follow.
    let reserve = tokens(&left_out_note(skills.len(), &[], 0));
    let mut body = String::new();
    let mut listed = 0;
    for (i, s) in skills.iter().enumerate() {
        let line = format!("- {}: {}\n", s.name, cut(&s.description, DESCRIPTION_CHARS));
        let last = i + 1 == skills.len();
        let cost = tokens(&line) + if last { 0 } else { reserve };
        if used + cost > budget {
            break;
        }
        used += tokens(&line);
        body.push_str(&line);
        listed += 1;
    }
    let rest = &skills[listed..];
    if !rest.is_empty() {
        // Name as many of the others as still fit; count the remainder.
        let mut names = Vec::new();
        for s in rest {
            names.push(s.name.as_str());
            if used + tokens(&left_out_note(rest.len(), &names, rest.len() - names.len())) > budget
            {
                names.pop();
                break;
            }
        }
        body.push_str(&left_out_note(rest.len(), &names, rest.len() - names.len()));
    }
    Some(format!("{head}{body}{tail}"))
}

/// What the model is told about the `count` skills left out of the list: `names` of
/// them, and how many `more`.
fn left_out_note(count: usize, names: &[&str], more: usize) -> String {
    let mut n = format!(
        "{count} more skill{} did not fit in this list (`[skills] max_prompt_tokens`)",
        if count == 1 { "" } else { "s" }
    );
    if !names.is_empty() {
        n.push_str(&format!(": {}", names.join(", ")));
        if more > 0 {
            n.push_str(&format!(
                " and {more} other{}",
                if more == 1 { "" } else { "s" }
            ));
        }
    }
    n.push_str(&format!(
        "; `{}` loads any of them by name.\n",
        super::tool::LOAD_SKILL
    ));
    n
}

/// `text` cut to `max` characters at a word, with `…`; one line.
fn cut(text: &str, max: usize) -> String {
    let one_line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let head: String = one_line.chars().take(max).collect();
    let head = head.rsplit_once(' ').map_or(head.as_str(), |(h, _)| h);
    format!("{head}…")
}

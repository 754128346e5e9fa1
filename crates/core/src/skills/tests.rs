#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use oi_config::{ConfigLoadOptions, ConfigOverrides, load_config};

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn skill_md(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n# {name}\nDo the {name} steps.\n")
}

fn config(home: &Path, cwd: &Path, user: &str) -> Config {
    write(&home.join("config.toml"), user);
    load_config(ConfigLoadOptions {
        home: Some(home.to_path_buf()),
        cli_overrides: Vec::new(),
        overrides: ConfigOverrides {
            cwd: Some(cwd.to_path_buf()),
            ..Default::default()
        },
    })
    .unwrap()
    .config
}

#[test]
fn project_skills_need_trust_and_win_over_the_homes() {
    let home = tempfile::tempdir().unwrap();
    let proj = tempfile::tempdir().unwrap();
    let proj_dir = proj.path().canonicalize().unwrap();
    write(
        &home.path().join("skills/pdf/SKILL.md"),
        &skill_md("pdf", "home pdf"),
    );
    write(
        &home.path().join("skills/group/csv/SKILL.md"),
        &skill_md("csv", "nested"),
    );
    write(
        &proj_dir.join(".openinterpreter/skills/pdf/SKILL.md"),
        &skill_md("pdf", "project pdf"),
    );
    // Untrusted: the project's skills are not read.
    let found = discover(&config(home.path(), &proj_dir, ""));
    let names: Vec<(&str, &str)> = found
        .skills
        .iter()
        .map(|s| (s.name.as_str(), s.description.as_str()))
        .collect();
    assert_eq!(names, [("csv", "nested"), ("pdf", "home pdf")]);
    // Trusted: the project's `pdf` hides the home's.
    let trusted = format!(
        "[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        proj_dir.display()
    );
    let found = discover(&config(home.path(), &proj_dir, &trusted));
    let pdf = found.get("pdf").unwrap();
    assert_eq!(
        (pdf.description.as_str(), pdf.scope),
        ("project pdf", SkillScope::Repo)
    );
    assert_eq!(found.skills.len(), 2);
}

#[test]
fn bad_files_are_errors_with_reasons_and_links_do_not_escape() {
    let home = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let skills = home.path().join("skills");
    write(
        &skills.join("nodesc/SKILL.md"),
        "---\nname: nodesc\n---\nbody\n",
    );
    write(&skills.join("nofront/SKILL.md"), "just text\n");
    write(
        &skills.join("big/SKILL.md"),
        &format!(
            "{}{}",
            skill_md("big", "d"),
            "x".repeat(SKILL_MAX_BYTES as usize)
        ),
    );
    write(
        &elsewhere.path().join("SKILL.md"),
        &skill_md("outside", "d"),
    );
    std::os::unix::fs::symlink(elsewhere.path(), skills.join("linked")).unwrap();
    write(&skills.join("ok/SKILL.md"), &skill_md("ok", "fine"));
    let found = discover(&config(home.path(), home.path(), ""));
    assert_eq!(
        found
            .skills
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>(),
        ["ok"]
    );
    let why = |dir: &str| {
        found
            .errors
            .iter()
            .find(|e| e.path.starts_with(skills.join(dir)))
            .map(|e| e.message.clone())
            .unwrap_or_else(|| panic!("no error for {dir}: {:?}", found.errors))
    };
    assert!(why("nodesc").contains("no `description`"));
    assert!(why("nofront").contains("no front matter"));
    assert!(why("big").contains("more than the"));
    assert!(why("linked").contains("outside"), "{}", why("linked"));
}

#[test]
fn other_agents_are_opt_in_and_skills_can_be_turned_off() {
    let home = tempfile::tempdir().unwrap();
    let codex = tempfile::tempdir().unwrap();
    write(
        &codex.path().join("skills/review/SKILL.md"),
        &skill_md("review", "codex review"),
    );
    write(
        &home.path().join("skills/pdf/SKILL.md"),
        &skill_md("pdf", "d"),
    );
    let homes = AgentHomes {
        user: Some(home.path().join("nobody")),
        codex: Some(codex.path().to_path_buf()),
    };
    let plain = discover_in(&config(home.path(), home.path(), ""), &homes);
    assert!(plain.get("review").is_none());
    let opted = discover_in(
        &config(
            home.path(),
            home.path(),
            "[skills]\nother_agents = [\"codex\"]\n[[skills.config]]\nname = \"pdf\"\nenabled = false\n",
        ),
        &homes,
    );
    assert_eq!(opted.get("review").unwrap().scope, SkillScope::Codex);
    assert!(opted.get("pdf").is_none(), "disabled");
    assert!(
        opted.skills.iter().any(|s| s.name == "pdf" && !s.enabled),
        "listed as disabled"
    );
}

#[test]
fn a_codex_skills_openai_yaml_adds_its_mcp_servers_and_short_description() {
    let home = tempfile::tempdir().unwrap();
    let skill = home.path().join("skills/docs");
    write(&skill.join("SKILL.md"), &skill_md("docs", "Look things up"));
    write(
        &skill.join("agents/openai.yaml"),
        "interface:\n  display_name: \"Docs\"\n  short_description: \"Docs lookup\"\ndependencies:\n  tools:\n    - type: \"mcp\"\n      value: \"openaiDocs\"\n      transport: \"streamable_http\"\n    - type: \"env_var\"\n      value: \"TOKEN\"\n",
    );
    let found = discover(&config(home.path(), home.path(), ""));
    let docs = found.get("docs").unwrap();
    assert_eq!(docs.mcp_servers, ["openaiDocs"]);
    assert_eq!(docs.short_description.as_deref(), Some("Docs lookup"));
}

#[test]
fn the_prompt_list_keeps_to_its_budget_and_says_what_it_left_out() {
    let mut found = SkillsFound::default();
    for i in 0..30 {
        found.skills.push(Skill {
            name: format!("skill-{i:02}"),
            description: "A long description of when to use this skill. ".repeat(3),
            short_description: None,
            path: PathBuf::from(format!("/s/{i}/SKILL.md")),
            dir: PathBuf::from(format!("/s/{i}")),
            scope: SkillScope::User,
            mcp_servers: Vec::new(),
            enabled: true,
        });
    }
    let all = prompt::section(&found, 100_000).unwrap();
    assert!(
        all.contains("- skill-29: ") && !all.contains("did not fit"),
        "{all}"
    );
    let small = prompt::section(&found, 400).unwrap();
    let tokens = crate::context_window::estimate_tokens(crate::context_window::text_size(&small));
    assert!(tokens <= 400, "{tokens}: {small}");
    assert!(small.contains("- skill-00: "), "{small}");
    assert!(small.contains("more skills did not fit"), "{small}");
    assert!(
        small.contains("`load_skill` loads any of them by name"),
        "{small}"
    );
    let none = prompt::section(&found, 0).unwrap();
    assert!(
        none.contains("30 more skills did not fit") && !none.contains("- skill-"),
        "{none}"
    );
    assert!(prompt::section(&SkillsFound::default(), 600).is_none());
    // With no AGENTS.md the run context starts with this section: the chat wire must know
    // it as the run context, or it becomes a second user message in a row (which templates
    // that want roles to alternate reject).
    for section in [&all, &small, &none] {
        assert!(oi_model_client::is_run_context(section), "{section}");
    }
}

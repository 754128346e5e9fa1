use super::super::expectations;
use super::FilesBefore;
use std::path::Path;

/// Sets up `files`, reads them for `request`, writes `after` over them, and returns what
/// the turn lost.
fn lost(request: &str, files: &[(&str, &str)], after: &[(&str, &str)]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    for (p, c) in files {
        std::fs::write(dir.path().join(p), c).unwrap();
    }
    let before = FilesBefore::take(request, dir.path());
    for (p, c) in after {
        std::fs::write(dir.path().join(p), c).unwrap();
    }
    before.lost(request, &expectations(request), dir.path())
}

const NOTES: &str = "The apple is red.\nI like apple pie.\n";
const REPLACE: &str = "In notes.txt, replace the word apple with banana everywhere.";

/// The recorded false success: `echo "banana" > notes.txt` answered the replace task.
#[test]
fn a_file_overwritten_with_the_new_word_alone_lost_its_lines() {
    let problems = lost(
        REPLACE,
        &[("notes.txt", NOTES)],
        &[("notes.txt", "banana\n")],
    );
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with("`notes.txt` no longer holds lines the task did not ask to remove: `The banana is red.` (`The apple is red.` with `apple` replaced), `I like banana pie.`"),
        "{}",
        problems[0]
    );
}

#[test]
fn correct_solutions_keep_every_line_they_should() {
    type Files<'a> = &'a [(&'a str, &'a str)];
    let cases: &[(&str, Files, Files)] = &[
        (
            REPLACE,
            &[("notes.txt", NOTES)],
            &[("notes.txt", "The banana is red.\nI like banana pie.\n")],
        ),
        // Without "everywhere", one replaced occurrence is enough.
        (
            "In notes.txt, replace the word apple with banana.",
            &[("notes.txt", "apple and apple\nkeep\n")],
            &[("notes.txt", "banana and apple\nkeep\n")],
        ),
        (
            "Add a line 'walk the dog' at the end of todo.txt.",
            &[("todo.txt", "buy milk\n")],
            &[("todo.txt", "buy milk\nwalk the dog\n")],
        ),
        (
            "Delete the lines containing TODO from notes.txt.",
            &[(
                "notes.txt",
                "keep one\nTODO: fix the roof\nkeep two\nTODO: call Bob\n",
            )],
            &[("notes.txt", "keep one\nkeep two\n")],
        ),
        (
            "In config.toml, change the server port to 8080.",
            &[("config.toml", "[server]\nhost = \"0.0.0.0\"\nport = 8000\n")],
            &[("config.toml", "[server]\nhost = \"0.0.0.0\"\nport = 8080\n")],
        ),
        // Indentation and a trailing newline may change with the tool.
        (
            "Add a line 'walk the dog' at the end of todo.txt.",
            &[("todo.txt", "  buy milk")],
            &[("todo.txt", "buy milk\nwalk the dog\n")],
        ),
    ];
    for (request, files, after) in cases {
        assert_eq!(
            lost(request, files, after),
            Vec::<String>::new(),
            "{request}"
        );
    }
}

#[test]
fn lines_a_task_leaves_alone_must_survive() {
    // Append by overwriting.
    let p = lost(
        "Add a line 'walk the dog' at the end of todo.txt.",
        &[("todo.txt", "buy milk\ncall mom\n")],
        &[("todo.txt", "walk the dog\n")],
    );
    assert_eq!(p.len(), 1);
    assert!(p[0].contains("`buy milk`, `call mom`"), "{}", p[0]);
    // Delete lines by keeping only the first.
    let p = lost(
        "Delete the lines containing TODO from notes.txt.",
        &[("notes.txt", "keep one\nTODO: x\nkeep two\n")],
        &[("notes.txt", "keep one\n")],
    );
    assert!(p[0].contains("`keep two`"), "{p:?}");
    // A value set by writing the file again with that line alone.
    let p = lost(
        "In config.toml, change the server port to 8080.",
        &[("config.toml", "[server]\nhost = \"0.0.0.0\"\nport = 8000\n")],
        &[("config.toml", "port = 8080\n")],
    );
    assert!(p[0].contains("`host = \"0.0.0.0\"`"), "{p:?}");
    // Many lines: three are quoted, the rest counted.
    let old: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    let p = lost(
        "Add a line 'x' at the end of todo.txt.",
        &[("todo.txt", &old)],
        &[("todo.txt", "x\n")],
    );
    assert!(
        p[0].contains("`line 1`, `line 2`, `line 3` and 7 more"),
        "{}",
        p[0]
    );
}

/// Where the words leave the lines open, large files, and files the turn did not touch
/// are not checked; nor is a steered turn's new request against files read for another.
#[test]
fn what_the_words_leave_open_is_not_checked() {
    assert!(
        lost(
            "Fix the bug in calc.py and add a comment 'fixed'.",
            &[("calc.py", "def add(a, b):\n    return a - b\n")],
            &[("calc.py", "# fixed\ndef add(a, b): return a + b\n")],
        )
        .is_empty()
    );
    // A replacement whose old text the words do not pin down.
    assert!(
        lost(
            "In notes.txt, replace apple with banana.",
            &[("notes.txt", "apple and apple\nkeep\n")],
            &[("notes.txt", "banana and banana\nkeep\n")],
        )
        .is_empty()
    );
    let big = "x\n".repeat(20_000);
    assert!(
        lost(
            "Add a line 'y' at the end of big.txt.",
            &[("big.txt", &big)],
            &[("big.txt", "y\n")],
        )
        .is_empty()
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("todo.txt"), "buy milk\n").unwrap();
    let first = "Add a line 'a' at the end of todo.txt.";
    let before = FilesBefore::take(first, dir.path());
    assert!(before.is_for(first));
    std::fs::write(dir.path().join("todo.txt"), "a\n").unwrap();
    let other = "Add a line 'b' at the end of todo.txt.";
    assert!(!before.is_for(other));
    assert!(
        before
            .lost(other, &expectations(other), dir.path())
            .is_empty()
    );
    assert_eq!(
        before.lost(first, &expectations(first), dir.path()).len(),
        1
    );
    assert!(!Path::new(dir.path()).join("missing").exists());
}

const CONFIG: &str = "[server]\nhost = \"127.0.0.1\"\nport = 8000\n\n[log]\nlevel = \"info\"\n";

/// The recorded false success (CI's real tier): the value added under the old one, so the
/// line asked for was there, no line was lost, and the config no longer loads.
#[test]
fn a_toml_file_left_invalid_by_the_change_is_named() {
    let request = "In config.toml, change the server port to 8080.";
    let broken = CONFIG.replace("port = 8000\n", "port = 8000\nport = 8080\n");
    let problems = lost(
        request,
        &[("config.toml", CONFIG)],
        &[("config.toml", &broken)],
    );
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with("`config.toml` is no longer valid TOML (duplicate key"),
        "{}",
        problems[0]
    );
    // Changed in place, it is valid and nothing is lost.
    let fixed = CONFIG.replace("port = 8000", "port = 8080");
    assert_eq!(
        lost(
            request,
            &[("config.toml", CONFIG)],
            &[("config.toml", &fixed)]
        ),
        Vec::<String>::new()
    );
}

#[test]
fn a_json_file_left_invalid_is_named_and_one_invalid_before_is_not_the_turns_doing() {
    let request = "In settings.json, change the port to 8080.";
    let before = "{\n  \"port\": 8000\n}\n";
    let problems = lost(
        request,
        &[("settings.json", before)],
        &[("settings.json", "{\n  \"port\": 8080,\n}\n")],
    );
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with("`settings.json` is no longer valid JSON ("),
        "{}",
        problems[0]
    );
    let invalid_before = "{\n  \"port\": 8000,\n}\n";
    assert_eq!(
        lost(
            request,
            &[("settings.json", invalid_before)],
            &[("settings.json", "{\n  \"port\": 8080,\n}\n")],
        ),
        Vec::<String>::new()
    );
}

/// The false success of round 12: the append called three times.
#[test]
fn a_line_added_more_than_once_is_named() {
    let request = "Add a line 'walk the dog' at the end of todo.txt.";
    let thrice = "buy milk\nwalk the dog\nwalk the dog\nwalk the dog\n";
    let problems = lost(
        request,
        &[("todo.txt", "buy milk\n")],
        &[("todo.txt", thrice)],
    );
    assert_eq!(
        problems,
        [
            "`todo.txt` has the line `walk the dog` 3 times, and the task adds it once: remove the extra copies (it was there 0 times before)"
        ]
    );
    let once = "buy milk\nwalk the dog\n";
    assert_eq!(
        lost(
            request,
            &[("todo.txt", "buy milk\n")],
            &[("todo.txt", once)]
        ),
        Vec::<String>::new()
    );
    // Already there once: one more is the task.
    assert_eq!(
        lost(
            request,
            &[("todo.txt", "walk the dog\n")],
            &[("todo.txt", "walk the dog\nwalk the dog\n")]
        ),
        Vec::<String>::new()
    );
}

/// Round 16's false success: for "fix the typo in greet.py so that test_greet.py passes"
/// the model wrote the function over the test file, which then "passed".
#[test]
fn a_test_the_request_says_must_pass_must_not_be_changed() {
    let request = "Fix the typo in greet.py so that test_greet.py passes.";
    let greet = "def greet(name):\n    return f\"Helo, {name}!\"\n";
    let test = "from greet import greet\nassert greet(\"Ada\") == \"Hello, Ada!\"\n";
    let files = [("greet.py", greet), ("test_greet.py", test)];
    let problems = lost(
        request,
        &files,
        &[(
            "test_greet.py",
            "def greet(name):\n    return f\"Hello, {name}!\"\n",
        )],
    );
    assert_eq!(
        problems,
        [
            "`test_greet.py` was changed, but the request asks for it to pass as it is, not to be changed: put it back as it was and change `greet.py` instead"
        ]
    );
    // The fix where it belongs loses nothing.
    let fixed = "def greet(name):\n    return f\"Hello, {name}!\"\n";
    assert!(lost(request, &files, &[("greet.py", fixed)]).is_empty());
    // A request to change the test itself may change it.
    let own = "Fix test_greet.py so that it passes.";
    assert!(lost(own, &files, &[("test_greet.py", "print('ok')\n")]).is_empty());
    let both = "Fix greet.py and test_greet.py so that test_greet.py passes.";
    assert!(lost(both, &files, &[("test_greet.py", "print('ok')\n")]).is_empty());
}

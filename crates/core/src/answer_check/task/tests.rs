use super::*;
use std::path::Path;

fn exists(path: &str) -> Expectation {
    Expectation::Exists {
        path: path.into(),
        dir: false,
    }
}

fn dir(path: &str) -> Expectation {
    Expectation::Exists {
        path: path.into(),
        dir: true,
    }
}

fn holds(path: &str, text: &str) -> Expectation {
    Expectation::Holds {
        path: path.into(),
        text: text.into(),
    }
}

fn lacks(path: &str, text: &str) -> Expectation {
    Expectation::Lacks {
        path: path.into(),
        text: text.into(),
    }
}

fn sets(path: &str, keys: &[&str], value: &str) -> Expectation {
    Expectation::Sets {
        path: path.into(),
        keys: keys.iter().map(|k| k.to_string()).collect(),
        value: value.into(),
    }
}

fn read_(path: &str) -> Expectation {
    Expectation::Read { path: path.into() }
}

fn executable(path: &str) -> Expectation {
    Expectation::Executable { path: path.into() }
}

#[test]
fn the_words_of_everyday_tasks_state_what_must_hold() {
    let cases: Vec<(&str, Vec<Expectation>)> = vec![
        (
            "Create a file hello.txt containing the text 'hi there'.",
            vec![holds("hello.txt", "hi there"), exists("hello.txt")],
        ),
        (
            "Create hello.txt containing hi",
            vec![holds("hello.txt", "hi"), exists("hello.txt")],
        ),
        (
            "Write a shell script greet.sh that prints hello, and make it executable.",
            vec![
                executable("greet.sh"),
                exists("greet.sh"),
                Expectation::NotEmpty {
                    path: "greet.sh".into(),
                },
            ],
        ),
        (
            "Make deploy.sh executable",
            vec![executable("deploy.sh"), exists("deploy.sh")],
        ),
        (
            "Create the directories logs, data and tmp.",
            vec![dir("logs"), dir("data"), dir("tmp")],
        ),
        (
            "Create three folders named src, tests and docs inside the project.",
            vec![dir("src"), dir("tests"), dir("docs")],
        ),
        (
            "Create a folder called out and put hello.txt in it",
            vec![dir("out"), exists("hello.txt")],
        ),
        (
            "Delete the lines containing 'TODO' from notes.txt.",
            vec![lacks("notes.txt", "TODO")],
        ),
        (
            "Remove every line that mentions apple from fruits.txt",
            vec![lacks("fruits.txt", "apple")],
        ),
        (
            "Delete old.log",
            vec![Expectation::Gone {
                path: "old.log".into(),
            }],
        ),
        (
            "In notes.txt, replace the word apple with banana everywhere.",
            vec![
                lacks("notes.txt", "apple"),
                holds("notes.txt", "banana"),
                Expectation::Replaced {
                    path: "notes.txt".into(),
                    old: "apple".into(),
                    new: "banana".into(),
                    every: true,
                },
            ],
        ),
        (
            "Rename the function greet to welcome in main.py and helpers.py.",
            vec![
                lacks("main.py", "greet"),
                holds("main.py", "welcome"),
                lacks("helpers.py", "greet"),
                holds("helpers.py", "welcome"),
            ],
        ),
        (
            "Rename `greet()` to `welcome()` in main.py",
            vec![lacks("main.py", "greet"), holds("main.py", "welcome")],
        ),
        (
            "Append the line 'done' to log.txt",
            vec![
                holds("log.txt", "done"),
                Expectation::HoldsLine {
                    path: "log.txt".into(),
                    text: "done".into(),
                },
            ],
        ),
        // Recorded: the skill's instructions repeated as the answer, exit 0, no deploys.log;
        // then `touch deploys.log`, exit 0.
        (
            "Record the deploy of version 2.4.1 in deploys.log the way this team does it.",
            vec![
                exists("deploys.log"),
                Expectation::NotEmpty {
                    path: "deploys.log".into(),
                },
                holds("deploys.log", "2.4.1"),
            ],
        ),
        // Recorded: "Deployment logged in deploys.log", no version.
        (
            "Log the release of v3.10 to releases.txt",
            vec![
                exists("releases.txt"),
                Expectation::NotEmpty {
                    path: "releases.txt".into(),
                },
                holds("releases.txt", "v3.10"),
            ],
        ),
        (
            "Read data.csv and write the total of the amount column to total.txt.",
            vec![
                exists("total.txt"),
                Expectation::NotEmpty {
                    path: "total.txt".into(),
                },
                Expectation::ColumnTotal {
                    csv: "data.csv".into(),
                    column: "amount".into(),
                    out: "total.txt".into(),
                },
                read_("data.csv"),
            ],
        ),
        (
            "In config.toml, change the server port to 8080.",
            vec![
                holds("config.toml", "8080"),
                sets("config.toml", &["server", "port"], "8080"),
            ],
        ),
        (
            "Set `port` = 8080 in config.toml",
            vec![
                holds("config.toml", "8080"),
                sets("config.toml", &["port"], "8080"),
            ],
        ),
        (
            "Change the version from '0.1.0' to '0.2.0' in Cargo.toml, and the port to 9000.",
            vec![
                holds("Cargo.toml", "0.2.0"),
                sets("Cargo.toml", &["version"], "0.2.0"),
                holds("Cargo.toml", "9000"),
                sets("Cargo.toml", &["port"], "9000"),
            ],
        ),
        (
            "Add a function greet to utils.py",
            vec![holds("utils.py", "greet")],
        ),
        (
            "Write a function add in math_utils.py",
            vec![holds("math_utils.py", "add")],
        ),
        (
            "Create mathx.py with a function mul(a, b) that returns a times b.",
            vec![exists("mathx.py"), holds("mathx.py", "mul")],
        ),
        (
            "Create greeting.txt that greets the person named in name.txt, in the form Hello, <name>!",
            vec![
                exists("greeting.txt"),
                read_("name.txt"),
                lacks("greeting.txt", "<name>"),
                Expectation::Form {
                    path: "greeting.txt".into(),
                    before: "Hello, ".into(),
                    placeholder: "name".into(),
                    after: "!".into(),
                    source: Some("name.txt".into()),
                },
            ],
        ),
        (
            "Fix the typo in greet.py so that test_greet.py passes.",
            vec![Expectation::Passes {
                test: "test_greet.py".into(),
            }],
        ),
    ];
    for (request, expected) in cases {
        assert_eq!(expectations(request), expected, "{request}");
    }
}

#[test]
fn open_or_negated_wordings_state_nothing_they_leave_open() {
    let cases: Vec<(&str, Vec<Expectation>)> = vec![
        ("Do not create hello.txt", vec![]),
        ("Write a function in Python that adds two numbers", vec![]),
        ("Record the steps you take", vec![]),
        ("If config.toml does not exist, create it.", vec![]),
        ("Create a directory structure for the project", vec![]),
        (
            "Create summary.txt containing the number of lines in data.csv",
            vec![exists("summary.txt"), read_("data.csv")],
        ),
        ("Change the indentation to 4 spaces in main.py", vec![]),
        ("Change the greeting in hello.py to uppercase", vec![]),
        ("Set the port to 8080 in a.toml and b.toml", vec![]),
        ("Add a function that adds two numbers to utils.py", vec![]),
        ("Run test_add.py and tell me whether it passes", vec![]),
        ("Create x.txt without a trailing newline", vec![]),
        ("Find the file containing 'load_settings'", vec![]),
        ("Explain e.g. what main.py does", vec![]),
    ];
    for (request, expected) in cases {
        assert_eq!(expectations(request), expected, "{request}");
    }
}

#[test]
fn paths_and_sentences_are_told_apart_from_prose() {
    for word in [
        "hello.txt",
        "src/lib.rs",
        "a/b",
        "test_add.py",
        "Makefile.am",
    ] {
        assert!(looks_like_path(word), "{word}");
    }
    for word in ["1.5", "e.g", "hello.", "https://x.y/z.txt", "/", "and"] {
        assert!(!looks_like_path(word), "{word}");
    }
    assert_eq!(
        sentences("Create hello.txt. Then run it! Say 'a. b' now"),
        ["Create hello.txt.", " Then run it!", " Say 'a. b' now"]
    );
}

#[test]
fn unmet_expectations_are_read_from_the_directory() {
    let dir_ = tempfile::tempdir().unwrap();
    let cwd = dir_.path();
    std::fs::write(cwd.join("greet.sh"), "echo hello\n").unwrap();
    std::fs::create_dir(cwd.join("logs")).unwrap();
    std::fs::create_dir_all(cwd.join("out")).unwrap();
    std::fs::write(cwd.join("out/hello.txt"), "hi there\n").unwrap();
    std::fs::write(cwd.join("notes.txt"), "keep\nTODO: x\n").unwrap();
    let unmet_of = |request: &str| unmet(&expectations(request), cwd, &[]);
    // Recorded in round 20: "`hello.txt` does not exist" said twice in one note.
    assert_eq!(
        unmet_of("Create a file hello2.txt containing hi"),
        ["`hello2.txt` does not exist"]
    );
    assert_eq!(
        unmet_of("Write a shell script greet.sh that prints hello, and make it executable."),
        ["`greet.sh` is not executable (it needs `chmod +x greet.sh`)"]
    );
    assert_eq!(
        unmet_of("Create the directories logs, data and tmp."),
        [
            "the folder `data` does not exist",
            "the folder `tmp` does not exist"
        ]
    );
    // Found in the folder the task put it in.
    assert!(unmet_of("Create a file hello.txt containing the text 'hi there'.").is_empty());
    assert_eq!(
        unmet_of("Create a file hello.txt containing the text 'bye'."),
        ["`hello.txt` does not contain `bye`"]
    );
    assert_eq!(
        unmet_of("Delete the lines containing 'TODO' from notes.txt."),
        ["`notes.txt` still contains `TODO`"]
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(cwd.join("greet.sh"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        assert!(unmet_of("Make greet.sh executable").is_empty());
    }
    // A word is matched whole: renaming `load` leaves `load_config` alone.
    std::fs::write(cwd.join("a.py"), "def read(p): return load_config(p)\n").unwrap();
    assert!(unmet_of("Rename the function load to read in a.py").is_empty());
}

#[test]
fn a_named_test_must_pass_after_the_last_change() {
    let e = vec![Expectation::Passes {
        test: "test_calc.py".into(),
    }];
    let cwd = Path::new("/");
    let run = |ok: bool| Step {
        command: Some(r#"{"command":["python3","test_calc.py"]}"#.into()),
        ok,
        writes: false,
        args: String::new(),
    };
    let write = Step {
        command: None,
        ok: true,
        writes: true,
        args: String::new(),
    };
    assert_eq!(
        unmet(&e, cwd, std::slice::from_ref(&write)),
        ["`test_calc.py` was not run to check the result"]
    );
    assert_eq!(
        unmet(&e, cwd, &[run(false), write.clone()]),
        ["`test_calc.py` was not run again after the last change"]
    );
    assert_eq!(
        unmet(&e, cwd, &[write.clone(), run(false)]),
        ["`test_calc.py` still fails (its last run exited with an error)"]
    );
    assert!(unmet(&e, cwd, &[run(false), write.clone(), run(true)]).is_empty());
    let pytest = Step {
        command: Some(r#"{"command":["python3","-m","pytest","-q"]}"#.into()),
        ok: true,
        writes: false,
        args: String::new(),
    };
    assert!(
        unmet(&e, cwd, &[pytest]).is_empty(),
        "a runner that finds it"
    );
    // Recorded false success: a command that only mentions the test (writing it into a
    // script) is no run of it; one that runs it among other commands is.
    let mention = Step {
        command: Some(
            r#"{"command":"echo \"sed -i 's/hello/Hello/g' calc.py\" > fix.sh\necho \"python test_calc.py\" >> fix.sh"}"#
                .into(),
        ),
        ok: true,
        writes: true,
        args: String::new(),
    };
    assert_eq!(
        unmet(&e, cwd, &[run(false), mention]),
        ["`test_calc.py` was not run again after the last change"]
    );
    for script in [
        "cd work && python3 test_calc.py",
        "sed -i 's/-/+/' calc.py; python3 ./test_calc.py > out.txt",
        "PYTHONPATH=. python3 test_calc.py",
        "# run it\npython3 -m pytest -q",
        "./test_calc.py",
    ] {
        let step = Step {
            command: Some(format!(r#"{{"command":"{script}"}}"#)),
            ok: true,
            writes: false,
            args: String::new(),
        };
        assert!(
            unmet(&e, cwd, &[write.clone(), step]).is_empty(),
            "{script}"
        );
    }
    let argv = Step {
        command: Some(r#"{"command":["bash","-lc","python3 test_calc.py"]}"#.into()),
        ok: true,
        writes: false,
        args: String::new(),
    };
    assert!(unmet(&e, cwd, &[argv]).is_empty());
}

/// The everyday tasks of the real-model bench (tests/python/real_tasks.py), each with a
/// correct solution on disk: what their words state must hold there, so a task done right
/// is never sent back.
#[test]
fn correct_solutions_of_the_bench_tasks_meet_their_words() {
    let write = |dir: &Path, files: &[(&str, &str)]| {
        for (name, text) in files {
            let p = dir.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
    };
    // The test the multi-step task names, run and passing after the last change.
    let passed = Step {
        command: Some(r#"{"command":["python3","test_mathx.py"]}"#.into()),
        ok: true,
        writes: false,
        args: r#"{"command":["python3","test_mathx.py"]} cat sales.csv name.txt"#.into(),
    };
    let cases: Vec<(&str, Vec<(&str, &str)>)> = vec![
        (
            "Create a file hello.txt containing hi",
            vec![("hello.txt", "hi\n")],
        ),
        (
            "Add a line 'walk the dog' at the end of todo.txt.",
            vec![("todo.txt", "buy milk\nwalk the dog\n")],
        ),
        (
            "In notes.txt, replace the word apple with banana everywhere.",
            vec![("notes.txt", "The banana is red.\nI like banana pie.\n")],
        ),
        (
            "Rename the function compute_total to calculate_total in shop.py and main.py.",
            vec![
                (
                    "shop.py",
                    "def calculate_total(prices):\n    return sum(prices)\n",
                ),
                (
                    "main.py",
                    "from shop import calculate_total\n\nprint(calculate_total([1, 2, 3]))\n",
                ),
            ],
        ),
        (
            "In config.toml, change the server port to 8080.",
            vec![("config.toml", "[server]\nport = 8080\n")],
        ),
        (
            "Read sales.csv and write the total of the amount column to total.txt.",
            vec![("sales.csv", "item,amount\na,1\n"), ("total.txt", "1\n")],
        ),
        (
            "Create greeting.txt that greets the person named in name.txt, in the form Hello, <name>!",
            vec![("name.txt", "Ada\n"), ("greeting.txt", "Hello, Ada!\n")],
        ),
        (
            "Delete the lines containing TODO from notes.txt.",
            vec![("notes.txt", "keep one\nkeep two\n")],
        ),
        (
            "Write a Python script count.py that prints the numbers 1 to 5, one per line.",
            vec![("count.py", "for i in range(1, 6):\n    print(i)\n")],
        ),
        (
            "Create a directory src with a file main.py in it that prints hello.",
            vec![("src/main.py", "print('hello')\n")],
        ),
        (
            "Create mathx.py with a function mul(a, b) that returns a times b. Then write test_mathx.py that asserts mul(3, 4) == 12, and run it with python3 to check that it passes.",
            vec![
                ("mathx.py", "def mul(a, b):\n    return a * b\n"),
                (
                    "test_mathx.py",
                    "from mathx import mul\nassert mul(3, 4) == 12\n",
                ),
            ],
        ),
        (
            "Rename draft.txt to final.txt.",
            vec![("final.txt", "version one\n")],
        ),
    ];
    for (request, files) in cases {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &files);
        let missing = unmet(
            &expectations(request),
            dir.path(),
            std::slice::from_ref(&passed),
        );
        assert!(missing.is_empty(), "{request}: {missing:?}");
    }
    // A script made executable, and the directories made.
    let dir = tempfile::tempdir().unwrap();
    for d in ["logs", "data", "tmp"] {
        std::fs::create_dir(dir.path().join(d)).unwrap();
    }
    assert!(
        unmet(
            &expectations("Create the directories logs, data and tmp."),
            dir.path(),
            &[]
        )
        .is_empty()
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(dir.path().join("run.sh"), "#!/bin/sh\necho ready\n").unwrap();
        std::fs::set_permissions(
            dir.path().join("run.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        assert!(
            unmet(
                &expectations("Make the script run.sh executable."),
                dir.path(),
                &[]
            )
            .is_empty()
        );
    }
}

#[test]
fn values_data_and_totals_are_read_from_the_directory_and_the_turn() {
    let dir_ = tempfile::tempdir().unwrap();
    let cwd = dir_.path();
    std::fs::write(cwd.join("config.toml"), "[server]\nport = 8081\n").unwrap();
    std::fs::write(cwd.join("sales.csv"), "item,amount,qty\na,10,1\nb,2.5,3\n").unwrap();
    std::fs::write(cwd.join("total.txt"), "4\n").unwrap();
    let cat = Step {
        command: Some(r#"{"command":["cat","sales.csv"]}"#.into()),
        ok: true,
        writes: false,
        args: r#"{"command":["cat","sales.csv"]}"#.into(),
    };
    let unmet_of = |request: &str, steps: &[Step]| unmet(&expectations(request), cwd, steps);
    let port = "In config.toml, change the server port to 8080.";
    assert_eq!(
        unmet_of(port, &[]),
        [
            "`config.toml` does not contain `8080`",
            "`config.toml` does not set `port` to `8080` (the line to change reads `port = 8081`)"
        ]
    );
    // Recorded on the real tier: a new key appended, the setting itself left as it was.
    std::fs::write(
        cwd.join("config.toml"),
        "[server]\nport = 8000\nserver_port = 8080\n",
    )
    .unwrap();
    assert_eq!(
        unmet_of(port, &[]),
        ["`config.toml` still sets `port` to `8000` (change that line, do not add another)"]
    );
    for done in [
        "[server]\nhost = \"127.0.0.1\"\nport = 8080 # the web port\n",
        "SERVER_PORT=8080\n",
        "{\"server\": {\"port\": 8080,\n\"debug\": true}}\n",
        "[server]\nport = 8080\n[db]\nport = 5432\n",
        "server:\n  port: 8080\n",
    ] {
        std::fs::write(cwd.join("config.toml"), done).unwrap();
        assert!(unmet_of(port, &[]).is_empty(), "{done}");
    }
    let total = "Read sales.csv and write the total of the amount column to total.txt.";
    assert_eq!(
        unmet_of(total, &[]),
        [
            "`total.txt` does not hold the total of the `amount` column of `sales.csv` (the first line is the header `item,amount,qty`; `amount` is field 2 of 3: `$2` in awk with `-F,` (skip the header with `NR>1`), `line.split(',')[1]` in Python; compute it from the file and write it, for example with `awk -F, 'NR>1 {s += $2} END {print s}' sales.csv > total.txt`)",
            "`sales.csv` was not read: no command or tool of this turn used it, so what was written from it cannot be right"
        ]
    );
    // The sum of the wrong column (qty: 4) is no total of amount; the right one is.
    assert_eq!(unmet_of(total, std::slice::from_ref(&cat)).len(), 1);
    std::fs::write(cwd.join("total.txt"), "Total: 12.5\n").unwrap();
    assert!(unmet_of(total, std::slice::from_ref(&cat)).is_empty());
    // A CSV that is not plain numbers in that column is not judged.
    std::fs::write(cwd.join("sales.csv"), "item,amount\na,\"1,000\"\n").unwrap();
    assert!(unmet_of(total, std::slice::from_ref(&cat)).is_empty());
}

#[test]
fn a_question_about_where_a_name_lives_is_told_from_other_questions() {
    for (q, name) in [
        (
            "Which file in this project defines the function load_settings? Answer with the file's path.",
            Some("load_settings"),
        ),
        ("Where is `parse_args` defined?", Some("parse_args")),
        ("Which file defines the class Config?", Some("Config")),
        ("What does config_loader.py do?", None),
        ("What is the max_tokens setting for?", None),
        (
            "Which file defines the function that parses arguments?",
            None,
        ),
    ] {
        assert_eq!(asked_definition(q).as_deref(), name, "{q}");
    }
    let dir_ = tempfile::tempdir().unwrap();
    let cwd = dir_.path();
    std::fs::create_dir_all(cwd.join("app/net")).unwrap();
    std::fs::write(
        cwd.join("app/net/client.py"),
        "def load_settings(p):\n    pass\n",
    )
    .unwrap();
    std::fs::write(cwd.join("other.py"), "def load_settings_v2():\n    pass\n").unwrap();
    assert_eq!(
        files_naming(cwd, "load_settings").unwrap(),
        ["app/net/client.py"]
    );
    assert!(files_naming(cwd, "nowhere_at_all").unwrap().is_empty());
}

/// Round 7's two false successes: a greeting with its placeholder left empty, and a
/// "script" that is not Python.
#[test]
fn a_form_must_be_filled_in_and_a_python_file_must_parse() {
    let dir_ = tempfile::tempdir().unwrap();
    let cwd = dir_.path();
    let greet =
        "Create greeting.txt that greets the person named in name.txt, in the form Hello, <name>!";
    std::fs::write(cwd.join("name.txt"), "Barbara\n").unwrap();
    let cat = Step {
        command: Some(r#"{"command":"cat name.txt"}"#.into()),
        ok: true,
        writes: false,
        args: r#"{"command":"cat name.txt"}"#.into(),
    };
    let unmet_of = |request: &str| unmet(&expectations(request), cwd, std::slice::from_ref(&cat));
    // Not written yet: said once, with the command.
    assert_eq!(
        unmet_of(greet),
        [
            "`greeting.txt` does not exist: for example `echo \"Hello, $(cat name.txt)!\" > greeting.txt`"
        ]
    );
    for (written, problem) in [
        (
            "Hello, ! \n",
            Some(
                "`greeting.txt` does not hold `Hello, <name>!` with `<name>` filled in (it holds `Hello, !`): for example `echo \"Hello, $(cat name.txt)!\" > greeting.txt`",
            ),
        ),
        (
            "Hello, Ada!\n",
            Some(
                "`greeting.txt` holds `Hello, Ada!`, but `name.txt` says `Barbara`: `<name>` should be that: for example `echo \"Hello, $(cat name.txt)!\" > greeting.txt`",
            ),
        ),
        ("Hello, Barbara!\n", None),
        ("  Hello, Barbara!", None),
    ] {
        std::fs::write(cwd.join("greeting.txt"), written).unwrap();
        let got = unmet_of(greet);
        match problem {
            Some(p) => assert_eq!(got, [p], "{written:?}"),
            None => assert!(got.is_empty(), "{written:?}: {got:?}"),
        }
    }
    // The form ends with its sentence; a form without a file for its placeholder only
    // needs it filled.
    let e = expectations("Write out.txt in the form Total: <sum>. Then say done.");
    assert!(
        e.contains(&Expectation::Form {
            path: "out.txt".into(),
            before: "Total: ".into(),
            placeholder: "sum".into(),
            after: "".into(),
            source: None,
        }),
        "{e:?}"
    );

    let script = "Write a Python script count.py that prints the numbers 1 to 5, one per line.";
    std::fs::write(cwd.join("count.py"), "1\\n2\\n3\\n4\\n5\n").unwrap();
    let has_python = std::process::Command::new("python3")
        .arg("-V")
        .output()
        .is_ok();
    if has_python {
        let got = unmet_of(script);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(
            got[0].starts_with("`count.py` is not valid Python (SyntaxError"),
            "{}",
            got[0]
        );
    }
    std::fs::write(
        cwd.join("count.py"),
        "for i in range(1, 6):\n    print(i)\n",
    )
    .unwrap();
    assert!(unmet_of(script).is_empty());
}

/// Round 9's false success: "add a line 'walk the dog'" answered with `walk the dogn` (an
/// `echo -e` whose `\\n` went astray), which contains the text.
#[test]
fn a_line_asked_for_must_be_that_line() {
    let dir_ = tempfile::tempdir().unwrap();
    let cwd = dir_.path();
    let request = "Add a line 'walk the dog' at the end of todo.txt.";
    let e = expectations(request);
    for (content, problem) in [
        (
            "buy milk\nwalk the dogn\n",
            Some(
                "`todo.txt` has no line that is exactly `walk the dog`: the line holds more than was asked",
            ),
        ),
        ("buy milk\nwalk the dog\n", None),
        ("buy milk\n  walk the dog  \n", None),
        (
            "buy milk\n",
            Some("`todo.txt` does not contain `walk the dog`"),
        ),
    ] {
        std::fs::write(cwd.join("todo.txt"), content).unwrap();
        let got = unmet(&e, cwd, &[]);
        match problem {
            Some(p) => assert_eq!(got, [p], "{content:?}"),
            None => assert!(got.is_empty(), "{content:?}: {got:?}"),
        }
    }
}

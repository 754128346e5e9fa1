use super::{code_file, with_shown_functions};

const IMPLEMENT: &str =
    "Implement the function is_palindrome in text_utils.py so that test_text_utils.py passes.";

#[test]
fn the_file_is_the_one_python_file_the_request_names_that_is_no_test() {
    assert_eq!(code_file(IMPLEMENT).as_deref(), Some("text_utils.py"));
    assert_eq!(
        code_file("Fix the typo in greet.py so that test_greet.py passes.").as_deref(),
        Some("greet.py")
    );
    assert_eq!(
        code_file("Fix `src/app.py`.").as_deref(),
        Some("src/app.py")
    );
    // Two candidates, none, or a question.
    assert_eq!(code_file("Move add from a.py to b.py."), None);
    assert_eq!(code_file("Fix the bug so that test_calc.py passes."), None);
    assert_eq!(code_file("What does greet.py do?"), None);
}

/// The recorded answer of implement-function (round 5): a correct function in a python
/// block, with prose around it, and no call.
#[test]
fn a_shown_function_replaces_the_files_function_of_that_name() {
    let file = "\"\"\"Text helpers.\"\"\"\n\n\ndef is_palindrome(text):\n    raise NotImplementedError\n\n\ndef shout(text):\n    return text.upper()\n";
    let answer = "To implement the function, you can write:\n\n```python\ndef is_palindrome(text):\n    # Normalize the string\n    normalized_text = text.replace(\" \", \"\").lower()\n\n    return normalized_text == normalized_text[::-1]\n```\n\nThis checks the reverse.";
    let (new, names) = with_shown_functions(answer, file, "text_utils.py").unwrap();
    assert_eq!(names, vec!["is_palindrome".to_string()]);
    assert_eq!(
        new,
        "\"\"\"Text helpers.\"\"\"\n\n\ndef is_palindrome(text):\n    # Normalize the string\n    normalized_text = text.replace(\" \", \"\").lower()\n\n    return normalized_text == normalized_text[::-1]\n\n\ndef shout(text):\n    return text.upper()\n"
    );
}

#[test]
fn decorators_imports_and_several_functions_are_kept_in_place() {
    let file =
        "import os\n\n@cache\ndef a():\n    return 1\n\ndef b():\n    return 2\n\nprint(a())\n";
    let answer = "```python\nimport re\nimport os\n\n@cache\ndef a():\n    return re.sub('x', '', 'y')\n\ndef b():\n    return 3\n\ndef c():\n    return 4\n\nprint(b())\n```";
    let (new, names) = with_shown_functions(answer, file, "text_utils.py").unwrap();
    assert_eq!(names, vec!["a".to_string(), "b".to_string()]);
    assert_eq!(
        new,
        "import re\nimport os\n\n@cache\ndef a():\n    return re.sub('x', '', 'y')\n\ndef b():\n    return 3\n\nprint(a())\n"
    );
}

#[test]
fn what_is_not_one_python_block_of_the_files_functions_is_left_alone() {
    let file = "def greet(name):\n    return f\"Helo, {name}!\"\n";
    // Another function, another language, two blocks, no block.
    assert!(
        with_shown_functions(
            "```python\ndef other():\n    pass\n```",
            file,
            "text_utils.py"
        )
        .is_none()
    );
    assert!(
        with_shown_functions("```js\nfunction greet() {}\n```", file, "text_utils.py").is_none()
    );
    assert!(
        with_shown_functions(
            "```python\ndef greet(n):\n    return 1\n```\nor\n```python\ndef greet(n):\n    return 2\n```",
            file,
            "greet.py"
        )
        .is_none()
    );
    // Beside an example of calling it (round 6), the block that defines it counts.
    let (new, _) = with_shown_functions(
        "Here:\n```python\ndef greet(name):\n    return f\"Hello, {name}!\"\n```\nUse it:\n```python\nprint(greet(\"Ada\"))\n```",
        file,
        "greet.py",
    )
    .unwrap();
    assert_eq!(new, "def greet(name):\n    return f\"Hello, {name}!\"\n");
    assert!(
        with_shown_functions("def greet(name): return 'Hello'", file, "text_utils.py").is_none()
    );
    // A block without a language that starts with a def counts.
    let (new, _) = with_shown_functions(
        "```\ndef greet(name):\n    return f\"Hello, {name}!\"\n```",
        file,
        "greet.py",
    )
    .unwrap();
    assert_eq!(new, "def greet(name):\n    return f\"Hello, {name}!\"\n");
}

/// Round 16: the function shown under the test's import line. Written into text_utils.py,
/// that import of the file's own module made it import itself, and the fix failed.
#[test]
fn an_import_of_the_files_own_module_is_not_added() {
    let file = "def is_palindrome(text):\n    raise NotImplementedError\n";
    let answer = "```python\nfrom text_utils import is_palindrome\nimport text_utils\nimport re\ndef is_palindrome(text):\n    return text == text[::-1]\n```";
    let (new, _) = with_shown_functions(answer, file, "text_utils.py").unwrap();
    assert_eq!(
        new,
        "import re\ndef is_palindrome(text):\n    return text == text[::-1]\n"
    );
    // A module of another name stays.
    let (new, _) = with_shown_functions(answer, file, "pkg/other.py").unwrap();
    assert!(
        new.starts_with("from text_utils import is_palindrome\nimport text_utils\n"),
        "{new}"
    );
}

/// Round 21's write-script answer: `touch`, the script, `chmod`, each in a fence. The
/// script (an unmarked fence with a python shebang) is the new file's text.
#[test]
fn a_new_files_text_is_the_answers_one_python_block() {
    let answer = "You can create it:\n\n```\ntouch count.py\n```\n\nThen write:\n\n```\n#!/usr/bin/env python3\n\nfor i in range(1, 6):\n    print(i)\n```\n\nFinally:\n\n```\nchmod +x count.py\n```";
    assert_eq!(
        super::new_file_text(answer).as_deref(),
        Some("#!/usr/bin/env python3\n\nfor i in range(1, 6):\n    print(i)\n")
    );
    // None, two, or an empty one: nothing.
    assert_eq!(super::new_file_text("```\ntouch count.py\n```"), None);
    assert_eq!(
        super::new_file_text("```python\nprint(1)\n```\n```python\nprint(2)\n```"),
        None
    );
    assert_eq!(super::new_file_text("```python\n\n```"), None);
}

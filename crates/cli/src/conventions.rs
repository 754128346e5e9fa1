//! What every command shares and nothing else: the exit codes and the help text's ending.
//! A leaf: the argument types and each command read it.

/// Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error.
pub(crate) const EXIT_OK: i32 = 0;
pub(crate) const EXIT_FAILURE: i32 = 1;
pub(crate) const EXIT_USAGE: i32 = 2;

/// Ends every command's help: where settings and logs live, then examples. A macro because
/// clap's `after_help` wants one string and `concat!` only takes literals.
macro_rules! with_config_help {
    ($examples:literal) => {
        with_config_help!("", $examples)
    };
    ($preamble:literal, $examples:literal) => {
        concat!(
            $preamble,
            "Configuration: $OPENINTERPRETER_HOME/config.toml (default ~/.openinterpreter/config.toml),\n",
            "then .openinterpreter/config.toml in the project, then -c overrides and flags.\n",
            "Logs: set RUST_LOG=debug (written to stderr). See docs/getting-started.md.\n\n",
            "Examples:\n",
            $examples
        )
    };
}
pub(crate) use with_config_help;

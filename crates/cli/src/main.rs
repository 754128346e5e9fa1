//! `interpreter`: parses the command line and hands off to a front end. Every front end is
//! a thin adapter over `oi-core`; nothing here knows how a turn works.

mod accept_cmd;
mod acp_cmd;
mod cli;
mod codex_flags;
mod exec;
mod exec_jsonl;
mod images;
mod interactive;
mod listen_token;
mod local_model_cmd;
mod mcp_cmd;
mod mcp_server_cmd;
mod out;
mod render;
mod sandbox_cmd;
mod sessions;
mod trust_cmd;
mod tui_cmd;

fn main() {
    let code = cli::main_with_args(std::env::args_os().collect());
    std::process::exit(code);
}

//! `mccbuild`: parses the command line, runs the command, maps its error to the exit code.

use clap::Parser;

fn main() -> std::process::ExitCode {
    mccbuild::signals::default_sigpipe();
    let cli = mccbuild::cli::Cli::parse();
    mccbuild::error::exit_code(mccbuild::commands::run(cli))
}

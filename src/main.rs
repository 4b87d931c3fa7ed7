//! `mccbuild`: parses the command line, runs the command, maps its error to the exit code.

fn main() -> std::process::ExitCode {
    mccbuild::signals::default_sigpipe();
    let cli = mccbuild::cli::Cli::from_command_line();
    mccbuild::error::exit_code(mccbuild::commands::run(cli))
}

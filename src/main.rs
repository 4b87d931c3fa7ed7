use clap::Parser;

fn main() {
    // Writing into a closed pipe (`mccbuild scores | head`) is a normal end, not a crash.
    // SAFETY: resetting SIGPIPE to its default before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = mccbuild::cli::Cli::parse();
    std::process::exit(mccbuild::cli::main_with(cli));
}

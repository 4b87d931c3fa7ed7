//! What a person sees (issue 19): every option described in `--help` and in docs/cli.md, checks
//! that come before `run` fails, progress that tells the truth.

mod common;

use std::collections::BTreeSet;
use std::fs;

use clap::CommandFactory;
use common::*;

/// The non-hidden long options of a clap command, without help and version.
fn long_options(cmd: &clap::Command) -> Vec<(String, bool)> {
    cmd.get_arguments()
        .filter(|a| !a.is_hide_set())
        .filter_map(|a| {
            let long = a.get_long()?;
            (long != "help" && long != "version").then(|| (long.to_string(), a.get_help().is_some()))
        })
        .collect()
}

/// docs/cli.md's sections: `## mccbuild <command> <synopsis>` -> (command, the options of the
/// synopsis line).
fn documented_commands() -> Vec<(String, BTreeSet<String>)> {
    let text = fs::read_to_string(format!("{REPO}/docs/cli.md")).unwrap();
    text.lines()
        .filter_map(|l| l.strip_prefix("## mccbuild "))
        .map(|l| {
            let name = l.split_whitespace().next().unwrap_or("").to_string();
            let options = l
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .filter_map(|w| w.strip_prefix("--"))
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect();
            (name, options)
        })
        .collect()
}

#[test]
fn every_option_and_command_has_help_and_a_section_in_docs_cli_md() {
    let cli = mccbuild::cli::Cli::command();
    let documented = documented_commands();
    let mut missing = Vec::new();
    for sub in cli.get_subcommands() {
        let name = sub.get_name();
        if sub.get_about().is_none() && !sub.is_hide_set() {
            missing.push(format!("`{name}` has no description in --help"));
        }
        for (long, has_help) in long_options(sub) {
            if !has_help {
                missing.push(format!("`{name} --{long}` has no description in --help"));
            }
        }
        match documented.iter().find(|(d, _)| d == name) {
            None => missing.push(format!("docs/cli.md has no section `## mccbuild {name} ...`")),
            Some((_, options)) => {
                let real: BTreeSet<String> = long_options(sub)
                    .into_iter()
                    .map(|(l, _)| l)
                    .filter(|l| l != "manifest")
                    .collect();
                for gone in options.difference(&real) {
                    missing.push(format!("docs/cli.md documents `{name} --{gone}`, which does not exist"));
                }
                for undocumented in real.difference(options) {
                    missing.push(format!("docs/cli.md's `## mccbuild {name}` line lacks `--{undocumented}`"));
                }
            }
        }
        // The binary's own --help shows each option with (the start of) its description.
        let help = stdout(&mccbuild_in(std::path::Path::new(REPO), &[name, "--help"]));
        for arg in sub.get_arguments().filter(|a| !a.is_hide_set() && a.get_long().is_some()) {
            let Some(text) = arg.get_help() else { continue };
            let start: Vec<String> = text.to_string().split_whitespace().take(3).map(str::to_string).collect();
            if !help.contains(&start.join(" ")) {
                missing.push(format!("`mccbuild {name} --help` does not describe --{}", arg.get_long().unwrap_or_default()));
            }
        }
    }
    for (name, _) in &documented {
        if cli.find_subcommand(name).is_none() {
            missing.push(format!("docs/cli.md documents `mccbuild {name}`, which does not exist"));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn the_pages_the_code_points_to_exist() {
    for page in ["docs/import.md", "docs/cli.md", "docs/manifest.md", "docs/cache.md", "docs/execution.md"] {
        assert!(std::path::Path::new(REPO).join(page).exists(), "{page}");
    }
    let manifest = fs::read_to_string(format!("{REPO}/docs/manifest.md")).unwrap();
    assert!(manifest.contains("# results = "), "docs/manifest.md documents `results`");
}

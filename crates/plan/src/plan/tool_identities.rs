//! Each tool's identity for its runs' keys: its files' digests (all of them, and those its setup
//! reads) and its host packages' versions; a tool known from results files only by name.

use mccbuild_core::diag::{Problem, Problems};

use crate::digest_cache::DigestCache;
use crate::key::{ToolIdentity, files_digest, tool_files_digest};
use crate::manifest::Contest;
use crate::results_file::ResultRow;

/// Each tool's identity (its files' digests): None when a tool's folder cannot be read.
pub(super) fn tool_identities(
    contest: &Contest,
    imported: &[Vec<ResultRow>],
    cache: &mut DigestCache,
    problems: &mut Problems,
) -> Option<Vec<ToolIdentity>> {
    let mut tools = Vec::with_capacity(contest.tools.len());
    let mut unreadable = false;
    for tool in &contest.tools {
        let Some(dir) = &tool.dir else {
            if !imported.iter().flatten().any(|r| r.tool == tool.name) {
                problems.push(
                    Problem::new(
                        &contest.manifest_path,
                        format!(
                            "tool `{}` has no `dir` and no run in the results files",
                            tool.name
                        ),
                    )
                    .help("check the tool's name against the `tool` column of the results files"),
                );
            }
            // Imported tools are known by name only; their runs' keys hold their rows.
            let files = *blake3::hash(b"mccbuild imported tool").as_bytes();
            tools.push(ToolIdentity {
                name: tool.name.clone(),
                bk_tool: tool.bk_tool.clone(),
                user: tool.user.name().to_string(),
                host: String::new(),
                cores: tool.cores,
                entry: String::new(),
                setup: None,
                files,
                setup_files: files,
            });
            continue;
        };
        let host = match crate::host_packages::package_versions(&tool.host_packages) {
            Ok(host) => host,
            Err(e) => {
                unreadable = true;
                problems.push(
                    Problem::new(
                        &contest.manifest_path,
                        format!("tool `{}`: host_packages: {e}", tool.name),
                    )
                    .help("host_packages names Debian packages of this machine; remove it where there is no dpkg"),
                );
                String::new()
            }
        };
        let digests = tool_files_digest(dir, cache).and_then(|files| {
            let setup_files = match &tool.setup_inputs {
                Some(patterns) => files_digest(dir, Some(patterns), cache)?,
                None => files,
            };
            Ok((files, setup_files))
        });
        match digests {
            Ok((files, setup_files)) => tools.push(ToolIdentity {
                name: tool.name.clone(),
                bk_tool: tool.bk_tool.clone(),
                user: tool.user.name().to_string(),
                host,
                cores: tool.cores,
                entry: tool.entry.clone(),
                setup: tool.setup.clone(),
                files,
                setup_files,
            }),
            Err(e) => {
                unreadable = true;
                problems.push(Problem::new(
                    &contest.manifest_path,
                    format!("tool `{}`: cannot read {}: {e}", tool.name, dir.display()),
                ))
            }
        }
    }
    (!unreadable).then_some(tools)
}

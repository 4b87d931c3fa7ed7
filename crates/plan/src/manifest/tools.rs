//! `[[tool]]`: each tool's name, folder and entry, cores, examinations, setup and host
//! packages, checked.

use std::collections::HashSet;
use std::ops::Range;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use toml::Spanned;

use mccbuild_core::diag::Problem;
use mccbuild_rules::edition::ExamId;

use super::Tool;
use super::reading::{Reading, at};
use super::schema::{ManifestFile, ToolSection};

impl Reading<'_> {
    /// The `[[tool]]`s.
    pub(super) fn tools(&mut self, file: &ManifestFile, results: &[PathBuf]) -> Vec<Tool> {
        let mut tools: Vec<Tool> = Vec::new();
        let mut tool_names = HashSet::new();
        for spanned in &file.tools {
            let name = &spanned.get_ref().name;
            if !tool_names.insert(name.clone()) {
                self.problems.push(
                    self.source
                        .problem_at(
                            Some(spanned.span()),
                            format!("tool `{name}` is declared twice"),
                        )
                        .help("give each [[tool]] its own name (variants of one tool share a `family`)"),
                );
                continue;
            }
            tools.push(self.tool(spanned, results));
        }
        self.unwritten_cores(file);
        if tools.is_empty() && file.tool_tables == 0 {
            self.problems.push(
                Problem::new(self.source.path, "the contest has no tools").help("add a [[tool]]"),
            );
        }
        tools
    }

    /// One `[[tool]]`, checked.
    fn tool(&mut self, spanned: &Spanned<ToolSection>, results: &[PathBuf]) -> Tool {
        let t = spanned.get_ref();
        let here = Some(spanned.span());
        let (source, problems) = (&self.source, &mut self.problems);
        let cores = *t.cores.get_ref();
        if t.name.is_empty()
            || !t
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.+".contains(c))
        {
            problems.push(
                source
                    .problem_at(
                        here.clone(),
                        format!("tool name `{}` must be letters, digits and - _ . +", t.name),
                    )
                    .help("it becomes BK_TOOL and a file name"),
            );
        }
        // A tool that does not write `cores` (1) is [limits] cores' problem: `unwritten_cores`.
        let written = at(t.cores.span());
        if written.is_some() && !self.allowed_cores.contains(&cores) {
            problems.push(
                source
                    .problem_at(written, format!("tool `{}`: cores = {cores}", t.name))
                    .help(if self.allowed_cores == [1, 4] {
                        "rules E-5.3 and E-5.4 allow 1 (sequential tools) or 4 (parallel tools)"
                            .to_string()
                    } else {
                        format!("[limits] cores allows {:?}", self.allowed_cores)
                    }),
            );
        }
        if let Some(bk) = &t.bk_tool {
            if bk.get_ref().is_empty()
                || !bk
                    .get_ref()
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.+".contains(c))
            {
                problems.push(
                    source
                        .problem_at(
                            at(bk.span()).or(here.clone()),
                            format!(
                                "tool `{}`: bk_tool `{}` must be letters, digits and - _ . +",
                                t.name,
                                bk.get_ref()
                            ),
                        )
                        .help("it is the BK_TOOL the tool's entry reads"),
                );
            }
        }
        for package in &t.host_packages {
            let name = package.get_ref();
            let valid = name.len() >= 2
                && name.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.:".contains(c));
            if !valid {
                problems.push(
                    source
                        .problem_at(
                            at(package.span()).or(here.clone()),
                            format!(
                                "tool `{}`: host_packages: `{name}` is not a Debian package name",
                                t.name
                            ),
                        )
                        .help("lower-case letters, digits and + - . (an architecture after `:`), as `dpkg-query -W` lists them"),
                );
            }
        }
        let dir = t.dir.as_ref().map(|d| {
            let dir = self.root.join(d.get_ref());
            std::path::absolute(&dir).unwrap_or(dir)
        });
        self.check_tool_dir(t, here.clone(), dir.as_deref(), results);
        let examinations = self.tool_examinations(t, here);
        let setup_inputs = self.setup_inputs(t);
        Tool {
            name: t.name.clone(),
            bk_tool: t
                .bk_tool
                .as_ref()
                .map_or_else(|| t.name.clone(), |b| b.get_ref().clone()),
            kind: t.kind,
            user: t.user,
            host_packages: t
                .host_packages
                .iter()
                .map(|p| p.get_ref().clone())
                .collect(),
            family: t.family.clone().unwrap_or_else(|| t.name.clone()),
            cores,
            dir,
            entry: t.entry.clone(),
            setup: t.setup.clone(),
            setup_inputs,
            examinations,
        }
    }

    /// `[limits] cores` without 1, the cores of a tool that does not write `cores`: one
    /// problem, at `[limits] cores`, naming those tools.
    fn unwritten_cores(&mut self, file: &ManifestFile) {
        let Some(limits) = &file.limits.cores else {
            return;
        };
        // The count to suggest (a 0 or an empty list is a problem of its own).
        let Some(first) = limits.get_ref().iter().find(|&&c| c > 0) else {
            return;
        };
        if self.allowed_cores.contains(&1) {
            return;
        }
        let tools: Vec<String> = file
            .tools
            .iter()
            .filter(|t| at(t.get_ref().cores.span()).is_none())
            .map(|t| format!("`{}`", t.get_ref().name))
            .collect();
        if tools.is_empty() {
            return;
        }
        self.problems.push(
            self.source
                .problem_at(
                    Some(limits.span()),
                    format!(
                        "[limits] cores = {:?} leaves out 1, the cores of {} {} (without `cores`)",
                        limits.get_ref(),
                        if tools.len() == 1 { "tool" } else { "tools" },
                        tools.join(", ")
                    ),
                )
                .help(format!(
                    "add 1 to [limits] cores, or give each of these tools `cores = {first}`"
                )),
        );
    }

    /// A tool is a folder with an executable entry inside it, unless its runs come from
    /// results files.
    fn check_tool_dir(
        &mut self,
        t: &ToolSection,
        here: Option<Range<usize>>,
        dir: Option<&Path>,
        results: &[PathBuf],
    ) {
        let (source, problems) = (&self.source, &mut self.problems);
        match (&t.dir, dir) {
            (None, _) if results.is_empty() => problems.push(
                source
                    .problem_at(here, format!("tool `{}` has no `dir`", t.name))
                    .help("a tool is a folder (`dir`), unless its runs come from `results` files"),
            ),
            (None, _) if t.setup.is_some() => {
                problems.push(
                    source
                        .problem_at(here, format!("tool `{}`: setup without dir", t.name))
                        .help("a setup runs in the tool's folder: set `dir`, or remove `setup`"),
                );
            }
            (Some(spanned), Some(dir)) if !dir.is_dir() => problems.push(
                source
                    .problem_at(
                        Some(spanned.span()),
                        format!("tool `{}`: folder {} does not exist", t.name, dir.display()),
                    )
                    .help("`dir` is relative to the manifest"),
            ),
            (Some(_), Some(dir)) => {
                let entry = dir.join(&t.entry);
                match std::fs::metadata(&entry) {
                    Err(_) => problems.push(
                        source
                            .problem_at(
                                here.clone(),
                                format!(
                                    "tool `{}`: entry {} does not exist",
                                    t.name,
                                    entry.display()
                                ),
                            )
                            .help(
                                "`entry` is relative to the tool's dir (default BenchKit_head.sh)",
                            ),
                    ),
                    Ok(meta) if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 => {
                        problems.push(
                            source
                                .problem_at(
                                    here.clone(),
                                    format!(
                                        "tool `{}`: entry {} is not an executable file",
                                        t.name,
                                        entry.display()
                                    ),
                                )
                                .help(format!("make it executable: chmod +x {}", entry.display())),
                        )
                    }
                    Ok(_) => {}
                }
                if Path::new(&t.entry).is_absolute()
                    || Path::new(&t.entry)
                        .components()
                        .any(|c| c == std::path::Component::ParentDir)
                {
                    problems.push(
                        source
                            .problem_at(
                                here,
                                format!(
                                    "tool `{}`: entry must be a path inside the tool's dir",
                                    t.name
                                ),
                            )
                            .help("give `entry` relative to `dir`, without `..`"),
                    );
                }
            }
            _ => {}
        }
    }

    /// The examinations a tool takes part in: "all", categories and examinations.
    fn tool_examinations(&mut self, t: &ToolSection, here: Option<Range<usize>>) -> Vec<ExamId> {
        let edition = &self.edition;
        let mut examinations = Vec::new();
        for name in t.examinations.get_ref() {
            if name == "all" {
                examinations.extend(0..edition.examinations.len());
            } else if let Some(exam) = edition.examination(name) {
                examinations.push(exam);
            } else if let Some(category) = edition.category(name) {
                examinations.extend(edition.categories[category].examinations.iter().copied());
            } else {
                self.problems.push(
                    self.source
                        .problem_at(
                            at(t.examinations.span()).or(here.clone()),
                            format!("tool `{}`: unknown examination `{name}`", t.name),
                        )
                        .help(format!(
                            "use \"all\", a category or an examination of {}: {}",
                            edition.info.name,
                            edition
                                .examinations
                                .iter()
                                .map(|e| e.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        )),
                );
            }
        }
        examinations.sort_unstable();
        examinations.dedup();
        examinations
    }

    /// `setup_inputs`: the globs of the files a tool's setup reads.
    fn setup_inputs(&mut self, t: &ToolSection) -> Option<Vec<glob::Pattern>> {
        let list = t.setup_inputs.as_ref()?;
        let mut patterns = Vec::new();
        for p in list.get_ref() {
            match glob::Pattern::new(p) {
                Ok(p) => patterns.push(p),
                Err(e) => self.problems.push(
                    self.source
                        .problem_at(
                            Some(list.span()),
                            format!("tool `{}`: bad setup_inputs pattern `{p}`: {e}", t.name),
                        )
                        .help(
                            "globs relative to the tool's dir, e.g. \"setup.sh\", \"src/**/*.py\"",
                        ),
                ),
            }
        }
        if t.setup.is_none() {
            self.problems.push(
                self.source
                    .problem_at(
                        Some(list.span()),
                        format!("tool `{}`: setup_inputs without setup", t.name),
                    )
                    .help("`setup_inputs` names the files a `setup` reads: add `setup`, or remove `setup_inputs`"),
            );
        }
        Some(patterns)
    }
}

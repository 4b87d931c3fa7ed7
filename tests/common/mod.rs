//! Test harness: contests in temporary folders, scripted tools, the real `mccbuild` binary.
#![allow(dead_code)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const REPO: &str = env!("CARGO_MANIFEST_DIR");

#[allow(unused_imports)]
pub use mccbuild_testkit::{mcc_data, skip};

pub struct TestContest {
    pub dir: tempfile::TempDir,
    pub models: Vec<(String, String, Vec<String>)>,
    pub tools: Vec<String>,
    pub extra: String,
}

impl TestContest {
    pub fn new() -> TestContest {
        TestContest {
            dir: tempfile::tempdir().expect("temp dir"),
            models: Vec::new(),
            tools: Vec::new(),
            extra: String::new(),
        }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Copies a demo instance of the repository under models/.
    pub fn copy_demo_instance(&mut self, name: &str) -> PathBuf {
        let target = self.path().join("models").join(name);
        copy_dir(&Path::new(REPO).join("models").join(name), &target);
        target
    }

    /// Declares a model with instance paths (relative to the contest folder).
    pub fn model(&mut self, name: &str, kind: &str, instances: &[&str]) -> &mut Self {
        self.models.push((
            name.to_string(),
            kind.to_string(),
            instances.iter().map(|s| s.to_string()).collect(),
        ));
        self
    }

    /// A scripted tool: its BenchKit_head.sh prints `answers/<instance>/<examination>` if it
    /// exists, `DO_NOT_COMPETE` otherwise. `extra_toml` goes into its [[tool]] table.
    pub fn scripted_tool(&mut self, name: &str, extra_toml: &str) -> PathBuf {
        let dir = self.path().join("tools").join(name);
        fs::create_dir_all(dir.join("answers")).unwrap();
        write_exec(
            &dir.join("BenchKit_head.sh"),
            "#!/bin/sh\nf=\"$(dirname \"$0\")/answers/$BK_INPUT/$BK_EXAMINATION\"\nif [ -f \"$f\" ]; then cat \"$f\"; else echo DO_NOT_COMPETE; fi\n",
        );
        self.tools.push(format!(
            "[[tool]]\nname = \"{name}\"\ndir = \"tools/{name}\"\n{extra_toml}\n"
        ));
        dir
    }

    /// A tool whose BenchKit_head.sh is `script`.
    pub fn script_tool(&mut self, name: &str, script: &str, extra_toml: &str) -> PathBuf {
        let dir = self.path().join("tools").join(name);
        fs::create_dir_all(&dir).unwrap();
        write_exec(&dir.join("BenchKit_head.sh"), script);
        self.tools.push(format!(
            "[[tool]]\nname = \"{name}\"\ndir = \"tools/{name}\"\n{extra_toml}\n"
        ));
        dir
    }

    /// Sets what a scripted tool prints for one run.
    pub fn answer(&self, tool: &str, instance: &str, exam: &str, output: &str) {
        let dir = self
            .path()
            .join("tools")
            .join(tool)
            .join("answers")
            .join(instance);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join(exam), output).unwrap();
    }

    /// Writes contest.toml.
    pub fn write(&self, limits: &str) {
        let mut text = format!(
            "[contest]\nname = \"Test\"\nrules = \"{}/rules/mcc-2026.toml\"\n\n[executor]\njobs = 2\n\n[limits]\n{limits}\n\n",
            REPO
        );
        for (name, kind, instances) in &self.models {
            let list: Vec<String> = instances.iter().map(|i| format!("\"{i}\"")).collect();
            text.push_str(&format!(
                "[[model]]\nname = \"{name}\"\nkind = \"{kind}\"\ninstances = [{}]\n\n",
                list.join(", ")
            ));
        }
        for tool in &self.tools {
            text.push_str(tool);
            text.push('\n');
        }
        text.push_str(&self.extra);
        fs::write(self.path().join("contest.toml"), text).unwrap();
    }

    pub fn mccbuild(&self, args: &[&str]) -> Output {
        mccbuild_in(self.path(), args)
    }

    /// Every run record of the store, as JSON.
    pub fn records(&self) -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        let runs = self.path().join("cache/runs");
        let Ok(shards) = fs::read_dir(&runs) else {
            return out;
        };
        for shard in shards.flatten() {
            for f in fs::read_dir(shard.path()).unwrap().flatten() {
                if f.path().extension().is_some_and(|e| e == "json") {
                    out.push(serde_json::from_slice(&fs::read(f.path()).unwrap()).unwrap());
                }
            }
        }
        out
    }

    pub fn record(&self, tool: &str, instance: &str, exam: &str) -> serde_json::Value {
        self.records()
            .into_iter()
            .find(|r| r["tool"] == tool && r["instance"] == instance && r["examination"] == exam)
            .unwrap_or_else(|| panic!("no record for {tool} {instance} {exam}"))
    }
}

pub fn mccbuild_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mccbuild"))
        .args(args)
        .current_dir(dir)
        .env_remove("MCCBUILD_SANDBOX")
        .output()
        .expect("mccbuild runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", stdout(o), stderr(o)))
}

pub fn write_exec(path: &Path, text: &str) {
    fs::write(path, text).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

pub fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Debian's chromium (or another Chromium-based browser) on the PATH.
pub fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            let out = Command::new("sh")
                .arg("-c")
                .arg(format!("command -v {name}"))
                .output()
                .ok()?;
            let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
            (out.status.success() && !path.is_empty()).then(|| PathBuf::from(path))
        })
}

/// A folder standing for the host's own software (a library a tool needs): a run sees it where
/// the host has it. Runs get private `/tmp`, `/var/tmp` and `/dev/shm` and are the user `mcc`, so
/// the folder is outside those (a clone under /tmp puts CARGO_TARGET_TMPDIR there) and readable by
/// all, its parents included.
pub fn host_software_dir() -> tempfile::TempDir {
    let private = |p: &Path| {
        ["/tmp", "/var/tmp", "/dev/shm"]
            .iter()
            .any(|t| p.starts_with(t))
    };
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let root = if private(target) {
        let shared = Path::new("/var/lib/mccbuild-tests");
        fs::create_dir_all(shared).expect("create /var/lib/mccbuild-tests (tests run as root)");
        fs::set_permissions(shared, fs::Permissions::from_mode(0o755)).unwrap();
        shared.to_path_buf()
    } else {
        target.to_path_buf()
    };
    let dir = tempfile::tempdir_in(&root).unwrap();
    fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

//! The run key's tests: one per ingredient proving it changes the key, others proving what must
//! not change it, and the encoding pinned by literal hex keys.

use super::*;
use mccbuild_core::hex;
use mccbuild_rules::edition::TimeLimit;

fn tool() -> ToolIdentity {
    ToolIdentity {
        name: "explorer".into(),
        bk_tool: "explorer".into(),
        user: "mcc".into(),
        host: String::new(),
        cores: 1,
        entry: "BenchKit_head.sh".into(),
        setup: None,
        files: [7; 32],
        setup_files: [7; 32],
    }
}

fn executor() -> Vec<(String, String)> {
    vec![
        ("kind".into(), "local".into()),
        ("sandbox".into(), "cgroup-v1".into()),
    ]
}

fn key_with(
    change: impl FnOnce(
        &mut ToolIdentity,
        &mut String,
        &mut Digest,
        &mut String,
        &mut Limits,
        &mut Vec<(String, String)>,
    ),
) -> RunKey {
    key_reading("state-space;integer;STATES", change)
}

fn key_reading(
    reading: &str,
    change: impl FnOnce(
        &mut ToolIdentity,
        &mut String,
        &mut Digest,
        &mut String,
        &mut Limits,
        &mut Vec<(String, String)>,
    ),
) -> RunKey {
    let mut t = tool();
    let mut instance = "Philosophers-PT-000002".to_string();
    let mut content = [1u8; 32];
    let mut exam = "StateSpace".to_string();
    let mut limits = Limits {
        time_s: 3600,
        memory_mb: 16384,
        time: TimeLimit::Cpu,
    };
    let mut exec = executor();
    change(
        &mut t,
        &mut instance,
        &mut content,
        &mut exam,
        &mut limits,
        &mut exec,
    );
    run_key(&KeyInputs {
        tool: &t,
        instance: &instance,
        instance_content: &content,
        examination: &exam,
        reading,
        limits,
        executor: &exec,
    })
}

#[test]
fn how_answers_are_read_changes_the_key() {
    assert_ne!(
        base(),
        key_reading(
            "state-space;integer;STATES,TRANSITIONS",
            |_, _, _, _, _, _| {}
        )
    );
}

fn base() -> RunKey {
    key_with(|_, _, _, _, _, _| {})
}

/// The keys of mccbuild's first stores, written down: a change of the encoding (a tag, a
/// length, an ingredient's spelling) shows here before it silently redoes every run of
/// every store. These values were computed by the first implementation, then recomputed on
/// purpose when an ingredient was added (`tool.bk_tool`, `limits.time`, `tool.user`,
/// `tool.host`).
#[test]
fn the_encoding_is_pinned() {
    assert_eq!(
        base().hex(),
        "de2e8b8b8bf53f9173f800dc70a82362f55d04e3702e9aa96b5f9ec3460a7d2a"
    );
    let edition = edition("mcc-2026.toml");
    let ss = &edition.examinations[edition.examination("StateSpace").unwrap()];
    assert_eq!(
        key_reading(&reading(ss), |_, _, _, _, _, _| {}).hex(),
        "0dc02cbd1303d93edec56e8a263e75f9a83bf51a76b8a65d68e91aa913064649"
    );
    let t = ToolIdentity {
        setup: Some("./setup.sh".into()),
        ..tool()
    };
    assert_eq!(
        hex(&t.setup_digest()),
        "beafd2e8c88e9c8389577a12061498dfa381ed78556990d34f2db1852ba676b5"
    );
    let builder = KeyBuilder::new(&[tool()], &[("kind".to_string(), "import".to_string())]);
    let limits = Limits {
        time_s: 1800,
        memory_mb: 16384,
        time: TimeLimit::Cpu,
    };
    let task = builder.task(
        "M-PT-1",
        &[9u8; 32],
        "OneSafe",
        "Global;Boolean;OneSafe",
        limits,
    );
    assert_eq!(
        builder.key(0, &task).hex(),
        "24d460b8d1c4deadb13ee21d01f17e88e8cbc623f29f676e26754a83d6e2e6c9"
    );
}

/// How answers are read is spelled with the words the first keys were made of (the enums'
/// names then): renaming a variant in the code must not change a key.
#[test]
fn the_reading_ingredient_keeps_its_first_spelling() {
    let mcc = edition("mcc-2026.toml");
    let read = |name: &str| reading(&mcc.examinations[mcc.examination(name).unwrap()]);
    assert_eq!(
        read("StateSpace"),
        "StateSpace;Integer;STATES,TRANSITIONS,MAX_TOKEN_IN_PLACE,MAX_TOKEN_PER_MARKING"
    );
    assert_eq!(
        read("ReachabilityDeadlock"),
        "Global;Boolean;ReachabilityDeadlock"
    );
    assert_eq!(read("UpperBounds"), "Formulas;Integer;");
    assert_eq!(read("LTLFireability"), "Formulas;Boolean;");
    let svcomp = edition("svcomp-2012.toml");
    assert_eq!(
        reading(&svcomp.examinations[0]),
        "Verdict;Boolean;ReachSafety"
    );
}

/// A tool folder's digest, pinned (file order, paths, executable bits, contents).
#[test]
fn the_tool_folder_digest_is_pinned() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, text: &str, mode: u32| {
        std::fs::write(dir.path().join(name), text).unwrap();
        std::fs::set_permissions(dir.path().join(name), std::fs::Permissions::from_mode(mode))
            .unwrap();
    };
    std::fs::create_dir(dir.path().join("lib")).unwrap();
    file("BenchKit_head.sh", "#!/bin/sh\necho hi\n", 0o755);
    file("lib/a.txt", "a", 0o644);
    let mut cache = DigestCache::in_memory();
    assert_eq!(
        hex(&tool_files_digest(dir.path(), &mut cache).unwrap()),
        "c7295489fe21a1eb8094cb8d58fbf1448e3fe8dda657add79389bc7fd5daa069"
    );
}

fn edition(file: &str) -> mccbuild_rules::edition::Edition {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../rules")
        .join(file);
    mccbuild_rules::edition::Edition::load(&path).unwrap()
}

#[test]
fn tool_name_changes_the_key() {
    assert_ne!(
        base(),
        key_with(|t, _, _, _, _, _| t.name = "explorer2".into())
    );
}

#[test]
fn bk_tool_changes_the_key() {
    assert_ne!(
        base(),
        key_with(|t, _, _, _, _, _| t.bk_tool = "explorer-variant".into())
    );
}

#[test]
fn run_user_changes_the_key() {
    assert_ne!(base(), key_with(|t, _, _, _, _, _| t.user = "root".into()));
}

#[test]
fn host_packages_versions_change_the_key() {
    let with = |host: &str| key_with(|t, _, _, _, _, _| t.host = host.into());
    assert_ne!(base(), with("libgmp10=2:6.2.1+dfsg1-1.1\n"));
    assert_ne!(with("libgmp10=\n"), with("libgmp10=2:6.2.1+dfsg1-1.1\n"));
    assert_ne!(
        with("libgmp10=2:6.2.1+dfsg1-1.1\n"),
        with("libgmp10=2:6.3.0+dfsg-2\n")
    );
}

#[test]
fn tool_cores_change_the_key() {
    assert_ne!(base(), key_with(|t, _, _, _, _, _| t.cores = 4));
}

#[test]
fn tool_entry_changes_the_key() {
    assert_ne!(
        base(),
        key_with(|t, _, _, _, _, _| t.entry = "run.sh".into())
    );
}

#[test]
fn tool_setup_changes_the_key() {
    let with_setup = key_with(|t, _, _, _, _, _| t.setup = Some("make".into()));
    assert_ne!(base(), with_setup);
    // An empty setup command is not the same as none.
    assert_ne!(
        with_setup,
        key_with(|t, _, _, _, _, _| t.setup = Some(String::new()))
    );
    assert_ne!(
        base(),
        key_with(|t, _, _, _, _, _| t.setup = Some(String::new()))
    );
}

#[test]
fn tool_files_change_the_key() {
    assert_ne!(base(), key_with(|t, _, _, _, _, _| t.files = [8; 32]));
}

#[test]
fn instance_name_changes_the_key() {
    assert_ne!(
        base(),
        key_with(|_, i, _, _, _, _| *i = "Philosophers-PT-000003".into())
    );
}

#[test]
fn instance_content_changes_the_key() {
    assert_ne!(base(), key_with(|_, _, c, _, _, _| c[0] = 2));
}

#[test]
fn examination_changes_the_key() {
    assert_ne!(
        base(),
        key_with(|_, _, _, e, _, _| *e = "UpperBounds".into())
    );
}

#[test]
fn time_limit_changes_the_key() {
    assert_ne!(base(), key_with(|_, _, _, _, l, _| l.time_s = 1800));
}

#[test]
fn which_time_is_limited_changes_the_key() {
    let wall = key_with(|_, _, _, _, l, _| l.time = TimeLimit::Wall);
    let both = key_with(|_, _, _, _, l, _| l.time = TimeLimit::Both);
    assert_ne!(base(), wall);
    assert_ne!(base(), both);
    assert_ne!(wall, both);
}

#[test]
fn memory_limit_changes_the_key() {
    assert_ne!(base(), key_with(|_, _, _, _, l, _| l.memory_mb = 8192));
}

#[test]
fn executor_kind_changes_the_key() {
    assert_ne!(base(), key_with(|_, _, _, _, _, x| x[0].1 = "qemu".into()));
}

#[test]
fn executor_settings_change_the_key() {
    assert_ne!(
        base(),
        key_with(|_, _, _, _, _, x| x[1].1 = "rlimits".into())
    );
    assert_ne!(
        base(),
        key_with(|_, _, _, _, _, x| x.push(("cpu".into(), "Westmere".into())))
    );
}

#[test]
fn qemu_settings_change_the_key() {
    let qemu = |x: &mut Vec<(String, String)>| {
        *x = vec![
            ("kind".into(), "qemu".into()),
            ("guest".into(), "kernel".into()),
            ("cpu_model".into(), "Westmere".into()),
            ("accel".into(), "tcg".into()),
            ("vm_memory".into(), "limit".into()),
            ("kernel".into(), "k1".into()),
        ]
    };
    let base = key_with(|_, _, _, _, _, x| qemu(x));
    for (i, other) in ["image", "Nehalem", "kvm", "4096", "k2"]
        .into_iter()
        .enumerate()
    {
        assert_ne!(
            base,
            key_with(|_, _, _, _, _, x| {
                qemu(x);
                x[i + 1].1 = other.into();
            }),
            "{other}"
        );
    }
}

#[test]
fn a_tools_own_executor_ingredient_changes_its_keys_only() {
    let image = |digest: &str| -> Vec<(String, String)> {
        let mut x = executor();
        x.push(("tool:explorer:image".into(), digest.into()));
        x
    };
    // `tool()` is named explorer: its image is an ingredient of its runs...
    assert_ne!(
        key_with(|_, _, _, _, _, x| *x = image("a")),
        key_with(|_, _, _, _, _, x| *x = image("b"))
    );
    // ...and not of another tool's.
    let other = |x: &mut Vec<(String, String)>, d: &str| {
        *x = executor();
        x.push(("tool:lola:image".into(), d.into()));
    };
    assert_eq!(
        key_with(|_, _, _, _, _, x| other(x, "a")),
        key_with(|_, _, _, _, _, x| other(x, "b"))
    );
    assert_eq!(base(), key_with(|_, _, _, _, _, x| other(x, "a")));
}

#[test]
fn fields_do_not_run_into_each_other() {
    // The tag-and-length framing keeps "ab"+"c" apart from "a"+"bc".
    let a = key_with(|t, i, _, _, _, _| {
        t.name = "ab".into();
        *i = "c".into();
    });
    let b = key_with(|t, i, _, _, _, _| {
        t.name = "a".into();
        *i = "bc".into();
    });
    assert_ne!(a, b);
}

#[test]
fn the_plan_builder_makes_the_same_keys() {
    let t = tool();
    let other = ToolIdentity {
        name: "other".into(),
        ..tool()
    };
    let mut exec = executor();
    exec.push(("tool:other:image".into(), "d".into()));
    let builder = KeyBuilder::new(&[t.clone(), other.clone()], &exec);
    let limits = Limits {
        time_s: 1800,
        memory_mb: 16384,
        time: TimeLimit::Cpu,
    };
    let content = [9u8; 32];
    let task = builder.task("M-PT-1", &content, "OneSafe", "global;boolean", limits);
    for (i, tool) in [t, other].iter().enumerate() {
        let direct = run_key(&KeyInputs {
            tool,
            instance: "M-PT-1",
            instance_content: &content,
            examination: "OneSafe",
            reading: "global;boolean",
            limits,
            executor: &exec,
        });
        assert_eq!(builder.key(i, &task), direct);
    }
}

#[test]
fn schema_version_is_an_ingredient() {
    // The same parts combined under another schema version give another key.
    let (tool, task, executor) = ([1u8; 32], [2u8; 32], [3u8; 32]);
    assert_ne!(
        combine_with_schema(STORE_SCHEMA + 1, &tool, &task, &executor),
        combine(&tool, &task, &executor)
    );
}

#[test]
fn setup_products_depend_on_the_setup_inputs_only() {
    let t = ToolIdentity {
        setup: Some("./setup.sh".into()),
        ..tool()
    };
    // Another file of the tool (its code): new runs, same setup products.
    let code_changed = ToolIdentity {
        files: [8; 32],
        ..t.clone()
    };
    assert_eq!(t.setup_digest(), code_changed.setup_digest());
    // What the setup reads, or the setup command: new setup products.
    assert_ne!(
        t.setup_digest(),
        ToolIdentity {
            setup_files: [9; 32],
            ..t.clone()
        }
        .setup_digest()
    );
    assert_ne!(
        t.setup_digest(),
        ToolIdentity {
            setup: Some("make".into()),
            ..t.clone()
        }
        .setup_digest()
    );
}

#[test]
fn tool_folder_digest_sees_content_names_and_exec_bits_not_times() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("BenchKit_head.sh"), "#!/bin/sh\necho hi\n").unwrap();
    std::fs::create_dir(dir.path().join("lib")).unwrap();
    std::fs::write(dir.path().join("lib/a.txt"), "a").unwrap();
    let mut cache = DigestCache::in_memory();
    let d0 = tool_files_digest(dir.path(), &mut cache).unwrap();
    // mtime only: same digest.
    let f = std::fs::File::options()
        .write(true)
        .open(dir.path().join("lib/a.txt"))
        .unwrap();
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3600))
        .unwrap();
    assert_eq!(tool_files_digest(dir.path(), &mut cache).unwrap(), d0);
    // content
    std::fs::write(dir.path().join("lib/a.txt"), "b").unwrap();
    let d1 = tool_files_digest(dir.path(), &mut cache).unwrap();
    assert_ne!(d1, d0);
    // exec bit
    std::fs::set_permissions(
        dir.path().join("lib/a.txt"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let d2 = tool_files_digest(dir.path(), &mut cache).unwrap();
    assert_ne!(d2, d1);
    // a file's name
    std::fs::rename(dir.path().join("lib/a.txt"), dir.path().join("lib/b.txt")).unwrap();
    assert_ne!(tool_files_digest(dir.path(), &mut cache).unwrap(), d2);
}

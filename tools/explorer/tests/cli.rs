//! The binary as BenchKit runs it: environment in, answer lines out, on hand-made instances.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_explorer");

fn instance(tag: &str, model: &str, files: &[(&str, &str)]) -> PathBuf {
    let d = std::env::temp_dir().join(format!("explorer-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("mkdir");
    std::fs::write(d.join("model.pnml"), model).expect("write model");
    for (name, text) in files {
        std::fs::write(d.join(name), text).expect("write file");
    }
    d
}

fn run(dir: &Path, exam: Option<&str>) -> Output {
    let mut c = Command::new(BIN);
    c.current_dir(dir)
        .env_remove("BK_EXAMINATION")
        .env("BK_TIME_CONFINEMENT", "30")
        .env("BK_MEMORY_CONFINEMENT", "512");
    if let Some(e) = exam {
        c.env("BK_EXAMINATION", e);
    }
    c.output().expect("run explorer")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// p -> p + q: q grows without bound; r is a constant place.
const UNBOUNDED: &str = r#"<?xml version="1.0"?>
<pnml xmlns="http://www.pnml.org/version-2009/grammar/pnml">
  <net id="grow" type="http://www.pnml.org/version-2009/grammar/ptnet">
    <page id="pg">
      <place id="p"><initialMarking><text>1</text></initialMarking></place>
      <place id="q"/>
      <place id="r"><initialMarking><text>3</text></initialMarking></place>
      <transition id="t"/>
      <arc id="a1" source="p" target="t"/>
      <arc id="a2" source="t" target="p"/>
      <arc id="a3" source="t" target="q"><inscription><text>2</text></inscription></arc>
    </page>
  </net>
</pnml>"#;

#[test]
fn unbounded_state_space_is_infinite_and_bounds_are_exact() {
    let ub = r#"<property-set xmlns="http://mcc.lip6.fr/">
  <property><id>grow-UpperBounds-00</id><formula><place-bound><place>q</place></place-bound></formula></property>
  <property><id>grow-UpperBounds-01</id><formula><place-bound><place>p</place><place>r</place></place-bound></formula></property>
</property-set>"#;
    let rc = r#"<property-set xmlns="http://mcc.lip6.fr/">
  <property><id>rc-0</id><formula><exists-path><finally><integer-le><integer-constant>10</integer-constant>
    <tokens-count><place>q</place></tokens-count></integer-le></finally></exists-path></formula></property>
  <property><id>rc-1</id><formula><all-paths><globally><integer-le><tokens-count><place>q</place></tokens-count>
    <integer-constant>10</integer-constant></integer-le></globally></all-paths></formula></property>
  <property><id>rc-2</id><formula><all-paths><globally><integer-le><tokens-count><place>r</place></tokens-count>
    <integer-constant>3</integer-constant></integer-le></globally></all-paths></formula></property>
</property-set>"#;
    let d = instance(
        "unbounded",
        UNBOUNDED,
        &[("UpperBounds.xml", ub), ("ReachabilityCardinality.xml", rc)],
    );
    let o = run(&d, Some("StateSpace"));
    assert!(o.status.success());
    for key in [
        "STATES",
        "TRANSITIONS",
        "MAX_TOKEN_IN_PLACE",
        "MAX_TOKEN_PER_MARKING",
    ] {
        assert!(
            stdout(&o).contains(&format!("STATE_SPACE {key} +inf TECHNIQUES EXPLICIT")),
            "{}",
            stdout(&o)
        );
    }
    let o = run(&d, Some("UpperBounds"));
    assert_eq!(
        stdout(&o),
        "FORMULA grow-UpperBounds-00 +inf TECHNIQUES EXPLICIT\nFORMULA grow-UpperBounds-01 4 TECHNIQUES EXPLICIT\n"
    );
    let o = Command::new(BIN)
        .current_dir(&d)
        .env("BK_EXAMINATION", "ReachabilityCardinality")
        .env("EXPLORER_MAX_STATES", "1000")
        .output()
        .expect("run");
    // a witness and a counterexample are found; the invariant on r cannot be proven by a bounded search
    assert_eq!(
        stdout(&o),
        "FORMULA rc-0 TRUE TECHNIQUES EXPLICIT\nFORMULA rc-1 FALSE TECHNIQUES EXPLICIT\nFORMULA rc-2 CANNOT_COMPUTE\n"
    );
    let o = run(&d, Some("OneSafe"));
    assert_eq!(stdout(&o), "FORMULA OneSafe FALSE TECHNIQUES EXPLICIT\n");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn ltl_and_unknown_examinations_do_not_compete() {
    let d = instance("ltl", UNBOUNDED, &[]);
    for exam in ["LTLCardinality", "LTLFireability", "Whatever"] {
        let o = run(&d, Some(exam));
        assert_eq!(stdout(&o), "DO_NOT_COMPETE\n");
        assert!(o.status.success());
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_inputs_give_cannot_compute_and_a_reason() {
    let cases = [
        ("notxml", "<pnml><net id=", "not well-formed XML"),
        ("notpnml", "<html/>", "expected <pnml>"),
        (
            "colored",
            r#"<pnml xmlns="http://www.pnml.org/version-2009/grammar/pnml"><net id="c" type="http://www.pnml.org/version-2009/grammar/symmetricnet"><page id="p"/></net></pnml>"#,
            "colored nets are not supported",
        ),
        (
            "badarc",
            r#"<pnml><net id="n" type="http://www.pnml.org/version-2009/grammar/ptnet"><page id="g"><place id="p"/><arc id="a" source="p" target="zz"/></page></net></pnml>"#,
            "unknown target",
        ),
    ];
    for (tag, model, reason) in cases {
        let d = instance(tag, model, &[]);
        let o = run(&d, Some("ReachabilityDeadlock"));
        assert_eq!(stdout(&o), "CANNOT_COMPUTE\n", "{tag}");
        assert!(!o.status.success(), "{tag}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(reason), "{tag}: {err}");
        let _ = std::fs::remove_dir_all(&d);
    }
    // a missing or broken formula file
    let d = instance(
        "noformula",
        UNBOUNDED,
        &[("CTLCardinality.xml", "<property-set><property>")],
    );
    let o = run(&d, Some("UpperBounds"));
    assert_eq!(stdout(&o), "CANNOT_COMPUTE\n");
    assert!(String::from_utf8_lossy(&o.stderr).contains("UpperBounds.xml"));
    let o = run(&d, Some("CTLCardinality"));
    assert_eq!(stdout(&o), "CANNOT_COMPUTE\n");
    assert!(!o.status.success());
    // no examination at all
    let o = run(&d, None);
    assert_eq!(stdout(&o), "CANNOT_COMPUTE\n");
    assert!(String::from_utf8_lossy(&o.stderr).contains("BK_EXAMINATION"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn token_overflow_is_not_wrapped() {
    // t doubles... adds 2^31 tokens to q each firing: overflow after two firings of u32 counts.
    let model = r#"<pnml><net id="o" type="http://www.pnml.org/version-2009/grammar/ptnet"><page id="g">
      <place id="p"><initialMarking><text>3</text></initialMarking></place><place id="q"/>
      <transition id="t"/>
      <arc id="a" source="p" target="t"/>
      <arc id="b" source="t" target="q"><inscription><text>2000000000</text></inscription></arc>
    </page></net></pnml>"#;
    let d = instance("overflow", model, &[]);
    let o = run(&d, Some("StateSpace"));
    assert_eq!(stdout(&o), "CANNOT_COMPUTE\n");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("more than"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// n independent two-state components: 2^n states, n * 2^n firings.
fn toggles(n: usize) -> String {
    let mut s = String::from(
        r#"<pnml xmlns="http://www.pnml.org/version-2009/grammar/pnml"><net id="toggles" type="http://www.pnml.org/version-2009/grammar/ptnet"><page id="g">"#,
    );
    for i in 0..n {
        s.push_str(&format!(
            r#"<place id="a{i}"><initialMarking><text>1</text></initialMarking></place><place id="b{i}"/>
<transition id="f{i}"/><transition id="g{i}"/>
<arc id="x{i}" source="a{i}" target="f{i}"/><arc id="y{i}" source="f{i}" target="b{i}"/>
<arc id="z{i}" source="b{i}" target="g{i}"/><arc id="w{i}" source="g{i}" target="a{i}"/>"#
        ));
    }
    s.push_str("</page></net></pnml>");
    s
}

#[test]
fn a_million_states_quickly_and_memory_budget_respected() {
    let d = instance("toggles", &toggles(20), &[]);
    let started = std::time::Instant::now();
    let o = run(&d, Some("StateSpace"));
    let secs = started.elapsed().as_secs_f64();
    assert_eq!(
        stdout(&o),
        "STATE_SPACE STATES 1048576 TECHNIQUES EXPLICIT\nSTATE_SPACE TRANSITIONS 20971520 TECHNIQUES EXPLICIT\n\
         STATE_SPACE MAX_TOKEN_IN_PLACE 1 TECHNIQUES EXPLICIT\nSTATE_SPACE MAX_TOKEN_PER_MARKING 20 TECHNIQUES EXPLICIT\n"
    );
    println!("2^20 states in {secs:.2} s");
    // 1 MB of memory: the exploration stops and says why
    let o = Command::new(BIN)
        .current_dir(&d)
        .env("BK_EXAMINATION", "StateSpace")
        .env("BK_MEMORY_CONFINEMENT", "1")
        .output()
        .expect("run");
    assert_eq!(stdout(&o), "CANNOT_COMPUTE\n");
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("memory budget"));
    let _ = std::fs::remove_dir_all(&d);
}

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
fn unknown_examinations_do_not_compete() {
    let d = instance("unknown", UNBOUNDED, &[]);
    for exam in ["Whatever", "LTLCardinalityX", ""] {
        let o = run(&d, Some(exam));
        assert_eq!(stdout(&o), "DO_NOT_COMPETE\n");
        assert!(o.status.success());
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// s0 chooses: `die` to d (a deadlock) or `go` to c1, then c1 and c2 alternate forever
/// (t12, t21). Two maximal runs: S0 D D D ... (the deadlock repeats) and S0 C1 C2 C1 C2 ...
const CHOICE: &str = r#"<?xml version="1.0"?>
<pnml xmlns="http://www.pnml.org/version-2009/grammar/pnml">
  <net id="choice" type="http://www.pnml.org/version-2009/grammar/ptnet">
    <page id="pg">
      <place id="s0"><initialMarking><text>1</text></initialMarking></place>
      <place id="d"/><place id="c1"/><place id="c2"/>
      <transition id="die"/><transition id="go"/><transition id="t12"/><transition id="t21"/>
      <arc id="a1" source="s0" target="die"/><arc id="a2" source="die" target="d"/>
      <arc id="a3" source="s0" target="go"/><arc id="a4" source="go" target="c1"/>
      <arc id="a5" source="c1" target="t12"/><arc id="a6" source="t12" target="c2"/>
      <arc id="a7" source="c2" target="t21"/><arc id="a8" source="t21" target="c1"/>
    </page>
  </net>
</pnml>"#;

/// `<property>` elements of an LTL file, one per (id, path formula XML).
fn ltl_file(props: &[(&str, &str)]) -> String {
    let mut s = String::from(
        r#"<?xml version="1.0"?>
<property-set xmlns="http://mcc.lip6.fr/">
"#,
    );
    for (id, f) in props {
        s.push_str(&format!(
            "  <property><id>{id}</id><description>test</description><formula><all-paths>{f}</all-paths></formula></property>\n"
        ));
    }
    s.push_str("</property-set>\n");
    s
}

fn ge1(places: &[&str]) -> String {
    let ps: String = places
        .iter()
        .map(|p| format!("<place>{p}</place>"))
        .collect();
    format!("<integer-le><integer-constant>1</integer-constant><tokens-count>{ps}</tokens-count></integer-le>")
}

fn fire(ts: &[&str]) -> String {
    let ts: String = ts
        .iter()
        .map(|t| format!("<transition>{t}</transition>"))
        .collect();
    format!("<is-fireable>{ts}</is-fireable>")
}

fn un(op: &str, f: &str) -> String {
    format!("<{op}>{f}</{op}>")
}

fn bin(op: &str, a: &str, b: &str) -> String {
    format!("<{op}>{a}{b}</{op}>")
}

fn until(a: &str, b: &str) -> String {
    format!("<until><before>{a}</before><reach>{b}</reach></until>")
}

#[test]
fn ltl_reads_a_deadlock_as_repeating_forever() {
    let (d, c1, s0) = (ge1(&["d"]), ge1(&["c1"]), ge1(&["s0"]));
    let card = ltl_file(&[
        // both runs reach d or c1 one step after S0
        ("ch-00", &un("finally", &ge1(&["d", "c1"]))),
        // the run S0 D D ... never visits c1
        ("ch-01", &un("globally", &un("finally", &c1))),
        // the run S0 C1 C2 ... never stays in d
        ("ch-02", &un("finally", &un("globally", &d))),
        // position 2 is D (the deadlock repeats) or C2
        ("ch-03", &un("next", &un("next", &ge1(&["d", "c2"])))),
        // at the deadlock the next position is the deadlock again
        ("ch-04", &un("globally", &bin("disjunction", &un("negation", &d), &un("next", &d)))),
        // S0 C1: neither s0 nor d at position 1
        ("ch-05", &until(&s0, &d)),
        // one token in the net, always
        ("ch-06", &un("globally", "<integer-le><tokens-count><place>s0</place><place>d</place><place>c1</place><place>c2</place></tokens-count><integer-constant>1</integer-constant></integer-le>")),
        // from position 1 on: always d, or always c1 or c2
        ("ch-07", &un("next", &bin("disjunction", &un("globally", &ge1(&["c1", "c2"])), &un("globally", &d)))),
    ]);
    let fireability = ltl_file(&[
        // the run S0 C1 C2 ... never deadlocks
        (
            "chf-00",
            &un(
                "finally",
                &un("negation", &fire(&["die", "go", "t12", "t21"])),
            ),
        ),
        // go is enabled only in S0
        (
            "chf-01",
            &un("next", &un("globally", &un("negation", &fire(&["go"])))),
        ),
        // t12 enabled (C1) is followed by t21 enabled (C2)
        (
            "chf-02",
            &un(
                "globally",
                &bin(
                    "disjunction",
                    &un("negation", &fire(&["t12"])),
                    &un("next", &fire(&["t21"])),
                ),
            ),
        ),
        // the run S0 D D ... never enables t21
        ("chf-03", &un("finally", &fire(&["t21"]))),
    ]);
    let dir = instance(
        "choice",
        CHOICE,
        &[
            ("LTLCardinality.xml", &card),
            ("LTLFireability.xml", &fireability),
        ],
    );
    let o = run(&dir, Some("LTLCardinality"));
    assert!(o.status.success());
    assert_eq!(
        stdout(&o),
        "FORMULA ch-00 TRUE TECHNIQUES EXPLICIT\nFORMULA ch-01 FALSE TECHNIQUES EXPLICIT\n\
         FORMULA ch-02 FALSE TECHNIQUES EXPLICIT\nFORMULA ch-03 TRUE TECHNIQUES EXPLICIT\n\
         FORMULA ch-04 TRUE TECHNIQUES EXPLICIT\nFORMULA ch-05 FALSE TECHNIQUES EXPLICIT\n\
         FORMULA ch-06 TRUE TECHNIQUES EXPLICIT\nFORMULA ch-07 TRUE TECHNIQUES EXPLICIT\n"
    );
    let o = run(&dir, Some("LTLFireability"));
    assert_eq!(
        stdout(&o),
        "FORMULA chf-00 FALSE TECHNIQUES EXPLICIT\nFORMULA chf-01 TRUE TECHNIQUES EXPLICIT\n\
         FORMULA chf-02 TRUE TECHNIQUES EXPLICIT\nFORMULA chf-03 FALSE TECHNIQUES EXPLICIT\n"
    );
    // Keeping the infinite runs only (for comparisons) drops S0 D D ...: G F c1 then holds.
    let o = Command::new(BIN)
        .current_dir(&dir)
        .env("BK_EXAMINATION", "LTLCardinality")
        .env("EXPLORER_LTL_DEADLOCKS", "drop")
        .output()
        .expect("run");
    assert!(
        stdout(&o).contains("FORMULA ch-01 TRUE ") && stdout(&o).contains("FORMULA ch-02 FALSE "),
        "{}",
        stdout(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ltl_on_an_unbounded_net_answers_only_what_the_explored_part_proves() {
    let q_le_10 = "<integer-le><tokens-count><place>q</place></tokens-count><integer-constant>10</integer-constant></integer-le>";
    let r_le_3 = "<integer-le><tokens-count><place>r</place></tokens-count><integer-constant>3</integer-constant></integer-le>";
    let q_ge_4 = "<integer-le><integer-constant>4</integer-constant><tokens-count><place>q</place></tokens-count></integer-le>";
    let card = ltl_file(&[
        // false in the initial marking (q = 0): a bad prefix of length 1
        ("gr-00", &ge1(&["q"])),
        // q = 12 after 6 firings: a bad prefix
        ("gr-01", &un("globally", q_le_10)),
        // true, but only a complete graph would prove it: a violation could be anywhere
        ("gr-02", &un("globally", r_le_3)),
        // true and proven: runs violating it must keep q < 4, and the only such markings
        // (q = 0, q = 2) have all their successors explored
        ("gr-03", &un("finally", q_ge_4)),
    ]);
    let dir = instance("ltl-unbounded", UNBOUNDED, &[("LTLCardinality.xml", &card)]);
    let o = Command::new(BIN)
        .current_dir(&dir)
        .env("BK_EXAMINATION", "LTLCardinality")
        .env("EXPLORER_MAX_STATES", "1000")
        .output()
        .expect("run");
    assert!(o.status.success());
    assert_eq!(
        stdout(&o),
        "FORMULA gr-00 FALSE TECHNIQUES EXPLICIT\nFORMULA gr-01 FALSE TECHNIQUES EXPLICIT\n\
         FORMULA gr-02 CANNOT_COMPUTE\nFORMULA gr-03 TRUE TECHNIQUES EXPLICIT\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_broken_ltl_formula_is_not_answered_and_the_others_are() {
    let card = ltl_file(&[
        ("ok", &un("finally", &ge1(&["d"]))),
        (
            "nested-quantifier",
            &un("finally", &un("exists-path", &un("finally", &ge1(&["d"])))),
        ),
        ("unknown-place", &un("finally", &ge1(&["nowhere"]))),
    ]);
    let dir = instance("ltl-broken", CHOICE, &[("LTLCardinality.xml", &card)]);
    let o = run(&dir, Some("LTLCardinality"));
    assert!(o.status.success());
    assert_eq!(
        stdout(&o),
        "FORMULA ok FALSE TECHNIQUES EXPLICIT\nFORMULA nested-quantifier CANNOT_COMPUTE\n\
         FORMULA unknown-place CANNOT_COMPUTE\n"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("path quantifier <exists-path> inside an LTL path formula"),
        "{err}"
    );
    assert!(err.contains("unknown place \"nowhere\""), "{err}");
    // a formula that is not <all-paths> at the top
    let dir2 = instance(
        "ltl-notall",
        CHOICE,
        &[(
            "LTLFireability.xml",
            r#"<property-set xmlns="http://mcc.lip6.fr/"><property><id>x</id><formula><exists-path><finally><true/></finally></exists-path></formula></property></property-set>"#,
        )],
    );
    let o = run(&dir2, Some("LTLFireability"));
    assert_eq!(stdout(&o), "FORMULA x CANNOT_COMPUTE\n");
    assert!(String::from_utf8_lossy(&o.stderr).contains("an LTL formula is <all-paths>"));
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&dir2);
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

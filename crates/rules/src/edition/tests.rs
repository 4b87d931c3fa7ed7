//! Rules files read and checked: the editions of rules/, edits that keep the plan or not, and
//! problems reported with their lines.

use super::*;

fn default_rules() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../rules/mcc-2026.toml"
    ))
    .unwrap()
}

/// An edit of a scoring rule keeps the plan; an edit of what the runs are does not.
#[test]
fn only_scoring_settings_keep_the_plan() {
    let path = Path::new("rules.toml");
    let text = default_rules();
    let base = Edition::parse(path, &text).unwrap();
    let edited = |from: &str, to: &str| {
        assert!(text.contains(from), "{from}");
        Edition::parse(path, &text.replacen(from, to, 1)).unwrap()
    };
    // A comment: same rules, another digest.
    let comment = Edition::parse(path, &format!("{text}\n# a comment\n")).unwrap();
    assert_ne!(comment.digest, base.digest);
    assert!(base.same_plan_as(&comment));
    // E-3.1's threshold and E-2.2's set: scoring only.
    let threshold = edited(
        "single_tool_threshold = 0.997",
        "single_tool_threshold = 0.9",
    );
    assert_ne!(threshold.trusted, base.trusted);
    assert!(base.same_plan_as(&threshold));
    assert!(base.same_plan_as(&edited("min_agreeing = 3", "min_agreeing = 2")));
    // The default time limit is in every run's key: planned again.
    let limits = edited("time_s = 3600", "time_s = 1800");
    assert!(!base.same_plan_as(&limits));
    assert!(!limits.same_plan_as(&base));
}

/// E-5.1 as BenchKit applies it: the MCC editions limit the wall clock, SV-COMP 2012 the
/// CPU time (docs/rules.md quotes the evidence); a file without the setting limits CPU time.
#[test]
fn each_edition_limits_the_time_its_harness_limits() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rules");
    for (file, time) in [
        ("mcc-2015.toml", TimeLimit::Wall),
        ("mcc-2023.toml", TimeLimit::Wall),
        ("mcc-2026.toml", TimeLimit::Wall),
        ("svcomp-2012.toml", TimeLimit::Cpu),
    ] {
        let edition = Edition::load(&dir.join(file)).unwrap();
        assert_eq!(edition.limits.time, time, "{file}");
        assert_eq!(edition.limits_for(0).time, time, "{file}");
    }
    let without = default_rules().replace("time = \"wall\"", "");
    assert_ne!(without, default_rules());
    let edition = Edition::parse(Path::new("rules/x.toml"), &without).unwrap();
    assert_eq!(edition.limits.time, TimeLimit::Cpu);
    let bad = default_rules().replace("time = \"wall\"", "time = \"cpu-ish\"");
    assert!(Edition::parse(Path::new("rules/x.toml"), &bad).is_err());
}

/// What each edition's text defines, and nothing more: E-4.5's awards in the MCC
/// 2023 and 2026 rules, none in the 2015 report (it only charts CPU and memory) nor in
/// SV-COMP 2012; medals for the three best ranks whatever the score, except SV-COMP 2012
/// (no medals in its text; a negative sum is no better than random answers).
#[test]
fn each_edition_has_the_awards_and_medals_its_text_defines() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rules");
    for (file, awards, positive) in [
        ("mcc-2015.toml", false, false),
        ("mcc-2023.toml", true, false),
        ("mcc-2026.toml", true, false),
        ("svcomp-2012.toml", false, true),
    ] {
        let edition = Edition::load(&dir.join(file)).unwrap();
        assert_eq!(edition.awards.enabled, awards, "{file}");
        assert_eq!(
            edition.ranking.medal_needs_positive_score, positive,
            "{file}"
        );
    }
}

/// `[ranking] shared_ranks`: the rank after a shared one (E-4.6). Every edition file reads
/// `skip` (1, 1, 3); `dense` (1, 1, 2) is read; another word is an error at its line.
#[test]
fn shared_ranks_is_a_setting_of_the_edition_file() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../rules");
    for file in [
        "mcc-2015.toml",
        "mcc-2023.toml",
        "mcc-2026.toml",
        "svcomp-2012.toml",
    ] {
        let edition = Edition::load(&dir.join(file)).unwrap();
        assert_eq!(edition.ranking.shared_ranks, SharedRanks::Skip, "{file}");
    }
    let with = |value: &str| {
        let rules = default_rules();
        assert!(
            rules.contains("shared_ranks = \"skip\""),
            "mcc-2026.toml names it"
        );
        let text = rules.replace(
            "shared_ranks = \"skip\"",
            &format!("shared_ranks = \"{value}\""),
        );
        Edition::parse(Path::new("rules/mcc-2026.toml"), &text)
    };
    assert_eq!(
        with("dense").unwrap().ranking.shared_ranks,
        SharedRanks::Dense
    );
    assert_eq!(
        with("skip").unwrap().ranking.shared_ranks,
        SharedRanks::Skip
    );
    let err = with("olympic").unwrap_err().to_string();
    assert!(
        err.contains("olympic") || err.contains("shared_ranks"),
        "{err}"
    );
}

#[test]
fn the_2026_edition_loads() {
    let edition = Edition::parse(Path::new("rules/mcc-2026.toml"), &default_rules()).unwrap();
    assert_eq!(edition.examinations.len(), 13);
    assert_eq!(edition.categories.len(), 6);
    let ss = edition.examination("StateSpace").unwrap();
    assert_eq!(edition.examinations[ss].values.len(), 4);
    let rd = edition.examination("ReachabilityDeadlock").unwrap();
    assert_eq!(edition.examinations[rd].time_s, 1800);
    assert_eq!(edition.examinations[ss].time_s, 3600);
    assert_eq!(
        edition.trusted.single_tool_threshold,
        crate::exact::ratio(997, 1000)
    );
    let surprise = edition.model_kind("surprise").unwrap();
    let known = edition.model_kind("known").unwrap();
    assert_eq!(
        edition.model_kinds[surprise].weight,
        KindWeight::ShareOf {
            of: known,
            share: crate::exact::ratio(1, 2)
        }
    );
    // M-9
    let ub = edition.examination("UpperBounds").unwrap();
    let rc = edition.examination("ReachabilityCardinality").unwrap();
    use crate::hidden_files::shows_verdict_file;
    assert!(!shows_verdict_file(&edition, ub, known));
    assert!(!shows_verdict_file(&edition, rd, known));
    assert!(shows_verdict_file(&edition, rc, known));
    assert!(shows_verdict_file(&edition, ss, known));
    assert!(!shows_verdict_file(&edition, rc, surprise));
    // E-4.4: unmarked models are known, models marked new are surprise ones.
    assert_eq!(edition.default_model_kind, known);
    assert_eq!(edition.new_model_kind, Some(surprise));
}

#[test]
fn unknown_key_is_reported_with_its_line() {
    let text = default_rules().replacen("min_agreeing = 3", "min_agreeng = 3", 1);
    let err = Edition::parse(Path::new("r.toml"), &text).unwrap_err();
    let line = text
        .lines()
        .position(|l| l.starts_with("min_agreeng"))
        .unwrap()
        + 1;
    assert_eq!(err.0[0].location.unwrap().line, line, "{err}");
    assert!(err.0[0].message.contains("min_agreeng"), "{err}");
}

#[test]
fn unknown_category_is_reported_with_its_line() {
    let text =
        default_rules().replacen("category = \"UpperBounds\"", "category = \"UperBounds\"", 1);
    let err = Edition::parse(Path::new("r.toml"), &text).unwrap_err();
    let line = text
        .lines()
        .position(|l| l.contains("\"UperBounds\""))
        .unwrap()
        + 1;
    assert_eq!(err.0.len(), 2, "{err}"); // the bad reference, and the now empty category
    assert_eq!(err.0[0].location.unwrap().line, line);
    assert!(err.to_string().contains("unknown category `UperBounds`"));
}

#[test]
fn bad_threshold_and_share_are_reported_together() {
    let text = default_rules()
        .replacen(
            "single_tool_threshold = 0.997",
            "single_tool_threshold = 1.5",
            1,
        )
        .replacen(
            "share_of = { kind = \"known\", share = 0.5 }",
            "share_of = { kind = \"nope\", share = 0.5 }",
            1,
        );
    let err = Edition::parse(Path::new("r.toml"), &text).unwrap_err();
    assert_eq!(err.len(), 2, "{err}");
}

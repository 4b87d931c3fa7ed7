//! `diff`'s text: the counts, then each value once under its most severe change (regressions
//! first, the slower runs among them), the scores before and after, the time ratios.

use std::fmt::Write as _;

use super::{CHANGES, Change, DiffReport, ValueChange};

/// The comparison as text (what `diff` prints).
pub fn diff_text(r: &DiffReport) -> String {
    let mut out = String::new();
    let basis = match r.basis.as_str() {
        "reference" => "the contest's reference answers",
        "ground-truth" => "the expected answers given with the tasks",
        _ => "the trusted values the contest's tools vote (E-3.1)",
    };
    let _ = writeln!(out, "{} -> {} (answers against {basis})", r.old, r.new);
    let count = |c: Change| r.counts.get(&c).copied().unwrap_or(0);
    let factor = r.slower_factor;
    let _ = writeln!(
        out,
        "  regressions: newly wrong {}, newly unsolved {}, slower runs {} (x{factor} or more)",
        count(Change::NewlyWrong),
        count(Change::NewlyUnsolved),
        r.slower.len()
    );
    let _ = writeln!(
        out,
        "  improvements: newly solved {}, newly right {}; changed (trusted value unknown) {}",
        count(Change::NewlySolved),
        count(Change::NewlyRight),
        count(Change::Changed)
    );
    let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    let line = |out: &mut String, v: &ValueChange| {
        let also: Vec<&str> = v.changes.iter().skip(1).map(|c| c.name()).collect();
        let _ = writeln!(
            out,
            "  {} {} {}: {} -> {} (trusted {}{})",
            v.instance,
            v.examination,
            v.id,
            show(&v.old),
            show(&v.new),
            v.trusted.as_deref().unwrap_or("unknown"),
            if also.is_empty() {
                String::new()
            } else {
                format!("; also {}", also.join(", "))
            }
        );
    };
    let listed_under = |v: &ValueChange| v.changes.first().copied();
    let section = |out: &mut String, change: Change| {
        let of: Vec<&ValueChange> = r
            .values
            .iter()
            .filter(|v| listed_under(v) == Some(change))
            .collect();
        if of.is_empty() {
            return;
        }
        let _ = writeln!(out, "{}:", change.name());
        for v in of {
            line(out, v);
        }
    };
    section(&mut out, Change::NewlyWrong);
    section(&mut out, Change::NewlyUnsolved);
    if !r.slower.is_empty() {
        let _ = writeln!(out, "slower runs (x{factor} or more, the largest first):");
        for s in &r.slower {
            let _ = writeln!(
                out,
                "  {} {}: {:.2} s -> {:.2} s (x{:.1})",
                s.instance, s.examination, s.old_time_s, s.new_time_s, s.ratio
            );
        }
    }
    for change in CHANGES.into_iter().skip(2) {
        section(&mut out, change);
    }
    let _ = writeln!(out, "scores (old -> new):");
    for (category, (a, b)) in &r.scores {
        if a.is_null() && b.is_null() {
            continue;
        }
        let _ = writeln!(out, "  {category}: {a} -> {b}");
    }
    if !r.scores_not_compared.is_empty() {
        let _ = writeln!(
            out,
            "  not compared: {} (on some examination instances the run of one version only is in the store)",
            r.scores_not_compared.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "CPU time and memory, new / old (geometric mean over the runs both made):"
    );
    for (exam, m) in &r.measurements {
        let _ = writeln!(
            out,
            "  {exam}: {} runs, CPU time x{:.2} ({:.2} s -> {:.2} s), memory x{:.2}",
            m.runs, m.cpu_time_ratio, m.old_cpu_time_s, m.new_cpu_time_s, m.memory_ratio
        );
    }
    out
}

//! `diff`'s text: the counts, then each value once under its most severe change (regressions
//! first, the slower runs among them), the scores before and after, the time ratios.

use std::fmt::Write as _;

use super::{CHANGES, Change, DiffReport, ValueChange};
use crate::terminal::fit_lines;

/// The comparison as text (what `diff` prints), at any width.
pub fn diff_text(r: &DiffReport) -> String {
    diff_text_fitted(r, None)
}

/// The comparison as text for a terminal of `width` columns. Under 80 columns the wording is
/// shorter (the counts' labels, a value's place written once when its id already names its
/// instance and examination) and every line is fitted to the width
/// ([`fit_lines`]); `--json` has every field whole.
pub fn diff_text_fitted(r: &DiffReport, width: Option<usize>) -> String {
    let narrow = width.is_some_and(|w| w < 80);
    let mut out = String::new();
    let basis = match (r.basis.as_str(), narrow) {
        ("reference", false) => "the contest's reference answers",
        ("ground-truth", false) => "the expected answers given with the tasks",
        (_, false) => "the trusted values the contest's tools vote (E-3.1)",
        ("reference", true) => "the reference",
        ("ground-truth", true) => "the expected answers",
        (_, true) => "the vote, E-3.1",
    };
    let _ = writeln!(out, "{} -> {} (answers against {basis})", r.old, r.new);
    let count = |c: Change| r.counts.get(&c).copied().unwrap_or(0);
    let factor = r.slower_factor;
    if narrow {
        let _ = writeln!(
            out,
            "  regressions: {} wrong, {} unsolved, {} slower (x{factor})",
            count(Change::NewlyWrong),
            count(Change::NewlyUnsolved),
            r.slower.len()
        );
        let _ = writeln!(
            out,
            "  improvements: {} solved, {} right; {} changed",
            count(Change::NewlySolved),
            count(Change::NewlyRight),
            count(Change::Changed)
        );
    } else {
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
    }
    let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    let line = |out: &mut String, v: &ValueChange| {
        let also: Vec<&str> = v.changes.iter().skip(1).map(|c| c.name()).collect();
        // Narrow: the id alone when it already names the instance and the examination.
        let place = if narrow
            && v.id
                .starts_with(&format!("{}-{}", v.instance, v.examination))
        {
            v.id.clone()
        } else {
            format!("{} {} {}", v.instance, v.examination, v.id)
        };
        let _ = writeln!(
            out,
            "  {place}: {} -> {} (trusted {}{})",
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
        "{}",
        if narrow {
            "CPU time and memory, new / old (geometric means):"
        } else {
            "CPU time and memory, new / old (geometric mean over the runs both made):"
        }
    );
    for (exam, m) in &r.measurements {
        if narrow {
            let _ = writeln!(
                out,
                "  {exam}: {} runs, CPU x{:.2}, memory x{:.2}",
                m.runs, m.cpu_time_ratio, m.memory_ratio
            );
        } else {
            let _ = writeln!(
                out,
                "  {exam}: {} runs, CPU time x{:.2} ({:.2} s -> {:.2} s), memory x{:.2}",
                m.runs, m.cpu_time_ratio, m.old_cpu_time_s, m.new_cpu_time_s, m.memory_ratio
            );
        }
    }
    fit_lines(&out, width)
}
